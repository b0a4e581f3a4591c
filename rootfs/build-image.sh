#!/usr/bin/env bash
# build-image.sh DEB_ARCH QEMU_ARCH MIRROR PACKAGES IMAGE: a Debian bookworm
# root filesystem (debootstrap minbase + PACKAGES, comma-separated, as run.sh
# reads them from ./packages, + ./overlay) written as an ext4 image with
# mke2fs -d, so no loop mount is needed.  QEMU_ARCH names the qemu-user
# binary that runs a foreign second stage.  Needs root.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 5 ] || { echo "usage: $0 DEB_ARCH QEMU_ARCH MIRROR PACKAGES IMAGE" >&2; exit 64; }
deb_arch=$1 qemu_arch=$2 mirror=$3 include=$4 image=$5
work=$image.work
root=$work/root

[ "$(id -u)" = 0 ] || { echo "build-image.sh: debootstrap needs root" >&2; exit 1; }

# A foreign second stage runs through qemu-user, registered with binfmt_misc.
ensure_binfmt() {
	local qarch=$1 entry=/proc/sys/fs/binfmt_misc/qemu-$1
	if [ ! -d /proc/sys/fs/binfmt_misc ]; then
		echo "build-image.sh: this kernel has no binfmt_misc: cannot run the $deb_arch second stage" >&2
		return 1
	fi
	mountpoint -q /proc/sys/fs/binfmt_misc ||
		mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
	if ! grep -qx enabled "$entry" 2>/dev/null; then
		# qemu-user-static's postinst may have run before binfmt_misc was
		# mounted: import its format again, then enable it.
		update-binfmts --import "qemu-$qarch" 2>/dev/null || true
		update-binfmts --enable "qemu-$qarch" || true
	fi
	if ! grep -qx enabled "$entry" 2>/dev/null; then
		echo "build-image.sh: $entry is not enabled;" \
			"install qemu-user-static and binfmt-support, then: update-binfmts --enable qemu-$qarch" >&2
		return 1
	fi
	echo "binfmt: $entry enabled"
}

[ "$(dpkg --print-architecture)" = "$deb_arch" ] || ensure_binfmt "$qemu_arch"

rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT

echo "debootstrap first stage ($deb_arch, minbase + $include) from $mirror"
debootstrap --arch="$deb_arch" --variant=minbase --foreign \
	--include="$include" bookworm "$root" "$mirror"
echo "debootstrap second stage (qemu-$qemu_arch through binfmt_misc)"
chroot "$root" /debootstrap/debootstrap --second-stage

cp -a "$here/overlay/." "$root/"
echo waitvar >"$root/etc/hostname"
# An unprivileged user for the permission checks of named variables
# (the tests, and 'su wvuser' in ./run.sh shell).
chroot "$root" useradd --uid 1000 --user-group --create-home --shell /bin/bash wvuser
chroot "$root" apt-get clean
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin

echo "mke2fs -d $root -> $image"
mke2fs -q -F -t ext4 -L waitvar-root -d "$root" "$image.tmp" 1G
mv "$image.tmp" "$image"
du -h --apparent-size "$image"
