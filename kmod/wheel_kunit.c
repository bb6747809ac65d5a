// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_wheel": the slots: where a node is armed, how it moves
 * down the levels, when the wheel next has work.
 *
 * One of the suites of twheel_kunit.ko; kunit_helpers.h has the helpers
 * they share and how the module and its user-space build run them.
 *
 * This file includes wheel.c: the wheel of twheel_kunit.ko is its own copy
 * of the very code twheel.ko runs (as tools/testing/radix-tree builds
 * lib/xarray.c with its test), not a call into twheel.ko.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/twheel.h>

#include "wheel.c"

#include "wheel.h"
#include "model.h"
#include "kunit_helpers.h"

#define TWT_US		1000ULL

#define TWT_LVL_TICKS(l)	(1ULL << ((l) * TW_LVL_BITS))

static void twt_ticks_rounding(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);

	KUNIT_EXPECT_EQ(test, tw_ticks(w, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 1), 1ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, TWT_MS - 1), 1ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, TWT_MS), 1ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, TWT_MS + 1), 2ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 5 * TWT_MS), 5ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 5 * TWT_MS + 1), 6ULL);

	/* The smallest tick; 2^63 - 1 = 92233720368547 * 10^5 + 75807. */
	twt_reinit(w, TWHEEL_TICK_MIN_NS, 0);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 300000), 3ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 300001), 4ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 9223372036854700000ULL),
			92233720368547ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 9223372036854700001ULL),
			92233720368548ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, TWHEEL_DEADLINE_MAX),
			92233720368548ULL);
	KUNIT_EXPECT_LT(test, tw_ticks(w, TWHEEL_DEADLINE_MAX), TW_TICKS_MAX);

	/* The largest tick; 2^63 - 1 = 2562047 * 3.6 * 10^12 + 2836854775807. */
	twt_reinit(w, TWHEEL_TICK_MAX_NS, 0);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 1), 1ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, TWHEEL_TICK_MAX_NS), 1ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, TWHEEL_TICK_MAX_NS + 1), 2ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 2562047ULL * TWHEEL_TICK_MAX_NS),
			2562047ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, TWHEEL_DEADLINE_MAX), 2562048ULL);

	/* Rounding up never overflows: U64_MAX = (2^63 - 1) * 2 + 1. */
	twt_reinit(w, 2, 0);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, U64_MAX), BIT_ULL(63));
	twt_reinit(w, 1, 0);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, U64_MAX), U64_MAX);
}

static void twt_init_and_next_empty(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 5 * TWT_MS + 999999);
	struct tw_node *n, *s = w->tail;
	struct tw_ent *e;
	unsigned int l;
	u64 t = 12345;

	KUNIT_EXPECT_EQ(test, w->cur, 5ULL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 0UL);
	for (l = 0; l < TW_LEVELS; l++)
		KUNIT_EXPECT_EQ(test, w->pending[l], 0ULL);
	/* The queue: the sentinel alone. */
	KUNIT_EXPECT_NOT_NULL(test, w->idx);
	KUNIT_EXPECT_NOT_NULL(test, s);
	KUNIT_EXPECT_PTR_EQ(test, w->head, s);
	KUNIT_EXPECT_NULL(test, s->next);
	twt_check_queue(test, w);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));

	/* Armed, then disarmed: empty again. */
	n = twt_arm(test, w, 1, 100 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 1UL);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_LE(test, t, 100ULL);
	twt_disarm(test, w, n);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->idx->nr, 0UL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));

	/* A deadline already processed waits in the drain list at cur. */
	n = twt_arm(test, w, 2, 4 * TWT_MS);
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, n));
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, 5ULL);
	twt_advance(test, w, 5 * TWT_MS + 999999);
	twt_expect_expired(test, w, 2, 5 * TWT_MS + 999999);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));
	/* The event went into the sentinel; the node is the new sentinel. */
	KUNIT_EXPECT_PTR_EQ(test, w->head, s);
	KUNIT_EXPECT_PTR_EQ(test, s->next, n);
	KUNIT_EXPECT_PTR_EQ(test, w->tail, n);
	KUNIT_EXPECT_PTR_EQ(test, twt_ent(test, w, 2)->node, s);
	twt_check_queue(test, w);

	/* Popped: its entry still points at it, marked, until removed. */
	KUNIT_EXPECT_PTR_EQ(test, tw_wheel_pop(w), s);
	e = twt_ent(test, w, 2);
	KUNIT_EXPECT_PTR_EQ(test, e->node, s);
	KUNIT_EXPECT_TRUE(test, tw_ent_queued(e));
	KUNIT_EXPECT_EQ(test, s->id, 2ULL);
	KUNIT_EXPECT_EQ(test, s->data, twt_data(2));
	KUNIT_EXPECT_EQ(test, s->expired, 5 * TWT_MS + 999999);
	tw_index_remove(w->idx, e);
	KUNIT_EXPECT_FALSE(test, twt_queued(w, 2));
	KUNIT_EXPECT_FALSE(test, twt_in_drain(w, n));
	KUNIT_EXPECT_EQ(test, w->nr_ready, 0UL);
	KUNIT_EXPECT_PTR_EQ(test, w->head, n);
	twt_check_queue(test, w);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));
}

