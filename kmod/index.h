/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel id index: id -> entry (deadline, state, node), iterable in key
 * order.  No locking, no user copies and no allocation, so that the same
 * file builds in user space for unit tests, fuzzing and benchmarks; the
 * caller owns the lock and the memory.  It uses nothing of the wheel
 * (wheel.h), which looks ids up in it.
 */
#ifndef _TWHEEL_INDEX_H
#define _TWHEEL_INDEX_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/limits.h>
#include <linux/list.h>

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
 * Budgets per hold: the most one hold of a wheel's lock does, shared by the
 * index, the device and the in-process bench, which drives the core in the
 * same holds (the device's own are TW_HOLD_* of twheel.h, file.c and
 * ioctl.c; see the locking rules in twheel.h).  A hold of a write() or a
 * CANCEL takes at most TW_HOLD_IDS ids, one of an ARM TW_HOLD_ARMS
 * entries: the most it may add, what it hands tw_index_upkeep(); the
 * index migrates TW_MIGRATE_PER_ID entries for each of them
 * (tw_index_migrate_batch()), or TW_HOLD_NODES a hold when a resize must
 * finish first.  A hold of expiry advances the wheel (wheel.h) by at most
 * TW_HOLD_NODES nodes.
 */
#define TW_HOLD_IDS		64	/* ids touched or cancelled */
#define TW_HOLD_ARMS		16	/* ARM entries */
#define TW_HOLD_NODES		1024	/* nodes advanced, or entries migrated */
#define TW_MIGRATE_PER_ID	16	/* entries migrated per id a hold adds */

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
 *
 * The node is the wheel's (wheel.c links it), defined here because it is
 * shared: an index entry points at it, and tw_index_insert() and
 * tw_index_pop() take an id's node in and out of the index.
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

#endif /* _TWHEEL_INDEX_H */
