// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_advance": tw_wheel_advance(): budgets, the clock, the
 * data an id carries, the wheel over an index that resizes.
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
 * One id with data @data: moved later from level 0 to level 2, expired,
 * discarded, re-armed and expired late.  The data is carried throughout,
 * and the slots, expiries and lateness are what they are for any data.
 */
static void twt_data_kept(struct kunit *test, u64 id, u64 data)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_node *n = twt_nodes(test, 1);
	struct tw_ent *e;

	n->id = id;
	n->data = data;
	twt_add(test, w, n, 10 * TWT_MS);
	twt_expect_at(test, w, n, 0, 10);
	/* later, re-slotted from level 0 to level 2 when slot 10 is due */
	twt_later(test, w, id, 70000 * TWT_MS);
	twt_advance(test, w, 10 * TWT_MS);
	twt_expect_armed(test, w, n);
	twt_expect_at(test, w, n, 2, 17);
	KUNIT_EXPECT_EQ(test, n->data, data);
	twt_run_timer(test, w, n, 1);
	twt_expect_event(test, w, id, data, 70000 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->late_max, 0ULL);

	/* discarded: the node handed back carries the id and the data */
	e = twt_ent(test, w, id);
	n = tw_wheel_discard(w, e);
	KUNIT_EXPECT_EQ(test, n->id, id);
	KUNIT_EXPECT_EQ(test, n->data, data);

	/* re-armed, expired late: the data stays */
	e->deadline = 80000 * TWT_MS + 1;
	tw_wheel_add(w, n, 80000 * TWT_MS + 1);
	twt_advance(test, w, 90000 * TWT_MS);
	twt_expect_event(test, w, id, data, 90000 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->late_max, 10000 * TWT_MS - 1);
	twt_check_queue(test, w);
}

/*
 * The data word is the caller's: any value (bit 63 set, as the old caller
 * flag was, all ones, zero) changes neither the slot, nor the expiry, nor
 * the lateness, and it survives every move of the id's event.
 */
static void twt_caller_data(struct kunit *test)
{
	const u64 now = 1000000000000000ULL;
	struct tw_wheel *w;
	struct tw_node *n;

	twt_data_kept(test, 7, BIT_ULL(63) | 0x5a);
	twt_data_kept(test, 8, U64_MAX);
	twt_data_kept(test, 9, 0);

	/* the largest deadline, data all ones, lands where any other does */
	w = twt_wheel(test, TWHEEL_TICK_MIN_NS, now);
	n = twt_nodes(test, 1);
	n->id = 1;
	n->data = U64_MAX;
	twt_add(test, w, n, TWHEEL_DEADLINE_MAX);
	twt_expect_at(test, w, n, 7, 20);
	twt_disarm(test, w, n);
	KUNIT_EXPECT_EQ(test, n->data, U64_MAX);
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
	twt_expect_expired(test, w, 3, now);
	twt_expect_expired(test, w, 4, now);
	KUNIT_EXPECT_EQ(test, w->late_max, now);
	twt_expect_armed(test, w, ns);
	twt_advance(test, w, 8 * TWT_MS - 1);
	twt_expect_armed(test, w, ns);
	twt_expect_armed(test, w, tick);
	twt_advance(test, w, 8 * TWT_MS);
	twt_expect_expired(test, w, 1, 8 * TWT_MS);
	twt_expect_expired(test, w, 2, 8 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 4UL);
	twt_check_queue(test, w);

	/* At time 0 an event still has a clock: expired is never 0. */
	w = twt_wheel(test, TWT_MS, 0);
	zero = twt_arm(test, w, 5, 0);
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, zero));
	twt_advance(test, w, 0);
	twt_expect_expired(test, w, 5, 1ULL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
}

