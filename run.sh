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
  bench [-- ARGS] on the default kernel, waitvar-bench against futex in the
                  boots harness/bench lists (ARGS added to each); table,
                  JSON and plots (gnuplot, PNG and SVG) in the run's folder
  mutate [NAME...] [--list]
                  on the debug kernel, plant each mutant of tests/mutants/
                  (or those named; 'driver' or 'series' names a part) in a
                  copy of the driver, rebuild the module, run the suites
                  that judge it; the series' mutants are built into one
                  kernel behind wait_mutant=K and booted one by one; one
                  table: killed by which test, or SURVIVED ('--list': the
                  names)
  build           build everything, boot nothing
  clean [PART]    drop the cache, or one part of it:
                  kernel (patched tree and build dirs), source (unpacked
                  linux-source), rootfs, build (module, userspace), runs (logs)

Options:
  --arch ARCH       guest architecture ($(arch_names | paste -sd' ' -); default arm64)
  --tree TREE       kernel tree: $(tree_names | paste -sd' ' -) (Debian's linux-source
                    packages; default 6.1), or the path of a kernel source
                    tree of your own, which the series is applied to a copy of
  --config NAME     kernel config: $(config_names | paste -sd' ' -) (harness/kconfig/configs;
                    default: default; 'test', 'stress', 'fuzz' and 'mutate'
                    take a test kernel, debug unless given)
  --suite N[,N...]  run only these programs of tests/guest/suites (native),
                    no KUnit, no host checks: the edit-to-verdict loop
  --compat          with --suite: their 32-bit builds too
  --kunit           with --suite: the KUnit modules too
  -j N              parallel build jobs (default: $(nproc))
  --timeout SECS    guest watchdog: limit for each guest program, and the
                    base of QEMU's host-side limit (default 300)
  --share DIR       make host DIR visible read-only at /mnt/share (run, shell)
  --cmdline ARGS    add ARGS to the guest kernel's command line, e.g.
                    --cmdline wait_table_bits=8 (boots only; builds ignore it)
  --matrix          with 'test': every cell of harness/matrix (arch, tree,
                    config, module or built-in), each its own run; one table
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
  bench: 0 once the report is written, goals met or not (the table says);
      a boot that fails ends it as run would
  mutate: 0 when every mutant is killed or equivalent, $EX_FAILED when one
      survived or is stale, or the suites fail on the driver as it is

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

# The configs harness/kconfig/configs names.
config_names() {
	list_file "$TOP/harness/kconfig/configs" | awk '{ print $1 }'
}

# The trees harness/trees names.
tree_names() {
	list_file "$TOP/harness/trees" | cut -f1
}

# ---------------------------------------------------------------- options

