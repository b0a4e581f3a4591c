# shellcheck shell=bash
# What the host checks share: TOP, harness/lib.sh, a scratch folder $tmp
# removed on exit, and check NAME GOT WANT, one TAP line per check (the
# caller prints the plan and ends with [ "$bad" = 0 ]).

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=harness/lib.sh
. "$TOP/harness/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 bad=0
check() {
	n=$((n + 1))
	if [ "$2" = "$3" ]; then
		echo "ok $n $1"
	else
		echo "not ok $n $1"
		printf '# want: %s\n# got:  %s\n' "${3//$'\n'/|}" "${2//$'\n'/|}"
		bad=$((bad + 1))
	fi
}
