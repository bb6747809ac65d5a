// SPDX-License-Identifier: GPL-2.0
/*
 * A wheel's memory: one node per id (tw_node_cache) and the index's
 * tables.  Both are charged to the caller's memory cgroup, and a table is
 * never allocated with the lock held: the lock is dropped for it and the
 * index's room judged again once it is back (tw_maintain()).  A caller that
 * must not sleep (IOCB_NOWAIT) leaves a growth it cannot do without
 * reclaim to the work item (tw_grow(), charged to the opener's cgroup).
 */
#include <linux/memcontrol.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "twheel.h"

/*
 * What a wheel grows with (nodes, index tables): charged to the caller's
 * memory cgroup, and failing instead of invoking the OOM killer, so that a
 * service at its cgroup's limit gets ENOMEM with an exact short count and
 * keeps its ids, rather than being killed with all of them.
 */
#define TW_GFP_GROW	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)
/*
 * The same for an IOCB_NOWAIT caller (io_uring, RWF_NOWAIT), which must not
 * sleep: no reclaim, and index tables only as large as TW_NOWAIT_TABLE
 * bytes inline (larger ones are allocated by the work, tw_grow()).
 */
#define TW_GFP_NOWAIT	(GFP_NOWAIT | __GFP_ACCOUNT | __GFP_NOWARN)
#define TW_NOWAIT_TABLE	(64 << 10)

/*
 * One node per id, 32 bytes, payload included (struct tw_node).  The id's
 * current deadline and state are in its index entry (struct tw_ent): a
 * touch that only moves the deadline later writes the entry alone.  Each
 * wheel owns one more node, the sentinel of its ready queue
 * (tw_wheel_sentinel()).
 */
struct kmem_cache *tw_node_cache;

/**
 * tw_tab_alloc() - a zeroed index table
 * @size: its slots
 * @gfp: how to allocate it
 *
 * kvmalloc() refuses more than INT_MAX bytes (89 M slots, some 70 M ids):
 * a larger table, on the way to TWHEEL_MAX_IDS_LIMIT ids, comes from
 * vmalloc() itself, charged alike.
 *
 * Return: the table, or NULL.
 */
struct tw_ent *tw_tab_alloc(unsigned long size, gfp_t gfp)
{
	size_t bytes;

	if (check_mul_overflow(size, sizeof(struct tw_ent), &bytes))
		return NULL;
	if (bytes <= INT_MAX)
		return kvzalloc(bytes, gfp);
	return __vmalloc(bytes, gfp | __GFP_ZERO);
}

/**
 * tw_free_later() - keep an index table to free once the lock is dropped
 * @wh: the wheel, locked
 * @old: a table a migration let go of, or NULL
 *
 * The tables to free are chained through their first bytes (a table has at
 * least TW_IDX_MIN entries, and nothing reads a retired one); tw_unlock()
 * frees them.
 */
void tw_free_later(struct twheel *wh, struct tw_ent *old)
{
	if (old) {
		*(struct tw_ent **)old = wh->garbage;
		wh->garbage = old;
	}
}

/* The index switched to a new table; the work finishes if the calls stop. */
static void tw_resize_started(struct twheel *wh)
{
	wh->work_mpos = 0;
	queue_delayed_work(system_dfl_wq, &wh->work, TW_WORK_DELAY);
}

/**
 * tw_maintain() - make room in the index for a batch of ids
 * @wh: the wheel, locked; the lock may be dropped and taken again
 * @ids: how many ids the batch may add
 *
 * By the core's protocol (tw_index_upkeep()): a resize the batch would
 * overfill is finished first, in bounded holds; a new table is allocated
 * with the lock dropped, and the protocol asked again once the lock is
 * back, since other batches may have run meanwhile.  Leaves room for the
 * batch unless a table could not be had (the batch's inserts then fail with
 * ENOMEM).
 */
void tw_maintain(struct twheel *wh, unsigned long ids)
{
	struct tw_index *x = &wh->idx;
	struct tw_ent *old, *tab;
	unsigned long size;

	lockdep_assert_held(&wh->lock);
	for (;;) {
		switch (tw_index_upkeep(x, ids, &size, &old)) {
		case TW_UPKEEP_DONE:
			tw_free_later(wh, old);
			return;
		case TW_UPKEEP_MIGRATED:
			tw_free_later(wh, old);
			if (x->old) {
				tw_unlock(wh);
				cond_resched();
				tw_lock(wh);
			}
			break;
		default:	/* TW_UPKEEP_ALLOC */
			tw_unlock(wh);
			tab = tw_tab_alloc(size, TW_GFP_GROW);
			tw_lock(wh);
			if (!tab) {
				tw_free_later(wh, tw_index_migrate_batch(x, ids));
				return;
			}
			if (tw_index_offer(x, ids, tab, size))
				tw_resize_started(wh);
			else
				tw_free_later(wh, tab);	/* kvfree() may sleep */
		}
	}
}

/* Have the work make room for @ids more ids (tw_grow()). */
static void tw_grow_later(struct twheel *wh, unsigned long ids)
{
	if (!wh->grow)
		mod_delayed_work(system_dfl_wq, &wh->work, 0);
	wh->grow = max(wh->grow, ids);
}

