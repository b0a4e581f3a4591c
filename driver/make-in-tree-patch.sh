#!/usr/bin/env bash
# Generates the series' last patch, "misc: add /dev/waitvar", from the one
# copy of the driver in driver/: drivers/misc/waitvar.c, its Kconfig entry
# and Makefile line, the UAPI header, Documentation/misc-devices/waitvar.rst
# and a MAINTAINERS entry.
#   usage: make-in-tree-patch.sh TREE OUT.patch
# TREE is a kernel tree with the rest of the series applied; only the files
# the patch changes are read from it.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: ${0##*/} TREE OUT.patch" >&2; exit 64; }
TREE=$1 OUT=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BASE_FILES=(drivers/misc/Kconfig drivers/misc/Makefile
	Documentation/misc-devices/index.rst MAINTAINERS)

for f in "${BASE_FILES[@]}"; do
	[ -f "$TREE/$f" ] || { echo "${0##*/}: $TREE/$f is missing" >&2; exit 1; }
done
grep -q '^WAIT_VAR_EVENT() KUNIT TESTS$' "$TREE/MAINTAINERS" || {
	echo "${0##*/}: $TREE has no WAIT_VAR_EVENT() entry in MAINTAINERS: apply the series first" >&2
	exit 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git_=(git -C "$work" -c user.name=waitvar -c user.email=waitvar@example.org
	-c commit.gpgsign=false)
# A fixed date: the same driver makes the same patch.
export GIT_AUTHOR_DATE="2026-12-03T00:00:00Z" GIT_COMMITTER_DATE="2026-12-03T00:00:00Z"

"${git_[@]}" init -q
for f in "${BASE_FILES[@]}"; do
	mkdir -p "$(dirname "$work/$f")"
	cp "$TREE/$f" "$work/$f"
done
"${git_[@]}" add -A
"${git_[@]}" commit -q -m base

mkdir -p "$work/include/uapi/linux"
cp "$HERE/waitvar.c" "$work/drivers/misc/waitvar.c"
cp "$HERE/include/uapi/linux/waitvar.h" "$work/include/uapi/linux/waitvar.h"
cp "$HERE/waitvar.rst" "$work/Documentation/misc-devices/waitvar.rst"

# Kconfig: the entry goes after the last config, before the sourced dirs.
python3 - "$work" <<'EOF'
import sys
work = sys.argv[1]

def edit(path, anchor, text, before=True):
    with open(path) as f:
        s = f.read()
    if s.count(anchor) != 1:
        sys.exit(f"make-in-tree-patch: {path}: anchor {anchor!r} not found once")
    s = s.replace(anchor, text + anchor if before else anchor + text)
    with open(path, "w") as f:
        f.write(s)

edit(f"{work}/drivers/misc/Kconfig", 'source "drivers/misc/c2port/Kconfig"\n', '''\
config WAITVAR
	tristate "/dev/waitvar: drive wait_var_event() from userspace"
	help
	  A misc device whose ioctls let userspace threads create kernel-side
	  variables, wait for conditions on them through every variant of
	  the wait_var_event() family, change them and wake the waiters, and
	  read per-variable counters; debugfs shows its state.  It exists to
	  test and observe that API.  See
	  Documentation/misc-devices/waitvar.rst.

	  To compile this driver as a module, choose M here: the module
	  will be called waitvar.  If unsure, say N.

''')
edit(f"{work}/drivers/misc/Makefile", "obj-$(CONFIG_VCPU_STALL_DETECTOR)\t+= vcpu_stall_detector.o\n",
     "obj-$(CONFIG_WAITVAR)\t\t+= waitvar.o\n", before=False)
edit(f"{work}/Documentation/misc-devices/index.rst", "   uacce\n", "   waitvar\n",
     before=False)
edit(f"{work}/MAINTAINERS", "WAIT_VAR_EVENT() KUNIT TESTS\n", '''\
WAITVAR MISC DEVICE
M:	waitvar <waitvar@example.org>
L:	linux-kernel@vger.kernel.org
S:	Maintained
F:	Documentation/misc-devices/waitvar.rst
F:	drivers/misc/waitvar.c
F:	include/uapi/linux/waitvar.h

''')
EOF

"${git_[@]}" add -A
"${git_[@]}" commit -q -s -F - <<'EOF'
misc: add /dev/waitvar

The wait_var_event() family can only be exercised from kernel code, so
its behaviour under real scheduling -- which variant sleeps in which
state, who a wake reaches, how often a waiter on a shared hashed queue
wakes for nothing -- is hard to test and to see.

Add a misc device whose ioctls let userspace threads create kernel-side
variables owned by the open file, wait for a condition on them in each
mode the family offers (interruptible, killable, io, uninterruptible with
a bound; exclusive or not; relative timeouts or absolute deadlines),
wait for the first of up to 128 conditions, change the variables with
the usual update-and-wake patterns, wake a given number of waiters or
only those whose condition holds, and watch a condition with poll().
Per-variable counters (waits, wakes, wakeups, spurious wakeups,
timeouts, signals, the hashed bucket used) come from an ioctl and from
debugfs.
EOF
"${git_[@]}" format-patch -q -1 --stdout HEAD >"$OUT"
echo "wrote $OUT"
