// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_ready": the ready queue: discard at any position, pop,
 * events queued at once, the walk of the queue.
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
 * Discard event @k of the @nr in @ev, the queue's contents.  The node
 * that held it takes over the next event, or becomes the sentinel if it
 * held the last one; the node handed back is the one that was after it,
 * now with the discarded id and data, on no list, and it is the entry's
 * node.  It is then freed (its entry removed).  Returns the events left.
 */
static unsigned int twt_discard_at(struct kunit *test, struct tw_wheel *w,
				   struct twt_ev *ev, unsigned int nr,
				   unsigned int k)
{
	struct tw_ent *e = twt_ent(test, w, ev[k].id);
	struct tw_node *held = e->node, *next = held->next;
	struct tw_node *tail = w->tail, *n;
	u64 deadline = tw_ent_deadline(e);

	n = tw_wheel_discard(w, e);
	KUNIT_ASSERT_PTR_EQ(test, n, next);
	KUNIT_ASSERT_PTR_EQ(test, e->node, n);
	KUNIT_EXPECT_FALSE(test, tw_ent_queued(e));
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(e), deadline);
	KUNIT_EXPECT_EQ(test, n->id, ev[k].id);
	KUNIT_EXPECT_EQ(test, n->data, twt_data(ev[k].id));
	KUNIT_ASSERT_FALSE(test, twt_on_queue(w, n));
	KUNIT_ASSERT_PTR_NE(test, n, w->tail);
	KUNIT_ASSERT_PTR_EQ(test, w->tail, k + 1 < nr ? tail : held);
	if (k + 1 < nr)
		KUNIT_EXPECT_PTR_EQ(test, twt_ent(test, w, ev[k + 1].id)->node,
				    held);
	twt_check_queue(test, w);
	tw_index_remove(w->idx, e);
	twt_ev_del(ev, nr, k);
	twt_expect_events(test, w, ev, nr - 1);
	return nr - 1;
}

/*
 * Discarding from the head, the middle and the end of a queue of five,
 * then the rest; then in another order, with an event queued after.
 * After each step the others are there in order, each id's entry points
 * at its event and is marked, and none points at the sentinel.
 */
static void twt_discard_positions(struct kunit *test)
{
	struct twt_ev *ev = kunit_kcalloc(test, 5, sizeof(*ev), GFP_KERNEL);
	struct tw_wheel *w;
	unsigned int nr;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	w = twt_queue5(test, ev);
	nr = twt_discard_at(test, w, ev, 5, 0);		/* 1, the head */
	nr = twt_discard_at(test, w, ev, nr, 1);	/* 3, the middle */
	nr = twt_discard_at(test, w, ev, nr, nr - 1);	/* 5, the last */
	nr = twt_discard_at(test, w, ev, nr, nr - 1);	/* 4, the last */
	nr = twt_discard_at(test, w, ev, nr, 0);	/* 2, the only one */
	KUNIT_EXPECT_EQ(test, nr, 0U);
	KUNIT_EXPECT_PTR_EQ(test, w->head, w->tail);
	KUNIT_EXPECT_EQ(test, w->idx->nr, 0UL);

	w = twt_queue5(test, ev);
	nr = twt_discard_at(test, w, ev, 5, 3);		/* 4, before the last */
	nr = twt_discard_at(test, w, ev, nr, 2);	/* 3, before the last */
	nr = twt_discard_at(test, w, ev, nr, 0);	/* 1, the head */
	nr = twt_discard_at(test, w, ev, nr, 0);	/* 2, the head */
	/* 5 alone; then 6 queued behind it, into the new sentinel */
	twt_arm(test, w, 6, 6 * TWT_MS);
	twt_advance(test, w, 6 * TWT_MS);
	twt_ev_set(&ev[nr++], 6, 6 * TWT_MS);
	twt_expect_events(test, w, ev, nr);
	nr = twt_discard_at(test, w, ev, nr, 0);	/* 5, the head */
	nr = twt_discard_at(test, w, ev, nr, 0);	/* 6, the only one */
	KUNIT_EXPECT_PTR_EQ(test, w->head, w->tail);
	KUNIT_EXPECT_EQ(test, w->idx->nr, 0UL);
}

