// SPDX-License-Identifier: GPL-2.0
/*
 * The KUnit suites of the core, kmod/<concern>_kunit.c, as a user-space program
 * under ASan and UBSan: the suites' files are linked in as they are, over
 * the kernel shims of tools/include (KUnit's in tools/include/kunit/test.h),
 * the way tools/testing/radix-tree builds lib/test_xarray.c.  The same
 * cases run in twheel_kunit.ko on a kernel with KUnit.
 *
 * TWHEEL_SEED=N stands for the module parameter kunit_seed=N (unset or 0:
 * a random seed, printed).  TAP output, then "# N passed, N failed".
 */
#include <stdio.h>
#include <stdlib.h>

#include <kunit/test.h>

#include "kunit_helpers.h"

int main(void)
{
	const char *env = getenv("TWHEEL_SEED");
	char *end;

	if (env) {
		kunit_seed = strtoul(env, &end, 0);
		if (!*env || *end) {
			fprintf(stderr, "TWHEEL_SEED=%s: not a number\n", env);
			return 2;
		}
	}
	return kunit_run_all();
}
