// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_core": the timing wheel and the id index of
 * twheel_core.c, driven directly (no device, no locking, no clock).
 *
 * Built into twheel.ko only when the kernel has CONFIG_KUNIT=y (kmod/Kbuild);
 * the suite runs when the module is loaded and its KTAP results are in
 * /sys/kernel/debug/kunit/twheel_core/results (CONFIG_KUNIT_DEBUGFS).
 *
 * Every node and table comes from kunit_kzalloc()/kunit_kcalloc(), so it is
 * freed when the test case ends, whatever the outcome.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/minmax.h>
#include <linux/twheel.h>

#include "twheel_core.h"

#define TWT_MS		1000000ULL
#define TWT_US		1000ULL
#define TWT_LVL_TICKS(l)	(1ULL << ((l) * TW_LVL_BITS))

/*
 * The inverse of GOLDEN_RATIO_64 modulo 2^64: tw_key(twt_id_of_key(k)) == k,
 * so a test can place an id in any bucket, or two ids in one dump cell.
 */
#define TWT_KEY_INV	0x0E217C1E66C88CC3ULL

static u64 twt_id_of_key(u64 key)
{
	return key * TWT_KEY_INV;
}

/* splitmix64: a small deterministic generator for the randomised cases. */
static u64 twt_rand(u64 *s)
{
	u64 z = (*s += 0x9E3779B97F4A7C15ULL);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

static struct tw_wheel *twt_wheel(struct kunit *test, u64 tick_ns, u64 now)
{
	struct tw_wheel *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, w);
	tw_wheel_init(w, tick_ns, now);
	return w;
}

static struct tw_node *twt_nodes(struct kunit *test, unsigned int nr)
{
	struct tw_node *n = kunit_kcalloc(test, nr, sizeof(*n), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, n);
	for (i = 0; i < nr; i++)
		n[i].id = i;
	return n;
}

/* A new node with @deadline, added to @w. */
static struct tw_node *twt_arm(struct kunit *test, struct tw_wheel *w,
			       u64 id, u64 deadline)
{
	struct tw_node *n = twt_nodes(test, 1);

	n->id = id;
	n->deadline = deadline;
	tw_wheel_add(w, n);
	return n;
}

/*
 * Where @n is: true and its level and slot if it is in exactly one slot,
 * false if it is in none.  A node in two slots fails the test.
 */
static bool twt_where(struct kunit *test, const struct tw_wheel *w,
		      const struct tw_node *n, unsigned int *lvl,
		      unsigned int *slot)
{
	unsigned int l, s, found = 0;
	struct hlist_node *p;

	for (l = 0; l < TW_LEVELS; l++) {
		for (s = 0; s < TW_LVL_SIZE; s++) {
			hlist_for_each(p, &w->slots[l][s]) {
				if (p != &n->slot)
					continue;
				*lvl = l;
				*slot = s;
				found++;
			}
		}
	}
	KUNIT_EXPECT_LE(test, found, 1U);
	return found;
}

static bool twt_in_drain(const struct tw_wheel *w, const struct tw_node *n)
{
	struct hlist_node *p;

	hlist_for_each(p, &w->drain)
		if (p == &n->slot)
			return true;
	return false;
}

/* @n is in slot @slot of level @lvl (and nowhere else). */
static void twt_expect_at(struct kunit *test, const struct tw_wheel *w,
			  const struct tw_node *n, unsigned int lvl,
			  unsigned int slot)
{
	unsigned int l = TW_LEVELS, s = TW_LVL_SIZE;

	KUNIT_EXPECT_TRUE_MSG(test, twt_where(test, w, n, &l, &s),
			      "id %llu not in any slot", n->id);
	KUNIT_EXPECT_EQ_MSG(test, l, lvl, "id %llu level", n->id);
	KUNIT_EXPECT_EQ_MSG(test, s, slot, "id %llu slot", n->id);
	KUNIT_EXPECT_TRUE(test, w->pending[lvl] & BIT_ULL(slot));
}

/* Every pending bit is set exactly when its slot holds a node. */
static void twt_check_pending(struct kunit *test, const struct tw_wheel *w)
{
	unsigned int l, s;

	for (l = 0; l < TW_LEVELS; l++) {
		for (s = 0; s < TW_LVL_SIZE; s++) {
			bool bit = w->pending[l] & BIT_ULL(s);

			KUNIT_EXPECT_EQ_MSG(test, bit,
					    !hlist_empty(&w->slots[l][s]),
					    "pending bit of level %u slot %u",
					    l, s);
		}
	}
}

/* Advance with an unlimited budget; nothing due may remain. */
static void twt_advance(struct kunit *test, struct tw_wheel *w, u64 now)
{
	unsigned int budget = UINT_MAX;

	KUNIT_EXPECT_FALSE(test, tw_wheel_advance(w, now, &budget));
}

static unsigned long twt_ready_len(const struct tw_wheel *w)
{
	struct tw_node *n;
	unsigned long len = 0;

	list_for_each_entry(n, &w->ready, ready)
		len++;
	return len;
}

/*
 * Drive @w the way the device does: sleep until tw_wheel_next(), advance
 * to exactly that tick, repeat until nothing is armed.  @nodes[0..@nr)
 * must be everything armed on @w.  Each must expire at the first advance
 * whose tick reaches its expiry tick (never before, never after), and the
 * events appended to w->ready must be in expiry-tick order.  Returns the
 * number of wake-ups.
 */
static unsigned int twt_run_timer(struct kunit *test, struct tw_wheel *w,
				  struct tw_node *nodes, unsigned int nr)
{
	unsigned long base = w->nr_ready;
	unsigned int wakeups = 0, i, left = nr;
	u64 t, prev_e = 0;
	struct tw_node *n;

	while (tw_wheel_next(w, &t)) {
		u64 min_e = U64_MAX, now = t * w->tick_ns;

		for (i = 0; i < nr; i++)
			if (!nodes[i].expired)
				min_e = min(min_e, tw_ticks(w, tw_node_deadline(&nodes[i])));
		KUNIT_ASSERT_LE_MSG(test, t, min_e, "wake-up after an expiry");
		KUNIT_ASSERT_LT(test, ++wakeups, 16 * nr + 16);
		twt_advance(test, w, now);
		KUNIT_EXPECT_EQ(test, w->cur, t);
		for (i = 0; i < nr; i++) {
			u64 e = tw_ticks(w, tw_node_deadline(&nodes[i]));

			if (e > t) {
				KUNIT_EXPECT_EQ_MSG(test, nodes[i].expired, 0ULL,
						    "id %llu expired early",
						    nodes[i].id);
			} else if (!nodes[i].expired) {
				KUNIT_FAIL(test, "id %llu (tick %llu) not expired at tick %llu",
					   nodes[i].id, e, t);
			} else if (nodes[i].expired == max(now, 1ULL)) {
				left--;
			}
		}
		twt_check_pending(test, w);
	}
	KUNIT_EXPECT_EQ(test, left, 0U);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, base + nr);
	KUNIT_EXPECT_EQ(test, twt_ready_len(w), base + nr);
	i = 0;
	list_for_each_entry(n, &w->ready, ready) {
		u64 e = tw_ticks(w, tw_node_deadline(n));

		if (i++ < base)
			continue;
		KUNIT_EXPECT_LE(test, prev_e, e);
		KUNIT_EXPECT_GE(test, n->expired, tw_node_deadline(n));
		prev_e = e;
	}
	return wakeups;
}

