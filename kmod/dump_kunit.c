// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_dump": the ordered DUMP walk of the index: cells,
 * cursors, budgets, resizes.
 *
 * One of the suites of twheel_kunit.ko; kunit_helpers.h has the helpers
 * they share and how the module and its user-space build run them.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/twheel.h>

#include "wheel.h"
#include "model.h"
#include "kunit_helpers.h"

/*
 * Between two dump calls the index changes: an id of nodes[@keep..) comes
 * or goes, a resize (to any size that holds every id) starts or migrates
 * a few entries.  Returns true when a resize started.
 */
static bool twt_mutate(struct twt_ix *c, unsigned int keep, u64 *seed)
{
	struct tw_index *x = &c->x;
	unsigned int i = keep + twt_rand(seed) % (c->nr - keep);
	unsigned long size;

	if (twt_in(&c->nodes[i]))
		twt_rm(c, i);
	else if (tw_index_room(x))
		twt_ins(c, i, twt_rand(seed) >> 2);
	if (x->old) {
		twt_migrate(c, 1 + twt_rand(seed) % 4);
		return false;
	}
	if (twt_rand(seed) % 2)
		return false;
	size = max_t(unsigned long, TW_IDX_MIN, c->nr * 16 / 15 + 2);
	twt_resize(c, size + twt_rand(seed) % 300);
	return true;
}

/*
 * One whole dump with @room entries per call and a budget that never runs
 * out (small budgets: twt_index_dump_budget).
 * nodes[0..@keep) stay in the index throughout and must be listed exactly
 * once; with @mutate the others come and go and are listed at most once,
 * only while present; without, each present one exactly once.  Keys come
 * out strictly ascending, within the keys the cursor moved over.
 * Returns the number of resizes started.
 */
static unsigned int twt_dump_pass(struct twt_ix *c, unsigned int keep,
				  unsigned long room, bool mutate, u64 *seed)
{
	struct kunit *test = c->test;
	u8 *seen = kunit_kcalloc(test, c->nr, sizeof(*seen), GFP_KERNEL);
	unsigned int i, calls = 0, resizes = 0;
	struct tw_ent out[3];
	u64 cursor = 0, last = 0;
	bool any = false;

	KUNIT_ASSERT_NOT_NULL(test, seen);
	while (cursor != TW_CURSOR_END) {
		unsigned long budget = 100000, got, k;
		unsigned long r = room;
		u64 from = cursor, first = tw_cursor_key(from), pair;

		got = tw_index_dump(&c->x, &cursor, out, r, &budget);
		if (!got && budget && cursor != TW_CURSOR_END) {
			/* the last cell holds two ids: only with room 1 */
			KUNIT_ASSERT_EQ(test, r, 1UL);
			KUNIT_ASSERT_EQ(test, cursor, TW_CURSOR_END - 1);
			pair = tw_key_id(&c->x, cursor << 1);
			KUNIT_EXPECT_NOT_NULL(test, tw_index_find(&c->x, pair));
			pair = tw_key_id(&c->x, cursor << 1 | 1);
			KUNIT_EXPECT_NOT_NULL(test, tw_index_find(&c->x, pair));
			r = 2;
			got = tw_index_dump(&c->x, &cursor, out, r, &budget);
			KUNIT_EXPECT_EQ(test, got, 2UL);
		}
		KUNIT_ASSERT_LE(test, got, r);
		KUNIT_EXPECT_GT(test, budget, 0UL);
		KUNIT_ASSERT_TRUE_MSG(test, tw_cursor_passed(cursor, first),
				      "no progress at cursor %llx, room %lu",
				      cursor, r);
		for (k = 0; k < got; k++) {
			const struct tw_node *n = out[k].node;
			u64 key = tw_key(&c->x, out[k].id);

			KUNIT_ASSERT_TRUE(test, n >= c->nodes &&
					  n < c->nodes + c->nr);
			KUNIT_EXPECT_EQ(test, out[k].id, n->id);
			KUNIT_EXPECT_TRUE(test, twt_in(n));
			KUNIT_EXPECT_EQ(test, out[k].deadline,
					twt_want_deadline(n));
			KUNIT_EXPECT_GE(test, key, tw_cursor_key(from));
			KUNIT_EXPECT_TRUE(test, tw_cursor_passed(cursor, key));
			if (any)
				KUNIT_EXPECT_LT(test, last, key);
			seen[n - c->nodes]++;
			last = key;
			any = true;
		}
		KUNIT_ASSERT_LT(test, ++calls, 200000U);
		if (mutate)
			resizes += twt_mutate(c, keep, seed);
	}
	KUNIT_EXPECT_EQ(test, cursor, TW_CURSOR_END);
	for (i = 0; i < c->nr; i++) {
		const struct tw_node *n = &c->nodes[i];

		if (i < keep || !mutate)
			KUNIT_EXPECT_EQ_MSG(test, seen[i],
					    i < keep ? 1U : (unsigned int)twt_in(n),
					    "room %lu, id %llu", room, n->id);
		else
			KUNIT_EXPECT_LE(test, seen[i], 1U);
	}
	twt_check(c);
	kunit_kfree(test, seen);
	return resizes;
}

