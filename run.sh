#!/usr/bin/env bash
# waitvar: build the patched kernel, the /dev/waitvar module and the tests,
# boot them in a QEMU guest and return the verdict.  ./run.sh --help
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${WAITVAR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/waitvar}

# Exit codes (also in usage()).
EX_FAILED=1 EX_TIMEOUT=2 EX_SPLAT=3 EX_HARNESS=4 EX_USAGE=64

usage() {
	cat <<EOF
Usage: ./run.sh [COMMAND] [OPTIONS] [-- CMD...]

Commands:
  (none)          build what is missing, boot the guest, run the test program
                  on the default kernel, print the summary
  test            everything the project tests, on the debug kernel
                  (lockdep, atomic-sleep checks, KASAN, kmemleak, KUnit)
  shell           boot to a root shell on the guest console, module loaded,
                  tools on PATH; 'poweroff' returns to the host
  run -- CMD...   boot, run CMD in the guest, return its output and status
  build           build everything, boot nothing
  clean [PART]    drop the cache, or one part of it:
                  kernel (patched tree and build dirs), source (unpacked
                  linux-source), rootfs, build (module, userspace), runs (logs)

Options:
  --arch ARCH       guest architecture (arm64; default arm64)
  --config NAME     kernel config: default or debug (default: default;
                    'test' always uses debug)
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
EOF
}

die_usage() {
	echo "run.sh: $*" >&2
	echo >&2
	usage >&2
	exit "$EX_USAGE"
}

# ---------------------------------------------------------------- options

COMMAND=main
ARCH=arm64
CONFIG=
JOBS=$(nproc)
TIMEOUT=300
SHARE=
VERBOSE=0
IN_TREE=0
CLEAN_PART=
GUEST_CMD=()

parse_args() {
	local cmd_seen=0
	while [ $# -gt 0 ]; do
		case $1 in
		test | shell | run | build | clean)
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
		-j) [ $# -ge 2 ] || die_usage "-j needs a value"; JOBS=$2; shift ;;
		-j*) JOBS=${1#-j} ;;
		--timeout) [ $# -ge 2 ] || die_usage "--timeout needs a value"; TIMEOUT=$2; shift ;;
		--timeout=*) TIMEOUT=${1#*=} ;;
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

	case $ARCH in
	arm64) ;;
	*) die_usage "unsupported --arch '$ARCH' (supported: arm64)" ;;
	esac
	[[ $JOBS =~ ^[1-9][0-9]*$ ]] || die_usage "-j needs a positive number, not '$JOBS'"
	[[ $TIMEOUT =~ ^[1-9][0-9]*$ ]] || die_usage "--timeout needs a positive number of seconds, not '$TIMEOUT'"
	if [ "$COMMAND" = test ]; then
		[ -z "$CONFIG" ] || [ "$CONFIG" = debug ] || die_usage "'test' runs on the debug kernel; drop --config $CONFIG"
		CONFIG=debug
	fi
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
	if [ "$COMMAND" != run ] && [ ${#GUEST_CMD[@]} -gt 0 ]; then
		die_usage "'-- CMD' is only for 'run'"
	fi
	if [ -n "$SHARE" ]; then
		[ -d "$SHARE" ] || die_usage "--share: '$SHARE' is not a directory"
		SHARE=$(cd "$SHARE" && pwd)
	fi
	case $CLEAN_PART in
	'' | kernel | source | rootfs | build | runs) ;;
	*) die_usage "clean: unknown part '$CLEAN_PART'" ;;
	esac
}

# ---------------------------------------------------------------- arch table

set_arch() {
	case $ARCH in
	arm64)
		KARCH=arm64
		CROSS=aarch64-linux-gnu-
		DEB_ARCH=arm64
		KIMAGE=arch/arm64/boot/Image
		QEMU="qemu-system-aarch64"
		QEMU_MACHINE=(-M virt -cpu cortex-a57 -accel "tcg,thread=multi" -smp 2 -m 512)
		CONSOLE=ttyAMA0
		# 32-bit userspace on the 64-bit kernel: the compat ioctl path.
		COMPAT_CROSS=arm-linux-gnueabihf-
		ARCH_PACKAGES=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
			gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)
		;;
	esac
}

# ---------------------------------------------------------------- steps
# Each step is a function run by 'step', its output in its own log file.
# Steps take their inputs from the globals set by plan_paths and make files.

