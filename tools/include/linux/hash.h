/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_HASH_H
#define _SHIM_LINUX_HASH_H
#define GOLDEN_RATIO_64 0x61C8864680B583EBull
#endif