static void twt_index_dump_resize(struct kunit *test)
{
	const unsigned int nr = 400, keep = 150;
	struct twt_ix *c = twt_ix(test, 500, nr);
	unsigned long room;
	u64 seed = 17;
	unsigned int i;

	for (i = 0; i < nr; i++) {
		c->nodes[i].id = twt_rand(&seed);
		/* a few pairs of ids in one cell */
		if (i % 50 == 1)
			c->nodes[i].id = tw_key_id(&c->x,
						   tw_key(&c->x, c->nodes[i - 1].id) ^ 1);
		if (i < keep || i % 2)
			twt_ins(c, i, twt_rand(&seed) >> 2);
	}
	twt_check(c);
	for (room = 1; room <= 3; room++) {
		KUNIT_EXPECT_GT(test, twt_dump_pass(c, keep, room, true, &seed),
				0U);
		/* A dump of a quiet index, half-way through a resize. */
		for (i = 0; c->old && i < 1000; i++)
			twt_migrate(c, 7);
		twt_resize(c, 450 + room);
		twt_migrate(c, 50);
		KUNIT_EXPECT_NOT_NULL(test, c->x.old);
		twt_dump_pass(c, keep, room, false, &seed);
		for (i = 0; c->old && i < 1000; i++)
			twt_migrate(c, 7);
		KUNIT_ASSERT_NULL(test, c->old);
		twt_dump_pass(c, keep, room, false, &seed);
	}
}

/*
 * One tw_index_dump() call from *@cursor with @room entries a call: it
 * lists the nodes named by the digits of @want (k[1] then k[2] for "12"),
 * each with its id and the deadline twt_dump_cell_keys() gave it, and
 * leaves the cursor at @next.
 */
static void twt_dump_expect(struct kunit *test, struct twt_ix *c, u64 *cursor,
			    unsigned long room, unsigned long *budget,
			    const char *want, u64 next)
{
	unsigned long i, n = strlen(want), got;
	struct tw_ent out[3];
	struct tw_node *k;

	got = tw_index_dump(&c->x, cursor, out, room, budget);
	KUNIT_EXPECT_EQ_MSG(test, got, n, "want \"%s\"", want);
	for (i = 0; i < min(got, n); i++) {
		k = &c->nodes[want[i] - '0'];
		KUNIT_EXPECT_PTR_EQ(test, out[i].node, k);
		KUNIT_EXPECT_EQ(test, out[i].id, k->id);
		KUNIT_EXPECT_EQ(test, out[i].deadline, 10ULL + (want[i] - '0'));
	}
	KUNIT_EXPECT_EQ(test, *cursor, next);
}

/*
 * k[0] .. k[4]: keys 2^62, a cell of two keys that differ only in bit 0
 * (2^63 and 2^63 + 1), 2^63 + 4 and 3 * 2^62; k[i] due at 10 + i.
 */
static void twt_dump_cell_keys(struct kunit *test, struct twt_ix *c)
{
	const u64 keys[] = { BIT_ULL(62), BIT_ULL(63), BIT_ULL(63) + 1,
			     BIT_ULL(63) + 4, 3ULL << 62 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		c->nodes[i].id = tw_key_id(&c->x, keys[i]);
		twt_ins(c, i, 10 + i);
	}
	KUNIT_EXPECT_EQ(test, tw_key(&c->x, c->nodes[2].id) >> 1,
			tw_key(&c->x, c->nodes[1].id) >> 1);
}

