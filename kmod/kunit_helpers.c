// SPDX-License-Identifier: GPL-2.0
/*
 * The helpers that make what the KUnit suites of twheel_kunit.ko test:
 * wheels, indexes, nodes, ids and queues; and the suites' seed.  See
 * kunit_helpers.h.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/string.h>
#include <linux/twheel.h>

#include "wheel.h"
#include "model.h"
#include "kunit_helpers.h"

/*
 * Every index of the suites is keyed with secrets drawn from one generator
 * per suite, seeded by the module parameter kunit_seed (0: a random seed,
 * printed, so that a failure can be replayed with kunit_seed=N).  The
 * random cases that say so draw their steps from it too (twt_seed()); the
 * others keep fixed seeds.
 */
ulong kunit_seed;
module_param(kunit_seed, ulong, 0444);
MODULE_PARM_DESC(kunit_seed, "KUnit suites: seed of the indexes' secrets and of the random cases (0: random)");
static u64 twt_secret_state;
static u64 twt_suite_seed;

/**
 * twt_suite_init() - seed a suite's secrets and random cases
 * @suite: the suite
 *
 * Each suite starts from kunit_seed, so that a suite run alone replays
 * what it did in the whole module.
 *
 * Return: 0.
 */
int twt_suite_init(struct kunit_suite *suite)
{
	u64 s = kunit_seed ?: get_random_u64();

	pr_info("%s: KUnit secrets and random cases from kunit_seed=%llu\n",
		suite->name, s);
	twt_secret_state = s;
	twt_suite_seed = s;
	return 0;
}

/**
 * twt_rand() - the generator of the randomised cases: the model's splitmix64
 * @s: the generator's state
 */
u64 twt_rand(u64 *s)
{
	return twm_rand(s);
}

/**
 * twt_seed() - the seed of a random case that follows kunit_seed, @salt
 * telling the cases apart: a fixed kunit_seed (make check's TWHEEL_SEED)
 * replays the same steps every time, each random one takes other steps
 * @salt: tells the cases apart
 */
u64 twt_seed(u64 salt)
{
	u64 s = twt_suite_seed ^ salt;

	return twt_rand(&s);
}

/**
 * twt_secret() - an index's secret, from the suite's generator
 * @secret: out: TW_SECRET_WORDS words
 */
void twt_secret(u64 secret[TW_SECRET_WORDS])
{
	int i;

	for (i = 0; i < TW_SECRET_WORDS; i++)
		secret[i] = twt_rand(&twt_secret_state);
}

static void twt_index_init(struct tw_index *x, struct tw_ent *tab,
			   unsigned long size)
{
	u64 secret[TW_SECRET_WORDS];

	twt_secret(secret);
	tw_index_init(x, tab, size, secret);
}

/**
 * twt_data() - the data the wheel cases give an id: bit 63 set for small ids,
 * so a payload that looks like a flag must come through as well
 * @id: the id
 */
u64 twt_data(u64 id)
{
	return ~id;
}

/**
 * twt_tab() - a zeroed table of @size index slots, freed with the case
 * @test: the test case
 * @size: slots in the table
 */
struct tw_ent *twt_tab(struct kunit *test, unsigned long size)
{
	struct tw_ent *t = kunit_kcalloc(test, size, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	return t;
}

/*
 * A wheel over index @x, with a sentinel of its own: any node will do,
 * whatever it holds, so this one starts out filled with garbage.
 */
static struct tw_wheel *twt_wheel_on(struct kunit *test, u64 tick_ns, u64 now,
				     struct tw_index *x)
{
	struct tw_wheel *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
	struct tw_node *s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, w);
	KUNIT_ASSERT_NOT_NULL(test, s);
	memset(s, 0xa5, sizeof(*s));
	tw_wheel_init(w, tick_ns, now, x, s);
	return w;
}

/**
 * twt_wheel() - A wheel with an empty index of TWT_IDX_SIZE slots
 * @test: the test case
 * @tick_ns: the tick in ns
 * @now: the clock in ns
 */
struct tw_wheel *twt_wheel(struct kunit *test, u64 tick_ns, u64 now)
{
	struct tw_index *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	twt_index_init(x, twt_tab(test, TWT_IDX_SIZE), TWT_IDX_SIZE);
	return twt_wheel_on(test, tick_ns, now, x);
}

/**
 * twt_reinit() - start @w over, its index emptied and its sentinel kept; the
 * nodes it held are forgotten
 * @w: the wheel
 * @tick_ns: the tick in ns
 * @now: the clock in ns
 */
