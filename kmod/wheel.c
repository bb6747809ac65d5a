// SPDX-License-Identifier: GPL-2.0
/*
 * twheel timing wheel: a hierarchical wheel of TW_LEVELS (8) levels of
 * TW_LVL_SIZE (64) slots, in ticks of w->tick_ns.
 *
 * Nothing here locks, sleeps, allocates or touches user memory; the caller
 * serialises every call on one wheel (see the locking rules in
 * twheel.h).  The ids' deadlines live in the index (index.c), which
 * the wheel reads in two places: when a due slot's node is re-slotted or
 * expired (tw_wheel_advance()), and when a discard moves an event to
 * another node (tw_wheel_discard()).
 *
 * w->cur is the last tick processed.  A node's expiry tick e is the first
 * tick boundary at or after its deadline (tw_ticks()), so that processing
 * tick e never expires it early.  The node goes to the level of the
 * highest 6-bit digit in which e and cur differ, into the slot given by
 * e's digit at that level (tw_slot()); a node whose tick is processed
 * already goes to the drain list instead.  A slot of level l spans 64^l
 * ticks and comes due when cur reaches its start: each of its nodes is
 * then looked up in the index for the id's deadline now and re-slotted,
 * at a lower level at least, or expired.  Unlike kernel/time/timer.c,
 * which expires a timer when its coarse bucket comes due, every node
 * cascades down to level 0: the level sets how coarsely a node is slotted
 * and how often it moves (at most once per level), never how late it
 * expires: at most one tick, at any level.
 *
 * A timeout of t ticks (e - cur) sits at level l for 64^l <= t < 64^(l+1),
 * or one level higher when adding t to cur carries into the next digit.
 * With the default tick, TWHEEL_DEFAULT_TICK_NS (1 ms):
 *
 * Level  Granularity (slot width)   Range (timeout t, ticks)   up to
 *   0        1 tick     1 ms          1 .. 2^6 - 1              64 ms
 *   1      2^6 ticks   64 ms        2^6 .. 2^12 - 1          4.096 s
 *   2     2^12 ticks   4.096 s     2^12 .. 2^18 - 1        4 min 22 s
 *   3     2^18 ticks   4 min 22 s  2^18 .. 2^24 - 1            4.66 h
 *   4     2^24 ticks   4.66 h      2^24 .. 2^30 - 1        12.4 days
 *   5     2^30 ticks   12.4 days   2^30 .. 2^36 - 1        2.18 years
 *   6     2^36 ticks   2.18 years  2^36 .. 2^42 - 1         139 years
 *   7     2^42 ticks   139 years   2^42 .. 2^48 - 1        8919 years
 *
 * The columns in ticks are fixed; the times scale with the tick, which a
 * wheel sets (TWHEEL_IOC_SET_CONFIG) from TWHEEL_TICK_MIN_NS (100 us: a tenth
 * of the times above) to TWHEEL_TICK_MAX_NS (1 h: 3.6 million times
 * them).  The 8 levels hold TW_TICKS_MAX = 2^48 ticks, 892 years at the
 * smallest tick, so every deadline up to KTIME_MAX (292 years) has a slot;
 * at 1 ms KTIME_MAX is 2^43.07 ticks, on level 7.
 *
 * Per level, the bitmap w->pending[l] has bit s set while slot s may hold
 * nodes (cleared once its last node leaves), so the next slot
 * due is found in at most TW_LEVELS word scans (tw_next_slot()).  Expired
 * nodes join the ready queue (struct tw_wheel), which the caller drains.
 */
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include "wheel.h"

/**
 * tw_ticks() - the expiry tick of a deadline
 * @w: the wheel
 * @ns: deadline in ns
 *
 * Return: the first tick boundary at or after @ns, so that processing that
 * tick never expires a node early.
 */
u64 tw_ticks(const struct tw_wheel *w, u64 ns)
{
	u64 rem;
	u64 q = div64_u64_rem(ns, w->tick_ns, &rem);

	return q + (rem != 0);
}

