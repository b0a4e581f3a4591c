#!/usr/bin/env bash
# Checks of harness/bench-report.py on stored waitvar-bench output (three
# boots of an arm64 guest, tests/host/bench-cases/): the ratios, the slope
# and the goals it reports, the files and plots it writes, and a clear
# error, with nothing written, for each kind of bad input.  Prints TAP;
# exits non-zero if any check fails.
set -euo pipefail

# shellcheck source=tests/host/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

report=$TOP/harness/bench-report.py
# A copy: the checks below add cases of their own beside the stored ones.
cases=$tmp/cases
cp -r "$TOP/tests/host/bench-cases" "$cases"
echo "1..26"

# report OUT JSON...: runs the report from the cases' folder, so that the
# table names the files as given; sets rc, out (stdout) and err (stderr).
report() {
	local dir=$1
	shift
	mkdir -p "$dir"
	rc=0
	(cd "$cases" && "$report" --out "$dir" "$@") >"$tmp/stdout" 2>"$tmp/stderr" || rc=$?
	out=$(cat "$tmp/stdout")
	err=$(cat "$tmp/stderr")
}

# row TABLE_TEXT PATTERN: the one line matching PATTERN (grep -E).
row() {
	grep -E -- "$2" <<<"$1" || true
}

report "$tmp/all" sized.json bits8.json bits12.json
check "three boots: exit 0" "$rc" 0
check "the table printed is table.txt" "$out" "$(cat "$tmp/all/table.txt")"
check "round trip on one CPU: 24,516 ns over futex's 16,352 is 1.50x" \
	"$(row "$out" '^   one +waitvar ')" "   one        waitvar          24,516     1.50"
check "condvar is reported beside futex" \
	"$(row "$out" '^   unpinned +condvar ')" "   unpinned   condvar         103,299     2.77"
check "wake-all of 10: time and the waker's call, each over futex" \
	"$(row "$out" '^ +10 +137,792 ')" \
	"      10      137,792      237,952     0.58       106,128     159,424     0.67"
check "exclusive wake-one: ns per wake, wakes per second, ratio" \
	"$(row "$out" 'exclusive wake-one' | sed 's/.*: //')" \
	"waitvar 32,104 ns/wake (31,149/s), futex 30,642 ns/wake (32,635/s), 1.05x"
# Least squares over (0, 105888) (10, 76240) (100, 98560) (1000, 231472).
check "collision slope: least squares over the medians" \
	"$(row "$out" 'slope per colliding waiter' | sed 's/^ *//')" \
	"slope per colliding waiter: waitvar 142.4 ns (the waker's call 121.7 ns), futex anchor -10.2 ns (call -7.6 ns)"
check "filter: spurious wakeups per wake and time over plain" \
	"$(row "$out" '^ +100 filter ')" \
	"     100 filter      248,528    81,664              0     0.37"
check "scaling: 12 rows for each of the 3 boots" \
	"$(grep -cE '^ +(512|256|4096) +[0-9]+ +[1248] ' <<<"$out")" 36
check "scaling: a rate's ratio is futex's over waitvar's" \
	"$(row "$out" '^ +4096 +1000 +8 ')" \
	"     4096   1000  8      68,486      88,203     1.29"
check "goals: 8, each met or MISSED" "$(sed -n '/^goals:/,$p' <<<"$out" | grep -cE '^   (met   |MISSED) ')" 8
check "goal: round trip on one CPU missed at 1.50x" \
	"$(row "$out" 'round trip \(CPUs: one\)')" "   MISSED round trip (CPUs: one) <= 1.15x futex: 1.50x"
check "no goal for the unpinned round trip: the placement decides it" \
	"$(row "$out" 'round trip \(CPUs: unpinned\)')" ""
check "goal: no spurious wakeup under FILTER, met" \
	"$(row "$out" 'FILTER with 100')" "   met    spurious wakeups under FILTER with 100 waiters = 0: 0 at most"
pngs=0 svgs=0
for p in roundtrip wakeall collide filter scaling; do
	[ "$(head -c 4 "$tmp/all/$p.png" 2>/dev/null | od -An -tx1 | tr -d ' ')" != 89504e47 ] || pngs=$((pngs + 1))
	! grep -q '<svg' "$tmp/all/$p.svg" 2>/dev/null || svgs=$((svgs + 1))
done
check "five plots drawn as PNG" "$pngs" 5
check "and as SVG" "$svgs" 5
check "bench.json: the three boots and the goals" \
	"$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))
print(len(d["boots"]), len(d["goals"]), sum(g["met"] for g in d["goals"]))' "$tmp/all/bench.json")" "3 8 5"

# A spurious wakeup in one sample of the filtered wake misses that goal.
sed 's/\("figure": "filter_spurious", "impl": "filter", "params": {"m": 10}.*"samples": \)\[0, 0,/\1[0, 2,/' \
	"$cases/sized.json" >"$cases/.spurious.json"
report "$tmp/spurious" .spurious.json
check "one spurious wakeup under FILTER misses the goal" \
	"$(row "$out" 'FILTER with 10 ')" "   MISSED spurious wakeups under FILTER with 10 waiters = 0: 2 at most"

report "$tmp/noplot" bits8.json --no-plots
check "--no-plots writes the script, draws nothing" \
	"$rc $(find "$tmp/noplot" -name '*.png' | wc -l) $(find "$tmp/noplot" -name plots.gp | wc -l)" "0 0 1"

# Bad input: exit 1, one line naming the file and the fault, nothing written.
bad() {
	local name=$1 want=$2
	shift 2
	report "$tmp/bad-$n" "$@"
	check "$name" "$rc|$err|$(find "$tmp/bad-$n" -mindepth 1 | wc -l)" "1|bench-report: $want|0"
}
printf 'not json\n' >"$tmp/garbage.json"
bad "not JSON" "$tmp/garbage.json: not JSON: Expecting value: line 1 column 1 (char 0)" "$tmp/garbage.json"
printf '{"schema": "something else"}\n' >"$tmp/schema.json"
bad "another schema" "$tmp/schema.json: not a 'waitvar-bench 1' document" "$tmp/schema.json"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["records"][0]["samples"] = [1, 2, 3, 4]
json.dump(d, open(sys.argv[2], "w"))' "$cases/bits8.json" "$tmp/four.json"
bad "fewer than 5 samples" \
	"$tmp/four.json: record 0 (scaling, futex) has 4 samples; at least 5 are needed" "$tmp/four.json"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["records"] = [r for r in d["records"] if r["impl"] != "futex"]
json.dump(d, open(sys.argv[2], "w"))' "$cases/bits8.json" "$tmp/nofutex.json"
bad "a waitvar figure without its futex counterpart" \
	"$tmp/nofutex.json: no futex record of 'scaling' for p 1, k 0" "$tmp/nofutex.json"
bad "a missing file" "$tmp/none.json: No such file or directory" "$tmp/none.json"
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d["records"].append(d["records"][3])
json.dump(d, open(sys.argv[2], "w"))' "$cases/bits8.json" "$tmp/twice.json"
bad "a record that comes twice" \
	"$tmp/twice.json: record 24 (scaling, waitvar, {'p': 2, 'k': 0, 'table': 256}) comes twice" "$tmp/twice.json"
rc=0
err=$("$report" --out "$tmp/nowhere" "$cases/bits8.json" 2>&1 >/dev/null) || rc=$?
check "--out that is no folder" "$rc|$err" "1|bench-report: --out $tmp/nowhere: not a folder"

[ "$bad" = 0 ]
