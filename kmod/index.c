// SPDX-License-Identifier: GPL-2.0
/*
 * twheel id index: id -> entry, an open-addressing table with linear
 * probing in key order (struct tw_index).
 *
 * Nothing here locks, sleeps, allocates or touches user memory; the caller
 * serialises every call and allocates the tables (see the locking rules
 * in twheel.h).  It uses nothing of the wheel.
 *
 * Why a table of its own rather than rhashtable:
 *
 *  - 24-byte entries in the table itself: the id, its deadline and its
 *    node (struct tw_ent), so a lookup compares ids in consecutive entries,
 *    and the commonest touch, an armed id's deadline moved later
 *    (tw_wheel_set()), reads and writes that one entry and never the node.
 *    rhashtable chains objects through an rhash_head in each, and every
 *    lookup dereferences an object to compare its key.
 *  - The ordered DUMP walk: a table's entries sit in key order, so
 *    tw_index_dump() lists ids in key order from a 64-bit cursor that user
 *    space keeps between calls, and an id present for the whole dump is
 *    listed exactly once whatever resizes happen in between.  rhashtable's
 *    walker keeps its place in an iterator, and a resize rewinds it
 *    (rhashtable_walk_next() returns -EAGAIN), so objects come again.
 *  - Keyed probing: an id's home slot scales tw_key(), a bijection
 *    keyed with a secret drawn per index, and entries are kept in Robin
 *    Hood order.  Keys never collide, no ids chosen without the secret
 *    crowd one run, a lookup compares the first TW_FIND_BY_ID slots by id
 *    alone and a miss stops where the id would be; the same key order is
 *    the dump's.  rhashtable seeds jhash too, but chains in no order.
 *  - No allocation and no RCU: the caller allocates every table, and a
 *    resize migrates in steps the caller bounds (tw_index_upkeep()), under
 *    its lock; rhashtable allocates its tables and resizes from a work
 *    item under RCU, which neither the device's one lock nor the
 *    user-space build of this file (tests, fuzzer, bench) would have.
 */
#include <linux/bitops.h>
#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include "index.h"

/* The home slot of @key in a table of @size slots: monotonic in @key. */
static unsigned long tw_home(u64 key, unsigned long size)
{
	return mul_u64_u64_shr(key, size, 64);
}

/* How far key @k in slot @p of a table of @size slots is from its home. */
static unsigned long tw_dist_key(u64 k, unsigned long p, unsigned long size)
{
	unsigned long h = tw_home(k, size);

	return p >= h ? p - h : p + size - h;
}

/* How far the entry in slot @p of a table of @size slots is from home. */
static unsigned long tw_dist(const struct tw_index *x, const struct tw_ent *e,
			     unsigned long p, unsigned long size)
{
	return tw_dist_key(tw_key(x, e->id), p, size);
}

/*
 * The smallest key whose home is slot @p or later: ceil(p * 2^64 / size),
 * by long division 31 bits a step (@p < @size <= TW_IDX_MAX <= 2^33: the
 * remainder shifted by 31 never overflows).
 */
static u64 tw_home_key(unsigned long p, unsigned long size)
{
	unsigned int bits, step;
	u64 q = 0, r = p;

	for (bits = 64; bits; bits -= step) {
		step = min(bits, 31U);
		q = q << step | div64_u64_rem(r << step, size, &r);
	}
	return q + (r != 0);
}

/*
 * Slots a lookup first compares by id alone: an id that is present sits
 * this close to its home nearly always (the mean distance is 1.5 slots at
 * 3/4 full, 4.5 at 9/10), and a touch of an armed id then computes no key
 * but its own.  Beyond them, Robin Hood's order bounds a miss.
 */
#define TW_FIND_BY_ID	8

static struct tw_ent *tw_tab_find(const struct tw_index *x, struct tw_ent *t,
				  unsigned long size, u64 id)
{
	u64 key = tw_key(x, id);
	unsigned long p = tw_home(key, size), d;

	for (d = 0; d < TW_FIND_BY_ID && d < size; d++) {
		if (!t[p].node)
			return NULL;
		if (t[p].id == id)
			return &t[p];
		if (++p == size)
			p = 0;
	}
	for (; d < size; d++) {
		struct tw_ent *e = &t[p];
		unsigned long ed;
		u64 ek;

		if (!e->node)
			return NULL;
		if (e->id == id)
			return e;
		ek = tw_key(x, e->id);
		ed = tw_dist_key(ek, p, size);
		if (ed < d || (ed == d && ek > key))
			return NULL;
		if (++p == size)
			p = 0;
	}
	return NULL;
}