void twt_reinit(struct tw_wheel *w, u64 tick_ns, u64 now)
{
	struct tw_index *x = w->idx;

	memset(x->tab, 0, x->size * sizeof(*x->tab));
	twt_index_init(x, x->tab, x->size);
	tw_wheel_init(w, tick_ns, now, x, w->tail);
}

/**
 * twt_nodes() - @nr nodes with ids 0 to @nr - 1 and their data (twt_data())
 * @test: the test case
 * @nr: how many nodes
 */
struct tw_node *twt_nodes(struct kunit *test, unsigned int nr)
{
	struct tw_node *n = kunit_kcalloc(test, nr, sizeof(*n), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, n);
	for (i = 0; i < nr; i++) {
		n[i].id = i;
		n[i].data = twt_data(i);
	}
	return n;
}

/**
 * twt_ent() - the entry of @id, which must be in @w's index
 * @test: the test case
 * @w: the wheel
 * @id: the id
 */
struct tw_ent *twt_ent(struct kunit *test, const struct tw_wheel *w,
		       u64 id)
{
	struct tw_ent *e = tw_index_find(w->idx, id);

	KUNIT_ASSERT_NOT_NULL_MSG(test, e, "id %llu not in the index", id);
	return e;
}

/**
 * twt_add() - arm @n, whose id is not in the index yet, for @deadline
 * @test: the test case
 * @w: the wheel
 * @n: the node
 * @deadline: the deadline in ns
 */
void twt_add(struct kunit *test, struct tw_wheel *w, struct tw_node *n,
	     u64 deadline)
{
	struct tw_ent *e;

	KUNIT_ASSERT_NULL(test, tw_index_find(w->idx, n->id));
	KUNIT_ASSERT_TRUE(test, tw_index_room(w->idx));
	e = tw_index_insert(w->idx, n, deadline);
	KUNIT_EXPECT_PTR_EQ(test, e->node, n);
	tw_wheel_add(w, n, deadline);
}

/**
 * twt_arm() - A new node for @id with @deadline, added to @w
 * @test: the test case
 * @w: the wheel
 * @id: the id
 * @deadline: the deadline in ns
 */
struct tw_node *twt_arm(struct kunit *test, struct tw_wheel *w,
			u64 id, u64 deadline)
{
	struct tw_node *n = twt_nodes(test, 1);

	n->id = id;
	n->data = twt_data(id);
	twt_add(test, w, n, deadline);
	return n;
}

/**
 * twt_later() - move the deadline of armed @id later, in its entry alone
 * @test: the test case
 * @w: the wheel
 * @id: the id
 * @deadline: the deadline in ns
 */
void twt_later(struct kunit *test, struct tw_wheel *w, u64 id,
	       u64 deadline)
{
	struct tw_ent *e = twt_ent(test, w, id);

	KUNIT_ASSERT_FALSE(test, tw_ent_queued(e));
	KUNIT_ASSERT_LE(test, tw_ent_deadline(e), deadline);
	e->deadline = deadline;
}

/**
 * twt_disarm() - disarm armed @n and remove its id from the index
 * @test: the test case
 * @w: the wheel
 * @n: the node
 */
void twt_disarm(struct kunit *test, struct tw_wheel *w,
		struct tw_node *n)
{
	struct tw_ent *e = twt_ent(test, w, n->id);

	KUNIT_ASSERT_PTR_EQ(test, e->node, n);
	KUNIT_ASSERT_FALSE(test, tw_ent_queued(e));
	tw_wheel_del(w, n);
	tw_index_remove(w->idx, e);
}

/**
 * twt_expire_now() - queue the event of @e's id, on no list, at once at clock
 * @now, as a touch to a deadline already due does: the event goes into the
 * sentinel, and the id's node becomes the sentinel.
 * @test: the test case
 * @w: the wheel
 * @e: the entry
 * @now: the clock in ns
 */
void twt_expire_now(struct kunit *test, struct tw_wheel *w,
		    struct tw_ent *e, u64 now)
{
	struct tw_node *n = e->node, *s = w->tail;
	unsigned long ready = w->nr_ready, armed = w->nr_armed;
	u64 id = n->id, data = n->data, deadline = tw_ent_deadline(e);

	KUNIT_ASSERT_FALSE(test, tw_ent_queued(e));
	tw_wheel_expire(w, e, now);
	KUNIT_EXPECT_PTR_EQ(test, e->node, s);
	KUNIT_EXPECT_PTR_EQ(test, w->tail, n);
	KUNIT_EXPECT_TRUE(test, tw_ent_queued(e));
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(e), deadline);
	KUNIT_EXPECT_EQ(test, s->id, id);
	KUNIT_EXPECT_EQ(test, s->data, data);
	KUNIT_EXPECT_EQ(test, s->expired, max(now, 1ULL));
	KUNIT_EXPECT_EQ(test, w->nr_ready, ready + 1);
	KUNIT_EXPECT_EQ(test, w->nr_armed, armed);
	twt_check_queue(test, w);
}

