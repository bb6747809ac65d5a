// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_index": the id index: insert, find, remove, room, resize
 * in steps, pop.
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
 * Slots @first, @first + 1, ... (around the end of the table) hold the
 * nodes named by the digits of @run (k[1] for '1'), or nothing for '-'.
 */
static void twt_expect_run(struct kunit *test, struct twt_ix *c,
			   unsigned long first, const char *run)
{
	const struct tw_node *want;

	for (; *run; run++, first = (first + 1) % c->x.size) {
		want = *run == '-' ? NULL : &c->nodes[*run - '0'];
		KUNIT_EXPECT_PTR_EQ_MSG(test, c->x.tab[first].node, want,
					"slot %lu, want '%c'", first, *run);
	}
}

/* ceil(2^64 / 100): h * S is at home in slot h of 100 for h < 100 */
#define TWT_S100 184467440737095517ULL

static void twt_index_basic(struct kunit *test)
{
	const u64 s = TWT_S100;
	struct twt_ix *c = twt_ix(test, 100, 16);
	struct tw_index *x = &c->x;

	KUNIT_EXPECT_EQ(test, tw_key(x, tw_key_id(x, s + 100)), s + 100);
	KUNIT_EXPECT_EQ(test, tw_key_id(x, tw_key(x, 12345)), 12345ULL);
	KUNIT_EXPECT_EQ(test, twt_home_key(1, 100), s);
	KUNIT_EXPECT_EQ(test, twm_home(s - 1, 100), 0UL);
	KUNIT_EXPECT_EQ(test, twm_home(s, 100), 1UL);
	KUNIT_EXPECT_EQ(test, twm_home(U64_MAX, 100), 99UL);
	KUNIT_EXPECT_EQ(test, twm_home(99 * s, 100), 99UL);
	KUNIT_EXPECT_FALSE(test, tw_index_find(x, 0));
	KUNIT_EXPECT_EQ(test, x->nr, 0UL);
}

/*
 * Runs of keys: stored sorted from their home slot, pushed along by a
 * smaller home, around the end of the table; a removal shifts the rest
 * of the run back towards home.
 */
static void twt_index_runs(struct kunit *test)
{
	const u64 s = TWT_S100;
	struct twt_ix *c = twt_ix(test, 100, 16);
	struct tw_index *x = &c->x;
	struct tw_node *k = c->nodes;
	unsigned int i;

	/* Three keys at home 5, inserted out of order: stored sorted. */
	k[0].id = tw_key_id(&c->x, 5 * s + 300);
	k[1].id = tw_key_id(&c->x, 5 * s + 100);
	k[2].id = tw_key_id(&c->x, 5 * s + 200);
	/* Home 6, pushed along by them; then a larger key of home 5. */
	k[3].id = tw_key_id(&c->x, 6 * s);
	k[4].id = tw_key_id(&c->x, 5 * s + 400);
	for (i = 0; i < 5; i++)
		twt_ins(c, i, 1000 + i);
	twt_expect_run(test, c, 4, "-12043-");
	KUNIT_EXPECT_EQ(test, x->tab[9].id, k[3].id);
	KUNIT_EXPECT_EQ(test, x->tab[9].deadline, 1003ULL);
	twt_check(c);

	/* Home 99 overflows into slots 0 and 1, ahead of key 0 (id 0). */
	k[5].id = tw_key_id(&c->x, U64_MAX);
	k[6].id = 0;
	k[7].id = tw_key_id(&c->x, U64_MAX - 5);
	k[8].id = tw_key_id(&c->x, 99 * s);
	for (i = 5; i < 9; i++)
		twt_ins(c, i, TWHEEL_DEADLINE_MAX - i);
	twt_expect_run(test, c, 98, "-8756-");
	KUNIT_EXPECT_EQ(test, x->nr, 9UL);
	twt_check(c);
	KUNIT_EXPECT_NULL(test, tw_index_find(x, tw_key_id(&c->x, 5 * s + 150)));
	KUNIT_EXPECT_NULL(test, tw_index_find(x, tw_key_id(&c->x, 5 * s)));
	KUNIT_EXPECT_NULL(test, tw_index_find(x, tw_key_id(&c->x, U64_MAX - 1)));
	KUNIT_EXPECT_NULL(test, tw_index_find(x, 1));

	/* The entry is the id's deadline record: written in place. */
	tw_index_find(x, k[2].id)->deadline = 77 | TW_ENT_QUEUED;
	KUNIT_EXPECT_EQ(test, x->tab[6].deadline, 77 | TW_ENT_QUEUED);
	KUNIT_EXPECT_TRUE(test, tw_ent_queued(&x->tab[6]));
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(&x->tab[6]), 77ULL);
	x->tab[6].deadline = 1002;

	/* Middle of a run: the rest shift back towards home. */
	twt_rm(c, 2);
	twt_expect_run(test, c, 5, "1043-");
	twt_rm(c, 1);
	twt_rm(c, 4);
	twt_expect_run(test, c, 4, "-03-");
	twt_check(c);
	/* Across the end: slot 0 moves to 99, 1 to 0, key 0 to slot 1. */
	twt_rm(c, 8);
	twt_expect_run(test, c, 98, "-756-");
	twt_check(c);
	twt_rm(c, 7);
	twt_rm(c, 5);
	twt_expect_run(test, c, 98, "--6-");
	KUNIT_EXPECT_EQ(test, x->nr, 3UL);
	twt_check(c);
}