/* ------------------------------------------------------------- wheel */

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
	tw_wheel_init(w, TWHEEL_TICK_MIN_NS, 0);
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
	tw_wheel_init(w, TWHEEL_TICK_MAX_NS, 0);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 1), 1ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, TWHEEL_TICK_MAX_NS), 1ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, TWHEEL_TICK_MAX_NS + 1), 2ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, 2562047ULL * TWHEEL_TICK_MAX_NS),
			2562047ULL);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, TWHEEL_DEADLINE_MAX), 2562048ULL);

	/* Rounding up never overflows: U64_MAX = (2^63 - 1) * 2 + 1. */
	tw_wheel_init(w, 2, 0);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, U64_MAX), BIT_ULL(63));
	tw_wheel_init(w, 1, 0);
	KUNIT_EXPECT_EQ(test, tw_ticks(w, U64_MAX), U64_MAX);
}

static void twt_init_and_next_empty(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 5 * TWT_MS + 999999);
	struct tw_node *n;
	unsigned int l;
	u64 t = 12345;

	KUNIT_EXPECT_EQ(test, w->cur, 5ULL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 0UL);
	for (l = 0; l < TW_LEVELS; l++)
		KUNIT_EXPECT_EQ(test, w->pending[l], 0ULL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));

	/* Armed, then disarmed: empty again. */
	n = twt_arm(test, w, 1, 100 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 1UL);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_LE(test, t, 100ULL);
	tw_wheel_del(w, n);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));

	/* A deadline already processed waits in the drain list at cur. */
	n = twt_arm(test, w, 2, 4 * TWT_MS);
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, n));
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, 5ULL);
	twt_advance(test, w, 5 * TWT_MS + 999999);
	KUNIT_EXPECT_EQ(test, n->expired, 5 * TWT_MS + 999999);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));

	/* Expired and taken off the ready queue: nothing left. */
	tw_wheel_unqueue(w, n);
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 0UL);
	KUNIT_EXPECT_TRUE(test, list_empty(&w->ready));
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

		tw_wheel_init(w, TWT_US, p->cur * TWT_US + 999);
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

		tw_wheel_init(w, TWT_US, cur * TWT_US + twt_rand(&seed) % TWT_US);
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
	tw_wheel_del(w, b);
	KUNIT_EXPECT_TRUE(test, w->pending[0] & BIT_ULL(10));
	twt_expect_at(test, w, a, 0, 10);
	tw_wheel_del(w, a);
	KUNIT_EXPECT_FALSE(test, w->pending[0] & BIT_ULL(10));
	KUNIT_EXPECT_EQ(test, w->pending[0], BIT_ULL(11));
	twt_check_pending(test, w);

	/* Tail removed first, then the head; then a middle node. */
	a = twt_arm(test, w, 1, 10 * TWT_US);
	b = twt_arm(test, w, 2, 10 * TWT_US);
	tw_wheel_del(w, a);
	KUNIT_EXPECT_TRUE(test, w->pending[0] & BIT_ULL(10));
	tw_wheel_del(w, b);
	KUNIT_EXPECT_FALSE(test, w->pending[0] & BIT_ULL(10));
	a = twt_arm(test, w, 1, 10 * TWT_US);
	b = twt_arm(test, w, 2, 10 * TWT_US);
	d = twt_arm(test, w, 5, 10 * TWT_US);
	tw_wheel_del(w, b);
	twt_check_pending(test, w);
	tw_wheel_del(w, d);
	tw_wheel_del(w, a);
	KUNIT_EXPECT_EQ(test, w->pending[0], BIT_ULL(11));

	/* The last slot of the last level, and the last slot left. */
	tw_wheel_del(w, top);
	KUNIT_EXPECT_EQ(test, w->pending[7], 0ULL);
	tw_wheel_del(w, c);
	for (l = 0; l < TW_LEVELS; l++)
		KUNIT_EXPECT_EQ(test, w->pending[l], 0ULL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));
}

static void twt_del_from_drain(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 20 * TWT_MS);
	struct tw_node *late, *late2, *slotted;
	u64 t;

	slotted = twt_arm(test, w, 1, 21 * TWT_MS);
	late = twt_arm(test, w, 2, 20 * TWT_MS);
	late2 = twt_arm(test, w, 3, 3 * TWT_MS);
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, late));
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, late2));
	KUNIT_EXPECT_EQ(test, w->pending[0], BIT_ULL(21));
	KUNIT_EXPECT_EQ(test, w->nr_armed, 3UL);

	/* Leaving the drain list touches no pending bit. */
	tw_wheel_del(w, late2);
	tw_wheel_del(w, late);
	KUNIT_EXPECT_EQ(test, w->pending[0], BIT_ULL(21));
	KUNIT_EXPECT_TRUE(test, hlist_empty(&w->drain));
	KUNIT_EXPECT_EQ(test, w->nr_armed, 1UL);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, 21ULL);
	twt_advance(test, w, 21 * TWT_MS);
	KUNIT_EXPECT_EQ(test, twt_ready_len(w), 1UL);
	KUNIT_EXPECT_EQ(test, slotted->expired, 21 * TWT_MS);
	KUNIT_EXPECT_EQ(test, late->expired, 0ULL);
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
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 1UL);
	twt_advance(test, w, e * TWT_MS);
	KUNIT_EXPECT_EQ(test, n->expired, e * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->reslots, 3ULL);
	KUNIT_EXPECT_EQ(test, w->late_max, 500ULL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));
	twt_check_pending(test, w);

	/* The same cascade inside one advance call. */
	w = twt_wheel(test, TWT_MS, 0);
	n = twt_arm(test, w, 2, e * TWT_MS - 500);
	twt_advance(test, w, e * TWT_MS - 1);
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	KUNIT_EXPECT_EQ(test, w->reslots, 3ULL);
	twt_expect_at(test, w, n, 0, 11);
	twt_advance(test, w, e * TWT_MS);
	KUNIT_EXPECT_EQ(test, n->expired, e * TWT_MS);
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
	KUNIT_EXPECT_EQ(test, at->expired, l3 * TWT_MS);
	twt_expect_at(test, w, low, 0, 11);
	twt_expect_at(test, w, mid, 2, 3);
	KUNIT_EXPECT_EQ(test, w->reslots, 2ULL);
	twt_advance(test, w, (l3 | 11) * TWT_MS);
	KUNIT_EXPECT_EQ(test, low->expired, (l3 | 11) * TWT_MS);
	KUNIT_EXPECT_EQ(test, mid->expired, 0ULL);
	twt_advance(test, w, (l3 | 3ULL << 12) * TWT_MS);
	KUNIT_EXPECT_EQ(test, mid->expired, (l3 | 3ULL << 12) * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->reslots, 2ULL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 3UL);
	twt_check_pending(test, w);
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

		for (i = 0; i < nr; i++) {
			u64 r = twt_rand(&seed);
			u64 d = r % (cfg[c].max - cfg[c].now);

			d >>= twt_rand(&seed) % 64;
			/* A few already due, a few sharing a deadline. */
			if (i % 10 == 9)
				d = 0;
			if (i % 10 == 8)
				d = nodes[i - 1].deadline - cfg[c].now;
			nodes[i].deadline = cfg[c].now + d;
			tw_wheel_add(w, &nodes[i]);
		}
		KUNIT_EXPECT_EQ(test, w->nr_armed, (unsigned long)nr);
		twt_check_pending(test, w);
		wakeups = twt_run_timer(test, w, nodes, nr);
		KUNIT_EXPECT_LE(test, wakeups, TW_LEVELS * nr + 1);
		KUNIT_EXPECT_LT(test, w->late_max, cfg[c].tick);
	}
}