/* Two keys that differ only in bit 0 share a cell: listed together. */
static void twt_index_dump_cell(struct kunit *test)
{
	const u64 half = BIT_ULL(63);
	struct twt_ix *c = twt_ix(test, 100, 9);
	unsigned long budget = 1000, left;
	struct tw_ent out[3];
	u64 cursor = 0;

	twt_dump_cell_keys(test, c);
	/* Room 1: k[0], then the pair one by one, the odd key's cursor. */
	twt_dump_expect(test, c, &cursor, 1, &budget, "0", BIT_ULL(61) + 1);
	twt_dump_expect(test, c, &cursor, 1, &budget, "1",
			TW_CURSOR_END + 1 + BIT_ULL(62));
	KUNIT_EXPECT_EQ(test, tw_cursor_key(cursor), half + 1);
	twt_dump_expect(test, c, &cursor, 1, &budget, "2", BIT_ULL(62) + 1);
	KUNIT_EXPECT_GT(test, budget, 0UL);
	/* The cell's cursor with room 2 gets both. */
	cursor = BIT_ULL(62);
	twt_dump_expect(test, c, &cursor, 2, &budget, "12", BIT_ULL(62) + 1);
	twt_dump_expect(test, c, &cursor, 3, &budget, "34", TW_CURSOR_END);
	KUNIT_EXPECT_GT(test, budget, 0UL);

	/* Room 2 after one entry: the pair waits for the next call. */
	cursor = 0;
	budget = 1000;
	twt_dump_expect(test, c, &cursor, 2, &budget, "0", BIT_ULL(62));
	twt_dump_expect(test, c, &cursor, 3, &budget, "123",
			((half + 4) >> 1) + 1);

	/* At the end: nothing, no budget spent. */
	cursor = TW_CURSOR_END;
	left = budget;
	twt_dump_expect(test, c, &cursor, 3, &budget, "", TW_CURSOR_END);
	KUNIT_EXPECT_EQ(test, budget, left);
	/* Budget 1: slot 0 (empty) seen, every key below slot 1's too. */
	cursor = 0;
	budget = 1;
	KUNIT_EXPECT_EQ(test, tw_index_dump(&c->x, &cursor, out, 3, &budget),
			0UL);
	KUNIT_EXPECT_EQ(test, cursor, twt_home_key(1, 100) >> 1);
	KUNIT_EXPECT_EQ(test, budget, 0UL);
	twt_check(c);
}

/*
 * A cell split over the two tables of a resize, and the last cell, whose
 * odd key has no cursor of its own.
 */
static void twt_index_dump_cell_ends(struct kunit *test)
{
	const u64 half = BIT_ULL(63);
	struct twt_ix *c = twt_ix(test, 100, 9);
	struct tw_node *k = c->nodes;
	unsigned long budget = 1000;
	u64 cursor;

	twt_dump_cell_keys(test, c);
	/* A pair split over the two tables: 2c old, 2c + 1 new. */
	k[5].id = tw_key_id(&c->x, half + 8);
	k[6].id = tw_key_id(&c->x, half + 9);
	twt_ins(c, 5, 15);
	twt_resize(c, 150);
	twt_ins(c, 6, 16);
	KUNIT_EXPECT_FALSE(test, twt_in_tab(&c->x, tw_index_find(&c->x, k[5].id)));
	cursor = (half + 6) >> 1;
	twt_dump_expect(test, c, &cursor, 2, &budget, "56",
			((half + 8) >> 1) + 1);
	/* room 1: the old table's even key, then the new table's odd one */
	cursor = (half + 6) >> 1;
	twt_dump_expect(test, c, &cursor, 1, &budget, "5",
			TW_CURSOR_END + 1 + ((half + 8) >> 1));
	twt_dump_expect(test, c, &cursor, 1, &budget, "6",
			((half + 8) >> 1) + 1);
	KUNIT_EXPECT_GT(test, budget, 0UL);

	/* The last cell has no cursor for its odd key: room 1 stops there. */
	k[7].id = tw_key_id(&c->x, U64_MAX - 1);
	k[8].id = tw_key_id(&c->x, U64_MAX);
	twt_ins(c, 7, 17);
	twt_ins(c, 8, 18);
	twt_dump_expect(test, c, &cursor, 1, &budget, "4", (3ULL << 61) + 1);
	twt_dump_expect(test, c, &cursor, 1, &budget, "", TW_CURSOR_END - 1);
	KUNIT_EXPECT_GT(test, budget, 0UL);
	twt_dump_expect(test, c, &cursor, 2, &budget, "78", TW_CURSOR_END);
	twt_check(c);
}

