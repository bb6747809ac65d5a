// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_key": the keys of the index: home slots, and ids chosen
 * to collide (flooding).
 *
 * One of the suites of twheel_kunit.ko; kunit_helpers.h has the helpers
 * they share and how the module and its user-space build run them.
 *
 * This file includes index.c, the module's copy of the index (see
 * wheel_kunit.c), whose static tw_home() and tw_home_key() it checks.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/twheel.h>

#include "index.c"

#include "wheel.h"
#include "model.h"
#include "kunit_helpers.h"

/*
 * tw_home_key() is ceil(p * 2^64 / size): the first key at home in slot
 * p, for sizes past 2^32 too (up to TW_IDX_MAX, room for 2^32 ids), and
 * the sizes the index grows to reach that many ids.
 */
static void twt_index_home_key(struct kunit *test)
{
	static const u64 sizes[] = {
		TW_IDX_MIN, 100, U32_MAX, BIT_ULL(32), BIT_ULL(32) + 7,
		3 * BIT_ULL(31) + 1, BIT_ULL(33) - 1, BIT_ULL(33),
	};
	struct tw_index x = { .size = TW_IDX_MIN };
	unsigned int i, j, grows = 0;
	unsigned long want;
	u64 ids;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		unsigned long size = sizes[i];
		const unsigned long ps[] = {
			1, 2, size / 3, size / 2, size - 2, size - 1,
		};

		if (sizes[i] > TW_IDX_MAX)
			continue;	/* 32 bits */
		for (j = 0; j < ARRAY_SIZE(ps); j++) {
			u64 k = tw_home_key(ps[j], size);

			KUNIT_EXPECT_EQ_MSG(test, tw_home(k, size), ps[j],
					    "size %lu", size);
			KUNIT_EXPECT_LT_MSG(test, tw_home(k - 1, size), ps[j],
					    "size %lu", size);
		}
	}
	if (BITS_PER_LONG == 32)
		return;
	KUNIT_EXPECT_EQ(test, (u64)TW_IDX_MAX, BIT_ULL(33));
	for (ids = 1; ids <= TWHEEL_MAX_IDS_LIMIT; ids += 1 + ids / 64) {
		x.nr = ids - 1;
		want = tw_index_want_size(&x, 1);
		if (want) {
			x.size = want;
			grows++;
		}
		KUNIT_ASSERT_TRUE_MSG(test, tw_index_fits(ids, x.size),
				      "%llu ids in %lu slots", ids, x.size);
	}
	/* the limit itself, which the steps above need not meet */
	x.nr = TWHEEL_MAX_IDS_LIMIT - 1;
	want = tw_index_want_size(&x, 1);
	if (want)
		x.size = want;
	KUNIT_EXPECT_TRUE(test, tw_index_fits(TWHEEL_MAX_IDS_LIMIT, x.size));
	KUNIT_EXPECT_LE(test, x.size, TW_IDX_MAX);
	KUNIT_EXPECT_GT(test, grows, 50U);
}

/*
 * Hash flooding: families of structured ids must probe like random ids.
 * Among them the ids whose keys were 0, 1, 2, ... under the fixed
 * multiplier of the unkeyed index (GOLDEN_RATIO_64: one home, one run for
 * them all), and the multiples of 2^j for every j up to 47, which a key
 * of two multiply-fold steps left an arithmetic progression (for some
 * secrets 4 to 20 times longer probes).  A lookup of an entry reads its
 * distance from home plus one slots: the mean of that is the cost of a
 * touch, its maximum the longest probe.  Each family fills a table to
 * 3/4 and one to 9/10 (the bounds a resize keeps it in), and its mean
 * may be at most 1.25 times, its longest probe 3 times, random ids'.
 *
 * Counted, not timed, and from the homes alone: an ordered table's layout
 * follows from its keys (twt_check_tab()), which twt_flood_table() checks
 * against real tables.  The secret is fixed, not drawn from kunit_seed:
 * over 1,200 secrets one family once reached 1.34 times random ids' mean,
 * and a test that fails one run in a thousand is no test.  With it the
 * worst family is at 1.09 times the mean and 1.56 times the longest
 * probe; with the second fold of tw_key() left out, at 6.7 and 4.5.
 */
