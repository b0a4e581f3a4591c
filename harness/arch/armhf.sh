# shellcheck shell=bash
# shellcheck disable=SC2034 # data: read by the harness that sources it
# armhf: every fact the harness needs about this guest architecture (a
# 32-bit ARMv7 kernel and userspace; its programs are the native ones).

KARCH=arm                       # the kernel's ARCH=
CROSS=arm-linux-gnueabihf-      # CROSS_COMPILE for the kernel, module, programs
KIMAGE=arch/arm/boot/zImage     # the image QEMU boots, under the O= dir
KIMAGE_TARGET=zImage            # the make target that builds it
DEB_ARCH=armhf                  # Debian's name, for debootstrap
QEMU_USER_ARCH=arm              # qemu-user's name, for the foreign second stage
QEMU=qemu-system-arm
# Cortex-A15 class: LPAE, so LDREXD/STREXD and the 64-bit atomics are real.
QEMU_MACHINE=(-M "virt,highmem=off" -cpu cortex-a15 -accel "tcg,thread=multi" -smp 2 -m 1024)
CONSOLE=ttyAMA0
# A 32-bit kernel has no compat path: the native programs are the 32-bit ones.
COMPAT_CROSS=
ARCH_PACKAGES=(gcc-arm-linux-gnueabihf libc6-dev-armhf-cross qemu-system-arm)

# Kernel options this machine needs, merged after harness/kconfig/base.config.
ARCH_KCONFIG=(
	# QEMU virt: an ARMv7 multiplatform kernel (allnoconfig picks the
	# MMU-less ARMv7-M one), PSCI to start the CPUs, PL011 console,
	# generic PCI host for virtio-pci.
	CONFIG_MMU=y
	CONFIG_ARCH_MULTIPLATFORM=y
	CONFIG_ARCH_MULTI_V7=y
	CONFIG_ARCH_VIRT=y
	CONFIG_ARM_LPAE=y
	CONFIG_ARM_PSCI=y
	CONFIG_AEABI=y
	# armhf userspace passes floats in VFP registers.
	CONFIG_VFP=y
	CONFIG_VFPv3=y
	CONFIG_NEON=y
	CONFIG_SERIAL_AMBA_PL011=y
	CONFIG_SERIAL_AMBA_PL011_CONSOLE=y
	CONFIG_PCI_HOST_GENERIC=y
	CONFIG_HIGHMEM=y
	# The time32 syscalls: armhf glibc still calls futex(2), and init dies
	# of "The futex facility returned an unexpected error code" without.
	CONFIG_COMPAT_32BIT_TIME=y
)
