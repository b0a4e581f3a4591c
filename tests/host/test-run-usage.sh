#!/usr/bin/env bash
# Checks of run.sh's command line that need no build: bad usage exits 64
# with a message naming the mistake, before anything is built or changed.
# Prints TAP; exits non-zero if any check fails.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
first_suite=$(sed 's/#.*//; /^[[:space:]]*$/d' "$top/tests/guest/suites" | head -n 1)

# args, then the text the first line of stderr must contain
cases=(
	"test --suite no_such_test|no program 'no_such_test'"
	"test --suite=|--suite needs at least one name"
	"test --suite ,|--suite: an empty name in ','"
	"test --suite $first_suite,,$first_suite|--suite: an empty name"
	"test --compat|--compat and --kunit go with --suite"
	"test --kunit|--compat and --kunit go with --suite"
	"shell --suite $first_suite|--suite is for 'test'"
	"--arch no_such_arch|unsupported --arch 'no_such_arch'"
	"test --config default|'test' runs on a test kernel"
	"stress --config default|'stress' runs on a test kernel"
	"--config bogus|unknown --config 'bogus'"
	"--tree 5.10|unknown --tree '5.10'"
	"shell --matrix|--matrix is for 'test'"
	"test --matrix --arch arm64|--matrix runs the cells of harness/matrix; drop --arch"
	"test --matrix --suite $first_suite|--matrix runs the cells of harness/matrix; drop --suite"
	"test --matrix --cmdline quiet|--matrix runs the cells of harness/matrix; drop --cmdline"
	"run --cmdline|--cmdline needs a value"
	"--tree /nonexistent/linux|--tree: '/nonexistent/linux' is not a kernel source tree"
	"fuzz -- --seconds soon|--seconds needs a number of seconds, not 'soon'"
	"build -- ls|'-- CMD' is only for 'run', 'stress', 'fuzz' and 'bench'"
	"bench --config debug|'bench' measures the default kernel; drop --config debug"
	"bench --matrix|--matrix is for 'test'"
	"bench --suite $first_suite|--suite is for 'test'"
	"bench -- --reps 9 --figures roundtrip|bench: harness/bench sets waitvar-bench's --figures, --json and --label; drop --figures"
	"bench -- --json=/tmp/x|drop --json=/tmp/x"
	"-j 0|-j needs a positive number"
	"--bogus|unknown argument '--bogus'"
	"clean nothing|clean: unknown part 'nothing'"
	"mutate no_such_mutant|mutate: no mutant 'no_such_mutant' in tests/mutants"
	"mutate --in-tree|'mutate' plants its mutants in the module; drop --in-tree"
	"mutate --cmdline quiet|'mutate' takes no --share or --cmdline"
	"mutate --config default|'mutate' runs on a test kernel"
	"mutate --suite $first_suite|--suite is for 'test'"
	"test --list|--list is for 'mutate'"
	"test some_name|unknown argument 'some_name'"
)
echo "TAP version 13"
echo "1..${#cases[@]}"
n=0 bad=0
for c in "${cases[@]}"; do
	n=$((n + 1))
	args=${c%%|*} want=${c#*|}
	rc=0
	# shellcheck disable=SC2086 # the case's words are the arguments
	err=$(WAITVAR_CACHE=$cache "$top/run.sh" $args 2>&1 >/dev/null) || rc=$?
	if [ "$rc" = 64 ] && [[ $(head -n 1 <<<"$err") == *"$want"* ]] && [ -z "$(find "$cache" -mindepth 1)" ]; then
		echo "ok $n run.sh $args"
	else
		echo "not ok $n run.sh $args"
		echo "# want exit 64 and '$want', nothing in the cache; got exit $rc, cache: $(find "$cache" -mindepth 1 -printf '%P ')and:"
		head -n 1 <<<"$err" | sed 's/^/#   /'
		bad=$((bad + 1))
	fi
done
[ "$bad" = 0 ]