/* Room while less than 15/16 full: 94 of 100 is not. */
static void twt_index_room_limit(struct kunit *test)
{
	struct twt_ix *c = twt_ix(test, 100, 100);
	u64 seed = 5;
	unsigned int i;

	for (i = 0; i < 100; i++)
		c->nodes[i].id = twt_rand(&seed);
	for (i = 0; i < 94; i++)
		twt_ins(c, i, i);
	KUNIT_EXPECT_FALSE(test, tw_index_room(&c->x));
	twt_check(c);
	twt_rm(c, 50);
	KUNIT_EXPECT_TRUE(test, tw_index_room(&c->x));
	twt_ins(c, 99, 99);
	KUNIT_EXPECT_FALSE(test, tw_index_room(&c->x));
	twt_check(c);
	for (i = 0; i < 94; i += 2)
		if (i != 50)
			twt_rm(c, i);
	twt_check(c);
}

static void twt_index_want_size(struct kunit *test)
{
	/*
	 * Grow when nr + extra is above 9/10 full, shrink when it is below
	 * 1/4 full (not below 64 slots), either way to 3/4 full.  A shrink
	 * leaves room for the @extra ids the caller announced: the new size
	 * holds nr + extra at 3/4 full (it cannot grow while it migrates).
	 */
	static const struct {
		unsigned long size, nr, extra, want;
	} cases[] = {
		{ 100, 90, 0, 0 }, { 100, 91, 0, 122 },
		{ 100, 80, 10, 0 }, { 100, 80, 11, 122 }, { 100, 80, 220, 401 },
		{ 100, 0, 91, 122 }, { 100, 0, 90, 0 },
		{ 100, 0, 25, 0 }, { 100, 0, 24, 64 },
		{ 200, 50, 0, 0 }, { 200, 49, 0, 66 }, { 200, 10, 0, 64 },
		{ TW_IDX_MIN, 0, 0, 0 }, { TW_IDX_MIN, 58, 0, 78 },
		{ TW_IDX_MIN, 57, 0, 0 }, { TW_IDX_MIN, 57, 1, 78 },
		{ TW_IDX_MIN + 1, 0, 0, 64 },
		{ 200, 49, 1, 0 }, { 200, 49, 100, 0 }, { 200, 20, 29, 66 },
	};
	struct tw_index x = { .size = 100 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		x.size = cases[i].size;
		x.nr = cases[i].nr;
		KUNIT_EXPECT_EQ_MSG(test, tw_index_want_size(&x, cases[i].extra),
				    cases[i].want, "size %lu nr %lu extra %lu",
				    cases[i].size, cases[i].nr, cases[i].extra);
	}

	/* Nothing while a resize is migrating. */
	x.old = (struct tw_ent *)&x;
	x.nr = 1000;
	KUNIT_EXPECT_EQ(test, tw_index_want_size(&x, 0), 0UL);
	x.nr = 0;
	KUNIT_EXPECT_EQ(test, tw_index_want_size(&x, 0), 0UL);
	x.old = NULL;
	KUNIT_EXPECT_EQ(test, tw_index_want_size(&x, 0), 64UL);

#if BITS_PER_LONG == 64
	/* Sizes go past 2^32 and stop at TW_IDX_MAX (2^33). */
	x.size = 4000000000UL;
	x.nr = 3700000000UL;
	KUNIT_EXPECT_EQ(test, tw_index_want_size(&x, 0), 4933333334UL);
	x.size = 8000000000UL;
	x.nr = 7500000000UL;
	KUNIT_EXPECT_EQ(test, tw_index_want_size(&x, 0), TW_IDX_MAX);
	x.size = TW_IDX_MAX;
	x.nr = 7800000000UL;
	KUNIT_EXPECT_EQ(test, tw_index_want_size(&x, 0), 0UL);
#endif
}

