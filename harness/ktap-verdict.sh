#!/usr/bin/env bash
# ktap-verdict.sh: the host's verdict on a guest run.
#
#   ktap-verdict.sh --console LOG [--dmesg LOG] [--ktap OUT [--header TEXT]]
#                   [--timed-out] [--expect-plan N] [--expect-skips FILE]
#   ktap-verdict.sh --splats-only --console LOG [--dmesg LOG]
#
# Takes the runner's KTAP from the console log (kernel lines, which carry a
# printk timestamp, are left out), checks every plan at every depth, counts
# leaf results, and scans the console and dmesg for kernel splats.  With
# --expect-skips, a test that skipped and is not named in FILE (one name a
# line, as its result line gives it) fails the run.  OUT
# gets the KTAP, TEXT's lines as comments after its version line.
# Exit: 0 pass, 1 a test failed or the KTAP is missing/short, 2 the guest
# timed out, 3 a kernel panic or splat.  The last line printed is
# "N passed, N failed".
set -euo pipefail

# shellcheck source=harness/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

console='' dmesg='' ktap_out='' timed_out=0 splats_only=0 expect_plan='' header=''
expect_skips=''
while [ $# -gt 0 ]; do
	case $1 in
	--console) console=$2; shift ;;
	--dmesg) dmesg=$2; shift ;;
	--ktap) ktap_out=$2; shift ;;
	--header) header=$2; shift ;;
	--timed-out) timed_out=1 ;;
	--expect-plan) expect_plan=$2; shift ;;
	--expect-skips) expect_skips=$2; shift ;;
	--splats-only) splats_only=1 ;;
	*) echo "ktap-verdict.sh: unknown argument '$1'" >&2; exit "$EX_USAGE" ;;
	esac
	shift
done
[ -n "$console" ] || { echo "ktap-verdict.sh: --console LOG is required" >&2; exit "$EX_USAGE"; }
[ -f "$console" ] || : >"$console"
[ -z "$expect_skips" ] || [ -f "$expect_skips" ] ||
	{ echo "ktap-verdict.sh: no file $expect_skips (--expect-skips)" >&2; exit "$EX_USAGE"; }

# What the kernel prints when something is wrong, whatever the tests said.
splat_re='Kernel panic|BUG:|WARNING:|Oops|Unable to handle kernel|Internal error:|'
splat_re+='kernel BUG at|possible circular locking|possible recursive locking|'
splat_re+='inconsistent lock state|suspicious RCU usage|KASAN|UBSAN|'
splat_re+='blocked for more than|hung_task|unreferenced object|suspected memory leak|'
splat_re+='general protection fault|stack-protector|Call trace:|Call Trace:'

splats() {
	local logs=("$console")
	[ -z "$dmesg" ] || [ ! -f "$dmesg" ] || logs+=("$dmesg")
	grep -hE "$splat_re" "${logs[@]}" 2>/dev/null | tr -d '\r' | head -n 20 || true
}

splat_lines=$(splats)
splat_list=()
[ -z "$splat_lines" ] || mapfile -t splat_list <<<"$splat_lines"
if [ "$splats_only" = 1 ]; then
	[ -z "$splat_lines" ] && exit 0
	echo "kernel splat in the guest log:" >&2
	printf '  %s\n' "${splat_list[@]}" >&2
	exit "$EX_SPLAT"
fi

ktap=$(mktemp)
trap 'rm -f "$ktap"' EXIT
tr -d '\r' <"$console" |
	grep -vE '^\[ *[0-9]+\.[0-9]+\]' |
	awk 'started || $0 == "KTAP version 1" { started = 1; print }' >"$ktap" || true
# The header (what ran: the matrix cell) follows the version line.
[ -z "$ktap_out" ] || HEADER=$header awk '
	{ print }
	NR == 1 && ENVIRON["HEADER"] != "" {
		n = split(ENVIRON["HEADER"], l, "\n"); for (i = 1; i <= n; i++) print "# " l[i] }' \
	"$ktap" >"$ktap_out"

