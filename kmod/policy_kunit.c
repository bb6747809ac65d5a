// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_policy": the callers' policies: tw_wheel_set(), place
 * and detach, and the index's upkeep before a batch.
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
 * table past 9/10; a batch migrates TW_MIGRATE_PER_ID entries per id it may add,
 * and TW_MIGRATE_PER_ID more.  Then a batch of TW_HOLD_IDS ids during a resize:
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
	KUNIT_EXPECT_EQ(test, x->nr_tab, (unsigned long)TW_MIGRATE_PER_ID);
	KUNIT_EXPECT_NULL(test, tw_index_migrate_batch(x, 1));
	KUNIT_EXPECT_EQ(test, x->nr_tab, 3UL * TW_MIGRATE_PER_ID);
	twt_check(c);

	twt_policy_upkeep(c, TW_HOLD_IDS, &finish, &grow, &shrink);
	KUNIT_EXPECT_EQ(test, finish, 1U);
	KUNIT_EXPECT_EQ(test, grow, 1U);
	KUNIT_EXPECT_EQ(test, x->size, 166UL);
	KUNIT_EXPECT_NULL(test, x->old);
	twt_check(c);
}

/*
 * The policy driven as the device and the bench drive it: 3000 ids come
 * in batches of up to TW_HOLD_IDS, then go (at up to TW_HOLD_IDS per batch,
 * as reads would), then 1000 come back at TW_HOLD_IDS a batch.  Before each
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
			unsigned long ids = phase == 2 ? TW_HOLD_IDS :
					    1 + twt_rand(&seed) % TW_HOLD_IDS;

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
		 * TW_HOLD_IDS ids; idle, as the device's work or next batch
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
 * each adding batches of up to TW_HOLD_IDS ids of its own or taking some
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
		k->ids = 1 + twt_rand(seed) % TW_HOLD_IDS;
		if (!k->out)
			k->ids = min_t(unsigned long, k->ids,
				       TWT_CALLER_IDS - k->n);
		if (!k->ids) {
			k->out = true;
			k->ids = 1 + twt_rand(seed) % TW_HOLD_IDS;
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

static struct kunit_case twt_policy_cases[] = {
	KUNIT_CASE(twt_place_new),
	KUNIT_CASE(twt_set_paths),
	KUNIT_CASE(twt_detach_paths),
	KUNIT_CASE(twt_set_random),
	KUNIT_CASE(twt_index_policy),
	KUNIT_CASE(twt_index_policy_batches),
	KUNIT_CASE(twt_index_upkeep_interleaved),
	{}
};

static struct kunit_suite twt_policy_suite = {
	.name = "twheel_policy",
	.suite_init = twt_suite_init,
	.test_cases = twt_policy_cases,
};

kunit_test_suite(twt_policy_suite);
