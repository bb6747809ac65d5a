/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel core: the timing wheel and the id index, with no locking, no user
 * copies and no allocation, so that the same file builds in user space for
 * unit tests, fuzzing and benchmarks.  The caller (twheel_main.c) owns the
 * lock, the memory and the clock.
 */
#ifndef _TWHEEL_CORE_H
#define _TWHEEL_CORE_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/limits.h>
#include <linux/list.h>

#define TW_LVL_BITS	6
#define TW_LVL_SIZE	BIT(TW_LVL_BITS)
#define TW_LVL_MASK	(TW_LVL_SIZE - 1)
/* 8 levels of 64 slots cover 2^48 ticks: KTIME_MAX at the smallest tick. */
#define TW_LEVELS	8
#define TW_TICKS_MAX	(1ULL << (TW_LEVELS * TW_LVL_BITS))

/*
 * Index: TW_IDX_MIN to TW_IDX_MAX slots, held between 3/4 and 9/10 full.
 * 2^33 slots hold 2^32 ids (TWHEEL_MAX_IDS_LIMIT) below 9/10, so the
 * index never refuses an id a cap allows; on 32 bits memory runs out first.
 */
#define TW_IDX_MIN	64
#define TW_IDX_MAX	((unsigned long)(BIT_ULL(33) < ULONG_MAX ? BIT_ULL(33) : \
						 ULONG_MAX))
/* Random words that key an index (tw_index_init(), tw_key()). */
#define TW_SECRET_WORDS	3

/*
 * Batches: how much one bounded step of work does.  The device holds its
 * lock for one batch at a time (see the locking rules in twheel_main.c),
 * the index migrates in proportion to the batch that may add ids
 * (tw_index_migrate_batch()), and the in-process bench drives the core in
 * the same batches.
 */
#define TW_CHUNK	64	/* ids touched or cancelled per batch */
#define TW_ARM_CHUNK	16	/* ARM entries per batch */
#define TW_EXPIRE_BATCH	1024	/* nodes advanced, or entries migrated, per step */
#define TW_MIGRATE	16	/* index entries migrated per id of a batch */

/**
 * struct tw_node - one id, armed or expired
 * @slot: while armed: link in a wheel slot or in the drain list
 * @next: while queued: the next node of the ready queue
 * @expired: while queued: the clock when the event was queued, in ns
 * @id: the user's id
 * @data: the user's payload, reported with the id's event
 *
 * 32 bytes on 64-bit, whether or not the id carries data.  A node holds no
 * deadline: the id's deadline, and whether it is armed or queued
 * (TW_ENT_QUEUED), are in its index entry, which the wheel looks up when
 * the node's slot comes due.  The ready queue is singly linked, so that a
 * queued node needs no more room than an armed one; see struct tw_wheel.
 */
struct tw_node {
	union {
		struct hlist_node slot;
		struct {
			struct tw_node *next;
			u64 expired;
		};
	};
	u64 id;
	u64 data;
};

/**
 * struct tw_ent - an index entry: one id, its deadline and its node
 * @id: the id
 * @deadline: the id's deadline in ns in bits 0..62 (the node keeps no
 *	copy); bit 63 (TW_ENT_QUEUED) is set while its event is queued
 * @node: the id's node: on the wheel while armed, on the ready queue
 *	while queued; NULL marks an empty slot
 *
 * A touch that only moves an armed id's deadline later finds the entry and
 * writes @deadline: one 24-byte entry, within one page nearly always.
 */
struct tw_ent {
	u64 id;
	u64 deadline;
	struct tw_node *node;
};

#define TW_ENT_QUEUED	BIT_ULL(63)

/**
 * tw_ent_deadline() - an entry's deadline
 * @e: the entry
 * Return: the deadline in ns, without TW_ENT_QUEUED.
 */
static inline u64 tw_ent_deadline(const struct tw_ent *e)
{
	return e->deadline & ~TW_ENT_QUEUED;
}

