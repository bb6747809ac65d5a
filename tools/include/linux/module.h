/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A module's declarations in a program.  MODULE_*() declare nothing;
 * module_param() only checks the variable's type, and the program sets the
 * variable itself (kunit_core.c: from the environment).
 */
#ifndef _SHIM_LINUX_MODULE_H
#define _SHIM_LINUX_MODULE_H
#include <linux/types.h>
#define module_param(name, type, perm) \
	_Static_assert(__builtin_types_compatible_p(__typeof__(name), type), \
		       "module_param(" #name "): not a " #type)
#define MODULE_INFO(tag, info)		_Static_assert(1, info)
#define MODULE_PARM_DESC(name, desc)	MODULE_INFO(parm, desc)
#define MODULE_LICENSE(license)		MODULE_INFO(license, license)
#define MODULE_AUTHOR(author)		MODULE_INFO(author, author)
#define MODULE_DESCRIPTION(desc)	MODULE_INFO(description, desc)
#endif