/* The events of @w and @ref: the same ids in the same order, at @when. */
static void twt_expect_same_queue(struct kunit *test,
				  const struct tw_wheel *w,
				  const struct tw_wheel *ref, u64 when)
{
	const struct tw_node *n = w->head, *r = ref->head;
	unsigned long k;

	twt_check_queue(test, w);
	twt_check_queue(test, ref);
	KUNIT_ASSERT_EQ(test, w->nr_ready, ref->nr_ready);
	for (k = 0; k < w->nr_ready; k++, n = n->next, r = r->next) {
		KUNIT_ASSERT_TRUE(test, n && n != w->tail);
		KUNIT_ASSERT_TRUE(test, r && r != ref->tail);
		KUNIT_EXPECT_EQ(test, n->id, r->id);
		twt_expect_expired(test, w, n->id, when);
	}
	KUNIT_EXPECT_PTR_EQ(test, n, w->tail);
	KUNIT_EXPECT_PTR_EQ(test, r, ref->tail);
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
	u64 seed = 11;
	bool more;

	for (i = 0; i < nr; i++) {
		u64 e = 1 + twt_rand(&seed) % 250000;

		if (i < 8)
			e = 100;
		else if (i < 16)
			e = 64 * 5 + 3;
		twt_add(test, w, &nodes[i], e * TWT_MS);
		twt_add(test, ref, &rnodes[i], e * TWT_MS);
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
	twt_expect_same_queue(test, w, ref, end);
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
	twt_expect_armed(test, w, n);
	twt_expect_at(test, w, n, 0, 10);

	/* A node in the drain list is due at once. */
	n = twt_arm(test, w, 2, 0);
	KUNIT_EXPECT_TRUE(test, tw_wheel_advance(w, 0, &budget));
	twt_expect_armed(test, w, n);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 2UL);
	twt_check_queue(test, w);
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
	u64 t, gone_id;

	for (i = 0; i < 5; i++)
		twt_add(test, w, &nodes[i], 10 * TWT_MS);
	KUNIT_EXPECT_TRUE(test, tw_wheel_advance(w, 10 * TWT_MS, &budget));
	KUNIT_EXPECT_EQ(test, budget, 0U);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 2UL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 4UL);
	KUNIT_EXPECT_EQ(test, w->cur, 10ULL);
	KUNIT_EXPECT_FALSE(test, w->pending[0] & BIT_ULL(10));
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	KUNIT_EXPECT_EQ(test, t, 10ULL);
	twt_check_queue(test, w);

	/* No catch-up over unfinished work. */
	tw_wheel_catch_up(w, 50 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->cur, 10ULL);

	/* ids 0..4: the queued ones' nodes now hold other things */
	for (i = 0; i < 5; i++) {
		if (twt_queued(w, i))
			continue;
		KUNIT_EXPECT_TRUE(test, twt_in_drain(w, &nodes[i]));
		gone = &nodes[i];
	}
	KUNIT_ASSERT_NOT_NULL(test, gone);
	gone_id = gone->id;
	twt_disarm(test, w, gone);
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
	KUNIT_EXPECT_FALSE(test, twt_queued(w, gone_id));
	twt_expect_expired(test, w, 11, 10 * TWT_MS);
	twt_expect_armed(test, w, soon);
	twt_advance(test, w, 12 * TWT_MS);
	twt_expect_expired(test, w, 12, 12 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 1UL);
	twt_check_queue(test, w);
}

/*
 * twt_clock_horizon(), its two events read: each popped, its entry still
 * at it until removed; then an event queued at once at clock 0 is stamped
 * 1, as one the wheel queues at 0 is.
 */
static void twt_clock_horizon_read(struct kunit *test, struct tw_wheel *w,
				   struct tw_node *s, struct tw_node *b)
{
	struct tw_node *a = w->tail, *c;
	struct tw_ent *e;

	KUNIT_EXPECT_PTR_EQ(test, tw_wheel_pop(w), s);
	e = twt_ent(test, w, 2);
	KUNIT_EXPECT_PTR_EQ(test, e->node, s);
	KUNIT_EXPECT_TRUE(test, tw_ent_queued(e));
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
	KUNIT_EXPECT_PTR_EQ(test, w->head, b);
	tw_index_remove(w->idx, e);
	twt_check_queue(test, w);
	KUNIT_EXPECT_PTR_EQ(test, tw_wheel_pop(w), b);
	e = twt_ent(test, w, 1);
	KUNIT_EXPECT_PTR_EQ(test, e->node, b);
	KUNIT_EXPECT_TRUE(test, tw_ent_queued(e));
	KUNIT_EXPECT_EQ(test, w->nr_ready, 0UL);
	KUNIT_EXPECT_PTR_EQ(test, w->head, a);
	tw_index_remove(w->idx, e);
	twt_check_queue(test, w);

