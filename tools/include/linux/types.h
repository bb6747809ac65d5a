/* SPDX-License-Identifier: GPL-2.0 */
/* Minimal user-space stand-ins for the kernel APIs twheel_core.c uses. */
#ifndef _SHIM_LINUX_TYPES_H
#define _SHIM_LINUX_TYPES_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
typedef uint64_t u64;
typedef uint32_t u32;
typedef int64_t s64;
#endif