/**
 * tw_ent_queued() - whether an entry's event is queued
 * @e: the entry
 * Return: true once the id expired, until its event is read or discarded.
 */
static inline bool tw_ent_queued(const struct tw_ent *e)
{
	return e->deadline & TW_ENT_QUEUED;
}

/**
 * struct tw_index - id -> entry hash table, iterable in key order
 * @tab: the table: @size slots
 * @old: while resizing: the previous table (@old_size slots)
 * @size: slots in @tab, any number >= TW_IDX_MIN (not a power of two)
 * @old_size: slots in @old
 * @nr_tab: entries in @tab
 * @nr_old: entries in @old
 * @mpos: while resizing: slots of @old below @mpos are empty for good
 * @nr: entries in the index (@nr_tab + @nr_old)
 * @mul: the secret: TW_SECRET_WORDS odd multipliers (tw_key())
 * @inv: their inverses modulo 2^64 (tw_key_id())
 *
 * Linear probing with ordered ("Robin Hood") insertion: the home slot of a
 * key is mulhi(key, size), which grows with the key, and the entries of a
 * table sit in key order, circularly, each at or after its home with no
 * empty slot in between.  A lookup reads a few consecutive entries, and a
 * table can be walked in key order from any key.  The key of an id is
 * tw_key(), a bijection keyed with a secret drawn when the index is made,
 * so keys never collide and no choice of ids, structured or adversarial,
 * crowds their homes into one run (see tw_key()).
 *
 * Resizing is incremental: the caller allocates the new table and each
 * call to tw_index_migrate() moves a bounded number of entries, in slot
 * order, out of @old.  New ids go to @tab; a lookup tries @tab, then @old.
 */
struct tw_index {
	struct tw_ent *tab;
	struct tw_ent *old;
	unsigned long size;
	unsigned long old_size;
	unsigned long nr_tab;
	unsigned long nr_old;
	unsigned long mpos;
	unsigned long nr;
	u64 mul[TW_SECRET_WORDS];
	u64 inv[TW_SECRET_WORDS];
};

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

/**
 * tw_key() - the index key of an id
 * @x: the index, whose secret keys the mix
 * @id: the id
 *
 * The shape of MurmurHash3's 64-bit finaliser with secret odd multipliers:
 * multiply, fold the high bits down (xorshift), multiply, fold, multiply.
 * Each step is a bijection on 64 bits, so keys never collide, and the home
 * slot (the key's top bits) depends on every bit of the id.  With a fixed
 * multiplier anyone could choose ids whose keys are 0, 1, 2, ...: one home
 * slot and a run as long as the table.  With secret ones no set of ids
 * chosen without the secret gathers in fewer homes than random ids do.
 * Two steps are not enough: after multiply, fold, multiply, the ids i << j
 * (j >= 32) are still an arithmetic progression times a constant, and for
 * some secrets such a progression probes 4 to 22 times longer than random
 * ids; the second fold breaks the progression (the KUnit case
 * twt_index_flooding measures 57 families of structured ids against
 * random ones).  tw_key_id() undoes
 * it, so a test can place an id at any key.  A walk in key order
 * (tw_index_dump()) is in the order of this fd's secret; the dumped ids
 * restore on any fd.
 *
 * Return: the key.
 */
static inline u64 tw_key(const struct tw_index *x, u64 id)
{
	u64 k = id * x->mul[0];

	k ^= k >> 32;
	k *= x->mul[1];
	k ^= k >> 29;
	return k * x->mul[2];
}

/**
 * tw_key_id() - the id of a key: tw_key() undone
 * @x: the index
 * @key: the key
 *
 * Return: the id whose key is @key.
 */
static inline u64 tw_key_id(const struct tw_index *x, u64 key)
{
	u64 k = key * x->inv[2];

	k ^= k >> 29 ^ k >> 58;		/* undoes k ^= k >> 29 */
	k *= x->inv[1];
	k ^= k >> 32;
	return k * x->inv[0];
}

