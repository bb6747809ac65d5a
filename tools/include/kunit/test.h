/* SPDX-License-Identifier: GPL-2.0 */
/*
 * <kunit/test.h> in user space: KUnit suites written for the kernel run
 * as a program.  The program links the suites' .c files and calls
 * kunit_run_all() (selftests/core/kunit_core.c), which runs every suite
 * kunit_test_suite() registered, in link order, as the kernel runs those
 * of one module.
 *
 * As in KUnit, a failed EXPECT marks the case failed and the case goes on;
 * a failed ASSERT, or kunit_skip(), also ends the case (a longjmp() back to
 * the runner).  kunit_kzalloc() and friends allocate with malloc() and
 * whatever a case leaves is freed when it ends, whatever its outcome.
 *
 * TAP on stdout: "ok N case" or "not ok N case" per case, what went wrong
 * before it as "#" lines (file:line, the expressions and their values),
 * then "# N passed, N failed", with ", N skipped" if any were (the line
 * scripts/lib/tap.sh's tap_summary prints and tap_fold_summary reads).
 */
#ifndef _SHIM_KUNIT_TEST_H
#define _SHIM_KUNIT_TEST_H
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/kernel.h>
#include <linux/slab.h>

enum kunit_status { KUNIT_SUCCESS, KUNIT_FAILURE, KUNIT_SKIPPED };
enum kunit_assert_type { KUNIT_ASSERTION, KUNIT_EXPECTATION };

/* One allocation of a case, freed when the case ends. */
struct kunit_resource {
	void *ptr;
	struct kunit_resource *next;
};

struct kunit {
	const char *name;		/* of the case */
	enum kunit_status status;
	char status_comment[256];	/* why it was skipped */
	struct kunit_resource *resources;
	jmp_buf abort;
};

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
};

#define KUNIT_CASE(test_name) { .run_case = test_name, .name = #test_name }

struct kunit_suite {
	const char *name;
	int (*suite_init)(struct kunit_suite *suite);
	void (*suite_exit)(struct kunit_suite *suite);
	int (*init)(struct kunit *test);
	void (*exit)(struct kunit *test);
	struct kunit_case *test_cases;
};

/*
 * The suites of a file, for kunit_run_all(): in the section kunit_suites,
 * which the linker brackets with __start_ and __stop_ symbols, as the
 * kernel gathers a module's suites in .kunit_test_suites.
 */
#define kunit_test_suites(...)						\
	static struct kunit_suite *kunit_suites_of_file[]		\
	__attribute__((used, section("kunit_suites"))) = { __VA_ARGS__ }
#define kunit_test_suite(suite)	kunit_test_suites(&suite)

extern struct kunit_suite *__start_kunit_suites[];
extern struct kunit_suite *__stop_kunit_suites[];

/* ------------------------------------------------------------- messages */

/* "# case: message", the newline added if @fmt has none. */
static inline __printf(2, 3) void kunit_print(const char *name,
					      const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	size_t len;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	len = strlen(buf);
	printf("# %s: %s%s", name, buf, len && buf[len - 1] == '\n' ? "" : "\n");
}

#define kunit_info(test, fmt, ...)	kunit_print((test)->name, fmt, ##__VA_ARGS__)
#define kunit_warn(test, fmt, ...)	kunit_print((test)->name, fmt, ##__VA_ARGS__)
#define kunit_err(test, fmt, ...)	kunit_print((test)->name, fmt, ##__VA_ARGS__)

static inline __noreturn void kunit_abort(struct kunit *test)
{
	longjmp(test->abort, 1);
}

#define kunit_mark_skipped(test, fmt, ...) do {				\
	(test)->status = KUNIT_SKIPPED;					\
	snprintf((test)->status_comment, sizeof((test)->status_comment), \
		 fmt, ##__VA_ARGS__);					\
} while (0)

#define kunit_skip(test, fmt, ...) do {					\
	kunit_mark_skipped(test, fmt, ##__VA_ARGS__);			\
	kunit_abort(test);						\
} while (0)

/* ------------------------------------------------------ EXPECT, ASSERT */

/* An integer compared, with what it takes to print it back. */
struct kunit_int {
	unsigned long long v;
	bool is_signed;
};

#define kunit_int(x) \
	((struct kunit_int){ (unsigned long long)(x), (__typeof__(x))-1 < 1 })