/**
 * tw_wheel_init() - set up an empty wheel
 * @w: the wheel, zeroed or previously emptied
 * @tick_ns: tick length in ns
 * @now: current time in ns
 * @idx: the index of the wheel's ids
 * @sentinel: a node that belongs to the wheel from now on, as the ready
 *	queue's sentinel, until the caller frees w->tail with the wheel
 */
void tw_wheel_init(struct tw_wheel *w, u64 tick_ns, u64 now,
		   struct tw_index *idx, struct tw_node *sentinel)
{
	unsigned int l, s;

	w->tick_ns = tick_ns;
	w->cur = div64_u64(now, tick_ns);
	w->idx = idx;
	w->nr_armed = 0;
	WRITE_ONCE(w->nr_ready, 0);
	memset(w->pending, 0, sizeof(w->pending));
	INIT_HLIST_HEAD(&w->drain);
	sentinel->next = NULL;
	w->head = sentinel;
	w->tail = sentinel;
	for (l = 0; l < TW_LEVELS; l++)
		for (s = 0; s < TW_LVL_SIZE; s++)
			INIT_HLIST_HEAD(&w->slots[l][s]);
}

/* Put @n, with expiry tick @e > w->cur, into its slot. */
static void tw_slot(struct tw_wheel *w, struct tw_node *n, u64 e)
{
	unsigned int lvl = (fls64(e ^ w->cur) - 1) / TW_LVL_BITS;
	unsigned int s = (e >> (lvl * TW_LVL_BITS)) & TW_LVL_MASK;

	hlist_add_head(&n->slot, &w->slots[lvl][s]);
	w->pending[lvl] |= 1ULL << s;
}

/**
 * tw_wheel_add() - arm a node that is on no list
 * @w: the wheel
 * @n: the node, whose index entry holds @deadline
 * @deadline: the id's deadline in ns; its tick must be below TW_TICKS_MAX
 *
 * A node whose tick is already processed goes to the drain list, so the
 * next tw_wheel_advance() expires it.
 */
void tw_wheel_add(struct tw_wheel *w, struct tw_node *n, u64 deadline)
{
	u64 e = tw_ticks(w, deadline);

	w->nr_armed++;
	if (e <= w->cur)
		hlist_add_head(&n->slot, &w->drain);
	else
		tw_slot(w, n, e);
}

/**
 * tw_wheel_del() - disarm an armed node
 * @w: the wheel
 * @n: the node, armed
 *
 * When @n was the last node of its slot, the slot's pending bit is cleared,
 * so an emptied slot never wakes the wheel.
 */
void tw_wheel_del(struct tw_wheel *w, struct tw_node *n)
{
	struct hlist_node **pprev = n->slot.pprev;
	bool last = !n->slot.next;
	unsigned long p = (unsigned long)pprev;
	unsigned long base = (unsigned long)&w->slots[0][0];

	hlist_del(&n->slot);
	w->nr_armed--;
	/* The first node's pprev points at its head: find the slot from it. */
	if (last && p >= base && p < base + sizeof(w->slots)) {
		unsigned long i = (p - base) / sizeof(struct hlist_head);

		w->pending[i / TW_LVL_SIZE] &= ~(1ULL << (i % TW_LVL_SIZE));
	}
}

/**
 * tw_wheel_expire() - queue the event of an id whose node is on no list
 * @w: the wheel
 * @e: the id's index entry, not queued
 * @now: current time in ns, >= the entry's deadline
 *
 * The event (id, data, @now) is written into the sentinel, which joins the
 * queue, and e->node becomes the new sentinel: afterwards e->node is the
 * former sentinel, and e is marked TW_ENT_QUEUED.  The index itself does
 * not change, so @e stays valid.
 */
void tw_wheel_expire(struct tw_wheel *w, struct tw_ent *e, u64 now)
{
	struct tw_node *n = e->node, *s = w->tail;

	s->id = n->id;
	s->data = n->data;
	s->expired = max_t(u64, now, 1);
	s->next = n;
	n->next = NULL;
	w->tail = n;
	e->node = s;
	e->deadline |= TW_ENT_QUEUED;
	WRITE_ONCE(w->nr_ready, w->nr_ready + 1);
}

