#!/usr/bin/env bash
# waitvar: build the patched kernel, the /dev/waitvar module and the tests,
# boot them in a QEMU guest and return the verdict.  ./run.sh --help
# The command line lives here; the stages live in harness/ (see README.md).
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${WAITVAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/waitvar}

# shellcheck source=harness/lib.sh
. "$TOP/harness/lib.sh"

usage() {
	cat <<EOF_USAGE
Usage: ./run.sh [COMMAND] [OPTIONS] [-- ARGS...]

Commands:
  (none)          build what is missing, boot the guest, run the test
                  programs on the default kernel, print the summary
  test            everything the project tests, on the debug kernel
                  (lockdep, atomic-sleep checks, KASAN, kmemleak, KUnit)
  shell           boot to a root shell on the guest console, module loaded,
                  tools on PATH; 'poweroff' returns to the host
  run -- CMD...   boot, run CMD in the guest, return its output and status
  stress [-- ARGS]
                  on the debug kernel, the long stress (ARGS added):
                  $(long_form stress)
  fuzz [-- ARGS]  on the debug kernel, the long fuzz (ARGS added), then
                  trinity aimed at /dev/waitvar: $(long_form fuzz)
                  ('test' runs both in a short form)
  build           build everything, boot nothing
  clean [PART]    drop the cache, or one part of it:
                  kernel (patched tree and build dirs), source (unpacked
                  linux-source), rootfs, build (module, userspace), runs (logs)

Options:
  --arch ARCH       guest architecture ($(arch_names | paste -sd' ' -); default arm64)
  --config NAME     kernel config: default or debug (default: default;
                    'test' always uses debug)
  --suite N[,N...]  run only these programs of tests/guest/suites (native),
                    no KUnit, no host checks: the edit-to-verdict loop
  --compat          with --suite: their 32-bit builds too
  --kunit           with --suite: the KUnit modules too
  -j N              parallel build jobs (default: $(nproc))
  --timeout SECS    guest watchdog: limit for each guest program, and the
                    base of QEMU's host-side limit (default 300)
  --share DIR       make host DIR visible read-only at /mnt/share (run, shell)
  --in-tree         build /dev/waitvar into the kernel from the generated
                    series patch "misc: add /dev/waitvar" instead of
                    loading the out-of-tree module (own tree and build dirs)
  --verbose         show each step's log as it runs
  -h, --help        this text

Exit status:
  0   all tests passed
  $EX_FAILED   a test failed, or the KTAP output is missing or short
  $EX_TIMEOUT   the guest did not finish in time (console log kept)
  $EX_SPLAT   kernel panic or splat (BUG, WARNING, Oops, lockdep, KASAN,
      hung task, kmemleak) in the guest log
  $EX_HARNESS   harness error: a build or set-up step failed
  $EX_USAGE  bad usage
  run: the exit status of CMD (or one of the above when the guest failed)

Cache: \$WAITVAR_CACHE (now $CACHE). Logs: \$WAITVAR_CACHE/runs/latest/.
EOF_USAGE
}

die_usage() {
	echo "run.sh: $*" >&2
	echo >&2
	usage >&2
	exit "$EX_USAGE"
}

# The long forms of the programs 'test' runs short; 'stress' and 'fuzz'
# boot the debug kernel (hung-task detector armed) and run one of them.
long_form() {
	case $1 in
	stress) echo waitvar_stress --seconds 60 --threads 1000 --vars 10000 ;;
	fuzz) echo waitvar-fuzz --seconds 600 --threads 8 ;;
	esac
}