/*
 * Discard @id's queued event and arm the node handed back for @deadline,
 * as a touch of an expired id does.  Returns the node.
 */
static struct tw_node *twt_rearm(struct kunit *test, struct tw_wheel *w,
				 u64 id, u64 deadline)
{
	struct tw_ent *e = twt_ent(test, w, id);
	unsigned long armed = w->nr_armed, ready = w->nr_ready;
	struct tw_node *n;

	KUNIT_ASSERT_TRUE(test, tw_ent_queued(e));
	n = tw_wheel_discard(w, e);
	KUNIT_ASSERT_PTR_EQ(test, e->node, n);
	KUNIT_ASSERT_PTR_NE(test, n, w->tail);
	KUNIT_EXPECT_EQ(test, n->id, id);
	KUNIT_EXPECT_EQ(test, n->data, twt_data(id));
	e->deadline = deadline;
	tw_wheel_add(w, n, deadline);
	twt_expect_armed(test, w, n);
	KUNIT_EXPECT_EQ(test, w->nr_armed, armed + 1);
	KUNIT_EXPECT_EQ(test, w->nr_ready, ready - 1);
	twt_check_queue(test, w);
	return n;
}

/*
 * A discarded event's node, armed again, expires again with its data,
 * and the events around it keep their order: taken from the middle, from
 * the head for a deadline already past (the drain list), from the end
 * (its node was the sentinel), and touched later once re-armed.
 */
static void twt_discard_rearm(struct kunit *test)
{
	struct twt_ev *ev = kunit_kcalloc(test, 5, sizeof(*ev), GFP_KERNEL);
	struct tw_node *n, *tail;
	struct tw_wheel *w;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	w = twt_queue5(test, ev);
	n = twt_rearm(test, w, 3, 20 * TWT_MS);
	twt_expect_at(test, w, n, 0, 20);
	twt_ev_del(ev, 5, 2);
	twt_expect_events(test, w, ev, 4);
	twt_advance(test, w, 20 * TWT_MS - 1);
	twt_expect_armed(test, w, n);
	twt_advance(test, w, 20 * TWT_MS);
	twt_ev_set(&ev[4], 3, 20 * TWT_MS);
	twt_expect_events(test, w, ev, 5);		/* 1 2 4 5 3 */
	KUNIT_EXPECT_EQ(test, w->late_max, 0ULL);

	n = twt_rearm(test, w, 1, 2 * TWT_MS);
	KUNIT_EXPECT_TRUE(test, twt_in_drain(w, n));
	twt_advance(test, w, 21 * TWT_MS);
	twt_ev_del(ev, 5, 0);
	twt_ev_set(&ev[4], 1, 21 * TWT_MS);
	twt_expect_events(test, w, ev, 5);		/* 2 4 5 3 1 */
	KUNIT_EXPECT_EQ(test, w->late_max, 19 * TWT_MS);

	tail = w->tail;
	n = twt_rearm(test, w, 1, 30 * TWT_MS);
	KUNIT_EXPECT_PTR_EQ(test, n, tail);
	twt_advance(test, w, 30 * TWT_MS);
	ev[4].expired = 30 * TWT_MS;
	twt_expect_events(test, w, ev, 5);

	n = twt_rearm(test, w, 1, 40 * TWT_MS);
	twt_later(test, w, 1, 50 * TWT_MS);
	twt_advance(test, w, 40 * TWT_MS);
	twt_expect_armed(test, w, n);
	twt_expect_at(test, w, n, 0, 50);
	twt_advance(test, w, 50 * TWT_MS);
	ev[4].expired = 50 * TWT_MS;
	twt_expect_events(test, w, ev, 5);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->late_max, 19 * TWT_MS);
}

/*
 * Pop the head: the node handed back held the oldest event, @ev[0], and
 * its entry still points at it, marked queued, until the caller removes
 * it (done here).  Returns the events left.
 */
