#!/usr/bin/env bash
# Runs the shellcheck linter on every shell script of the project: found by
# its #! line, or, for a sourced file, a first line '# shellcheck shell=...'.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
mapfile -t scripts < <(cd "$top" && find . -path ./.git -prune -o -type f -print |
	while read -r f; do
		head -c 64 "$f" | head -n 1 |
			grep -qE '^(#!.*\b(ba)?sh\b|# shellcheck shell=(ba)?sh)' && echo "$f"
	done | LC_ALL=C sort)
[ ${#scripts[@]} -gt 0 ] || { echo "no shell scripts found under $top" >&2; exit 1; }
(cd "$top" && shellcheck -x "${scripts[@]}")
echo "shellcheck clean: ${#scripts[@]} scripts"
