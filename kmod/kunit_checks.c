// SPDX-License-Identifier: GPL-2.0
/*
 * The checks the KUnit suites of twheel_kunit.ko share: where nodes are,
 * the ready queue, the wheel run tick by tick as the device runs it, the
 * index's tables.  See kunit_helpers.h.
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

/**
 * twt_where() - where @n is: true and its level and slot if it is in exactly
 * one slot, false if it is in none.  A node in two slots fails the test.
 * @test: the test case
 * @w: the wheel
 * @n: the node
 * @lvl: out: the level
 * @slot: out: the slot
 */
bool twt_where(struct kunit *test, const struct tw_wheel *w,
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

/**
 * twt_in_drain() - whether @n is on the wheel's drain list
 * @w: the wheel
 * @n: the node
 */
bool twt_in_drain(const struct tw_wheel *w, const struct tw_node *n)
{
	struct hlist_node *p;

	hlist_for_each(p, &w->drain)
		if (p == &n->slot)
			return true;
	return false;
}

/**
 * twt_expect_at() - @n is in slot @slot of level @lvl (and nowhere else)
 * @test: the test case
 * @w: the wheel
 * @n: the node
 * @lvl: the level
 * @slot: the slot
 */
void twt_expect_at(struct kunit *test, const struct tw_wheel *w,
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

/**
 * twt_check_pending() - every pending bit is set exactly when its slot holds a
 * node
 * @test: the test case
 * @w: the wheel
 */
void twt_check_pending(struct kunit *test, const struct tw_wheel *w)
{
	unsigned int l, s, bad = 0, bad_l = 0, bad_s = 0;

	for (l = 0; l < TW_LEVELS; l++) {
		for (s = 0; s < TW_LVL_SIZE; s++) {
			bool bit = w->pending[l] & BIT_ULL(s);

			if (bit == !hlist_empty(&w->slots[l][s]))
				continue;
			if (!bad++) {
				bad_l = l;
				bad_s = s;
			}
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0U,
			    "pending bit of level %u slot %u (the first)",
			    bad_l, bad_s);
}

/**
 * twt_advance() - advance with an unlimited budget; nothing due may remain
 * @test: the test case
 * @w: the wheel
 * @now: the clock in ns
 */
void twt_advance(struct kunit *test, struct tw_wheel *w, u64 now)
{
	unsigned int budget = UINT_MAX;

	KUNIT_EXPECT_FALSE(test, tw_wheel_advance(w, now, &budget));
}

/**
 * twt_on_queue() - whether @n holds an event: it is one of the nodes from
 * w->head up to the sentinel, which is excluded.  At most nr_ready steps.
 * @w: the wheel
 * @n: the node
 */
bool twt_on_queue(const struct tw_wheel *w, const struct tw_node *n)
{
	const struct tw_node *p = w->head;
	unsigned long k;

	for (k = 0; k < w->nr_ready && p && p != w->tail; k++, p = p->next)
		if (p == n)
			return true;
	return false;
}

/*
 * Walk from w->head to the sentinel, counting in *@len the nodes pointed
 * at by their id's entry, which is marked TW_ENT_QUEUED.  Stops at the
 * first bad node (failing), at a NULL link and after nr_ready + 1 nodes.
 * Returns the node where the walk stopped: the sentinel if all is well.
 */
static const struct tw_node *twt_queue_walk(struct kunit *test,
					    const struct tw_wheel *w,
					    unsigned long *len)
{
	const struct tw_node *n = w->head;

	*len = 0;
	while (n && n != w->tail && *len <= w->nr_ready) {
		const struct tw_ent *e = tw_index_find(w->idx, n->id);

		if (!e || e->node != n || !tw_ent_queued(e)) {
			KUNIT_FAIL(test, "event %lu, id %llu: entry %s", *len,
				   n->id, !e ? "missing" : e->node != n ?
				   "points elsewhere" : "not queued");
			break;
		}
		++*len;
		n = n->next;
	}
	return n;
}

/* Entries of @t marked queued; those pointing at @s are added to *@bad. */
static unsigned long twt_tab_queued(const struct tw_ent *t,
				    unsigned long size,
				    const struct tw_node *s,
				    unsigned long *bad)
{
	unsigned long p, nr = 0;

	for (p = 0; p < size; p++) {
		if (!t[p].node)
			continue;
		nr += tw_ent_queued(&t[p]);
		*bad += t[p].node == s;
	}
	return nr;
}

/**
 * twt_check_queue() - the queue invariant: w->nr_ready nodes from w->head to
 * the sentinel w->tail, whose next is NULL; each one's entry points at it and
 * is marked TW_ENT_QUEUED, and no other entry is marked; no entry points at
 * the sentinel.  Entries of ids being popped must be removed first. Asserted:
 * a broken queue would send the next step into the weeds.
 * @test: the test case
 * @w: the wheel
 */
void twt_check_queue(struct kunit *test, const struct tw_wheel *w)
{
	const struct tw_index *x = w->idx;
	unsigned long len, queued, sentinel = 0;

	KUNIT_ASSERT_PTR_EQ(test, twt_queue_walk(test, w, &len), w->tail);
	KUNIT_ASSERT_EQ(test, len, w->nr_ready);
	KUNIT_ASSERT_NOT_NULL(test, w->tail);
	KUNIT_ASSERT_NULL(test, w->tail->next);
	queued = twt_tab_queued(x->tab, x->size, w->tail, &sentinel);
	if (x->old)
		queued += twt_tab_queued(x->old, x->old_size, w->tail,
					 &sentinel);
	KUNIT_ASSERT_EQ_MSG(test, queued, w->nr_ready, "entries queued");
	KUNIT_ASSERT_EQ_MSG(test, sentinel, 0UL, "entries at the sentinel");
}

/*
 * The nodes on list @h that are not their id's armed node (no entry, or
 * one that points elsewhere or is marked queued) are added to *@bad.
 * Returns the nodes, at most @limit + 1.
 */
static unsigned long twt_armed_list(const struct tw_wheel *w,
				    const struct hlist_head *h,
				    unsigned long limit, unsigned long *bad)
{
	struct hlist_node *p;
	unsigned long nr = 0;

	hlist_for_each(p, h) {
		const struct tw_node *n = hlist_entry(p, struct tw_node, slot);
		const struct tw_ent *e = tw_index_find(w->idx, n->id);

		*bad += !e || e->node != n || tw_ent_queued(e);
		if (++nr > limit)
			break;
	}
	return nr;
}

/**
 * twt_check_armed() - every node on the wheel, in a slot or in the drain list,
 * is its id's node and the id is not queued; w->nr_armed counts them
 * @test: the test case
 * @w: the wheel
 */
void twt_check_armed(struct kunit *test, const struct tw_wheel *w)
{
	unsigned long nr = 0, bad = 0;
	unsigned int l, s;

	for (l = 0; l < TW_LEVELS; l++)
		for (s = 0; s < TW_LVL_SIZE; s++)
			nr += twt_armed_list(w, &w->slots[l][s], w->nr_armed,
					     &bad);
	nr += twt_armed_list(w, &w->drain, w->nr_armed, &bad);
	KUNIT_ASSERT_EQ_MSG(test, bad, 0UL, "nodes on the wheel not armed");
	KUNIT_ASSERT_EQ(test, nr, w->nr_armed);
}

/**
 * twt_queued() - whether @id is queued: its entry is marked and its node on
 * the queue
 * @w: the wheel
 * @id: the id
 */
bool twt_queued(const struct tw_wheel *w, u64 id)
{
	const struct tw_ent *e = tw_index_find(w->idx, id);

	return e && tw_ent_queued(e) && twt_on_queue(w, e->node);
}

/**
 * twt_expect_armed() - @n is armed: in one slot or in the drain list, not on
 * the ready queue, and its id's entry points at it and is not marked queued
 * @test: the test case
 * @w: the wheel
 * @n: the node
 */
void twt_expect_armed(struct kunit *test, const struct tw_wheel *w,
		      const struct tw_node *n)
{
	const struct tw_ent *e = twt_ent(test, w, n->id);
	unsigned int l, s;

	KUNIT_EXPECT_PTR_EQ_MSG(test, e->node, n, "id %llu entry", n->id);
	KUNIT_EXPECT_FALSE_MSG(test, tw_ent_queued(e), "id %llu expired",
			       n->id);
	KUNIT_EXPECT_FALSE_MSG(test, twt_on_queue(w, n), "id %llu queued",
			       n->id);
	KUNIT_EXPECT_TRUE_MSG(test, twt_in_drain(w, n) ||
			      twt_where(test, w, n, &l, &s),
			      "id %llu on no list", n->id);
}

/**
 * twt_expect_event() - @id's event is queued, with @data and the expiry clock
 * @when.
 * @test: the test case
 * @w: the wheel
 * @id: the id
 * @data: the data
 * @when: the expiry clock in ns
 */
void twt_expect_event(struct kunit *test, const struct tw_wheel *w,
		      u64 id, u64 data, u64 when)
{
	const struct tw_ent *e = twt_ent(test, w, id);
	const struct tw_node *n = e->node;

	KUNIT_EXPECT_TRUE_MSG(test, tw_ent_queued(e), "id %llu not expired",
			      id);
	KUNIT_ASSERT_TRUE_MSG(test, twt_on_queue(w, n),
			      "id %llu: its node is not on the queue", id);
	KUNIT_EXPECT_EQ(test, n->id, id);
	KUNIT_EXPECT_EQ_MSG(test, n->data, data, "id %llu", id);
	KUNIT_EXPECT_EQ_MSG(test, n->expired, when, "id %llu", id);
}

/**
 * twt_expect_expired() - @id's event is queued at clock @when, with the data
 * twt_arm() gave it
 * @test: the test case
 * @w: the wheel
 * @id: the id
 * @when: the expiry clock in ns
 */
void twt_expect_expired(struct kunit *test, const struct tw_wheel *w,
			u64 id, u64 when)
{
	twt_expect_event(test, w, id, twt_data(id), when);
}

/* What twt_run_ticks() drives: ids, their data and their expiry ticks. */
struct twt_run {
	unsigned int nr;
	u64 *id;
	u64 *data;
	const u64 *tick;
	u8 *done;	/* expired already */
};

/* A run of @nodes[0..@nr), all armed, with expiry ticks @ticks. */
static struct twt_run *twt_run_new(struct kunit *test,
				   const struct tw_node *nodes,
				   unsigned int nr, const u64 *ticks)
{
	struct twt_run *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, r);
	r->id = kunit_kcalloc(test, nr, sizeof(*r->id), GFP_KERNEL);
	r->data = kunit_kcalloc(test, nr, sizeof(*r->data), GFP_KERNEL);
	r->done = kunit_kcalloc(test, nr, sizeof(*r->done), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->id);
	KUNIT_ASSERT_NOT_NULL(test, r->data);
	KUNIT_ASSERT_NOT_NULL(test, r->done);
	r->nr = nr;
	r->tick = ticks;
	for (i = 0; i < nr; i++) {
		r->id[i] = nodes[i].id;
		r->data[i] = nodes[i].data;
	}
	return r;
}

static void twt_run_free(struct kunit *test, struct twt_run *r)
{
	kunit_kfree(test, r->id);
	kunit_kfree(test, r->data);
	kunit_kfree(test, r->done);
	kunit_kfree(test, r);
}

/* The smallest expiry tick of the ids not expired yet. */
static u64 twt_run_min(const struct twt_run *r)
{
	u64 min_e = U64_MAX;
	unsigned int i;

	for (i = 0; i < r->nr; i++)
		if (!r->done[i])
			min_e = min(min_e, r->tick[i]);
	return min_e;
}

/* Which of the run's ids @id is, or r->nr. */
static unsigned int twt_run_find(const struct twt_run *r, u64 id)
{
	unsigned int i;

	for (i = 0; i < r->nr && r->id[i] != id; i++)
		;
	return i;
}

/*
 * After the advance to tick @t with clock @now: exactly the ids whose
 * expiry tick is reached are queued, those queued just now with @now and
 * their data.  Returns how many were queued just now.
 */
static unsigned int twt_run_check(struct kunit *test,
				  const struct tw_wheel *w,
				  struct twt_run *r, u64 t, u64 now)
{
	unsigned int i, got = 0;

	for (i = 0; i < r->nr; i++) {
		const struct tw_ent *e = twt_ent(test, w, r->id[i]);
		bool q = tw_ent_queued(e);

		if (r->tick[i] > t && q) {
			KUNIT_FAIL(test, "id %llu (tick %llu) expired early at tick %llu",
				   r->id[i], r->tick[i], t);
		} else if (r->tick[i] <= t && !q) {
			KUNIT_FAIL(test, "id %llu (tick %llu) not expired at tick %llu",
				   r->id[i], r->tick[i], t);
		} else if (q && !r->done[i]) {
			KUNIT_EXPECT_EQ(test, e->node->id, r->id[i]);
			KUNIT_EXPECT_EQ_MSG(test, e->node->data, r->data[i],
					    "id %llu", r->id[i]);
			KUNIT_EXPECT_EQ_MSG(test, e->node->expired,
					    max(now, 1ULL), "id %llu",
					    r->id[i]);
			r->done[i] = 1;
			got++;
		}
	}
	return got;
}

/*
 * The events from position @base of the queue on are the run's, in
 * expiry-tick order, each queued at or after the start of its tick.
 */
static void twt_run_order(struct kunit *test, const struct tw_wheel *w,
			  const struct twt_run *r, unsigned long base)
{
	const struct tw_node *n = w->head;
	unsigned long k;
	u64 prev_e = 0;

	for (k = 0; k < w->nr_ready && n && n != w->tail; k++, n = n->next) {
		unsigned int i = twt_run_find(r, n->id);

		if (k < base)
			continue;
		KUNIT_ASSERT_LT_MSG(test, i, r->nr, "stray id %llu", n->id);
		KUNIT_EXPECT_LE(test, prev_e, r->tick[i]);
		KUNIT_EXPECT_GE(test, n->expired, r->tick[i] * w->tick_ns);
		prev_e = r->tick[i];
	}
}

/**
 * twt_run_ticks() - drive @w the way the device does: sleep until
 * tw_wheel_next(), advance to exactly that tick, repeat until nothing is
 * armed.  @nodes[0..@nr) must be everything armed on @w, and @ticks[i] the
 * expiry tick of nodes[i]'s entry.  Each must expire at the first advance
 * whose tick reaches its expiry tick (never before, never after), with that
 * advance's clock and its data, its index entry marked TW_ENT_QUEUED exactly
 * then, and the events appended to the queue must be in expiry-tick order.
 * Returns the number of wake-ups.
 * @test: the test case
 * @w: the wheel
 * @nodes: the nodes
 * @nr: nodes in @nodes
 * @ticks: their expiry ticks
 */
unsigned int twt_run_ticks(struct kunit *test, struct tw_wheel *w,
			   const struct tw_node *nodes, unsigned int nr,
			   const u64 *ticks)
{
	struct twt_run *r = twt_run_new(test, nodes, nr, ticks);
	unsigned long base = w->nr_ready;
	unsigned int wakeups = 0, left = nr;
	u64 t;

	while (tw_wheel_next(w, &t)) {
		u64 now = t * w->tick_ns;

		KUNIT_ASSERT_LE_MSG(test, t, twt_run_min(r),
				    "wake-up after an expiry");
		KUNIT_ASSERT_LT(test, ++wakeups, 16 * nr + 16);
		twt_advance(test, w, now);
		KUNIT_EXPECT_EQ(test, w->cur, t);
		left -= twt_run_check(test, w, r, t, now);
		twt_check_pending(test, w);
		twt_check_queue(test, w);
	}
	KUNIT_EXPECT_EQ(test, left, 0U);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, base + nr);
	twt_check_queue(test, w);
	twt_run_order(test, w, r, base);
	twt_run_free(test, r);
	return wakeups;
}

/**
 * twt_run_timer() - twt_run_ticks() with each node's expiry tick from its
 * entry
 * @test: the test case
 * @w: the wheel
 * @nodes: the nodes
 * @nr: nodes in @nodes
 */
unsigned int twt_run_timer(struct kunit *test, struct tw_wheel *w,
			   const struct tw_node *nodes, unsigned int nr)
{
	u64 *ticks = kunit_kcalloc(test, nr, sizeof(*ticks), GFP_KERNEL);
	unsigned int i, wakeups;

	KUNIT_ASSERT_NOT_NULL(test, ticks);
	for (i = 0; i < nr; i++)
		ticks[i] = tw_ticks(w, tw_ent_deadline(twt_ent(test, w,
							       nodes[i].id)));
	wakeups = twt_run_ticks(test, w, nodes, nr, ticks);
	kunit_kfree(test, ticks);
	return wakeups;
}

/**
 * twt_check_tab() - one table of @size slots, the first @empty of them empty
 * for good: a valid one (twm_table_check()), each entry one of c->nodes that
 * the test put in, with its id and deadline.  Returns the number of entries.
 * @c: the index under test (twt_ix())
 * @t: the table
 * @size: slots in the table
 * @empty: slots below it must be empty
 */
unsigned long twt_check_tab(struct twt_ix *c, const struct tw_ent *t,
			    unsigned long size, unsigned long empty)
{
	struct kunit *test = c->test;
	unsigned long p, nr, bad = 0;
	const char *why;

	nr = twm_table_check(&c->x, t, size, empty, &why, &p);
	KUNIT_ASSERT_NULL_MSG(test, why, "slot %lu of %lu: %s", p, size, why);
	for (p = 0; p < size; p++) {
		const struct tw_ent *e = &t[p];
		const struct tw_node *n = e->node;

		if (!n)
			continue;
		if (n < c->nodes || n >= c->nodes + c->nr) {
			KUNIT_FAIL(test, "slot %lu of %lu: stray node", p, size);
			bad++;
			continue;
		}
		c->seen[n - c->nodes]++;
		if (e->id != n->id || !twt_in(n) ||
		    e->deadline != twt_want_deadline(n)) {
			KUNIT_FAIL(test, "slot %lu: id %llu/%llu in %d deadline %llx/%llx",
				   p, e->id, n->id, twt_in(n), e->deadline,
				   twt_want_deadline(n));
			bad++;
		}
	}
	KUNIT_ASSERT_EQ(test, bad, 0UL);
	return nr;
}

/**
 * twt_check() - the whole index: both tables valid, the counts right, every id
 * the test put in there exactly once and found, every other one not found
 * @c: the index under test (twt_ix())
 */
void twt_check(struct twt_ix *c)
{
	struct kunit *test = c->test;
	const struct tw_index *x = &c->x;
	unsigned long nr_tab, nr_old = 0, bad = 0;
	unsigned int i;

	memset(c->seen, 0, c->nr);
	nr_tab = twt_check_tab(c, x->tab, x->size, 0);
	KUNIT_EXPECT_PTR_EQ(test, x->old, c->old);
	if (x->old)
		nr_old = twt_check_tab(c, x->old, x->old_size, x->mpos);
	KUNIT_EXPECT_EQ(test, x->nr_tab, nr_tab);
	KUNIT_EXPECT_EQ(test, x->nr_old, nr_old);
	KUNIT_EXPECT_EQ(test, x->nr, nr_tab + nr_old);
	KUNIT_EXPECT_GE(test, x->size, (unsigned long)TW_IDX_MIN);
	for (i = 0; i < c->nr; i++) {
		const struct tw_node *n = &c->nodes[i];
		const struct tw_ent *e = tw_index_find(x, n->id);

		if (c->seen[i] != twt_in(n) ||
		    (e ? e->node : NULL) != (twt_in(n) ? n : NULL)) {
			KUNIT_FAIL(test, "id %llu: in %d, seen %u, found %d",
				   n->id, twt_in(n), c->seen[i], !!e);
			bad++;
		}
	}
	KUNIT_ASSERT_EQ(test, bad, 0UL);
}

/**
 * twt_ev_set() - set an event as the queue must hold it
 * @ev: the event
 * @id: the id
 * @expired: its expiry clock in ns
 */
void twt_ev_set(struct twt_ev *ev, u64 id, u64 expired)
{
	ev->id = id;
	ev->expired = expired;
}

/**
 * twt_ev_del() - drop event @k of the @nr in @ev
 * @ev: the events
 * @nr: events in @ev
 * @k: which one
 */
void twt_ev_del(struct twt_ev *ev, unsigned int nr, unsigned int k)
{
	memmove(&ev[k], &ev[k + 1], (nr - k - 1) * sizeof(*ev));
}

/**
 * twt_expect_events() - the queue holds exactly the @nr events @ev, oldest
 * first, and the queue invariant holds
 * @test: the test case
 * @w: the wheel
 * @ev: the events
 * @nr: events in @ev
 */
void twt_expect_events(struct kunit *test, const struct tw_wheel *w,
		       const struct twt_ev *ev, unsigned int nr)
{
	const struct tw_node *n = w->head;
	unsigned int k;

	twt_check_queue(test, w);
	KUNIT_ASSERT_EQ(test, w->nr_ready, (unsigned long)nr);
	for (k = 0; k < nr; k++, n = n->next) {
		KUNIT_ASSERT_TRUE(test, n && n != w->tail);
		KUNIT_EXPECT_EQ_MSG(test, n->id, ev[k].id, "event %u", k);
		KUNIT_EXPECT_EQ_MSG(test, n->data, twt_data(ev[k].id),
				    "event %u", k);
		KUNIT_EXPECT_EQ_MSG(test, n->expired, ev[k].expired,
				    "event %u", k);
	}
	KUNIT_EXPECT_PTR_EQ(test, n, w->tail);
}

/**
 * twt_read_one() - take the oldest event off @w's queue, and its id out of the
 * index
 * @test: the test case
 * @w: the wheel
 */
void twt_read_one(struct kunit *test, struct tw_wheel *w)
{
	struct tw_node *n = tw_wheel_pop(w);
	struct tw_ent *e = twt_ent(test, w, n->id);

	KUNIT_ASSERT_PTR_EQ(test, e->node, n);
	tw_index_remove(w->idx, e);
}