static unsigned int twt_pop_one(struct kunit *test, struct tw_wheel *w,
				struct twt_ev *ev, unsigned int nr)
{
	struct tw_node *head = w->head, *n;
	struct tw_ent *e;

	KUNIT_ASSERT_GT(test, nr, 0U);
	n = tw_wheel_pop(w);
	KUNIT_ASSERT_PTR_EQ(test, n, head);
	KUNIT_EXPECT_EQ(test, n->id, ev[0].id);
	KUNIT_EXPECT_EQ(test, n->data, twt_data(ev[0].id));
	KUNIT_EXPECT_EQ(test, n->expired, ev[0].expired);
	KUNIT_ASSERT_FALSE(test, twt_on_queue(w, n));
	KUNIT_ASSERT_PTR_NE(test, n, w->tail);
	e = twt_ent(test, w, ev[0].id);
	KUNIT_ASSERT_PTR_EQ(test, e->node, n);
	KUNIT_EXPECT_TRUE(test, tw_ent_queued(e));
	tw_index_remove(w->idx, e);
	twt_ev_del(ev, nr, 0);
	twt_expect_events(test, w, ev, nr - 1);
	return nr - 1;
}

/*
 * Events popped one by one while others join behind them, until the queue
 * is empty (head == tail); an emptied queue takes new events.
 */
static void twt_pop_until_empty(struct kunit *test)
{
	struct twt_ev *ev = kunit_kcalloc(test, 6, sizeof(*ev), GFP_KERNEL);
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	unsigned int i, nr = 0;
	u64 t;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	for (i = 0; i < 6; i++)
		twt_arm(test, w, 100 + i, (i + 1) * TWT_MS);
	twt_advance(test, w, 3 * TWT_MS);
	for (i = 0; i < 3; i++)
		twt_ev_set(&ev[nr++], 100 + i, 3 * TWT_MS);
	twt_expect_events(test, w, ev, nr);
	nr = twt_pop_one(test, w, ev, nr);
	twt_advance(test, w, 6 * TWT_MS);
	for (i = 3; i < 6; i++)
		twt_ev_set(&ev[nr++], 100 + i, 6 * TWT_MS);
	twt_expect_events(test, w, ev, nr);		/* 101 .. 105 */
	while (nr)
		nr = twt_pop_one(test, w, ev, nr);
	KUNIT_EXPECT_PTR_EQ(test, w->head, w->tail);
	KUNIT_EXPECT_EQ(test, w->idx->nr, 0UL);
	KUNIT_EXPECT_FALSE(test, tw_wheel_next(w, &t));

	/* Empty: the sentinel takes the next event, as at the start. */
	twt_arm(test, w, 100, 7 * TWT_MS);
	twt_arm(test, w, 200, 8 * TWT_MS);
	twt_advance(test, w, 7 * TWT_MS);
	twt_ev_set(&ev[nr++], 100, 7 * TWT_MS);
	twt_expect_events(test, w, ev, nr);
	nr = twt_pop_one(test, w, ev, nr);
	KUNIT_EXPECT_PTR_EQ(test, w->head, w->tail);
	twt_advance(test, w, 8 * TWT_MS);
	twt_ev_set(&ev[nr++], 200, 8 * TWT_MS);
	twt_expect_events(test, w, ev, nr);
	nr = twt_pop_one(test, w, ev, nr);
	KUNIT_EXPECT_PTR_EQ(test, w->head, w->tail);
	KUNIT_EXPECT_EQ(test, w->idx->nr, 0UL);
}

/*
 * Events queued at once (tw_wheel_expire(): a touch to a deadline already
 * due) among the wheel's: ids 1..3 by the wheel, 4..8 at once; discards
 * at the head, in the middle and at the end; then 9 at once, behind a
 * sentinel that held an event.  Leaves 2 3 4 6 7 9 queued at *@now.
 */
static struct tw_wheel *twt_at_once_queue(struct kunit *test,
					  struct twt_ev *ev, u64 *now)
{
	const u64 t0 = 5 * TWT_MS;
	struct tw_wheel *w = twt_wheel(test, TWT_MS, t0);
	unsigned int i, nr;

