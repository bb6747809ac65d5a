// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_core": the timing wheel and the id index of
 * wheel.c and index.c, driven directly (no device, no locking, no clock).
 *
 * Its own module, twheel_kunit.ko, built only for a kernel with KUnit
 * (kmod/Kbuild): this file includes wheel.c and index.c, so the suite runs the
 * very code twheel.ko runs without being part of it.  The suite runs when
 * the module is loaded (insmod twheel_kunit.ko [kunit_seed=N]) and its KTAP
 * results are in /sys/kernel/debug/kunit/twheel_core/results
 * (CONFIG_KUNIT_DEBUGFS) until it is unloaded.
 *
 * The same file is also a user-space program, selftests/core/kunit_core
 * (make check's host tier, TWHEEL_SEED=N for kunit_seed=N), built over
 * the shims of tools/include: what the suite uses of the kernel's API
 * must exist there too.
 *
 * Every node and table comes from kunit_kzalloc()/kunit_kcalloc(), so it is
 * freed when the test case ends, whatever the outcome.
 *
 * Every wheel has an index and a sentinel (twt_wheel()), and every node a
 * test arms gets an entry first (twt_add()).  A node holds an id's event
 * only until the event is queued: tw_wheel_expire() writes it into the
 * sentinel, and tw_wheel_discard() may move it again.  So the wheel cases
 * check an armed id through its node, and a queued one through its id
 * (twt_expect_expired()), never through the node it was armed with.
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

#include "wheel.c"
#include "index.c"
#include "model.c"

#include "wheel.h"
#include "model.h"

#define TWT_MS		1000000ULL
#define TWT_US		1000ULL
#define TWT_LVL_TICKS(l)	(1ULL << ((l) * TW_LVL_BITS))
/* The index of each wheel test: room for 240 ids (tw_index_room()). */
#define TWT_IDX_SIZE	256

/* The generator of the randomised cases: the model's splitmix64. */
static u64 twt_rand(u64 *s)
{
	return twm_rand(s);
}

/*
 * Every index of the suite is keyed with secrets drawn from one generator,
 * seeded by the module parameter kunit_seed (0: a random seed, printed, so
 * that a failure can be replayed with kunit_seed=N).  The parameter exists
 * only where the suite is built in.  The random cases that say so draw
 * their steps from it too (twt_seed()); the others keep fixed seeds.
 */
static ulong kunit_seed;
module_param(kunit_seed, ulong, 0444);
MODULE_PARM_DESC(kunit_seed, "KUnit suite: seed of the indexes' secrets and of the random cases (0: random)");
static u64 twt_secret_state;
static u64 twt_suite_seed;

/*
 * The seed of a random case that follows kunit_seed, @salt telling the
 * cases apart: a fixed kunit_seed (make check's TWHEEL_SEED) replays the
 * same steps every time, each random one takes other steps.
 */
static u64 twt_seed(u64 salt)
{
	u64 s = twt_suite_seed ^ salt;

	return twt_rand(&s);
}

/* An index's secret, from the suite's generator. */
static void twt_secret(u64 secret[TW_SECRET_WORDS])
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

/*
 * The data the wheel cases give an id: bit 63 set for small ids, so a
 * payload that looks like a flag must come through as well.
 */
static u64 twt_data(u64 id)
{
	return ~id;
}

static struct tw_ent *twt_tab(struct kunit *test, unsigned long size)
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

/* A wheel with an empty index of TWT_IDX_SIZE slots. */
static struct tw_wheel *twt_wheel(struct kunit *test, u64 tick_ns, u64 now)
{
	struct tw_index *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	twt_index_init(x, twt_tab(test, TWT_IDX_SIZE), TWT_IDX_SIZE);
	return twt_wheel_on(test, tick_ns, now, x);
}

/*
 * Start @w over, its index emptied and its sentinel kept; the nodes it
 * held are forgotten.
 */
static void twt_reinit(struct tw_wheel *w, u64 tick_ns, u64 now)
{
	struct tw_index *x = w->idx;

	memset(x->tab, 0, x->size * sizeof(*x->tab));
	twt_index_init(x, x->tab, x->size);
	tw_wheel_init(w, tick_ns, now, x, w->tail);
}

static struct tw_node *twt_nodes(struct kunit *test, unsigned int nr)
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

/* The entry of @id, which must be in @w's index. */
static struct tw_ent *twt_ent(struct kunit *test, const struct tw_wheel *w,
			      u64 id)
{
	struct tw_ent *e = tw_index_find(w->idx, id);

	KUNIT_ASSERT_NOT_NULL_MSG(test, e, "id %llu not in the index", id);
	return e;
}

/* Arm @n, whose id is not in the index yet, for @deadline. */
static void twt_add(struct kunit *test, struct tw_wheel *w, struct tw_node *n,
		    u64 deadline)
{
	struct tw_ent *e;

	KUNIT_ASSERT_NULL(test, tw_index_find(w->idx, n->id));
	KUNIT_ASSERT_TRUE(test, tw_index_room(w->idx));
	e = tw_index_insert(w->idx, n, deadline);
	KUNIT_EXPECT_PTR_EQ(test, e->node, n);
	tw_wheel_add(w, n, deadline);
}

/* A new node for @id with @deadline, added to @w. */
static struct tw_node *twt_arm(struct kunit *test, struct tw_wheel *w,
			       u64 id, u64 deadline)
{
	struct tw_node *n = twt_nodes(test, 1);

	n->id = id;
	n->data = twt_data(id);
	twt_add(test, w, n, deadline);
	return n;
}

/* Move the deadline of armed @id later, in its entry alone. */
static void twt_later(struct kunit *test, struct tw_wheel *w, u64 id,
		      u64 deadline)
{
	struct tw_ent *e = twt_ent(test, w, id);

	KUNIT_ASSERT_FALSE(test, tw_ent_queued(e));
	KUNIT_ASSERT_LE(test, tw_ent_deadline(e), deadline);
	e->deadline = deadline;
}

/* Disarm armed @n and remove its id from the index. */
static void twt_disarm(struct kunit *test, struct tw_wheel *w,
		       struct tw_node *n)
{
	struct tw_ent *e = twt_ent(test, w, n->id);

	KUNIT_ASSERT_PTR_EQ(test, e->node, n);
	KUNIT_ASSERT_FALSE(test, tw_ent_queued(e));
	tw_wheel_del(w, n);
	tw_index_remove(w->idx, e);
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

/* Advance with an unlimited budget; nothing due may remain. */
static void twt_advance(struct kunit *test, struct tw_wheel *w, u64 now)
{
	unsigned int budget = UINT_MAX;

	KUNIT_EXPECT_FALSE(test, tw_wheel_advance(w, now, &budget));
}

/*
 * Whether @n holds an event: it is one of the nodes from w->head up to
 * the sentinel, which is excluded.  At most nr_ready steps.
 */
static bool twt_on_queue(const struct tw_wheel *w, const struct tw_node *n)
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

/*
 * The queue invariant: w->nr_ready nodes from w->head to the sentinel
 * w->tail, whose next is NULL; each one's entry points at it and is
 * marked TW_ENT_QUEUED, and no other entry is marked; no entry points at
 * the sentinel.  Entries of ids being popped must be removed first.
 * Asserted: a broken queue would send the next step into the weeds.
 */
static void twt_check_queue(struct kunit *test, const struct tw_wheel *w)
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

/*
 * Every node on the wheel, in a slot or in the drain list, is its id's
 * node and the id is not queued; w->nr_armed counts them.
 */
static void twt_check_armed(struct kunit *test, const struct tw_wheel *w)
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

/* Whether @id is queued: its entry is marked and its node on the queue. */
static bool twt_queued(const struct tw_wheel *w, u64 id)
{
	const struct tw_ent *e = tw_index_find(w->idx, id);

	return e && tw_ent_queued(e) && twt_on_queue(w, e->node);
}

/*
 * @n is armed: in one slot or in the drain list, not on the ready queue,
 * and its id's entry points at it and is not marked queued.
 */
static void twt_expect_armed(struct kunit *test, const struct tw_wheel *w,
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

/* @id's event is queued, with @data and the expiry clock @when. */
static void twt_expect_event(struct kunit *test, const struct tw_wheel *w,
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

/* @id's event is queued at clock @when, with the data twt_arm() gave it. */
static void twt_expect_expired(struct kunit *test, const struct tw_wheel *w,
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

/*
 * Drive @w the way the device does: sleep until tw_wheel_next(), advance
 * to exactly that tick, repeat until nothing is armed.  @nodes[0..@nr)
 * must be everything armed on @w, and @ticks[i] the expiry tick of
 * nodes[i]'s entry.  Each must expire at the first advance whose tick
 * reaches its expiry tick (never before, never after), with that
 * advance's clock and its data, its index entry marked TW_ENT_QUEUED
 * exactly then, and the events appended to the queue must be in
 * expiry-tick order.  Returns the number of wake-ups.
 */
static unsigned int twt_run_ticks(struct kunit *test, struct tw_wheel *w,
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

/* twt_run_ticks() with each node's expiry tick from its entry. */
static unsigned int twt_run_timer(struct kunit *test, struct tw_wheel *w,
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
 * Queue the event of @e's id, on no list, at once at clock @now, as a
 * touch to a deadline already due does: the event goes into the
 * sentinel, and the id's node becomes the sentinel.
 */
static void twt_expire_now(struct kunit *test, struct tw_wheel *w,
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

/* A new id @id whose deadline @deadline is due at @now: queued at once. */
static void twt_new_now(struct kunit *test, struct tw_wheel *w, u64 id,
			u64 deadline, u64 now)
{
	struct tw_node *n = twt_nodes(test, 1);

	n->id = id;
	n->data = twt_data(id);
	KUNIT_ASSERT_NULL(test, tw_index_find(w->idx, id));
	KUNIT_ASSERT_TRUE(test, tw_index_room(w->idx));
	twt_expire_now(test, w, tw_index_insert(w->idx, n, deadline), now);
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

/* ------------------------------------------------------------- index */

/*
 * The index tests keep their own record of what the index should hold in
 * each node's data word, which the index never reads: TWT_IN set while the
 * id is in the index, and the deadline its entry must carry.
 */
#define TWT_IN		BIT_ULL(63)

static bool twt_in(const struct tw_node *n)
{
	return n->data & TWT_IN;
}

static u64 twt_want_deadline(const struct tw_node *n)
{
	return n->data & ~TWT_IN;
}

/* The smallest key at home in slot @h of @size slots: ceil(h * 2^64 / size). */
static u64 twt_home_key(unsigned long h, unsigned long size)
{
	u64 k = div64_u64(U64_MAX, size) * h;

	/* off by at most @h below: step up to the first key at home in @h */
	while (twm_home(k, size) < h)
		k++;
	return k;
}

/* A test's index: @nr nodes with ids @id0.., none in the index yet. */
struct twt_ix {
	struct kunit *test;
	struct tw_index x;
	struct tw_node *nodes;
	unsigned int nr;
	u8 *seen;
	struct tw_ent *old;	/* the table tw_index_migrate() must return */
	unsigned long returned;	/* old tables returned */
};

static struct twt_ix *twt_ix(struct kunit *test, unsigned long size,
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

static bool twt_in_tab(const struct tw_index *x, const struct tw_ent *e)
{
	return e >= x->tab && e < x->tab + x->size;
}

/* Add nodes[@i] with @deadline; new ids always go to the current table. */
static struct tw_ent *twt_ins(struct twt_ix *c, unsigned int i, u64 deadline)
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

/* Remove nodes[@i], found where it is (either table). */
static void twt_rm(struct twt_ix *c, unsigned int i)
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

static void twt_resize(struct twt_ix *c, unsigned long size)
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

/*
 * One migration step.  The old table comes back exactly once, after its
 * last entry moved, and is freed here.  Returns true when it came back.
 */
static bool twt_migrate(struct twt_ix *c, unsigned long entries)
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

/*
 * One table of @size slots, the first @empty of them empty for good: a
 * valid one (twm_table_check()), each entry one of c->nodes that the test
 * put in, with its id and deadline.  Returns the number of entries.
 */
static unsigned long twt_check_tab(struct twt_ix *c, const struct tw_ent *t,
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

/*
 * The whole index: both tables valid, the counts right, every id the
 * test put in there exactly once and found, every other one not found.
 */
static void twt_check(struct twt_ix *c)
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

/* ------------------------------------------------------- ready queue */

/* An event as the queue must hold it, with the data twt_arm() gives. */
struct twt_ev {
	u64 id;
	u64 expired;
};

static void twt_ev_set(struct twt_ev *ev, u64 id, u64 expired)
{
	ev->id = id;
	ev->expired = expired;
}

/* Drop event @k of the @nr in @ev. */
static void twt_ev_del(struct twt_ev *ev, unsigned int nr, unsigned int k)
{
	memmove(&ev[k], &ev[k + 1], (nr - k - 1) * sizeof(*ev));
}

/*
 * The queue holds exactly the @nr events @ev, oldest first, and the queue
 * invariant holds.
 */
static void twt_expect_events(struct kunit *test, const struct tw_wheel *w,
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

/* Ids 1..5 armed for 1..5 ms and expired a tick apart: five events. */
static struct tw_wheel *twt_queue5(struct kunit *test, struct twt_ev *ev)
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
 * twt_queue_random() and twt_queue_module() drive a wheel against the
 * model of twheel_model.h, the one the fuzzer drives too: it knows each
 * id's state, deadline and data, which node holds what (the ready queue
 * node for node, the sentinel last), the index's tables and its resizes,
 * and checks the wheel, the queue and the index after every step.  The
 * cases pick the steps from splitmix64 where the fuzzer reads its input;
 * the model's memory is the case's and a broken property fails the case
 * (KUNIT_FAIL_AND_ABORT()).
 */
static void *twt_model_zalloc(void *ctx, size_t size)
{
	return kunit_kzalloc(ctx, size, GFP_KERNEL);
}

static void twt_model_free(void *ctx, void *p)
{
	kunit_kfree(ctx, p);
}

static void twt_model_fail(void *ctx, const char *why)
{
	struct kunit *test = ctx;

	KUNIT_FAIL_AND_ABORT(test, "%s", why);
}

static const struct twm_hooks twt_model_hooks = {
	.zalloc = twt_model_zalloc,
	.free = twt_model_free,
	.fail = twt_model_fail,
};

/*
 * A run: @nr ids on a wheel of @tick from @now with an index of @size
 * slots keyed by the suite's secrets, its steps from @seed.
 */
static struct twm *twt_model_new(struct kunit *test, unsigned int nr,
				 u64 seed, u64 tick, u64 now,
				 unsigned long size)
{
	struct twm *m = twm_new(&twt_model_hooks, test, nr);
	u64 secret[TW_SECRET_WORDS];

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->prng = seed;
	m->prng_on = true;
	twt_secret(secret);
	twm_start(m, tick, now, size, secret);
	return m;
}

/* A random level's span: 1 to 2^30 ticks, at most 2^52 ns. */
static u64 twt_model_span(const struct twm *m, u64 r)
{
	unsigned int shift = TW_LVL_BITS * (r % 6);

	if (m->tick > BIT_ULL(52) >> shift)
		return BIT_ULL(52);
	return m->tick << shift;
}

/*
 * twt_queue_module()'s deadlines: up to 70 spans of a random level ahead,
 * TWHEEL_DEADLINE_MAX past the end of time; one in 16 already due, by up
 * to 64 ticks.
 */
static u64 twt_model_far(struct twm *m, u64 r)
{
	u64 ahead = twm_rand(&m->prng), d;

	if ((r >> 4) % 16 == 0)
		return m->now - ahead % min(m->now + 1, 64 * m->tick);
	d = m->now + 1 + ahead % (twt_model_span(m, r) * (1 + (r >> 8) % 70));
	if (d > TWHEEL_DEADLINE_MAX || d <= m->now)
		d = TWHEEL_DEADLINE_MAX;
	return d;
}

/*
 * A deadline: one in 4 from the model's generator (tick and slot
 * boundaries, ties, the end of time), else from now: twt_model_far() for
 * twt_queue_module(), or ahead by up to 2^36 ns, one in 8 already due by
 * up to 10 ms.
 */
static u64 twt_model_deadline(struct twm *m, bool module)
{
	u64 r = twm_rand(&m->prng);

	if (r % 4 == 0)
		return twm_gen_deadline(m);
	r >>= 2;
	if (module)
		return twt_model_far(m, r);
	if (r % 8 == 0)
		return m->now - (r >> 8) % min(m->now + 1, 10 * TWT_MS);
	return m->now + ((r >> 16) & (BIT_ULL(8 + (r >> 3) % 29) - 1));
}

/* Armed id @i's deadline moved later by up to 2^31 ns: its entry alone. */
static void twt_model_later(struct twm *m, unsigned int i)
{
	u64 r = twm_rand(&m->prng), d = m->ids[i].deadline;

	d += (r >> 8) & (BIT_ULL(r % 32) - 1);
	twm_later(m, i, min(d, TWHEEL_DEADLINE_MAX));
}

/*
 * The clock moved on: by up to 2^33 ns, or for twt_queue_module() by a
 * few ticks, up to 200, to exactly the next slot due, or by up to a
 * random level's span (at most 2^40 ns); never past the end of time.
 */
static void twt_model_clock(struct twm *m, u64 r, bool module)
{
	u64 tick = m->tick, step = twm_rand(&m->prng), t;

	if (!module) {
		m->now += (r >> 16) & (BIT_ULL((r >> 4) % 34) - 1);
		return;
	}
	switch ((r >> 4) % 4) {
	case 0:
		m->now += step % (3 * tick);
		break;
	case 1:
		m->now += step % (200 * tick);
		break;
	case 2:
		if (tw_wheel_next(&m->w, &t) && t * tick > m->now)
			m->now = t * tick;
		break;
	default:
		m->now += step % min(twt_model_span(m, r >> 8), BIT_ULL(40));
		break;
	}
	m->now = min(m->now, TWM_KMAX);
}

/*
 * Move the clock on; advance with a random budget, in one call, which may
 * leave work due, or for twt_queue_module() also in calls until none is,
 * the index migrating between them.
 */
static void twt_model_advance(struct twm *m, bool module)
{
	u64 r = twm_rand(&m->prng);
	unsigned int budget = r & 1 ? UINT_MAX : 1 + (r >> 1) % 8;

	twt_model_clock(m, r, module);
	if (!twm_advance_once(m, budget) || !module || !((r >> 40) % 2))
		return;
	do
		twm_maintain(m, 0, 1 + (r >> 41) % 2);
	while (twm_advance_once(m, 1 + twm_rand(&m->prng) % 50));
}

/* Id @i, if in @state, given a deadline through the wheel even if due. */
static void twt_model_raw(struct twm *m, unsigned int i, enum twm_state state,
			  bool module)
{
	if (m->ids[i].state == state)
		twm_set(m, i, twt_model_deadline(m, module), TWM_RAW);
}

/*
 * One random step on a random id: a new id armed through the wheel (some
 * already due), an armed one touched later (the entry alone) or moved
 * (disarmed and added), one cancelled armed or queued (discarded), a
 * queued one armed again (discarded and added), an event popped; the
 * clock advanced; the index resized to 80..299 slots or migrated.
 */
static void twt_model_step(struct twm *m)
{
	u64 r = twm_rand(&m->prng);
	unsigned int i = (r >> 8) % m->nr;

	switch (r % 16) {
	case 0 ... 3:
		twt_model_raw(m, i, TWM_ABSENT, false);
		break;
	case 4 ... 5:
		if (m->ids[i].state == TWM_ARMED)
			twt_model_later(m, i);
		break;
	case 6:
		twt_model_raw(m, i, TWM_ARMED, false);
		break;
	case 7:
		twm_cancel(m, i);
		break;
	case 8 ... 9:
		twt_model_raw(m, i, TWM_QUEUED, false);
		break;
	case 10 ... 11:
		twm_read(m, 1, false);
		break;
	case 12 ... 14:
		twt_model_advance(m, false);
		break;
	default:
		if (!m->mold)
			twm_resize(m, 80 + (r >> 16) % 220);
		else
			twm_migrate(m, 1 + (r >> 16) % 16);
		break;
	}
}

/*
 * One step of twt_queue_module(), as the device takes them: the index
 * kept up by the core's policy (a resize the id would overfill finished
 * first, the one asked for started, the batch's share migrated) and the
 * wheel caught up (its tw_lock()), then on a random id (often one whose
 * event is queued, anywhere in the queue) mostly touches (@eager: each
 * one taken off and placed again; while ids go, @drop, cancels of ids
 * present), cancels, reads, faulting ones too, and advances (@eager: read
 * at once, else one in 8), now and then the other steps and a step of a
 * dump.
 */
static void twt_model_step_module(struct twm *m, bool eager, bool drop)
{
	u64 r = twm_rand(&m->prng);
	unsigned int i = (r >> 8) % m->nr, k;

	if (m->rq_len && !((r >> 40) % 8))
		i = m->rq[(r >> 44) % m->rq_len];
	twm_maintain_batch(m, 1);
	twm_catch_up(m);
	if (drop && r % 32 < 15) {
		for (k = 0; k < 8 && m->ids[i].state == TWM_ABSENT; k++)
			i = twm_rand(&m->prng) % m->nr;
		r = 12;
	}
	switch (r % 32) {
	case 0 ... 11:
		twm_set(m, i, twt_model_deadline(m, true), eager ? TWM_EAGER : 0);
		break;
	case 12 ... 14:
		twm_cancel(m, i);
		break;
	case 15 ... 17:
		twm_read(m, 1 + (r >> 16) % 16, !((r >> 20) % 4));
		break;
	case 18:
		twm_read(m, 1, false);
		break;
	case 19:
		if (m->rq_len)
			i = m->rq[(r >> 44) % m->rq_len];
		twt_model_raw(m, i, TWM_QUEUED, true);
		break;
	case 20:
		twt_model_raw(m, i, TWM_ARMED, true);
		break;
	case 21:
		twt_model_raw(m, i, TWM_ABSENT, true);
		break;
	case 22 ... 23:
		if (m->ids[i].state == TWM_ARMED)
			twt_model_later(m, i);
		break;
	case 24:
		twm_dump_step(m);
		break;
	default:
		twt_model_advance(m, true);
		if (eager || !((r >> 32) % 8))
			twm_read(m, m->rq_len, false);
		break;
	}
}

/* What the runs of a case did, in its log. */
static void twt_model_info(struct kunit *test, const unsigned long *count)
{
	char buf[400];

	twm_counts(count, buf, sizeof(buf));
	kunit_info(test, "%s", buf);
}

/*
 * Random steps against the model: ids armed (some already due), touched
 * later (the entry alone), moved (disarmed and added), cancelled armed or
 * queued (discarded), touched while queued (discarded and re-armed),
 * popped; the clock advanced by steps of any size with budgets large and
 * small; the index resized under it all.  The run ends with everything
 * expired, read and torn down.
 */
static void twt_queue_random(struct kunit *test)
{
	static const enum twm_count used[] = {
		TWM_NEW, TWM_LAZY, TWM_DEL_TOUCH, TWM_DEL_CANCEL,
		TWM_DISCARD_TOUCH, TWM_DISCARD_CANCEL, TWM_CANCEL, TWM_POP,
		TWM_ADVANCE, TWM_EXPIRED, TWM_RESIZE,
	};
	struct twm *m = twt_model_new(test, 64, 43, TWT_MS, 1000 * TWT_MS,
				      TWT_IDX_SIZE);
	unsigned int step, k;

	for (step = 1; step <= 4000; step++) {
		m->op_no = step;
		m->op_name = "random step";
		twt_model_step(m);
		twm_check(m);
	}
	twt_model_info(test, m->count);
	for (k = 0; k < ARRAY_SIZE(used); k++)
		KUNIT_EXPECT_GT_MSG(test, m->count[used[k]], 10UL, "%s",
				    twm_count_name[used[k]]);
	twm_finish(m);
	twm_teardown(m);
}

/* One run of twt_queue_module(): @nr ids, @steps steps from seed @seed. */
static void twt_module_run(struct kunit *test, unsigned int nr,
			   unsigned int steps, u64 tick, bool eager, u64 seed,
			   unsigned long *count)
{
	u64 now = twt_rand(&seed) % BIT_ULL(50);
	struct twm *m = twt_model_new(test, nr, twt_rand(&seed), tick, now,
				      TW_IDX_MIN);
	unsigned int step, k;

	for (step = 0; step < steps; step++) {
		m->op_no = step + 1;
		m->op_name = "device step";
		/* ids come for a quarter of the steps, then go, twice */
		twt_model_step_module(m, eager, step / (steps / 4) % 2);
		twm_check(m);
	}
	if (seed & 1)
		twm_finish(m);
	twm_teardown(m);
	for (k = 0; k < TWM_COUNTS; k++)
		count[k] += m->count[k];
}

/*
 * twt_queue_random() with the device's steps and sizes, from a seed that
 * follows kunit_seed: runs on each tick from TWHEEL_TICK_MIN_NS to
 * TWHEEL_TICK_MAX_NS from any clock, with up to 500 ids, deadlines at
 * every level's scale and at the end of time, events queued at once,
 * touches with new data, reads as the device's, dumps, the index growing
 * and shrinking as it asks; lazy (touches later to the entry alone) or
 * eager (every touch arms again, every advance is read at once).  Each run
 * ends with everything expired and read, or torn down as at release.
 */
static void twt_queue_module(struct kunit *test)
{
	static const u64 ticks[] = {
		TWHEEL_TICK_MIN_NS, TWT_MS, 7777777, 1000 * TWT_MS,
		TWHEEL_TICK_MAX_NS,
	};
	u64 seed = twt_seed(0x90d01e);
	unsigned long count[TWM_COUNTS] = {};
	unsigned int run, k;

	for (run = 0; run < 2 * ARRAY_SIZE(ticks); run++) {
		unsigned int nr = 100 + twt_rand(&seed) % 400;

		twt_module_run(test, nr, 4000, ticks[run % ARRAY_SIZE(ticks)],
			       run >= ARRAY_SIZE(ticks), twt_rand(&seed), count);
	}
	twt_model_info(test, count);
	for (k = 0; k < TWM_COUNTS; k++)
		if (k != TWM_RESIZE)
			KUNIT_EXPECT_GT_MSG(test, count[k], 0UL, "%s",
					    twm_count_name[k]);
}

/* ------------------------------------ the callers' walk and policies */

/* Take the oldest event off @w's queue, and its id out of the index. */
static void twt_read_one(struct kunit *test, struct tw_wheel *w)
{
	struct tw_node *n = tw_wheel_pop(w);
	struct tw_ent *e = twt_ent(test, w, n->id);

	KUNIT_ASSERT_PTR_EQ(test, e->node, n);
	tw_index_remove(w->idx, e);
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

/*
 * tw_wheel_place() of new ids: a deadline to come arms the node in its
 * slot; one due (at now, or long past) queues the event at once into the
 * sentinel, stamped now, and the id's node becomes the sentinel.
 */
static void twt_place_new(struct kunit *test)
{
	const u64 now = 10 * TWT_MS;
	struct tw_wheel *w = twt_wheel(test, TWT_MS, now);
	struct tw_node *n = twt_nodes(test, 3);
	struct tw_node *s = tw_wheel_sentinel(w);
	struct tw_ent *e;

	e = tw_index_insert(w->idx, &n[0], 0);
	KUNIT_EXPECT_EQ(test, tw_wheel_place(w, e, now + 1, now), 0U);
	KUNIT_EXPECT_EQ(test, e->deadline, now + 1);
	twt_expect_armed(test, w, &n[0]);
	twt_expect_at(test, w, &n[0], 0, 11);

	e = tw_index_insert(w->idx, &n[1], 0);
	KUNIT_EXPECT_EQ(test, tw_wheel_place(w, e, now, now), TW_SET_EXPIRED);
	KUNIT_EXPECT_PTR_EQ(test, e->node, s);
	KUNIT_EXPECT_PTR_EQ(test, tw_wheel_sentinel(w), &n[1]);
	twt_expect_expired(test, w, 1, now);

	e = tw_index_insert(w->idx, &n[2], 0);
	KUNIT_EXPECT_EQ(test, tw_wheel_place(w, e, 0, now), TW_SET_EXPIRED);
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(e), 0ULL);
	twt_expect_expired(test, w, 2, now);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 1UL);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 2UL);
	twt_check_queue(test, w);
	twt_check_armed(test, w);
}

/*
 * tw_wheel_set() of a present id, each way once: later and the same (the
 * entry alone: the node stays in its slot until that comes due), earlier
 * (the same node, to another slot), later but due (queued at once), then
 * queued: later (its event discarded, armed again) and due (discarded
 * and queued again behind the others, stamped now).
 */
static void twt_set_paths(struct kunit *test)
{
	struct twt_ev *ev = kunit_kcalloc(test, 2, sizeof(*ev), GFP_KERNEL);
	u64 now = 10 * TWT_MS;
	struct tw_wheel *w = twt_wheel(test, TWT_MS, now);
	struct tw_node *a = twt_arm(test, w, 1, 20 * TWT_MS);
	struct tw_ent *e = twt_ent(test, w, 1);

	KUNIT_ASSERT_NOT_NULL(test, ev);
	KUNIT_EXPECT_EQ(test, tw_wheel_set(w, e, 30 * TWT_MS, now),
			TW_SET_LAZY);
	KUNIT_EXPECT_EQ(test, tw_wheel_set(w, e, 30 * TWT_MS, now),
			TW_SET_LAZY);
	KUNIT_EXPECT_EQ(test, e->deadline, 30 * TWT_MS);
	twt_expect_at(test, w, a, 0, 20);
	now = 20 * TWT_MS;
	twt_advance(test, w, now);
	twt_expect_at(test, w, a, 0, 30);
	KUNIT_EXPECT_EQ(test, w->reslots, 1ULL);

	e = twt_ent(test, w, 1);
	KUNIT_EXPECT_EQ(test, tw_wheel_set(w, e, 25 * TWT_MS, now), 0U);
	KUNIT_EXPECT_PTR_EQ(test, e->node, a);
	twt_expect_at(test, w, a, 0, 25);
	twt_check_pending(test, w);

	now = 26 * TWT_MS;
	KUNIT_EXPECT_EQ(test, tw_wheel_set(w, e, now, now), TW_SET_EXPIRED);
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	twt_expect_expired(test, w, 1, now);

	KUNIT_EXPECT_EQ(test, tw_wheel_set(w, e, 40 * TWT_MS, now),
			TW_SET_DISCARDED);
	KUNIT_EXPECT_EQ(test, w->nr_ready, 0UL);
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(e), 40 * TWT_MS);
	twt_expect_armed(test, w, e->node);
	KUNIT_EXPECT_EQ(test, e->node->data, twt_data(1));

	twt_new_now(test, w, 2, now, now);
	e = twt_ent(test, w, 1);
	KUNIT_EXPECT_EQ(test, tw_wheel_set(w, e, now, now), TW_SET_EXPIRED);
	e = twt_ent(test, w, 2);
	KUNIT_EXPECT_EQ(test, tw_wheel_set(w, e, now, now + 1),
			TW_SET_DISCARDED | TW_SET_EXPIRED);
	twt_ev_set(&ev[0], 1, now);
	twt_ev_set(&ev[1], 2, now + 1);
	twt_expect_events(test, w, ev, 2);
}

/*
 * tw_wheel_detach(): an armed id leaves its slot, and the slot's pending
 * bit goes with it (false); a queued id's event leaves the queue (true).
 * Either way the entry's node holds the id and its data on no list.
 */
static void twt_detach_paths(struct kunit *test)
{
	struct twt_ev *ev = kunit_kcalloc(test, 5, sizeof(*ev), GFP_KERNEL);
	struct tw_wheel *w;
	struct tw_node *n;
	struct tw_ent *e;
	unsigned int l, s;

	KUNIT_ASSERT_NOT_NULL(test, ev);
	w = twt_queue5(test, ev);
	n = twt_arm(test, w, 9, 9 * TWT_MS);
	e = twt_ent(test, w, 9);
	KUNIT_EXPECT_FALSE(test, tw_wheel_detach(w, e));
	KUNIT_EXPECT_PTR_EQ(test, e->node, n);
	KUNIT_EXPECT_FALSE(test, twt_where(test, w, n, &l, &s));
	KUNIT_EXPECT_FALSE(test, twt_in_drain(w, n));
	KUNIT_EXPECT_EQ(test, w->nr_armed, 0UL);
	KUNIT_EXPECT_EQ(test, w->pending[0], 0ULL);
	tw_index_remove(w->idx, e);

	e = twt_ent(test, w, 3);
	KUNIT_EXPECT_TRUE(test, tw_wheel_detach(w, e));
	KUNIT_EXPECT_FALSE(test, tw_ent_queued(e));
	KUNIT_EXPECT_EQ(test, e->node->id, 3ULL);
	KUNIT_EXPECT_EQ(test, e->node->data, twt_data(3));
	KUNIT_EXPECT_FALSE(test, twt_on_queue(w, e->node));
	KUNIT_EXPECT_PTR_NE(test, e->node, tw_wheel_sentinel(w));
	tw_index_remove(w->idx, e);
	twt_ev_del(ev, 5, 2);
	twt_expect_events(test, w, ev, 4);
}

/* What tw_wheel_set() reports for an id armed or @queued at @old. */
static unsigned int twt_set_want(bool queued, u64 old, u64 deadline, u64 now)
{
	unsigned int want = deadline <= now ? TW_SET_EXPIRED : 0;

	if (queued)
		return want | TW_SET_DISCARDED;
	return !want && deadline >= old ? TW_SET_LAZY : want;
}

/*
 * Set @id, present or not, to @deadline at @now, as the device does: the
 * report is the documented one for the state it was in, and afterwards
 * the id is armed or queued as reported, at @deadline, with its data,
 * and the counts moved by as much.  Returns the report.
 */
static unsigned int twt_set_one(struct kunit *test, struct tw_wheel *w,
				u64 id, u64 deadline, u64 now)
{
	struct tw_ent *e = tw_index_find(w->idx, id);
	unsigned long armed = w->nr_armed, ready = w->nr_ready;
	unsigned int did, want;
	struct tw_node *n;

	if (e) {
		want = twt_set_want(tw_ent_queued(e), tw_ent_deadline(e),
				    deadline, now);
		armed -= !tw_ent_queued(e);
		ready -= tw_ent_queued(e);
		did = tw_wheel_set(w, e, deadline, now);
	} else {
		n = twt_nodes(test, 1);
		n->id = id;
		n->data = twt_data(id);
		KUNIT_ASSERT_TRUE(test, tw_index_room(w->idx));
		e = tw_index_insert(w->idx, n, 0);
		want = deadline <= now ? TW_SET_EXPIRED : 0;
		did = tw_wheel_place(w, e, deadline, now);
	}
	KUNIT_EXPECT_EQ_MSG(test, did, want, "id %llu to %llu at %llu", id,
			    deadline, now);
	KUNIT_EXPECT_EQ(test, tw_ent_deadline(e), deadline);
	KUNIT_EXPECT_EQ(test, tw_ent_queued(e), !!(did & TW_SET_EXPIRED));
	KUNIT_EXPECT_EQ(test, e->node->data, twt_data(id));
	if (did & TW_SET_EXPIRED) {
		KUNIT_EXPECT_PTR_EQ(test, e->node->next, tw_wheel_sentinel(w));
		KUNIT_EXPECT_EQ(test, e->node->expired, max(now, 1ULL));
	} else {
		twt_expect_armed(test, w, e->node);
	}
	KUNIT_EXPECT_EQ(test, w->nr_armed, armed + !(did & TW_SET_EXPIRED));
	KUNIT_EXPECT_EQ(test, w->nr_ready, ready + !!(did & TW_SET_EXPIRED));
	return did;
}

/* A deadline for twt_set_random(): around now, or around @id's own. */
static u64 twt_set_deadline(const struct tw_wheel *w, u64 id, u64 now, u64 r)
{
	const struct tw_ent *e = tw_index_find(w->idx, id);
	u64 old = e ? tw_ent_deadline(e) : now, d = (r >> 8) % (40 * TWT_MS);

	switch (r % 6) {
	case 0:
		return now > d ? now - d : 0;
	case 1:
		return now;
	case 2:
		return old;
	case 3:
		return old > d ? old - d : 0;
	default:
		return max(old, now) + d;
	}
}

/* Cancel @id if present: tw_wheel_detach() says whether it was queued. */
static bool twt_cancel_one(struct kunit *test, struct tw_wheel *w, u64 id)
{
	struct tw_ent *e = tw_index_find(w->idx, id);
	bool queued;

	if (!e)
		return false;
	queued = tw_ent_queued(e);
	KUNIT_EXPECT_EQ(test, tw_wheel_detach(w, e), queued);
	KUNIT_EXPECT_FALSE(test, tw_ent_queued(e));
	tw_index_remove(w->idx, e);
	return true;
}

/*
 * tw_wheel_set() and tw_wheel_place() on 48 ids at random, each move
 * checked against its documentation (twt_set_one()), while the clock
 * moves and the wheel advances, ids are cancelled (tw_wheel_detach())
 * and events read; the queue and the wheel stay whole throughout.
 */
static void twt_set_random(struct kunit *test)
{
	u64 now = 1000 * TWT_MS, seed = twt_seed(0x5e7);
	struct tw_wheel *w = twt_wheel(test, TWT_MS, now);
	unsigned int did[8] = {}, step, cancels = 0;

	for (step = 0; step < 4000; step++) {
		u64 r = twt_rand(&seed), id = (r >> 40) % 48;

		switch ((r >> 32) % 8) {
		case 0 ... 4:
			did[twt_set_one(test, w, id,
					twt_set_deadline(w, id, now, r),
					now)]++;
			break;
		case 5:
			cancels += twt_cancel_one(test, w, id);
			break;
		case 6:
			now += (r >> 8) % (20 * TWT_MS);
			twt_advance(test, w, now);
			break;
		default:
			if (w->nr_ready)
				twt_read_one(test, w);
			break;
		}
		twt_check_queue(test, w);
		twt_check_armed(test, w);
	}
	kunit_info(test, "%u armed, %u at once, %u lazy, %u discarded and armed, %u discarded and at once, %u cancelled",
		   did[0], did[TW_SET_EXPIRED], did[TW_SET_LAZY],
		   did[TW_SET_DISCARDED],
		   did[TW_SET_DISCARDED | TW_SET_EXPIRED], cancels);
	KUNIT_EXPECT_GT(test, did[0], 50U);
	KUNIT_EXPECT_GT(test, did[TW_SET_EXPIRED], 50U);
	KUNIT_EXPECT_GT(test, did[TW_SET_LAZY], 50U);
	KUNIT_EXPECT_GT(test, did[TW_SET_DISCARDED], 10U);
	KUNIT_EXPECT_GT(test, did[TW_SET_DISCARDED | TW_SET_EXPIRED], 10U);
}

/*
 * Upkeep before a batch of @ids, by the core's protocol as the callers of
 * the policy run it (tw_index_upkeep()): a resize finished first if the
 * batch needs it (counted in *@finish), a new table if one is wanted
 * (*@grow or *@shrink; offered, and with one caller always taken), the
 * batch's share migrated.  Then the index has room for the batch.
 */
static void twt_policy_upkeep(struct twt_ix *c, unsigned long ids,
			      unsigned int *finish, unsigned int *grow,
			      unsigned int *shrink)
{
	struct kunit *test = c->test;
	struct tw_index *x = &c->x;
	struct tw_ent *old, *prev, *tab;
	unsigned long size;
	int step;

	do {
		prev = x->tab;
		step = tw_index_upkeep(x, ids, &size, &old);
		if (old) {
			KUNIT_ASSERT_PTR_EQ(test, old, c->old);
			kunit_kfree(test, old);
			c->old = NULL;
			c->returned++;
		}
		if (step == TW_UPKEEP_MIGRATED) {
			KUNIT_ASSERT_TRUE(test, old || x->old);
			++*finish;
		} else if (step == TW_UPKEEP_ALLOC) {
			size > x->size ? ++*grow : ++*shrink;
			tab = twt_tab(test, size);
			KUNIT_ASSERT_NULL(test, c->old);
			KUNIT_ASSERT_TRUE(test, tw_index_offer(x, ids, tab, size));
			c->old = prev;
		}
	} while (step != TW_UPKEEP_DONE);
	KUNIT_ASSERT_TRUE_MSG(test, tw_index_room_for(x, ids),
			      "%lu ids, %lu more in %lu slots", x->nr, ids,
			      x->size);
}

/*
 * The resize policy at its thresholds: a table allocated for a batch is
 * taken while a resize is wanted and the table holds the batch at 9/10;
 * a resize under way is finished first when a batch would fill its new
 * table past 9/10; a batch migrates TW_MIGRATE entries per id it may add,
 * and TW_MIGRATE more.  Then a batch of TW_CHUNK ids during a resize:
 * the upkeep finishes it, grows the table and leaves room for the batch.
 */
static void twt_index_policy(struct kunit *test)
{
	struct twt_ix *c = twt_ix(test, TW_IDX_MIN, 60);
	struct tw_index *x = &c->x;
	unsigned int i, finish = 0, grow = 0, shrink = 0;
	u64 seed = 23;

	for (i = 0; i < 60; i++)
		c->nodes[i].id = twt_rand(&seed);
	KUNIT_EXPECT_FALSE(test, tw_index_finish_first(x, 1000));
	KUNIT_EXPECT_EQ(test, tw_index_want_size(x, 64), 86UL);
	KUNIT_EXPECT_TRUE(test, tw_index_still_wanted(x, 64, 86));
	KUNIT_EXPECT_TRUE(test, tw_index_still_wanted(x, 64, 72));
	KUNIT_EXPECT_FALSE(test, tw_index_still_wanted(x, 64, 71));
	KUNIT_EXPECT_FALSE(test, tw_index_still_wanted(x, 57, 1000));
	KUNIT_EXPECT_TRUE(test, tw_index_still_wanted(x, 58, 1000));
	KUNIT_EXPECT_NULL(test, tw_index_migrate_batch(x, 64));

	for (i = 0; i < 60; i++)
		twt_ins(c, i, i);
	twt_resize(c, 80);
	KUNIT_EXPECT_FALSE(test, tw_index_finish_first(x, 12));
	KUNIT_EXPECT_TRUE(test, tw_index_finish_first(x, 13));
	KUNIT_EXPECT_FALSE(test, tw_index_still_wanted(x, 1000, 2000));
	KUNIT_EXPECT_NULL(test, tw_index_migrate_batch(x, 0));
	KUNIT_EXPECT_EQ(test, x->nr_tab, (unsigned long)TW_MIGRATE);
	KUNIT_EXPECT_NULL(test, tw_index_migrate_batch(x, 1));
	KUNIT_EXPECT_EQ(test, x->nr_tab, 3UL * TW_MIGRATE);
	twt_check(c);

	twt_policy_upkeep(c, TW_CHUNK, &finish, &grow, &shrink);
	KUNIT_EXPECT_EQ(test, finish, 1U);
	KUNIT_EXPECT_EQ(test, grow, 1U);
	KUNIT_EXPECT_EQ(test, x->size, 166UL);
	KUNIT_EXPECT_NULL(test, x->old);
	twt_check(c);
}

/*
 * The policy driven as the device and the bench drive it: 3000 ids come
 * in batches of up to TW_CHUNK, then go (at up to TW_CHUNK per batch,
 * as reads would), then 1000 come back at TW_CHUNK a batch.  Before each
 * batch the upkeep leaves room for it, so an insert never finds the index
 * full; the table grows, and shrinks back to its smallest size once idle.
 */
static void twt_index_policy_batches(struct kunit *test)
{
	const unsigned int nr = 3000;
	struct twt_ix *c = twt_ix(test, TW_IDX_MIN, nr);
	unsigned int i = 0, k, finish = 0, grow = 0, shrink = 0, phase;
	u64 seed = twt_seed(0xba7c4);

	for (k = 0; k < nr; k++)
		c->nodes[k].id = twt_rand(&seed);
	for (phase = 0; phase < 3; phase++) {
		unsigned int end = phase == 1 ? 0 : phase ? 1000 : nr;

		while (i != end) {
			unsigned long ids = phase == 2 ? TW_CHUNK :
					    1 + twt_rand(&seed) % TW_CHUNK;

			ids = min_t(unsigned long, ids, i > end ? i - end :
				    end - i);
			twt_policy_upkeep(c, ids, &finish, &grow, &shrink);
			for (k = 0; k < ids; k++) {
				if (phase == 1)
					twt_rm(c, --i);
				else
					twt_ins(c, i++, 0);
			}
			if (!(i % 8))
				twt_check(c);
		}
		/*
		 * The last batches' upkeep sized the table for up to 2 *
		 * TW_CHUNK ids; idle, as the device's work or next batch
		 * keeps it, it shrinks to the least.
		 */
		for (k = 0; phase == 1 && k < 4 &&
		     (c->x.old || tw_index_want_size(&c->x, 0)); k++)
			twt_policy_upkeep(c, 0, &finish, &grow, &shrink);
		if (phase == 1)
			KUNIT_EXPECT_EQ(test, c->x.size,
					(unsigned long)TW_IDX_MIN);
	}
	twt_check(c);
	kunit_info(test, "%u grows, %u shrinks, %u steps finishing a resize first",
		   grow, shrink, finish);
	KUNIT_EXPECT_GT(test, grow, 10U);
	KUNIT_EXPECT_GE(test, shrink, 3U);
}

/*
 * Callers of tw_index_upkeep() that drop their lock to allocate, as the
 * device's do (tw_maintain()), interleaved at random: TWT_CALLERS of them,
 * each adding batches of up to TW_CHUNK ids of its own or taking some
 * away (as reads and cancels do), mostly adding, then mostly taking away,
 * by turns.  A step of a caller is one
 * lock hold: an upkeep step, and the batch's inserts once it is done; a
 * caller that got TW_UPKEEP_ALLOC holds the table while the others step,
 * then offers it.  Whenever the protocol says done, the batch fits: an
 * insert never finds the index without room, though tables sized for one
 * batch are taken while others wait with theirs.
 */
#define TWT_CALLERS	8
#define TWT_CALLER_IDS	600

struct twt_caller {
	unsigned int base, n;	/* its ids: nodes[base, base + n) in */
	unsigned long ids;	/* the batch under way, 0 for none */
	struct tw_ent *tab;	/* allocated, to offer */
	unsigned long size;
	bool out;		/* the batch takes ids away */
};

/* One lock hold of caller @k; returns what it did, for the counts. */
static int twt_caller_step(struct twt_ix *c, struct twt_caller *k, u64 *seed,
			   bool filling, unsigned int *counts)
{
	struct kunit *test = c->test;
	struct tw_index *x = &c->x;
	struct tw_ent *old, *prev = x->tab;
	unsigned long size, i;
	int step;

	if (k->tab) {
		if (tw_index_offer(x, k->ids, k->tab, k->size)) {
			KUNIT_ASSERT_NULL(test, c->old);
			c->old = prev;
			counts[0]++;
		} else {
			kunit_kfree(test, k->tab);
			counts[1]++;
		}
		k->tab = NULL;
		return 0;
	}
	if (!k->ids) {
		k->out = k->n && twt_rand(seed) % 8 < (filling ? 1 : 7);
		k->ids = 1 + twt_rand(seed) % TW_CHUNK;
		if (!k->out)
			k->ids = min_t(unsigned long, k->ids,
				       TWT_CALLER_IDS - k->n);
		if (!k->ids) {
			k->out = true;
			k->ids = 1 + twt_rand(seed) % TW_CHUNK;
		}
	}
	/* as the device's reads and CANCELs, for as many ids as they take */
	step = tw_index_upkeep(x, k->ids, &size, &old);
	if (old) {
		KUNIT_ASSERT_PTR_EQ(test, old, c->old);
		kunit_kfree(test, old);
		c->old = NULL;
	}
	if (step == TW_UPKEEP_ALLOC) {
		k->tab = twt_tab(test, size);
		k->size = size;
		return step;
	}
	if (step == TW_UPKEEP_MIGRATED)
		return step;
	if (k->out) {
		for (i = 0; i < k->ids && k->n; i++)
			twt_rm(c, k->base + --k->n);
	} else {
		KUNIT_ASSERT_TRUE_MSG(test, tw_index_room_for(x, k->ids),
				      "done, but %lu ids and %lu more in %lu slots",
				      x->nr, k->ids, x->size);
		for (i = 0; i < k->ids; i++)
			twt_ins(c, k->base + k->n++, 0);
	}
	k->ids = 0;
	return step;
}

static void twt_index_upkeep_interleaved(struct kunit *test)
{
	struct twt_ix *c = twt_ix(test, TW_IDX_MIN, TWT_CALLERS * TWT_CALLER_IDS);
	struct twt_caller k[TWT_CALLERS] = { };
	unsigned int counts[2] = { }, steps[3] = { }, i, j;
	u64 seed = twt_seed(0x5eb7);

	for (i = 0; i < c->nr; i++)
		c->nodes[i].id = twt_rand(&seed);
	for (j = 0; j < TWT_CALLERS; j++)
		k[j].base = j * TWT_CALLER_IDS;
	for (i = 0; i < 40000; i++) {
		/* callers holding a table come back later, mostly */
		j = twt_rand(&seed) % TWT_CALLERS;
		if (k[j].tab && twt_rand(&seed) % 4)
			continue;
		/* fill up, then empty, and again: resizes both ways */
		steps[twt_caller_step(c, &k[j], &seed, i / 2000 % 2 == 0,
				      counts)]++;
		if (!(i % 1024))
			twt_check(c);
	}
	for (j = 0; j < TWT_CALLERS; j++)
		if (k[j].tab)
			kunit_kfree(test, k[j].tab);
	twt_check(c);
	kunit_info(test, "%u done, %u migration steps, %u tables allocated: %u taken, %u let go",
		   steps[TW_UPKEEP_DONE], steps[TW_UPKEEP_MIGRATED],
		   steps[TW_UPKEEP_ALLOC], counts[0], counts[1]);
	/* the race it is about: tables let go while others' resizes ran */
	KUNIT_EXPECT_GT(test, counts[1], 100U);
	KUNIT_EXPECT_GT(test, counts[0], 100U);
	KUNIT_EXPECT_GE(test, steps[TW_UPKEEP_MIGRATED], 5U);
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
	KUNIT_CASE(twt_caller_data),
	KUNIT_CASE(twt_min_timeout),
	KUNIT_CASE(twt_budget_one),
	KUNIT_CASE(twt_budget_zero),
	KUNIT_CASE(twt_budget_pause_in_drain),
	KUNIT_CASE(twt_clock_horizon),
	KUNIT_CASE(twt_wheel_index),
	KUNIT_CASE(twt_wheel_index_random),
	KUNIT_CASE(twt_discard_positions),
	KUNIT_CASE(twt_discard_rearm),
	KUNIT_CASE(twt_pop_until_empty),
	KUNIT_CASE(twt_expire_at_once),
	KUNIT_CASE(twt_queue_random),
	KUNIT_CASE(twt_queue_module),
	KUNIT_CASE(twt_index_basic),
	KUNIT_CASE(twt_index_runs),
	KUNIT_CASE(twt_index_room_limit),
	KUNIT_CASE(twt_index_want_size),
	KUNIT_CASE(twt_index_home_key),
	KUNIT_CASE(twt_index_grow_steps),
	KUNIT_CASE(twt_index_shrink_steps),
	KUNIT_CASE(twt_index_dump_resize),
	KUNIT_CASE(twt_index_dump_cell),
	KUNIT_CASE(twt_index_dump_cell_ends),
	KUNIT_CASE(twt_index_dump_wrapped),
	KUNIT_CASE(twt_index_dump_room_one),
	KUNIT_CASE(twt_index_dump_budget),
	KUNIT_CASE(twt_index_pop),
	KUNIT_CASE(twt_index_random),
	KUNIT_CASE(twt_index_churn),
	KUNIT_CASE(twt_index_flooding),
	KUNIT_CASE(twt_ready_walk),
	KUNIT_CASE(twt_place_new),
	KUNIT_CASE(twt_set_paths),
	KUNIT_CASE(twt_detach_paths),
	KUNIT_CASE(twt_set_random),
	KUNIT_CASE(twt_index_policy),
	KUNIT_CASE(twt_index_policy_batches),
	KUNIT_CASE(twt_index_upkeep_interleaved),
	{}
};

static int twt_suite_init(struct kunit_suite *suite)
{
	u64 s = kunit_seed ?: get_random_u64();

	pr_info("twheel_core: KUnit secrets and random cases from kunit_seed=%llu\n",
		s);
	twt_secret_state = s;
	twt_suite_seed = s;
	return 0;
}

static struct kunit_suite twt_suite = {
	.name = "twheel_core",
	.suite_init = twt_suite_init,
	.test_cases = twt_cases,
};

kunit_test_suite(twt_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit suite of the twheel timing wheel and id index");