/* Put @in into @t, which has an empty slot; returns where it landed. */
static struct tw_ent *tw_tab_put(const struct tw_index *x, struct tw_ent *t,
				 unsigned long size, struct tw_ent in)
{
	u64 key = tw_key(x, in.id);
	unsigned long p = tw_home(key, size), d = 0;
	struct tw_ent *ret = NULL;

	for (;;) {
		struct tw_ent *e = &t[p];
		unsigned long ed;
		u64 ek;

		if (!e->node) {
			*e = in;
			return ret ?: e;
		}
		ek = tw_key(x, e->id);
		ed = tw_dist_key(ek, p, size);
		if (ed < d || (ed == d && ek > key)) {
			swap(*e, in);
			key = ek;
			ret = ret ?: e;
			d = ed;
		}
		if (++p == size)
			p = 0;
		d++;
	}
}

/* Empty slot @p of @t, shifting the entries after it back towards home. */
static void tw_tab_del(const struct tw_index *x, struct tw_ent *t,
		       unsigned long size, unsigned long p)
{
	for (;;) {
		unsigned long q = p + 1 == size ? 0 : p + 1;

		if (!t[q].node || !tw_dist(x, &t[q], q, size))
			break;
		t[p] = t[q];
		p = q;
	}
	memset(&t[p], 0, sizeof(t[p]));
}

/* The inverse of odd @m modulo 2^64: Newton's iteration doubles the bits. */
static u64 tw_inverse(u64 m)
{
	u64 y = m;	/* m * m == 1 modulo 8: 3 bits */
	int i;

	for (i = 0; i < 5; i++)
		y *= 2 - m * y;
	return y;
}

/**
 * tw_index_init() - set up an empty index
 * @x: the index
 * @tab: zeroed table of @size slots
 * @size: at least TW_IDX_MIN, below 2^32
 * @secret: random words, the index's key for its life (tw_key()):
 *	get_random_bytes() in the kernel, a seed in the tests
 */
void tw_index_init(struct tw_index *x, struct tw_ent *tab, unsigned long size,
		   const u64 secret[TW_SECRET_WORDS])
{
	int i;

	memset(x, 0, sizeof(*x));
	x->tab = tab;
	x->size = size;
	for (i = 0; i < TW_SECRET_WORDS; i++) {
		x->mul[i] = secret[i] | 1;
		x->inv[i] = tw_inverse(x->mul[i]);
	}
}

/**
 * tw_index_find() - look an id up
 * @x: the index
 * @id: the id
 *
 * Return: its entry, valid until the index next changes, or NULL.
 */
struct tw_ent *tw_index_find(const struct tw_index *x, u64 id)
{
	struct tw_ent *e = tw_tab_find(x, x->tab, x->size, id);

	if (!e && x->old)
		e = tw_tab_find(x, x->old, x->old_size, id);
	return e;
}

/**
 * tw_index_room_for() - whether @ids more ids may be inserted
 * @x: the index
 * @ids: how many
 *
 * Every entry ends up in the table new ids go to, old ones included once
 * migrated, so that table must hold them all.
 *
 * Return: true if all entries, @ids more included, would fill at most
 * 15/16 of that table.
 */
bool tw_index_room_for(const struct tw_index *x, u64 ids)
{
	return x->nr + ids <= x->size - x->size / 16;
}

/**
 * tw_index_room() - whether tw_index_insert() may be called
 * @x: the index
 *
 * Return: tw_index_room_for() one more id.
 */
bool tw_index_room(const struct tw_index *x)
{
	return tw_index_room_for(x, 1);
}

/**
 * tw_index_insert() - add an id that is not in the index
 * @x: the index, with room (tw_index_room())
 * @n: the id's node, with n->id set
 * @deadline: the id's deadline (TW_ENT_QUEUED clear)
 *
 * Return: the new entry, valid until the index next changes.
 */
