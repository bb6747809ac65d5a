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
#include <linux/list.h>
#include <linux/hash.h>

#define TW_LVL_BITS	6
#define TW_LVL_SIZE	BIT(TW_LVL_BITS)
#define TW_LVL_MASK	(TW_LVL_SIZE - 1)
/* 8 levels of 64 slots cover 2^48 ticks: KTIME_MAX at the smallest tick. */
#define TW_LEVELS	8
#define TW_TICKS_MAX	(1ULL << (TW_LEVELS * TW_LVL_BITS))

/* Index: 2^TW_IDX_MIN_BITS .. 2^TW_IDX_MAX_BITS buckets of one pointer. */
#define TW_IDX_MIN_BITS	6
#define TW_IDX_MAX_BITS	32

/**
 * struct tw_node - one id, armed or expired
 * @hnext: next node in the index bucket, in ascending key order
 * @id: the user's id
 * @deadline: absolute deadline in ns (at most KTIME_MAX), in bits 0..62;
 *	bit 63 (TW_NODE_FLAG) belongs to the caller and is never changed
 *	here.  Read it with tw_node_deadline(), set it with
 *	tw_node_set_deadline().
 * @slot: while armed: link in a wheel slot or in the drain list
 * @ready: while expired: link in the ready queue
 * @expired: 0 while armed; the clock when the event was queued once expired
 *
 * 48 bytes.  A lookup reads @hnext and @id of the nodes of a chain and a
 * touch writes @deadline: the first 24 bytes, so that a touch of a node
 * whose slot does not move stays within one cache line more often.  The
 * user's payload is not here: the caller embeds the node in a larger
 * object when it needs one, and marks such nodes with TW_NODE_FLAG.
 */
struct tw_node {
	struct tw_node *hnext;
	u64 id;
	u64 deadline;
	union {
		struct hlist_node slot;
		struct list_head ready;
	};
	u64 expired;
};

#define TW_NODE_FLAG	BIT_ULL(63)

/**
 * tw_node_deadline() - a node's deadline
 * @n: the node
 * Return: the deadline in ns, without the caller's flag.
 */
static inline u64 tw_node_deadline(const struct tw_node *n)
{
	return n->deadline & ~TW_NODE_FLAG;
}

/**
 * tw_node_set_deadline() - set a node's deadline, keeping the caller's flag
 * @n: the node
 * @ns: the deadline in ns, at most KTIME_MAX
 */
static inline void tw_node_set_deadline(struct tw_node *n, u64 ns)
{
	n->deadline = (n->deadline & TW_NODE_FLAG) | ns;
}

/**
 * struct tw_index - id -> node hash table, iterable in a stable key order
 * @tab: buckets, 1 << @bits of them, indexed by the top bits of the key
 * @old: while resizing: the previous table (1 << @old_bits buckets)
 * @bits: log2 of the size of @tab
 * @old_bits: log2 of the size of @old
 * @migrated: buckets of @old already moved into @tab
 * @nr: ids in the index
 *
 * The key of an id is tw_key(id), a bijection, so keys never collide and a
 * bucket's chain is sorted by key.  Resizing is incremental: the caller
 * allocates the new table and migrates a bounded number of buckets per call.
 */
struct tw_index {
	struct tw_node **tab;
	struct tw_node **old;
	unsigned int bits;
	unsigned int old_bits;
	unsigned long migrated;
	unsigned long nr;
};

/**
 * struct tw_wheel - hierarchical timing wheel
 * @tick_ns: tick length in ns
 * @cur: every tick <= @cur has been processed
 * @nr_armed: armed nodes (in slots or in @drain)
 * @nr_ready: nodes on @ready
 * @reslots: nodes moved from one slot to another (monotonic)
 * @late_max: largest expired - deadline seen, in ns
 * @pending: per level, bit s set when slot s may hold nodes
 * @drain: nodes taken out of a slot that is due, not yet re-slotted
 * @ready: expired nodes, in expiry order
 * @slots: the slots
 *
 * A node with expiry tick e (the first tick boundary >= its deadline) sits
 * at the level of the highest bit where e and @cur differ, in the slot given
 * by e's digit at that level.  The slot comes due when @cur reaches the
 * start of that slot; its nodes are then re-slotted relative to the new
 * @cur, one level lower at least, or expire if e <= @cur.  So a node is
 * never expired early and never late by more than the tick it falls in.
 * A node's deadline may be moved later without moving the node: it is
 * re-slotted when its old slot comes due.
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
	struct list_head ready;
	struct hlist_head slots[TW_LEVELS][TW_LVL_SIZE];
};

void tw_wheel_init(struct tw_wheel *w, u64 tick_ns, u64 now);
void tw_wheel_add(struct tw_wheel *w, struct tw_node *n);
void tw_wheel_del(struct tw_wheel *w, struct tw_node *n);
void tw_wheel_expire(struct tw_wheel *w, struct tw_node *n, u64 now);
void tw_wheel_unqueue(struct tw_wheel *w, struct tw_node *n);
void tw_wheel_catch_up(struct tw_wheel *w, u64 now);
bool tw_wheel_next(const struct tw_wheel *w, u64 *tick);
bool tw_wheel_advance(struct tw_wheel *w, u64 now, unsigned int *budget);
u64 tw_ticks(const struct tw_wheel *w, u64 ns);

/**
 * tw_key() - the index key of an id
 * @id: the id
 *
 * Multiplication by an odd constant is a bijection on 64 bits, and its top
 * bits spread sequential ids evenly: this is hash_64() before the shift.
 *
 * Return: the key.
 */
static inline u64 tw_key(u64 id)
{
	return id * GOLDEN_RATIO_64;
}

void tw_index_init(struct tw_index *x, struct tw_node **tab, unsigned int bits);
struct tw_node *tw_index_find(const struct tw_index *x, u64 id);
void tw_index_insert(struct tw_index *x, struct tw_node *n);
void tw_index_remove(struct tw_index *x, struct tw_node *n);
unsigned int tw_index_want_bits(const struct tw_index *x);
void tw_index_start_resize(struct tw_index *x, struct tw_node **tab,
			   unsigned int bits);
struct tw_node **tw_index_migrate(struct tw_index *x, unsigned long buckets);
unsigned long tw_index_dump(const struct tw_index *x, u64 *cursor,
			    struct tw_node **out, unsigned long room,
			    unsigned long *budget);
struct tw_node *tw_index_pop(struct tw_index *x, unsigned long *pos);

/* Cursor value that ends a dump: one past the last cell (keys >> 1). */
#define TW_CURSOR_END	BIT_ULL(63)

#endif /* _TWHEEL_CORE_H */