/*
 * Dump from @cursor to the end with @budget slots and @room entries a
 * call, counting each node listed in c->seen, keys strictly ascending.
 * Returns false if the cursor got stuck: three calls in a row listed
 * nothing and left it where it was.
 */
static bool twt_dump_all(struct twt_ix *c, u64 cursor, unsigned long budget,
			 unsigned long room)
{
	struct kunit *test = c->test;
	unsigned int calls = 0, stuck = 0;
	struct tw_ent out[3];
	u64 last = 0;
	bool any = false;

	memset(c->seen, 0, c->nr);
	while (cursor != TW_CURSOR_END) {
		unsigned long left = budget, got, k;
		u64 from = cursor;

		got = tw_index_dump(&c->x, &cursor, out, room, &left);
		KUNIT_EXPECT_LE(test, got, room);
		KUNIT_EXPECT_LE(test, left, budget);
		KUNIT_EXPECT_TRUE(test, cursor == from ||
				  tw_cursor_passed(cursor, tw_cursor_key(from)));
		for (k = 0; k < got; k++) {
			const struct tw_node *n = out[k].node;
			u64 key = tw_key(&c->x, out[k].id);

			KUNIT_ASSERT_TRUE(test, n >= c->nodes &&
					  n < c->nodes + c->nr);
			KUNIT_EXPECT_GE(test, key, tw_cursor_key(from));
			KUNIT_EXPECT_TRUE(test, tw_cursor_passed(cursor, key));
			if (any)
				KUNIT_EXPECT_LT(test, last, key);
			last = key;
			any = true;
			c->seen[n - c->nodes]++;
		}
		stuck = got || cursor != from ? 0 : stuck + 1;
		if (stuck == 3) {
			KUNIT_FAIL(test, "budget %lu room %lu: stuck at cell %llx after %u calls",
				   budget, room, cursor, calls);
			return false;
		}
		KUNIT_ASSERT_LT(test, ++calls, 100000U);
	}
	return true;
}

/* Every node of @c in the index was listed exactly once, no other one. */
static void twt_expect_seen(struct twt_ix *c, unsigned long budget,
			    unsigned long room)
{
	unsigned int i, wrong = 0;
	u64 key = 0;

	for (i = 0; i < c->nr; i++) {
		if (c->seen[i] == twt_in(&c->nodes[i]))
			continue;
		if (!wrong++)
			key = tw_key(&c->x, c->nodes[i].id);
	}
	KUNIT_EXPECT_EQ_MSG(c->test, wrong, 0U,
			    "budget %lu room %lu: %u ids not listed once, the first key %llx",
			    budget, room, wrong, key);
}

/*
 * The smallest budgets: each call either lists something or moves the
 * cursor, and the whole dump lists every id once, in key order.
 */
