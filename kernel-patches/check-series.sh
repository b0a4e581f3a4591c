#!/usr/bin/env bash
# check-series.sh PRISTINE_TREE [--tree NAME] [--build CONFIG BUILD_DIR]
#
# Applies the patches kernel-patches/series lists for the tree NAME (a
# name of harness/trees; default 6.1, the tree the series is written for),
# one at a time, to a scratch copy of the pristine tree and runs
# checkpatch.pl --strict on each, and kernel-doc on the C files and
# headers it touches (no warning it did not have before the patch).  With
# --build, also compiles, after each patch, the objects it touches (a .c
# file that is #included by another is built through that one) and
# fs/inode.o as a user of any header it changes, with W=1, using CONFIG as
# .config and the toolchain in ARCH, CROSS_COMPILE and CC: each patch must
# build on its own and add no W=1 warning in the files it touches.
# Prints one TAP line per patch; fails naming the patch that does not apply,
# is not clean or does not build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=harness/lib.sh
. "$here/../harness/lib.sh"
usage="usage: check-series.sh PRISTINE_TREE [--tree NAME] [--build CONFIG BUILD_DIR]"
die_usage() {
	echo "check-series.sh: $1" >&2
	echo "$usage" >&2
	exit "$EX_USAGE"
}
[ $# -ge 1 ] || die_usage "no tree given"
src=$1 tree=6.1 config='' obj=''
shift
while [ $# -gt 0 ]; do
	case $1 in
	--tree) [ $# -ge 2 ] || die_usage "--tree needs a name"; tree=$2; shift 2 ;;
	--build) [ $# -ge 3 ] || die_usage "--build needs CONFIG and BUILD_DIR"; config=$2 obj=$3; shift 3 ;;
	*) die_usage "unknown argument '$1'" ;;
	esac
done
[ -z "$config" ] || [ -f "$config" ] || { echo "check-series.sh: no config file $config" >&2; exit "$EX_USAGE"; }
[ -f "$src/scripts/checkpatch.pl" ] || { echo "check-series.sh: no kernel tree at $src" >&2; exit "$EX_USAGE"; }

case $tree in
*/*) ;;
*) [ -n "$(tree_entry "$here/../harness/trees" "$tree")" ] ||
	die_usage "no tree '$tree' in harness/trees (a tree of your own is a path)" ;;
esac
mapfile -t patches < <(series_for "$here/series" "$tree")
[ ${#patches[@]} -gt 0 ] || { echo "check-series.sh: the series lists no patch for tree '$tree'" >&2; exit "$EX_USAGE"; }
scratch=$(mktemp -d "${TMPDIR:-/tmp}/waitvar-series.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cp -a "$src/." "$scratch/"

# spdxcheck.py (run by checkpatch) needs Debian's python3-ply and python3-git,
# not whatever python3 comes first on PATH.
export PATH=/usr/bin:$PATH

# The files a patch touches, from its diff headers.
touched_files() {
	sed -n 's@^+++ b/@@p' "$1"
}

# kernel-doc's warnings about the given files (those that exist), one a
# line, without line numbers, so that they compare across a patch.
kdoc_warnings() {
	local f files=()
	for f in "$@"; do
		[ ! -f "$scratch/$f" ] || files+=("$f")
	done
	[ ${#files[@]} -gt 0 ] || return 0
	(cd "$scratch" && perl scripts/kernel-doc -none "${files[@]}" 2>&1) |
		grep -i 'warning' | sed 's/:[0-9]*: /: /' || true
}

# Make targets that compile what a patch touches.
build_targets() {
	local f inc headers=0
	while read -r f; do
		case $f in
		*.h) headers=1 ;;
		*.c)
			inc=$(grep -l "^#[[:space:]]*include \"${f##*/}\"" "$scratch/${f%/*}"/*.c 2>/dev/null | head -n 1 || true)
			[ -z "$inc" ] || f=${inc#"$scratch"/}
			echo "${f%.c}.o"
			;;
		esac
	done < <(touched_files "$1")
	[ "$headers" = 0 ] || echo fs/inode.o
}

kmake() {
	make -C "$scratch" O="$obj" ${CC:+CC="$CC"} -j"$(nproc)" "$@"
}

build_patch() {
	local file=$1 targets
	mapfile -t targets < <(build_targets "$file" | sort -u)
	[ ${#targets[@]} -gt 0 ] || return 0
	# Again each time: a patch may add the Kconfig symbols CONFIG asks for.
	cp "$config" "$obj/.config"
	kmake olddefconfig >"$scratch/.build.out" 2>&1 || return 1
	kmake W=1 "${targets[@]}" >>"$scratch/.build.out" 2>&1 || return 1
	# Only the patch's own files must be W=1 clean; the tree has old warnings.
	! grep -F -f <(touched_files "$file") "$scratch/.build.out" | grep -q 'warning:'
}

if [ -n "$obj" ]; then
	mkdir -p "$obj"
	cp "$config" "$obj/.config"
	kmake olddefconfig >/dev/null
	kmake prepare >/dev/null
fi

echo "TAP version 13"
echo "1..${#patches[@]}"
n=0 bad=0
for p in "${patches[@]}"; do
	n=$((n + 1))
	file=$here/$p
	if [ ! -f "$file" ]; then
		echo "not ok $n $p # missing file"
		bad=$((bad + 1))
		continue
	fi
	mapfile -t sources < <(touched_files "$file" | grep -E '\.[ch]$' || true)
	# kernel-doc's complaints about these files before the patch: only new
	# ones count against it (sched.h, for one, has some of its own).
	kdoc_warnings "${sources[@]}" >"$scratch/.kdoc.before"
	if ! out=$(patch -d "$scratch" -p1 --batch --forward --no-backup-if-mismatch <"$file" 2>&1); then
		echo "not ok $n $p # does not apply"
		printf '%s\n' "$out" | sed 's/^/# /'
		bad=$((bad + 1))
		break
	fi
	# MACRO_ARG_REUSE: the wait.h idiom tests the condition before and in
	# the loop, and mainline's wait_var_event_any_lock() evaluates @lock at
	# each unlock and lock; the series keeps both on purpose.
	# UNKNOWN_COMMIT_ID: changelogs cite mainline commits, which a tree
	# unpacked from linux-source has no history to look up (their form,
	# GIT_COMMIT_ID, is still checked).
	(cd "$scratch" && perl scripts/checkpatch.pl --strict \
		--ignore MACRO_ARG_REUSE,UNKNOWN_COMMIT_ID \
		"$file" >"$scratch/.checkpatch.out" 2>&1) || true
	summary=$(grep '^total:' "$scratch/.checkpatch.out" || echo "total: no summary")
	kdoc_warnings "${sources[@]}" | grep -vxFf "$scratch/.kdoc.before" >"$scratch/.kdoc.out" || true
	if [[ $summary != "total: 0 errors, 0 warnings, 0 checks, "* ]]; then
		echo "not ok $n $p # checkpatch: $summary"
		sed 's/^/# /' "$scratch/.checkpatch.out"
		bad=$((bad + 1))
	elif [ -s "$scratch/.kdoc.out" ]; then
		echo "not ok $n $p # new kernel-doc warnings"
		sed 's/^/# /' "$scratch/.kdoc.out"
		bad=$((bad + 1))
	elif [ -n "$obj" ] && ! build_patch "$file"; then
		echo "not ok $n $p # does not build W=1-clean on its own: $(build_targets "$file" | sort -u | paste -sd' ')"
		grep -E 'error|warning' "$scratch/.build.out" | head -n 20 | sed 's/^/# /'
		bad=$((bad + 1))
	elif [ -n "$obj" ]; then
		echo "ok $n $p # $summary; built $(build_targets "$file" | sort -u | paste -sd' ')"
	else
		echo "ok $n $p # $summary"
	fi
done
[ "$bad" = 0 ]
