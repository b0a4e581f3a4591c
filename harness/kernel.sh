# shellcheck shell=bash
# The kernel stage: Debian's linux-source unpacked once, the series checked
# and applied to a copy, configured from fragments and built out of tree.
# Sourced by run.sh after lib.sh, harness/arch/$ARCH.sh and device.sh.

KERNEL_TREE=6.1
# shellcheck disable=SC2034 # read by run.sh
KERNEL_PACKAGES=("linux-source-$KERNEL_TREE" bc flex bison libssl-dev libelf-dev
	ccache make gcc rsync patch kmod cpio xz-utils python3-ply python3-git)

# The patch files of kernel-patches/series, in order.
series_patches() {
	list_file "$TOP/kernel-patches/series" | sed "s|^|$TOP/kernel-patches/|"
}

# The config fragments merged onto allnoconfig, in order; the arch's own
# options (ARCH_KCONFIG) are written to a fragment of the cache's.
config_fragments() {
	printf '%s\n' "$TOP/harness/kconfig/base.config" "$ARCH_FRAGMENT"
	[ "$CONFIG" = default ] || printf '%s\n' "$TOP/harness/kconfig/$CONFIG.config"
	[ "$IN_TREE" = 0 ] || printf '%s\n' "$TOP/harness/kconfig/in-tree.config"
}