struct tw_ent *tw_index_insert(struct tw_index *x, struct tw_node *n,
			       u64 deadline)
{
	struct tw_ent in = { .id = n->id, .deadline = deadline, .node = n };

	x->nr_tab++;
	x->nr++;
	return tw_tab_put(x, x->tab, x->size, in);
}

/**
 * tw_index_remove() - remove an entry
 * @x: the index
 * @e: the entry, from tw_index_find() or tw_index_insert() since the index
 *	last changed
 */
void tw_index_remove(struct tw_index *x, struct tw_ent *e)
{
	if (e >= x->tab && e < x->tab + x->size) {
		tw_tab_del(x, x->tab, x->size, e - x->tab);
		x->nr_tab--;
	} else {
		tw_tab_del(x, x->old, x->old_size, e - x->old);
		x->nr_old--;
	}
	x->nr--;
}

/**
 * tw_index_want_size() - whether the table should be resized
 * @x: the index
 * @extra: ids that may be added before the next call
 *
 * Grows when the ids, @extra included, would fill more than 9/10 of the
 * table, shrinks when they would fill less than 1/4 of it; either way to a
 * table they fill 3/4 of.
 *
 * Return: the size to resize to, or 0 for none (or while a resize is still
 * migrating).
 */
unsigned long tw_index_want_size(const struct tw_index *x, unsigned long extra)
{
	u64 want = (u64)x->nr + extra;

	if (x->old)
		return 0;
	if (tw_index_fits(want, x->size) &&
	    (x->size <= TW_IDX_MIN || want * 4 >= x->size))
		return 0;
	want = want * 4 / 3 + 1;
	want = clamp_t(u64, want, TW_IDX_MIN, TW_IDX_MAX);
	return want != x->size ? want : 0;
}

/**
 * tw_index_finish_first() - whether a resize must end before a batch
 * @x: the index
 * @ids: ids the batch may add
 *
 * While a resize migrates, tw_index_want_size() asks for none; a batch
 * whose ids would fill the new table past 9/10 (a small table, a big
 * batch) must wait for the resize to finish, so that the table can grow
 * again first.  The caller migrates TW_HOLD_NODES entries a step until
 * this is false.
 *
 * Return: true if the resize under way must be finished first.
 */
bool tw_index_finish_first(const struct tw_index *x, unsigned long ids)
{
	return x->old && !tw_index_fits((u64)x->nr + ids, x->size);
}

/**
 * tw_index_still_wanted() - whether a table allocated for a resize fits it
 * @x: the index, which may have changed since tw_index_want_size() chose
 *	@size (a caller that allocates with its lock dropped)
 * @ids: ids the batch may add, as given to tw_index_want_size()
 * @size: the table's slots
 *
 * The table is still taken if a resize is still wanted and the table holds
 * the ids now at no more than 9/10, whatever size would be asked for now:
 * insisting on that one, a resize could lose every race with the other
 * batches, and an insert could find no room (tw_index_room()).
 *
 * Return: true if tw_index_start_resize() should take the table.
 */
bool tw_index_still_wanted(const struct tw_index *x, unsigned long ids,
			   unsigned long size)
{
	return tw_index_want_size(x, ids) &&
	       tw_index_fits((u64)x->nr + ids, size);
}

/**
 * tw_index_start_resize() - begin moving to a table of another size
 * @x: the index, not resizing
 * @tab: zeroed table of @size slots
 * @size: from tw_index_want_size()
 */
void tw_index_start_resize(struct tw_index *x, struct tw_ent *tab,
			   unsigned long size)
{
	x->old = x->tab;
	x->old_size = x->size;
	x->nr_old = x->nr_tab;
	x->tab = tab;
	x->size = size;
	x->nr_tab = 0;
	x->mpos = 0;
}

/**
 * tw_index_migrate() - move up to @entries entries to the new table
 * @x: the index
 * @entries: how many entries to move (and 16 times as many empty slots
 *	may be passed over)
 *
 * Entries leave the old table in slot order, each removed as
 * tw_index_remove() would, so the old table stays a valid table for
 * lookups and every slot below x->mpos stays empty.
 *
 * Return: the old table once its last entry has moved (the caller frees
 * it), else NULL.
 */