/**
 * tw_wheel_discard() - take a queued event off the ready queue
 * @w: the wheel
 * @e: the id's index entry, queued
 *
 * The node that holds the event takes over the contents of the node after
 * it (whose index entry is updated), or becomes the sentinel if that node
 * is the sentinel; the node after it is set free.  The index itself does
 * not change, so @e stays valid.
 *
 * Return: a node on no list with the discarded event's id and data, now
 * e->node (TW_ENT_QUEUED cleared): the caller arms it again or frees it.
 */
struct tw_node *tw_wheel_discard(struct tw_wheel *w, struct tw_ent *e)
{
	struct tw_node *d = e->node, *x = d->next;
	u64 id = d->id, data = d->data;

	if (x == w->tail) {
		d->next = NULL;
		w->tail = d;
	} else {
		tw_index_find(w->idx, x->id)->node = d;
		d->next = x->next;
		d->expired = x->expired;
		d->id = x->id;
		d->data = x->data;
	}
	x->id = id;
	x->data = data;
	e->node = x;
	e->deadline &= ~TW_ENT_QUEUED;
	WRITE_ONCE(w->nr_ready, w->nr_ready - 1);
	return x;
}

/**
 * tw_wheel_pop() - take the oldest event off the ready queue
 * @w: the wheel, with an event queued (w->nr_ready)
 *
 * Return: the node that held it, on no list; its index entry still points
 * at it and is still marked TW_ENT_QUEUED, for the caller to remove.
 */
struct tw_node *tw_wheel_pop(struct tw_wheel *w)
{
	struct tw_node *n = w->head;

	w->head = n->next;
	WRITE_ONCE(w->nr_ready, w->nr_ready - 1);
	return n;
}

/**
 * tw_wheel_detach() - take an id off the wheel or the ready queue
 * @w: the wheel
 * @e: the id's entry: armed or queued
 *
 * An armed id's node leaves its slot; a queued id's event is discarded
 * (tw_wheel_discard()).  Either way e->node, which holds the id and its
 * data, is then on no list: the caller places it again (tw_wheel_place())
 * or removes the entry and frees the node.
 *
 * Return: true if a queued event was discarded.
 */
bool tw_wheel_detach(struct tw_wheel *w, struct tw_ent *e)
{
	if (tw_ent_queued(e)) {
		tw_wheel_discard(w, e);
		return true;
	}
	tw_wheel_del(w, e->node);
	return false;
}

/**
 * tw_wheel_place() - give an id whose node is on no list its deadline
 * @w: the wheel
 * @e: the id's entry, not queued: just inserted (tw_index_insert()) or
 *	detached (tw_wheel_detach())
 * @deadline: the id's deadline in ns; its tick must be below TW_TICKS_MAX
 * @now: current time in ns
 *
 * A deadline already due (at or before @now) queues the id's event at
 * once, behind what is queued, with the expiry clock @now
 * (tw_wheel_expire(): e->node becomes the node that holds the event);
 * a later one arms the node (tw_wheel_add()).  The index does not change,
 * so @e stays valid.
 *
 * Return: TW_SET_EXPIRED if the event was queued, else 0.
 */
unsigned int tw_wheel_place(struct tw_wheel *w, struct tw_ent *e, u64 deadline,
			    u64 now)
{
	e->deadline = deadline;
	if (deadline <= now) {
		tw_wheel_expire(w, e, now);
		return TW_SET_EXPIRED;
	}
	tw_wheel_add(w, e->node, deadline);
	return 0;
}

/**
 * tw_wheel_move() - take a present id off its list and place it again
 * @w: the wheel
 * @e: the id's entry, from tw_index_find(): armed or queued
 * @deadline: the id's new deadline in ns; its tick must be below
 *	TW_TICKS_MAX
 * @now: current time in ns
 *
 * tw_wheel_detach(), then tw_wheel_place(): what tw_wheel_set() does when
 * its fast path does not apply.
 *
 * Return: TW_SET_DISCARDED if a queued event was discarded, and
 * TW_SET_EXPIRED if the id's event was queued at once.
 */