	twt_reinit(w, w->tick_ns, 0);
	c = twt_nodes(test, 1);
	c->id = 3;
	c->data = twt_data(3);
	e = tw_index_insert(w->idx, c, 0);
	twt_expire_now(test, w, e, 0);
	KUNIT_EXPECT_PTR_EQ(test, e->node, a);
	KUNIT_EXPECT_EQ(test, a->expired, 1ULL);
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(e), 0ULL);
	twt_expect_expired(test, w, 3, 1);
}

/*
 * The last tick boundary a clock reaches, TWHEEL_DEADLINE_MAX rounded
 * down to the smallest tick: an id armed for it from clock 0 waits at the
 * top level while another comes and goes, stays whole until that very
 * clock, then expires on time.
 */
static void twt_clock_horizon(struct kunit *test)
{
	const u64 tick = TWHEEL_TICK_MIN_NS, sec = 1000 * TWT_MS;
	const u64 end = TWHEEL_DEADLINE_MAX / tick * tick;
	struct tw_wheel *w = twt_wheel(test, tick, 5);
	struct tw_node *s = w->tail, *a, *b;
	u64 t;

	KUNIT_EXPECT_EQ(test, w->cur, 0ULL);
	a = twt_arm(test, w, 1, end);
	KUNIT_EXPECT_TRUE(test, tw_wheel_next(w, &t));
	twt_advance(test, w, sec);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 0UL);
	b = twt_arm(test, w, 2, 2 * sec);
	twt_advance(test, w, 2 * sec - 1);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 0UL);
	twt_advance(test, w, 2 * sec);
	/* b's event in the sentinel, b the sentinel now */
	KUNIT_EXPECT_PTR_EQ(test, w->head, s);
	KUNIT_EXPECT_PTR_EQ(test, s->next, b);
	KUNIT_EXPECT_PTR_EQ(test, w->tail, b);
	KUNIT_EXPECT_PTR_EQ(test, twt_ent(test, w, 2)->node, s);
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(twt_ent(test, w, 2)), 2 * sec);
	twt_expect_expired(test, w, 2, 2 * sec);
	twt_check_queue(test, w);

	twt_advance(test, w, end - 1);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 1UL);
	twt_expect_armed(test, w, a);
	KUNIT_EXPECT_EQ(test, twt_ent(test, w, 1)->deadline, end);
	KUNIT_EXPECT_EQ(test, a->id, 1ULL);
	KUNIT_EXPECT_EQ(test, a->data, twt_data(1));
	twt_advance(test, w, end);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 2UL);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	/* a's event in b's node, the sentinel when it expired */
	KUNIT_EXPECT_PTR_EQ(test, s->next, b);
	KUNIT_EXPECT_PTR_EQ(test, w->tail, a);
	KUNIT_EXPECT_PTR_EQ(test, twt_ent(test, w, 1)->node, b);
	twt_expect_expired(test, w, 1, end);
	KUNIT_EXPECT_EQ(test, w->late_max, 0ULL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));
	twt_check_queue(test, w);
	twt_clock_horizon_read(test, w, s, b);
}

/* Start a resize of @w's index to @size slots; nothing migrated yet. */
static void twt_wheel_resize(struct kunit *test, struct tw_wheel *w,
			     unsigned long size)
{
	struct tw_index *x = w->idx;
	unsigned long nr = x->nr;

	KUNIT_ASSERT_NULL(test, x->old);
	tw_index_start_resize(x, twt_tab(test, size), size);
	KUNIT_EXPECT_EQ(test, x->nr_old, nr);
	KUNIT_EXPECT_EQ(test, x->nr_tab, 0UL);
}

