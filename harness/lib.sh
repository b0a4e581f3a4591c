# shellcheck shell=bash
# What every harness script shares: exit codes, list files, content hashes,
# cache stamps, package installs, and 'step' (one logged, timed stage).
# Sourced; sets no shell options of its own.

# The harness's exit codes (run.sh --help explains them).
EX_FAILED=1 EX_TIMEOUT=2 EX_SPLAT=3 EX_HARNESS=4 EX_USAGE=64
export EX_FAILED EX_TIMEOUT EX_SPLAT EX_HARNESS EX_USAGE

# list_file FILE: the entries of a list file, one per line: '#' starts a
# comment, blank lines and surrounding white space are dropped.
list_file() {
	sed 's/#.*//; s/^[[:space:]]*//; s/[[:space:]]*$//; /^$/d' "$1"
}

# series_for SERIES TREE: the patch file names SERIES lists for the kernel
# tree named TREE (a name of harness/trees), in order.  A line is a file
# name, then optionally the names of the only trees it applies to (a
# backport that the other trees already carry, a fix that only one needs);
# without names, every tree.  A tree of the user's own (a path) takes the
# lines without names.
series_for() {
	list_file "$1" | awk -v t="$2" '
		NF == 1 { print $1; next }
		{ for (i = 2; i <= NF; i++) if ($i == t) { print $1; next } }'
}

# tree_entry TREES NAME: the line of the trees list TREES (harness/trees:
# name, Debian package, versions tested) for the tree named NAME, or
# nothing.
tree_entry() {
	list_file "$1" | awk -F'\t' -v t="$2" '$1 == t'
}

# last_option_settings FRAGMENT...: each kconfig option the fragments set
# ('CONFIG_X=...' or '# CONFIG_X is not set'), once, as the last fragment
# to set it does (a later fragment overrides, as in merge_config.sh), in
# the order the options first appear.  'CONFIG_X=n' comes out as
# '# CONFIG_X is not set', the form .config writes.  Each file is read
# on its own, so one without a final newline does not run into the next.
last_option_settings() {
	awk '
		/^CONFIG_[A-Za-z0-9_]+=/ { n = $0; sub(/=.*/, "", n) }
		/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { n = $2 }
		n != "" {
			if (!(n in last))
				order[++k] = n
			last[n] = $0 == n "=n" ? "# " n " is not set" : $0
			n = ""
		}
		END { for (i = 1; i <= k; i++) print last[order[i]] }' "$@"
}

# hash_files FILE...: a content hash of the files, names included (relative
# to $TOP when under it), order-sensitive.
hash_files() {
	local f
	for f in "$@"; do
		printf '%s\n' "${f#"$TOP"/}"
		cat "$f"
	done | sha256sum | cut -c1-16
}

# hash_text TEXT...: the same kind of hash of the words given.
hash_text() {
	printf '%s\n' "$@" | sha256sum | cut -c1-16
}

# A stamp file records the key (the hashes of the inputs) of what it stands
# beside; a cache entry is used only while its stamp matches the key.
stamp_matches() {
	[ -f "$1" ] && [ "$(cat "$1")" = "$2" ]
}

stamp_write() {
	printf '%s\n' "$2" >"$1"
}

# ensure_packages PKG...: install with apt-get what dpkg does not have.
ensure_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "all $# packages present"
		return 0
	fi
	echo "missing: ${missing[*]}"
	if [ "$(id -u)" != 0 ]; then
		echo "installing needs root: apt-get install ${missing[*]}" >&2
		return 1
	fi
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
	echo "installed ${#missing[@]} packages"
}

# ---------------------------------------------------------------- steps
# step NAME FUNCTION [ARGS...] runs FUNCTION (errexit in force) with its
# output in $RUN_DIR/NN-NAME.log and prints one line when it ends.  On a
# terminal the line updates while the step runs: elapsed time, and what a
# function progress_NAME (dashes as underscores) says of the log, else the
# log's last line.  A failing step prints its name, its log's tail and path,
# and ends the run with EX_HARNESS.

STEP_NO=0
VERBOSE=0

fail_step() {
	local name=$1 log=$2
	echo "run.sh: step '$name' failed; last lines of $log:" >&2
	tail -n 25 "$log" | sed 's/^/  | /' >&2
	echo "run.sh: full log: $log" >&2
	exit "$EX_HARNESS"
}

