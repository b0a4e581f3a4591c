# shellcheck shell=bash
# The guest stage: the Debian rootfs image, the files staged for the guest's
# 9p share, QEMU, and the host's verdict on what the guest printed.
# Sourced by run.sh after lib.sh, harness/arch/$ARCH.sh, kernel.sh, device.sh.

# shellcheck disable=SC2034 # read by run.sh
GUEST_PACKAGES=(debootstrap qemu-user-static binfmt-support e2fsprogs)

# guest_plan: the paths of this run's image and staged files (globals).
guest_plan() {
	STAGE=$CACHE/build/$ARCH-$CONFIG$TREE_SUFFIX/stage
	[ "$IN_TREE" = 0 ] || STAGE=$CACHE/build/$ARCH-$CONFIG$TREE_SUFFIX-in-tree/stage
	local overlay
	mapfile -t overlay < <(find "$TOP/rootfs/overlay" -type f | LC_ALL=C sort)
	ROOTFS_PACKAGES=$(list_file "$TOP/rootfs/packages" | paste -sd, -)
	# The recipe's files and every argument it is given.
	ROOTFS_HASH=$(hash_text "$ARCH" "$DEB_ARCH" "$QEMU_USER_ARCH" "$ROOTFS_PACKAGES" \
		"$(hash_files "$TOP/rootfs/build-image.sh" "${overlay[@]}")")
	ROOTFS_IMAGE=$CACHE/rootfs/$ARCH-$ROOTFS_HASH.ext4
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
	"$TOP/rootfs/build-image.sh" "$DEB_ARCH" "$QEMU_USER_ARCH" "$mirror" "$ROOTFS_PACKAGES" "$ROOTFS_IMAGE"
	# Keep only the image of the current recipe.
	find "$CACHE/rootfs" -maxdepth 1 -name "$ARCH-*.ext4" ! -path "$ROOTFS_IMAGE" -delete
	echo "rootfs image $ROOTFS_IMAGE built"
}

# readme_block NAME: the fenced block after the "<!-- walkthrough:NAME" marker.
readme_block() {
	awk -v m="<!-- walkthrough:$1" '
		index($0, m) == 1 { armed = 1; next }
		armed && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }'
}