#define TWT_FLOOD_N		100000

#define TWT_FLOOD_FAMILIES	(10 + 47)

#define TWT_FLOOD_SECRET	101

#define TWT_GOLDEN_INV		0x0e217c1e66c88cc3ULL	/* GOLDEN_RATIO_64^-1 */

/* Id @i of family @fam; after the first ten, i << 1 .. i << 47. */
static u64 twt_flood_id(unsigned int fam, u64 i)
{
	switch (fam) {
	case 0:
		return twt_rand(&i);			/* random */
	case 1:
		return i;
	case 2:
		return i << 20;
	case 3:
		return i << 32;
	case 4:
		return i << 44;
	case 5:
		return i * TWM_GAMMA;			/* splitmix64's increment */
	case 6:
		return i * TWT_GOLDEN_INV;		/* old keys 0, 1, 2, ... */
	case 7:
		return (0xabcdULL << 48 | i << 8) * TWT_GOLDEN_INV;
	case 8:
		return 0xffff000000000000ULL | i;	/* top bits shared */
	case 9:
		return ~i;				/* counting down */
	default:
		return i << (fam - 9);
	}
}

/* The probes of a table's ids: their sum and the longest. */
struct twt_probe {
	u64 sum;
	unsigned long max;
};

/*
 * The probes of an ordered table from the number of ids at home in each
 * slot, @homes[0..@size): in slot order, the ids of a home take the slots
 * after those still waiting for one.  The ids that wrap past the end come
 * first in slot 0, so the sweep goes round until the wait it carries over
 * repeats.  False if it does not (the table would be full).
 */
static bool twt_flood_sweep(const u8 *homes, unsigned long size,
			    struct twt_probe *p)
{
	unsigned long wait = 0, last = ULONG_MAX, h;
	unsigned int lap;

	for (lap = 0; lap < 3; lap++) {
		p->sum = 0;
		p->max = 0;
		for (h = 0; h < size; h++) {
			unsigned long c = homes[h];

			/* probes wait + 1 .. wait + c */
			if (c) {
				p->sum += (u64)c * wait + c * (c + 1) / 2;
				p->max = max(p->max, wait + c);
			}
			wait = wait + c ? wait + c - 1 : 0;
		}
		if (wait == last)
			return true;
		last = wait;
	}
	return false;
}

/*
 * The probes of ids 0..@n - 1 of family @fam in a table of @size slots
 * keyed by @x, with @homes as room for the count.  False if a slot is
 * home to U8_MAX ids or more, which no table of these sizes survives.
 */
static bool twt_flood_count(const struct tw_index *x, u8 *homes,
			    unsigned int fam, unsigned long n,
			    unsigned long size, struct twt_probe *p)
{
	unsigned long i;

	memset(homes, 0, size);
	for (i = 0; i < n; i++) {
		u8 *h = &homes[twm_home(tw_key(x, twt_flood_id(fam, i)), size)];

		if (*h == U8_MAX)
			return false;
		++*h;
	}
	return twt_flood_sweep(homes, size, p);
}

/*
 * The probes of @n ids of family @fam read off a real table of @size
 * slots, which twt_check() finds whole: the count gives the same.
 */