struct tw_ent *tw_index_migrate(struct tw_index *x, unsigned long entries)
{
	unsigned long empty = entries * 16;
	struct tw_ent *old;

	while (x->old && entries && empty) {
		struct tw_ent *e;

		if (!x->nr_old) {
			old = x->old;
			x->old = NULL;
			x->old_size = 0;
			x->mpos = 0;
			return old;
		}
		if (x->mpos >= x->old_size)
			x->mpos = 0;
		e = &x->old[x->mpos];
		if (!e->node) {
			x->mpos++;
			empty--;
			continue;
		}
		tw_tab_put(x, x->tab, x->size, *e);
		tw_tab_del(x, x->old, x->old_size, x->mpos);
		x->nr_old--;
		x->nr_tab++;
		entries--;
	}
	return NULL;
}

/**
 * tw_index_migrate_batch() - a batch's share of a resize's migration
 * @x: the index
 * @ids: ids the batch may add
 *
 * (@ids + 1) * TW_MIGRATE_PER_ID entries: TW_MIGRATE_PER_ID per id the batch may add,
 * so that the migration keeps well ahead of the ids that fill the new
 * table, and as many more so that a batch that adds none still moves it
 * on.  Nothing when no resize is under way.
 *
 * Return: the old table once its last entry has moved (the caller frees
 * it), else NULL.
 */
struct tw_ent *tw_index_migrate_batch(struct tw_index *x, unsigned long ids)
{
	if (!x->old)
		return NULL;
	return tw_index_migrate(x, (ids + 1) * TW_MIGRATE_PER_ID);
}

/**
 * tw_index_upkeep() - the next step of the upkeep before a batch
 * @x: the index
 * @ids: ids the batch may add
 * @size: set to the table size wanted, for TW_UPKEEP_ALLOC
 * @old: set to an old table let go of (the caller frees it), or NULL
 *
 * The one protocol for keeping room in the index, for callers that may
 * drop their lock to allocate: call it until it returns TW_UPKEEP_DONE.
 * TW_UPKEEP_MIGRATED: a resize the batch would overfill moved on by
 * TW_HOLD_NODES entries (tw_index_finish_first()); the caller may drop
 * its lock before the next call.  TW_UPKEEP_ALLOC: a table of *@size slots
 * is wanted (tw_index_want_size()); the caller allocates it, with its lock
 * dropped if it must, and hands it to tw_index_offer(), then calls again,
 * whether the table was taken or not: while the lock was dropped, another
 * batch may have started a resize sized for its own ids only, or filled
 * the table.  TW_UPKEEP_DONE: the batch's share of a resize migrated
 * (tw_index_migrate_batch()), and the index has room for @ids more ids
 * (tw_index_room_for()) unless the table is at TW_IDX_MAX.  A caller that
 * cannot have the table stops there: the batch's inserts then fail once
 * the room runs out.
 *
 * Return: TW_UPKEEP_DONE, TW_UPKEEP_MIGRATED or TW_UPKEEP_ALLOC.
 */
int tw_index_upkeep(struct tw_index *x, unsigned long ids,
		    unsigned long *size, struct tw_ent **old)
{
	*old = NULL;
	if (tw_index_finish_first(x, ids)) {
		*old = tw_index_migrate(x, TW_HOLD_NODES);
		return TW_UPKEEP_MIGRATED;
	}
	*size = tw_index_want_size(x, ids);
	if (*size)
		return TW_UPKEEP_ALLOC;
	*old = tw_index_migrate_batch(x, ids);
	return TW_UPKEEP_DONE;
}

/**
 * tw_index_offer() - start a resize with a table tw_index_upkeep() wanted
 * @x: the index
 * @ids: ids the batch may add, as given to tw_index_upkeep()
 * @tab: zeroed table of @size slots
 * @size: the slots tw_index_upkeep() asked for
 *
 * Return: true if the resize started with @tab (tw_index_still_wanted());
 * false if the caller keeps @tab, to free.
 */
bool tw_index_offer(struct tw_index *x, unsigned long ids, struct tw_ent *tab,
		    unsigned long size)
{
	if (!tw_index_still_wanted(x, ids, size))
		return false;
	tw_index_start_resize(x, tab, size);
	return true;
}

