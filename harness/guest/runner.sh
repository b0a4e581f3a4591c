#!/bin/bash
# Guest runner, exec'd by /sbin/waitvar-init from the read-only 9p share
# /mnt/waitvar, where run.sh staged it.  waitvar.mode= on the kernel command
# line picks the job:
#   test   load the module, run every program in ./suites (one name a line,
#          as staged) and every KUnit module in ./kunit, print KTAP on
#          the console, unload the module, scan for leaks
#   shell  load the module, give a root shell on the console
#   run    load the module, run /mnt/out/cmd.sh, keep its output and status
# Then it saves dmesg into /mnt/out (the writable share) and powers off.
set -u

share=/mnt/waitvar
out=/mnt/out
mode="test"
timeout=300
console=console
shared=
read -ra cmdline </proc/cmdline
for arg in "${cmdline[@]}"; do
	case $arg in
	waitvar.mode=*) mode=${arg#*=} ;;
	waitvar.timeout=*) timeout=${arg#*=} ;;
	console=*) console=${arg#*=} ;;
	esac
done
export PATH=$share/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=linux LANG=C.UTF-8
echo waitvar >/proc/sys/kernel/hostname
kmemleak=/sys/kernel/debug/kmemleak
# kmemleak=off on the command line (harness/boots): the file is there, and refuses.
case " $(cat /proc/cmdline) " in *" kmemleak=off "*) kmemleak=/nonexistent ;; esac

