/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_KERNEL_H
#define _SHIM_LINUX_KERNEL_H
#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/printk.h>
#include <linux/types.h>
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
