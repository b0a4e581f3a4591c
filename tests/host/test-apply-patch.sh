#!/usr/bin/env bash
# Checks of harness/kernel.sh's apply_patch: a patch that does not apply
# fails naming the patch, the tree and each file it could not patch; one
# that applies, applies.  Prints TAP; exits non-zero if any check fails.
set -euo pipefail

# shellcheck source=tests/host/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"
# shellcheck source=harness/kernel.sh
. "$TOP/harness/kernel.sh"

# A tree of two files, as harness/trees would name one.
TREE_NAME=9.9 TREE_PACKAGE=linux-source-9.9 SRC=$tmp/src
mkdir -p "$SRC/kernel" "$tmp/new"
echo 9.9-1 >"$SRC/.waitvar-source"
printf '%s\n' one two three four five six seven >"$SRC/kernel/a.c"
printf '%s\n' alpha beta gamma >"$SRC/kernel/b.h"
cp -a "$SRC/." "$tmp/new/"
cat >"$tmp/good.patch" <<'PATCH'
--- a/kernel/a.c
+++ b/kernel/a.c
@@ -3,5 +3,6 @@
 three
 four
 five
+five and a half
 six
 seven
PATCH
cat >"$tmp/0002-bad.patch" <<'PATCH'
--- a/kernel/a.c
+++ b/kernel/a.c
@@ -1,3 +1,3 @@
-uno
+one!
 two
 three
--- a/kernel/gone.c
+++ b/kernel/gone.c
@@ -1 +1 @@
-x
+y
--- a/kernel/b.h
+++ b/kernel/b.h
@@ -1,3 +1,4 @@
 alpha
 beta
 gamma
+delta
PATCH

echo "TAP version 13"
echo "1..4"
rc=0
out=$(apply_patch "$tmp/new" "$tmp/good.patch" 2>&1) || rc=$?
check "a patch that applies returns 0" "$rc" 0
check "and changes the tree" "$(sed -n 6p "$tmp/new/kernel/a.c")" "five and a half"
rc=0
out=$(apply_patch "$tmp/new" "$tmp/0002-bad.patch" 2>&1) || rc=$?
check "a patch that does not apply fails" "$([ "$rc" != 0 ] && echo failed)" failed
check "naming the patch, the tree and each file it could not patch" \
	"$(sed -n '/does not apply/,$p' <<<"$out")" \
	"0002-bad.patch does not apply to 9.9 (linux-source-9.9 9.9-1):
  kernel/a.c: Hunk #1 FAILED at 1.
  kernel/gone.c: no such file"
[ "$bad" = 0 ]
