#!/usr/bin/env bash
# Checks of harness/mutate.py: the catalogue it parses (good, stale and
# malformed entries), a mutant planted in a copy (plain, or behind the
# series' selector with its number), the killer it reads from
# ktap-verdict.sh's output (stored verdicts of a real `./run.sh mutate`,
# tests/host/mutate-cases/, and the verdict cases' splat and timeout) and
# the table with its last line.  Prints TAP; exits non-zero if any fails.
set -euo pipefail

# shellcheck source=tests/host/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

mutate=$TOP/harness/mutate.py
cases=$TOP/tests/host/mutate-cases
echo "1..40"

# run ARGS...: sets rc, out (stdout) and err (stderr) of mutate.py ARGS.
run() {
	rc=0
	"$mutate" "$@" >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
	out=$(cat "$tmp/stdout")
	err=$(cat "$tmp/stderr")
}

# mut NAME BODY: writes $tmp/cat/NAME.mut.
mkdir -p "$tmp/cat" "$tmp/src"
mut() {
	printf '%s\n' "$2" >"$tmp/cat/$1.mut"
}

printf 'int f(int a)\n{\n\tif (a > 1)\n\t\treturn 1;\n\treturn 0;\n}\n' >"$tmp/src/f.c"
printf 'waitvar_a_test\nwaitvar_b_test\n' >"$tmp/suites"
mut good '# a > 1 becomes a >= 1
file: f.c
suites: waitvar_a_test waitvar_b_test
@@ find
	if (a > 1)
@@ replace
	if (a >= 1)'
mut dropped '# the early return is dropped
file: f.c
suites: waitvar_b_test
@@ find
	if (a > 1)
		return 1;
@@ replace'
mut same '# only a comment is added: nothing can tell
file: f.c
equivalent: the compiler drops comments
@@ find
	return 0;
@@ replace
	return 0; /* zero */'

run list "$tmp/cat"
check "list: the names, sorted, one a line" "$rc|${out//$'\n'/|}" "0|dropped|good|same"
run show "$tmp/cat/good.mut"
check "show: file, suites comma-joined, no equivalent, the description" "$rc|${out//$'\n'/|}" \
	"0|MUT_FILE=f.c|MUT_SUITES=waitvar_a_test,waitvar_b_test|MUT_EQUIVALENT=''|MUT_DESC='a > 1 becomes a >= 1'|MUT_SELECTED=0"
run show "$tmp/cat/same.mut"
check "show: an equivalent mutant's reason" "$(grep EQUIVALENT <<<"$out")" \
	"MUT_EQUIVALENT='the compiler drops comments'"
run check "$tmp/cat/good.mut" "$tmp/src" "$tmp/suites"
check "check: a mutant that applies, with known suites" "$rc|$out" "0|"

cp -r "$tmp/src" "$tmp/a"
run apply "$tmp/cat/good.mut" "$tmp/a"
check "apply: exit 0" "$rc" 0
check "apply: the one line changed, nothing else" \
	"$(diff "$tmp/src/f.c" "$tmp/a/f.c" | grep '^[<>]' | tr '\n' '|')" \
	$'< \tif (a > 1)|> \tif (a >= 1)|'
run apply "$tmp/cat/good.mut" "$tmp/a"
check "apply again: its text is gone, stale, exit 3" "$rc|$out" \
	"3|stale: its text is no longer in f.c"
cp -r "$tmp/src" "$tmp/b"
run apply "$tmp/cat/dropped.mut" "$tmp/b"
check "apply: an empty replacement drops the lines" "$rc|$(grep -c return "$tmp/b/f.c")" "0|1"