/*
 * A later deadline is stored in the node without moving it (as the device
 * does): the node is re-slotted when its old slot comes due, and expires
 * at the new deadline's tick.
 */
static void twt_lazy_later(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_node *n = twt_arm(test, w, 1, 10 * TWT_MS);
	unsigned int budget;
	struct tw_node *m;
	u64 t;

	twt_expect_at(test, w, n, 0, 10);
	n->deadline = 30 * TWT_MS;
	n->deadline = 50 * TWT_MS;
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, 10ULL);
	twt_advance(test, w, 10 * TWT_MS);
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	KUNIT_EXPECT_EQ(test, w->reslots, 1ULL);
	twt_expect_at(test, w, n, 0, 50);
	twt_advance(test, w, 50 * TWT_MS - 1);
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	twt_advance(test, w, 50 * TWT_MS);
	KUNIT_EXPECT_EQ(test, n->expired, 50 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->late_max, 0ULL);

	/* Moved from level 0 up to level 2 (70000 = 0x11170, from cur 60). */
	m = twt_arm(test, w, 2, 60 * TWT_MS);
	m->deadline = 70000 * TWT_MS;
	twt_advance(test, w, 60 * TWT_MS);
	KUNIT_EXPECT_EQ(test, m->expired, 0ULL);
	twt_expect_at(test, w, m, 2, 17);
	KUNIT_EXPECT_EQ(test, w->reslots, 2ULL);
	twt_run_timer(test, w, m, 1);
	KUNIT_EXPECT_EQ(test, m->expired, 70000 * TWT_MS);

	/* Moved later while its old slot is in the drain list. */
	w = twt_wheel(test, TWT_MS, 64 * TWT_MS);
	n = twt_arm(test, w, 3, 100 * TWT_MS);
	m = twt_arm(test, w, 4, 100 * TWT_MS);
	budget = 1;
	KUNIT_EXPECT_TRUE(test, tw_wheel_advance(w, 100 * TWT_MS, &budget));
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
	n = n->expired ? m : n;
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, n));
	n->deadline = 101 * TWT_MS;
	twt_advance(test, w, 100 * TWT_MS);
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	twt_expect_at(test, w, n, 0, 37);
	twt_advance(test, w, 101 * TWT_MS);
	KUNIT_EXPECT_EQ(test, n->expired, 101 * TWT_MS);
}

/* Nodes on every level, expired by one advance: queued in tick order. */
static void twt_order_across_levels(struct kunit *test)
{
	const unsigned int per = 6, nr = TW_LEVELS * per;
	struct tw_wheel *w = twt_wheel(test, TWT_US, 0);
	struct tw_node *nodes = twt_nodes(test, nr);
	u64 seed = 7, max_e = 0, min_d = U64_MAX, prev_e = 0;
	unsigned int l, k, i;
	struct tw_node *n;

	for (i = 0; i < nr; i++) {
		u64 span, e;

		l = i / per;
		k = i % per;
		span = TWT_LVL_TICKS(l);
		e = span * (1 + twt_rand(&seed) % (TW_LVL_SIZE - 1)) +
		    twt_rand(&seed) % span;
		/* Two nodes per level share a tick. */
		if (k == per - 1)
			e = tw_ticks(w, nodes[i + 1 - per].deadline);
		nodes[i].deadline = e * TWT_US - twt_rand(&seed) % TWT_US;
		tw_wheel_add(w, &nodes[i]);
		twt_expect_at(test, w, &nodes[i], l,
			      (e >> (l * TW_LVL_BITS)) & TW_LVL_MASK);
		max_e = max(max_e, e);
		min_d = min(min_d, nodes[i].deadline);
	}
	twt_advance(test, w, max_e * TWT_US);
	KUNIT_EXPECT_EQ(test, w->cur, max_e);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, (unsigned long)nr);
	KUNIT_EXPECT_EQ(test, twt_ready_len(w), (unsigned long)nr);
	KUNIT_EXPECT_EQ(test, w->late_max, max_e * TWT_US - min_d);
	for (l = 0; l < TW_LEVELS; l++)
		KUNIT_EXPECT_EQ(test, w->pending[l], 0ULL);
	i = 0;
	list_for_each_entry(n, &w->ready, ready) {
		u64 e = tw_ticks(w, n->deadline);

		KUNIT_EXPECT_LE_MSG(test, prev_e, e, "event %u out of order", i);
		KUNIT_EXPECT_EQ(test, n->expired, max_e * TWT_US);
		prev_e = e;
		i++;
	}
}

static void twt_catch_up_idle(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_wheel *ref = twt_wheel(test, TWT_MS, 0);
	struct tw_node *n, *r, *d, *far;
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
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	twt_advance(test, w, 10006 * TWT_MS);
	KUNIT_EXPECT_EQ(test, n->expired, 10006 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->late_max, TWT_MS);
	KUNIT_EXPECT_EQ(test, w->cur, 10006ULL);

	/* Not while the drain list holds a node. */
	d = twt_arm(test, w, 2, TWT_MS);
	tw_wheel_catch_up(w, 20000 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->cur, 10006ULL);
	twt_advance(test, w, 20000 * TWT_MS);
	KUNIT_EXPECT_EQ(test, d->expired, 20000 * TWT_MS);
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
	KUNIT_EXPECT_EQ(test, far->expired, 25000 * TWT_MS);
}