# What the guest sees at /mnt/waitvar (9p, read-only): programs, module,
# runner, and the plan: ./suites (one program a line, in order) and ./kunit/.
stage_guest_files() {
	local all=() selected name
	mkdir -p "$STAGE/bin"
	rsync -a --delete "$USER_BUILD/bin/" "$STAGE/bin/"
	cp "$TOP/harness/guest/poweroff" "$STAGE/bin/poweroff"
	cp "$TOP/harness/guest/waitvar-fuzz" "$STAGE/bin/waitvar-fuzz"
	cp "$TOP/harness/guest/runner.sh" "$STAGE/runner.sh"
	rm -f "$STAGE/waitvar.ko"
	[ "$IN_TREE" = 1 ] || cp "$MOD_BUILD/src/waitvar.ko" "$STAGE/waitvar.ko"
	# The README's walkthrough and what it prints, for waitvar_walkthrough_test.
	readme_block script <"$TOP/README.md" >"$STAGE/walkthrough.sh"
	readme_block output <"$TOP/README.md" >"$STAGE/walkthrough.out"
	if [ ! -s "$STAGE/walkthrough.sh" ] || [ ! -s "$STAGE/walkthrough.out" ]; then
		echo "README.md: no walkthrough:script or walkthrough:output block"
		return 1
	fi
	mapfile -t all < <(list_file "$TOP/tests/guest/suites")
	selected=("${all[@]}")
	[ ${#SUITES[@]} = 0 ] || selected=("${SUITES[@]}")
	printf '%s\n' "${selected[@]}" >"$STAGE/suites"
	# A 32-bit build of a suite runs as NAME-32, after all native ones.
	if [ "$COMPAT" = 1 ] && [ -n "$COMPAT_CROSS" ]; then
		for name in "${selected[@]}"; do
			cp "$COMPAT_BUILD/bin/$name" "$STAGE/bin/$name-32"
			echo "$name-32" >>"$STAGE/suites"
		done
	fi
	# KUnit suites built as modules (the debug config): the runner loads them.
	rm -rf "$STAGE/kunit"
	mkdir -p "$STAGE/kunit"
	[ "$KUNIT" = 0 ] || find "$KBUILD" -name '*_kunit.ko' -exec cp {} "$STAGE/kunit/" \;
	echo "staged $STAGE: $(wc -l <"$STAGE/suites") programs," \
		"$(find "$STAGE/kunit" -name '*.ko' | wc -l) KUnit modules"
}

count_suites() {
	wc -l <"$STAGE/suites"
}

# snapshot_boot_files: copies of the stage and the kernel image in the run's
# folder, taken under the cache's lock, for the guest to boot from and read:
# another run may rebuild and re-stage this cell as soon as the lock is
# free, and must not change them under this run's guest.  They go when the
# run ends.
snapshot_boot_files() {
	BOOT_DIR=$RUN_DIR/boot
	rm -rf "$BOOT_DIR"
	mkdir -p "$BOOT_DIR"
	trap 'rm -rf "$BOOT_DIR"' EXIT
	cp -a "$STAGE" "$BOOT_DIR/stage"
	cp "$KBUILD/$KIMAGE" "$BOOT_DIR/kernel"
	STAGE=$BOOT_DIR/stage
	BOOT_KERNEL=$BOOT_DIR/kernel
}

# boot_guest MODE: boot QEMU; the console goes to $RUN_DIR/console.log
# (or to the terminal for 'shell'); the guest writes into $RUN_DIR/guest.
# Sets QEMU_RC (124: host timeout).
boot_guest() {
	local mode=$1 nsuites host_limit append
	local out=$RUN_DIR/guest
	mkdir -p "$out"
	append="console=$CONSOLE root=/dev/vda rw rootfstype=ext4 panic=-1"
	append+=" init=/sbin/waitvar-init waitvar.mode=$mode waitvar.timeout=$TIMEOUT"
	[ -z "$KCMDLINE" ] || append+=" $KCMDLINE"
	local qemu=("$QEMU" "${QEMU_MACHINE[@]}" -no-reboot -nic none
		-kernel "${BOOT_KERNEL:-$KBUILD/$KIMAGE}"
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
	# Warnings and worse reach the console; the rest is in guest/dmesg.txt.
	append+=" loglevel=4"
	if [ "$mode" = run ]; then
		printf '%q ' "${GUEST_CMD[@]}" >"$out/cmd.sh"
		echo >>"$out/cmd.sh"
		nsuites=1
	else
		nsuites=$(count_suites)
	fi
	# TCG boots in seconds, a KASAN kernel in tens; leave room for both.
	host_limit=$((TIMEOUT * (nsuites + 1) + 180))
	QEMU_RC=0
	timeout -k 10 "$host_limit" "${qemu[@]}" -display none -monitor none \
		-serial "file:$RUN_DIR/console.log" -append "$append" </dev/null ||
		QEMU_RC=$?
	echo "$QEMU_RC" >"$RUN_DIR/qemu.rc"
	[ "$QEMU_RC" != 124 ] || echo "run.sh: guest did not finish within ${host_limit}s" >&2
	return 0
}

# Which test the console has reached, for the progress line.
progress_boot_test() {
	local last
	last=$(grep -a -oE '^(    )?(not )?ok [0-9]+ [^ ]+' "$RUN_DIR/console.log" 2>/dev/null | tail -n 1)
	echo "${last:-booting}"
}

# boot_step MODE: boot_guest as a line of the step list, animated on a
# terminal like a step (not a step: 'shell' needs the terminal).
boot_step() {
	local mode=$1 t0=$SECONDS
	STEP_NO=$((STEP_NO + 1))
	if [ -t 2 ] && [ "$VERBOSE" = 0 ]; then
		boot_guest "$mode" &
		show_progress $! "boot-$mode" /dev/null "$t0"
		wait $! || true
	else
		step_line "boot-$mode" ""
		boot_guest "$mode"
	fi
	# From the file: a background boot's variables die with its shell.
	if ! QEMU_RC=$(cat "$RUN_DIR/qemu.rc" 2>/dev/null); then
		echo "run.sh: the guest did not start; see $RUN_DIR" >&2
		exit "$EX_HARNESS"
	fi
	[ ! -t 2 ] || [ "$VERBOSE" = 1 ] || step_line "boot-$mode" ""
	printf 'done %4ss  qemu exit %s\n' $((SECONDS - t0)) "$QEMU_RC" >&2
}

# What ran, for the head of results.ktap: a CI system that takes one KTAP
# file per job can tell the matrix's cells apart by it.
cell_header() {
	local f names=()
	for f in "${FRAGMENTS[@]}"; do
		if [ "$f" = "$ARCH_FRAGMENT" ]; then
			names+=("arch-$ARCH")
		else
			f=${f##*/}
			names+=("${f%.config}")
		fi
	done
	echo "waitvar cell: arch $ARCH, tree $(tree_label), config $CONFIG" \
		"($(IFS=+; echo "${names[*]}")), device $([ "$IN_TREE" = 1 ] && echo built-in || echo module)"
}

# cell_rows FILE: the lines of a per-cell list (arch, tree, config and
# device, * for any, then the cell's own fields) that match this run's
# cell, without their first four fields.
cell_rows() {
	local device=module
	[ "$IN_TREE" = 0 ] || device=built-in
	list_file "$1" | awk -F'\t' -v OFS='\t' -v a="$ARCH" -v t="$TREE_NAME" \
		-v c="$CONFIG" -v d="$device" '
		function m(p, v) { return p == "*" || p == v }
		m($1, a) && m($2, t) && m($3, c) && m($4, d) { $1 = $2 = $3 = $4 = ""; print substr($0, 5) }'
}

# The names of the tests this cell skips by design (harness/expected-skips).
cell_expected_skips() {
	cell_rows "$TOP/harness/expected-skips" | cut -f1
}

# True unless the guest's log shows a kernel other than the one in $KBUILD:
# its banner must carry the UTS_VERSION (build number and time) this build
# wrote.  A stale image once booted an older kernel than the one built.
booted_kernel_is_built() {
	local want banner
	want=$(sed -n 's/^#define UTS_VERSION "\(.*\)"$/\1/p' \
		"$KBUILD/include/generated/utsversion.h" 2>/dev/null)
	banner=$(grep -a -m1 -o 'Linux version .*' "$RUN_DIR/guest/dmesg.txt" 2>/dev/null)
	if [ -n "$want" ] && [ -n "$banner" ] && [[ $banner != *"$want"* ]]; then
		echo "the guest ran another kernel than $KBUILD/$KIMAGE:"
		echo "  booted: $banner"
		echo "  built:  $want"
		return 1
	fi
}

verdict() {
	local args=(--console "$RUN_DIR/console.log" --ktap "$RUN_DIR/results.ktap")
	args+=(--header "$(cell_header)")
	cell_expected_skips >"$RUN_DIR/expected-skips"
	args+=(--expect-skips "$RUN_DIR/expected-skips")
	# The runner's plan: module load, each suite, each KUnit module, unload.
	args+=(--expect-plan $(($(count_suites) + $(find "$STAGE/kunit" -name '*.ko' | wc -l) + 2)))
	[ ! -f "$RUN_DIR/guest/dmesg.txt" ] || args+=(--dmesg "$RUN_DIR/guest/dmesg.txt")
	[ "$QEMU_RC" != 124 ] || args+=(--timed-out)
	local rc=0
	"$TOP/harness/ktap-verdict.sh" "${args[@]}" || rc=$?
	booted_kernel_is_built || [ "$rc" != 0 ] || rc=$EX_FAILED
	echo "logs: $RUN_DIR (console.log, results.ktap, guest/dmesg.txt, NN-step.log)"
	return "$rc"
}