struct twt_pos {
	u64 cur, e;
	unsigned int lvl, slot;
};

/* Hand-computed: the highest differing bit picks the level. */
static const struct twt_pos twt_pos_table[] = {
	{ 0, 1, 0, 1 },
	{ 0, 63, 0, 63 },
	{ 0, 64, 1, 1 },
	{ 0, 4095, 1, 63 },
	{ 0, 4096, 2, 1 },
	{ 0, BIT_ULL(42), 7, 1 },
	{ 0, TW_TICKS_MAX - 1, 7, 63 },
	{ 1000, 1001, 0, 41 },
	{ 1000, 1023, 0, 63 },
	{ 1000, 1024, 1, 16 },
	{ 1000, 5096, 2, 1 },
	{ 63, 64, 1, 1 },
	{ BIT_ULL(42) - 1, BIT_ULL(42), 7, 1 },
	{ BIT_ULL(42) - 1, BIT_ULL(42) + 5, 7, 1 },
	{ TW_TICKS_MAX - 2, TW_TICKS_MAX - 1, 0, 63 },
	{ 0xabcdef012345ULL, 0xabcdef013345ULL, 2, 19 },
	{ 0xabcdef012345ULL, 0xabce2f012345ULL, 5, 56 },
};

static void twt_slot_table(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_US, 0);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(twt_pos_table); i++) {
		const struct twt_pos *p = &twt_pos_table[i];
		struct tw_node *n;

		twt_reinit(w, TWT_US, p->cur * TWT_US + 999);
		n = twt_arm(test, w, i, p->e * TWT_US - 1);
		KUNIT_EXPECT_EQ(test, w->cur, p->cur);
		twt_expect_at(test, w, n, p->lvl, p->slot);
		twt_check_pending(test, w);
	}
}

static void twt_slot_formula(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_US, 0);
	u64 seed = 1;
	unsigned int i;

	for (i = 0; i < 300; i++) {
		u64 cur = twt_rand(&seed) % (TW_TICKS_MAX - 1);
		u64 span = min(BIT_ULL(twt_rand(&seed) % 49),
			       TW_TICKS_MAX - 1 - cur);
		u64 e = cur + 1 + twt_rand(&seed) % span;
		unsigned int lvl = (fls64(e ^ cur) - 1) / TW_LVL_BITS;
		struct tw_node *n;

		twt_reinit(w, TWT_US, cur * TWT_US + twt_rand(&seed) % TWT_US);
		n = twt_arm(test, w, i, e * TWT_US - twt_rand(&seed) % TWT_US);
		KUNIT_EXPECT_LT(test, lvl, (unsigned int)TW_LEVELS);
		twt_expect_at(test, w, n, lvl,
			      (e >> (lvl * TW_LVL_BITS)) & TW_LVL_MASK);
		KUNIT_EXPECT_EQ(test, hweight64(w->pending[lvl]), 1U);
		KUNIT_EXPECT_EQ(test, w->nr_armed, 1UL);
	}
}