/* Finish the resize of @w's index, one entry a call; free the old table. */
static void twt_wheel_migrate_all(struct kunit *test, struct tw_wheel *w)
{
	struct tw_ent *old = NULL;
	unsigned int i;

	for (i = 0; !old && i < 10000; i++)
		old = tw_index_migrate(w->idx, 1);
	KUNIT_ASSERT_NOT_NULL(test, old);
	KUNIT_EXPECT_NULL(test, w->idx->old);
	kunit_kfree(test, old);
}

/*
 * twt_wheel_index(), after the 10 ms tick: the entries of ids 1000..1005
 * have not moved (no migration yet), those of 1002, 1003 and 1005 are
 * marked queued and point at other nodes than the ones armed (the events
 * went into the sentinels), the others still at their nodes.
 */
static void twt_wheel_index_ents(struct kunit *test, const struct tw_wheel *w,
				 const struct tw_node *n,
				 struct tw_ent *const *ent)
{
	unsigned int i;

	for (i = 0; i < 6; i++) {
		bool q = i == 2 || i == 3 || i == 5;

		KUNIT_EXPECT_PTR_EQ(test, tw_index_find(w->idx, 1000 + i),
				    ent[i]);
		KUNIT_EXPECT_EQ_MSG(test, tw_ent_queued(ent[i]), q,
				    "id %u", 1000 + i);
		KUNIT_EXPECT_EQ_MSG(test, ent[i]->node == &n[i], !q,
				    "id %u", 1000 + i);
	}
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(ent[2]), 10 * TWT_MS);
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(ent[3]), 10 * TWT_MS);
}

/* Random: entries moved later (some twice), driven by wake-ups. */
static void twt_wheel_index_random(struct kunit *test)
{
	const unsigned int nr = 64;
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 1000 * TWT_MS);
	struct tw_node *nodes = twt_nodes(test, nr);
	u64 *ticks = kunit_kcalloc(test, nr, sizeof(*ticks), GFP_KERNEL);
	u64 seed = 37;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, ticks);
	for (i = 0; i < nr; i++) {
		u64 d = twt_rand(&seed) % (100000 * TWT_MS);
		struct tw_ent *e;

		nodes[i].id = twt_rand(&seed);
		nodes[i].data = twt_data(nodes[i].id);
		twt_add(test, w, &nodes[i],
			1000 * TWT_MS + (d >> (twt_rand(&seed) % 8)));
		e = twt_ent(test, w, nodes[i].id);
		if (i % 2)
			e->deadline += twt_rand(&seed) % (200000 * TWT_MS);
		if (i % 4 == 1)
			e->deadline += twt_rand(&seed) % (200 * TWT_MS);
		ticks[i] = tw_ticks(w, e->deadline);
	}
	twt_run_ticks(test, w, nodes, nr, ticks);
	KUNIT_EXPECT_EQ(test, w->nr_ready, (unsigned long)nr);
	KUNIT_EXPECT_GT(test, w->reslots, (u64)nr / 2);
	KUNIT_EXPECT_LT(test, w->late_max, TWT_MS);
}

/*
 * The entry's deadline is the one that counts: a node whose entry moved
 * later is re-slotted (not expired) when its old slot comes due, expires
 * at the entry's deadline, and its entry gets TW_ENT_QUEUED; never early.
 * Lookups go to both tables of a resize.
 */
/*
 * Ids 1000..1005 armed for 10 ms, then their entries moved alone:
 * 0: 10 -> 50 ms; 1: 10 -> 70000 ms (level 2); 2: unchanged;
 * 3: 10 -> 30 -> 10 ms; 4: 10 ms -> 10 ms + 1 ns; 5: entry 10 ms, the
 * node slotted by 5 ms.
 */
static void twt_wheel_index_arm(struct kunit *test, struct tw_wheel *w,
				struct tw_node *n, struct tw_ent **ent)
{
	unsigned int i;

	for (i = 0; i < 6; i++) {
		n[i].id = 1000 + i;
		n[i].data = twt_data(n[i].id);
		tw_index_insert(w->idx, &n[i], 10 * TWT_MS);
	}
	for (i = 0; i < 6; i++) {
		ent[i] = twt_ent(test, w, n[i].id);
		tw_wheel_add(w, &n[i], i == 5 ? 5 * TWT_MS : 10 * TWT_MS);
	}
	ent[0]->deadline = 50 * TWT_MS;
	ent[1]->deadline = 70000 * TWT_MS;
	ent[3]->deadline = 30 * TWT_MS;
	ent[3]->deadline = 10 * TWT_MS;
	ent[4]->deadline = 10 * TWT_MS + 1;
	twt_expect_at(test, w, &n[5], 0, 5);
}