/* Removes a present id from the old table (@old) or the new one. */
static void twt_rm_from(struct twt_ix *c, bool old, u64 *seed)
{
	unsigned int i, j = twt_rand(seed) % c->nr;

	for (i = 0; i < c->nr; i++, j = j + 1 == c->nr ? 0 : j + 1) {
		struct tw_ent *e;

		if (!twt_in(&c->nodes[j]))
			continue;
		e = tw_index_find(&c->x, c->nodes[j].id);
		if (e && twt_in_tab(&c->x, e) != old) {
			twt_rm(c, j);
			return;
		}
	}
}

/*
 * Resize from @from to @to slots with @nr0 ids in, one entry per step,
 * while ids come and go: after every step the index is whole, and the old
 * table comes back exactly once.  Then a resize in one call.
 */
static void twt_resize_steps(struct kunit *test, unsigned long from,
			     unsigned long to, unsigned int nr0, u64 seed)
{
	const unsigned int nr = 400;
	struct twt_ix *c = twt_ix(test, from, nr);
	unsigned int i, step, next = nr0;

	for (i = 0; i < nr; i++)
		c->nodes[i].id = twt_rand(&seed);
	for (i = 0; i < nr0; i++)
		twt_ins(c, i, twt_rand(&seed) >> 2);
	twt_check(c);
	/* a grow for one more id, a shrink for none */
	KUNIT_ASSERT_EQ(test, tw_index_want_size(&c->x, to > from), to);
	twt_resize(c, to);
	twt_check(c);
	for (step = 0; step < 4 * from; step++) {
		bool done = twt_migrate(c, 1);

		twt_check(c);
		if (done)
			break;
		KUNIT_EXPECT_NOT_NULL(test, c->x.old);
		/* a new id, and one out of either table in turn */
		twt_ins(c, next++, twt_rand(&seed) >> 2);
		twt_rm_from(c, step & 1, &seed);
		twt_check(c);
	}
	KUNIT_EXPECT_EQ(test, c->returned, 1UL);
	KUNIT_EXPECT_NULL(test, c->x.old);
	KUNIT_EXPECT_GE(test, step, nr0 / 2);
	KUNIT_EXPECT_FALSE(test, twt_migrate(c, 1));
	KUNIT_EXPECT_EQ(test, c->x.size, to);

	/* Back in one call moving everything: the old table comes back. */
	twt_resize(c, from);
	KUNIT_EXPECT_TRUE(test, twt_migrate(c, 100000));
	twt_check(c);
	KUNIT_EXPECT_FALSE(test, twt_migrate(c, 100000));
	KUNIT_EXPECT_EQ(test, c->returned, 2UL);
}