# The last --seconds value of a command line (0 if none).
seconds_of() {
	local s=0
	while [ $# -gt 0 ]; do
		[ "$1" != --seconds ] || [ $# -lt 2 ] || s=$2
		shift
	done
	[[ $s =~ ^[0-9]+$ ]] || die_usage "--seconds needs a number of seconds, not '$s'"
	echo "$s"
}

# The architectures harness/arch/ describes.
arch_names() {
	local f
	for f in "$TOP"/harness/arch/*.sh; do
		f=${f##*/}
		echo "${f%.sh}"
	done
}

# ---------------------------------------------------------------- options

COMMAND=main
ARCH=arm64
CONFIG=
JOBS=$(nproc)
TIMEOUT=300
TIMEOUT_GIVEN=0
SHARE=
VERBOSE=0
IN_TREE=0
CLEAN_PART=
GUEST_CMD=()
SUITES=()
SUITE_ARG=
SUITE_GIVEN=0
COMPAT=
KUNIT=

parse_args() {
	local cmd_seen=0
	while [ $# -gt 0 ]; do
		case $1 in
		test | shell | run | build | clean | stress | fuzz)
			[ $cmd_seen = 0 ] || die_usage "two commands given: $COMMAND and $1"
			COMMAND=$1 cmd_seen=1
			if [ "$1" = clean ] && [ $# -gt 1 ] && [[ $2 != -* ]]; then
				CLEAN_PART=$2
				shift
			fi
			;;
		--arch) [ $# -ge 2 ] || die_usage "--arch needs a value"; ARCH=$2; shift ;;
		--arch=*) ARCH=${1#*=} ;;
		--config) [ $# -ge 2 ] || die_usage "--config needs a value"; CONFIG=$2; shift ;;
		--config=*) CONFIG=${1#*=} ;;
		--suite) [ $# -ge 2 ] || die_usage "--suite needs a value"; SUITE_ARG=$2 SUITE_GIVEN=1; shift ;;
		--suite=*) SUITE_ARG=${1#*=} SUITE_GIVEN=1 ;;
		--compat) COMPAT=1 ;;
		--kunit) KUNIT=1 ;;
		-j) [ $# -ge 2 ] || die_usage "-j needs a value"; JOBS=$2; shift ;;
		-j*) JOBS=${1#-j} ;;
		--timeout) [ $# -ge 2 ] || die_usage "--timeout needs a value"; TIMEOUT=$2 TIMEOUT_GIVEN=1; shift ;;
		--timeout=*) TIMEOUT=${1#*=} TIMEOUT_GIVEN=1 ;;
		--share) [ $# -ge 2 ] || die_usage "--share needs a value"; SHARE=$2; shift ;;
		--share=*) SHARE=${1#*=} ;;
		--verbose | -v) VERBOSE=1 ;;
		--in-tree) IN_TREE=1 ;;
		-h | --help) usage; exit 0 ;;
		--)
			shift
			GUEST_CMD=("$@")
			break
			;;
		*) die_usage "unknown argument '$1'" ;;
		esac
		shift
	done

	[ -f "$TOP/harness/arch/$ARCH.sh" ] ||
		die_usage "unsupported --arch '$ARCH' (supported: $(arch_names | paste -sd' ' -))"
	[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die_usage "-j needs a positive number, not '$JOBS'"
	[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die_usage "--timeout needs a positive number of seconds, not '$TIMEOUT'"
	case $COMMAND in
	test | stress | fuzz)
		[ -z "$CONFIG" ] || [ "$CONFIG" = debug ] || die_usage "'$COMMAND' runs on the debug kernel; drop --config $CONFIG"
		CONFIG=debug
		;;
	esac
	CONFIG=${CONFIG:-default}
	case $CONFIG in
	default | debug) ;;
	*) die_usage "unknown --config '$CONFIG' (default or debug)" ;;
	esac
	if [ "$COMMAND" = clean ] && [ "$IN_TREE" = 1 ]; then
		die_usage "'clean' takes no --in-tree; 'clean kernel' drops both trees"
	fi
	if [ "$COMMAND" = run ] && [ ${#GUEST_CMD[@]} -eq 0 ]; then
		die_usage "'run' needs a command after --"
	fi
	case $COMMAND in
	run) ;;
	stress | fuzz)
		local long
		read -ra long <<<"$(long_form "$COMMAND")"
		GUEST_CMD=("${long[@]}" "${GUEST_CMD[@]}")
		# The guest watchdog must outlast the program's own --seconds.
		[ "$TIMEOUT_GIVEN" = 1 ] || TIMEOUT=$(($(seconds_of "${GUEST_CMD[@]}") + 300))
		;;
	*) [ ${#GUEST_CMD[@]} -eq 0 ] || die_usage "'-- CMD' is only for 'run', 'stress' and 'fuzz'" ;;
	esac
	if [ -n "$SHARE" ]; then
		[ -d "$SHARE" ] || die_usage "--share: '$SHARE' is not a directory"
		SHARE=$(cd "$SHARE" && pwd)
	fi
	case $CLEAN_PART in
	'' | kernel | source | rootfs | build | runs) ;;
	*) die_usage "clean: unknown part '$CLEAN_PART'" ;;
	esac
	parse_suites
}