static void twt_index_dump_budget(struct kunit *test)
{
	static const unsigned long budgets[] = { 1, 2, 3, 4, 16 };
	const u64 s = BIT_ULL(58);	/* 2^64 / 64: the keys of a slot */
	struct twt_ix *c;
	unsigned long b, room;
	unsigned int i;
	u64 seed = 29;

	/*
	 * Keys at home 5 in slots 5, 6 and 7 of 64, the dump starting between
	 * the first two: with the budget spent in slot 5 or 6, the two keys
	 * of home 5 that sit in slots 6 and 7 are still to come.
	 */
	c = twt_ix(test, TW_IDX_MIN, 3);
	for (i = 0; i < 3; i++)
		c->nodes[i].id = tw_key_id(&c->x, 5 * s + 10 + 10 * i);
	for (i = 0; i < 3; i++)
		twt_ins(c, i, i);
	KUNIT_EXPECT_PTR_EQ(test, c->x.tab[7].node, &c->nodes[2]);
	for (b = 1; b <= 3; b++) {
		if (!twt_dump_all(c, (5 * s + 15) >> 1, b, 3))
			continue;
		KUNIT_EXPECT_EQ(test, c->seen[0], 0);
		KUNIT_EXPECT_EQ_MSG(test, c->seen[1], 1, "budget %lu", b);
		KUNIT_EXPECT_EQ_MSG(test, c->seen[2], 1, "budget %lu", b);
	}

	/* The walk crosses the end of the table as the budget runs out. */
	c = twt_ix(test, TW_IDX_MIN, 2);
	c->nodes[0].id = tw_key_id(&c->x, 62 * s + 1);
	c->nodes[1].id = tw_key_id(&c->x, 63 * s + 1);
	twt_ins(c, 0, 0);
	for (b = 1; b <= 3; b++) {
		/* the id's cell is below this cursor: nothing is listed */
		if (twt_dump_all(c, (62 * s + 2) >> 1, b, 3))
			KUNIT_EXPECT_EQ(test, c->seen[0], 0);
		if (twt_dump_all(c, 0, b, 3))
			twt_expect_seen(c, b, 3);
	}
	twt_ins(c, 1, 1);
	for (b = 1; b <= 3; b++)
		if (twt_dump_all(c, 0, b, 3))
			twt_expect_seen(c, b, 3);

	/*
	 * Slot 1 of 100 starts at an odd key: the cell of its first key
	 * straddles slots 0 and 1.
	 */
	c = twt_ix(test, 100, 1);
	KUNIT_EXPECT_TRUE(test, twt_home_key(1, 100) & 1);
	c->nodes[0].id = tw_key_id(&c->x, 50 * twt_home_key(1, 100));
	twt_ins(c, 0, 0);
	for (b = 1; b <= 2; b++)
		if (twt_dump_all(c, twt_home_key(1, 100) >> 1, b, 1))
			twt_expect_seen(c, b, 1);

	/* Random ids half-way through a resize, 100 -> 150 slots. */
	c = twt_ix(test, 100, 120);
	for (i = 0; i < c->nr; i++) {
		c->nodes[i].id = twt_rand(&seed);
		if (i < 80)
			twt_ins(c, i, i);
	}
	twt_resize(c, 150);
	twt_migrate(c, 30);
	for (i = 80; i < c->nr; i++)
		twt_ins(c, i, i);
	twt_check(c);
	for (i = 0; i < ARRAY_SIZE(budgets); i++) {
		b = budgets[i];
		for (room = 1; room <= 3; room++)
			if (twt_dump_all(c, 0, b, room))
				twt_expect_seen(c, b, room);
	}
	twt_check(c);
}

/*
 * A dump from cursor 0 starts in slot 0; when slot 0 holds an entry that
 * wrapped past the table's end (its home is the last slot), the first lap
 * passes it over and the walk must come back for it.
 */
static void twt_index_dump_wrapped(struct kunit *test)
{
	static const u64 keys[] = {
		0xfff0000000000000ULL, U64_MAX, 5ULL << 58, BIT_ULL(62),
	};
	struct twt_ix *c = twt_ix(test, TW_IDX_MIN, ARRAY_SIZE(keys));
	unsigned long budget = ULONG_MAX, got, k;
	struct tw_ent out[8];
	u64 cursor = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		c->nodes[i].id = tw_key_id(&c->x, keys[i]);
		twt_ins(c, i, i + 1);
	}
	KUNIT_EXPECT_PTR_EQ(test, c->x.tab[0].node, &c->nodes[1]);
	KUNIT_EXPECT_EQ(test, twm_home(U64_MAX, TW_IDX_MIN), TW_IDX_MIN - 1UL);
	got = tw_index_dump(&c->x, &cursor, out, ARRAY_SIZE(out), &budget);
	KUNIT_EXPECT_EQ(test, got, (unsigned long)ARRAY_SIZE(keys));
	KUNIT_EXPECT_EQ(test, cursor, TW_CURSOR_END);
	memset(c->seen, 0, c->nr);
	for (k = 0; k < got; k++) {
		KUNIT_ASSERT_TRUE(test, out[k].node >= c->nodes &&
				  out[k].node < c->nodes + c->nr);
		c->seen[out[k].node - c->nodes]++;
	}
	twt_expect_seen(c, budget, ARRAY_SIZE(out));
}