/* Grow 64 -> 78 slots when the 58th id is coming. */
static void twt_index_grow_steps(struct kunit *test)
{
	twt_resize_steps(test, TW_IDX_MIN, 78, 57, 9);
}

/* Shrink 200 -> 66 slots with 49 ids: the old table mostly empty. */
static void twt_index_shrink_steps(struct kunit *test)
{
	twt_resize_steps(test, 200, 66, 49, 13);
}

/* Tear-down: every node popped once, in the middle of a resize too. */
static void twt_index_pop(struct kunit *test)
{
	const unsigned int nr = 150;
	struct twt_ix *c = twt_ix(test, 170, nr);
	struct tw_index *x = &c->x;
	unsigned long pos = 0, popped = 0, last = 0;
	struct tw_node *n;
	u64 seed = 23;
	unsigned int i;

	KUNIT_EXPECT_NULL(test, tw_index_pop(x, &pos));
	KUNIT_EXPECT_EQ(test, pos, 0UL);
	for (i = 0; i < nr; i++) {
		c->nodes[i].id = twt_rand(&seed);
		if (i < 120)
			twt_ins(c, i, i);
	}
	twt_resize(c, 210);
	twt_migrate(c, 50);
	for (i = 120; i < nr; i++)
		twt_ins(c, i, i);
	twt_check(c);
	KUNIT_ASSERT_GT(test, x->nr_old, 0UL);
	KUNIT_ASSERT_GT(test, x->nr_tab, 0UL);
	while ((n = tw_index_pop(x, &pos))) {
		unsigned long nr_left = x->nr;

		KUNIT_ASSERT_TRUE(test, n >= c->nodes && n < c->nodes + nr);
		KUNIT_EXPECT_TRUE_MSG(test, twt_in(n), "id %llu twice", n->id);
		KUNIT_EXPECT_GE(test, pos, last);
		KUNIT_EXPECT_EQ(test, nr_left, nr - popped - 1);
		KUNIT_EXPECT_EQ(test, x->nr_tab + x->nr_old, nr_left);
		n->data = 0;
		last = pos;
		KUNIT_ASSERT_LE(test, ++popped, (unsigned long)nr);
	}
	KUNIT_EXPECT_EQ(test, popped, (unsigned long)nr);
	KUNIT_EXPECT_EQ(test, x->nr, 0UL);
	KUNIT_EXPECT_EQ(test, x->nr_tab, 0UL);
	KUNIT_EXPECT_EQ(test, x->nr_old, 0UL);
	KUNIT_EXPECT_NULL(test, tw_index_pop(x, &pos));
	for (i = 0; i < x->size; i++)
		KUNIT_EXPECT_NULL(test, x->tab[i].node);
	for (i = 0; i < x->old_size; i++)
		KUNIT_EXPECT_NULL(test, x->old[i].node);
}

/*
 * Random inserts, removes, finds, deadline writes, resizes (asked for by
 * tw_index_want_size() or of any size that holds the ids) and migration
 * steps, checked against the test's record after every step.
 */