STEP_NO=0
RUN_DIR=

new_run_dir() {
	local stamp
	stamp=$(date +%Y%m%d-%H%M%S)
	RUN_DIR=$CACHE/runs/$stamp-$COMMAND-$ARCH-$CONFIG
	mkdir -p "$RUN_DIR"
	ln -sfn "$RUN_DIR" "$CACHE/runs/latest"
}

fail_step() {
	local name=$1 log=$2
	echo "FAILED" >&2
	echo "run.sh: step '$name' failed; last lines of $log:" >&2
	tail -n 25 "$log" | sed 's/^/  | /' >&2
	echo "run.sh: full log: $log" >&2
	exit "$EX_HARNESS"
}

# step NAME FUNCTION [ARGS...]: run FUNCTION with errexit in force, log it,
# print one progress line, stop the run if it fails.
step() {
	local name=$1 log rc=0 t0=$SECONDS
	shift
	STEP_NO=$((STEP_NO + 1))
	log=$RUN_DIR/$(printf '%02d' "$STEP_NO")-$name.log
	printf '[%2d] %-16s ' "$STEP_NO" "$name" >&2
	# In the background, so that errexit stays on inside the step.
	if [ "$VERBOSE" = 1 ]; then
		echo >&2
		(set -o pipefail; ("$@") 2>&1 | tee "$log" >&2) &
	else
		("$@") >"$log" 2>&1 &
	fi
	wait $! || rc=$?
	[ $rc = 0 ] || fail_step "$name" "$log"
	printf 'ok %4ss  %s\n' $((SECONDS - t0)) "$(tail -n 1 "$log" | cut -c1-60)" >&2
}

hash_files() {
	# Content hash of the named files, order-sensitive, names included.
	local f
	for f in "$@"; do
		printf '%s\n' "${f#"$TOP"/}"
		cat "$f"
	done | sha256sum | cut -c1-16
}