COMMAND=main
ARCH=arm64
TREE_ARG=6.1
CONFIG=
JOBS=$(nproc)
TIMEOUT=300
TIMEOUT_GIVEN=0
SHARE=
KCMDLINE=
VERBOSE=0
IN_TREE=0
MATRIX=0
MUTANTS=()
MUTATE_LIST=0
CELL_FLAGS=
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
		test | shell | run | build | clean | stress | fuzz | bench | mutate)
			[ $cmd_seen = 0 ] || die_usage "two commands given: $COMMAND and $1"
			COMMAND=$1 cmd_seen=1
			if [ "$1" = clean ] && [ $# -gt 1 ] && [[ $2 != -* ]]; then
				CLEAN_PART=$2
				shift
			fi
			;;
		--arch) [ $# -ge 2 ] || die_usage "--arch needs a value"; ARCH=$2 CELL_FLAGS+=" --arch"; shift ;;
		--arch=*) ARCH=${1#*=} CELL_FLAGS+=" --arch" ;;
		--tree) [ $# -ge 2 ] || die_usage "--tree needs a value"; TREE_ARG=$2 CELL_FLAGS+=" --tree"; shift ;;
		--tree=*) TREE_ARG=${1#*=} CELL_FLAGS+=" --tree" ;;
		--config) [ $# -ge 2 ] || die_usage "--config needs a value"; CONFIG=$2 CELL_FLAGS+=" --config"; shift ;;
		--config=*) CONFIG=${1#*=} CELL_FLAGS+=" --config" ;;
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
		--cmdline) [ $# -ge 2 ] || die_usage "--cmdline needs a value"; KCMDLINE=$2 CELL_FLAGS+=" --cmdline"; shift ;;
		--cmdline=*) KCMDLINE=${1#*=} CELL_FLAGS+=" --cmdline" ;;
		--verbose | -v) VERBOSE=1 ;;
		--in-tree) IN_TREE=1 CELL_FLAGS+=" --in-tree" ;;
		--matrix) MATRIX=1 ;;
		--list) MUTATE_LIST=1 ;;
		-h | --help) usage; exit 0 ;;
		--)
			shift
			GUEST_CMD=("$@")
			break
			;;
		*)
			if [ "$COMMAND" != mutate ] || [[ $1 == -* ]]; then
				die_usage "unknown argument '$1'"
			fi
			MUTANTS+=("$1")
			;;
		esac
		shift
	done
	[ "$MUTATE_LIST" = 0 ] || [ "$COMMAND" = mutate ] || die_usage "--list is for 'mutate'"

	if [ "$MATRIX" = 1 ]; then
		[ "$COMMAND" = test ] || die_usage "--matrix is for 'test'"
		[ -z "$CELL_FLAGS$SUITE_ARG" ] ||
			die_usage "--matrix runs the cells of harness/matrix; drop${CELL_FLAGS}$([ -z "$SUITE_ARG" ] || echo ' --suite')"
	fi
	[ -f "$TOP/harness/arch/$ARCH.sh" ] ||
		die_usage "unsupported --arch '$ARCH' (supported: $(arch_names | paste -sd' ' -))"
	if ! tree_names | grep -qxF -- "$TREE_ARG"; then
		case $TREE_ARG in
		*/*)
			if [ ! -f "$TREE_ARG/Makefile" ] || [ ! -d "$TREE_ARG/kernel" ]; then
				die_usage "--tree: '$TREE_ARG' is not a kernel source tree (no Makefile and kernel/ there)"
			fi
			;;
		*) die_usage "unknown --tree '$TREE_ARG' ($(tree_names | paste -sd' ' -), or a path with a '/')" ;;
		esac
		TREE_ARG=$(CDPATH='' cd -- "$TREE_ARG" >/dev/null && pwd)
	fi
	[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die_usage "-j needs a positive number, not '$JOBS'"
	[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die_usage "--timeout needs a positive number of seconds, not '$TIMEOUT'"
	case $COMMAND in
	test | stress | fuzz | mutate)
		[ "$CONFIG" != default ] || die_usage "'$COMMAND' runs on a test kernel; drop --config $CONFIG"
		CONFIG=${CONFIG:-debug}
		;;
	esac
	if [ "$COMMAND" = bench ]; then
		[ -z "$CONFIG" ] || [ "$CONFIG" = default ] ||
			die_usage "'bench' measures the default kernel; drop --config $CONFIG"
		# Each boot's program takes minutes under TCG.
		[ "$TIMEOUT_GIVEN" = 1 ] || TIMEOUT=1800
	fi
	CONFIG=${CONFIG:-default}
	config_names | grep -qxF -- "$CONFIG" ||
		die_usage "unknown --config '$CONFIG' ($(config_names | paste -sd' ' -))"
	if [ "$COMMAND" = clean ] && [ "$IN_TREE" = 1 ]; then
		die_usage "'clean' takes no --in-tree; 'clean kernel' drops both trees"
	fi
	if [ "$COMMAND" = run ] && [ ${#GUEST_CMD[@]} -eq 0 ]; then
		die_usage "'run' needs a command after --"
	fi
	case $COMMAND in
	run) ;;
	bench)
		local a
		for a in "${GUEST_CMD[@]}"; do
			case $a in
			--figures* | --json* | --label*)
				die_usage "bench: harness/bench sets waitvar-bench's --figures, --json and --label; drop $a"
				;;
			esac
		done
		;;
	stress | fuzz)
		local long
		read -ra long <<<"$(long_form "$COMMAND")"
		GUEST_CMD=("${long[@]}" "${GUEST_CMD[@]}")
		# The guest watchdog must outlast the program's own --seconds.
		[ "$TIMEOUT_GIVEN" = 1 ] || TIMEOUT=$(($(seconds_of "${GUEST_CMD[@]}") + 300))
		;;
	*) [ ${#GUEST_CMD[@]} -eq 0 ] || die_usage "'-- CMD' is only for 'run', 'stress', 'fuzz' and 'bench'" ;;
	esac
	[ "$COMMAND" != mutate ] || parse_mutants
	if [ -n "$SHARE" ]; then
		[ -d "$SHARE" ] || die_usage "--share: '$SHARE' is not a directory"
		SHARE=$(cd "$SHARE" && pwd)
	fi
	# One line of printable words: QEMU passes it to the kernel as it is.
	case $KCMDLINE in
	*[![:print:]]*) die_usage "--cmdline: only printable characters, on one line" ;;
	esac
	case $CLEAN_PART in
	'' | kernel | source | rootfs | build | runs) ;;
	*) die_usage "clean: unknown part '$CLEAN_PART'" ;;
	esac
	parse_suites
}

# The catalogue of 'mutate' (tests/mutants/README.md), one folder per part:
# driver/ plants in the module, series/ in the patched kernel tree.
MUTANT_PARTS=(driver series)
MUTANT_DIRS=("$TOP/tests/mutants/driver" "$TOP/tests/mutants/series")

# mutate: the names given must be in the catalogue; the module only.
parse_mutants() {
	local known name
	[ "$IN_TREE" = 0 ] || die_usage "'mutate' plants its mutants in the module; drop --in-tree"
	[ -z "$SHARE$KCMDLINE" ] || die_usage "'mutate' takes no --share or --cmdline"
	known=$("$TOP/harness/mutate.py" list "${MUTANT_DIRS[@]}") ||
		die_usage "the mutant catalogue is malformed (above)"
	local picked=() i
	for name in "${MUTANTS[@]}"; do
		for i in "${!MUTANT_PARTS[@]}"; do
			if [ "$name" = "${MUTANT_PARTS[$i]}" ]; then
				mapfile -t -O "${#picked[@]}" picked < <("$TOP/harness/mutate.py" list "${MUTANT_DIRS[$i]}")
				continue 2
			fi
		done
		grep -qxF -- "$name" <<<"$known" ||
			die_usage "mutate: no mutant '$name' in tests/mutants (./run.sh mutate --list)"
		picked+=("$name")
	done
	[ ${#MUTANTS[@]} = 0 ] || [ ${#picked[@]} -gt 0 ] || die_usage "mutate: no mutant in ${MUTANTS[*]}"
	[ ${#MUTANTS[@]} = 0 ] || MUTANTS=("${picked[@]}")
	# A mutant that hangs a program costs the watchdog's limit.
	[ "$TIMEOUT_GIVEN" = 1 ] || TIMEOUT=180
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
	RUN_DIR=$CACHE/runs/$stamp-$COMMAND-$ARCH-$CONFIG$TREE_SUFFIX
	mkdir -p "$RUN_DIR"
	ln -sfn "$RUN_DIR" "$CACHE/runs/latest"
}

# The host's report of 'bench' (and its host check) draws with these.
BENCH_PACKAGES=(python3 gnuplot-nox)

ensure_all_packages() {
	# shellcheck disable=SC2086 # none, or one package name
	ensure_packages "${KERNEL_PACKAGES[@]}" $TREE_PACKAGE "${ARCH_PACKAGES[@]}" "${GUEST_PACKAGES[@]}" \
		shellcheck "${BENCH_PACKAGES[@]}"
}

host_checks() {
	"$TOP/tests/host/test-ktap-verdict.sh"
	"$TOP/tests/host/test-lib.sh"
	"$TOP/tests/host/test-run-usage.sh"
	"$TOP/tests/host/test-cache-lock.sh"
	"$TOP/tests/host/test-apply-patch.sh"
	"$TOP/tests/host/test-bench-report.sh"
	"$TOP/tests/host/test-mutate.sh"
	"$TOP/tests/host/check-shell.sh"
}

# The data flow of a run, one step per arrow (README: how a run flows).
build_all() {
	step packages ensure_all_packages
	[ "$COMMAND" != test ] || [ ${#SUITES[@]} -gt 0 ] || step host-checks host_checks
	step kernel-source ensure_kernel_source
	# Each tree of harness/trees checks the patches the series marks for
	# it; the per-patch builds run on 6.1, the series' base (below).
	[ "$COMMAND" != test ] || [ -z "$TREE_PACKAGE" ] || step check-series check_series
	step apply-series apply_series
	step configure configure_kernel
	step build-kernel build_kernel
	# The per-patch builds are the repo series' own, on its tree and in the
	# full (debug) config: the matrix's other cells share them.
	[ "$COMMAND" != test ] || [ "$IN_TREE" = 1 ] || [ "$TREE_NAME" != 6.1 ] ||
		[ "$CONFIG" != debug ] || step build-each-patch build_each_patch
	step build-module build_module
	step build-userspace build_userspace
	step rootfs ensure_rootfs
	step stage stage_guest_files
}

# ---------------------------------------------------------------- commands

cmd_test() {
	local rc=0 boots_rc=0
	boot_step test
	verdict || rc=$?
	# More boots of a guest that hung or a harness that failed would only cost time.
	if [ ${#SUITES[@]} = 0 ] && [ "$rc" != "$EX_TIMEOUT" ] && [ "$rc" != "$EX_HARNESS" ]; then
		extra_boots || boots_rc=$?
	fi
	return $((rc > boots_rc ? rc : boots_rc))
}

# The lines of harness/boots for this cell: label, parameters, memory, what.
cell_boots() {
	list_file "$TOP/harness/boots" | awk -F'\t' '
		NF != 8 { print "harness/boots: not 8 tab-separated fields: " $0 > "/dev/stderr"; bad = 1 }
		END { exit bad }' || return
	cell_rows "$TOP/harness/boots"
}

# stage_boot LABEL WHAT: $STAGE, a copy of the run's stage ($1) with only
# what the boot runs: the programs WHAT names, and the KUnit modules if it
# names 'kunit'.
stage_boot() {
	local from=$1 what=$2 item
	local -a items
	mkdir -p "$STAGE" &&
		rsync -a --delete --exclude /kunit "$from/" "$STAGE/" &&
		rm -rf "$STAGE/kunit" && mkdir "$STAGE/kunit" && : >"$STAGE/suites" || return 1
	IFS=, read -ra items <<<"$what"
	for item in "${items[@]}"; do
		if [ "$item" != kunit ]; then
			echo "$item" >>"$STAGE/suites" || return 1
		elif [ -z "$(find "$from/kunit" -name '*.ko')" ]; then
			echo "run.sh: the boot runs the KUnit modules; the run staged none" >&2
			return 1
		else
			find "$from/kunit" -name '*.ko' -exec cp -t "$STAGE/kunit/" {} + || return 1
		fi
	done
}

# Each boot of cell_boots, judged as the main one is, its verdict in its
# folder and one line here.  Returns the worst status (the EX_* codes rank
# by severity).
extra_boots() {
	local top=$RUN_DIR stage=$STAGE label params mem what rc worst=0 boots
	local user_cmdline=$KCMDLINE
	local -a machine=("${QEMU_MACHINE[@]}")
	if ! boots=$(cell_boots); then
		echo "run.sh: harness/boots cannot be read" >&2
		return "$EX_HARNESS"
	fi
	while IFS=$'\t' read -r label params mem what; do
		[ -n "$label" ] || continue
		RUN_DIR=$top/boot-$label
		STAGE=$RUN_DIR/stage
		if ! stage_boot "$stage" "$what"; then
			echo "run.sh: boot '$label': staging $STAGE failed" >&2
			worst=$((worst > EX_HARNESS ? worst : EX_HARNESS))
			continue
		fi
		KCMDLINE=$user_cmdline
		[ "$params" = - ] || KCMDLINE+="${KCMDLINE:+ }$params"
		QEMU_MACHINE=("${machine[@]}")
		[ "$mem" = - ] || QEMU_MACHINE+=(-m "$mem")
		echo "=== boot '$label' (kernel parameters: ${KCMDLINE:-none}$([ "$mem" = - ] || echo "; $mem MiB")): $what" >&2
		boot_step test
		rc=0
		verdict >"$RUN_DIR/verdict.txt" 2>&1 || rc=$?
		rm -rf "$STAGE"
		echo "boot '$label': $([ "$rc" = 0 ] && echo pass || echo "FAIL ($rc)"):" \
			"$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$RUN_DIR/verdict.txt" | tail -n 1)"
		if [ "$rc" != 0 ]; then
			sed 's/^/  /' "$RUN_DIR/verdict.txt" >&2
			echo "run.sh: boot '$label' failed ($rc); its logs: $RUN_DIR" >&2
		fi
		worst=$((worst > rc ? worst : rc))
	done <<<"$boots"
	RUN_DIR=$top STAGE=$stage KCMDLINE=$user_cmdline
	QEMU_MACHINE=("${machine[@]}")
	return "$worst"
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

# mutant_path NAME: its file in the catalogue.
mutant_path() {
	local d
	for d in "${MUTANT_DIRS[@]}"; do
		[ ! -f "$d/$1.mut" ] || { echo "$d/$1.mut"; return 0; }
	done
	return 1
}

# build_mutant MUT SRC: SRC made the driver's sources again (files that
# differ rewritten, so make sees them newer than their objects), MUT
# planted, the module rebuilt: only the objects of what changed.  Prints
# "stale: WHY" and fails when it no longer applies or does not build.
build_mutant() {
	local mut=$1 src=$2 out
	rsync -rl --checksum --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' \
		--exclude='.*.cmd' --exclude='Module.symvers' --exclude='modules.order' \
		"$TOP/driver/" "$src/"
	[ -z "$mut" ] || out=$("$TOP/harness/mutate.py" apply "$mut" "$src") || { echo "$out"; return 1; }
	kmake M="$src" WAITVAR_TEST_HOOKS=y modules >"$RUN_DIR/build.log" 2>&1 ||
		{ echo "stale: it does not build ($RUN_DIR/build.log)"; return 1; }
}

# judge_boot MODULE KUNIT_DIR SUITE...: one boot of the suites from a stage
# that differs from the run's in the module, the KUnit modules (those of
# KUNIT_DIR's build, or none if empty) and the plan; sets JUDGED to the
# verdict's status and writes $RUN_DIR/verdict.txt.
judge_boot() {
	local module=$1 kunit_dir=$2
	shift 2
	rsync -a --delete "$MUT_BASE_STAGE/" "$MUT_STAGE/"
	STAGE=$MUT_STAGE
	cp "$module" "$STAGE/waitvar.ko"
	: >"$STAGE/suites"
	[ $# = 0 ] || printf '%s\n' "$@" >"$STAGE/suites"
	rm -rf "$STAGE/kunit"/*
	[ -z "$kunit_dir" ] || find "$kunit_dir" -name '*_kunit.ko' -exec cp {} "$STAGE/kunit/" \;
	boot_step test
	JUDGED=0
	verdict >"$RUN_DIR/verdict.txt" 2>&1 || JUDGED=$?
}

# mutant_suites MUT: its fields (MUT_*), its guest suites in MUT_SUITES_A
# and MUT_KUNIT=1 if it names 'kunit' too.
mutant_suites() {
	local all s
	eval "$("$TOP/harness/mutate.py" show "$1")"
	# shellcheck disable=SC2153 # MUT_SUITES: set by the eval above
	IFS=, read -ra all <<<"$MUT_SUITES"
	MUT_KUNIT=0 MUT_SUITES_A=()
	for s in "${all[@]}"; do
		if [ "$s" = kunit ]; then
			MUT_KUNIT=1
		else
			MUT_SUITES_A+=("$s")
		fi
	done
}

# mutate_baseline KUNIT_DIR MODULE SUITE...: the suites (and KUnit modules)
# on the code as it is must pass, or no kill means anything.
mutate_baseline() {
	local kunit_dir=$1 module=$2
	shift 2
	RUN_DIR=$MUT_TOP/baseline-$MUT_PART
	mkdir -p "$RUN_DIR"
	echo "=== baseline ($MUT_PART): $* $([ -z "$kunit_dir" ] || echo '+ KUnit') on the code as it is" >&2
	judge_boot "$module" "$kunit_dir" "$@"
	if [ "$JUDGED" != 0 ]; then
		cat "$RUN_DIR/verdict.txt"
		echo "run.sh: mutate: the suites fail on the code as it is ($JUDGED): no mutant can be judged" >&2
		return "$EX_FAILED"
	fi
}

# mutant_start NAME MUT: its fields read, its log folder made the run's.
mutant_start() {
	mutant_suites "$2"
	RUN_DIR=$MUT_TOP/$1
	mkdir -p "$RUN_DIR"
	echo "=== mutant $1: $MUT_DESC" >&2
}

# mutate_row NAME RESULT T0: one line of the table.
mutate_row() {
	echo "    $2" >&2
	printf '%s\t%s\t%s\n' "$1" "$2" $((SECONDS - $3)) >>"$MUT_ROWS"
}

# The union of the named mutants' guest suites, in tests/guest/suites' order.
union_suites() {
	local name all=()
	for name in "$@"; do
		mutant_suites "$(mutant_path "$name")"
		all+=("${MUT_SUITES_A[@]}")
	done
	[ ${#all[@]} = 0 ] ||
		list_file "$TOP/tests/guest/suites" | grep -xF -f <(printf '%s\n' "${all[@]}") || true
}

# The driver's mutants: the baseline, then each in its own boot with a
# module rebuilt from a copy of the sources (only the objects it touches).
mutate_driver() {
	local name mut t0 result mdir=$CACHE/build/$ARCH-$CONFIG$TREE_SUFFIX/mutant
	MUT_PART=driver
	mkdir -p "$mdir/src"
	mapfile -t SUITES < <(union_suites "$@")
	if [ ${#SUITES[@]} -gt 0 ]; then
		mutate_baseline "" "$MUT_BASE_STAGE/waitvar.ko" "${SUITES[@]}" || return
	fi
	for name in "$@"; do
		mut=$(mutant_path "$name")
		t0=$SECONDS
		mutant_start "$name" "$mut"
		if ! result=$(build_mutant "$mut" "$mdir/src"); then
			:
		elif [ -n "$MUT_EQUIVALENT" ]; then
			result="equivalent: $MUT_EQUIVALENT"
		else
			judge_boot "$mdir/src/waitvar.ko" "" "${MUT_SUITES_A[@]}"
			result=$("$TOP/harness/mutate.py" killer "$RUN_DIR/verdict.txt" "$JUDGED")
		fi
		mutate_row "$name" "$result" "$t0"
	done
}

# plant_series TREE: the series' mutants planted in TREE (a copy of the
# patched tree), each behind the selector as its number, its place in the
# catalogue; then the selector itself, a boot parameter of wait_bit.c.
# Files are rewritten only when their content changes, so that make
# rebuilds nothing when the catalogue did not change.  Prints NAME<TAB>WHY
# for each stale one.
plant_series() {
	local mtree=$1 plant=$CACHE/kernel/series-mutants.plant k=0 name mut out f files=()
	rm -rf "$plant"
	mkdir -p "$plant"
	mapfile -t SERIES_ALL < <("$TOP/harness/mutate.py" list "$TOP/tests/mutants/series")
	for name in "${SERIES_ALL[@]}"; do
		mut=$(mutant_path "$name")
		eval "$("$TOP/harness/mutate.py" show "$mut")"
		if [ ! -f "$plant/$MUT_FILE" ]; then
			mkdir -p "$plant/$(dirname "$MUT_FILE")"
			cp "$TREE/$MUT_FILE" "$plant/$MUT_FILE" 2>/dev/null || :
			files+=("$MUT_FILE")
		fi
		k=$((k + 1))
		out=$("$TOP/harness/mutate.py" apply "$mut" "$plant" "$k") || printf '%s\t%s\n' "$name" "${out#stale: }"
	done
	for f in kernel/sched/wait_bit.c include/linux/wait_bit.h; do
		[ -f "$plant/$f" ] || { mkdir -p "$plant/$(dirname "$f")"; cp "$TREE/$f" "$plant/$f"; files+=("$f"); }
	done
	cat >>"$plant/kernel/sched/wait_bit.c" <<-'EOF'

	/* ./run.sh mutate: the series mutant wait_mutant=K plants; 0: none. */
	int wait_mutant __read_mostly;
	EXPORT_SYMBOL(wait_mutant);
	core_param(wait_mutant, wait_mutant, int, 0444);
	EOF
	sed -i 's|^#define _LINUX_WAIT_BIT_H$|&\n\n/* Which series mutant runs (./run.sh mutate); 0: none. */\nextern int wait_mutant;|' \
		"$plant/include/linux/wait_bit.h"
	for f in "${files[@]}"; do
		[ -f "$plant/$f" ] || continue
		cmp -s "$plant/$f" "$mtree/$f" || cp "$plant/$f" "$mtree/$f"
	done
	SERIES_FILES=("${files[@]}")
}