/**
 * twt_new_now() - A new id @id whose deadline @deadline is due at @now: queued
 * at once
 * @test: the test case
 * @w: the wheel
 * @id: the id
 * @deadline: the deadline in ns
 * @now: the clock in ns
 */
void twt_new_now(struct kunit *test, struct tw_wheel *w, u64 id,
		 u64 deadline, u64 now)
{
	struct tw_node *n = twt_nodes(test, 1);

	n->id = id;
	n->data = twt_data(id);
	KUNIT_ASSERT_NULL(test, tw_index_find(w->idx, id));
	KUNIT_ASSERT_TRUE(test, tw_index_room(w->idx));
	twt_expire_now(test, w, tw_index_insert(w->idx, n, deadline), now);
}

/**
 * twt_in() - whether the record in @n's data word says it is in the index
 * (TWT_IN)
 * @n: the node
 */
bool twt_in(const struct tw_node *n)
{
	return n->data & TWT_IN;
}

/**
 * twt_want_deadline() - the deadline the record in @n's data word says its
 * entry carries
 * @n: the node
 */
u64 twt_want_deadline(const struct tw_node *n)
{
	return n->data & ~TWT_IN;
}

/**
 * twt_home_key() - the smallest key at home in slot @h of @size slots: ceil(h
 * * 2^64 / size)
 * @h: the slot
 * @size: slots in the table
 */
u64 twt_home_key(unsigned long h, unsigned long size)
{
	u64 k = div64_u64(U64_MAX, size) * h;

	/* off by at most @h below: step up to the first key at home in @h */
	while (twm_home(k, size) < h)
		k++;
	return k;
}

/**
 * twt_ix() - a test's index of @size slots and @nr nodes, none in the index
 * yet
 * @test: the test case
 * @size: slots in the table
 * @nr: how many nodes
 */
struct twt_ix *twt_ix(struct kunit *test, unsigned long size,
		      unsigned int nr)
{
	struct twt_ix *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->test = test;
	c->nodes = twt_nodes(test, nr);
	c->nr = nr;
	/* the data word is the record: nothing in the index yet */
	for (i = 0; i < nr; i++)
		c->nodes[i].data = 0;
	c->seen = kunit_kcalloc(test, nr, sizeof(*c->seen), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->seen);
	twt_index_init(&c->x, twt_tab(test, size), size);
	return c;
}

/**
 * twt_in_tab() - whether entry @e is in the index's current table (not the old
 * one)
 * @x: the index
 * @e: the entry
 */
bool twt_in_tab(const struct tw_index *x, const struct tw_ent *e)
{
	return e >= x->tab && e < x->tab + x->size;
}

/**
 * twt_ins() - add nodes[@i] with @deadline; new ids always go to the current
 * table
 * @c: the index under test (twt_ix())
 * @i: which node of @c
 * @deadline: the deadline in ns
 */
struct tw_ent *twt_ins(struct twt_ix *c, unsigned int i, u64 deadline)
{
	struct kunit *test = c->test;
	struct tw_index *x = &c->x;
	struct tw_node *n = &c->nodes[i];
	unsigned long nr = x->nr, nr_tab = x->nr_tab, nr_old = x->nr_old;
	struct tw_ent *e;

	KUNIT_ASSERT_FALSE(test, twt_in(n));
	KUNIT_ASSERT_NULL(test, tw_index_find(x, n->id));
	KUNIT_ASSERT_TRUE(test, tw_index_room(x));
	e = tw_index_insert(x, n, deadline);
	KUNIT_ASSERT_TRUE_MSG(test, twt_in_tab(x, e), "id %llu", n->id);
	KUNIT_EXPECT_PTR_EQ(test, e->node, n);
	KUNIT_EXPECT_EQ(test, e->id, n->id);
	KUNIT_EXPECT_EQ(test, e->deadline, deadline);
	KUNIT_EXPECT_PTR_EQ(test, tw_index_find(x, n->id), e);
	KUNIT_EXPECT_EQ(test, x->nr, nr + 1);
	KUNIT_EXPECT_EQ(test, x->nr_tab, nr_tab + 1);
	KUNIT_EXPECT_EQ(test, x->nr_old, nr_old);
	n->data = TWT_IN | deadline;
	return e;
}

/**
 * twt_rm() - remove nodes[@i], found where it is (either table)
 * @c: the index under test (twt_ix())
 * @i: which node of @c
 */