/* cur close to TW_TICKS_MAX: the top level and its last slots. */
static void twt_large_cur(struct kunit *test)
{
	static const u64 off[] = { 1, 2, 63, 64, 65, 4095, 4096, 4097, 4999 };
	const u64 cur = TW_TICKS_MAX - 5000;
	const unsigned int nr = ARRAY_SIZE(off) + 40;
	struct tw_wheel *w = twt_wheel(test, TWT_US, cur * TWT_US + 999);
	struct tw_node *nodes = twt_nodes(test, nr);
	u64 seed = 3, t;
	unsigned int i;

	KUNIT_EXPECT_EQ(test, w->cur, cur);
	for (i = 0; i < nr; i++) {
		u64 e = i < ARRAY_SIZE(off) ? cur + off[i] :
			cur + 1 + twt_rand(&seed) % 4999;

		nodes[i].deadline = e * TWT_US - twt_rand(&seed) % TWT_US;
		tw_wheel_add(w, &nodes[i]);
	}
	/* 0xffffffffec78 + 4999 = 2^48 - 1 differs from cur first in bit 12. */
	twt_expect_at(test, w, &nodes[ARRAY_SIZE(off) - 1], 2, 63);
	twt_run_timer(test, w, nodes, nr);
	KUNIT_EXPECT_EQ(test, w->cur, TW_TICKS_MAX - 1);
	KUNIT_EXPECT_EQ(test, nodes[ARRAY_SIZE(off) - 1].expired,
			(TW_TICKS_MAX - 1) * TWT_US);

	/* At the very last tick, a due node still expires. */
	nodes[0].deadline = (TW_TICKS_MAX - 1) * TWT_US;
	tw_wheel_unqueue(w, &nodes[0]);
	tw_wheel_add(w, &nodes[0]);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, TW_TICKS_MAX - 1);
	twt_advance(test, w, (TW_TICKS_MAX - 1) * TWT_US + 5);
	KUNIT_EXPECT_EQ(test, nodes[0].expired, (TW_TICKS_MAX - 1) * TWT_US + 5);
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
	KUNIT_EXPECT_EQ(test, a->expired, b42 * TWT_US);
	twt_expect_at(test, w, b, 0, 1);
	twt_expect_at(test, w, c, 1, 1);
	KUNIT_EXPECT_EQ(test, w->reslots, 2ULL);
	twt_advance(test, w, (b42 + 63) * TWT_US);
	KUNIT_EXPECT_EQ(test, b->expired, (b42 + 63) * TWT_US);
	KUNIT_EXPECT_EQ(test, c->expired, 0ULL);
	twt_advance(test, w, (b42 + 64) * TWT_US);
	KUNIT_EXPECT_EQ(test, c->expired, (b42 + 64) * TWT_US);

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
	KUNIT_EXPECT_EQ(test, top->expired, 0ULL);
	twt_advance(test, w, last * TWT_US);
	KUNIT_EXPECT_EQ(test, top->expired, last * TWT_US);
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
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	KUNIT_EXPECT_EQ(test, w->cur, e - 1);
	twt_advance(test, w, TWHEEL_DEADLINE_MAX);
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	twt_advance(test, w, e * TWHEEL_TICK_MIN_NS);
	KUNIT_EXPECT_EQ(test, n->expired, e * TWHEEL_TICK_MIN_NS);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);

	w = twt_wheel(test, TWHEEL_TICK_MIN_NS, now);
	n = twt_arm(test, w, 2, TWHEEL_DEADLINE_MAX);
	KUNIT_EXPECT_LE(test, twt_run_timer(test, w, n, 1), (unsigned int)TW_LEVELS);

	/* 1 h ticks: tick 2562048 = 0x271800, level 3 slot 9. */
	w = twt_wheel(test, TWHEEL_TICK_MAX_NS, 0);
	n = twt_arm(test, w, 3, TWHEEL_DEADLINE_MAX);
	twt_expect_at(test, w, n, 3, 9);
	twt_run_timer(test, w, n, 1);
	KUNIT_EXPECT_EQ(test, n->expired, 2562048ULL * TWHEEL_TICK_MAX_NS);
}

/*
 * Bit 63 of the deadline word is the caller's (TW_NODE_FLAG): it changes
 * neither the slot, nor the expiry, nor the lateness, and it survives
 * every move of the node.
 */
static void twt_caller_flag(struct kunit *test)
{
	const u64 now = 1000000000000000ULL;
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_node *n = twt_nodes(test, 2);

	n->deadline = TW_NODE_FLAG;
	tw_node_set_deadline(n, 10 * TWT_MS);
	KUNIT_EXPECT_EQ(test, tw_node_deadline(n), 10 * TWT_MS);
	KUNIT_EXPECT_EQ(test, n->deadline, TW_NODE_FLAG | 10 * TWT_MS);
	tw_wheel_add(w, n);
	twt_expect_at(test, w, n, 0, 10);
	/* later, re-slotted from level 0 to level 2 when slot 10 is due */
	tw_node_set_deadline(n, 70000 * TWT_MS);
	twt_advance(test, w, 10 * TWT_MS);
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	twt_expect_at(test, w, n, 2, 17);
	twt_run_timer(test, w, n, 1);
	KUNIT_EXPECT_EQ(test, n->expired, 70000 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->late_max, 0ULL);
	KUNIT_EXPECT_EQ(test, n->deadline, TW_NODE_FLAG | 70000 * TWT_MS);
	tw_wheel_unqueue(w, n);

	/* the largest deadline, flagged, lands where an unflagged one does */
	w = twt_wheel(test, TWHEEL_TICK_MIN_NS, now);
	n[1].deadline = TW_NODE_FLAG;
	tw_node_set_deadline(&n[1], TWHEEL_DEADLINE_MAX);
	tw_wheel_add(w, &n[1]);
	twt_expect_at(test, w, &n[1], 7, 20);
	tw_wheel_del(w, &n[1]);
	KUNIT_EXPECT_EQ(test, n[1].deadline, TW_NODE_FLAG | TWHEEL_DEADLINE_MAX);
	twt_check_pending(test, w);
}

/* The shortest timeouts: 1 ns, one tick, zero and in the past. */
static void twt_min_timeout(struct kunit *test)
{
	const u64 now = 7 * TWT_MS + 123;
	struct tw_wheel *w = twt_wheel(test, TWT_MS, now);
	struct tw_node *ns = twt_arm(test, w, 1, now + 1);
	struct tw_node *tick = twt_arm(test, w, 2, 8 * TWT_MS);
	struct tw_node *at_cur = twt_arm(test, w, 3, 7 * TWT_MS);
	struct tw_node *zero = twt_arm(test, w, 4, 0);
	u64 t;

	twt_expect_at(test, w, ns, 0, 8);
	twt_expect_at(test, w, tick, 0, 8);
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, at_cur));
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, zero));
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, 7ULL);

	twt_advance(test, w, now);
	KUNIT_EXPECT_EQ(test, at_cur->expired, now);
	KUNIT_EXPECT_EQ(test, zero->expired, now);
	KUNIT_EXPECT_EQ(test, w->late_max, now);
	KUNIT_EXPECT_EQ(test, ns->expired, 0ULL);
	twt_advance(test, w, 8 * TWT_MS - 1);
	KUNIT_EXPECT_EQ(test, ns->expired, 0ULL);
	KUNIT_EXPECT_EQ(test, tick->expired, 0ULL);
	twt_advance(test, w, 8 * TWT_MS);
	KUNIT_EXPECT_EQ(test, ns->expired, 8 * TWT_MS);
	KUNIT_EXPECT_EQ(test, tick->expired, 8 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 4UL);

	/* At time 0 an expired node is still marked: expired is never 0. */
	w = twt_wheel(test, TWT_MS, 0);
	zero = twt_arm(test, w, 5, 0);
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, zero));
	twt_advance(test, w, 0);
	KUNIT_EXPECT_EQ(test, zero->expired, 1ULL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
}

/* A budget of one node per call: same result as one unlimited call. */
static void twt_budget_one(struct kunit *test)
{
	const unsigned int nr = 48;
	const u64 end = 300000 * TWT_MS;
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_wheel *ref = twt_wheel(test, TWT_MS, 0);
	struct tw_node *nodes = twt_nodes(test, nr);
	struct tw_node *rnodes = twt_nodes(test, nr);
	unsigned int i, budget, calls = 0, moves = 0;
	struct tw_node *n, *r;
	u64 seed = 11;
	bool more;

	for (i = 0; i < nr; i++) {
		u64 e = 1 + twt_rand(&seed) % 250000;

		if (i < 8)
			e = 100;
		else if (i < 16)
			e = 64 * 5 + 3;
		nodes[i].deadline = e * TWT_MS;
		rnodes[i].deadline = e * TWT_MS;
		tw_wheel_add(w, &nodes[i]);
		tw_wheel_add(ref, &rnodes[i]);
	}
	twt_advance(test, ref, end);
	KUNIT_EXPECT_EQ(test, ref->nr_ready, (unsigned long)nr);

	do {
		budget = 1;
		more = tw_wheel_advance(w, end, &budget);
		moves += !budget;
		KUNIT_ASSERT_LT(test, ++calls, 100000U);
		KUNIT_EXPECT_TRUE(test, !more || !budget);
	} while (more);
	KUNIT_EXPECT_EQ(test, (u64)moves, w->reslots + nr);
	KUNIT_EXPECT_EQ(test, w->reslots, ref->reslots);
	KUNIT_EXPECT_GT(test, w->reslots, 0ULL);

	/* Once nothing is due, a call moves nothing and catches up. */
	budget = 1;
	KUNIT_EXPECT_FALSE(test, tw_wheel_advance(w, end, &budget));
	KUNIT_EXPECT_EQ(test, budget, 1U);
	KUNIT_EXPECT_EQ(test, w->cur, ref->cur);
	KUNIT_EXPECT_EQ(test, w->nr_ready, (unsigned long)nr);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);

	/* The same events in the same order. */
	r = list_first_entry(&ref->ready, struct tw_node, ready);
	list_for_each_entry(n, &w->ready, ready) {
		KUNIT_EXPECT_EQ(test, n->id, r->id);
		KUNIT_EXPECT_EQ(test, n->expired, end);
		r = list_next_entry(r, ready);
	}
}