static void twt_flood_table(struct kunit *test, u8 *homes, unsigned int fam,
			    unsigned int n, unsigned long size)
{
	struct twt_ix *c = twt_ix(test, size, n);
	struct twt_probe p = {}, q;
	unsigned long h;
	unsigned int i;

	for (i = 0; i < n; i++) {
		c->nodes[i].id = twt_flood_id(fam, i);
		twt_ins(c, i, i);
	}
	twt_check(c);
	for (h = 0; h < size; h++) {
		const struct tw_ent *e = &c->x.tab[h];
		unsigned long home, d;

		if (!e->node)
			continue;
		home = twm_home(tw_key(&c->x, e->id), size);
		d = (h >= home ? h - home : h + size - home) + 1;
		p.sum += d;
		p.max = max(p.max, d);
	}
	KUNIT_ASSERT_TRUE(test, twt_flood_count(&c->x, homes, fam, n, size,
						&q));
	KUNIT_EXPECT_EQ_MSG(test, q.sum, p.sum, "family %u, %lu slots", fam,
			    size);
	KUNIT_EXPECT_EQ_MSG(test, q.max, p.max, "family %u, %lu slots", fam,
			    size);
}

/* Family @fam in tables 3/4 and 9/10 full against random ids @rnd. */
static void twt_flood_family(struct kunit *test, const struct tw_index *x,
			     u8 *homes, unsigned int fam,
			     const unsigned long *sizes,
			     const struct twt_probe *rnd, u64 *worst)
{
	struct twt_probe p;
	unsigned int f;

	for (f = 0; f < 2; f++) {
		bool ok = twt_flood_count(x, homes, fam, TWT_FLOOD_N, sizes[f],
					  &p);

		KUNIT_EXPECT_TRUE_MSG(test, ok && 4 * p.sum <= 5 * rnd[f].sum &&
				      p.max <= 3 * rnd[f].max,
				      "family %u, %s full: probes %llu, longest %lu; random ids' %llu, %lu",
				      fam, f ? "9/10" : "3/4", ok ? p.sum : 0,
				      ok ? p.max : 0, rnd[f].sum, rnd[f].max);
		if (!ok)
			continue;
		/* the worst ratios, in thousandths */
		worst[0] = max(worst[0], div64_u64(1000 * p.sum, rnd[f].sum));
		worst[1] = max_t(u64, worst[1], 1000 * p.max / rnd[f].max);
	}
}

static void twt_index_flooding(struct kunit *test)
{
	static const unsigned int real[] = { 0, 1, 6, TWT_FLOOD_FAMILIES - 1 };
	const unsigned long sizes[2] = {
		TWT_FLOOD_N * 4 / 3 + 1, TWT_FLOOD_N * 10 / 9 + 1,
	};
	u8 *homes = kunit_kmalloc(test, sizes[0], GFP_KERNEL);
	u64 worst[2] = {};
	struct twt_probe rnd[2];
	u64 s = TWT_FLOOD_SECRET, secret[TW_SECRET_WORDS];
	struct tw_index x;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, homes);
	for (i = 0; i < ARRAY_SIZE(real); i++) {
		twt_flood_table(test, homes, real[i], 5000, 5000 * 4 / 3 + 1);
		twt_flood_table(test, homes, real[i], 5000, 5000 * 10 / 9 + 1);
	}
	for (i = 0; i < TW_SECRET_WORDS; i++)
		secret[i] = twt_rand(&s);
	tw_index_init(&x, NULL, TW_IDX_MIN, secret);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_TRUE(test, twt_flood_count(&x, homes, 0, TWT_FLOOD_N,
							sizes[i], &rnd[i]));
	for (i = 0; i < TWT_FLOOD_FAMILIES; i++)
		twt_flood_family(test, &x, homes, i, sizes, rnd, worst);
	kunit_info(test, "%u families of %u ids: mean probe at most %llu/1000, longest at most %llu/1000 of random ids'",
		   TWT_FLOOD_FAMILIES, TWT_FLOOD_N, worst[0], worst[1]);
}

static struct kunit_case twt_key_cases[] = {
	KUNIT_CASE(twt_index_home_key),
	KUNIT_CASE(twt_index_flooding),
	{}
};

static struct kunit_suite twt_key_suite = {
	.name = "twheel_key",
	.suite_init = twt_suite_init,
	.test_cases = twt_key_cases,
};

kunit_test_suite(twt_key_suite);
