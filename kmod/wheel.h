/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel timing wheel: the levels, their slots, the ready queue and the
 * policy of a touch, over the id index (index.h) that holds every id's
 * deadline.  No locking, no user copies and no allocation, so that the
 * same file builds in user space for unit tests, fuzzing and benchmarks;
 * the caller (the device, twheel.h) owns the lock, the memory and the clock.
 */
#ifndef _TWHEEL_WHEEL_H
#define _TWHEEL_WHEEL_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/list.h>

#include "index.h"

#define TW_LVL_BITS	6
#define TW_LVL_SIZE	BIT(TW_LVL_BITS)
#define TW_LVL_MASK	(TW_LVL_SIZE - 1)
/* 8 levels of 64 slots cover 2^48 ticks: KTIME_MAX at the smallest tick. */
#define TW_LEVELS	8
#define TW_TICKS_MAX	(1ULL << (TW_LEVELS * TW_LVL_BITS))

/* struct tw_node, the wheel's node of one id, is in index.h. */

/**
 * struct tw_wheel - hierarchical timing wheel
 * @tick_ns: tick length in ns
 * @cur: every tick <= @cur has been processed
 * @nr_armed: armed nodes (in slots or in @drain)
 * @nr_ready: events queued: nodes from @head up to @tail, @tail excluded
 *	(written with WRITE_ONCE(): poll() reads it without the lock)
 * @reslots: nodes moved from one slot to another (monotonic)
 * @late_max: largest expired - deadline of a node expired by
 *	tw_wheel_advance(), in ns (ids queued at once by their caller are not
 *	the wheel's lateness)
 * @pending: per level, bit s set when slot s may hold nodes
 * @drain: nodes taken out of a slot that is due, not yet re-slotted
 * @head: the oldest queued event, or @tail when none is queued
 * @tail: the ready queue's sentinel: a spare node, in no index entry,
 *	that the next event is written into
 * @slots: the slots
 * @idx: the index that holds every node's id, deadline and state
 *
 * A node with expiry tick e (the first tick boundary >= its deadline) sits
 * at the level of the highest bit where e and @cur differ, in the slot given
 * by e's digit at that level.  The slot comes due when @cur reaches the
 * start of that slot; each of its nodes is then looked up in @idx for the
 * id's current deadline, and re-slotted relative to the new @cur, one level
 * lower at least, or expired if e <= @cur.  So a node is never expired
 * early and never late by more than the tick it falls in, and a touch that
 * moves a deadline later writes the index entry alone.
 *
 * The ready queue is singly linked from @head to the sentinel @tail, which
 * lets a queued node be taken out of the middle in O(1) without a back
 * link: the node takes over the contents of the node after it, and that
 * node's memory is what is freed or re-armed (tw_wheel_discard()).  An
 * event is queued by writing it into the sentinel and making the expired
 * node the new sentinel (tw_wheel_expire()).  Either way the index entry
 * of a queued id is kept pointing at the node that holds its event.
 * Outside the core the queue is walked with tw_ready_first(),
 * tw_ready_next() and tw_ready_since(), and its sentinel is
 * tw_wheel_sentinel().
 */
struct tw_wheel {
	u64 tick_ns;
	u64 cur;
	unsigned long nr_armed;
	unsigned long nr_ready;
	u64 reslots;
	u64 late_max;
	u64 pending[TW_LEVELS];
	struct hlist_head drain;
	struct tw_node *head;
	struct tw_node *tail;
	struct hlist_head slots[TW_LEVELS][TW_LVL_SIZE];
	struct tw_index *idx;
};

void tw_wheel_init(struct tw_wheel *w, u64 tick_ns, u64 now,
		   struct tw_index *idx, struct tw_node *sentinel);
void tw_wheel_add(struct tw_wheel *w, struct tw_node *n, u64 deadline);
void tw_wheel_del(struct tw_wheel *w, struct tw_node *n);
void tw_wheel_expire(struct tw_wheel *w, struct tw_ent *e, u64 now);
struct tw_node *tw_wheel_discard(struct tw_wheel *w, struct tw_ent *e);
struct tw_node *tw_wheel_pop(struct tw_wheel *w);
void tw_wheel_catch_up(struct tw_wheel *w, u64 now);
bool tw_wheel_next(const struct tw_wheel *w, u64 *tick);
bool tw_wheel_advance(struct tw_wheel *w, u64 now, unsigned int *budget);
u64 tw_ticks(const struct tw_wheel *w, u64 ns);

