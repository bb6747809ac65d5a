// SPDX-License-Identifier: GPL-2.0
/*
 * twheel core: hierarchical timing wheel and id index.
 *
 * Nothing here locks, sleeps, allocates or touches user memory; the caller
 * serialises every call on one wheel (see the locking rules in
 * twheel_main.c).
 */
#include <linux/bitops.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include "twheel_core.h"

/* ------------------------------------------------------------------ wheel */

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
 */
void tw_wheel_init(struct tw_wheel *w, u64 tick_ns, u64 now)
{
	unsigned int l, s;

	w->tick_ns = tick_ns;
	w->cur = div64_u64(now, tick_ns);
	w->nr_armed = 0;
	w->nr_ready = 0;
	memset(w->pending, 0, sizeof(w->pending));
	INIT_HLIST_HEAD(&w->drain);
	INIT_LIST_HEAD(&w->ready);
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
 * @n: the node, with its deadline set; its tick must be below TW_TICKS_MAX
 *
 * A node whose tick is already processed goes to the drain list, so the
 * next tw_wheel_advance() expires it.
 */
void tw_wheel_add(struct tw_wheel *w, struct tw_node *n)
{
	u64 e = tw_ticks(w, tw_node_deadline(n));

	n->expired = 0;
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
 * tw_wheel_expire() - queue the event of a node that is on no list
 * @w: the wheel
 * @n: the node
 * @now: current time in ns, >= the node's deadline
 */
void tw_wheel_expire(struct tw_wheel *w, struct tw_node *n, u64 now)
{
	n->expired = max_t(u64, now, 1);
	list_add_tail(&n->ready, &w->ready);
	w->nr_ready++;
}

/**
 * tw_wheel_unqueue() - take an expired node off the ready queue
 * @w: the wheel
 * @n: the node, expired
 */
void tw_wheel_unqueue(struct tw_wheel *w, struct tw_node *n)
{
	list_del(&n->ready);
	n->expired = 0;
	w->nr_ready--;
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
 * queued in deadline order up to one tick.  Expired nodes are appended to
 * w->ready with n->expired = @now.
 *
 * Return: true if work that is due remains because @budget ran out.
 */
bool tw_wheel_advance(struct tw_wheel *w, u64 now, unsigned int *budget)
{
	u64 nt = div64_u64(now, w->tick_ns);
	unsigned int lvl, s;
	u64 t;

	while (*budget) {
		struct tw_node *n;
		u64 e;

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
		e = tw_ticks(w, tw_node_deadline(n));
		if (e > w->cur) {
			tw_slot(w, n, e);
			w->reslots++;
			continue;
		}
		w->nr_armed--;
		w->late_max = max(w->late_max, now - tw_node_deadline(n));
		tw_wheel_expire(w, n, now);
	}
	return tw_wheel_next(w, &t) && t <= nt;
}

/* ------------------------------------------------------------------ index */

/**
 * tw_index_init() - set up an empty index
 * @x: the index
 * @tab: zeroed table of 1 << @bits buckets
 * @bits: log2 of its size
 */
void tw_index_init(struct tw_index *x, struct tw_node **tab, unsigned int bits)
{
	x->tab = tab;
	x->bits = bits;
	x->old = NULL;
	x->old_bits = 0;
	x->migrated = 0;
	x->nr = 0;
}

/* Buckets of the old table below x->migrated have moved to the new one. */
static struct tw_node **tw_bucket(const struct tw_index *x, u64 key)
{
	if (x->old) {
		unsigned long i = key >> (64 - x->old_bits);

		if (i >= x->migrated)
			return &x->old[i];
	}
	return &x->tab[key >> (64 - x->bits)];
}

/**
 * tw_index_find() - look an id up
 * @x: the index
 * @id: the id
 *
 * Return: its node, or NULL.
 */
struct tw_node *tw_index_find(const struct tw_index *x, u64 id)
{
	struct tw_node *n;

	for (n = *tw_bucket(x, tw_key(id)); n; n = n->hnext)
		if (n->id == id)
			return n;
	return NULL;
}

/**
 * tw_index_insert() - add a node whose id is not in the index
 * @x: the index
 * @n: the node, with n->id set
 */
void tw_index_insert(struct tw_index *x, struct tw_node *n)
{
	u64 key = tw_key(n->id);
	struct tw_node **pp = tw_bucket(x, key);

	while (*pp && tw_key((*pp)->id) < key)
		pp = &(*pp)->hnext;
	n->hnext = *pp;
	*pp = n;
	x->nr++;
}

/**
 * tw_index_remove() - remove a node that is in the index
 * @x: the index
 * @n: the node
 */
void tw_index_remove(struct tw_index *x, struct tw_node *n)
{
	struct tw_node **pp = tw_bucket(x, tw_key(n->id));

	while (*pp != n)
		pp = &(*pp)->hnext;
	*pp = n->hnext;
	n->hnext = NULL;
	x->nr--;
}

/**
 * tw_index_want_bits() - whether the table should be resized
 * @x: the index
 *
 * Grows past one id per bucket, shrinks below one per eight buckets.
 *
 * Return: the log2 size to resize to, or 0 for none (or while a resize is
 * still migrating).
 */
unsigned int tw_index_want_bits(const struct tw_index *x)
{
	unsigned long size = 1UL << x->bits;

	if (x->old)
		return 0;
	if (x->nr > size && x->bits < TW_IDX_MAX_BITS)
		return x->bits + 1;
	if (x->nr < size / 8 && x->bits > TW_IDX_MIN_BITS)
		return x->bits - 1;
	return 0;
}

/**
 * tw_index_start_resize() - begin moving to a table of another size
 * @x: the index, not resizing
 * @tab: zeroed table of 1 << @bits buckets
 * @bits: x->bits + 1 or x->bits - 1
 */
void tw_index_start_resize(struct tw_index *x, struct tw_node **tab,
			   unsigned int bits)
{
	x->old = x->tab;
	x->old_bits = x->bits;
	x->tab = tab;
	x->bits = bits;
	x->migrated = 0;
}

/**
 * tw_index_migrate() - move up to @buckets buckets to the new table
 * @x: the index
 * @buckets: how many old buckets to move
 *
 * Keys are bucketed by their top bits, so growing splits old bucket i into
 * new buckets 2i and 2i + 1 (a prefix and a suffix of its sorted chain), and
 * shrinking appends old bucket 2j + 1 after old bucket 2j in new bucket j.
 *
 * Return: the old table once the last bucket has moved (the caller frees
 * it), else NULL.
 */
struct tw_node **tw_index_migrate(struct tw_index *x, unsigned long buckets)
{
	struct tw_node **old;

	while (x->old && buckets--) {
		unsigned long i = x->migrated;
		struct tw_node *chain = x->old[i];
		struct tw_node **pp;

		x->old[i] = NULL;
		if (x->bits > x->old_bits) {
			unsigned int shift = 64 - x->bits;

			pp = &chain;
			while (*pp && !((tw_key((*pp)->id) >> shift) & 1))
				pp = &(*pp)->hnext;
			x->tab[2 * i + 1] = *pp;
			*pp = NULL;
			x->tab[2 * i] = chain;
		} else {
			pp = &x->tab[i / 2];
			while (*pp)
				pp = &(*pp)->hnext;
			*pp = chain;
		}
		if (++x->migrated == 1UL << x->old_bits) {
			old = x->old;
			x->old = NULL;
			return old;
		}
	}
	return NULL;
}

/**
 * tw_index_dump() - list nodes in key order, resuming at a cursor
 * @x: the index
 * @cursor: in/out: the next cell (key >> 1) to visit; TW_CURSOR_END at the end
 * @out: room for @room node pointers
 * @room: at least 1
 * @budget: in/out: how many buckets may still be visited
 *
 * Cells, not keys, make the cursor: 2^63 cells and one end value fit in 64
 * bits.  The two keys of a cell always share a bucket, and a cell is never
 * split between two calls, so a node present for the whole dump is listed
 * exactly once, whatever resizes happen in between.
 *
 * Return: the number of nodes stored.  0 with *@cursor not at the end and
 * *@budget left means the next cell holds two nodes and @room is 1.
 */
unsigned long tw_index_dump(const struct tw_index *x, u64 *cursor,
			    struct tw_node **out, unsigned long room,
			    unsigned long *budget)
{
	unsigned long nr = 0;
	u64 c = *cursor;

	while (c < TW_CURSOR_END && *budget) {
		u64 key = c << 1, end;
		struct tw_node *n;
		unsigned long i;

		(*budget)--;
		if (x->old && (key >> (64 - x->old_bits)) >= x->migrated) {
			i = key >> (64 - x->old_bits);
			n = x->old[i];
			end = (u64)(i + 1) << (63 - x->old_bits);
		} else {
			i = key >> (64 - x->bits);
			n = x->tab[i];
			end = (u64)(i + 1) << (63 - x->bits);
			if (x->old)
				end = min_t(u64, end,
					    (u64)x->migrated << (63 - x->old_bits));
		}
		for (; n; n = n->hnext) {
			u64 cell = tw_key(n->id) >> 1;
			struct tw_node *m = n->hnext;
			unsigned long len;

			if (cell < c)
				continue;
			len = (m && tw_key(m->id) >> 1 == cell) ? 2 : 1;
			if (nr + len > room) {
				*cursor = cell;
				return nr;
			}
			out[nr++] = n;
			if (len == 2)
				out[nr++] = m;
			n = out[nr - 1];
			c = cell + 1;
			if (nr == room) {
				*cursor = c;
				return nr;
			}
		}
		c = end;
	}
	*cursor = c;
	return nr;
}

/**
 * tw_index_pop() - remove any node, for tearing the index down
 * @x: the index
 * @pos: in/out: scan position, 0 to start
 *
 * Return: a node removed from the index, or NULL once it is empty.
 */
struct tw_node *tw_index_pop(struct tw_index *x, unsigned long *pos)
{
	while (x->nr) {
		struct tw_node **pp;
		struct tw_node *n;
		unsigned long size_old = x->old ? 1UL << x->old_bits : 0;

		if (*pos < size_old)
			pp = &x->old[*pos];
		else
			pp = &x->tab[*pos - size_old];
		n = *pp;
		if (!n) {
			++*pos;
			continue;
		}
		*pp = n->hnext;
		n->hnext = NULL;
		x->nr--;
		return n;
	}
	return NULL;
}
