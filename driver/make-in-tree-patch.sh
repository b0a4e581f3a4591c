#!/usr/bin/env bash
# Generates the series' last patch, "misc: add /dev/waitvar", from the one
# copy of the driver in driver/: its sources (*.c, *.h), Kconfig and Kbuild
# become drivers/misc/waitvar/ verbatim, with one line each in
# drivers/misc/Kconfig and drivers/misc/Makefile; the UAPI header,
# Documentation/misc-devices/waitvar.rst and a MAINTAINERS entry come too.
# driver/Makefile (the out-of-tree build) and this script stay behind.
#   usage: make-in-tree-patch.sh TREE OUT.patch
# TREE is a kernel tree with the rest of the series applied; only the files
# the patch changes are read from it.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: ${0##*/} TREE OUT.patch" >&2; exit 64; }
TREE=$1 OUT=$2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
BASE_FILES=(drivers/misc/Kconfig drivers/misc/Makefile
	Documentation/misc-devices/index.rst MAINTAINERS
	Documentation/userspace-api/ioctl/ioctl-number.rst)

for f in "${BASE_FILES[@]}"; do
	[ -f "$TREE/$f" ] || { echo "${0##*/}: $TREE/$f is missing" >&2; exit 1; }
done
grep -q 'wake_up_var_all' "$TREE/include/linux/wait_bit.h" || {
	echo "${0##*/}: $TREE has no wake_up_var_all() in include/linux/wait_bit.h: apply the series first" >&2
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

mkdir -p "$work/drivers/misc/waitvar" "$work/include/uapi/linux"
cp "$HERE"/*.c "$HERE"/*.h "$HERE/Kconfig" "$HERE/Kbuild" "$work/drivers/misc/waitvar/"
cp "$HERE/include/uapi/linux/waitvar.h" "$work/include/uapi/linux/waitvar.h"
cp "$HERE/waitvar.rst" "$work/Documentation/misc-devices/waitvar.rst"

# drivers/misc/Kconfig sources the driver's Kconfig after the other
# directories'; drivers/misc/Makefile descends into it.
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

edit(f"{work}/drivers/misc/Kconfig", 'source "drivers/misc/mchp_pci1xxxx/Kconfig"\n',
     'source "drivers/misc/waitvar/Kconfig"\n', before=False)
edit(f"{work}/drivers/misc/Makefile", "obj-$(CONFIG_VCPU_STALL_DETECTOR)\t+= vcpu_stall_detector.o\n",
     "obj-$(CONFIG_WAITVAR)\t\t+= waitvar/\n", before=False)
edit(f"{work}/Documentation/misc-devices/index.rst", "   uacce\n", "   waitvar\n",
     before=False)
# The ioctl magic, registered before 0xC0's entries, in the table's own
# column widths (they differ between trees).
numbers = f"{work}/Documentation/userspace-api/ioctl/ioctl-number.rst"
with open(numbers) as f:
    rule = next(l for l in f if l.startswith("====  ====="))
cols = [i for i in range(1, len(rule)) if rule[i] == "=" and rule[i - 1] == " "]
entry = ("0xBD".ljust(cols[0]) + "00-1F".ljust(cols[1] - cols[0]) +
         "uapi/linux/waitvar.h".ljust(cols[2] - cols[1]) + "/dev/waitvar\n")
edit(numbers, "0xC0  00-0F  linux/usb/iowarrior.h\n", entry)
# The entry goes where its name sorts: before the first section header
# (a line after a blank one, followed by a "X:\t" field) that sorts after it.
maint = f"{work}/MAINTAINERS"
with open(maint) as f:
    lines = f.read().split("\n")
headers = [lines[i] for i in range(1, len(lines) - 1)
           if lines[i] and not lines[i - 1] and lines[i + 1][1:3] == ":\t"]
after = next(h for h in headers if h.upper() > "WAITVAR MISC DEVICE")
edit(maint, "\n" + after + "\n", '''\

WAITVAR MISC DEVICE
M:	waitvar <waitvar@example.org>
L:	linux-kernel@vger.kernel.org
S:	Maintained
F:	Documentation/misc-devices/waitvar.rst
F:	drivers/misc/waitvar/
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
debugfs.  Named variables, with an owner, a group and a mode, scoped by
user namespace, let unrelated processes share one.

The hashed wait table is shared with every wait_on_bit() user in the
kernel, so what userspace may put on it is bounded: per-user limits on
variables, names and queued waiters in the manner of epoll's
max_user_watches, a cap on uninterruptible waits well below the hung-task
timeout, freezable sleeps, and the bucket shown only to CAP_SYSLOG.  A
FEATURES command tells userspace what the running driver has.  The ioctl
magic 0xBD is registered in ioctl-number.rst.

The driver is drivers/misc/waitvar/: internal.h states the reference,
lock-order and memory-ordering rules once, and each .c file holds one
concern: the ioctl table and file operations, variables and their
updates, waits, WATCH descriptors, named variables, counters and debugfs.
EOF
"${git_[@]}" format-patch -q -1 --stdout HEAD >"$OUT"
echo "wrote $OUT"