# Prints problems (one per line), then "counts PASS FAIL SKIP".
parse_ktap() {
	awk -v expect_plan="$expect_plan" -v expect_skips="$expect_skips" '
	function depth_of(s) { match(s, /^ */); return int(RLENGTH / 4) }
	function open_level(d) { plan[d] = -1; count[d] = 0; mark[d] = failed; opened[d] = 1 }
	function close_levels(from,   d) {
		for (d = maxd; d >= from; d--) {
			if (!opened[d])
				continue
			if (plan[d] < 0 && count[d] > 0)
				print "no plan for the " count[d] " results at depth " d " before line " NR
			else if (plan[d] >= 0 && count[d] != plan[d])
				print "plan 1.." plan[d] " at depth " d " but " count[d] " results (before line " NR ")"
			opened[d] = 0
		}
	}
	BEGIN {
		maxd = 0; failed = passed = skipped = 0
		while (expect_skips != "" && (getline line < expect_skips) > 0)
			if (line != "" && line !~ /^#/)
				expected[line] = 1
	}
	/^[ ]*$/ { next }
	{
		d = depth_of($0)
		body = $0
		sub(/^ +/, "", body)
		if (d > maxd)
			maxd = d
	}
	body ~ /^(KTAP|TAP) version / { close_levels(d); open_level(d); next }
	# kselftest_harness.h before 6.12 names no skipped test on its result
	# line ("ok 6 # SKIP why"): its "#  RUN  NAME ..." line does.
	body ~ /^# +RUN +/ {
		run[d] = body
		sub(/^# +RUN +/, "", run[d])
		sub(/ +\.\.\.$/, "", run[d])
		next
	}
	body ~ /^1\.\.[0-9]+/ {
		if (!opened[d])
			open_level(d)
		plan[d] = substr(body, 4) + 0
		next
	}
	body ~ /^(not )?ok [0-9]+/ {
		if (!opened[d])
			open_level(d)
		parent = opened[d + 1] && count[d + 1] > 0
		close_levels(d + 1)
		count[d]++
		ok = body !~ /^not ok/
		skip = body ~ /# *[Ss][Kk][Ii][Pp]/
		if (skip && expect_skips != "") {
			name = body
			sub(/^(not )?ok [0-9]+ /, "", name)
			sub(/ *#.*$/, "", name)
			if (name == "" && (d in run))
				name = run[d]
			if (!(name in expected))
				print "unexpected skip: " body
		}
		if (!parent) {
			if (skip)
				skipped++
			else if (ok)
				passed++
			else {
				failed++
				print "failed: " body
			}
		} else if (!ok && !skip) {
			print "failed: " body
			if (failed == mark[d])
				failed++
		}
		mark[d] = failed
		next
	}
	END {
		if (NR == 0)
			print "no KTAP output on the console"
		else if (!opened[0] || plan[0] < 0)
			print "no top-level plan"
		else if (expect_plan != "" && plan[0] != expect_plan + 0)
			print "top-level plan 1.." plan[0] " but the run has " expect_plan " tests"
		close_levels(0)
		print "counts " passed " " failed " " skipped
	}' "$ktap"
}

report=$(parse_ktap)
read -r _ passed failed skipped <<<"$(grep '^counts ' <<<"$report")"
problems=$(grep -v '^counts ' <<<"$report" || true)

rc=0
if [ -n "$problems" ]; then
	printf '%s\n' "$problems"
	rc=$EX_FAILED
	# A short or missing KTAP is a failed run even if no case said not ok.
	grep -q '^failed: ' <<<"$problems" || [ "$failed" -gt 0 ] || failed=1
fi
if [ "$timed_out" = 1 ]; then
	echo "the guest timed out"
	rc=$EX_TIMEOUT
fi
if [ -n "$splat_lines" ]; then
	echo "kernel splat in the guest log:"
	printf '  %s\n' "${splat_list[@]}"
	rc=$EX_SPLAT
fi
[ -z "$ktap_out" ] || echo "KTAP: $ktap_out"
[ "$skipped" = 0 ] || echo "$skipped skipped"
echo "$passed passed, $failed failed"
exit $rc
