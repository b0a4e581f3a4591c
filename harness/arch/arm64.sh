# shellcheck shell=bash
# shellcheck disable=SC2034 # data: read by the harness that sources it
# arm64: every fact the harness needs about this guest architecture.

KARCH=arm64                     # the kernel's ARCH=
CROSS=aarch64-linux-gnu-        # CROSS_COMPILE for the kernel, module, programs
KIMAGE=arch/arm64/boot/Image    # the image QEMU boots, under the O= dir
KIMAGE_TARGET=Image             # the make target that builds it
DEB_ARCH=arm64                  # Debian's name, for debootstrap
QEMU_USER_ARCH=aarch64          # qemu-user's name, for the foreign second stage
QEMU=qemu-system-aarch64
QEMU_MACHINE=(-M virt -cpu cortex-a57 -accel "tcg,thread=multi" -smp 2 -m 512)
CONSOLE=ttyAMA0
# 32-bit userspace on the 64-bit kernel: the compat ioctl path.
COMPAT_CROSS=arm-linux-gnueabihf-
ARCH_PACKAGES=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-system-arm
	gcc-arm-linux-gnueabihf libc6-dev-armhf-cross)

# Kernel options this machine needs, merged after harness/kconfig/base.config.
ARCH_KCONFIG=(
	# QEMU virt: PL011 console, generic PCI host for virtio-pci.
	CONFIG_SERIAL_AMBA_PL011=y
	CONFIG_SERIAL_AMBA_PL011_CONSOLE=y
	CONFIG_PCI_HOST_GENERIC=y
	CONFIG_COMPAT=y
	# 32-bit time syscalls for compat tasks: 32-bit glibc still calls futex(2).
	CONFIG_COMPAT_32BIT_TIME=y
	# Deadlines read on a time namespace's clock (its vDSO has them).
	CONFIG_TIME_NS=y
)