/* A budget of 0 moves nothing and reports whether work is due. */
static void twt_budget_zero(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_node *n = twt_arm(test, w, 1, 10 * TWT_MS);
	unsigned int budget = 0;

	KUNIT_EXPECT_FALSE(test, tw_wheel_advance(w, 9 * TWT_MS, &budget));
	KUNIT_EXPECT_TRUE(test, tw_wheel_advance(w, 10 * TWT_MS, &budget));
	KUNIT_EXPECT_EQ(test, budget, 0U);
	KUNIT_EXPECT_EQ(test, w->cur, 0ULL);
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	twt_expect_at(test, w, n, 0, 10);

	/* A node in the drain list is due at once. */
	n = twt_arm(test, w, 2, 0);
	KUNIT_EXPECT_TRUE(test, tw_wheel_advance(w, 0, &budget));
	KUNIT_EXPECT_EQ(test, n->expired, 0ULL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 2UL);
}

/*
 * The budget runs out half-way through a due slot: the rest waits in the
 * drain list, which the caller may change before resuming.
 */
static void twt_budget_pause_in_drain(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_node *nodes = twt_nodes(test, 5);
	struct tw_node *far = twt_arm(test, w, 10, 200 * TWT_MS);
	struct tw_node *gone = NULL, *late, *soon;
	unsigned int i, budget = 2;
	u64 t;

	for (i = 0; i < 5; i++) {
		nodes[i].deadline = 10 * TWT_MS;
		tw_wheel_add(w, &nodes[i]);
	}
	KUNIT_EXPECT_TRUE(test, tw_wheel_advance(w, 10 * TWT_MS, &budget));
	KUNIT_EXPECT_EQ(test, budget, 0U);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 2UL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 4UL);
	KUNIT_EXPECT_EQ(test, w->cur, 10ULL);
	KUNIT_EXPECT_FALSE(test, w->pending[0] & BIT_ULL(10));
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, 10ULL);

	/* No catch-up over unfinished work. */
	tw_wheel_catch_up(w, 50 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->cur, 10ULL);

	for (i = 0; i < 5; i++) {
		if (nodes[i].expired)
			continue;
		KUNIT_EXPECT_TRUE(test, twt_in_drain(w, &nodes[i]));
		gone = &nodes[i];
	}
	KUNIT_ASSERT_NOT_NULL(test, gone);
	tw_wheel_del(w, gone);
	late = twt_arm(test, w, 11, 9 * TWT_MS);
	soon = twt_arm(test, w, 12, 12 * TWT_MS);
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, late));
	twt_expect_at(test, w, soon, 0, 12);
	twt_expect_at(test, w, far, 1, 3);
	twt_check_pending(test, w);

	budget = 10;
	KUNIT_EXPECT_FALSE(test, tw_wheel_advance(w, 10 * TWT_MS, &budget));
	KUNIT_EXPECT_EQ(test, budget, 10U - 3);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 5UL);
	KUNIT_EXPECT_EQ(test, gone->expired, 0ULL);
	KUNIT_EXPECT_EQ(test, late->expired, 10 * TWT_MS);
	KUNIT_EXPECT_EQ(test, soon->expired, 0ULL);
	twt_advance(test, w, 12 * TWT_MS);
	KUNIT_EXPECT_EQ(test, soon->expired, 12 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 1UL);
}

/* ------------------------------------------------------------- index */

static struct tw_node **twt_table(struct kunit *test, unsigned int bits)
{
	struct tw_node **tab = kunit_kcalloc(test, BIT(bits), sizeof(*tab),
					     GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, tab);
	return tab;
}

static struct tw_index *twt_index(struct kunit *test, unsigned int bits)
{
	struct tw_index *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	tw_index_init(x, twt_table(test, bits), bits);
	return x;
}

/* A chain: every key in bucket @i of a 2^@bits table, strictly ascending. */
static unsigned long twt_check_chain(struct kunit *test,
				     const struct tw_index *x,
				     const struct tw_node *n,
				     unsigned int bits, unsigned long i)
{
	unsigned long nr = 0;
	u64 prev = 0;

	for (; n; n = n->hnext, nr++) {
		u64 key = tw_key(n->id);

		KUNIT_EXPECT_EQ_MSG(test, key >> (64 - bits), (u64)i,
				    "id %llu in the wrong bucket", n->id);
		if (nr)
			KUNIT_EXPECT_LT_MSG(test, prev, key,
					    "bucket %lu not sorted", i);
		/* While resizing, a key of an unmigrated bucket is in @old. */
		if (x->old && bits == x->bits)
			KUNIT_EXPECT_LT(test, key >> (64 - x->old_bits),
					(u64)x->migrated);
		prev = key;
		KUNIT_ASSERT_LT(test, nr, 100000UL);
	}
	return nr;
}

/* The whole layout of @x; returns the number of nodes in it. */
static unsigned long twt_check_index(struct kunit *test,
				     const struct tw_index *x)
{
	unsigned long i, nr = 0;

	if (x->old) {
		for (i = 0; i < BIT(x->old_bits); i++) {
			if (i < x->migrated)
				KUNIT_EXPECT_NULL(test, x->old[i]);
			else
				nr += twt_check_chain(test, x, x->old[i],
						      x->old_bits, i);
		}
	}
	for (i = 0; i < BIT(x->bits); i++)
		nr += twt_check_chain(test, x, x->tab[i], x->bits, i);
	KUNIT_EXPECT_EQ(test, nr, x->nr);
	return nr;
}

/* Every node of @nodes marked present (expired != 0) is found, every other one not. */
static void twt_check_find(struct kunit *test, const struct tw_index *x,
			   struct tw_node *nodes, unsigned int nr)
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		struct tw_node *want = nodes[i].expired ? &nodes[i] : NULL;

		KUNIT_EXPECT_PTR_EQ_MSG(test, tw_index_find(x, nodes[i].id),
					want, "id %llu", nodes[i].id);
	}
}

/*
 * Insert or remove @n, and mark it present (expired 1) or absent (expired
 * 0): the index never looks at that field.
 */
static void twt_insert(struct kunit *test, struct tw_index *x,
		       struct tw_node *n)
{
	KUNIT_ASSERT_NULL(test, tw_index_find(x, n->id));
	tw_index_insert(x, n);
	n->expired = 1;
}

/* tw_index_remove() of a node that is not found would run off its chain. */
static void twt_remove(struct kunit *test, struct tw_index *x,
		       struct tw_node *n)
{
	KUNIT_ASSERT_PTR_EQ(test, tw_index_find(x, n->id), n);
	tw_index_remove(x, n);
	n->expired = 0;
}