static void twt_pending_cleared_by_del(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_US, 0);
	struct tw_node *a, *b, *c, *d, *top;
	unsigned int l;
	u64 t;

	/* b is the head of slot 10, a its tail; head removed first. */
	a = twt_arm(test, w, 1, 10 * TWT_US);
	b = twt_arm(test, w, 2, 10 * TWT_US - 5);
	c = twt_arm(test, w, 3, 11 * TWT_US);
	top = twt_arm(test, w, 4, (TW_TICKS_MAX - 1) * TWT_US);
	twt_expect_at(test, w, a, 0, 10);
	twt_expect_at(test, w, b, 0, 10);
	twt_expect_at(test, w, top, 7, 63);
	twt_disarm(test, w, b);
	KUNIT_EXPECT_TRUE(test, w->pending[0] & BIT_ULL(10));
	twt_expect_at(test, w, a, 0, 10);
	twt_disarm(test, w, a);
	KUNIT_EXPECT_FALSE(test, w->pending[0] & BIT_ULL(10));
	KUNIT_EXPECT_EQ(test, w->pending[0], BIT_ULL(11));
	twt_check_pending(test, w);

	/* Tail removed first, then the head; then a middle node. */
	a = twt_arm(test, w, 1, 10 * TWT_US);
	b = twt_arm(test, w, 2, 10 * TWT_US);
	twt_disarm(test, w, a);
	KUNIT_EXPECT_TRUE(test, w->pending[0] & BIT_ULL(10));
	twt_disarm(test, w, b);
	KUNIT_EXPECT_FALSE(test, w->pending[0] & BIT_ULL(10));
	a = twt_arm(test, w, 1, 10 * TWT_US);
	b = twt_arm(test, w, 2, 10 * TWT_US);
	d = twt_arm(test, w, 5, 10 * TWT_US);
	twt_disarm(test, w, b);
	twt_check_pending(test, w);
	twt_disarm(test, w, d);
	twt_disarm(test, w, a);
	KUNIT_EXPECT_EQ(test, w->pending[0], BIT_ULL(11));

	/* The last slot of the last level, and the last slot left. */
	twt_disarm(test, w, top);
	KUNIT_EXPECT_EQ(test, w->pending[7], 0ULL);
	twt_disarm(test, w, c);
	for (l = 0; l < TW_LEVELS; l++)
		KUNIT_EXPECT_EQ(test, w->pending[l], 0ULL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->idx->nr, 0UL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));
}

static void twt_del_from_drain(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 20 * TWT_MS);
	struct tw_node *late, *late2;
	u64 t;

	twt_arm(test, w, 1, 21 * TWT_MS);
	late = twt_arm(test, w, 2, 20 * TWT_MS);
	late2 = twt_arm(test, w, 3, 3 * TWT_MS);
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, late));
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, late2));
	KUNIT_EXPECT_EQ(test, w->pending[0], BIT_ULL(21));
	KUNIT_EXPECT_EQ(test, w->nr_armed, 3UL);

	/* Leaving the drain list touches no pending bit. */
	twt_disarm(test, w, late2);
	twt_disarm(test, w, late);
	KUNIT_EXPECT_EQ(test, w->pending[0], BIT_ULL(21));
	KUNIT_EXPECT_TRUE(test, hlist_empty(&w->drain));
	KUNIT_EXPECT_EQ(test, w->nr_armed, 1UL);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, 21ULL);
	twt_advance(test, w, 21 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
	twt_check_queue(test, w);
	twt_expect_expired(test, w, 1, 21 * TWT_MS);
	KUNIT_EXPECT_FALSE(test, twt_queued(w, 2));
	KUNIT_EXPECT_FALSE(test, twt_queued(w, 3));
}