# build_series_mutants: the patched tree copied (but for the files the
# mutants plant in), the mutants planted, the kernel, its modules (the
# KUnit ones among them) and the driver built in an O= dir of their own.
build_series_mutants() {
	local mtree=$TREE-mutants mbuild=$KBUILD-mutants excludes=() f stamp key
	local src=$CACHE/build/$ARCH-$CONFIG$TREE_SUFFIX/mutant/series-src
	SERIES_FILES=()
	mapfile -t SERIES_FILES < <(for f in "$TOP"/tests/mutants/series/*.mut; do
		"$TOP/harness/mutate.py" show "$f" | sed -n "s/^MUT_FILE=//p" | tr -d "'"
	done | sort -u)
	for f in "${SERIES_FILES[@]}" kernel/sched/wait_bit.c include/linux/wait_bit.h; do
		excludes+=(--exclude="/$f")
	done
	mkdir -p "$mtree"
	rsync -r --links --perms --checksum --delete "${excludes[@]}" "$TREE/" "$mtree/"
	plant_series "$mtree" >"$MUT_TOP/series-stale.tsv"
	mkdir -p "$mbuild"
	cmp -s "$KBUILD/.config" "$mbuild/.config.base" || {
		cp "$KBUILD/.config" "$mbuild/.config"
		cp "$KBUILD/.config" "$mbuild/.config.base"
	}
	key="$(build_key) $(cd "$mtree" && cat "${SERIES_FILES[@]}" kernel/sched/wait_bit.c include/linux/wait_bit.h | sha256sum)"
	stamp=$mbuild/.waitvar-built
	if ! stamp_matches "$stamp" "$key"; then
		rm -f "$stamp"
		TREE=$mtree KBUILD=$mbuild kmake olddefconfig &&
			TREE=$mtree KBUILD=$mbuild kmake_image || return
		stamp_write "$stamp" "$key"
	fi
	mkdir -p "$src"
	RUN_DIR=$MUT_TOP TREE=$mtree KBUILD=$mbuild build_mutant "" "$src" ||
		{ echo "the driver does not build against the mutants' kernel: $MUT_TOP/build.log"; return 1; }
	echo "built $mbuild/$KIMAGE: ${#SERIES_ALL[@]} series mutants behind wait_mutant=K"
}

# The series' mutants: one kernel for all, then the baseline with none
# selected and each mutant in its own boot with wait_mutant=K.
mutate_series() {
	local name mut t0 result k stale mbuild=$KBUILD-mutants
	local module=$CACHE/build/$ARCH-$CONFIG$TREE_SUFFIX/mutant/series-src/waitvar.ko
	MUT_PART=series
	RUN_DIR=$MUT_TOP
	step build-series-mutants build_series_mutants
	mapfile -t SERIES_ALL < <("$TOP/harness/mutate.py" list "$TOP/tests/mutants/series")
	mapfile -t SUITES < <(union_suites "$@")
	local kernel=$KBUILD kunit=''
	for name in "$@"; do
		mutant_suites "$(mutant_path "$name")"
		[ "$MUT_KUNIT" = 0 ] || kunit=$mbuild
	done
	KBUILD=$mbuild
	mutate_baseline "$kunit" "$module" "${SUITES[@]}" ||
		{ KBUILD=$kernel; return "$EX_FAILED"; }
	for name in "$@"; do
		mut=$(mutant_path "$name")
		t0=$SECONDS
		mutant_start "$name" "$mut"
		stale=$(awk -F'\t' -v n="$name" '$1 == n { print $2 }' "$MUT_TOP/series-stale.tsv")
		k=$(grep -nxF -- "$name" <(printf '%s\n' "${SERIES_ALL[@]}") | cut -d: -f1)
		if [ -n "$stale" ]; then
			result="stale: $stale"
		elif [ -n "$MUT_EQUIVALENT" ]; then
			result="equivalent: $MUT_EQUIVALENT"
		else
			KCMDLINE="wait_mutant=$k"
			judge_boot "$module" "$([ "$MUT_KUNIT" = 0 ] || echo "$mbuild")" "${MUT_SUITES_A[@]}"
			KCMDLINE=
			result=$("$TOP/harness/mutate.py" killer "$RUN_DIR/verdict.txt" "$JUDGED")
		fi
		mutate_row "$name" "$result" "$t0"
	done
	KBUILD=$kernel
}

# mutate: each part's mutants judged by the suites that can judge them,
# after a baseline of those suites on the code as it is.  One row per
# mutant; the table at the end.
cmd_mutate() {
	local names=() name mut rc driver=() series=()
	MUT_TOP=$RUN_DIR MUT_BASE_STAGE=$STAGE
	MUT_STAGE=$CACHE/build/$ARCH-$CONFIG$TREE_SUFFIX/mutant/stage
	MUT_ROWS=$MUT_TOP/rows.tsv
	: >"$MUT_ROWS"
	mkdir -p "$MUT_STAGE"
	if [ ${#MUTANTS[@]} -gt 0 ]; then
		names=("${MUTANTS[@]}")
	else
		mapfile -t names < <("$TOP/harness/mutate.py" list "${MUTANT_DIRS[@]}")
	fi
	for name in "${names[@]}"; do
		mut=$(mutant_path "$name")
		if [ "${mut%/*}" = "$TOP/tests/mutants/series" ]; then
			series+=("$name")
		else
			"$TOP/harness/mutate.py" check "$mut" "$TOP/driver" "$TOP/tests/guest/suites" >/dev/null ||
				[ $? = 3 ] || return "$EX_HARNESS"
			driver+=("$name")
		fi
	done
	COMPAT=0 KUNIT=0
	rc=0
	[ ${#driver[@]} = 0 ] || mutate_driver "${driver[@]}" || rc=$?
	[ "$rc" != 0 ] || [ ${#series[@]} = 0 ] || mutate_series "${series[@]}" || rc=$?
	RUN_DIR=$MUT_TOP
	STAGE=$MUT_BASE_STAGE
	[ "$rc" = 0 ] || return "$rc"
	"$TOP/harness/mutate.py" table "$MUT_ROWS" | tee "$MUT_TOP/table.txt" || rc=$?
	echo "mutate: table $MUT_TOP/table.txt, each mutant's logs in $MUT_TOP/NAME/"
	[ "$rc" = 0 ] || return "$EX_FAILED"
}

bench_boots() {
	list_file "$TOP/harness/bench" | awk '{ print $1, $2, $3 }'
}

# bench: one boot per line of harness/bench, each in its own folder of the
# run's, then one report over all of them (harness/bench-report.py).
cmd_bench() {
	local top=$RUN_DIR label params figures rc=0 jsons=() user_cmdline=$KCMDLINE
	local -a user_args=("${GUEST_CMD[@]}")
	QEMU_MACHINE+=(-m "$BENCH_GUEST_MB")
	while read -r label params figures; do
		RUN_DIR=$top/$label
		mkdir -p "$RUN_DIR"
		KCMDLINE=$user_cmdline
		[ "$params" = - ] || KCMDLINE+="${KCMDLINE:+ }$params"
		GUEST_CMD=(waitvar-bench --json /mnt/out/bench.json --label "$label")
		[ "$figures" = all ] || GUEST_CMD+=(--figures "$figures")
		GUEST_CMD+=("${user_args[@]}")
		echo "=== bench boot '$label' (kernel parameters: ${KCMDLINE:-none}): ${GUEST_CMD[*]}" >&2
		rc=0
		cmd_run >"$RUN_DIR/bench.out" || rc=$?
		cat "$RUN_DIR/bench.out"
		if [ "$rc" != 0 ]; then
			echo "run.sh: bench boot '$label' failed ($rc); its logs: $RUN_DIR" >&2
			return "$rc"
		fi
		jsons+=("$RUN_DIR/guest/bench.json")
	done < <(bench_boots)
	RUN_DIR=$top
	"$TOP/harness/bench-report.py" --out "$top" "${jsons[@]}" || {
		echo "run.sh: the bench report failed; its input: ${jsons[*]}" >&2
		return "$EX_HARNESS"
	}
	echo "bench: table $top/table.txt, JSON $top/bench.json, plots $top/*.png $top/*.svg"
}

cmd_clean() {
	[ -d "$CACHE" ] || { echo "nothing to clean: no $CACHE"; return 0; }
	# Never rm -rf a folder that run.sh did not make (WAITVAR_CACHE=/ ...).
	if [ ! -f "$CACHE/.waitvar-cache" ]; then
		echo "run.sh: $CACHE has no .waitvar-cache marker: not removing it" >&2
		exit "$EX_USAGE"
	fi
	# Not under another run's build.
	exec 9>"$CACHE/.build.lock"
	take_cache_lock 9
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

# The cells harness/matrix lists: arch, tree, config, device, one a line.
matrix_cells() {
	list_file "$TOP/harness/matrix" | awk '{ print $1, $2, $3, $4 }'
}

# The arguments of './run.sh build' and 'test' for one cell, one per line.
matrix_cell_args() {
	local arch=$1 tree=$2 config=$3 device=$4
	printf '%s\n' --arch "$arch" --tree "$tree" --config "$config" -j "$JOBS"
	[ "$device" = module ] || echo --in-tree
}

# Waits until the './run.sh test' whose output goes to @log has built (its
# run dir has 'built') or @done exists, then runs the next cell's build at
# nice 19.  Started first, the build would take the cache's lock and hold
# up the test's own (cached) build steps instead of using its guest's time.
matrix_prebuild() {
	local log=$1 done=$2 out=$3 run_dir=''
	shift 3
	while [ ! -e "$done" ]; do
		[ -n "$run_dir" ] ||
			run_dir=$(sed -n 's/^waitvar test: .*, logs in //p' "$log" 2>/dev/null | tail -n 1)
		[ -z "$run_dir" ] || [ ! -e "$run_dir/built" ] || break
		sleep 2
	done
	exec nice -n 19 "$TOP/run.sh" build "$@" </dev/null >"$out" 2>&1
}

# test --matrix: each cell as its own './run.sh build' then './run.sh test',
# one after another, on past a failing cell; then one table, kept with the
# cells' logs.  Fails if any cell did.  Once a cell's test has built (its
# guest is booting), the next cell's build runs in the background at nice
# 19: it takes only the CPU the guest (or a build's serial steps) leaves
# idle, and the next cell's own build then finds it done.  The two never
# share a build dir, a rootfs image being built, or apt (README.md, "The
# matrix").
cmd_matrix() {
	local arch tree config device log rc t0 t_all=$SECONDS dir table failed_cells=0
	local passed failed skipped splats verdict ktap i next_pid=''
	local -a cells args next
	dir=$CACHE/runs/$(date +%Y%m%d-%H%M%S)-matrix
	mkdir -p "$dir"
	table=$dir/summary.txt
	printf '%-28s %6s %6s %7s %6s  %-22s %8s\n' cell passed failed skipped splats verdict wall >"$table"
	mapfile -t cells < <(matrix_cells)
	[ ${#cells[@]} -gt 0 ] || { echo "run.sh: harness/matrix lists no cell" >&2; return "$EX_HARNESS"; }
	for ((i = 0; i < ${#cells[@]}; i++)); do
		read -r arch tree config device <<<"${cells[i]}"
		case $device in
		module | built-in) ;;
		*)
			echo "run.sh: harness/matrix: cell '${cells[i]}': the device is module or built-in" >&2
			return "$EX_HARNESS"
			;;
		esac
	done
	for ((i = 0; i < ${#cells[@]}; i++)); do
		read -r arch tree config device <<<"${cells[i]}"
		# shellcheck disable=SC2086 # the cell's four words
		mapfile -t args < <(matrix_cell_args ${cells[i]})
		log=$dir/$arch-${tree//\//_}-$config-$device.log
		# This cell's background build must be over before its own starts.
		if [ -n "$next_pid" ]; then
			wait "$next_pid" || echo "=== its background build failed: the cell builds in the foreground" >&2
			next_pid=''
		fi
		echo "=== cell $arch/$tree/$config/$device: ./run.sh build|test ${args[*]}" >&2
		t0=$SECONDS
		set +e
		"$TOP/run.sh" build "${args[@]}" </dev/null 2>&1 | tee "$log" >&2
		if [ $((i + 1)) -lt ${#cells[@]} ]; then
			# shellcheck disable=SC2086 # the cell's four words
			mapfile -t next < <(matrix_cell_args ${cells[i + 1]})
			matrix_prebuild "$log" "$dir/cell-$((i + 1)).done" \
				"$dir/prebuild-$((i + 2)).log" "${next[@]}" &
			next_pid=$!
		fi
		[ "$TIMEOUT_GIVEN" = 0 ] || args+=(--timeout "$TIMEOUT")
		[ "$VERBOSE" = 0 ] || args+=(--verbose)
		"$TOP/run.sh" test "${args[@]}" </dev/null 2>&1 | tee -a "$log" >&2
		rc=${PIPESTATUS[0]}
		touch "$dir/cell-$((i + 1)).done"
		set -e
		passed='' failed=''
		read -r passed failed < <(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$log" | tail -n 1) || true
		skipped=$(sed -n 's/^\([0-9]*\) skipped$/\1/p' "$log" | tail -n 1) || true
		splats=$(awk '/^kernel splat in the guest log:/ { on = 1; next }
			on && /^  / { n++; next } { on = 0 } END { print n + 0 }' "$log") || true
		ktap=$(sed -n 's/^KTAP: //p' "$log" | tail -n 1) || true
		case $rc in
		0) verdict=pass ;;
		"$EX_FAILED") verdict="FAIL (tests)" ;;
		"$EX_TIMEOUT") verdict="FAIL (timeout)" ;;
		"$EX_SPLAT") verdict="FAIL (splat)" ;;
		*) verdict="FAIL (harness, $rc)" ;;
		esac
		[ "$rc" = 0 ] || failed_cells=$((failed_cells + 1))
		printf '%-28s %6s %6s %7s %6s  %-22s %7ss\n' "$arch/$tree/$config/$device" \
			"${passed:--}" "${failed:--}" "${skipped:-0}" "$splats" "$verdict" \
			$((SECONDS - t0)) >>"$table"
		[ -z "$ktap" ] || echo "#   $arch/$tree/$config/$device: $ktap" >>"$dir/ktap-files"
	done
	echo >&2
	cat "$table"
	[ ! -f "$dir/ktap-files" ] || { echo "results.ktap of each cell:"; sed 's/^#   /  /' "$dir/ktap-files"; }
	echo "matrix: $failed_cells of ${#cells[@]} cells failed in $((SECONDS - t_all)) s; logs: $dir"
	[ "$failed_cells" = 0 ] || return "$EX_FAILED"
}

main() {
	parse_args "$@"
	if [ "$COMMAND" = clean ]; then
		cmd_clean
		return 0
	fi
	if [ "$MATRIX" = 1 ]; then
		mkdir -p "$CACHE"
		touch "$CACHE/.waitvar-cache"
		cmd_matrix
		return
	fi
	if [ "$MUTATE_LIST" = 1 ]; then
		"$TOP/harness/mutate.py" list "${MUTANT_DIRS[@]}"
		return
	fi
	# shellcheck source=harness/arch/arm64.sh
	. "$TOP/harness/arch/$ARCH.sh"
	mkdir -p "$CACHE"
	touch "$CACHE/.waitvar-cache"
	# One build at a time per cache; guests of earlier runs boot from copies.
	exec 9>"$CACHE/.build.lock"
	take_cache_lock 9
	kernel_ccache_env
	kernel_plan
	device_plan
	guest_plan
	new_run_dir
	echo "waitvar $COMMAND: arch $ARCH, tree $TREE_NAME, kernel config $CONFIG, logs in $RUN_DIR" >&2

	build_all
	# mutate rebuilds and re-stages in the cache all along: it keeps it.
	# Any other run boots from copies of its own, and frees the cache.
	if [ "$COMMAND" != mutate ]; then
		[ "$COMMAND" = build ] || snapshot_boot_files
		release_cache_lock 9
	fi
	# For --matrix: the cache is free for the next cell's background build.
	touch "$RUN_DIR/built"
	"cmd_$COMMAND"
}

main "$@"