series_patches() {
	# The patch files listed in kernel-patches/series, in order.
	local line
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%%#*}
		line=${line//[[:space:]]/}
		[ -z "$line" ] || printf '%s\n' "$TOP/kernel-patches/$line"
	done <"$TOP/kernel-patches/series"
}

config_fragments() {
	printf '%s\n' "$TOP/kernel-patches/base.config" "$TOP/kernel-patches/$ARCH.config"
	[ "$CONFIG" = default ] || printf '%s\n' "$TOP/kernel-patches/$CONFIG.config"
	[ "$IN_TREE" = 0 ] || printf '%s\n' "$TOP/kernel-patches/in-tree.config"
}

# What the generated "misc: add /dev/waitvar" patch is made from.
device_patch_inputs() {
	printf '%s\n' "$TOP/driver/make-in-tree-patch.sh" "$TOP/driver/waitvar.c" \
		"$TOP/driver/include/uapi/linux/waitvar.h" "$TOP/driver/waitvar.rst"
}

plan_paths() {
	SRC=$CACHE/src/linux-source-6.1
	TREE=$CACHE/kernel/tree
	KBUILD=$CACHE/kernel/build/$ARCH-$CONFIG
	MOD_BUILD=$CACHE/build/$ARCH-$CONFIG/driver
	USER_BUILD=$CACHE/build/$ARCH/userspace
	STAGE=$CACHE/build/$ARCH-$CONFIG/stage
	if [ "$IN_TREE" = 1 ]; then
		TREE=$CACHE/kernel/tree-in-tree
		KBUILD=$KBUILD-in-tree
		STAGE=$CACHE/build/$ARCH-$CONFIG-in-tree/stage
	fi

	mapfile -t PATCHES < <(series_patches)
	mapfile -t FRAGMENTS < <(config_fragments)
	local p
	for p in "${PATCHES[@]}" "${FRAGMENTS[@]}"; do
		[ -f "$p" ] || { echo "run.sh: missing file: $p" >&2; exit "$EX_HARNESS"; }
	done
	SERIES_HASH=$(hash_files "$TOP/kernel-patches/series" "${PATCHES[@]}")
	REPO_SERIES_HASH=$SERIES_HASH
	if [ "$IN_TREE" = 1 ]; then
		local inputs
		mapfile -t inputs < <(device_patch_inputs)
		SERIES_HASH=$(hash_files "$TOP/kernel-patches/series" "${PATCHES[@]}" "${inputs[@]}")
		DEVICE_PATCH=$CACHE/kernel/in-tree/$(printf '%04d' $((${#PATCHES[@]} + 1)))-misc-add-dev-waitvar.patch
	fi
	CONFIG_HASH=$(printf '%s %s\n' "$SERIES_HASH" "$(hash_files "${FRAGMENTS[@]}")" | sha256sum | cut -c1-16)
	local overlay
	mapfile -t overlay < <(find "$TOP/rootfs/overlay" -type f | LC_ALL=C sort)
	ROOTFS_HASH=$(printf '%s %s\n' "$ARCH" \
		"$(hash_files "$TOP/rootfs/build-image.sh" "$TOP/rootfs/packages" "${overlay[@]}")" |
		sha256sum | cut -c1-16)
	ROOTFS_IMAGE=$CACHE/rootfs/$ARCH-$ROOTFS_HASH.ext4
}

kmake() {
	make -C "$TREE" O="$KBUILD" ARCH="$KARCH" CROSS_COMPILE="$CROSS" \
		CC="ccache ${CROSS}gcc" -j"$JOBS" "$@"
}

# Paths are relative to the cache in ccache's hash, so hits survive a move.
export CCACHE_BASEDIR=$CACHE
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}

ensure_packages() {
	local pkgs=(linux-source-6.1 "${ARCH_PACKAGES[@]}" debootstrap
		qemu-user-static binfmt-support bc flex bison libssl-dev libelf-dev
		ccache e2fsprogs make gcc rsync patch kmod cpio xz-utils shellcheck
		python3-ply python3-git)
	local missing=() p
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "all ${#pkgs[@]} packages present"
		return 0
	fi
	echo "missing: ${missing[*]}"
	if [ "$(id -u)" != 0 ]; then
		echo "run.sh needs root to install: apt-get install ${missing[*]}" >&2
		return 1
	fi
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
	echo "installed ${#missing[@]} packages"
}

ensure_kernel_source() {
	local tarball=/usr/src/linux-source-6.1.tar.xz version
	version=$(dpkg-query -W -f='${Version}' linux-source-6.1)
	if [ -f "$SRC/.waitvar-source" ] && [ "$(cat "$SRC/.waitvar-source")" = "$version" ]; then
		echo "linux-source-6.1 $version unpacked"
		return 0
	fi
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xJf "$tarball" -C "$SRC.tmp"
	mv "$SRC.tmp/linux-source-6.1" "$SRC"
	rmdir "$SRC.tmp"
	echo "$version" >"$SRC/.waitvar-source"
	echo "unpacked linux-source-6.1 $version"
}

apply_series() {
	local stamp=$TREE/.waitvar-series new=$CACHE/kernel/tree.new p
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$SERIES_HASH $(cat "$SRC/.waitvar-source")" ]; then
		echo "series $SERIES_HASH applied (${#PATCHES[@]} patches$([ "$IN_TREE" = 0 ] || echo ' + /dev/waitvar'))"
		return 0
	fi
	rm -rf "$new"
	mkdir -p "${new%/*}"
	cp -a "$SRC" "$new"
	for p in "${PATCHES[@]}"; do
		echo "applying ${p##*/}"
		patch -d "$new" -p1 --batch --forward --no-backup-if-mismatch <"$p"
	done
	[ "$IN_TREE" = 0 ] || add_device_patch "$new"
	echo "$SERIES_HASH $(cat "$SRC/.waitvar-source")" >"$new/.waitvar-series"
	if [ -d "$TREE" ]; then
		# Copy only files whose content changed, stamping them with a new
		# mtime, so the O= build dirs rebuild exactly what the series touched.
		rsync -r --links --perms --checksum --delete "$new/" "$TREE/"
		rm -rf "$new"
	else
		mv "$new" "$TREE"
	fi
	echo "series $SERIES_HASH applied (${#PATCHES[@]} patches$([ "$IN_TREE" = 0 ] || echo " + ${DEVICE_PATCH##*/}"))"
}

# add_device_patch TREE: generate the series' last patch from driver/ against
# TREE (the rest of the series applied), check it as the others are, apply it.
add_device_patch() {
	local tree=$1 out
	mkdir -p "${DEVICE_PATCH%/*}"
	"$TOP/driver/make-in-tree-patch.sh" "$tree" "$DEVICE_PATCH"
	out=$(cd "$tree" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict "$DEVICE_PATCH" 2>&1) || true
	printf '%s\n' "$out" | tail -n 3
	if ! printf '%s\n' "$out" | grep -q '^total: 0 errors, 0 warnings, 0 checks'; then
		printf '%s\n' "$out"
		echo "the generated ${DEVICE_PATCH##*/} is not checkpatch --strict clean"
		return 1
	fi
	echo "applying ${DEVICE_PATCH##*/} (generated)"
	patch -d "$tree" -p1 --batch --forward --no-backup-if-mismatch <"$DEVICE_PATCH"
	(cd "$tree" && PATH=/usr/bin:$PATH scripts/kernel-doc -none -Werror \
		drivers/misc/waitvar.c include/uapi/linux/waitvar.h)
}

configure_kernel() {
	local stamp=$KBUILD/.waitvar-config line name missing=()
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$CONFIG_HASH" ] && [ -f "$KBUILD/.config" ]; then
		echo "config $CONFIG_HASH up to date"
		return 0
	fi
	mkdir -p "$KBUILD"
	rm -f "$stamp" "$KBUILD/.waitvar-built"
	kmake allnoconfig
	"$TREE/scripts/kconfig/merge_config.sh" -m -O "$KBUILD" "$KBUILD/.config" "${FRAGMENTS[@]}"
	kmake olddefconfig
	# olddefconfig drops what Kconfig cannot satisfy: check every request.
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF "$line" "$KBUILD/.config" || missing+=("$line")
			;;
		"# CONFIG_"*" is not set")
			name=${line#\# }
			name=${name%% *}
			! grep -q "^$name=" "$KBUILD/.config" || missing+=("$line")
			;;
		esac
	done < <(cat "${FRAGMENTS[@]}")
	if [ ${#missing[@]} -gt 0 ]; then
		echo "config options requested by the fragments but not set (unmet dependencies?):"
		printf '  %s\n' "${missing[@]}"
		return 1
	fi
	echo "$CONFIG_HASH" >"$stamp"
	echo "config $CONFIG_HASH: all fragment options set"
}

build_kernel() {
	local stamp=$KBUILD/.waitvar-built
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$CONFIG_HASH" ] && [ -f "$KBUILD/$KIMAGE" ]; then
		echo "kernel $CONFIG_HASH up to date"
		return 0
	fi
	kmake Image modules
	echo "$CONFIG_HASH" >"$stamp"
	echo "built $KBUILD/$KIMAGE"
}

build_module() {
	if [ "$IN_TREE" = 1 ]; then
		echo "built into the kernel (CONFIG_WAITVAR=y): no module"
		return 0
	fi
	# Kbuild trusts mtimes, and another checkout sharing this cache may have
	# built newer objects from other sources: start again when they differ.
	local key stamp=$MOD_BUILD/.sources
	key="$CONFIG_HASH $(hash_files "$TOP"/driver/Kbuild "$TOP"/driver/Makefile \
		"$TOP"/driver/*.c "$TOP"/driver/include/uapi/linux/waitvar.h)"
	if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$key" ]; then
		rm -rf "$MOD_BUILD"
		mkdir -p "$MOD_BUILD"
		echo "$key" >"$stamp"
	fi
	# Kbuild writes objects next to the sources: build in a copy, not the repo.
	rsync -rl --checksum --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' \
		--exclude='.*.cmd' --exclude='Module.symvers' --exclude='modules.order' \
		"$TOP/driver/" "$MOD_BUILD/src/"
	kmake M="$MOD_BUILD/src" W=1 KCFLAGS=-Werror modules 2>&1 | tee "$MOD_BUILD/make.log"
	if grep -iq 'warning:' "$MOD_BUILD/make.log"; then
		echo "the module build printed warnings (W=1 must be clean)"
		return 1
	fi
	echo "built $MOD_BUILD/src/waitvar.ko"
}

build_userspace() {
	# make trusts mtimes; another checkout sharing this cache may have built
	# newer files from other sources: start again when the sources differ.
	local key stamp=$USER_BUILD.sources
	key=$(hash_files "$TOP"/tests/guest/* "$TOP"/userspace/* "$TOP/driver/include/uapi/linux/waitvar.h")
	if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$key" ]; then
		rm -rf "$USER_BUILD" "$USER_BUILD-compat"
		mkdir -p "${USER_BUILD%/*}"
		echo "$key" >"$stamp"
	fi
	# libwaitvar and waitvarctl, then the test programs (they link the library).
	make -C "$TOP/userspace" O="$USER_BUILD" CROSS_COMPILE="$CROSS" -j"$JOBS"
	make -C "$TOP/tests/guest" O="$USER_BUILD" CROSS_COMPILE="$CROSS" \
		KSFT_DIR="$TREE/tools/testing/selftests" -j"$JOBS"
	[ -z "$COMPAT_CROSS" ] ||
		make -C "$TOP/tests/guest" O="$USER_BUILD-compat" CROSS_COMPILE="$COMPAT_CROSS" \
			STATIC=1 KSFT_DIR="$TREE/tools/testing/selftests" -j"$JOBS"
	echo "built $(find "$USER_BUILD/bin" -type f | wc -l) programs in $USER_BUILD/bin" \
		"$([ -z "$COMPAT_CROSS" ] || echo "and their 32-bit builds")"
}

debian_mirror() {
	# The first Debian archive apt already uses for the release bookworm.
	local f
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++;
			if ($2 ~ /^\[/) i++;
			if ($(i + 1) == "bookworm") { print $i; exit } }' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk 'BEGIN { RS = ""; FS = "\n" }
			{ types = uris = suites = "";
			  for (i = 1; i <= NF; i++) {
				if ($i ~ /^Types:/) types = $i;
				if ($i ~ /^URIs:/) uris = $i;
				if ($i ~ /^Suites:/) suites = $i }
			  if (types ~ /[ \t]deb([ \t]|$)/ && suites ~ /[ \t]bookworm([ \t]|$)/) {
				split(uris, u, /[ \t]+/); print u[2]; exit } }' "$f"
	done
}

ensure_rootfs() {
	local mirror
	if [ -f "$ROOTFS_IMAGE" ]; then
		echo "rootfs image $ROOTFS_IMAGE present"
		return 0
	fi
	mirror=$(debian_mirror | head -n 1)
	if [ -z "$mirror" ]; then
		echo "no 'bookworm' Debian archive in /etc/apt/sources.list{,.d}: cannot debootstrap" >&2
		return 1
	fi
	echo "mirror (from apt sources): $mirror"
	mkdir -p "$CACHE/rootfs"
	"$TOP/rootfs/build-image.sh" "$DEB_ARCH" "$mirror" "$ROOTFS_IMAGE"
	# Keep only the image of the current recipe.
	find "$CACHE/rootfs" -maxdepth 1 -name "$ARCH-*.ext4" ! -path "$ROOTFS_IMAGE" -delete
	echo "rootfs image $ROOTFS_IMAGE built"
}

stage_guest_files() {
	# What the guest sees at /mnt/waitvar (9p, read-only).
	mkdir -p "$STAGE/bin"
	rsync -a --delete "$USER_BUILD/bin/" "$STAGE/bin/"
	cp "$TOP/rootfs/guest/poweroff" "$STAGE/bin/poweroff"
	cp "$TOP/rootfs/guest/runner.sh" "$STAGE/runner.sh"
	rm -f "$STAGE/waitvar.ko"
	[ "$IN_TREE" = 1 ] || cp "$MOD_BUILD/src/waitvar.ko" "$STAGE/waitvar.ko"
	# The README's walkthrough and what it prints, for waitvar_walkthrough_test.
	readme_block script <"$TOP/README.md" >"$STAGE/walkthrough.sh"
	readme_block output <"$TOP/README.md" >"$STAGE/walkthrough.out"
	if [ ! -s "$STAGE/walkthrough.sh" ] || [ ! -s "$STAGE/walkthrough.out" ]; then
		echo "README.md: no walkthrough:script or walkthrough:output block"
		return 1
	fi
	# Each suite runs as a native program, then as a 32-bit one named NAME-32.
	grep -v '^[[:space:]]*\(#\|$\)' "$TOP/tests/guest/suites" >"$STAGE/suites"
	if [ -n "$COMPAT_CROSS" ]; then
		local name
		rm -f "$STAGE/suites.compat"
		while IFS= read -r name; do
			cp "$USER_BUILD-compat/bin/$name" "$STAGE/bin/$name-32"
			echo "$name-32" >>"$STAGE/suites.compat"
		done <"$STAGE/suites"
		cat "$STAGE/suites.compat" >>"$STAGE/suites"
		rm -f "$STAGE/suites.compat"
	fi
	# KUnit suites built as modules (the debug config): the runner loads them.
	rm -rf "$STAGE/kunit"
	mkdir -p "$STAGE/kunit"
	find "$KBUILD" -name '*_kunit.ko' -exec cp {} "$STAGE/kunit/" \;
	echo "staged $STAGE"
}

# readme_block NAME: the fenced block after the "<!-- walkthrough:NAME" marker.
readme_block() {
	awk -v m="<!-- walkthrough:$1" '
		index($0, m) == 1 { armed = 1; next }
		armed && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }'
}

count_suites() {
	grep -cv '^[[:space:]]*\(#\|$\)' "$STAGE/suites"
}

check_series() {
	local stamp=$CACHE/kernel/series-check.ok key
	key="$REPO_SERIES_HASH $(hash_files "$TOP/kernel-patches/check-series.sh") $(cat "$SRC/.waitvar-source")"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
		cat "$CACHE/kernel/series-check.tap"
		echo "series $REPO_SERIES_HASH checked before: applies, checkpatch --strict clean"
		return 0
	fi
	rm -f "$stamp"
	mkdir -p "$CACHE/kernel"
	"$TOP/kernel-patches/check-series.sh" "$SRC" | tee "$CACHE/kernel/series-check.tap"
	echo "$key" >"$stamp"
	echo "series $REPO_SERIES_HASH: applies, checkpatch --strict clean"
}

# Each patch must build on its own (bisectable) and add no W=1 warning; the
# check is redone only when the series or the config changes.
build_each_patch() {
	local dir=$CACHE/kernel/build/$ARCH-each-patch
	local stamp=$dir.ok key
	key="$CONFIG_HASH $(hash_files "$TOP/kernel-patches/check-series.sh")"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
		echo "each patch built on its own for config $CONFIG_HASH"
		return 0
	fi
	rm -rf "$stamp" "$dir"
	ARCH=$KARCH CROSS_COMPILE=$CROSS CC="ccache ${CROSS}gcc" \
		"$TOP/kernel-patches/check-series.sh" "$SRC" --build "$KBUILD/.config" "$dir"
	rm -rf "$dir"
	echo "$key" >"$stamp"
	echo "each patch built on its own for config $CONFIG_HASH"
}

host_checks() {
	"$TOP/tests/host/test-ktap-verdict.sh"
	"$TOP/tests/host/check-shell.sh"
}

# ---------------------------------------------------------------- guest

# boot_guest MODE: boot QEMU; the console goes to $RUN_DIR/console.log
# (or to the terminal for 'shell'); the guest writes into $RUN_DIR/guest.
# Sets QEMU_RC (124: host timeout).
boot_guest() {
	local mode=$1 nsuites host_limit append
	local out=$RUN_DIR/guest
	mkdir -p "$out"
	append="console=$CONSOLE root=/dev/vda rw rootfstype=ext4 panic=-1"
	append+=" init=/sbin/waitvar-init waitvar.mode=$mode waitvar.timeout=$TIMEOUT"
	local qemu=("$QEMU" "${QEMU_MACHINE[@]}" -no-reboot -nic none
		-kernel "$KBUILD/$KIMAGE"
		-drive "file=$ROOTFS_IMAGE,format=raw,if=virtio,snapshot=on"
		-virtfs "local,path=$STAGE,mount_tag=waitvar,security_model=none,readonly=on"
		-virtfs "local,path=$out,mount_tag=waitvar-out,security_model=none")
	[ -z "$SHARE" ] || qemu+=(-virtfs "local,path=$SHARE,mount_tag=waitvar-share,security_model=none,readonly=on")

	if [ "$mode" = shell ]; then
		append+=" quiet"
		echo "run.sh: booting a shell; 'poweroff' (or Ctrl-A X) returns to the host"
		QEMU_RC=0
		"${qemu[@]}" -nographic -append "$append" || QEMU_RC=$?
		return 0
	fi
	if [ "$mode" = run ]; then
		printf '%q ' "${GUEST_CMD[@]}" >"$out/cmd.sh"
		echo >>"$out/cmd.sh"
		append+=" loglevel=4"
		nsuites=1
	else
		# Warnings and worse reach the console; the rest is in guest/dmesg.txt.
		append+=" loglevel=4"
		nsuites=$(count_suites)
	fi
	# TCG boots in seconds, a KASAN kernel in tens; leave room for both.
	host_limit=$((TIMEOUT * (nsuites + 1) + 180))
	QEMU_RC=0
	timeout -k 10 "$host_limit" "${qemu[@]}" -display none -monitor none \
		-serial "file:$RUN_DIR/console.log" -append "$append" </dev/null ||
		QEMU_RC=$?
	[ "$QEMU_RC" != 124 ] || echo "run.sh: guest did not finish within ${host_limit}s" >&2
	return 0
}

verdict() {
	local args=(--console "$RUN_DIR/console.log" --ktap "$RUN_DIR/results.ktap")
	# The runner's plan: module load, each suite, each KUnit module, unload.
	args+=(--expect-plan $(($(count_suites) + $(find "$STAGE/kunit" -name '*.ko' | wc -l) + 2)))
	[ ! -f "$RUN_DIR/guest/dmesg.txt" ] || args+=(--dmesg "$RUN_DIR/guest/dmesg.txt")
	[ "$QEMU_RC" != 124 ] || args+=(--timed-out)
	local rc=0
	"$TOP/tests/host/ktap-verdict.sh" "${args[@]}" || rc=$?
	echo "logs: $RUN_DIR (console.log, results.ktap, guest/dmesg.txt, NN-step.log)"
	return $rc
}

# ---------------------------------------------------------------- commands

build_all() {
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

boot_and_judge() {
	local mode=$1 t0=$SECONDS rc=0
	printf '[%2d] %-16s ' $((STEP_NO + 1)) "boot-$mode" >&2
	boot_guest "$mode"
	printf 'done %4ss  qemu exit %s\n' $((SECONDS - t0)) "$QEMU_RC" >&2
	verdict || rc=$?
	return $rc
}

cmd_run() {
	local rc=0 out=$RUN_DIR/guest t0=$SECONDS
	printf '[%2d] %-16s ' $((STEP_NO + 1)) boot-run >&2
	boot_guest run
	printf 'done %4ss  qemu exit %s\n' $((SECONDS - t0)) "$QEMU_RC" >&2
	[ ! -f "$out/cmd.stdout" ] || cat "$out/cmd.stdout"
	[ ! -f "$out/cmd.stderr" ] || cat "$out/cmd.stderr" >&2
	local args=(--splats-only --console "$RUN_DIR/console.log")
	[ ! -f "$out/dmesg.txt" ] || args+=(--dmesg "$out/dmesg.txt")
	"$TOP/tests/host/ktap-verdict.sh" "${args[@]}" || return $?
	if [ "$QEMU_RC" = 124 ]; then
		echo "run.sh: guest timed out; console: $RUN_DIR/console.log" >&2
		return "$EX_TIMEOUT"
	fi
	if [ ! -f "$out/cmd.status" ]; then
		echo "run.sh: the guest ended without the command's status; console: $RUN_DIR/console.log" >&2
		return "$EX_HARNESS"
	fi
	rc=$(cat "$out/cmd.status")
	return "$rc"
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
	set_arch
	mkdir -p "$CACHE"
	touch "$CACHE/.waitvar-cache"
	plan_paths
	new_run_dir
	echo "waitvar $COMMAND: arch $ARCH, kernel config $CONFIG, logs in $RUN_DIR" >&2

	# One build at a time per cache; guests of earlier runs may still be up.
	exec 9>"$CACHE/.build.lock"
	flock -w 3600 9 || { echo "run.sh: another run.sh holds $CACHE/.build.lock" >&2; exit "$EX_HARNESS"; }
	step packages ensure_packages
	[ "$COMMAND" != test ] || step host-checks host_checks
	build_all
	flock -u 9
	case $COMMAND in
	build) echo "built: $KBUILD/$KIMAGE, $STAGE" ;;
	main | test) boot_and_judge test ;;
	shell) boot_guest shell ;;
	run) cmd_run ;;
	esac
}

main "$@"