	for (i = 1; i <= 3; i++)
		twt_arm(test, w, i, t0 + i * TWT_MS);
	*now = t0 + 3 * TWT_MS;
	twt_advance(test, w, *now);
	for (i = 1; i <= 8; i++) {
		if (i > 3)
			twt_new_now(test, w, i, *now - 1, *now);
		twt_ev_set(&ev[i - 1], i, *now);
	}
	twt_expect_events(test, w, ev, 8);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	nr = twt_discard_at(test, w, ev, 8, 0);		/* 1, the head */
	nr = twt_discard_at(test, w, ev, nr, 3);	/* 5, the middle */
	nr = twt_discard_at(test, w, ev, nr, nr - 1);	/* 8, the last */
	twt_new_now(test, w, 9, *now, *now);
	twt_ev_set(&ev[nr++], 9, *now);
	twt_expect_events(test, w, ev, nr);
	return w;
}

/*
 * twt_at_once_queue()'s 3, from the middle, armed again and expired by
 * the wheel; 7 armed again, then touched to a deadline due at once: off
 * the wheel and queued.  Leaves 2 4 6 9 7 3 queued.
 */
static void twt_at_once_rearm(struct kunit *test, struct tw_wheel *w,
			      struct twt_ev *ev, u64 now)
{
	struct tw_ent *e;

	twt_rearm(test, w, 3, now + 2 * TWT_MS);
	twt_ev_del(ev, 6, 1);
	twt_rearm(test, w, 7, now + 70 * TWT_MS);
	twt_ev_del(ev, 5, 3);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 2UL);
	twt_check_armed(test, w);
	twt_expect_events(test, w, ev, 4);		/* 2 4 6 9 */
	e = twt_ent(test, w, 7);
	tw_wheel_del(w, e->node);
	e->deadline = now;
	twt_expire_now(test, w, e, now);
	twt_ev_set(&ev[4], 7, now);
	twt_expect_events(test, w, ev, 5);
	twt_check_armed(test, w);
	twt_advance(test, w, now + 2 * TWT_MS);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	twt_ev_set(&ev[5], 3, now + 2 * TWT_MS);
	twt_expect_events(test, w, ev, 6);
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(twt_ent(test, w, 3)),
			now + 2 * TWT_MS);
}

/*
 * 20 events queued at once with clocks @now..@now + 19, every fourth one
 * discarded, the others read in order.
 */
static void twt_at_once_many(struct kunit *test, struct tw_wheel *w, u64 now)
{
	struct twt_ev *ev = kunit_kcalloc(test, 20, sizeof(*ev), GFP_KERNEL);
	unsigned int i, nr = 0;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	for (i = 0; i < 20; i++) {
		twt_new_now(test, w, 100 + i, now, now + i);
		twt_ev_set(&ev[nr++], 100 + i, now + i);
	}
	twt_expect_events(test, w, ev, nr);
	/* 101, 105, ...: i / 4 of them went before */
	for (i = 1; i < 20; i += 4)
		nr = twt_discard_at(test, w, ev, nr, i - i / 4);
	KUNIT_EXPECT_EQ(test, nr, 15U);
	while (nr)
		nr = twt_pop_one(test, w, ev, nr);
	KUNIT_EXPECT_PTR_EQ(test, w->head, w->tail);
	KUNIT_EXPECT_EQ(test, w->idx->nr, 0UL);
}

/*
 * Events queued at once mixed with the wheel's, discarded, armed again
 * and read; the only event discarded; many read in order.
 */
static void twt_expire_at_once(struct kunit *test)
{
	struct twt_ev *ev = kunit_kcalloc(test, 8, sizeof(*ev), GFP_KERNEL);
	struct tw_wheel *w;
	unsigned int nr = 6;
	u64 now;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	w = twt_at_once_queue(test, ev, &now);
	twt_at_once_rearm(test, w, ev, now);
	while (nr > 1)
		nr = twt_pop_one(test, w, ev, nr);
	KUNIT_EXPECT_PTR_EQ(test, w->head->next, w->tail);
	nr = twt_discard_at(test, w, ev, nr, 0);	/* 3, the only one */
	KUNIT_EXPECT_PTR_EQ(test, w->head, w->tail);
	twt_at_once_many(test, w, now + 2 * TWT_MS);
}

