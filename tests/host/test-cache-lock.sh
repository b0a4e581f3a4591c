#!/usr/bin/env bash
# Two runs on one cache: while another holds the cache's lock, run.sh
# (build, or clean) says who holds it and waits, or refuses at once with
# WAITVAR_LOCK_WAIT=0, and makes or removes nothing in the cache.  Prints TAP; exits non-zero if a check fails.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cache=$(mktemp -d)
holder_pid=''
# shellcheck disable=SC2317 # run by the trap
cleanup() {
	[ -z "$holder_pid" ] || kill "$holder_pid" 2>/dev/null || true
	rm -rf "$cache"
}
trap cleanup EXIT

# Holds the lock as a run would, with a holder line naming it.
echo "pid 4242 (./run.sh test, the holder of this check)" >"$cache/.build.lock.holder"
(
	exec 8>"$cache/.build.lock"
	flock 8
	exec sleep 120
) &
holder_pid=$!
for _ in $(seq 100); do
	flock -n "$cache/.build.lock" true || break
	sleep 0.1
done

# WAITVAR_LOCK_WAIT, the command, then the exit status and the text
# stderr must contain
touch "$cache/.waitvar-cache"
cases=(
	"0|build|4|is in use by pid 4242 (./run.sh test, the holder of this check); not waiting"
	"1|build|4|still in use by pid 4242 (./run.sh test, the holder of this check) after 1s; giving up"
	"soon|build|64|WAITVAR_LOCK_WAIT must be a number of seconds, not 'soon'"
	"0|clean|4|is in use by pid 4242 (./run.sh test, the holder of this check); not waiting"
)
echo "TAP version 13"
echo "1..${#cases[@]}"
n=0 bad=0
for c in "${cases[@]}"; do
	n=$((n + 1))
	IFS='|' read -r wait cmd want_rc want <<<"$c"
	rc=0
	err=$(WAITVAR_CACHE=$cache WAITVAR_LOCK_WAIT=$wait "$top/run.sh" "$cmd" 2>&1 >/dev/null) || rc=$?
	# Nothing made, nothing removed.
	made=$(find "$cache" -mindepth 1 ! -name .build.lock ! -name .build.lock.holder \
		! -name .waitvar-cache 2>/dev/null) || true
	[ -f "$cache/.waitvar-cache" ] || made+=" (the cache was removed)"
	if [ "$rc" = "$want_rc" ] && [[ $err == *"$want"* ]] && [ -z "$made" ]; then
		echo "ok $n WAITVAR_LOCK_WAIT=$wait run.sh $cmd: exit $rc, says so"
	else
		echo "not ok $n WAITVAR_LOCK_WAIT=$wait run.sh $cmd: exit $rc (want $want_rc)"
		printf '# %s\n' "$err" ${made:+"made: $made"}
		bad=$((bad + 1))
	fi
done
exit "$bad"
