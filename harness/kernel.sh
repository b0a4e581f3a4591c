# shellcheck shell=bash
# The kernel stage: Debian's linux-source unpacked once, the series checked
# and applied to a copy, configured from fragments and built out of tree.
# Sourced by run.sh after lib.sh, harness/arch/$ARCH.sh and device.sh.

# shellcheck disable=SC2034 # read by run.sh (with the tree's package)
KERNEL_PACKAGES=(bc flex bison libssl-dev libelf-dev
	ccache make gcc rsync patch kmod cpio xz-utils python3-ply python3-git)

# tree_plan: the kernel tree --tree names (globals).  A name in
# harness/trees is a Debian linux-source package, unpacked once into the
# cache; a path is the user's tree, copied before the series is applied.
# TREE_SUFFIX tells the cache's trees, build dirs and logs apart (none for
# 6.1, the default, whose cache paths predate --tree).
tree_plan() {
	local line
	line=$(tree_entry "$TOP/harness/trees" "$TREE_ARG")
	TREE_NAME=$TREE_ARG TREE_PACKAGE='' TREE_TESTED=''
	if [ -n "$line" ]; then
		TREE_PACKAGE=$(cut -f2 <<<"$line")
		TREE_TESTED=$(cut -f3 <<<"$line")
		SRC=$CACHE/src/$TREE_PACKAGE
		TREE_SUFFIX=-$TREE_NAME
		[ "$TREE_NAME" != 6.1 ] || TREE_SUFFIX=
	else
		SRC=$TREE_ARG
		TREE_SUFFIX=-tree-$(hash_text "$TREE_ARG" | cut -c1-8)
	fi
}

# What identifies the tree's content: the package version, or for a tree
# of the user's own, its git commit, uncommitted changes and untracked
# files (else its version and newest file), so that a changed tree is
# applied to, configured and built again.
source_key() {
	if [ -n "$TREE_PACKAGE" ]; then
		cat "$SRC/.waitvar-source"
	elif [ "$(git -C "$SRC" rev-parse --show-toplevel 2>/dev/null)" = "$SRC" ]; then
		echo "$SRC $(git -C "$SRC" rev-parse HEAD) $({
			git -C "$SRC" diff HEAD --binary
			git -C "$SRC" ls-files -o --exclude-standard -z | (cd "$SRC" && xargs -0 -r sha256sum)
		} | sha256sum | cut -c1-16)"
	else
		echo "$SRC $(make -s -C "$SRC" kernelversion) $(find "$SRC" -type f -printf '%T@\n' | sort -n | tail -n 1)"
	fi
}

# What --tree names, for messages and the results' header.
tree_label() {
	if [ -n "$TREE_PACKAGE" ]; then
		echo "$TREE_NAME ($TREE_PACKAGE $(cat "$SRC/.waitvar-source" 2>/dev/null || echo '?'))"
	else
		echo "$SRC ($(make -s -C "$SRC" kernelversion 2>/dev/null || echo '?'))"
	fi
}

# The patch files of kernel-patches/series for this run's tree, in order.
series_patches() {
	series_for "$TOP/kernel-patches/series" "$TREE_NAME" | sed "s|^|$TOP/kernel-patches/|"
}

# config_names_fragments NAME: the fragments config NAME merges (configs).
config_names_fragments() {
	list_file "$TOP/harness/kconfig/configs" | awk -v c="$1" '$1 == c { for (i = 2; i <= NF; i++) print $i }'
}

# The config fragments merged onto allnoconfig, in order; the arch's own
# options (ARCH_KCONFIG) are written to a fragment of the cache's.
config_fragments() {
	local f
	printf '%s\n' "$TOP/harness/kconfig/base.config" "$ARCH_FRAGMENT"
	for f in $(config_names_fragments "$CONFIG"); do
		printf '%s\n' "$TOP/harness/kconfig/$f.config"
	done
	[ "$IN_TREE" = 0 ] || printf '%s\n' "$TOP/harness/kconfig/in-tree.config"
}