static void twt_wheel_index(struct kunit *test)
{
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_node *n = twt_nodes(test, 6);
	struct tw_ent *ent[6];
	unsigned int i;

	twt_wheel_index_arm(test, w, n, ent);
	/* A resize not started migrating: every lookup is in the old table. */
	twt_wheel_resize(test, w, 150);

	twt_advance(test, w, 5 * TWT_MS);
	twt_expect_armed(test, w, &n[5]);
	twt_expect_at(test, w, &n[5], 0, 10);
	KUNIT_EXPECT_EQ(test, ent[5]->deadline, 10 * TWT_MS);
	twt_advance(test, w, 10 * TWT_MS - 1);
	for (i = 0; i < 6; i++)
		twt_expect_armed(test, w, &n[i]);
	twt_advance(test, w, 10 * TWT_MS);
	twt_expect_armed(test, w, &n[0]);
	twt_expect_at(test, w, &n[0], 0, 50);
	twt_expect_armed(test, w, &n[1]);
	twt_expect_at(test, w, &n[1], 2, 17);
	twt_expect_expired(test, w, 1002, 10 * TWT_MS);
	twt_expect_expired(test, w, 1003, 10 * TWT_MS);
	twt_expect_armed(test, w, &n[4]);
	twt_expect_at(test, w, &n[4], 0, 11);
	twt_expect_expired(test, w, 1005, 10 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->reslots, 4ULL);
	twt_wheel_index_ents(test, w, n, ent);
	twt_check_queue(test, w);

	/* Half-way through the resize: lookups in either table. */
	for (i = 0; i < 100 && w->idx->nr_tab < 2; i++)
		KUNIT_EXPECT_NULL(test, tw_index_migrate(w->idx, 1));
	KUNIT_EXPECT_EQ(test, w->idx->nr_tab, 2UL);
	KUNIT_EXPECT_EQ(test, w->idx->nr_old, 4UL);
	twt_advance(test, w, 11 * TWT_MS - 1);
	twt_expect_armed(test, w, &n[4]);
	twt_advance(test, w, 11 * TWT_MS);
	twt_expect_expired(test, w, 1004, 11 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->late_max, TWT_MS - 1);
	/* Moved again, by the entry alone, while in slot 50. */
	twt_later(test, w, 1000, 60 * TWT_MS);
	twt_advance(test, w, 59 * TWT_MS);
	twt_expect_armed(test, w, &n[0]);
	twt_expect_at(test, w, &n[0], 0, 60);
	twt_advance(test, w, 60 * TWT_MS);
	twt_expect_expired(test, w, 1000, 60 * TWT_MS);
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(twt_ent(test, w, 1000)),
			60 * TWT_MS);
	twt_check_queue(test, w);
	twt_wheel_migrate_all(test, w);
	twt_advance(test, w, 70000 * TWT_MS - 1);
	twt_expect_armed(test, w, &n[1]);
	twt_advance(test, w, 70000 * TWT_MS);
	twt_expect_expired(test, w, 1001, 70000 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->late_max, TWT_MS - 1);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 6UL);
	twt_check_queue(test, w);
}

static struct kunit_case twt_advance_cases[] = {
	KUNIT_CASE(twt_caller_data),
	KUNIT_CASE(twt_min_timeout),
	KUNIT_CASE(twt_budget_one),
	KUNIT_CASE(twt_budget_zero),
	KUNIT_CASE(twt_budget_pause_in_drain),
	KUNIT_CASE(twt_clock_horizon),
	KUNIT_CASE(twt_wheel_index),
	KUNIT_CASE(twt_wheel_index_random),
	{}
};

static struct kunit_suite twt_advance_suite = {
	.name = "twheel_advance",
	.suite_init = twt_suite_init,
	.test_cases = twt_advance_cases,
};

kunit_test_suite(twt_advance_suite);
