#!/usr/bin/env bash
# Checks of harness/lib.sh, the helpers every harness script relies on:
# list files, content hashes, cache stamps.  Prints TAP; exits non-zero if
# any check fails.
set -euo pipefail

# shellcheck source=tests/host/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/tap.sh"

echo "TAP version 13"
echo "1..14"

printf '%s\n' '# a comment' '' 'one' '  two  # trailing comment' $'\tthree\t' '#four' >"$tmp/list"
check "list_file drops comments, blanks, surrounding space" \
	"$(list_file "$tmp/list")" $'one\ntwo\nthree'
: >"$tmp/empty"
check "list_file of an empty file is empty" "$(list_file "$tmp/empty")" ""

echo a >"$tmp/a"
echo b >"$tmp/b"
check "hash_files depends on order" \
	"$([ "$(hash_files "$tmp/a" "$tmp/b")" != "$(hash_files "$tmp/b" "$tmp/a")" ] && echo differs)" differs
h1=$(hash_files "$tmp/a")
echo changed >"$tmp/a"
check "hash_files depends on content" "$([ "$h1" != "$(hash_files "$tmp/a")" ] && echo differs)" differs
check "hash_files is 16 hex digits" "$(hash_files "$tmp/a" | grep -cE '^[0-9a-f]{16}$')" 1

check "no stamp file does not match" "$(stamp_matches "$tmp/stamp" key && echo yes || echo no)" no
stamp_write "$tmp/stamp" "key 1 2"
check "a written stamp matches its key" "$(stamp_matches "$tmp/stamp" "key 1 2" && echo yes || echo no)" yes
check "a stamp does not match another key" "$(stamp_matches "$tmp/stamp" "key 1" && echo yes || echo no)" no

printf '%s\n' '# the series' 'a.patch' 'b.patch 6.1' 'c.patch 6.12  # only there' \
	'd.patch 6.1 6.12' 'e.patch' >"$tmp/series"
check "series_for: unmarked lines and those naming the tree, in order" \
	"$(series_for "$tmp/series" 6.1 | paste -sd' ')" "a.patch b.patch d.patch e.patch"
check "series_for: another tree skips what is marked for others" \
	"$(series_for "$tmp/series" 6.12 | paste -sd' ')" "a.patch c.patch d.patch e.patch"
check "series_for: a tree of one's own (a path) takes the unmarked lines" \
	"$(series_for "$tmp/series" /src/linux | paste -sd' ')" "a.patch e.patch"

printf '%s\n' '# trees' $'6.1\tlinux-source-6.1\t1' $'6.12\tlinux-source-6.12\t2' >"$tmp/trees"
check "tree_entry: the line of the tree named" \
	"$(tree_entry "$tmp/trees" 6.12 | cut -f2)" linux-source-6.12
check "tree_entry: nothing for another name, a prefix included" "$(tree_entry "$tmp/trees" 6)" ""

printf '%s\n' 'CONFIG_A=y' '# a comment' 'CONFIG_PREEMPT=y' 'CONFIG_B="x=y"' >"$tmp/f1.config"
printf '%s\n' '# CONFIG_PREEMPT is not set' 'CONFIG_A=m' 'CONFIG_C=y' >"$tmp/f2.config"
check "last_option_settings: one line an option, the last fragment's" \
	"$(last_option_settings "$tmp/f1.config" "$tmp/f2.config" | paste -sd'|')" \
	'CONFIG_A=m|# CONFIG_PREEMPT is not set|CONFIG_B="x=y"|CONFIG_C=y'
check "last_option_settings: the order of the fragments decides" \
	"$(last_option_settings "$tmp/f2.config" "$tmp/f1.config" | paste -sd'|')" \
	'CONFIG_PREEMPT=y|CONFIG_A=y|CONFIG_C=y|CONFIG_B="x=y"'

printf 'CONFIG_LAST=y' >"$tmp/f3.config"
printf '%s\n' 'CONFIG_NEXT=y' 'CONFIG_OFF=n' 'CONFIG_S="a#b=c"' >"$tmp/f4.config"
check "last_option_settings: a file without a final newline, =n, # and = in a value" \
	"$(last_option_settings "$tmp/f3.config" "$tmp/f4.config" | paste -sd'|')" \
	'CONFIG_LAST=y|CONFIG_NEXT=y|# CONFIG_OFF is not set|CONFIG_S="a#b=c"'

# The repo's own series: every mark names a tree of harness/trees.
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
check "kernel-patches/series marks only trees of harness/trees" \
	"$(list_file "$top/kernel-patches/series" | awk 'NR == FNR { t[$1] = 1; next }
		{ for (i = 2; i <= NF; i++) if (!($i in t)) print "unknown tree " $i " for " $1 }' \
		<(list_file "$top/harness/trees") -)" ""

[ "$bad" = 0 ]