/*
 * The ready queue's events from @n on, walked with tw_ready_next(), are
 * the @nr in @ev, oldest first.
 */
static void twt_expect_walk(struct kunit *test, const struct tw_wheel *w,
			    const struct tw_node *n, const struct twt_ev *ev,
			    unsigned int nr)
{
	unsigned int k;

	for (k = 0; n; n = tw_ready_next(w, n), k++) {
		KUNIT_ASSERT_LT(test, k, nr);
		KUNIT_EXPECT_EQ_MSG(test, n->id, ev[k].id, "event %u", k);
		KUNIT_EXPECT_EQ(test, n->expired, ev[k].expired);
	}
	KUNIT_EXPECT_EQ(test, k, nr);
}

/*
 * The ready queue walked: nothing when empty; every event, oldest first;
 * since a mark taken before an advance or a placement, exactly the events
 * queued since (none if none were); from a queued node, the events from
 * it on; after a pop and a discard, the rest.
 */
static void twt_ready_walk(struct kunit *test)
{
	struct twt_ev *ev = kunit_kcalloc(test, 6, sizeof(*ev), GFP_KERNEL);
	struct tw_wheel *w = twt_wheel(test, TWT_MS, 0);
	struct tw_node *mark;
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	KUNIT_EXPECT_NULL(test, tw_ready_first(w));
	mark = tw_ready_mark(w);
	KUNIT_EXPECT_PTR_EQ(test, mark, tw_wheel_sentinel(w));
	KUNIT_EXPECT_NULL(test, tw_ready_since(w, mark));
	for (i = 1; i <= 5; i++) {
		twt_arm(test, w, i, i * TWT_MS);
		twt_ev_set(&ev[i - 1], i, (i <= 3 ? 3 : i) * TWT_MS);
	}
	twt_advance(test, w, 3 * TWT_MS);
	twt_expect_walk(test, w, tw_ready_since(w, mark), ev, 3);
	KUNIT_EXPECT_PTR_EQ(test, tw_ready_since(w, mark), mark);
	mark = tw_ready_mark(w);
	twt_advance(test, w, 4 * TWT_MS);
	twt_advance(test, w, 5 * TWT_MS);
	twt_expect_walk(test, w, tw_ready_since(w, mark), &ev[3], 2);
	twt_expect_walk(test, w, tw_ready_first(w), ev, 5);
	twt_expect_walk(test, w, twt_ent(test, w, 3)->node, &ev[2], 3);
	mark = tw_ready_mark(w);
	twt_advance(test, w, 5 * TWT_MS);
	KUNIT_EXPECT_NULL(test, tw_ready_since(w, mark));

	twt_new_now(test, w, 6, 0, 6 * TWT_MS);
	twt_ev_set(&ev[5], 6, 6 * TWT_MS);
	twt_expect_walk(test, w, tw_ready_since(w, mark), &ev[5], 1);
	twt_read_one(test, w);
	tw_wheel_discard(w, twt_ent(test, w, 4));
	tw_index_remove(w->idx, twt_ent(test, w, 4));
	twt_ev_del(ev, 6, 3);
	twt_expect_walk(test, w, tw_ready_first(w), &ev[1], 4);
}

static struct kunit_case twt_ready_cases[] = {
	KUNIT_CASE(twt_discard_positions),
	KUNIT_CASE(twt_discard_rearm),
	KUNIT_CASE(twt_pop_until_empty),
	KUNIT_CASE(twt_expire_at_once),
	KUNIT_CASE(twt_ready_walk),
	{}
};

static struct kunit_suite twt_ready_suite = {
	.name = "twheel_ready",
	.suite_init = twt_suite_init,
	.test_cases = twt_ready_cases,
};

kunit_test_suite(twt_ready_suite);
