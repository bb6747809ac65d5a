/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_STDARG_H
#define _SHIM_LINUX_STDARG_H
#include <stdarg.h>
#endif