# --suite picks programs by name; --compat and --kunit add to that pick.
parse_suites() {
	local known name
	if [ "$SUITE_GIVEN" = 0 ]; then
		[ -z "$COMPAT$KUNIT" ] || die_usage "--compat and --kunit go with --suite"
		COMPAT=1 KUNIT=1
		return 0
	fi
	case $COMMAND in
	main | test) ;;
	*) die_usage "--suite is for 'test' and the main command, not '$COMMAND'" ;;
	esac
	known=$(list_file "$TOP/tests/guest/suites")
	IFS=, read -ra SUITES <<<"$SUITE_ARG"
	[ ${#SUITES[@]} -gt 0 ] || die_usage "--suite needs at least one name"
	for name in "${SUITES[@]}"; do
		[ -n "$name" ] || die_usage "--suite: an empty name in '$SUITE_ARG'"
		grep -qxF -- "$name" <<<"$known" ||
			die_usage "--suite: no program '$name' in tests/guest/suites (there: $(paste -sd' ' - <<<"$known"))"
	done
	COMPAT=${COMPAT:-0} KUNIT=${KUNIT:-0}
}

# ---------------------------------------------------------------- stages

# shellcheck source=harness/device.sh
. "$TOP/harness/device.sh"
# shellcheck source=harness/kernel.sh
. "$TOP/harness/kernel.sh"
# shellcheck source=harness/guest.sh
. "$TOP/harness/guest.sh"

new_run_dir() {
	local stamp
	stamp=$(date +%Y%m%d-%H%M%S)
	RUN_DIR=$CACHE/runs/$stamp-$COMMAND-$ARCH-$CONFIG
	mkdir -p "$RUN_DIR"
	ln -sfn "$RUN_DIR" "$CACHE/runs/latest"
}

ensure_all_packages() {
	ensure_packages "${KERNEL_PACKAGES[@]}" "${ARCH_PACKAGES[@]}" "${GUEST_PACKAGES[@]}" shellcheck
}

host_checks() {
	"$TOP/tests/host/test-ktap-verdict.sh"
	"$TOP/tests/host/test-lib.sh"
	"$TOP/tests/host/test-run-usage.sh"
	"$TOP/tests/host/check-shell.sh"
}

# The data flow of a run, one step per arrow (README: how a run flows).
build_all() {
	step packages ensure_all_packages
	[ "$COMMAND" != test ] || [ ${#SUITES[@]} -gt 0 ] || step host-checks host_checks
	step kernel-source ensure_kernel_source
	[ "$COMMAND" != test ] || step check-series check_series
	step apply-series apply_series
	step configure configure_kernel
	step build-kernel build_kernel
	# The per-patch builds are the repo series' own: the in-tree run shares them.
	[ "$COMMAND" != test ] || [ "$IN_TREE" = 1 ] || step build-each-patch build_each_patch
	step build-module build_module
	step build-userspace build_userspace
	step rootfs ensure_rootfs
	step stage stage_guest_files
}

# ---------------------------------------------------------------- commands

cmd_test() {
	boot_step test
	verdict
}

cmd_main() {
	cmd_test
}

cmd_build() {
	echo "built: $KBUILD/$KIMAGE, $STAGE"
}

cmd_shell() {
	boot_guest shell
}

cmd_run() {
	local out=$RUN_DIR/guest
	boot_step run
	[ ! -f "$out/cmd.stdout" ] || cat "$out/cmd.stdout"
	[ ! -f "$out/cmd.stderr" ] || cat "$out/cmd.stderr" >&2
	local args=(--splats-only --console "$RUN_DIR/console.log")
	[ ! -f "$out/dmesg.txt" ] || args+=(--dmesg "$out/dmesg.txt")
	"$TOP/harness/ktap-verdict.sh" "${args[@]}" || return $?
	if [ "$QEMU_RC" = 124 ]; then
		echo "run.sh: guest timed out; console: $RUN_DIR/console.log" >&2
		return "$EX_TIMEOUT"
	fi
	if [ ! -f "$out/cmd.status" ]; then
		echo "run.sh: the guest ended without the command's status; console: $RUN_DIR/console.log" >&2
		return "$EX_HARNESS"
	fi
	return "$(cat "$out/cmd.status")"
}

# The program's KTAP and exit status, the guest's log scanned for splats.
cmd_stress() {
	cmd_run
}

cmd_fuzz() {
	cmd_run
}

cmd_clean() {
	[ -d "$CACHE" ] || { echo "nothing to clean: no $CACHE"; return 0; }
	# Never rm -rf a folder that run.sh did not make (WAITVAR_CACHE=/ ...).
	if [ ! -f "$CACHE/.waitvar-cache" ]; then
		echo "run.sh: $CACHE has no .waitvar-cache marker: not removing it" >&2
		exit "$EX_USAGE"
	fi
	case $CLEAN_PART in
	'') rm -rf "$CACHE" ;;
	kernel) rm -rf "$CACHE/kernel" ;;
	source) rm -rf "$CACHE/src" ;;
	rootfs) rm -rf "$CACHE/rootfs" ;;
	build) rm -rf "$CACHE/build" ;;
	runs) rm -rf "$CACHE/runs" ;;
	esac
	if [ -z "$CLEAN_PART" ]; then
		echo "removed the whole cache $CACHE"
	else
		echo "removed the $CLEAN_PART part of $CACHE"
	fi
}

main() {
	parse_args "$@"
	if [ "$COMMAND" = clean ]; then
		cmd_clean
		return 0
	fi
	# shellcheck source=harness/arch/arm64.sh
	. "$TOP/harness/arch/$ARCH.sh"
	mkdir -p "$CACHE"
	touch "$CACHE/.waitvar-cache"
	kernel_ccache_env
	device_plan
	kernel_plan
	guest_plan
	new_run_dir
	echo "waitvar $COMMAND: arch $ARCH, kernel config $CONFIG, logs in $RUN_DIR" >&2

	# One build at a time per cache; guests of earlier runs may still be up.
	exec 9>"$CACHE/.build.lock"
	flock -w 3600 9 || { echo "run.sh: another run.sh holds $CACHE/.build.lock" >&2; exit "$EX_HARNESS"; }
	build_all
	flock -u 9
	"cmd_$COMMAND"
}

main "$@"
