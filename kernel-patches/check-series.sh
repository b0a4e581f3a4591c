#!/usr/bin/env bash
# check-series.sh PRISTINE_TREE: apply kernel-patches/series, one patch at a
# time, to a scratch copy of the pristine tree and run checkpatch.pl --strict
# on each.  Prints one TAP line per patch; fails naming the patch that does
# not apply or is not clean.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${1:?usage: check-series.sh PRISTINE_TREE}
[ -f "$src/scripts/checkpatch.pl" ] || { echo "check-series.sh: no kernel tree at $src" >&2; exit 64; }

mapfile -t patches < <(sed 's/#.*//; s/[[:space:]]//g; /^$/d' "$here/series")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/waitvar-series.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
cp -a "$src/." "$scratch/"

# spdxcheck.py (run by checkpatch) needs Debian's python3-ply and python3-git,
# not whatever python3 comes first on PATH.
export PATH=/usr/bin:$PATH

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
	if ! out=$(patch -d "$scratch" -p1 --batch --forward --no-backup-if-mismatch <"$file" 2>&1); then
		echo "not ok $n $p # does not apply"
		printf '%s\n' "$out" | sed 's/^/# /'
		bad=$((bad + 1))
		break
	fi
	(cd "$scratch" && perl scripts/checkpatch.pl --strict "$file" >"$scratch/.checkpatch.out" 2>&1) || true
	summary=$(grep '^total:' "$scratch/.checkpatch.out" || echo "total: no summary")
	if [[ $summary == "total: 0 errors, 0 warnings, 0 checks, "* ]]; then
		echo "ok $n $p # $summary"
	else
		echo "not ok $n $p # checkpatch: $summary"
		sed 's/^/# /' "$scratch/.checkpatch.out"
		bad=$((bad + 1))
	fi
done
[ "$bad" = 0 ]