step_line() {
	printf '[%2d] %-16s %s' "$STEP_NO" "$1" "$2" >&2
}

# show_progress PID NAME LOG T0: redraw the step's line until PID ends.
show_progress() {
	local pid=$1 name=$2 log=$3 t0=$4 fn=progress_${2//-/_} shown=-1 what cols
	cols=$(tput cols 2>/dev/null || echo 80)
	while kill -0 "$pid" 2>/dev/null; do
		if [ $((SECONDS - t0)) != "$shown" ]; then
			shown=$((SECONDS - t0))
			if declare -F "$fn" >/dev/null; then
				what=$("$fn" "$log" 2>/dev/null || true)
			else
				what=$(tail -n 1 "$log" 2>/dev/null | tr -d '\r\t' || true)
			fi
			printf '\r' >&2
			step_line "$name" "$(printf '.. %4ss  %s' "$shown" "$what" | cut -c1-$((cols - 23)))"
			printf '\033[K' >&2
		fi
		sleep 0.2
	done
	printf '\r\033[K' >&2
}

step() {
	local name=$1 log rc=0 t0=$SECONDS pid live=0
	shift
	STEP_NO=$((STEP_NO + 1))
	log=$RUN_DIR/$(printf '%02d' "$STEP_NO")-$name.log
	[ "$VERBOSE" = 1 ] || [ ! -t 2 ] || live=1
	# Off a terminal the name comes first, so that a log cut short says
	# which step was running; on one, show_progress redraws the line.
	[ "$live" = 1 ] || step_line "$name" ""
	[ "$VERBOSE" = 0 ] || echo >&2
	# In the background, so that errexit stays on inside the step.
	if [ "$VERBOSE" = 1 ]; then
		(set -o pipefail; ("$@") 2>&1 | tee "$log" >&2) &
		pid=$!
	else
		("$@") >"$log" 2>&1 &
		pid=$!
		[ "$live" = 0 ] || show_progress "$pid" "$name" "$log" "$t0"
	fi
	wait "$pid" || rc=$?
	if [ "$live" = 1 ] || [ "$VERBOSE" = 1 ]; then
		step_line "$name" ""
	fi
	if [ $rc != 0 ]; then
		echo FAILED >&2
		fail_step "$name" "$log"
	fi
	printf 'ok %4ss  %s\n' $((SECONDS - t0)) "$(tail -n 1 "$log" | cut -c1-60)" >&2
}

# take_cache_lock FD: the cache's lock, on FD (open on $CACHE/.build.lock).
# Free, it is taken at once; held by another run, this says which and waits
# up to $WAITVAR_LOCK_WAIT seconds (default 3600; 0: refuse at once), then
# exits $EX_HARNESS.  The holder is written to $CACHE/.build.lock.holder.
take_cache_lock() {
	local fd=$1 wait=${WAITVAR_LOCK_WAIT:-3600} holder
	if [[ ! $wait =~ ^[0-9]+$ ]]; then
		echo "run.sh: WAITVAR_LOCK_WAIT must be a number of seconds, not '$wait'" >&2
		exit "$EX_USAGE"
	fi
	if ! flock -n "$fd"; then
		holder=$(cat "$CACHE/.build.lock.holder" 2>/dev/null) || holder='a run.sh'
		if [ "$wait" = 0 ]; then
			echo "run.sh: the cache $CACHE is in use by $holder; not waiting (WAITVAR_LOCK_WAIT=0)" >&2
			exit "$EX_HARNESS"
		fi
		echo "run.sh: the cache $CACHE is in use by $holder; waiting up to ${wait}s" >&2
		if ! flock -w "$wait" "$fd"; then
			echo "run.sh: the cache $CACHE is still in use by $holder after ${wait}s; giving up" >&2
			exit "$EX_HARNESS"
		fi
	fi
	echo "pid $$ (./run.sh $COMMAND --arch $ARCH --config $CONFIG, since $(date '+%F %T'))" \
		>"$CACHE/.build.lock.holder"
}

# release_cache_lock FD: lets the next run in.
release_cache_lock() {
	: >"$CACHE/.build.lock.holder"
	flock -u "$1"
}