static void twt_index_random(struct kunit *test)
{
	const unsigned int nr = 300, steps = 3000;
	struct twt_ix *c = twt_ix(test, TW_IDX_MIN, nr);
	struct tw_index *x = &c->x;
	unsigned int i, step, ops[6] = {};
	u64 seed = 31;

	for (i = 0; i < nr; i++) {
		u64 key = twt_rand(&seed);

		/* runs of near keys, cell pairs, and keys at the very top */
		if (i % 3 == 1)
			key = tw_key(x, c->nodes[i - 1].id) + 1 + i % 4;
		if (i % 29 == 0)
			key = U64_MAX - i;
		c->nodes[i].id = tw_key_id(&c->x, key);
	}
	for (i = 0; i < nr; i++) {
		unsigned int j;

		for (j = 0; j < i; j++)
			KUNIT_ASSERT_NE(test, c->nodes[i].id, c->nodes[j].id);
	}
	for (step = 0; step < steps; step++) {
		u64 r = twt_rand(&seed);
		unsigned int op = r % 16, j = (r >> 8) % nr;
		struct tw_node *n = &c->nodes[j];
		unsigned long size;
		struct tw_ent *e;

		/* inserts favoured in the first half, removes after */
		if (op < 6 && step >= steps / 2 && (r >> 32) % 3)
			op = 6;
		if (op < 6) {
			/* room, and room in the new table for all */
			if (!twt_in(n) && tw_index_room(x) &&
			    x->nr + 1 < x->size - x->size / 16) {
				twt_ins(c, j, (r >> 20) & ~TWT_IN);
				ops[0]++;
			}
		} else if (op < 10) {
			if (twt_in(n)) {
				twt_rm(c, j);
				ops[1]++;
			}
		} else if (op < 12) {
			e = tw_index_find(x, n->id);
			KUNIT_ASSERT_PTR_EQ(test, e ? e->node : NULL,
					    twt_in(n) ? n : NULL);
			if (e) {
				e->deadline = r >> 1;
				n->data = TWT_IN | r >> 1;
			}
			ops[2]++;
		} else if (op < 13 && !x->old) {
			size = tw_index_want_size(x, (r >> 40) % 20);
			if (!size && (r >> 50) % 2)
				size = max_t(unsigned long, TW_IDX_MIN,
					     x->nr * 16 / 15 + 2) +
				       (r >> 52) % 200;
			if (size) {
				KUNIT_ASSERT_GE(test, size, x->nr + 1);
				twt_resize(c, size);
				ops[3]++;
			}
		} else if (x->old) {
			ops[4] += twt_migrate(c, 1 + (r >> 40) % 3);
			ops[5]++;
		}
		twt_check(c);
	}
	kunit_info(test, "%u ins %u rm %u find %u resizes, %u done, %u migrate calls",
		   ops[0], ops[1], ops[2], ops[3], ops[4], ops[5]);
	KUNIT_EXPECT_GT(test, ops[3], 10U);
	KUNIT_EXPECT_GE(test, ops[4] + 1, ops[3]);
	KUNIT_EXPECT_EQ(test, c->returned, (unsigned long)ops[4]);
}

/*
 * twt_index_churn(): what the device does between steps, the resize the
 * index asks for, with room for @extra ids more (resizes[0] counts the
 * grows, resizes[1] the shrinks), and @entries entries migrated.
 */
static void twt_churn_step(struct twt_ix *c, unsigned long extra,
			   unsigned long entries, unsigned int *resizes)
{
	struct tw_index *x = &c->x;
	unsigned long size = tw_index_want_size(x, extra);

	if (size) {
		resizes[size < x->size]++;
		twt_resize(c, size);
	}
	if (x->old)
		twt_migrate(c, entries);
}

/* Room for one id more (tw_index_room()), the index resized if need be. */
static void twt_churn_room(struct twt_ix *c, unsigned int *resizes)
{
	unsigned int k;

	for (k = 0; k < 4 && !tw_index_room(&c->x); k++)
		twt_churn_step(c, 1, c->x.old ? c->x.old_size : 0, resizes);
	KUNIT_ASSERT_TRUE(c->test, tw_index_room(&c->x));
}

/* nodes[@i] added if absent, else removed. */
static void twt_churn_toggle(struct twt_ix *c, unsigned int i, u64 *seed,
			     unsigned int *resizes)
{
	if (twt_in(&c->nodes[i])) {
		twt_rm(c, i);
		return;
	}
	twt_churn_room(c, resizes);
	twt_ins(c, i, twt_rand(seed) >> 1);
}