# Stale: the text is gone, or occurs twice, or the file is gone.
printf 'int f(int a)\n{\n\tif (a > 1)\n\t\treturn 1;\n\tif (a > 1)\n\t\treturn 1;\n}\n' >"$tmp/b/f.c"
run check "$tmp/cat/good.mut" "$tmp/b"
check "stale: the text occurs twice" "$rc|$out" "3|stale: its text occurs 2 times in f.c"
cp "$tmp/b/f.c" "$tmp/b/copy"
run apply "$tmp/cat/good.mut" "$tmp/b"
check "stale: apply writes nothing" "$rc|$(cmp -s "$tmp/b/f.c" "$tmp/b/copy" && echo same)" "3|same"
rm "$tmp/b/f.c"
run check "$tmp/cat/good.mut" "$tmp/b"
check "stale: the file is gone" "$rc|$out" "3|stale: f.c is gone"

# A series mutant: behind the selector, planted with its number.
mut selected '# a > 1 becomes a >= 1 when its number is selected
file: f.c
suites: kunit waitvar_a_test
@@ find
	if (a > 1)
@@ replace
	if (WAIT_MUTANT ? a >= 1 : a > 1)'
run show "$tmp/cat/selected.mut"
check "show: a mutant behind the selector says so" "$(grep SELECTED <<<"$out")" "MUT_SELECTED=1"
run check "$tmp/cat/selected.mut" "$tmp/src" "$tmp/suites"
check "check: kunit stands for the KUnit modules" "$rc|$out" "0|"
cp -r "$tmp/src" "$tmp/s"
run apply "$tmp/cat/selected.mut" "$tmp/s" 7
check "apply K: the selector becomes a test of wait_mutant" "$rc|$(grep 'if (' "$tmp/s/f.c")" \
	$'0|\tif ((wait_mutant == 7) ? a >= 1 : a > 1)'
cp -r "$tmp/src" "$tmp/s2"
run apply "$tmp/cat/selected.mut" "$tmp/s2"
check "apply: a selected mutant without its number is refused, nothing written" \
	"$rc|$(grep -c 'give its number' <<<"$err")|$(cmp -s "$tmp/src/f.c" "$tmp/s2/f.c" && echo same)" \
	"2|1|same"
run apply "$tmp/cat/good.mut" "$tmp/s2" 3
check "apply K: a mutant without the selector takes no number" "$rc|$(grep -c 'no WAIT_MUTANT' <<<"$err")" "2|1"
rm "$tmp/cat/selected.mut"

# Malformed entries: exit 2 and the reason, naming the file.
bad() {
	mut "$1" "$2"
	run check "$tmp/cat/$1.mut" "$tmp/src" "$tmp/suites"
	check "malformed: $3" "$rc|$(grep -c -- "$4" <<<"$err")" "2|1"
	rm "$tmp/cat/$1.mut"
}
bad no-desc $'file: f.c\nsuites: waitvar_a_test\n@@ find\n\tif (a > 1)\n@@ replace\n' \
	"no description" "no \"# ...\" line"
bad both $'# x\nfile: f.c\nsuites: waitvar_a_test\nequivalent: r\n@@ find\n\tif (a > 1)\n@@ replace\n' \
	"both suites and equivalent" "either \"suites:\" or"
bad neither $'# x\nfile: f.c\n@@ find\n\tif (a > 1)\n@@ replace\n' \
	"neither suites nor equivalent" "either \"suites:\" or"
bad unknown-suite $'# x\nfile: f.c\nsuites: waitvar_c_test\n@@ find\n\tif (a > 1)\n@@ replace\n' \
	"a suite not in the suites file" "no suite waitvar_c_test in"
bad escape $'# x\nfile: ../f.c\nsuites: waitvar_a_test\n@@ find\n\tif (a > 1)\n@@ replace\n' \
	"a file outside the source folder" "names a file under the source folder"
bad no-replace $'# x\nfile: f.c\nsuites: waitvar_a_test\n@@ find\n\tif (a > 1)\n' \
	"no replace section" "no \"@@ find\" and \"@@ replace\""
bad noop $'# x\nfile: f.c\nsuites: waitvar_a_test\n@@ find\n\tif (a > 1)\n@@ replace\n\tif (a > 1)\n' \
	"a replacement equal to the find text" "nothing is mutated"