# run.sh --share: mount the folder only if QEMU offers its tag.
for tag in /sys/bus/virtio/drivers/9pnet_virtio/*/mount_tag; do
	[ -e "$tag" ] || continue
	read -r -d '' name <"$tag"
	[ "$name" = waitvar-share ] || continue
	mkdir -p /mnt/share
	mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro waitvar-share /mnt/share &&
		shared=/mnt/share
done

power_off() {
	dmesg >"$out/dmesg.txt" 2>&1
	sync
	echo o >/proc/sysrq-trigger
	sleep 30
}

# run.sh --in-tree stages no module: the device is built into the kernel.
builtin=0
[ -e "$share/waitvar.ko" ] || builtin=1
# Programs that unload and load the module themselves find it here.
[ "$builtin" = 1 ] || export WAITVAR_MODULE="$share/waitvar.ko"

load_module() {
	if [ "$builtin" = 1 ]; then
		[ -c /dev/waitvar ] || { echo "no waitvar.ko and no built-in /dev/waitvar"; return 1; }
		echo "/dev/waitvar is built in"
		return 0
	fi
	insmod "$share/waitvar.ko"
}

unload_module() {
	if [ "$builtin" = 1 ]; then
		echo "/dev/waitvar is built in: nothing to unload"
		return 4
	fi
	rmmod waitvar
}

# A KTAP diagnostic with the guest's uptime, to see where a run spends time.
uptime_note() {
	local up
	read -r up _ </proc/uptime
	echo "# $1 at ${up}s"
}

# The leak report goes to the console, where the host's verdict finds it.
scan_for_leaks() {
	[ -e "$kmemleak" ] || return 0
	# A leak is reported by the second scan that finds it unreferenced and
	# unchanged; one scan takes longer than kmemleak's 5 s minimum age.
	local report
	echo scan >"$kmemleak"
	echo scan >"$kmemleak"
	# debugfs files have no size: read the report to see if there is one.
	report=$(head -c 65536 "$kmemleak")
	if [ -n "$report" ]; then
		echo "# kmemleak report:"
		printf '%s\n' "$report" | sed 's/^/# /'
	fi
}

# result N NAME RC: one KTAP result line from a program's exit status.
result() {
	case $3 in
	0) echo "ok $1 $2" ;;
	4) echo "ok $1 $2 # SKIP" ;;
	124 | 137) echo "not ok $1 $2 # TIMEOUT ${timeout}s" ;;
	*) echo "not ok $1 $2 # exit status $3" ;;
	esac
}

# run_kunit N MODULE: KUnit runs a test module's suites while it loads and
# keeps each suite's KTAP in debugfs; print it as subtests of test N.
run_kunit() {
	local n=$1 ko=$2 name rc failed=0 dir
	local kunit=/sys/kernel/debug/kunit
	name=$(basename "$ko" .ko)
	ls "$kunit" >/tmp/kunit.before 2>/dev/null
	insmod "$ko" 2>&1 | sed 's/^/# /'
	rc=${PIPESTATUS[0]}
	ls "$kunit" >/tmp/kunit.after 2>/dev/null
	while read -r dir; do
		sed 's/^/    /' "$kunit/$dir/results"
		tail -n 1 "$kunit/$dir/results" | grep -q '^ok ' || failed=1
	done < <(comm -13 /tmp/kunit.before /tmp/kunit.after)
	# No suite at all is a failure too: the module ran nothing.
	cmp -s /tmp/kunit.before /tmp/kunit.after && failed=1
	rmmod "$name" 2>&1 | sed 's/^/# /'
	[ "$rc" = 0 ] && [ "$failed" = 0 ] && rc=0 || rc=1
	result "$n" "$name" "$rc"
}

run_tests() {
	local suites=() kunits=() n=1 name rc ko
	mapfile -t suites <"$share/suites"
	kunits=("$share"/kunit/*.ko)
	[ -e "${kunits[0]}" ] || kunits=()
	[ -e "$kmemleak" ] && echo clear >"$kmemleak"

	echo "KTAP version 1"
	echo "1..$((${#suites[@]} + ${#kunits[@]} + 2))"
	uptime_note "runner started"
	load_module 2>&1 | sed 's/^/# /'
	rc=${PIPESTATUS[0]}
	[ "$rc" != 0 ] || [ "$builtin" = 0 ] || rc=4
	result $n waitvar_module_load "$rc"
	for name in "${suites[@]}"; do
		n=$((n + 1))
		timeout -k 5 "$timeout" stdbuf -oL -eL "$share/bin/$name" 2>&1 |
			sed -u 's/^/    /'
		result $n "$name" "${PIPESTATUS[0]}"
	done
	for ko in "${kunits[@]}"; do
		n=$((n + 1))
		run_kunit "$n" "$ko"
	done
	n=$((n + 1))
	unload_module 2>&1 | sed 's/^/# /'
	rc=${PIPESTATUS[0]}
	result $n waitvar_module_unload "$rc"
	uptime_note "tests done"
	scan_for_leaks
	uptime_note "leak scan done"
}

run_shell() {
	local rc=0
	load_module || echo "runner: insmod waitvar.ko failed" >&2
	cat <<-TXT
	waitvar guest shell: /dev/waitvar is loaded; tools are in $share/bin
	(on PATH); a --share folder is at /mnt/share.  'poweroff' to leave.
	TXT
	cd /root || true
	# Not a login shell: /etc/profile would reset PATH.
	setsid -c -w bash -i <"/dev/$console" >"/dev/$console" 2>&1 || rc=$?
	return $rc
}

run_command() {
	local rc=0
	if ! load_module 2>"$out/cmd.stderr"; then
		echo "runner: insmod waitvar.ko failed" >>"$out/cmd.stderr"
	fi
	cd "${shared:-/root}" || return
	[ -e "$kmemleak" ] && echo clear >"$kmemleak"
	timeout -k 5 "$timeout" bash "$out/cmd.sh" \
		>"$out/cmd.stdout" 2>>"$out/cmd.stderr" </dev/null || rc=$?
	echo "$rc" >"$out/cmd.status"
	# What the command leaked, on the console for the host's splat scan.
	scan_for_leaks
}

case $mode in
test) run_tests ;;
shell) run_shell ;;
run) run_command ;;
*) echo "runner: unknown waitvar.mode=$mode" ;;
esac
power_off