void twt_rm(struct twt_ix *c, unsigned int i)
{
	struct kunit *test = c->test;
	struct tw_index *x = &c->x;
	struct tw_node *n = &c->nodes[i];
	unsigned long nr = x->nr, nr_tab = x->nr_tab, nr_old = x->nr_old;
	struct tw_ent *e = tw_index_find(x, n->id);
	bool in_tab;

	KUNIT_ASSERT_TRUE(test, twt_in(n));
	KUNIT_ASSERT_NOT_NULL_MSG(test, e, "id %llu lost", n->id);
	KUNIT_ASSERT_PTR_EQ(test, e->node, n);
	in_tab = twt_in_tab(x, e);
	tw_index_remove(x, e);
	KUNIT_EXPECT_NULL(test, tw_index_find(x, n->id));
	KUNIT_EXPECT_EQ(test, x->nr, nr - 1);
	KUNIT_EXPECT_EQ(test, x->nr_tab, nr_tab - in_tab);
	KUNIT_EXPECT_EQ(test, x->nr_old, nr_old - !in_tab);
	n->data = 0;
}

/**
 * twt_resize() - start a resize of the index to @size slots, and check it
 * started
 * @c: the index under test (twt_ix())
 * @size: slots in the table
 */
void twt_resize(struct twt_ix *c, unsigned long size)
{
	struct kunit *test = c->test;
	struct tw_index *x = &c->x;
	unsigned long nr = x->nr, nr_tab = x->nr_tab;
	struct tw_ent *tab = x->tab;

	KUNIT_ASSERT_NULL(test, x->old);
	KUNIT_ASSERT_NULL(test, c->old);
	tw_index_start_resize(x, twt_tab(test, size), size);
	c->old = tab;
	KUNIT_EXPECT_PTR_EQ(test, x->old, tab);
	KUNIT_EXPECT_EQ(test, x->size, size);
	KUNIT_EXPECT_EQ(test, x->nr, nr);
	KUNIT_EXPECT_EQ(test, x->nr_old, nr_tab);
	KUNIT_EXPECT_EQ(test, x->nr_tab, 0UL);
	KUNIT_EXPECT_EQ(test, tw_index_want_size(x, 0), 0UL);
	KUNIT_EXPECT_EQ(test, tw_index_want_size(x, 1000000), 0UL);
}

/**
 * twt_migrate() - one migration step.  The old table comes back exactly once,
 * after its last entry moved, and is freed here.  Returns true when it came
 * back.
 * @c: the index under test (twt_ix())
 * @entries: entries to move
 */
bool twt_migrate(struct twt_ix *c, unsigned long entries)
{
	struct kunit *test = c->test;
	struct tw_index *x = &c->x;
	unsigned long nr = x->nr, nr_old = x->nr_old, mpos = x->mpos;
	struct tw_ent *ret = tw_index_migrate(x, entries);

	KUNIT_EXPECT_EQ(test, x->nr, nr);
	KUNIT_EXPECT_EQ(test, x->nr_tab + x->nr_old, nr);
	if (!ret) {
		KUNIT_EXPECT_PTR_EQ(test, x->old, c->old);
		KUNIT_EXPECT_LE(test, nr_old - x->nr_old, entries);
		if (x->old)
			KUNIT_EXPECT_GE(test, x->mpos, mpos);
		return false;
	}
	KUNIT_ASSERT_NOT_NULL_MSG(test, c->old, "old table returned twice");
	KUNIT_EXPECT_PTR_EQ(test, ret, c->old);
	KUNIT_EXPECT_NULL(test, x->old);
	KUNIT_EXPECT_EQ(test, x->nr_old, 0UL);
	KUNIT_EXPECT_EQ(test, x->nr_tab, nr);
	c->old = NULL;
	c->returned++;
	kunit_kfree(test, ret);
	return true;
}

/**
 * twt_queue5() - ids 1..5 armed for 1..5 ms and expired a tick apart: five
 * events
 * @test: the test case
 * @ev: out: the 5 events queued
 */
struct tw_wheel *twt_queue5(struct kunit *test, struct twt_ev *ev)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	unsigned int i;

	for (i = 0; i < 5; i++)
		twt_arm(test, w, i + 1, (i + 1) * TWT_MS);
	for (i = 0; i < 5; i++) {
		twt_advance(test, w, (i + 1) * TWT_MS);
		twt_ev_set(&ev[i], i + 1, (i + 1) * TWT_MS);
	}
	twt_expect_events(test, w, ev, 5);
	return w;
}

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit suites of the twheel timing wheel and id index");