bad selector-in-find $'# x\nfile: f.c\nsuites: waitvar_a_test\n@@ find\n\tif (WAIT_MUTANT)\n@@ replace\n' \
	"the selector in the find text" "belongs in the replacement"
bad typo $'# x\nfiles: f.c\nsuites: waitvar_a_test\n@@ find\n\tif (a > 1)\n@@ replace\n' \
	"an unknown key" "expected \"file:\""
mut Bad-Name "$(cat "$tmp/cat/good.mut")"
run list "$tmp/cat"
check "malformed: a name with capitals fails the whole list" "$rc|$(grep -c 'Bad-Name.mut: a mutant is NAME.mut' <<<"$err")" "2|1"
rm "$tmp/cat/Bad-Name.mut"

# The killer, from what ktap-verdict.sh printed and its status.
run killer "$cases/killed.verdict" 1
check "killer: the first failing test, not the program that exited 1" "$out" \
	"killed by wake.filtered_wake_of_64_waiters_counts_those_whose_condition_holds"
run killer "$cases/survived.verdict" 0
check "killer: all passed, status 0: SURVIVED" "$out" "SURVIVED"
verdict() {
	local rc=0
	"$TOP/harness/ktap-verdict.sh" --console "$TOP/tests/host/verdict-cases/$1.console" \
		"${@:2}" >"$tmp/v.txt" 2>&1 || rc=$?
	run killer "$tmp/v.txt" "$rc"
}
verdict splat-warning
check "killer: a splat with every test ok" "$out" \
	"killed by splat: WARNING: CPU: 1 PID: 93 at drivers/misc/waitvar.c:120 waitva"
verdict timeout-partial --timed-out
check "killer: a guest that timed out" "$out" "killed by timeout"
verdict fail-no-plan
check "killer: a short KTAP with nothing failed names the problem" "$out" "killed by no top-level plan"
verdict pass-nested
check "killer: a passing console is SURVIVED" "$out" "SURVIVED"

# The table and its last line.
printf 'wake-nr-filtered-ignores-nr\tkilled by %s\t25\ncmpxchg-wakes\tSURVIVED\t22\nsame\tequivalent: the compiler drops comments\t3\nold\tstale: its text is no longer in var.c\t0\n' \
	"wake.filtered_wake_of_64_waiters_counts_those_whose_condition_holds" >"$tmp/rows.tsv"
run table "$tmp/rows.tsv"
check "table: a survivor or a stale mutant fails it, exit 1" "$rc" 1
check "table: the last line counts each kind" "$(tail -n 1 <<<"$out")" \
	"mutants: 1 killed, 1 survived, 1 equivalent, 1 stale"
check "table: a long killer is cut to its column" \
	"$(grep '^wake-nr' <<<"$out" | tr -s ' ')" \
	"wake-nr-filtered-ignores-nr wake.filtered_wake_of_64_waiters_counts_those_whose_c... 25s"
check "table: stale says why" "$(grep '^old ' <<<"$out" | tr -s ' ')" \
	"old STALE (its text is no longer in var.c) 0s"
check "table: the name column is as wide as the longest name" \
	"$(sed '$d' <<<"$out" | awk '{ print index($0, $2) }' | sort -u)" "29"
head -n 1 "$tmp/rows.tsv" >"$tmp/ok.tsv"
run table "$tmp/ok.tsv"
check "table: every mutant killed: exit 0" "$rc|$(tail -n 1 <<<"$out")" \
	"0|mutants: 1 killed, 0 survived, 0 equivalent, 0 stale"
printf 'x\tkilled by y\n' >"$tmp/short.tsv"
run table "$tmp/short.tsv"
check "table: a row without its time is malformed, exit 2" "$rc|$(grep -c 'expected name<TAB>' <<<"$err")" "2|1"

[ "$bad" = 0 ]