static inline void kunit_print_int(const char *text, struct kunit_int x)
{
	if (x.is_signed)
		printf("#         %s == %lld\n", text, (long long)x.v);
	else
		printf("#         %s == %llu (%#llx)\n", text, x.v, x.v);
}

/* The first line of a failure: where it is; the case has failed. */
static inline void kunit_failed_at(struct kunit *test,
				   enum kunit_assert_type type,
				   const char *file, int line)
{
	test->status = KUNIT_FAILURE;
	kunit_print(test->name, "%s FAILED at %s:%d",
		    type == KUNIT_ASSERTION ? "ASSERTION" : "EXPECTATION",
		    file, line);
}

/* The last: the caller's message (@fmt may be NULL); an ASSERT ends here. */
static inline __printf(3, 4) void kunit_failed_msg(struct kunit *test,
						   enum kunit_assert_type type,
						   const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		printf("#     %s\n", buf);
	}
	if (type == KUNIT_ASSERTION)
		kunit_abort(test);
}

#define KUNIT_FAIL_ASSERTION(test, type, fmt, ...) do {			\
	kunit_failed_at(test, type, __FILE__, __LINE__);		\
	kunit_failed_msg(test, type, fmt, ##__VA_ARGS__);		\
} while (0)

#define KUNIT_FAIL(test, fmt, ...) \
	KUNIT_FAIL_ASSERTION(test, KUNIT_EXPECTATION, fmt, ##__VA_ARGS__)
#define KUNIT_FAIL_AND_ABORT(test, fmt, ...) \
	KUNIT_FAIL_ASSERTION(test, KUNIT_ASSERTION, fmt, ##__VA_ARGS__)

#define KUNIT_BOOLEAN(test, type, cond, want, fmt, ...) do {		\
	if (!(cond) != !(want)) {					\
		kunit_failed_at(test, type, __FILE__, __LINE__);	\
		printf("#     Expected %s to be %s, but is %s\n", #cond,	\
		       (want) ? "true" : "false", (want) ? "false" : "true"); \
		kunit_failed_msg(test, type, fmt, ##__VA_ARGS__);	\
	}								\
} while (0)

/* @left and @right compared as they are: the usual C conversions apply. */
#define KUNIT_BINARY_INT(test, type, left, op, right, fmt, ...) do {	\
	const __typeof__(left) __left = (left);				\
	const __typeof__(right) __right = (right);			\
									\
	if (!(__left op __right)) {					\
		kunit_failed_at(test, type, __FILE__, __LINE__);	\
		printf("#     Expected %s %s %s, but\n", #left, #op, #right); \
		kunit_print_int(#left, kunit_int(__left));		\
		kunit_print_int(#right, kunit_int(__right));		\
		kunit_failed_msg(test, type, fmt, ##__VA_ARGS__);	\
	}								\
} while (0)

#define KUNIT_BINARY_PTR(test, type, left, op, right, fmt, ...) do {	\
	const void *__left = (left);					\
	const void *__right = (right);					\
									\
	if (!(__left op __right)) {					\
		kunit_failed_at(test, type, __FILE__, __LINE__);	\
		printf("#     Expected %s %s %s, but\n", #left, #op, #right); \
		printf("#         %s == %p\n", #left, __left);		\
		printf("#         %s == %p\n", #right, __right);	\
		kunit_failed_msg(test, type, fmt, ##__VA_ARGS__);	\
	}								\
} while (0)

#define KUNIT_EXPECT_TRUE_MSG(test, c, fmt, ...) \
	KUNIT_BOOLEAN(test, KUNIT_EXPECTATION, c, true, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_FALSE_MSG(test, c, fmt, ...) \
	KUNIT_BOOLEAN(test, KUNIT_EXPECTATION, c, false, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_TRUE_MSG(test, c, fmt, ...) \
	KUNIT_BOOLEAN(test, KUNIT_ASSERTION, c, true, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_FALSE_MSG(test, c, fmt, ...) \
	KUNIT_BOOLEAN(test, KUNIT_ASSERTION, c, false, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_EQ_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_EXPECTATION, l, ==, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_NE_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_EXPECTATION, l, !=, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_LT_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_EXPECTATION, l, <, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_LE_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_EXPECTATION, l, <=, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_GT_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_EXPECTATION, l, >, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_GE_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_EXPECTATION, l, >=, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_EQ_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_ASSERTION, l, ==, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_NE_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_ASSERTION, l, !=, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_LT_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_ASSERTION, l, <, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_LE_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_ASSERTION, l, <=, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_GT_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_ASSERTION, l, >, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_GE_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_INT(test, KUNIT_ASSERTION, l, >=, r, fmt, ##__VA_ARGS__)

#define KUNIT_EXPECT_PTR_EQ_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_PTR(test, KUNIT_EXPECTATION, l, ==, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_PTR_NE_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_PTR(test, KUNIT_EXPECTATION, l, !=, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_PTR_EQ_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_PTR(test, KUNIT_ASSERTION, l, ==, r, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_PTR_NE_MSG(test, l, r, fmt, ...) \
	KUNIT_BINARY_PTR(test, KUNIT_ASSERTION, l, !=, r, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_NULL_MSG(test, p, fmt, ...) \
	KUNIT_EXPECT_PTR_EQ_MSG(test, p, NULL, fmt, ##__VA_ARGS__)
#define KUNIT_EXPECT_NOT_NULL_MSG(test, p, fmt, ...) \
	KUNIT_EXPECT_PTR_NE_MSG(test, p, NULL, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_NULL_MSG(test, p, fmt, ...) \
	KUNIT_ASSERT_PTR_EQ_MSG(test, p, NULL, fmt, ##__VA_ARGS__)
#define KUNIT_ASSERT_NOT_NULL_MSG(test, p, fmt, ...) \
	KUNIT_ASSERT_PTR_NE_MSG(test, p, NULL, fmt, ##__VA_ARGS__)

/* Without a message: the same with fmt NULL. */
#define KUNIT_EXPECT_TRUE(test, c)	KUNIT_EXPECT_TRUE_MSG(test, c, NULL)
#define KUNIT_EXPECT_FALSE(test, c)	KUNIT_EXPECT_FALSE_MSG(test, c, NULL)
#define KUNIT_ASSERT_TRUE(test, c)	KUNIT_ASSERT_TRUE_MSG(test, c, NULL)
#define KUNIT_ASSERT_FALSE(test, c)	KUNIT_ASSERT_FALSE_MSG(test, c, NULL)
#define KUNIT_EXPECT_EQ(test, l, r)	KUNIT_EXPECT_EQ_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_NE(test, l, r)	KUNIT_EXPECT_NE_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_LT(test, l, r)	KUNIT_EXPECT_LT_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_LE(test, l, r)	KUNIT_EXPECT_LE_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_GT(test, l, r)	KUNIT_EXPECT_GT_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_GE(test, l, r)	KUNIT_EXPECT_GE_MSG(test, l, r, NULL)
#define KUNIT_ASSERT_EQ(test, l, r)	KUNIT_ASSERT_EQ_MSG(test, l, r, NULL)
#define KUNIT_ASSERT_NE(test, l, r)	KUNIT_ASSERT_NE_MSG(test, l, r, NULL)
#define KUNIT_ASSERT_LT(test, l, r)	KUNIT_ASSERT_LT_MSG(test, l, r, NULL)
#define KUNIT_ASSERT_LE(test, l, r)	KUNIT_ASSERT_LE_MSG(test, l, r, NULL)
#define KUNIT_ASSERT_GT(test, l, r)	KUNIT_ASSERT_GT_MSG(test, l, r, NULL)
#define KUNIT_ASSERT_GE(test, l, r)	KUNIT_ASSERT_GE_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_PTR_EQ(test, l, r)	KUNIT_EXPECT_PTR_EQ_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_PTR_NE(test, l, r)	KUNIT_EXPECT_PTR_NE_MSG(test, l, r, NULL)
#define KUNIT_ASSERT_PTR_EQ(test, l, r)	KUNIT_ASSERT_PTR_EQ_MSG(test, l, r, NULL)
#define KUNIT_ASSERT_PTR_NE(test, l, r)	KUNIT_ASSERT_PTR_NE_MSG(test, l, r, NULL)
#define KUNIT_EXPECT_NULL(test, p)	KUNIT_EXPECT_NULL_MSG(test, p, NULL)
#define KUNIT_EXPECT_NOT_NULL(test, p)	KUNIT_EXPECT_NOT_NULL_MSG(test, p, NULL)
#define KUNIT_ASSERT_NULL(test, p)	KUNIT_ASSERT_NULL_MSG(test, p, NULL)
#define KUNIT_ASSERT_NOT_NULL(test, p)	KUNIT_ASSERT_NOT_NULL_MSG(test, p, NULL)

/* ---------------------------------------------------------- allocations */

/* Not zeroed unless __GFP_ZERO: filled with 0xa5, as no test may rely on. */
static inline void *kunit_kmalloc_array(struct kunit *test, size_t n,
					size_t size, gfp_t gfp)
{
	struct kunit_resource *r;
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	r = malloc(sizeof(*r));
	if (!r)
		return NULL;
	r->ptr = malloc(bytes ?: 1);
	if (!r->ptr) {
		free(r);
		return NULL;
	}
	memset(r->ptr, gfp & __GFP_ZERO ? 0 : 0xa5, bytes);
	r->next = test->resources;
	test->resources = r;
	return r->ptr;
}

#define kunit_kmalloc(test, size, gfp)	kunit_kmalloc_array(test, 1, size, gfp)
#define kunit_kzalloc(test, size, gfp) \
	kunit_kmalloc_array(test, 1, size, (gfp) | __GFP_ZERO)
#define kunit_kcalloc(test, n, size, gfp) \
	kunit_kmalloc_array(test, n, size, (gfp) | __GFP_ZERO)

static inline void kunit_kfree(struct kunit *test, const void *ptr)
{
	struct kunit_resource **p, *r;

	if (!ptr)
		return;
	for (p = &test->resources; *p; p = &(*p)->next) {
		if ((*p)->ptr == ptr) {
			r = *p;
			*p = r->next;
			free(r->ptr);
			free(r);
			return;
		}
	}
	KUNIT_FAIL(test, "kunit_kfree(%p): not allocated by kunit_kmalloc()",
		   ptr);
}

/* -------------------------------------------------------------- runner */

static inline void kunit_run_case(struct kunit_suite *suite,
				  struct kunit_case *c, struct kunit *test)
{
	struct kunit_resource *r;
	int err;

	if (!setjmp(test->abort)) {
		err = suite->init ? suite->init(test) : 0;
		if (err)
			KUNIT_FAIL(test, "init failed: %d", err);
		else
			c->run_case(test);
	}
	if (suite->exit && !setjmp(test->abort))
		suite->exit(test);
	while ((r = test->resources)) {
		test->resources = r->next;
		free(r->ptr);
		free(r);
	}
}

/* TAP for every case of @suites; 0 if none failed. */
static inline int kunit_run_suites(struct kunit_suite **suites, int nr)
{
	int i, k, n = 0, pass = 0, fail = 0, skip = 0;
	struct kunit_case *c;

	/* line by line: a sanitizer's report must not swallow the TAP lines */
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < nr; i++)
		for (c = suites[i]->test_cases; c->run_case; c++)
			n++;
	printf("TAP version 13\n1..%d\n", n);
	for (i = 0, k = 0; i < nr; i++) {
		struct kunit_suite *s = suites[i];
		int err = 0;

		printf("# Subtest: %s\n", s->name);
		if (s->suite_init)
			err = s->suite_init(s);
		if (err)
			printf("# %s: suite_init failed: %d\n", s->name, err);
		for (c = s->test_cases; c->run_case; c++) {
			struct kunit test = { .name = c->name };

			if (!err)
				kunit_run_case(s, c, &test);
			else
				test.status = KUNIT_FAILURE;
			k++;
			if (test.status == KUNIT_SKIPPED) {
				printf("ok %d %s # SKIP %s\n", k, c->name,
				       test.status_comment);
				skip++;
			} else {
				printf("%s %d %s\n", test.status ? "not ok" : "ok",
				       k, c->name);
				if (test.status)
					fail++;
				else
					pass++;
			}
		}
		if (s->suite_exit && !err)
			s->suite_exit(s);
	}
	printf("# %d passed, %d failed", pass, fail);
	if (skip)
		printf(", %d skipped", skip);
	printf("\n");
	return fail ? 1 : 0;
}

#define kunit_run_all()							\
	kunit_run_suites(__start_kunit_suites,				\
			 __stop_kunit_suites - __start_kunit_suites)

#endif
