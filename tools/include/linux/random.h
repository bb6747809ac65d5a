/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_RANDOM_H
#define _SHIM_LINUX_RANDOM_H
#include <stdlib.h>
#include <sys/random.h>
#include <linux/types.h>
static inline void get_random_bytes(void *buf, size_t len)
{
	if (getrandom(buf, len, 0) != (ssize_t)len)
		abort();
}
static inline u64 get_random_u64(void)
{
	u64 v;

	get_random_bytes(&v, sizeof(v));
	return v;
}
#endif