unsigned int tw_wheel_move(struct tw_wheel *w, struct tw_ent *e, u64 deadline,
			   u64 now)
{
	unsigned int did = tw_wheel_detach(w, e) ? TW_SET_DISCARDED : 0;

	return did | tw_wheel_place(w, e, deadline, now);
}

/*
 * The next slot that comes due.  Every pending slot of a level lies above
 * cur's digit at that level, and any pending slot of a lower level comes
 * due before any of a higher one, so the answer is the lowest pending slot
 * of the lowest level that has one.
 */
static bool tw_next_slot(const struct tw_wheel *w, u64 *tick,
			 unsigned int *lvl, unsigned int *slot)
{
	unsigned int l;

	for (l = 0; l < TW_LEVELS; l++) {
		unsigned int shift = l * TW_LVL_BITS;
		unsigned int s;

		if (!w->pending[l])
			continue;
		s = __ffs64(w->pending[l]);
		*tick = ((w->cur >> (shift + TW_LVL_BITS)) <<
			 (shift + TW_LVL_BITS)) | ((u64)s << shift);
		*lvl = l;
		*slot = s;
		return true;
	}
	return false;
}

/**
 * tw_wheel_next() - when the wheel next has work
 * @w: the wheel
 * @tick: out: the tick at which tw_wheel_advance() has work to do
 *
 * Return: false if nothing is armed.
 */
bool tw_wheel_next(const struct tw_wheel *w, u64 *tick)
{
	unsigned int l, s;

	if (!hlist_empty(&w->drain)) {
		*tick = w->cur;
		return true;
	}
	return tw_next_slot(w, tick, &l, &s);
}

/**
 * tw_wheel_catch_up() - move an idle wheel's notion of now forward
 * @w: the wheel
 * @now: current time in ns
 *
 * When no slot is due up to @now, @cur can jump to now's tick without
 * processing anything; new nodes are then slotted relative to the real
 * time, which keeps them at the lowest level their timeout allows.
 */
void tw_wheel_catch_up(struct tw_wheel *w, u64 now)
{
	u64 nt = div64_u64(now, w->tick_ns);
	u64 t;

	if (nt <= w->cur || !hlist_empty(&w->drain))
		return;
	if (tw_wheel_next(w, &t) && t <= nt)
		return;
	w->cur = nt;
}

/**
 * tw_wheel_advance() - process the wheel up to @now
 * @w: the wheel
 * @now: current time in ns
 * @budget: in/out: how many nodes may still be moved; decremented
 *
 * Slots are processed in time order, one slot at a time, so events are
 * queued in deadline order up to one tick.  Each node taken from a due
 * slot is looked up in the index for its deadline; expired ones are queued
 * (tw_wheel_expire()) with their expiry clock @now.
 *
 * Return: true if work that is due remains because @budget ran out.
 */
bool tw_wheel_advance(struct tw_wheel *w, u64 now, unsigned int *budget)
{
	u64 nt = div64_u64(now, w->tick_ns);
	unsigned int lvl, s;
	u64 t;

	while (*budget) {
		struct tw_ent *ent;
		struct tw_node *n;
		u64 e, deadline;

		if (hlist_empty(&w->drain)) {
			if (!tw_next_slot(w, &t, &lvl, &s) || t > nt) {
				tw_wheel_catch_up(w, now);
				return false;
			}
			w->cur = t;
			hlist_move_list(&w->slots[lvl][s], &w->drain);
			w->pending[lvl] &= ~(1ULL << s);
			continue;
		}
		n = hlist_entry(w->drain.first, struct tw_node, slot);
		hlist_del(&n->slot);
		(*budget)--;
		ent = tw_index_find(w->idx, n->id);
		deadline = tw_ent_deadline(ent);
		e = tw_ticks(w, deadline);
		if (e > w->cur) {
			tw_slot(w, n, e);
			w->reslots++;
			continue;
		}
		w->nr_armed--;
		w->late_max = max(w->late_max, now - deadline);
		tw_wheel_expire(w, ent, now);
	}
	return tw_wheel_next(w, &t) && t <= nt;
}