/* What tw_wheel_set() and tw_wheel_place() did, as bits of their return */
#define TW_SET_LAZY		BIT(0)	/* the entry's deadline alone moved */
#define TW_SET_DISCARDED	BIT(1)	/* the id's queued event was discarded */
#define TW_SET_EXPIRED		BIT(2)	/* the id's event was queued at once */

bool tw_wheel_detach(struct tw_wheel *w, struct tw_ent *e);
unsigned int tw_wheel_place(struct tw_wheel *w, struct tw_ent *e, u64 deadline,
			    u64 now);
unsigned int tw_wheel_move(struct tw_wheel *w, struct tw_ent *e, u64 deadline,
			   u64 now);

/**
 * tw_wheel_set() - move a present id to a new deadline: a touch or an arm
 * @w: the wheel
 * @e: the id's entry, from tw_index_find(): armed or queued
 * @deadline: the id's new deadline in ns; its tick must be below
 *	TW_TICKS_MAX
 * @now: current time in ns
 *
 * The fast path, inline: an armed id whose deadline moves later, and not
 * to a time already due, has its entry's deadline written and nothing
 * else; its node stays in its slot, and the wheel re-slots it by the entry
 * when that slot comes due.  Any other move takes the id off the wheel,
 * or discards its queued event, and places it again (tw_wheel_move()).
 * The index does not change, so @e stays valid; afterwards e->node is the
 * node that holds the id's data, armed or queued, for the caller to write
 * new data into.
 *
 * Return: TW_SET_LAZY for the fast path; else TW_SET_DISCARDED if a queued
 * event was discarded, and TW_SET_EXPIRED if the id's event was queued at
 * once (both may be set).
 */
static inline unsigned int tw_wheel_set(struct tw_wheel *w, struct tw_ent *e,
					u64 deadline, u64 now)
{
	if (!tw_ent_queued(e) && deadline >= e->deadline && deadline > now) {
		e->deadline = deadline;
		return TW_SET_LAZY;
	}
	return tw_wheel_move(w, e, deadline, now);
}

/**
 * tw_wheel_sentinel() - the node a wheel holds besides its ids' nodes
 * @w: the wheel
 *
 * The ready queue's sentinel, in no index entry; which node it is changes
 * as events are queued and discarded.  The caller frees it with the wheel,
 * or hands it to tw_wheel_init() again to start the wheel over.
 *
 * Return: the node.
 */
static inline struct tw_node *tw_wheel_sentinel(const struct tw_wheel *w)
{
	return w->tail;
}

/**
 * tw_ready_first() - the oldest event of the ready queue
 * @w: the wheel
 *
 * With tw_ready_next(), a walk of the queue, oldest event first, that
 * must not change it:
 * for (n = tw_ready_first(w); n; n = tw_ready_next(w, n)).
 *
 * Return: the node that holds it, or NULL when no event is queued.
 */
static inline struct tw_node *tw_ready_first(const struct tw_wheel *w)
{
	return w->head != w->tail ? w->head : NULL;
}

/**
 * tw_ready_next() - the event queued after another
 * @w: the wheel
 * @n: a node that holds an event
 *
 * Return: the node that holds the next event, or NULL after the newest.
 */
static inline struct tw_node *tw_ready_next(const struct tw_wheel *w,
					    const struct tw_node *n)
{
	return n->next != w->tail ? n->next : NULL;
}

/**
 * tw_ready_mark() - mark the end of the ready queue
 * @w: the wheel
 *
 * The mark is the node the next event will be written into.  It stays
 * valid for tw_ready_since() as long as only tw_wheel_expire() and
 * tw_wheel_advance() change the queue (a discard or a pop may free it).
 *
 * Return: the mark.
 */
static inline struct tw_node *tw_ready_mark(const struct tw_wheel *w)
{
	return w->tail;
}

/**
 * tw_ready_since() - the first event queued since a mark
 * @w: the wheel
 * @mark: from tw_ready_mark(), still valid
 *
 * tw_ready_next() goes on from it to the newest event: the walk visits
 * exactly the events queued since the mark was taken.
 *
 * Return: the node that holds it, or NULL if none was queued.
 */
static inline struct tw_node *tw_ready_since(const struct tw_wheel *w,
					     struct tw_node *mark)
{
	return mark != w->tail ? mark : NULL;
}

#endif /* _TWHEEL_WHEEL_H */
