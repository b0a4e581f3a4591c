#!/usr/bin/env bash
# Checks of the harness itself: feed harness/ktap-verdict.sh console logs whose
# verdict is known (first line: "expect: EXIT | LAST LINE [| timed-out |
# plan=N | skips=NAME,NAME]", skips= giving the expected skips, maybe none)
# and compare.  Prints TAP; exits non-zero if any case disagrees.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cases=("$here"/verdict-cases/*.console)
echo "TAP version 13"
echo "1..$((${#cases[@]} + 1))"
n=0 bad=0
tmp_skips=$(mktemp)
trap 'rm -f "$tmp_skips"' EXIT
for c in "${cases[@]}"; do
	n=$((n + 1))
	IFS='|' read -r want_rc want_last flag < <(head -n 1 "$c" | sed 's/^expect: //')
	want_rc=${want_rc// /}
	want_last=$(sed 's/^ *//; s/ *$//' <<<"$want_last")
	args=(--console "$c")
	[[ ${flag:-} != *timed-out* ]] || args+=(--timed-out)
	[[ ${flag:-} != *plan=* ]] || args+=(--expect-plan "${flag##*plan=}")
	if [[ ${flag:-} == *skips=* ]]; then
		skips=${flag##*skips=}
		tr ',' '\n' <<<"${skips// /}" >"$tmp_skips"
		args+=(--expect-skips "$tmp_skips")
	fi
	rc=0
	out=$("$here/../../harness/ktap-verdict.sh" "${args[@]}" 2>&1) || rc=$?
	last=$(tail -n 1 <<<"$out")
	name=$(basename "$c" .console)
	if [ "$rc" = "$want_rc" ] && [ "$last" = "$want_last" ]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name"
		echo "# want exit $want_rc and '$want_last', got exit $rc and:"
		printf '#   %s\n' "${out//$'\n'/$'\n'#   }"
		bad=$((bad + 1))
	fi
done
# --header: its lines follow the KTAP version line of the copy (--ktap).
n=$((n + 1))
out=$(mktemp)
"$here/../../harness/ktap-verdict.sh" --console "$here/verdict-cases/pass-nested.console" \
	--ktap "$out" --header $'waitvar cell: arch x\nsecond line' >/dev/null 2>&1 || true
if [ "$(head -n 3 "$out")" = $'KTAP version 1\n# waitvar cell: arch x\n# second line' ]; then
	echo "ok $n header lines after the version line"
else
	echo "not ok $n header lines after the version line"
	head -n 3 "$out" | sed 's/^/#   /'
	bad=$((bad + 1))
fi
rm -f "$out"
[ "$bad" = 0 ]