static void twt_reslot_level3(struct kunit *test)
{
	const u64 l3 = 5ULL << 18, l2 = l3 | 7ULL << 12, l1 = l2 | 9ULL << 6;
	const u64 e = l1 | 11;
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_node *n = twt_arm(test, w, 1, e * TWT_MS - 500);
	u64 t;

	twt_expect_at(test, w, n, 3, 5);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, l3);

	/* Up to the tick before the slot is due, nothing moves. */
	twt_advance(test, w, l3 * TWT_MS - 1);
	KUNIT_EXPECT_EQ(test, w->cur, l3 - 1);
	twt_expect_at(test, w, n, 3, 5);
	KUNIT_EXPECT_EQ(test, w->reslots, 0ULL);

	/* Each due slot moves the node down, to the next non-zero digit. */
	twt_advance(test, w, l3 * TWT_MS);
	twt_expect_at(test, w, n, 2, 7);
	KUNIT_EXPECT_EQ(test, w->reslots, 1ULL);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, l2);
	twt_advance(test, w, l2 * TWT_MS);
	twt_expect_at(test, w, n, 1, 9);
	KUNIT_EXPECT_EQ(test, w->reslots, 2ULL);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, l1);
	twt_advance(test, w, l1 * TWT_MS);
	twt_expect_at(test, w, n, 0, 11);
	KUNIT_EXPECT_EQ(test, w->reslots, 3ULL);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, e);

	/* The deadline falls inside tick e: the node expires at tick e. */
	twt_advance(test, w, e * TWT_MS - 500);
	twt_advance(test, w, e * TWT_MS - 1);
	twt_expect_armed(test, w, n);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 1UL);
	twt_advance(test, w, e * TWT_MS);
	twt_expect_expired(test, w, 1, e * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->reslots, 3ULL);
	KUNIT_EXPECT_EQ(test, w->late_max, 500ULL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));
	twt_check_pending(test, w);
	twt_check_queue(test, w);

	/* The same cascade inside one advance call. */
	w = twt_wheel(test, TWT_MS, 0);
	n = twt_arm(test, w, 2, e * TWT_MS - 500);
	twt_advance(test, w, e * TWT_MS - 1);
	twt_expect_armed(test, w, n);
	KUNIT_EXPECT_EQ(test, w->reslots, 3ULL);
	twt_expect_at(test, w, n, 0, 11);
	twt_advance(test, w, e * TWT_MS);
	twt_expect_expired(test, w, 2, e * TWT_MS);
}

static void twt_reslot_zero_digits(struct kunit *test)
{
	const u64 l3 = 5ULL << 18;
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_node *at = twt_arm(test, w, 1, l3 * TWT_MS);
	struct tw_node *low = twt_arm(test, w, 2, (l3 | 11) * TWT_MS);
	struct tw_node *mid = twt_arm(test, w, 3, (l3 | 3ULL << 12) * TWT_MS);

	twt_expect_at(test, w, at, 3, 5);
	twt_expect_at(test, w, low, 3, 5);
	twt_expect_at(test, w, mid, 3, 5);
	twt_advance(test, w, l3 * TWT_MS);
	twt_expect_expired(test, w, 1, l3 * TWT_MS);
	twt_expect_at(test, w, low, 0, 11);
	twt_expect_at(test, w, mid, 2, 3);
	KUNIT_EXPECT_EQ(test, w->reslots, 2ULL);
	twt_advance(test, w, (l3 | 11) * TWT_MS);
	twt_expect_expired(test, w, 2, (l3 | 11) * TWT_MS);
	twt_expect_armed(test, w, mid);
	twt_advance(test, w, (l3 | 3ULL << 12) * TWT_MS);
	twt_expect_expired(test, w, 3, (l3 | 3ULL << 12) * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->reslots, 2ULL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 3UL);
	twt_check_pending(test, w);
	twt_check_queue(test, w);
}

