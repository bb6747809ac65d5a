/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_MATH64_H
#define _SHIM_LINUX_MATH64_H
#include <linux/types.h>
static inline u64 div64_u64(u64 a, u64 b) { return a / b; }
static inline u64 div64_u64_rem(u64 a, u64 b, u64 *rem) { *rem = a % b; return a / b; }
/* (a * b) >> shift for shift >= 32, without a 128-bit type */
static inline u64 mul_u64_u64_shr(u64 a, u64 b, unsigned int shift)
{
	u64 al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	u64 ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	u64 mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
	u64 hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
	u64 lo = (mid << 32) | (uint32_t)ll;

	return shift == 64 ? hi : (hi << (64 - shift)) | (lo >> shift);
}
#endif
