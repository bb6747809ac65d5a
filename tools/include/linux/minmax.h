/* SPDX-License-Identifier: GPL-2.0 */
/* As in the kernel, each argument is evaluated exactly once. */
#ifndef _SHIM_LINUX_MINMAX_H
#define _SHIM_LINUX_MINMAX_H
#define __cmp_once(op, x, y) ({			\
	__typeof__(x) __x = (x);		\
	__typeof__(y) __y = (y);		\
	__x op __y ? __x : __y; })
#define min(a, b)	__cmp_once(<, a, b)
#define max(a, b)	__cmp_once(>, a, b)
#define min_t(t, a, b)	__cmp_once(<, (t)(a), (t)(b))
#define max_t(t, a, b)	__cmp_once(>, (t)(a), (t)(b))
#define clamp_t(t, v, lo, hi)	min_t(t, max_t(t, v, lo), hi)
#define swap(a, b)	do { __typeof__(a) _t = (a); (a) = (b); (b) = _t; } while (0)
#endif