/*
 * A walk of one table in key order from a key: slots are visited from the
 * key's home onwards.  An entry belongs to the walk's lap when it has not
 * wrapped past the table's end (home <= slot) and neither has the walk, or
 * when both have; the lap's entries come in key order.  @low is a lower
 * bound of the keys the walk has not reached: above every key it passed,
 * and above the keys whose home is at or before an empty slot it passed.
 */
struct tw_walk {
	const struct tw_index *x;
	const struct tw_ent *t;
	unsigned long size, p, left, budget;
	bool wrapped;
	int state;
	u64 from;	/* the keys sought are >= @from */
	u64 low;	/* SHORT: no key in [@from, @low) is left unseen */
	u64 key;	/* ENTRY: the entry's key */
};

enum { TW_WALK_ENTRY, TW_WALK_END, TW_WALK_SHORT };

/* Move @wk on to the first entry of its lap with key >= wk->from. */
static void tw_walk_seek(struct tw_walk *wk)
{
	while (wk->left) {
		const struct tw_ent *e = &wk->t[wk->p];

		if (!wk->budget) {
			wk->state = TW_WALK_SHORT;
			return;
		}
		wk->budget--;
		if (e->node) {
			u64 k = tw_key(wk->x, e->id);
			bool away = tw_home(k, wk->size) > wk->p;

			if (wk->wrapped && !away)
				break;		/* the next lap */
			if (wk->wrapped == away) {
				if (k >= wk->from) {
					wk->state = TW_WALK_ENTRY;
					wk->key = k;
					return;
				}
				wk->low = max(wk->low, k + 1);
			}
		} else {
			if (wk->wrapped || wk->p + 1 == wk->size)
				break;		/* nothing left in the lap */
			wk->low = max(wk->low, tw_home_key(wk->p + 1, wk->size));
		}
		wk->left--;
		if (++wk->p == wk->size) {
			wk->p = 0;
			wk->wrapped = true;
		}
	}
	wk->state = TW_WALK_END;
}

static void tw_walk_start(struct tw_walk *wk, const struct tw_index *x,
			  const struct tw_ent *t, unsigned long size,
			  unsigned long min_p, u64 from, unsigned long budget)
{
	wk->x = x;
	wk->t = t;
	wk->size = size;
	wk->budget = budget;
	wk->wrapped = false;
	wk->state = TW_WALK_END;
	wk->from = from;
	wk->low = from;
	if (!t)
		return;
	wk->p = tw_home(from, size);
	if (wk->p < min_p) {
		/* the slots below min_p are empty: no wrapped entries */
		wk->p = min_p;
		wk->low = max(from, tw_home_key(min_p, size));
	}
	/*
	 * One lap from the start slot, then the wrapped run at the table's
	 * start, which the walk stops in at the first entry that did not
	 * wrap: a start inside that run (slot 0, from cursor 0) would skip it
	 * on the first lap and must still reach it on the second.
	 */
	wk->left = 2 * size;
	tw_walk_seek(wk);
}

/* Step @wk past every entry with a key below @from. */
static void tw_walk_skip(struct tw_walk *wk, u64 from)
{
	if (wk->state != TW_WALK_ENTRY || wk->key >= from)
		return;
	wk->from = from;
	wk->low = max(wk->low, wk->key + 1);
	wk->left--;
	if (++wk->p == wk->size) {
		wk->p = 0;
		wk->wrapped = true;
	}
	tw_walk_seek(wk);
}

/**
 * tw_index_dump() - list entries in key order, resuming at a cursor
 * @x: the index
 * @cursor: in/out: where to resume (TW_CURSOR_END at the end, see
 *	tw_cursor_key())
 * @out: room for @room entries (copies)
 * @room: at least 1
 * @budget: in/out: slots each of the two tables may visit; set to 0 when
 *	one ran out.  A call that runs out before it can move the cursor
 *	(in a run of displaced entries with keys below it) goes on until it
 *	can, so every call makes progress.
 *
 * Cells (key >> 1), not keys, make the cursor: 2^63 cells, one end value
 * and the odd keys of 2^63 - 1 cells fit in 64 bits.  The two keys of a
 * cell are stored by the same call unless @room is 1 and the call has
 * nothing else to store: then the even key is stored alone and the cursor
 * points at the odd one.  During a resize both tables are walked and
 * merged.  A call that runs out of budget stops at a cell below which no
 * key is left unseen, so an id present for the whole dump is listed
 * exactly once, whatever resizes happen between calls.
 *
 * Return: the number of entries stored.  0 with *@cursor not at the end and
 * *@budget left means @room is 1 and the next cell, the last one
 * (TW_CURSOR_END - 1), holds two ids: no cursor could point at its odd key.
 */