# kernel_plan: the paths and keys of this run's kernel (globals).
kernel_plan() {
	SRC=$CACHE/src/linux-source-$KERNEL_TREE
	TREE=$CACHE/kernel/tree
	KBUILD=$CACHE/kernel/build/$ARCH-$CONFIG
	if [ "$IN_TREE" = 1 ]; then
		TREE=$CACHE/kernel/tree-in-tree
		KBUILD=$KBUILD-in-tree
	fi
	# Named by its content: another checkout sharing the cache never
	# changes a fragment this run has planned with.
	ARCH_FRAGMENT=$CACHE/kernel/arch-$ARCH-$(hash_text "${ARCH_KCONFIG[@]}").config
	if [ ! -f "$ARCH_FRAGMENT" ]; then
		mkdir -p "$CACHE/kernel"
		printf '%s\n' "${ARCH_KCONFIG[@]}" >"$ARCH_FRAGMENT.$$"
		mv "$ARCH_FRAGMENT.$$" "$ARCH_FRAGMENT"
	fi

	mapfile -t PATCHES < <(series_patches)
	mapfile -t FRAGMENTS < <(config_fragments)
	local p
	for p in "${PATCHES[@]}" "${FRAGMENTS[@]}"; do
		[ -f "$p" ] || { echo "run.sh: missing file: $p" >&2; exit "$EX_HARNESS"; }
	done
	REPO_SERIES_HASH=$(hash_files "$TOP/kernel-patches/series" "${PATCHES[@]}")
	SERIES_HASH=$REPO_SERIES_HASH
	if [ "$IN_TREE" = 1 ]; then
		local inputs
		mapfile -t inputs < <(device_patch_inputs)
		SERIES_HASH=$(hash_files "$TOP/kernel-patches/series" "${PATCHES[@]}" "${inputs[@]}")
		DEVICE_PATCH=$CACHE/kernel/in-tree/$(printf '%04d' $((${#PATCHES[@]} + 1)))-misc-add-dev-waitvar.patch
	fi
	CONFIG_HASH=$(hash_text "$SERIES_HASH" "$(cat "${FRAGMENTS[@]}")")
}

kmake() {
	make -C "$TREE" O="$KBUILD" ARCH="$KARCH" CROSS_COMPILE="$CROSS" \
		CC="ccache ${CROSS}gcc" -j"$JOBS" "$@"
}

# Paths are relative to the cache in ccache's hash, so hits survive a move.
kernel_ccache_env() {
	export CCACHE_BASEDIR=$CACHE
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
}

ensure_kernel_source() {
	local tarball=/usr/src/linux-source-$KERNEL_TREE.tar.xz version
	version=$(dpkg-query -W -f='${Version}' "linux-source-$KERNEL_TREE")
	if stamp_matches "$SRC/.waitvar-source" "$version"; then
		echo "linux-source-$KERNEL_TREE $version unpacked"
		return 0
	fi
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xJf "$tarball" -C "$SRC.tmp"
	mv "$SRC.tmp/linux-source-$KERNEL_TREE" "$SRC"
	rmdir "$SRC.tmp"
	stamp_write "$SRC/.waitvar-source" "$version"
	echo "unpacked linux-source-$KERNEL_TREE $version"
}

# Each patch applies to a pristine tree and is checkpatch --strict and
# kernel-doc clean; redone only when the series or the checker changes.
check_series() {
	local stamp=$CACHE/kernel/series-check.ok key
	key="$REPO_SERIES_HASH $(hash_files "$TOP/kernel-patches/check-series.sh" "$TOP/harness/lib.sh") $(cat "$SRC/.waitvar-source")"
	if stamp_matches "$stamp" "$key"; then
		cat "$CACHE/kernel/series-check.tap"
		echo "series $REPO_SERIES_HASH checked before: applies, checkpatch --strict clean"
		return 0
	fi
	rm -f "$stamp"
	"$TOP/kernel-patches/check-series.sh" "$SRC" | tee "$CACHE/kernel/series-check.tap"
	stamp_write "$stamp" "$key"
	echo "series $REPO_SERIES_HASH: applies, checkpatch --strict clean"
}

progress_check_series() {
	echo "$(grep -c '^\(not \)\?ok ' "$1") of ${#PATCHES[@]} patches checked"
}

apply_series() {
	local stamp=$TREE/.waitvar-series new=$CACHE/kernel/tree.new p key
	key="$SERIES_HASH $(cat "$SRC/.waitvar-source")"
	if stamp_matches "$stamp" "$key"; then
		echo "series $SERIES_HASH applied (${#PATCHES[@]} patches$([ "$IN_TREE" = 0 ] || echo ' + /dev/waitvar'))"
		return 0
	fi
	rm -rf "$new"
	cp -a "$SRC" "$new"
	for p in "${PATCHES[@]}"; do
		echo "applying ${p##*/}"
		patch -d "$new" -p1 --batch --forward --no-backup-if-mismatch <"$p"
	done
	[ "$IN_TREE" = 0 ] || add_device_patch "$new"
	stamp_write "$new/.waitvar-series" "$key"
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

configure_kernel() {
	local stamp=$KBUILD/.waitvar-config line name missing=()
	if stamp_matches "$stamp" "$CONFIG_HASH" && [ -f "$KBUILD/.config" ]; then
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
	stamp_write "$stamp" "$CONFIG_HASH"
	echo "config $CONFIG_HASH: all fragment options set"
}

build_kernel() {
	local stamp=$KBUILD/.waitvar-built
	if stamp_matches "$stamp" "$CONFIG_HASH" && [ -f "$KBUILD/$KIMAGE" ]; then
		echo "kernel $CONFIG_HASH up to date"
		return 0
	fi
	kmake "$KIMAGE_TARGET" modules
	# What a build of this config makes: the next build's progress measure.
	find "$KBUILD" -name '*.o' | wc -l >"$KBUILD/.waitvar-objects"
	stamp_write "$stamp" "$CONFIG_HASH"
	echo "built $KBUILD/$KIMAGE"
}

# Objects in the build dir against the count the last full build left.
progress_build_kernel() {
	local now last
	now=$(find "$KBUILD" -name '*.o' 2>/dev/null | wc -l)
	if [ -f "$KBUILD/.waitvar-objects" ]; then
		last=$(cat "$KBUILD/.waitvar-objects")
		[ "$last" -gt 0 ] || last=1
		[ "$now" -le "$last" ] || now=$last
		echo "$now of ~$last objects ($((100 * now / last))%)"
	else
		echo "$now objects built (first build of this config)"
	fi
}

# Each patch must build on its own (bisectable) and add no W=1 warning; the
# check is redone only when the series or the config changes.
build_each_patch() {
	local dir=$CACHE/kernel/build/$ARCH-each-patch
	local stamp=$dir.ok key
	key="$CONFIG_HASH $(hash_files "$TOP/kernel-patches/check-series.sh" "$TOP/harness/lib.sh")"
	if stamp_matches "$stamp" "$key"; then
		echo "each patch built on its own for config $CONFIG_HASH"
		return 0
	fi
	rm -rf "$stamp" "$dir"
	ARCH=$KARCH CROSS_COMPILE=$CROSS CC="ccache ${CROSS}gcc" \
		"$TOP/kernel-patches/check-series.sh" "$SRC" --build "$KBUILD/.config" "$dir"
	rm -rf "$dir"
	stamp_write "$stamp" "$key"
	echo "each patch built on its own for config $CONFIG_HASH"
}

progress_build_each_patch() {
	progress_check_series "$1"
}