static void twt_index_basic(struct kunit *test)
{
	const u64 b5 = 5ULL << 58;
	struct tw_index *x = twt_index(test, TW_IDX_MIN_BITS);
	struct tw_node *k = twt_nodes(test, 5);
	struct tw_node *nodes = twt_nodes(test, 500);
	u64 seed = 5;
	unsigned int i;

	KUNIT_ASSERT_EQ(test, TWT_KEY_INV * GOLDEN_RATIO_64, 1ULL);
	KUNIT_EXPECT_EQ(test, tw_key(twt_id_of_key(b5 + 100)), b5 + 100);

	/* Three keys of bucket 5, inserted out of order, chained sorted. */
	k[0].id = twt_id_of_key(b5 + 300);
	k[1].id = twt_id_of_key(b5 + 100);
	k[2].id = twt_id_of_key(b5 + 200);
	k[3].id = 0;
	k[4].id = twt_id_of_key(U64_MAX);
	for (i = 0; i < 5; i++)
		twt_insert(test, x, &k[i]);
	KUNIT_EXPECT_PTR_EQ(test, x->tab[5], &k[1]);
	KUNIT_EXPECT_PTR_EQ(test, k[1].hnext, &k[2]);
	KUNIT_EXPECT_PTR_EQ(test, k[2].hnext, &k[0]);
	KUNIT_EXPECT_NULL(test, k[0].hnext);
	KUNIT_EXPECT_PTR_EQ(test, x->tab[0], &k[3]);
	KUNIT_EXPECT_PTR_EQ(test, x->tab[63], &k[4]);
	KUNIT_EXPECT_EQ(test, x->nr, 5UL);
	twt_check_find(test, x, k, 5);
	KUNIT_EXPECT_NULL(test, tw_index_find(x, twt_id_of_key(b5 + 150)));
	KUNIT_EXPECT_NULL(test, tw_index_find(x, twt_id_of_key(b5 + 301)));
	KUNIT_EXPECT_NULL(test, tw_index_find(x, 1));

	/* Middle, head, tail. */
	twt_remove(test, x, &k[2]);
	KUNIT_EXPECT_NULL(test, k[2].hnext);
	KUNIT_EXPECT_PTR_EQ(test, k[1].hnext, &k[0]);
	twt_remove(test, x, &k[1]);
	KUNIT_EXPECT_PTR_EQ(test, x->tab[5], &k[0]);
	twt_remove(test, x, &k[0]);
	KUNIT_EXPECT_NULL(test, x->tab[5]);
	twt_check_find(test, x, k, 5);
	KUNIT_EXPECT_EQ(test, x->nr, 2UL);
	twt_check_index(test, x);

	/* Many ids in a small table: long chains. */
	for (i = 0; i < 500; i++) {
		nodes[i].id = twt_rand(&seed);
		twt_insert(test, x, &nodes[i]);
	}
	KUNIT_EXPECT_EQ(test, twt_check_index(test, x), 502UL);
	twt_check_find(test, x, nodes, 500);
	for (i = 0; i < 500; i += 2)
		twt_remove(test, x, &nodes[i]);
	KUNIT_EXPECT_EQ(test, twt_check_index(test, x), 252UL);
	twt_check_find(test, x, nodes, 500);
	twt_check_find(test, x, k, 5);
}

static void twt_index_want_bits(struct kunit *test)
{
	struct tw_index x = { .bits = TW_IDX_MIN_BITS };

	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 0U);
	x.nr = 64;
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 0U);
	x.nr = 65;
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 7U);

	x.bits = 8;
	x.nr = 32;
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 0U);
	x.nr = 31;
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 7U);
	x.nr = 256;
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 0U);
	x.nr = 257;
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 9U);

	/* Nothing while a resize is migrating. */
	x.old = twt_table(test, 7);
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 0U);
	x.nr = 0;
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 0U);
	x.old = NULL;
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 7U);

#if BITS_PER_LONG == 64
	x.bits = TW_IDX_MAX_BITS;
	x.nr = BIT(TW_IDX_MAX_BITS) + 1;
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), 0U);
	x.nr = 1000;
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(&x), TW_IDX_MAX_BITS - 1U);
#endif
}

/* Grow 64 -> 128 buckets one bucket at a time, ids coming and going. */
static void twt_index_grow_steps(struct kunit *test)
{
	const u64 b3 = 3ULL << 58;
	const unsigned int nr = 300;
	struct tw_index *x = twt_index(test, TW_IDX_MIN_BITS);
	struct tw_node *nodes = twt_nodes(test, nr);
	struct tw_node **old = x->tab, **ret;
	unsigned int i, step;
	u64 seed = 9;

	for (i = 0; i < nr; i++)
		nodes[i].id = twt_rand(&seed);
	/* Bucket 3 splits into 6 and 7: keys on both sides of the split. */
	nodes[0].id = twt_id_of_key(b3);
	nodes[1].id = twt_id_of_key(b3 | BIT_ULL(57));
	nodes[2].id = twt_id_of_key(b3 | (BIT_ULL(57) - 1));
	nodes[3].id = twt_id_of_key((4ULL << 58) - 1);
	for (i = 0; i < 100; i++)
		twt_insert(test, x, &nodes[i]);
	KUNIT_ASSERT_EQ(test, tw_index_want_bits(x), 7U);
	tw_index_start_resize(x, twt_table(test, 7), 7);
	KUNIT_EXPECT_PTR_EQ(test, x->old, old);
	KUNIT_EXPECT_EQ(test, x->old_bits, 6U);
	KUNIT_EXPECT_EQ(test, x->bits, 7U);
	KUNIT_EXPECT_EQ(test, x->migrated, 0UL);
	KUNIT_EXPECT_EQ(test, tw_index_want_bits(x), 0U);
	twt_check_index(test, x);

	for (step = 0; step < 64; step++) {
		ret = tw_index_migrate(x, 1);
		if (step < 63) {
			KUNIT_EXPECT_NULL(test, ret);
			KUNIT_EXPECT_EQ(test, x->migrated, step + 1UL);
		} else {
			KUNIT_EXPECT_PTR_EQ(test, ret, old);
			KUNIT_EXPECT_NULL(test, x->old);
		}
		KUNIT_ASSERT_EQ(test, twt_check_index(test, x), x->nr);
		twt_check_find(test, x, nodes, nr);
		twt_insert(test, x, &nodes[100 + 2 * step]);
		twt_insert(test, x, &nodes[101 + 2 * step]);
		twt_remove(test, x, &nodes[4 + step]);
		twt_check_index(test, x);
		twt_check_find(test, x, nodes, nr);
	}
	KUNIT_EXPECT_EQ(test, x->nr, 164UL);
	KUNIT_EXPECT_PTR_EQ(test, x->tab[6], &nodes[0]);
	KUNIT_EXPECT_PTR_EQ(test, x->tab[7], &nodes[1]);
	KUNIT_EXPECT_NULL(test, tw_index_migrate(x, 1));
	KUNIT_EXPECT_EQ(test, x->bits, 7U);

	/* One call moving everything: the old table comes back once. */
	for (i = 228; i < nr; i++)
		twt_insert(test, x, &nodes[i]);
	KUNIT_ASSERT_EQ(test, tw_index_want_bits(x), 8U);
	old = x->tab;
	tw_index_start_resize(x, twt_table(test, 8), 8);
	KUNIT_EXPECT_PTR_EQ(test, tw_index_migrate(x, 1000), old);
	KUNIT_EXPECT_NULL(test, x->old);
	KUNIT_EXPECT_NULL(test, tw_index_migrate(x, 1000));
	KUNIT_EXPECT_EQ(test, twt_check_index(test, x), 236UL);
	twt_check_find(test, x, nodes, nr);
}

