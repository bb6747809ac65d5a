// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

//go:build mips || mipsle || mips64 || mips64le || ppc64 || ppc64le

package twheel

// MIPS and PowerPC have 3 direction bits and 13 size bits in _IOC()
// (arch/{mips,powerpc}/include/uapi/asm/ioctl.h).
const (
	iocWrite    = 4
	iocRead     = 2
	iocDirShift = 29
)