/**
 * tw_wait_room() - a nowait writer found no room in the index
 * @wh: the wheel, locked
 * @ids: how many ids it wanted room for
 *
 * EPOLLOUT is off until the work has grown the index (tw_grow()).
 */
void tw_wait_room(struct twheel *wh, unsigned long ids)
{
	WRITE_ONCE(wh->full, true);
	tw_grow_later(wh, ids);
}

/**
 * tw_maintain_nowait() - tw_maintain() for a caller that must not sleep
 * @wh: the wheel, locked
 * @ids: how many ids the batch may add
 *
 * Migrates as much, grows the index inline only if a small table can be
 * had without reclaim, and otherwise leaves the growth to the work.  New
 * ids then use the room left below 15/16 (tw_index_room()) until the work
 * has grown the table.
 */
void tw_maintain_nowait(struct twheel *wh, unsigned long ids)
{
	struct tw_index *x = &wh->idx;
	unsigned long size = tw_index_want_size(x, ids);

	lockdep_assert_held(&wh->lock);
	if (size) {
		struct tw_ent *tab = NULL;

		if (size <= TW_NOWAIT_TABLE / sizeof(*tab))
			tab = tw_tab_alloc(size, TW_GFP_NOWAIT);
		if (tab) {
			tw_index_start_resize(x, tab, size);
			tw_resize_started(wh);
		} else {
			tw_grow_later(wh, ids);
		}
	}
	tw_free_later(wh, tw_index_migrate_batch(x, ids));
}

/**
 * tw_grow() - the work's share of a nowait writer's growth
 * @wh: the wheel, locked; the lock may be dropped and taken again
 *
 * Grows as a blocking writer would, charged to the opener's memory cgroup,
 * then lets writers waiting in poll for EPOLLOUT retry, even if the table
 * could not be had (the retry then reports the error).
 */
void tw_grow(struct twheel *wh)
{
	struct mem_cgroup *old = set_active_memcg(wh->memcg);
	unsigned long ids = wh->grow;

	wh->grow = 0;
	tw_maintain(wh, ids);
	set_active_memcg(old);
	/* unless a writer asked for more while the lock was dropped */
	if (wh->full && !wh->grow) {
		WRITE_ONCE(wh->full, false);
		wh->wake_out = true;
	}
}

/**
 * tw_node_alloc() - a node for an id, with data 0
 * @id: the id
 * @gfp: how to allocate it
 *
 * Return: the node, or NULL.
 */
struct tw_node *tw_node_alloc(u64 id, gfp_t gfp)
{
	struct tw_node *n = kmem_cache_alloc(tw_node_cache, gfp);

	if (n) {
		n->id = id;
		n->data = 0;
	}
	return n;
}

/**
 * tw_spare() - a node for the next new id of a call, with the lock dropped
 * @c: the call
 *
 * Return: 0, or -ENOMEM.
 */
int tw_spare(struct tw_call *c)
{
	c->spare = tw_node_alloc(0, TW_GFP_GROW);
	return c->spare ? 0 : -ENOMEM;
}

/**
 * tw_node_new() - a new id, in the index but on no list
 * @wh: the wheel, entered for a chunk
 * @id: the id
 * @c: the call: its spare node, and whether it may wait
 * @err: set on failure
 *
 * The id is charged to the wheel's max_ids, its user's and the global cap
 * first (tw_charge()).  A blocking caller made room in the index before the
 * chunk; a nowait one that finds none waits for the work to grow it.
 *
 * Return: the id's entry, or NULL with @err: -ENOSPC at a cap, -ENOMEM
 * for want of an index table, -EAGAIN for want of a node the cache could
 * give only with reclaim (a blocking caller then gets one from tw_spare()
 * and tries again) or, nowait, of index room.
 */
struct tw_ent *tw_node_new(struct twheel *wh, u64 id, struct tw_call *c,
			   int *err)
{
	struct tw_node *n;

	if (wh->idx.nr >= wh->cfg.max_ids) {
		*err = -ENOSPC;
		return NULL;
	}
	*err = tw_charge(wh);
	if (*err)
		return NULL;
	if (!tw_index_room(&wh->idx)) {
		tw_uncharge(wh, 1);
		*err = -ENOMEM;
		if (c->nowait) {
			tw_wait_room(wh, TW_HOLD_IDS);
			*err = -EAGAIN;
		}
		return NULL;
	}
	n = c->spare;
	c->spare = NULL;
	if (n) {
		n->id = id;
		n->data = 0;
	} else {
		n = tw_node_alloc(id, TW_GFP_NOWAIT);
	}
	if (!n) {
		tw_uncharge(wh, 1);
		*err = -EAGAIN;
		return NULL;
	}
	return tw_index_insert(&wh->idx, n, 0);
}

/**
 * tw_node_free() - remove an id whose node is on no list
 * @wh: the wheel, locked
 * @e: the id's entry
 */
void tw_node_free(struct twheel *wh, struct tw_ent *e)
{
	struct tw_node *n = e->node;

	tw_index_remove(&wh->idx, e);
	kmem_cache_free(tw_node_cache, n);
	tw_uncharge(wh, 1);
}