/*
 * Room for one entry over cells holding two ids: the even key alone, then
 * the odd one from a cursor above TW_CURSOR_END, from the first cells to
 * the last one, which has no such cursor; and dumps resuming at odd keys,
 * U64_MAX (the odd key of cell 2^63 - 2) among them.
 */
static void twt_index_dump_room_one(struct kunit *test)
{
	static const u64 keys[] = {
		6, 7, BIT_ULL(62), BIT_ULL(62) + 1, U64_MAX - 1, U64_MAX,
	};
	struct twt_ix *c = twt_ix(test, TW_IDX_MIN, ARRAY_SIZE(keys));
	unsigned long budget, got;
	struct tw_ent out[2];
	unsigned int i;
	u64 cursor = 0;

	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		c->nodes[i].id = tw_key_id(&c->x, keys[i]);
		twt_ins(c, i, i + 1);
	}
	for (i = 0; i < 4; i++) {
		budget = ULONG_MAX;
		got = tw_index_dump(&c->x, &cursor, out, 1, &budget);
		KUNIT_ASSERT_EQ_MSG(test, got, 1UL, "call %u", i);
		KUNIT_EXPECT_PTR_EQ_MSG(test, out[0].node, &c->nodes[i],
					"call %u", i);
		KUNIT_EXPECT_EQ_MSG(test, cursor, i % 2 ? (keys[i] >> 1) + 1 :
				    TW_CURSOR_END + 1 + (keys[i] >> 1),
				    "call %u", i);
		KUNIT_EXPECT_EQ(test, tw_cursor_key(cursor), keys[i] + 1);
	}
	/* The last cell: no cursor for its odd key. */
	budget = ULONG_MAX;
	KUNIT_EXPECT_EQ(test, tw_index_dump(&c->x, &cursor, out, 1, &budget),
			0UL);
	KUNIT_EXPECT_GT(test, budget, 0UL);
	KUNIT_EXPECT_EQ(test, cursor, TW_CURSOR_END - 1);
	got = tw_index_dump(&c->x, &cursor, out, 2, &budget);
	KUNIT_ASSERT_EQ(test, got, 2UL);
	KUNIT_EXPECT_PTR_EQ(test, out[0].node, &c->nodes[4]);
	KUNIT_EXPECT_PTR_EQ(test, out[1].node, &c->nodes[5]);
	KUNIT_EXPECT_EQ(test, cursor, TW_CURSOR_END);

	/* From an odd key, whatever the even one: then the last cell waits. */
	cursor = TW_CURSOR_END + 1 + BIT_ULL(61);
	budget = ULONG_MAX;
	got = tw_index_dump(&c->x, &cursor, out, 2, &budget);
	KUNIT_ASSERT_EQ(test, got, 1UL);
	KUNIT_EXPECT_PTR_EQ(test, out[0].node, &c->nodes[3]);
	KUNIT_EXPECT_EQ(test, cursor, TW_CURSOR_END - 1);
	cursor = U64_MAX;
	budget = ULONG_MAX;
	KUNIT_EXPECT_EQ(test, tw_cursor_key(cursor), U64_MAX - 2);
	KUNIT_EXPECT_EQ(test, tw_index_dump(&c->x, &cursor, out, 1, &budget),
			0UL);
	KUNIT_EXPECT_GT(test, budget, 0UL);
	KUNIT_EXPECT_EQ(test, cursor, TW_CURSOR_END - 1);
}

static struct kunit_case twt_dump_cases[] = {
	KUNIT_CASE(twt_index_dump_resize),
	KUNIT_CASE(twt_index_dump_cell),
	KUNIT_CASE(twt_index_dump_cell_ends),
	KUNIT_CASE(twt_index_dump_wrapped),
	KUNIT_CASE(twt_index_dump_room_one),
	KUNIT_CASE(twt_index_dump_budget),
	{}
};

static struct kunit_suite twt_dump_suite = {
	.name = "twheel_dump",
	.suite_init = twt_suite_init,
	.test_cases = twt_dump_cases,
};

kunit_test_suite(twt_dump_suite);