/* Random deadlines of every magnitude, driven by tw_wheel_next(). */
static void twt_next_random(struct kunit *test)
{
	static const struct {
		u64 tick, now, max;
	} cfg[] = {
		{ TWT_MS, 0, 3600000 * TWT_MS },
		{ TWHEEL_TICK_MIN_NS, 1000000000000000ULL, TWHEEL_DEADLINE_MAX },
		{ TWT_US, 123456789 * TWT_US, (TW_TICKS_MAX - 1) * TWT_US },
		{ TWHEEL_TICK_MAX_NS, 5 * TWHEEL_TICK_MAX_NS, TWHEEL_DEADLINE_MAX },
	};
	const unsigned int nr = 100;
	unsigned int c, i, wakeups;
	u64 seed = 42;

	for (c = 0; c < ARRAY_SIZE(cfg); c++) {
		struct tw_wheel *w = twt_wheel(test, cfg[c].tick, cfg[c].now);
		struct tw_node *nodes = twt_nodes(test, nr);
		u64 prev = 0;

		for (i = 0; i < nr; i++) {
			u64 r = twt_rand(&seed);
			u64 d = r % (cfg[c].max - cfg[c].now);

			d >>= twt_rand(&seed) % 64;
			/* A few already due, a few sharing a deadline. */
			if (i % 10 == 9)
				d = 0;
			if (i % 10 == 8)
				d = prev;
			twt_add(test, w, &nodes[i], cfg[c].now + d);
			prev = d;
		}
		KUNIT_EXPECT_EQ(test, w->nr_armed, (unsigned long)nr);
		twt_check_pending(test, w);
		wakeups = twt_run_timer(test, w, nodes, nr);
		KUNIT_EXPECT_LE(test, wakeups, TW_LEVELS * nr + 1);
		KUNIT_EXPECT_LT(test, w->late_max, cfg[c].tick);
	}
}

/*
 * A later deadline is written to the id's entry without moving the node
 * (as the device does): the node is re-slotted when its old slot comes
 * due, and expires at the new deadline's tick.
 */
static void twt_lazy_later(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_node *n = twt_arm(test, w, 1, 10 * TWT_MS);
	unsigned int budget;
	struct tw_node *m;
	u64 t, id;

	twt_expect_at(test, w, n, 0, 10);
	twt_later(test, w, 1, 30 * TWT_MS);
	twt_later(test, w, 1, 50 * TWT_MS);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, 10ULL);
	twt_advance(test, w, 10 * TWT_MS);
	twt_expect_armed(test, w, n);
	KUNIT_EXPECT_EQ(test, w->reslots, 1ULL);
	twt_expect_at(test, w, n, 0, 50);
	twt_advance(test, w, 50 * TWT_MS - 1);
	twt_expect_armed(test, w, n);
	twt_advance(test, w, 50 * TWT_MS);
	twt_expect_expired(test, w, 1, 50 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->late_max, 0ULL);

	/* Moved from level 0 up to level 2 (70000 = 0x11170, from cur 60). */
	m = twt_arm(test, w, 2, 60 * TWT_MS);
	twt_later(test, w, 2, 70000 * TWT_MS);
	twt_advance(test, w, 60 * TWT_MS);
	twt_expect_armed(test, w, m);
	twt_expect_at(test, w, m, 2, 17);
	KUNIT_EXPECT_EQ(test, w->reslots, 2ULL);
	twt_run_timer(test, w, m, 1);
	twt_expect_expired(test, w, 2, 70000 * TWT_MS);

	/* Moved later while its old slot is in the drain list. */
	w = twt_wheel(test, TWT_MS, 64 * TWT_MS);
	n = twt_arm(test, w, 3, 100 * TWT_MS);
	m = twt_arm(test, w, 4, 100 * TWT_MS);
	budget = 1;
	KUNIT_EXPECT_TRUE(test, tw_wheel_advance(w, 100 * TWT_MS, &budget));
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
	n = twt_queued(w, 3) ? m : n;
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, n));
	twt_later(test, w, n->id, 101 * TWT_MS);
	twt_advance(test, w, 100 * TWT_MS);
	twt_expect_armed(test, w, n);
	twt_expect_at(test, w, n, 0, 37);
	id = n->id;
	twt_advance(test, w, 101 * TWT_MS);
	twt_expect_expired(test, w, id, 101 * TWT_MS);
	twt_check_queue(test, w);
}

