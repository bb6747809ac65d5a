/* SPDX-License-Identifier: GPL-2.0 */
/* pr_*() on stdout as "#" lines: comments in a test's TAP output. */
#ifndef _SHIM_LINUX_PRINTK_H
#define _SHIM_LINUX_PRINTK_H
#include <stdio.h>
#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif
#define pr_err(fmt, ...)	printf("# " pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...)	printf("# " pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...)	printf("# " pr_fmt(fmt), ##__VA_ARGS__)
#endif