unsigned long tw_index_dump(const struct tw_index *x, u64 *cursor,
			    struct tw_ent *out, unsigned long room,
			    unsigned long *budget)
{
	struct tw_walk a, b;
	unsigned long nr = 0;
	bool short_ = false, odd = false;
	u64 c = *cursor, from;

	if (c == TW_CURSOR_END)
		return 0;
	/* an odd cursor is never returned as it came: only the split sets odd */
	from = tw_cursor_key(c);
	c = from >> 1;
	tw_walk_start(&a, x, x->nr_tab ? x->tab : NULL, x->size, 0, from,
		      *budget);
	tw_walk_start(&b, x, x->nr_old ? x->old : NULL, x->old_size, x->mpos,
		      from, *budget);
	for (;;) {
		u64 lim = U64_MAX, cell;
		struct tw_walk *w = NULL;
		struct tw_ent *pair = NULL;
		bool part = false;

		if (a.state == TW_WALK_SHORT) {
			lim = a.low;
			part = true;
		}
		if (b.state == TW_WALK_SHORT) {
			lim = min(lim, b.low);
			part = true;
		}
		if (a.state == TW_WALK_ENTRY &&
		    (b.state != TW_WALK_ENTRY || a.key < b.key))
			w = &a;
		else if (b.state == TW_WALK_ENTRY)
			w = &b;
		/* a cell is stored only when both its keys were seen */
		if (part && (!w || (w->key | 1) >= lim)) {
			if (nr || lim >> 1 > c) {
				c = max(c, lim >> 1);
				short_ = true;
				break;
			}
			/* no progress yet: the walks that ran out go on */
			if (a.state == TW_WALK_SHORT) {
				a.budget = *budget;
				tw_walk_seek(&a);
			}
			if (b.state == TW_WALK_SHORT) {
				b.budget = *budget;
				tw_walk_seek(&b);
			}
			continue;
		}
		if (!w) {
			c = TW_CURSOR_END;
			break;
		}
		cell = w->key >> 1;
		if (!(w->key & 1))
			pair = tw_index_find(x, tw_key_id(x, w->key | 1));
		if (nr + 1 + !!pair > room) {
			c = cell;
			/* room 1 and nothing stored: the even key alone */
			if (!nr && cell + 1 < TW_CURSOR_END) {
				out[nr++] = w->t[w->p];
				odd = true;
			}
			break;
		}
		out[nr++] = w->t[w->p];
		if (pair)
			out[nr++] = *pair;
		c = cell + 1;
		if (nr == room || c == TW_CURSOR_END)
			break;
		tw_walk_skip(&a, c << 1);
		tw_walk_skip(&b, c << 1);
	}
	if (short_)
		*budget = 0;
	*cursor = odd ? TW_CURSOR_END + 1 + c : c;
	return nr;
}

/**
 * tw_index_pop() - remove any entry, for tearing the index down
 * @x: the index
 * @pos: in/out: scan position, 0 to start
 *
 * Return: the node of an entry removed from the index, or NULL once it is
 * empty.
 */
struct tw_node *tw_index_pop(struct tw_index *x, unsigned long *pos)
{
	while (x->nr) {
		struct tw_ent *e;
		struct tw_node *n;

		if (*pos < x->old_size)
			e = &x->old[*pos];
		else if (*pos - x->old_size < x->size)
			e = &x->tab[*pos - x->old_size];
		else
			return NULL;
		n = e->node;
		if (!n) {
			++*pos;
			continue;
		}
		/* no shifting: the table is being thrown away */
		e->node = NULL;
		if (e >= x->tab && e < x->tab + x->size)
			x->nr_tab--;
		else
			x->nr_old--;
		x->nr--;
		return n;
	}
	return NULL;
}