/*
 * One step towards @target ids: a resize if asked, a migration step, and
 * a random id added, removed or its deadline written in place; then
 * another one looked up.
 */
static void twt_churn_op(struct twt_ix *c, unsigned int target, u64 *seed,
			 unsigned int *resizes)
{
	unsigned int i = twt_rand(seed) % c->nr;
	bool add = twt_rand(seed) % c->nr < target;
	struct tw_node *n = &c->nodes[i];
	struct tw_ent *e;

	twt_churn_step(c, 1, 1 + twt_rand(seed) % 8, resizes);
	if (add != twt_in(n)) {
		twt_churn_toggle(c, i, seed, resizes);
	} else if (twt_in(n)) {
		e = tw_index_find(&c->x, n->id);
		KUNIT_ASSERT_TRUE(c->test, e && e->node == n);
		e->deadline = twt_rand(seed) >> 1;
		n->data = TWT_IN | e->deadline;
	}
	n = &c->nodes[twt_rand(seed) % c->nr];
	e = tw_index_find(&c->x, n->id);
	KUNIT_ASSERT_PTR_EQ(c->test, e ? e->node : NULL,
			    twt_in(n) ? n : NULL);
	if (e)
		KUNIT_ASSERT_EQ(c->test, e->deadline, twt_want_deadline(n));
}

/*
 * The @got entries a dump call from cursor @from listed, leaving the
 * cursor at @cursor: each one of the test's, present, as recorded, its
 * key above the last one listed (*@last, if *@any) and within the keys
 * the cursor moved over.
 */
static void twt_churn_listed(struct twt_ix *c, const struct tw_ent *out,
			     unsigned long got, u64 from, u64 cursor,
			     u64 *last, bool *any)
{
	struct kunit *test = c->test;
	unsigned long k;

	for (k = 0; k < got; k++) {
		const struct tw_node *n = out[k].node;
		u64 key = tw_key(&c->x, out[k].id);

		KUNIT_ASSERT_TRUE(test, n >= c->nodes && n < c->nodes + c->nr);
		KUNIT_EXPECT_EQ(test, out[k].id, n->id);
		KUNIT_EXPECT_TRUE(test, twt_in(n));
		KUNIT_EXPECT_EQ(test, out[k].deadline, twt_want_deadline(n));
		KUNIT_EXPECT_GE(test, key, tw_cursor_key(from));
		KUNIT_EXPECT_TRUE(test, tw_cursor_passed(cursor, key));
		if (*any)
			KUNIT_EXPECT_LT(test, *last, key);
		*last = key;
		*any = true;
		c->seen[n - c->nodes]++;
	}
}

/*
 * One dump with rooms of 1 to 9 entries and budgets of 1 to 64 slots a
 * call, while nodes[0..@churn) come and go and the index resizes as the
 * device's between calls: every call lists something or moves the cursor
 * on; the ids present throughout are listed once, the others at most
 * once.
 */
static void twt_churn_dump(struct twt_ix *c, unsigned int churn, u64 *seed,
			   unsigned int *resizes)
{
	struct kunit *test = c->test;
	u64 cursor = 0, last = 0;
	struct tw_ent out[9];
	bool any = false;
	unsigned int i;

	memset(c->seen, 0, c->nr);
	while (cursor != TW_CURSOR_END) {
		unsigned long room = 1 + twt_rand(seed) % ARRAY_SIZE(out);
		unsigned long budget = 1 + twt_rand(seed) % 64, got;
		u64 from = cursor;

		got = tw_index_dump(&c->x, &cursor, out, room, &budget);
		KUNIT_ASSERT_LE(test, got, room);
		KUNIT_ASSERT_TRUE_MSG(test, tw_cursor_passed(cursor,
							     tw_cursor_key(from)),
				      "no progress at cursor %llx", from);
		twt_churn_listed(c, out, got, from, cursor, &last, &any);
		for (i = 0; i < 4; i++) {
			twt_churn_step(c, 1, 1 + twt_rand(seed) % 8, resizes);
			twt_churn_toggle(c, twt_rand(seed) % churn, seed,
					 resizes);
		}
	}
	for (i = 0; i < c->nr; i++) {
		if (i < churn)
			KUNIT_EXPECT_LE_MSG(test, c->seen[i], 1,
					    "id %llu", c->nodes[i].id);
		else
			KUNIT_EXPECT_EQ_MSG(test, c->seen[i],
					    (u8)twt_in(&c->nodes[i]),
					    "id %llu", c->nodes[i].id);
	}
}