/* Shrink 128 -> 64 buckets: old buckets 2j and 2j + 1 join in bucket j. */
static void twt_index_shrink_steps(struct kunit *test)
{
	const u64 o6 = 6ULL << 57, o7 = 7ULL << 57;
	const unsigned int nr = 200;
	struct tw_index *x = twt_index(test, 7);
	struct tw_node *nodes = twt_nodes(test, nr);
	struct tw_node **old = x->tab, **ret;
	unsigned int i, step;
	u64 seed = 13;

	/* Random ids stay out of old buckets 6 and 7 (top bits 000011). */
	for (i = 0; i < nr; i++) {
		nodes[i].id = twt_rand(&seed);
		if (tw_key(nodes[i].id) >> 58 == 3)
			nodes[i].id = twt_id_of_key(tw_key(nodes[i].id) ^
						    BIT_ULL(63));
	}
	nodes[0].id = twt_id_of_key(o6 + 5);
	nodes[1].id = twt_id_of_key(o7 + 1);
	nodes[2].id = twt_id_of_key(o6 + BIT_ULL(56));
	nodes[3].id = twt_id_of_key(o7 + BIT_ULL(57) - 1);
	nodes[150].id = twt_id_of_key(o7 + 2);
	nodes[151].id = twt_id_of_key(o6 + 6);
	for (i = 0; i < 12; i++)
		twt_insert(test, x, &nodes[i]);
	KUNIT_ASSERT_EQ(test, tw_index_want_bits(x), 6U);
	tw_index_start_resize(x, twt_table(test, 6), 6);
	twt_check_index(test, x);

	for (step = 0; step < 128; step++) {
		ret = tw_index_migrate(x, 1);
		if (step < 127)
			KUNIT_EXPECT_NULL(test, ret);
		else
			KUNIT_EXPECT_PTR_EQ(test, ret, old);
		KUNIT_ASSERT_EQ(test, twt_check_index(test, x), x->nr);
		twt_check_find(test, x, nodes, nr);
		/* Old bucket 6 moved, 7 not: one new id for each side. */
		if (x->migrated == 7 && x->old) {
			twt_insert(test, x, &nodes[150]);
			twt_insert(test, x, &nodes[151]);
			KUNIT_EXPECT_PTR_EQ(test, x->old[7], &nodes[1]);
			KUNIT_EXPECT_PTR_EQ(test, nodes[1].hnext, &nodes[150]);
			KUNIT_EXPECT_PTR_EQ(test, nodes[0].hnext, &nodes[151]);
		}
		twt_insert(test, x, &nodes[12 + step]);
		if (step & 1)
			twt_remove(test, x, &nodes[11 + step]);
		twt_check_index(test, x);
		twt_check_find(test, x, nodes, nr);
	}
	KUNIT_EXPECT_NULL(test, x->old);
	KUNIT_EXPECT_EQ(test, x->bits, 6U);
	/* New bucket 3: 6 + 5, 6 + 6, 6 + 2^56, then 7 + 1, 7 + 2, ... */
	KUNIT_EXPECT_PTR_EQ(test, x->tab[3], &nodes[0]);
	KUNIT_EXPECT_PTR_EQ(test, nodes[0].hnext, &nodes[151]);
	KUNIT_EXPECT_PTR_EQ(test, nodes[151].hnext, &nodes[2]);
	KUNIT_EXPECT_PTR_EQ(test, nodes[2].hnext, &nodes[1]);
	KUNIT_EXPECT_PTR_EQ(test, nodes[1].hnext, &nodes[150]);
	KUNIT_EXPECT_EQ(test, x->nr, 12UL + 2 + 64);
}

/*
 * Between two dump calls the index changes: an id of the pool comes or
 * goes, a resize starts or migrates a few buckets.  Returns true when a
 * resize started.
 */
static bool twt_mutate(struct kunit *test, struct tw_index *x,
		       struct tw_node *pool, unsigned int nr, u64 *seed)
{
	struct tw_node *n = &pool[twt_rand(seed) % nr];
	unsigned int bits = x->bits;

	if (n->expired)
		twt_remove(test, x, n);
	else
		twt_insert(test, x, n);
	if (x->old) {
		tw_index_migrate(x, 1 + twt_rand(seed) % 4);
		return false;
	}
	if (twt_rand(seed) % 2)
		return false;
	if (bits >= 8 || (bits > TW_IDX_MIN_BITS && twt_rand(seed) % 2))
		bits--;
	else
		bits++;
	tw_index_start_resize(x, twt_table(test, bits), bits);
	return true;
}

/*
 * One whole dump with @room slots per call and 1..3 buckets of budget.
 * nodes[0..@keep) stay in the index throughout and must be listed exactly
 * once; nodes[@keep..@nr) come and go (when @mutate) and are listed at
 * most once, and only while present.  Keys come out strictly ascending.
 * Returns the number of resizes started.
 */
static unsigned int twt_dump_pass(struct kunit *test, struct tw_index *x,
				  struct tw_node *nodes, unsigned int nr,
				  unsigned int keep, unsigned long room,
				  bool mutate, u64 *seed)
{
	unsigned int *seen = kunit_kcalloc(test, nr, sizeof(*seen), GFP_KERNEL);
	unsigned int i, calls = 0, resizes = 0;
	struct tw_node *out[3];
	u64 cursor = 0, last = 0;
	bool any = false;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	while (cursor < TW_CURSOR_END) {
		unsigned long budget = 1 + twt_rand(seed) % 3, got, k;
		u64 from = cursor;

		got = tw_index_dump(x, &cursor, out, room, &budget);
		KUNIT_ASSERT_LE(test, got, room);
		KUNIT_ASSERT_TRUE_MSG(test, got || !budget || cursor >= TW_CURSOR_END,
				      "stuck at cell %llu with room %lu",
				      cursor, room);
		KUNIT_EXPECT_GT(test, cursor, from);
		for (k = 0; k < got; k++) {
			u64 key = tw_key(out[k]->id);

			KUNIT_ASSERT_TRUE(test, out[k] >= nodes &&
					  out[k] < nodes + nr);
			KUNIT_EXPECT_TRUE(test, out[k]->expired);
			KUNIT_EXPECT_GE(test, key >> 1, from);
			KUNIT_EXPECT_LT(test, key >> 1, cursor);
			if (any)
				KUNIT_EXPECT_LT(test, last, key);
			seen[out[k] - nodes]++;
			last = key;
			any = true;
		}
		KUNIT_ASSERT_LT(test, ++calls, 200000U);
		if (mutate)
			resizes += twt_mutate(test, x, nodes + keep, nr - keep,
					      seed);
	}
	KUNIT_EXPECT_EQ(test, cursor, TW_CURSOR_END);
	for (i = 0; i < nr; i++) {
		if (i < keep || !mutate)
			KUNIT_EXPECT_EQ_MSG(test, seen[i], i < keep ? 1U :
					    (unsigned int)nodes[i].expired,
					    "room %lu, id %llu", room,
					    nodes[i].id);
		else
			KUNIT_EXPECT_LE(test, seen[i], 1U);
	}
	twt_check_index(test, x);
	return resizes;
}