/* Nodes on every level, expired by one advance: queued in tick order. */
static void twt_order_across_levels(struct kunit *test)
{
	const unsigned int per = 6, nr = TW_LEVELS * per;
	struct tw_wheel *w = twt_wheel(test, TWT_US, 0);
	struct tw_node *nodes = twt_nodes(test, nr);
	u64 *ticks = kunit_kcalloc(test, nr, sizeof(*ticks), GFP_KERNEL);
	u64 seed = 7, max_e = 0, min_d = U64_MAX, prev_e = 0;
	unsigned int l, k, i;
	struct tw_node *n;

	KUNIT_ASSERT_NOT_NULL(test, ticks);

	for (i = 0; i < nr; i++) {
		u64 span, e, d;

		l = i / per;
		k = i % per;
		span = TWT_LVL_TICKS(l);
		e = span * (1 + twt_rand(&seed) % (TW_LVL_SIZE - 1)) +
		    twt_rand(&seed) % span;
		/* Two nodes per level share a tick. */
		if (k == per - 1)
			e = ticks[i + 1 - per];
		d = e * TWT_US - twt_rand(&seed) % TWT_US;
		twt_add(test, w, &nodes[i], d);
		twt_expect_at(test, w, &nodes[i], l,
			      (e >> (l * TW_LVL_BITS)) & TW_LVL_MASK);
		max_e = max(max_e, e);
		min_d = min(min_d, d);
		ticks[i] = e;
	}
	twt_advance(test, w, max_e * TWT_US);
	KUNIT_EXPECT_EQ(test, w->cur, max_e);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, (unsigned long)nr);
	twt_check_queue(test, w);
	KUNIT_EXPECT_EQ(test, w->late_max, max_e * TWT_US - min_d);
	for (l = 0; l < TW_LEVELS; l++)
		KUNIT_EXPECT_EQ(test, w->pending[l], 0ULL);
	/* ids are 0..nr - 1: the id of an event is its index in ticks */
	i = 0;
	for (n = w->head; n && n != w->tail; n = n->next) {
		u64 e;

		KUNIT_ASSERT_LT(test, n->id, (u64)nr);
		e = ticks[n->id];
		KUNIT_EXPECT_LE_MSG(test, prev_e, e, "event %u out of order", i);
		twt_expect_expired(test, w, n->id, max_e * TWT_US);
		prev_e = e;
		KUNIT_ASSERT_LT(test, ++i, nr + 1);
	}
	KUNIT_EXPECT_EQ(test, i, nr);
}

static void twt_catch_up_idle(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_wheel *ref = twt_wheel(test, TWT_MS, 0);
	struct tw_node *n, *r, *far;
	u64 t;

	/* Idle: cur jumps to now's tick, and nodes land on level 0. */
	tw_wheel_catch_up(w, 10000 * TWT_MS + 7);
	KUNIT_EXPECT_EQ(test, w->cur, 10000ULL);
	n = twt_arm(test, w, 1, 10005 * TWT_MS);
	r = twt_arm(test, ref, 1, 10005 * TWT_MS);
	twt_expect_at(test, w, n, 0, 21);
	twt_expect_at(test, ref, r, 2, 2);

	/* Never backwards; up to, not onto, a due slot. */
	tw_wheel_catch_up(w, 5000 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->cur, 10000ULL);
	tw_wheel_catch_up(w, 10005 * TWT_MS - 1);
	KUNIT_EXPECT_EQ(test, w->cur, 10004ULL);
	tw_wheel_catch_up(w, 10006 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->cur, 10004ULL);
	twt_expect_armed(test, w, n);
	twt_advance(test, w, 10006 * TWT_MS);
	twt_expect_expired(test, w, 1, 10006 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->late_max, TWT_MS);
	KUNIT_EXPECT_EQ(test, w->cur, 10006ULL);

	/* Not while the drain list holds a node. */
	twt_arm(test, w, 2, TWT_MS);
	tw_wheel_catch_up(w, 20000 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->cur, 10006ULL);
	twt_advance(test, w, 20000 * TWT_MS);
	twt_expect_expired(test, w, 2, 20000 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->cur, 20000ULL);

	/* A far node: catch up to just before its level-2 slot. */
	far = twt_arm(test, w, 3, 25000 * TWT_MS);
	twt_expect_at(test, w, far, 2, 6);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, 24576ULL);
	tw_wheel_catch_up(w, 24576 * TWT_MS - 1);
	KUNIT_EXPECT_EQ(test, w->cur, 24575ULL);
	tw_wheel_catch_up(w, 24576 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->cur, 24575ULL);
	twt_expect_at(test, w, far, 2, 6);
	twt_run_timer(test, w, far, 1);
	twt_expect_expired(test, w, 3, 25000 * TWT_MS);
}