/* Tear-down: every id in the index popped once, nothing else. */
static void twt_churn_pop(struct twt_ix *c)
{
	unsigned long pos = 0, popped = 0, want = c->x.nr;
	struct tw_node *n;

	while ((n = tw_index_pop(&c->x, &pos))) {
		KUNIT_ASSERT_TRUE(c->test, n >= c->nodes &&
				  n < c->nodes + c->nr);
		KUNIT_ASSERT_TRUE_MSG(c->test, twt_in(n), "id %llu", n->id);
		n->data = 0;
		KUNIT_ASSERT_LE(c->test, ++popped, want);
	}
	KUNIT_EXPECT_EQ(c->test, popped, want);
	KUNIT_EXPECT_EQ(c->test, c->x.nr, 0UL);
}

/*
 * The index as the device drives it, from a seed that follows kunit_seed:
 * thousands of ids (sequential, strided and random) come and go towards
 * many and then few, the index growing and shrinking as it asks and
 * migrating a few entries a step, checked against the test's record every
 * step (a random id looked up) and whole now and then; after each round a
 * dump under churn, small budgets and resizes; a tear-down at the end.
 */
static void twt_index_churn(struct kunit *test)
{
	const unsigned int nr = 5000;
	struct twt_ix *c = twt_ix(test, TW_IDX_MIN, nr);
	unsigned int resizes[2] = {}, round, i;
	u64 seed = twt_seed(0xc4a5);

	for (i = 0; i < nr; i++)
		c->nodes[i].id = i % 3 == 0 ? i : i % 3 == 1 ? (u64)i << 40 :
				 twt_rand(&seed);
	for (round = 0; round < 6; round++) {
		unsigned int target = round % 2 ? nr / 50 :
				      nr - nr / 10 * round;

		for (i = 0; i < 8 * nr; i++) {
			twt_churn_op(c, target, &seed, resizes);
			if (i % 4096 == 0)
				twt_check(c);
		}
		twt_check(c);
		twt_churn_dump(c, nr / 4, &seed, resizes);
		twt_check(c);
		kunit_info(test, "round %u: %lu ids, %lu slots%s",
			   round, c->x.nr, c->x.size,
			   c->x.old ? " (resizing)" : "");
	}
	KUNIT_EXPECT_GT(test, resizes[0], 0U);
	KUNIT_EXPECT_GT(test, resizes[1], 0U);
	twt_churn_pop(c);
}

static struct kunit_case twt_index_cases[] = {
	KUNIT_CASE(twt_index_basic),
	KUNIT_CASE(twt_index_runs),
	KUNIT_CASE(twt_index_room_limit),
	KUNIT_CASE(twt_index_want_size),
	KUNIT_CASE(twt_index_grow_steps),
	KUNIT_CASE(twt_index_shrink_steps),
	KUNIT_CASE(twt_index_pop),
	KUNIT_CASE(twt_index_random),
	KUNIT_CASE(twt_index_churn),
	{}
};

static struct kunit_suite twt_index_suite = {
	.name = "twheel_index",
	.suite_init = twt_suite_init,
	.test_cases = twt_index_cases,
};

kunit_test_suite(twt_index_suite);
