/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's integer types in user space, from the same uapi header as
 * in the kernel (asm/types.h): u64 is unsigned long long, so that "%llu"
 * prints one in both places.
 */
#ifndef _SHIM_LINUX_TYPES_H
#define _SHIM_LINUX_TYPES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <asm/types.h>
typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s8 s8;
typedef __s16 s16;
typedef __s32 s32;
typedef __s64 s64;
typedef unsigned int gfp_t;
typedef unsigned long ulong;
#endif