/* cur close to TW_TICKS_MAX: the top level and its last slots. */
static void twt_large_cur(struct kunit *test)
{
	static const u64 off[] = { 1, 2, 63, 64, 65, 4095, 4096, 4097, 4999 };
	const u64 cur = TW_TICKS_MAX - 5000, last = TW_TICKS_MAX - 1;
	const unsigned int nr = ARRAY_SIZE(off) + 40;
	struct tw_wheel *w = twt_wheel(test, TWT_US, cur * TWT_US + 999);
	struct tw_node *nodes = twt_nodes(test, nr);
	struct tw_node *n;
	struct tw_ent *e0;
	u64 seed = 3, t;
	unsigned int i;

	KUNIT_EXPECT_EQ(test, w->cur, cur);
	for (i = 0; i < nr; i++) {
		u64 e = i < ARRAY_SIZE(off) ? cur + off[i] :
			cur + 1 + twt_rand(&seed) % 4999;

		twt_add(test, w, &nodes[i],
			e * TWT_US - twt_rand(&seed) % TWT_US);
	}
	/* 0xffffffffec78 + 4999 = 2^48 - 1 differs from cur first in bit 12. */
	twt_expect_at(test, w, &nodes[ARRAY_SIZE(off) - 1], 2, 63);
	twt_run_timer(test, w, nodes, nr);
	KUNIT_EXPECT_EQ(test, w->cur, last);
	twt_expect_expired(test, w, ARRAY_SIZE(off) - 1, last * TWT_US);

	/* At the very last tick, a due node still expires: id 0 re-armed. */
	e0 = twt_ent(test, w, 0);
	n = tw_wheel_discard(w, e0);
	KUNIT_EXPECT_PTR_EQ(test, e0->node, n);
	e0->deadline = last * TWT_US;
	tw_wheel_add(w, n, last * TWT_US);
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, n));
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, last);
	twt_advance(test, w, last * TWT_US + 5);
	twt_expect_expired(test, w, 0, last * TWT_US + 5);
	KUNIT_EXPECT_EQ(test, w->nr_ready, (unsigned long)nr);
	twt_check_queue(test, w);
}

/* Carries across every level, and the top level's last slot. */
static void twt_carry_top_level(struct kunit *test)
{
	const u64 b42 = BIT_ULL(42), last = TW_TICKS_MAX - 1;
	struct tw_wheel *w = twt_wheel(test, TWT_US, (b42 - 1) * TWT_US);
	struct tw_node *a = twt_arm(test, w, 1, b42 * TWT_US);
	struct tw_node *b = twt_arm(test, w, 2, (b42 + 1) * TWT_US);
	struct tw_node *c = twt_arm(test, w, 3, (b42 + 64) * TWT_US);
	struct tw_node *top;
	unsigned int l;
	u64 t;

	/* cur = 2^42 - 1: every digit changes at the next tick. */
	twt_expect_at(test, w, a, 7, 1);
	twt_expect_at(test, w, b, 7, 1);
	twt_expect_at(test, w, c, 7, 1);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, b42);
	twt_advance(test, w, b42 * TWT_US);
	twt_expect_expired(test, w, 1, b42 * TWT_US);
	twt_expect_at(test, w, b, 0, 1);
	twt_expect_at(test, w, c, 1, 1);
	KUNIT_EXPECT_EQ(test, w->reslots, 2ULL);
	twt_advance(test, w, (b42 + 63) * TWT_US);
	twt_expect_expired(test, w, 2, (b42 + 63) * TWT_US);
	twt_expect_armed(test, w, c);
	twt_advance(test, w, (b42 + 64) * TWT_US);
	twt_expect_expired(test, w, 3, (b42 + 64) * TWT_US);

	/* The largest tick from cur 0: slot 63 of each level in turn. */
	w = twt_wheel(test, TWT_US, 0);
	top = twt_arm(test, w, 4, last * TWT_US);
	twt_expect_at(test, w, top, 7, 63);
	for (l = TW_LEVELS - 1; l > 0; l--) {
		KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
		KUNIT_EXPECT_EQ(test, t, last & ~(TWT_LVL_TICKS(l) - 1));
		twt_advance(test, w, t * TWT_US);
		twt_expect_at(test, w, top, l - 1, 63);
		KUNIT_EXPECT_EQ(test, w->reslots, (u64)(TW_LEVELS - l));
	}
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, last);
	twt_advance(test, w, last * TWT_US - 1);
	twt_expect_armed(test, w, top);
	twt_advance(test, w, last * TWT_US);
	twt_expect_expired(test, w, 4, last * TWT_US);
	KUNIT_EXPECT_EQ(test, w->reslots, (u64)(TW_LEVELS - 1));
}

