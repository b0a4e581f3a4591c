# shellcheck shell=bash
# shellcheck disable=SC2034 # data: read by the harness that sources it
# x86_64: every fact the harness needs about this guest architecture.

KARCH=x86_64                    # the kernel's ARCH=
CROSS=x86_64-linux-gnu-         # CROSS_COMPILE (Debian's gcc on amd64 has it)
KIMAGE=arch/x86/boot/bzImage    # the image QEMU boots, under the O= dir
KIMAGE_TARGET=bzImage           # the make target that builds it
DEB_ARCH=amd64                  # Debian's name, for debootstrap
QEMU_USER_ARCH=x86_64           # qemu-user's name, for a foreign second stage
QEMU=qemu-system-x86_64
# TCG: /dev/kvm is not to be trusted on the machines this runs on.
QEMU_MACHINE=(-M pc -cpu max -accel "tcg,thread=multi" -smp 2 -m 1024)
CONSOLE=ttyS0
# 32-bit userspace on the 64-bit kernel: the ia32 compat ioctl path.
COMPAT_CROSS=i686-linux-gnu-
ARCH_PACKAGES=(gcc qemu-system-x86 gcc-i686-linux-gnu libc6-dev-i386-cross)

# Kernel options this machine needs, merged after harness/kconfig/base.config.
ARCH_KCONFIG=(
	# QEMU pc: 8250 serial console, ACPI for the interrupt routing.
	CONFIG_SERIAL_8250=y
	CONFIG_SERIAL_8250_CONSOLE=y
	CONFIG_ACPI=y
	CONFIG_IA32_EMULATION=y
	# 32-bit time syscalls for compat tasks: 32-bit glibc still calls futex(2).
	CONFIG_COMPAT_32BIT_TIME=y
	# Deadlines read on a time namespace's clock (its vDSO has them).
	CONFIG_TIME_NS=y
)