/**
 * tw_index_fits() - whether a number of ids fits a table below its grow mark
 * @ids: the ids, those about to be added included
 * @size: slots in the table
 *
 * The one statement of the 9/10 rule: tw_index_want_size() grows a table
 * the ids would fill past it, and the caller keeps or finishes a resize by
 * it.
 *
 * Return: true if @ids fill at most 9/10 of @size slots.
 */
static inline bool tw_index_fits(u64 ids, unsigned long size)
{
	return ids * 10 <= (u64)size * 9;
}

void tw_index_init(struct tw_index *x, struct tw_ent *tab, unsigned long size,
		   const u64 secret[TW_SECRET_WORDS]);
struct tw_ent *tw_index_find(const struct tw_index *x, u64 id);
bool tw_index_room(const struct tw_index *x);
bool tw_index_room_for(const struct tw_index *x, u64 ids);
struct tw_ent *tw_index_insert(struct tw_index *x, struct tw_node *n,
			       u64 deadline);
void tw_index_remove(struct tw_index *x, struct tw_ent *e);
unsigned long tw_index_want_size(const struct tw_index *x, unsigned long extra);
bool tw_index_finish_first(const struct tw_index *x, unsigned long ids);
bool tw_index_still_wanted(const struct tw_index *x, unsigned long ids,
			   unsigned long size);
void tw_index_start_resize(struct tw_index *x, struct tw_ent *tab,
			   unsigned long size);
struct tw_ent *tw_index_migrate(struct tw_index *x, unsigned long entries);
struct tw_ent *tw_index_migrate_batch(struct tw_index *x, unsigned long ids);

/* What tw_index_upkeep() leaves the caller to do. */
enum {
	TW_UPKEEP_DONE,		/* room for the batch */
	TW_UPKEEP_MIGRATED,	/* a step made; call again (may relock first) */
	TW_UPKEEP_ALLOC,	/* allocate the table, tw_index_offer() it */
};

int tw_index_upkeep(struct tw_index *x, unsigned long ids,
		    unsigned long *size, struct tw_ent **old);
bool tw_index_offer(struct tw_index *x, unsigned long ids, struct tw_ent *tab,
		    unsigned long size);
unsigned long tw_index_dump(const struct tw_index *x, u64 *cursor,
			    struct tw_ent *out, unsigned long room,
			    unsigned long *budget);
struct tw_node *tw_index_pop(struct tw_index *x, unsigned long *pos);

/* Cursor value that ends a dump: one past the last cell (keys >> 1). */
#define TW_CURSOR_END	BIT_ULL(63)

/**
 * tw_cursor_key() - the first key a dump resuming at a cursor may list
 * @cursor: a cursor of tw_index_dump(), not TW_CURSOR_END
 *
 * Below TW_CURSOR_END a cursor is a cell: both its keys are yet to come.
 * Above, TW_CURSOR_END + 1 + c is the odd key of cell c, whose even key
 * was listed alone by a call with room for one entry.  Every 64-bit value
 * is a cursor.
 *
 * Return: the key, 2c or 2c + 1.
 */
static inline u64 tw_cursor_key(u64 cursor)
{
	if (cursor < TW_CURSOR_END)
		return cursor << 1;
	return (cursor - TW_CURSOR_END - 1) << 1 | 1;
}

/**
 * tw_cursor_passed() - whether a dump at a cursor has gone past a key
 * @cursor: a cursor of tw_index_dump(), TW_CURSOR_END included
 * @key: a key
 *
 * Orders cursors for the tests: a dump only moves forward.
 *
 * Return: true if a dump resuming at @cursor will not list @key.
 */
static inline bool tw_cursor_passed(u64 cursor, u64 key)
{
	return cursor == TW_CURSOR_END || key < tw_cursor_key(cursor);
}

#endif /* _TWHEEL_CORE_H */