# kernel_plan: the paths and keys of this run's kernel (globals).
kernel_plan() {
	tree_plan
	TREE=$CACHE/kernel/tree$TREE_SUFFIX
	KBUILD=$CACHE/kernel/build/$ARCH-$CONFIG$TREE_SUFFIX
	if [ "$IN_TREE" = 1 ]; then
		TREE=$CACHE/kernel/tree$TREE_SUFFIX-in-tree
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
		DEVICE_PATCH=$CACHE/kernel/in-tree$TREE_SUFFIX/$(printf '%04d' $((${#PATCHES[@]} + 1)))-misc-add-dev-waitvar.patch
	fi
	CONFIG_HASH=$(hash_text "$SERIES_HASH" "$(cat "${FRAGMENTS[@]}")")
}

kmake() {
	make -C "$TREE" O="$KBUILD" ARCH="$KARCH" CROSS_COMPILE="$CROSS" \
		CC="ccache ${CROSS}gcc" -j"$JOBS" "$@"
}

# kmake_image: vmlinux and the modules, then the image QEMU boots, that one
# without ccache: arm's decompressor takes the kernel in with .incbin,
# which neither the preprocessor's output nor the compiler's dependency
# list shows, so ccache returned the piggy.o of an older kernel and the
# zImage booted that one (x86's piggy.S carries sizes, which mostly change).
kmake_image() {
	kmake vmlinux modules || return
	# piggy.o wraps the kernel: made again each time, so no stale one stays.
	rm -f "$KBUILD/arch/$KARCH/boot/compressed/piggy.o"
	CCACHE_DISABLE=1 kmake "$KIMAGE_TARGET"
}

# Paths are relative to the cache in ccache's hash, so hits survive a move.
# Depend mode: a miss costs no extra preprocessor run (about a fifth of a
# cold kernel build's compile time in the default mode); hits come from the
# dependency list the compiler writes anyway (-Wp,-MMD).
kernel_ccache_env() {
	export CCACHE_BASEDIR=$CACHE
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
	export CCACHE_DEPEND=${CCACHE_DEPEND:-1}
}

ensure_kernel_source() {
	local tarball=/usr/src/$TREE_PACKAGE.tar.xz version
	if [ -z "$TREE_PACKAGE" ]; then
		echo "the tree of your own at $SRC: $(tree_label)"
		return 0
	fi
	version=$(dpkg-query -W -f='${Version}' "$TREE_PACKAGE")
	[[ " $TREE_TESTED " == *" $version "* ]] ||
		echo "note: the series was last tested on $TREE_PACKAGE $TREE_TESTED, not $version"
	if stamp_matches "$SRC/.waitvar-source" "$version"; then
		echo "$TREE_PACKAGE $version unpacked"
		return 0
	fi
	rm -rf "$SRC" "$SRC.tmp"
	mkdir -p "$SRC.tmp"
	tar -xJf "$tarball" -C "$SRC.tmp"
	mv "$SRC.tmp/$TREE_PACKAGE" "$SRC"
	rmdir "$SRC.tmp"
	stamp_write "$SRC/.waitvar-source" "$version"
	echo "unpacked $TREE_PACKAGE $version"
}

# apply_patch DIR PATCH: applies PATCH to DIR, or fails naming the patch,
# the tree and each file it could not patch.
apply_patch() {
	local dir=$1 p=$2 out
	if out=$(patch -d "$dir" -p1 --batch --forward --no-backup-if-mismatch <"$p" 2>&1); then
		printf '%s\n' "$out"
		return 0
	fi
	printf '%s\n' "$out"
	echo "${p##*/} does not apply to $(tree_label):"
	printf '%s\n' "$out" | awk '
		/^patching file / { f = $3 }
		/^\|\+\+\+ / { f = $2; sub(/^b\//, "", f) }
		/FAILED at/ { print "  " f ": " $0 }
		/^No file to patch/ { print "  " f ": no such file" }
		/Reversed \(or previously applied\)/ { print "  " f ": already applied" }'
	return 1
}

# Each patch applies to a pristine tree and is checkpatch --strict and
# kernel-doc clean; redone only when the series or the checker changes.
check_series() {
	local stamp=$CACHE/kernel/series-check$TREE_SUFFIX.ok key
	key="$REPO_SERIES_HASH $(hash_files "$TOP/kernel-patches/check-series.sh" "$TOP/harness/lib.sh") $(source_key)"
	if stamp_matches "$stamp" "$key"; then
		cat "$CACHE/kernel/series-check$TREE_SUFFIX.tap"
		echo "series $REPO_SERIES_HASH checked before: applies, checkpatch --strict clean"
		return 0
	fi
	rm -f "$stamp"
	"$TOP/kernel-patches/check-series.sh" "$SRC" --tree "$TREE_NAME" |
		tee "$CACHE/kernel/series-check$TREE_SUFFIX.tap"
	stamp_write "$stamp" "$key"
	echo "series $REPO_SERIES_HASH: applies, checkpatch --strict clean"
}

progress_check_series() {
	echo "$(grep -c '^\(not \)\?ok ' "$1") of ${#PATCHES[@]} patches checked"
}

apply_series() {
	local stamp=$TREE/.waitvar-series new=$TREE.new p key
	key="$SERIES_HASH $(source_key)"
	if stamp_matches "$stamp" "$key"; then
		echo "series $SERIES_HASH applied (${#PATCHES[@]} patches$([ "$IN_TREE" = 0 ] || echo ' + /dev/waitvar'))"
		return 0
	fi
	rm -rf "$new"
	if [ -n "$TREE_PACKAGE" ]; then
		cp -a "$SRC" "$new"
	else
		# Not its history; and the O= build needs a tree without a build.
		rsync -a --exclude=.git "$SRC/" "$new/"
		make -s -C "$new" mrproper
	fi
	for p in "${PATCHES[@]}"; do
		echo "applying ${p##*/}"
		apply_patch "$new" "$p"
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

# The key of what a build dir holds: the config, the patched tree (a new
# package version or a changed tree of the user's is rebuilt) and how it
# is built: image3 since kmake_image, so that a cache whose arm zImage
# wraps an older kernel is built again.
build_key() {
	echo "$CONFIG_HASH $(cat "$TREE/.waitvar-series") image3"
}

configure_kernel() {
	local stamp=$KBUILD/.waitvar-config line name missing=()
	if stamp_matches "$stamp" "$(build_key)" && [ -f "$KBUILD/.config" ]; then
		echo "config $CONFIG_HASH up to date"
		return 0
	fi
	mkdir -p "$KBUILD"
	rm -f "$stamp" "$KBUILD/.waitvar-built"
	kmake allnoconfig
	"$TREE/scripts/kconfig/merge_config.sh" -m -O "$KBUILD" "$KBUILD/.config" "${FRAGMENTS[@]}"
	kmake olddefconfig
	# olddefconfig drops what Kconfig cannot satisfy: check every request,
	# the last one of each option (a later fragment overrides, as in
	# merge_config.sh).
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
	done < <(last_option_settings "${FRAGMENTS[@]}")
	if [ ${#missing[@]} -gt 0 ]; then
		echo "config options requested by the fragments but not set (unmet dependencies?):"
		printf '  %s\n' "${missing[@]}"
		return 1
	fi
	stamp_write "$stamp" "$(build_key)"
	echo "config $CONFIG_HASH: all fragment options set"
}

build_kernel() {
	local stamp=$KBUILD/.waitvar-built
	if stamp_matches "$stamp" "$(build_key)" && [ -f "$KBUILD/$KIMAGE" ]; then
		echo "kernel $CONFIG_HASH up to date"
		return 0
	fi
	kmake_image || return
	# What a build of this config makes: the next build's progress measure.
	find "$KBUILD" -name '*.o' | wc -l >"$KBUILD/.waitvar-objects"
	stamp_write "$stamp" "$(build_key)"
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
		"$TOP/kernel-patches/check-series.sh" "$SRC" --tree "$TREE_NAME" \
		--build "$KBUILD/.config" "$dir"
	rm -rf "$dir"
	stamp_write "$stamp" "$key"
	echo "each patch built on its own for config $CONFIG_HASH"
}

progress_build_each_patch() {
	progress_check_series "$1"
}
