/* SPDX-License-Identifier: GPL-2.0 */
/* The allocation flags; user space knows only whether to zero. */
#ifndef _SHIM_LINUX_SLAB_H
#define _SHIM_LINUX_SLAB_H
#include <linux/types.h>
#define __GFP_ZERO	0x100u
#define GFP_KERNEL	0x1u
#endif
