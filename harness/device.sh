# shellcheck shell=bash
# The device stage: /dev/waitvar as a module built against the kernel's O=
# dir (or, --in-tree, the series patch generated from driver/), and the
# guest programs: libwaitvar, waitvarctl and the suites, native and 32-bit.
# Sourced by run.sh after lib.sh and harness/arch/$ARCH.sh; device_plan
# runs after kernel_plan.
# shellcheck disable=SC2153 # TREE, CROSS...: globals of kernel.sh and the arch file

# device_plan: the paths of this run's device and programs (globals).
device_plan() {
	MOD_BUILD=$CACHE/build/$ARCH-$CONFIG$TREE_SUFFIX/driver
	USER_BUILD=$CACHE/build/$ARCH/userspace
	COMPAT_BUILD=$CACHE/build/$ARCH/userspace-compat
}

# Everything under driver/ that makes the module or the device patch.
driver_sources() {
	find "$TOP/driver" -type f \( -name '*.[ch]' -o -name Kbuild -o -name Kconfig \
		-o -name Makefile -o -name '*.rst' -o -name '*.sh' \) | LC_ALL=C sort
}

# What the generated "misc: add /dev/waitvar" patch is made from.
device_patch_inputs() {
	driver_sources
}

# add_device_patch TREE: generate the series' last patch from driver/ against
# TREE (the rest of the series applied), check it as the others are, apply it.
add_device_patch() {
	local tree=$1 out sources
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
	mapfile -t sources < <(sed -n 's@^+++ b/@@p' "$DEVICE_PATCH" | grep '\.[ch]$')
	(cd "$tree" && PATH=/usr/bin:$PATH scripts/kernel-doc -none -Werror "${sources[@]}")
}

build_module() {
	if [ "$IN_TREE" = 1 ]; then
		echo "built into the kernel (CONFIG_WAITVAR=y): no module"
		return 0
	fi
	# Kbuild trusts mtimes, and another checkout sharing this cache may have
	# built newer objects from other sources: start again when they differ.
	local key sources stamp=$MOD_BUILD/.sources
	mapfile -t sources < <(driver_sources)
	key="$CONFIG_HASH $(hash_files "${sources[@]}")"
	if ! stamp_matches "$stamp" "$key"; then
		rm -rf "$MOD_BUILD"
		mkdir -p "$MOD_BUILD"
		stamp_write "$stamp" "$key"
	fi
	# Kbuild writes objects next to the sources: build in a copy, not the repo.
	rsync -rl --checksum --delete --exclude='*.o' --exclude='*.ko' --exclude='*.mod*' \
		--exclude='.*.cmd' --exclude='Module.symvers' --exclude='modules.order' \
		"$TOP/driver/" "$MOD_BUILD/src/"
	kmake M="$MOD_BUILD/src" W=1 KCFLAGS=-Werror WAITVAR_TEST_HOOKS=y modules 2>&1 |
		tee "$MOD_BUILD/make.log"
	if grep -iq 'warning:' "$MOD_BUILD/make.log"; then
		echo "the module build printed warnings (W=1 must be clean)"
		return 1
	fi
	echo "built $MOD_BUILD/src/waitvar.ko"
}

# build_programs OUT CROSS USERSPACE_TARGET [STATIC=1]: userspace/'s target
# (all: libwaitvar and waitvarctl; lib: the library alone), then the test
# programs, which link that libwaitvar.
build_programs() {
	local out=$1 cross=$2 target=$3
	shift 3
	make -C "$TOP/userspace" O="$out" CROSS_COMPILE="$cross" -j"$JOBS" "$target"
	make -C "$TOP/tests/guest" O="$out" CROSS_COMPILE="$cross" "$@" \
		KSFT_DIR="$TREE/tools/testing/selftests" -j"$JOBS"
}

build_userspace() {
	# make trusts mtimes; another checkout sharing this cache may have built
	# newer files from other sources: start again when the sources differ.
	local key stamp=$USER_BUILD.sources
	# The kselftest harness comes from the tree: another tree, another build.
	key=$(hash_files "$TOP"/tests/guest/* "$TOP"/userspace/* "$TOP/driver/include/uapi/linux/waitvar.h" \
		"$TREE"/tools/testing/selftests/kselftest*.h)
	if ! stamp_matches "$stamp" "$key"; then
		rm -rf "$USER_BUILD" "$COMPAT_BUILD"
		mkdir -p "${USER_BUILD%/*}"
		stamp_write "$stamp" "$key"
	fi
	build_programs "$USER_BUILD" "$CROSS" all
	# Static: the 32-bit programs run on a rootfs with no 32-bit C library.
	[ -z "$COMPAT_CROSS" ] || build_programs "$COMPAT_BUILD" "$COMPAT_CROSS" lib STATIC=1
	echo "built $(find "$USER_BUILD/bin" -type f | wc -l) programs in $USER_BUILD/bin" \
		"$([ -z "$COMPAT_CROSS" ] || echo "and their 32-bit builds")"
}