static void twt_index_dump_resize(struct kunit *test)
{
	const unsigned int nr = 400, keep = 150;
	struct tw_index *x = twt_index(test, TW_IDX_MIN_BITS);
	struct tw_node *nodes = twt_nodes(test, nr);
	unsigned long room;
	u64 seed = 17;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		nodes[i].id = twt_rand(&seed);
		if (i < keep || i % 2)
			twt_insert(test, x, &nodes[i]);
	}
	for (room = 1; room <= 3; room++) {
		KUNIT_EXPECT_GT(test, twt_dump_pass(test, x, nodes, nr, keep,
						    room, true, &seed), 0U);
		/* Finish any resize, then a dump of a quiet index. */
		while (x->old)
			tw_index_migrate(x, 1);
		twt_dump_pass(test, x, nodes, nr, keep, room, false, &seed);
	}
}

/* Two keys that differ only in bit 0 share a cell: listed together. */
static void twt_index_dump_cell(struct kunit *test)
{
	const u64 half = BIT_ULL(63);
	struct tw_index *x = twt_index(test, TW_IDX_MIN_BITS);
	struct tw_node *k = twt_nodes(test, 5);
	unsigned long budget = 100, got;
	struct tw_node *out[3];
	u64 cursor = 0;
	unsigned int i;

	k[0].id = twt_id_of_key(BIT_ULL(62));
	k[1].id = twt_id_of_key(half);
	k[2].id = twt_id_of_key(half + 1);
	k[3].id = twt_id_of_key(half + 4);
	k[4].id = twt_id_of_key(3ULL << 62);
	for (i = 0; i < 5; i++)
		twt_insert(test, x, &k[i]);

	/* Room 1: k[0], then the pair does not fit. */
	got = tw_index_dump(x, &cursor, out, 1, &budget);
	KUNIT_EXPECT_EQ(test, got, 1UL);
	KUNIT_EXPECT_PTR_EQ(test, out[0], &k[0]);
	KUNIT_EXPECT_EQ(test, cursor, BIT_ULL(61) + 1);
	got = tw_index_dump(x, &cursor, out, 1, &budget);
	KUNIT_EXPECT_EQ(test, got, 0UL);
	KUNIT_EXPECT_EQ(test, cursor, BIT_ULL(62));
	KUNIT_EXPECT_GT(test, budget, 0UL);
	/* The same cursor with room 2 gets both. */
	got = tw_index_dump(x, &cursor, out, 2, &budget);
	KUNIT_EXPECT_EQ(test, got, 2UL);
	KUNIT_EXPECT_PTR_EQ(test, out[0], &k[1]);
	KUNIT_EXPECT_PTR_EQ(test, out[1], &k[2]);
	KUNIT_EXPECT_EQ(test, cursor, BIT_ULL(62) + 1);
	got = tw_index_dump(x, &cursor, out, 3, &budget);
	KUNIT_EXPECT_EQ(test, got, 2UL);
	KUNIT_EXPECT_PTR_EQ(test, out[0], &k[3]);
	KUNIT_EXPECT_PTR_EQ(test, out[1], &k[4]);
	KUNIT_EXPECT_EQ(test, cursor, TW_CURSOR_END);

	/* Room 2 after one node: the pair waits for the next call. */
	cursor = 0;
	budget = 100;
	got = tw_index_dump(x, &cursor, out, 2, &budget);
	KUNIT_EXPECT_EQ(test, got, 1UL);
	KUNIT_EXPECT_EQ(test, cursor, BIT_ULL(62));
	got = tw_index_dump(x, &cursor, out, 3, &budget);
	KUNIT_EXPECT_EQ(test, got, 3UL);
	KUNIT_EXPECT_PTR_EQ(test, out[2], &k[3]);
	KUNIT_EXPECT_EQ(test, cursor, ((half + 4) >> 1) + 1);

	/* At the end: nothing, no budget spent.  Budget 1: one bucket. */
	cursor = TW_CURSOR_END;
	got = budget;
	KUNIT_EXPECT_EQ(test, tw_index_dump(x, &cursor, out, 3, &budget), 0UL);
	KUNIT_EXPECT_EQ(test, budget, got);
	KUNIT_EXPECT_EQ(test, cursor, TW_CURSOR_END);
	cursor = 0;
	budget = 1;
	KUNIT_EXPECT_EQ(test, tw_index_dump(x, &cursor, out, 3, &budget), 0UL);
	KUNIT_EXPECT_EQ(test, cursor, BIT_ULL(57));
	KUNIT_EXPECT_EQ(test, budget, 0UL);
}

/* Tear-down: every node popped once, in the middle of a resize too. */
static void twt_index_pop(struct kunit *test)
{
	const unsigned int nr = 150;
	struct tw_index *x = twt_index(test, TW_IDX_MIN_BITS);
	struct tw_node *nodes = twt_nodes(test, nr);
	unsigned long pos = 0, popped = 0, i;
	struct tw_node *n;
	u64 seed = 23;

	KUNIT_EXPECT_NULL(test, tw_index_pop(x, &pos));
	KUNIT_EXPECT_EQ(test, pos, 0UL);
	for (i = 0; i < nr; i++) {
		nodes[i].id = twt_rand(&seed);
		twt_insert(test, x, &nodes[i]);
	}
	tw_index_start_resize(x, twt_table(test, 7), 7);
	tw_index_migrate(x, 10);
	/* tw_index_pop() trusts x->nr: a lost node would make it overrun. */
	KUNIT_ASSERT_EQ(test, twt_check_index(test, x), (unsigned long)nr);
	while ((n = tw_index_pop(x, &pos))) {
		KUNIT_ASSERT_TRUE(test, n >= nodes && n < nodes + nr);
		KUNIT_EXPECT_EQ_MSG(test, n->expired, 1ULL, "id %llu twice", n->id);
		KUNIT_EXPECT_NULL(test, n->hnext);
		n->expired = 0;
		KUNIT_ASSERT_LE(test, ++popped, (unsigned long)nr);
		if (popped == nr / 2) {
			twt_check_index(test, x);
			twt_check_find(test, x, nodes, nr);
		}
	}
	KUNIT_EXPECT_EQ(test, popped, (unsigned long)nr);
	KUNIT_EXPECT_EQ(test, x->nr, 0UL);
	KUNIT_EXPECT_NULL(test, tw_index_pop(x, &pos));
	KUNIT_EXPECT_EQ(test, twt_check_index(test, x), 0UL);
}

static struct kunit_case twt_cases[] = {
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
	KUNIT_CASE(twt_caller_flag),
	KUNIT_CASE(twt_min_timeout),
	KUNIT_CASE(twt_budget_one),
	KUNIT_CASE(twt_budget_zero),
	KUNIT_CASE(twt_budget_pause_in_drain),
	KUNIT_CASE(twt_index_basic),
	KUNIT_CASE(twt_index_want_bits),
	KUNIT_CASE(twt_index_grow_steps),
	KUNIT_CASE(twt_index_shrink_steps),
	KUNIT_CASE(twt_index_dump_resize),
	KUNIT_CASE(twt_index_dump_cell),
	KUNIT_CASE(twt_index_pop),
	{}
};

static struct kunit_suite twt_suite = {
	.name = "twheel_core",
	.test_cases = twt_cases,
};

kunit_test_suite(twt_suite);
