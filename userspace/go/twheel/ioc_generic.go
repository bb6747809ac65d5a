// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT

//go:build !(mips || mipsle || mips64 || mips64le || ppc64 || ppc64le)

package twheel

// The _IOC() direction bits of include/uapi/asm-generic/ioctl.h.
const (
	iocWrite    = 1
	iocRead     = 2
	iocDirShift = 30
)