/* The largest deadline, 2^63 - 1, at the smallest and largest ticks. */
static void twt_deadline_max(struct kunit *test)
{
	const u64 e = 92233720368548ULL, now = 1000000000000000ULL;
	struct tw_wheel *w = twt_wheel(test, TWHEEL_TICK_MIN_NS, now);
	struct tw_node *n = twt_arm(test, w, 1, TWHEEL_DEADLINE_MAX);

	twt_expect_at(test, w, n, 7, 20);
	twt_advance(test, w, TWHEEL_DEADLINE_MAX - 1);
	twt_expect_armed(test, w, n);
	KUNIT_EXPECT_EQ(test, w->cur, e - 1);
	twt_advance(test, w, TWHEEL_DEADLINE_MAX);
	twt_expect_armed(test, w, n);
	twt_advance(test, w, e * TWHEEL_TICK_MIN_NS);
	/* that tick's clock is past KTIME_MAX: it needs all 64 bits */
	KUNIT_EXPECT_GT(test, e * TWHEEL_TICK_MIN_NS, TWHEEL_DEADLINE_MAX);
	twt_expect_expired(test, w, 1, e * TWHEEL_TICK_MIN_NS);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);

	w = twt_wheel(test, TWHEEL_TICK_MIN_NS, now);
	n = twt_arm(test, w, 2, TWHEEL_DEADLINE_MAX);
	KUNIT_EXPECT_LE(test, twt_run_timer(test, w, n, 1), (unsigned int)TW_LEVELS);

	/* 1 h ticks: tick 2562048 = 0x271800, level 3 slot 9. */
	w = twt_wheel(test, TWHEEL_TICK_MAX_NS, 0);
	n = twt_arm(test, w, 3, TWHEEL_DEADLINE_MAX);
	twt_expect_at(test, w, n, 3, 9);
	twt_run_timer(test, w, n, 1);
	twt_expect_expired(test, w, 3, 2562048ULL * TWHEEL_TICK_MAX_NS);
}

static struct kunit_case twt_wheel_cases[] = {
	KUNIT_CASE(twt_ticks_rounding),
	KUNIT_CASE(twt_init_and_next_empty),
	KUNIT_CASE(twt_slot_table),
	KUNIT_CASE(twt_slot_formula),
	KUNIT_CASE(twt_pending_cleared_by_del),
	KUNIT_CASE(twt_del_from_drain),
	KUNIT_CASE(twt_reslot_level3),
	KUNIT_CASE(twt_reslot_zero_digits),
	KUNIT_CASE(twt_next_random),
	KUNIT_CASE(twt_lazy_later),
	KUNIT_CASE(twt_order_across_levels),
	KUNIT_CASE(twt_catch_up_idle),
	KUNIT_CASE(twt_large_cur),
	KUNIT_CASE(twt_carry_top_level),
	KUNIT_CASE(twt_deadline_max),
	{}
};

static struct kunit_suite twt_wheel_suite = {
	.name = "twheel_wheel",
	.suite_init = twt_suite_init,
	.test_cases = twt_wheel_cases,
};

kunit_test_suite(twt_wheel_suite);
