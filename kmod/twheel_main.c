// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: a hierarchical timing wheel behind a character device.
 *
 * Every open() of /dev/twheel is an independent wheel of 64-bit ids that a
 * process touches with write(), arms/cancels/queries with ioctl() and whose
 * expirations it reads as records with read()/poll()/epoll.  The algorithm
 * lives in twheel_core.c; this file is the device: locking, memory, the
 * clock, the hrtimer and the user ABI of uapi/linux/twheel.h.
 *
 * Locking rules
 * -------------
 * wh->lock, a spinlock taken with softirqs off (tw_spin_lock()), protects
 * the wheel, the index, the configuration and the counters of one fd.  No
 * hold sleeps (below), so a spinlock serves, and the BPF touch takes it
 * from softirq context (below).  Otherwise it is taken in process context,
 * by the tasks that use the fd, and the work a wheel defers is theirs to
 * do: the hrtimer callback only sets wh->due and wakes the wait queue (or,
 * with events queued unread, queues the work item, below), and the next
 * call on the fd that takes the lock (read, poll, write, ARM, CANCEL,
 * QUERY, GET_STATS) first runs the expiry that is due (tw_run_due()), at
 * its caller's priority and charged to its caller's cgroup.  One work
 * item remains, on an unbound worker at normal priority, for what no call
 * may be there to do: growing the index for a nowait writer that waits for
 * EPOLLOUT, finishing an index resize that the calls stopped driving, and
 * the first TW_WORK_NODES nodes of the expiry that falls due while events
 * are queued unread (a wake then could be a false edge for an
 * edge-triggered epoll): an event it queues is the edge, and if it queues
 * none, a wake hands the rest to the waiters, whose poll or read pays for
 * it (tw_work_fn()).
 *
 * The BPF touch, bpf_twheel_touch() from XDP and TC programs in softirq
 * context, takes wh->lock for one touch of an id the wheel has, with
 * write()'s semantics, in O(1): it runs none of the expiry that is due
 * (that stays the owner's, as above), allocates nothing and creates no
 * id.  With expiry due, the id it touches may sit in a due slot with a
 * deadline passed; its deadline moves anyway (a touch before the expiry
 * ran), and the owner's next run re-slots it.  An event it discards may
 * leave the queue empty while the work item is queued for it: the work
 * item then wakes the waiters as the hrtimer would have.  The kfunc finds
 * the wheel by its handle in tw_exports (an xarray, with its own lock)
 * under RCU.
 *
 * Exceptions: the wait queue has its own lock, timer_fires is written only
 * by the hrtimer callback, wh->due is set by it and cleared under the lock,
 * the per-user and global id counts are atomics, and tw_users_lock (a
 * spinlock) protects the table of per-user entries and is never held with
 * wh->lock.
 *
 * Every critical section is bounded, whatever the number of ids: write(),
 * ARM, CANCEL, DUMP and read() work in chunks of at most TW_CHUNK entries
 * (8..64), the expiry moves at most TW_EXPIRE_BATCH nodes per hold, and
 * the index is resized incrementally (a few entries per chunk).  The lock
 * is dropped between chunks, and a pending signal ends a long call there
 * with the exact count done.
 *
 * A caller with IOCB_NOWAIT (io_uring's inline attempt, RWF_NOWAIT) never
 * waits for memory, for an event or for an index resize: it allocates
 * without reclaim, and an index growth it cannot do so is left to the work
 * (tw_grow(), charged to the opener's memory cgroup); wh->full, written
 * under the lock and read by poll() without it, keeps EPOLLOUT off until
 * it is done.  It does take wh->lock: no hold sleeps (nodes come from the
 * cache without reclaim, or are allocated unlocked by tw_spare(); index
 * tables are allocated with the lock dropped, and the index's room is
 * judged again once it is back, tw_maintain(); tables let go of are freed
 * after the unlock, tw_free_later(); user memory is only copied with page
 * faults disabled), so waiting for the lock is waiting for a bounded run
 * of CPU work; a trylock lost to another call would instead bounce an
 * io_uring request through its poll again and again, then hand it to a
 * worker thread.
 *
 * No user memory is touched with the lock held, with one exception that
 * cannot sleep: read() copies events to the user with page faults disabled,
 * so that an event leaves the queue only once it is in the user's buffer.
 * When that copy stops short, the lock is dropped, the page is faulted in
 * and the copy is retried; if the page cannot be faulted in, every event not
 * copied is still queued, in order.  Ids and ARM entries are copied in
 * before the lock is taken; results are copied out after it is dropped.
 *
 * Teardown: release() marks the wheel closing (so nothing re-arms the
 * hrtimer or queues the work, and a BPF touch gets -ESRCH), ends the BPF
 * export (out of tw_exports, then an RCU grace period: no kfunc is in
 * the wheel any more), cancels the hrtimer, then the work, then frees
 * every node without the lock (nothing else can reach the wheel any
 * more).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/memcontrol.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/overflow.h>
#include <linux/pagemap.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/time_namespace.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <linux/twheel.h>

#include "twheel_bpf.h"
#include "twheel_compat.h"
#include "wheel.h"

#define CREATE_TRACE_POINTS
#include "twheel_trace.h"

#ifndef TWHEEL_VERSION
#define TWHEEL_VERSION "0.1.0"
#endif

/* The batches, TW_CHUNK and the others, are the core's: twheel_core.h */
#define TW_DUMP_CHUNK		8	/* DUMP entries per lock hold */
#define TW_READ_CHUNK		12	/* events per read() lock hold (stack) */
#define TW_READ_FAULT_IN	65536	/* read() buffer checked at a time */
#define TW_DUMP_SLOTS		4096	/* index slots per table per DUMP hold */
/*
 * The work item's budget: at most TW_WORK_HOLDS holds of TW_EXPIRE_BATCH
 * index entries a run, and a run every TW_WORK_DELAY while a resize is
 * left to it; TW_WORK_NODES nodes of expiry each time the hrtimer finds
 * it due while events are unread (tw_work_fn()).
 */
#define TW_WORK_HOLDS		16
#define TW_WORK_NODES		TW_CHUNK
#define TW_WORK_DELAY		max(1UL, msecs_to_jiffies(10))
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

static_assert(TWHEEL_DEADLINE_MAX == KTIME_MAX);
static_assert(TWHEEL_DEADLINE_MAX / TWHEEL_TICK_MIN_NS + 1 < TW_TICKS_MAX);
static_assert(sizeof(struct tw_node) == 2 * sizeof(void *) + 16);
static_assert(sizeof(struct twheel_config) == 64);
static_assert(sizeof(struct twheel_arm) == 32);
static_assert(sizeof(struct twheel_batch) == 40);
static_assert(sizeof(struct twheel_query) == 32);
static_assert(sizeof(struct twheel_stats) == 160);
static_assert(sizeof(struct twheel_dump) == 48);
static_assert(sizeof(struct twheel_event) == 32);
/* the index takes every id a cap allows (64 bits: memory ends it on 32) */
static_assert(BITS_PER_LONG == 32 ||
	      (u64)TW_IDX_MAX * 9 >= TWHEEL_MAX_IDS_LIMIT * 10);

/*
 * A zeroed index table of @size slots.  kvmalloc() refuses more than
 * INT_MAX bytes (89 M slots, some 70 M ids): a larger table, on the way to
 * TWHEEL_MAX_IDS_LIMIT ids, comes from vmalloc() itself, charged alike.
 */
static struct tw_ent *tw_tab_alloc(unsigned long size, gfp_t gfp)
{
	size_t bytes;

	if (check_mul_overflow(size, sizeof(struct tw_ent), &bytes))
		return NULL;
	if (bytes <= INT_MAX)
		return kvzalloc(bytes, gfp);
	return __vmalloc(bytes, gfp | __GFP_ZERO);
}

/*
 * The limits across fds.  They are sysctls, fs.twheel.max_user_ids and
 * fs.twheel.max_ids_total (/proc/sys/fs/twheel/), as epoll's and inotify's
 * are: written at run time, range-checked (TW_LIMIT_MIN to TW_LIMIT_MAX:
 * 0 is no longer a value, it meant "the default" at load but "no id" when
 * written later).  The module parameters of the same names only set them
 * at load (0 or absent: the default); after it they are read-only and show
 * the value in force.
 */
static unsigned long max_user_ids;
module_param(max_user_ids, ulong, 0444);
MODULE_PARM_DESC(max_user_ids,
		 "Most ids one user may hold across all its twheel fds, at load (default: 10% of RAM at 64 B per id, at least 1048576); then sysctl fs.twheel.max_user_ids");

static unsigned long max_ids_total;
module_param(max_ids_total, ulong, 0444);
MODULE_PARM_DESC(max_ids_total,
		 "Most ids held by all twheel fds together, at load (default: 25% of RAM at 64 B per id, at least 1048576); then sysctl fs.twheel.max_ids_total");

static unsigned long tw_limit_min = 1;
static unsigned long tw_limit_max = LONG_MAX;	/* the counts are atomic_long_t */

static struct ctl_table tw_sysctls[] = {
	{
		.procname	= "max_user_ids",
		.data		= &max_user_ids,
		.maxlen		= sizeof(max_user_ids),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &tw_limit_min,
		.extra2		= &tw_limit_max,
	},
	{
		.procname	= "max_ids_total",
		.data		= &max_ids_total,
		.maxlen		= sizeof(max_ids_total),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &tw_limit_min,
		.extra2		= &tw_limit_max,
	},
	TW_CTL_TABLE_END
};

static struct ctl_table_header *tw_sysctl_header;

static ushort dev_mode = 0666;
module_param(dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode,
		 "Mode of /dev/twheel (default 0666: each fd is private and its memory is charged to the caller's memory cgroup and per-user cap)");

static atomic_long_t tw_total_ids = ATOMIC_LONG_INIT(0);
static atomic64_t tw_wheel_ids = ATOMIC64_INIT(0);
static atomic_t tw_fds = ATOMIC_INIT(0);
/*
 * One node per id, 32 bytes, payload included (struct tw_node).  The id's
 * current deadline and state are in its index entry (struct tw_ent): a
 * touch that only moves the deadline later writes the entry alone.  Each
 * wheel owns one more node, the sentinel of its ready queue
 * (tw_wheel_sentinel()).
 */
static struct kmem_cache *tw_node_cache;

/* Per-user id counts, for max_user_ids. */
struct tw_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t ref;
	atomic_long_t ids;
};

static DEFINE_HASHTABLE(tw_users, 6);
static DEFINE_SPINLOCK(tw_users_lock);

struct twheel {
	spinlock_t lock;	/* see the locking rules above */
	struct twheel_config cfg;
	struct tw_index idx;
	wait_queue_head_t wq;
	struct hrtimer timer;
	u64 timer_at;		/* when the hrtimer fires; KTIME_MAX: not armed */
	bool due;		/* the hrtimer fired: expiry work is due */
	struct delayed_work work;	/* see tw_work_fn() */
	struct tw_user *user;
	struct mem_cgroup *memcg;	/* the opener's, charged by the work */
	u64 wid;		/* fdinfo's wheel_id, in tracepoints too */
	s64 off_mono, off_boot;	/* the opener's time namespace (tw_time_in()) */
	bool closing;
	struct tw_ent *garbage;	/* an old index table, freed unlocked */
	bool wake;		/* events were queued under the lock */
	bool wake_out;		/* the index grew for a nowait writer */
	unsigned long grow;	/* the work is to make room for as many ids */
	bool full;		/* a nowait writer waits for tw_grow() */
	u64 timer_fires;
	u64 touches, arms, cancels, expirations, delivered, discarded;
	u64 runs, hold_max;
	u64 work_runs, work_ns;	/* the work item's runs and time */
	unsigned long work_mpos;	/* the resize's position at its last run */
	u64 handle;		/* BPF export handle, 0 until exported */
	u64 bpf_touches, bpf_absent;
	struct tw_wheel w;	/* last: it holds the slot array */
};

static struct tw_user *tw_user_get(kuid_t uid)
{
	struct tw_user *u, *new = NULL;

again:
	spin_lock(&tw_users_lock);
	hash_for_each_possible(tw_users, u, node, __kuid_val(uid)) {
		if (uid_eq(u->uid, uid)) {
			refcount_inc(&u->ref);
			spin_unlock(&tw_users_lock);
			kfree(new);
			return u;
		}
	}
	if (new) {
		hash_add(tw_users, &new->node, __kuid_val(uid));
		spin_unlock(&tw_users_lock);
		return new;
	}
	spin_unlock(&tw_users_lock);
	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return NULL;
	new->uid = uid;
	refcount_set(&new->ref, 1);
	atomic_long_set(&new->ids, 0);
	goto again;
}

static void tw_user_put(struct tw_user *u)
{
	bool last;

	spin_lock(&tw_users_lock);
	last = refcount_dec_and_test(&u->ref);
	if (last)
		hash_del(&u->node);
	spin_unlock(&tw_users_lock);
	if (last)
		kfree(u);
}

static u64 tw_now(const struct twheel *wh)
{
	return wh->cfg.clockid == CLOCK_BOOTTIME ? ktime_get_boottime_ns() :
						    ktime_get_ns();
}

/*
 * Time namespaces, as timerfd has them: every absolute time that crosses
 * the ABI (ARM with TWHEEL_ARM_ABSTIME, the deadline_ns and expired_ns of
 * events, QUERY, DUMP) is on the clock of the time namespace the fd was
 * opened in; the wheel itself runs on the host's.  The offsets are taken
 * at open: the namespace's clocks cannot change once it has a process.
 */
static void tw_timens_init(struct twheel *wh)
{
#ifdef CONFIG_TIME_NS
	const struct timens_offsets *o = &current->nsproxy->time_ns->offsets;

	wh->off_mono = timespec64_to_ns(&o->monotonic);
	wh->off_boot = timespec64_to_ns(&o->boottime);
#endif
}

static s64 tw_timens_off(const struct twheel *wh)
{
	return wh->cfg.clockid == CLOCK_BOOTTIME ? wh->off_boot : wh->off_mono;
}

/*
 * A deadline on the fd's clock to the wheel's: "never" stays never, and a
 * time before the host's zero is the host's zero (a passed deadline).
 */
static u64 tw_time_in(const struct twheel *wh, u64 t)
{
	s64 off = tw_timens_off(wh);

	if (t >= KTIME_MAX)
		return KTIME_MAX;
	if (off >= 0)
		return t > off ? t - off : 0;
	return t - off >= KTIME_MAX ? KTIME_MAX : t - off;
}

/* A time on the wheel's clock to the fd's; monotonic, so order is kept. */
static u64 tw_time_out(const struct twheel *wh, u64 t)
{
	s64 off = tw_timens_off(wh);

	if (t >= KTIME_MAX)
		return KTIME_MAX;
	if (off >= 0)
		return t + off >= KTIME_MAX ? KTIME_MAX : t + off;
	return t > -off ? t + off : 0;
}

/* now + timeout, saturating at the largest deadline */
static u64 tw_deadline(u64 now, u64 timeout)
{
	return timeout > KTIME_MAX - now ? KTIME_MAX : now + timeout;
}

static bool tw_has_events(struct twheel *wh)
{
	return READ_ONCE(wh->w.nr_ready) != 0;
}

/*
 * Whether expiry is due, for a waiter: read before tw_has_events(), as
 * tw_run_due() clears it after queueing the events.
 */
static bool tw_due(struct twheel *wh)
{
	/* pairs with the smp_store_release() of tw_run_due() */
	return smp_load_acquire(&wh->due);
}

/*
 * The hrtimer found work due.  It does none of it: it wakes the waiters,
 * whose poll or read then does it (tw_run_due()), or hands it to the work
 * item while events are queued unread (below).  The wake carries no
 * poll key: EPOLLIN is not claimed before an event is queued, so epoll,
 * aio and io_uring call poll() to learn the mask, and poll() runs the
 * expiry first.
 */
static enum hrtimer_restart tw_timer_fn(struct hrtimer *t)
{
	struct twheel *wh = container_of(t, struct twheel, timer);

	WRITE_ONCE(wh->timer_fires, wh->timer_fires + 1);
	WRITE_ONCE(wh->due, true);
	/*
	 * With events queued and unread, a wake would make an edge-triggered
	 * epoll that was told of them poll again and report them as a new
	 * edge: the work item runs a little of this expiry first, and wakes
	 * for an event it queues, or hands the rest over (tw_work_fn()).
	 */
	if (!tw_has_events(wh))
		wake_up(&wh->wq);
	else
		mod_delayed_work(system_dfl_wq, &wh->work, 0);
	return HRTIMER_NORESTART;
}

/*
 * Program the hrtimer for the next slot that holds work, or stop it.  Not
 * while expiry work is due: the call that finishes it re-arms.
 */
static void tw_rearm(struct twheel *wh)
{
	u64 tick = wh->w.tick_ns, t, at;

	lockdep_assert_held(&wh->lock);
	if (wh->closing || READ_ONCE(wh->due))
		return;
	if (!tw_wheel_next(&wh->w, &t)) {
		if (wh->timer_at != KTIME_MAX) {
			hrtimer_try_to_cancel(&wh->timer);
			wh->timer_at = KTIME_MAX;
		}
		return;
	}
	at = t > div64_u64(KTIME_MAX, tick) ? KTIME_MAX : t * tick;
	if (at >= wh->timer_at)
		return;
	wh->timer_at = at;
	hrtimer_start(&wh->timer, ns_to_ktime(at), HRTIMER_MODE_ABS);
}

/*
 * Keep @old, an index table a migration let go of, to free unlocked: the
 * tables to free are chained through their first bytes (a table has at
 * least TW_IDX_MIN entries, and nothing reads a retired one).
 */
static void tw_free_later(struct twheel *wh, struct tw_ent *old)
{
	if (old) {
		*(struct tw_ent **)old = wh->garbage;
		wh->garbage = old;
	}
}

/*
 * Take the wheel's lock.  Softirqs are off while it is held, so that
 * softirq context may take it too (see the locking rules above).
 */
static void tw_spin_lock(struct twheel *wh)
	__acquires(&wh->lock)
{
	spin_lock_bh(&wh->lock);
	tw_compat_rt_acquire(&wh->lock);
}

/* Drop the lock, then free what was unlinked under it. */
static void tw_spin_unlock(struct twheel *wh)
	__releases(&wh->lock)
{
	struct tw_ent *garbage = wh->garbage;

	wh->garbage = NULL;
	spin_unlock_bh(&wh->lock);
	tw_compat_rt_release(&wh->lock);
	while (garbage) {
		struct tw_ent *next = *(struct tw_ent **)garbage;

		kvfree(garbage);
		garbage = next;
	}
}

/* The index switched to a new table; the work finishes if the calls stop. */
static void tw_resize_started(struct twheel *wh)
{
	wh->work_mpos = 0;
	queue_delayed_work(system_dfl_wq, &wh->work, TW_WORK_DELAY);
}

/*
 * Make room for a batch of @ids ids, by the core's protocol
 * (tw_index_upkeep()): a resize the batch would overfill is finished
 * first, in bounded holds; a new table is allocated with the lock dropped,
 * and the protocol asked again once the lock is back, since other batches
 * may have run meanwhile.  Leaves room for the batch unless a table could
 * not be had (the batch's inserts then fail with ENOMEM).
 */
static void tw_maintain(struct twheel *wh, unsigned long ids)
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
				tw_spin_unlock(wh);
				cond_resched();
				tw_spin_lock(wh);
			}
			break;
		default:	/* TW_UPKEEP_ALLOC */
			tw_spin_unlock(wh);
			tab = tw_tab_alloc(size, TW_GFP_GROW);
			tw_spin_lock(wh);
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

/* A nowait writer found no room for @ids: EPOLLOUT off until tw_grow(). */
static void tw_wait_room(struct twheel *wh, unsigned long ids)
{
	WRITE_ONCE(wh->full, true);
	tw_grow_later(wh, ids);
}

/*
 * tw_maintain() for a caller that must not sleep: migrate as much, grow
 * the index inline only if a small table can be had without reclaim, and
 * otherwise leave the growth to the work.  New ids then use the room left
 * below 15/16 (tw_index_room()) until the work has grown the table.
 */
static void tw_maintain_nowait(struct twheel *wh, unsigned long ids)
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

/*
 * The work's share of a nowait writer's growth, with the lock held (it may
 * drop it): grow as a blocking writer would, charged to the opener's memory
 * cgroup, then let writers waiting in poll for EPOLLOUT retry, even if the
 * table could not be had (the retry then reports the error).
 */
static void tw_grow(struct twheel *wh)
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

/* Wake the pollers of what the last lock hold changed; before the unlock. */
static __poll_t tw_wake_mask(struct twheel *wh)
{
	__poll_t mask = 0;

	if (wh->wake)
		mask |= EPOLLIN | EPOLLRDNORM;
	if (wh->wake_out)
		mask |= EPOLLOUT | EPOLLWRNORM;
	wh->wake = false;
	wh->wake_out = false;
	return mask;
}

static void tw_unlock(struct twheel *wh)
	__releases(&wh->lock)
{
	__poll_t wake;

	tw_rearm(wh);
	wake = tw_wake_mask(wh);
	tw_spin_unlock(wh);
	if (wake)
		wake_up_poll(&wh->wq, wake);
}

/* Trace the events queued since @mark (tw_ready_mark()). */
static void tw_trace_expired(struct twheel *wh, struct tw_node *mark)
{
	struct tw_node *n;

	for (n = tw_ready_since(&wh->w, mark); n; n = tw_ready_next(&wh->w, n))
		trace_twheel_expire(wh->wid, n->id,
				    tw_ent_deadline(tw_index_find(&wh->idx,
								  n->id)),
				    n->expired);
}

/*
 * One bounded hold of expiry work: advance the wheel to now by at most
 * @nodes nodes, and migrate as many index entries if a resize is under
 * way.  Returns true if due work remains.
 */
static bool tw_expire_batch(struct twheel *wh, bool wake, unsigned int nodes)
{
	unsigned int budget = nodes;
	unsigned long before = wh->w.nr_ready, expired;
	struct tw_node *mark = tw_ready_mark(&wh->w);
	u64 now, held, t0 = ktime_get_ns();
	bool more;

	wh->runs++;
	now = tw_now(wh);
	more = tw_wheel_advance(&wh->w, now, &budget);
	expired = wh->w.nr_ready - before;
	/*
	 * New events wake the other waiters (another reader, an epoll that
	 * is not the caller), unless poll() runs the batch: the hrtimer's
	 * wake reached every waiter there was then, and a wake would reach
	 * the poller itself and report an edge-triggered epoll's event twice.
	 */
	if (expired) {
		wh->expirations += expired;
		wh->wake |= wake;
		if (trace_twheel_expire_enabled())
			tw_trace_expired(wh, mark);
	}
	tw_free_later(wh, tw_index_migrate(&wh->idx, nodes));
	held = ktime_get_ns() - t0;
	wh->hold_max = max(wh->hold_max, held);
	trace_twheel_tick(wh->wid, now, expired, nodes - budget, held, more);
	return more;
}

/* Between two bounded holds: let the others have the lock and the CPU. */
static void tw_relock(struct twheel *wh)
	__must_hold(&wh->lock)
{
	tw_unlock(wh);
	cond_resched();
	tw_spin_lock(wh);
}

/*
 * The expiry work that the hrtimer found due, done by the caller, with the
 * lock held: in holds of one batch (tw_expire_batch()), dropping the lock
 * between them.  @all: until nothing is due; else only until an event is
 * queued, for a reader that takes it and comes back for the rest once the
 * queue is empty.  @wake: the events wake the waiters (not from poll(),
 * see tw_expire_batch()).  The hrtimer is re-armed when nothing is due any more
 * (tw_rearm(), in tw_unlock()).  A process that neither polls nor reads
 * pays at its next call for all that fell due since.
 */
static void tw_run_due(struct twheel *wh, bool all, bool wake)
{
	lockdep_assert_held(&wh->lock);
	while (READ_ONCE(wh->due) && !wh->closing) {
		wh->timer_at = KTIME_MAX;	/* it fired */
		if (!tw_expire_batch(wh, wake, TW_EXPIRE_BATCH)) {
			/*
			 * After the events: a waiter that reads due false
			 * (tw_due()) then sees them.  A fire since then that
			 * this clears is not lost: tw_rearm() starts the
			 * hrtimer again for its slot, now due at once.
			 */
			/* pairs with the smp_load_acquire() of tw_due() */
			smp_store_release(&wh->due, false);
			break;
		}
		if (!all && tw_has_events(wh))
			break;
		tw_relock(wh);
	}
}

/* Take the lock, and do the expiry work that is due. */
static void tw_lock_due(struct twheel *wh)
	__acquires(&wh->lock)
{
	tw_spin_lock(wh);
	tw_run_due(wh, true, true);
}

/* Take the lock for a chunk of @ids operations; returns the time. */
static u64 tw_lock(struct twheel *wh, unsigned long ids)
	__acquires(&wh->lock)
{
	u64 now;

	tw_lock_due(wh);
	tw_maintain(wh, ids);
	now = tw_now(wh);
	tw_wheel_catch_up(&wh->w, now);
	return now;
}

/*
 * tw_lock() for an IOCB_NOWAIT caller about to add up to @ids ids: false,
 * without allocating with reclaim, if the index has no room for them until
 * the work grows it (poll() reports EPOLLOUT again then).  The lock is
 * held on return either way.
 */
static bool tw_lock_nowait(struct twheel *wh, u64 ids, u64 *now)
	__acquires(&wh->lock)
{
	tw_lock_due(wh);
	/* ids past max_ids fail with ENOSPC, they need no room */
	ids = min(ids, wh->cfg.max_ids - wh->idx.nr);
	tw_maintain_nowait(wh, ids);
	if (!tw_index_room_for(&wh->idx, ids)) {
		tw_wait_room(wh, ids);
		return false;
	}
	*now = tw_now(wh);
	tw_wheel_catch_up(&wh->w, *now);
	return true;
}

static void tw_uncharge(struct twheel *wh, long n)
{
	atomic_long_sub(n, &wh->user->ids);
	atomic_long_sub(n, &tw_total_ids);
}

/* A node for @id, with data 0. */
static struct tw_node *tw_node_alloc(u64 id, gfp_t gfp)
{
	struct tw_node *n = kmem_cache_alloc(tw_node_cache, gfp);

	if (n) {
		n->id = id;
		n->data = 0;
	}
	return n;
}

/*
 * What a write() or an ARM carries from one lock hold to the next: nothing
 * sleeps under the lock, so a node the cache cannot give without reclaim
 * is allocated unlocked (tw_spare()) and the id tried again.
 */
struct tw_call {
	struct tw_node *spare;	/* for the next new id */
	bool nowait;		/* IOCB_NOWAIT: no reclaim at all */
};

/* A spare node, with the lock dropped: 0 or -ENOMEM. */
static int tw_spare(struct tw_call *c)
{
	c->spare = tw_node_alloc(0, TW_GFP_GROW);
	return c->spare ? 0 : -ENOMEM;
}

/*
 * A new node for @id, in the index but on no list; returns its entry.
 * Fails with -EAGAIN for want of a node the cache could give only with
 * reclaim: a blocking caller then gets one from tw_spare() and tries again.
 */
static struct tw_ent *tw_node_new(struct twheel *wh, u64 id,
				  struct tw_call *c, int *err)
{
	struct tw_node *n;

	if (wh->idx.nr >= wh->cfg.max_ids) {
		*err = -ENOSPC;
		return NULL;
	}
	if (atomic_long_inc_return(&wh->user->ids) > READ_ONCE(max_user_ids)) {
		atomic_long_dec(&wh->user->ids);
		*err = -ENOSPC;
		return NULL;
	}
	if (atomic_long_inc_return(&tw_total_ids) > READ_ONCE(max_ids_total)) {
		tw_uncharge(wh, 1);
		*err = -ENOSPC;
		return NULL;
	}
	/*
	 * A blocking caller grew the index before the chunk: this fails only
	 * on ENOMEM.  A nowait one waits for the work to grow it.
	 */
	if (!tw_index_room(&wh->idx)) {
		tw_uncharge(wh, 1);
		*err = -ENOMEM;
		if (c->nowait) {
			tw_wait_room(wh, TW_CHUNK);
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

/* Remove @e's id: its node is on no list. */
static void tw_node_free(struct twheel *wh, struct tw_ent *e)
{
	struct tw_node *n = e->node;

	tw_index_remove(&wh->idx, e);
	kmem_cache_free(tw_node_cache, n);
	tw_uncharge(wh, 1);
}

/* Count what tw_wheel_set() or tw_wheel_place() did to @e's id. */
static void tw_count_set(struct twheel *wh, struct tw_ent *e,
			 unsigned int did, u64 deadline, u64 now)
{
	if (did & TW_SET_DISCARDED)
		wh->discarded++;
	if (did & TW_SET_EXPIRED) {
		trace_twheel_expire(wh->wid, e->id, deadline, now);
		wh->expirations++;
		wh->wake = true;
	}
}

/*
 * Set @id's deadline (and data, unless @data is NULL), creating it if
 * absent, by the core's policy (tw_wheel_set(): a later deadline of an
 * armed id is only written to its index entry), and count what it did.
 * Returns the entry, valid until the index next changes, or an ERR_PTR; on
 * error nothing has changed.
 */
static struct tw_ent *tw_set(struct twheel *wh, u64 id, u64 deadline,
			     const u64 *data, bool noreplace, struct tw_call *c,
			     u64 now)
{
	struct tw_ent *e = tw_index_find(&wh->idx, id);
	unsigned int did;
	int err;

	if (e && noreplace)
		return ERR_PTR(-EEXIST);
	if (e) {
		did = tw_wheel_set(&wh->w, e, deadline, now);
	} else {
		e = tw_node_new(wh, id, c, &err);
		if (!e)
			return ERR_PTR(err);
		did = tw_wheel_place(&wh->w, e, deadline, now);
	}
	if (data)
		e->node->data = *data;
	tw_count_set(wh, e, did, deadline, now);
	return e;
}

/*
 * Copy up to @n items of @size from user memory; returns how many whole
 * items arrived (items before a fault are kept), or -EFAULT for none.
 */
static long tw_copy_in(void *dst, const void __user *src, unsigned long n,
		       size_t size)
{
	unsigned long left = copy_from_user(dst, src, n * size);

	n = (n * size - left) / size;
	return n ? n : -EFAULT;
}

/*
 * Whether a long call should stop between chunks, having done @done: for
 * a signal, not for task_work (TIF_NOTIFY_SIGNAL, which signal_pending()
 * counts too): io_uring queues that on its submitter, and stopping for it
 * would only cut io_uring's own writes short.
 */
static int tw_interrupted(bool done)
{
	if (fatal_signal_pending(current))
		return -EINTR;
	if (task_sigpending(current))
		return done ? -EINTR : -ERESTARTSYS;
	return 0;
}

/*
 * Between two chunks of a write() or an ARM, having @done some and with
 * @more to do: a node allocated unlocked for the id that wanted one (@err
 * -EAGAIN from a blocking call: the id is tried again), a signal to stop
 * at, or a chance to reschedule.  Returns what ends the call, or 0.
 */
static int tw_between_chunks(struct tw_call *c, int err, bool done,
			     bool more)
{
	if (err == -EAGAIN && !c->nowait)
		err = tw_spare(c);
	if (err || !more)
		return err;
	err = tw_interrupted(done);
	if (!err)
		cond_resched();
	return err;
}

/* The end of a write() or an ARM: a spare node left over is freed. */
static void tw_call_end(struct tw_call *c)
{
	if (c->spare)
		kmem_cache_free(tw_node_cache, c->spare);
}

/*
 * Touch every id of @from, in chunks.  Ids may straddle iovecs.  The count
 * returned is that of the ids that took effect, exactly: a fault, an error
 * or a signal between chunks ends the write there.  With IOCB_NOWAIT
 * (io_uring, RWF_NOWAIT) nothing waits for memory: ids that need more than
 * the caller can have without reclaim end it with the ids done, or -EAGAIN
 * for none; poll() reports EPOLLOUT again once the index has room.
 */
static ssize_t tw_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct twheel *wh = iocb->ki_filp->private_data;
	struct tw_call c = { .nowait = iocb->ki_flags & IOCB_NOWAIT };
	size_t count = iov_iter_count(from), done = 0;
	u64 ids[TW_CHUNK];
	int err = 0;

	if (count % sizeof(u64))
		return -EINVAL;
	while (done < count) {
		size_t want = min(count - done, sizeof(ids));
		size_t got = copy_from_iter(ids, want, from);
		long n = got / sizeof(u64), i;
		u64 now, deadline;

		if (!n) {
			err = -EFAULT;
			break;
		}
		if (c.nowait) {
			/* room for the whole write: a short count is rare */
			if (!tw_lock_nowait(wh, done ? n : (count - done) / sizeof(u64),
					    &now)) {
				tw_spin_unlock(wh);
				iov_iter_revert(from, got);
				err = -EAGAIN;
				break;
			}
		} else {
			now = tw_lock(wh, n);
		}
		deadline = tw_deadline(now, wh->cfg.timeout_ns);
		for (i = 0; i < n; i++) {
			struct tw_ent *e = tw_set(wh, ids[i], deadline, NULL,
						  false, &c, now);

			if (IS_ERR(e)) {
				err = PTR_ERR(e);
				break;
			}
			if (trace_twheel_touch_enabled())
				trace_twheel_touch(wh->wid, e->id, deadline,
						   e->node->data);
		}
		wh->touches += i;
		tw_unlock(wh);
		done += i * sizeof(u64);
		/* what was copied but not done stays in @from */
		if (got > i * sizeof(u64))
			iov_iter_revert(from, got - i * sizeof(u64));
		err = tw_between_chunks(&c, err, done, done < count);
		if (err || (got < want && i == n))
			break;
	}
	tw_call_end(&c);
	return done ? done : err;
}

/*
 * Events are copied only into memory already faulted in (without writing
 * to it), whole records at a time, with page faults disabled under the
 * lock: an event leaves the queue only once it is in the user's buffer, and
 * nothing is written past the records read() returns.  Records may straddle
 * iovecs.  A read returns once it has copied some events and the queue is
 * empty; with O_NONBLOCK or IOCB_NOWAIT it never waits for an event.
 */
static ssize_t tw_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct twheel *wh = file->private_data;
	bool nowait = iocb->ki_flags & IOCB_NOWAIT;
	struct twheel_event ev[TW_READ_CHUNK];
	struct tw_ent *ent[TW_READ_CHUNK];
	const size_t sz = sizeof(ev[0]);
	size_t count = iov_iter_count(to), done = 0, safe = 0;
	int err;

	if (count < sz)
		return -EINVAL;
	count -= count % sz;
	while (done < count) {
		unsigned long n = 0, ok, i;
		struct tw_node *node;
		size_t copied;

		if (tw_due(wh) && !tw_has_events(wh)) {
			tw_spin_lock(wh);
			tw_run_due(wh, false, true);
			tw_unlock(wh);
		}
		if (!tw_has_events(wh)) {
			if (done)
				break;
			if (nowait || (file->f_flags & O_NONBLOCK))
				return -EAGAIN;
			err = wait_event_interruptible(wh->wq, tw_due(wh) ||
						       tw_has_events(wh));
			if (err)
				return err;
			continue;
		}
		if (safe < sz) {
			size_t want = min_t(size_t, count - done, TW_READ_FAULT_IN);

			safe = want - fault_in_iov_iter_writeable(to, want);
			safe -= safe % sz;
			if (!safe)
				break;
		}
		tw_spin_lock(wh);
		for (node = tw_ready_first(&wh->w); node;
		     node = tw_ready_next(&wh->w, node)) {
			if (n == TW_READ_CHUNK || (n + 1) * sz > safe)
				break;
			ent[n] = tw_index_find(&wh->idx, node->id);
			ev[n].id = node->id;
			ev[n].data = node->data;
			ev[n].deadline_ns = tw_time_out(wh, tw_ent_deadline(ent[n]));
			ev[n].expired_ns = tw_time_out(wh, node->expired);
			n++;
		}
		pagefault_disable();
		copied = copy_to_iter(ev, n * sz, to);
		pagefault_enable();
		ok = copied / sz;
		/* a page went away: the part of a record stays unread */
		if (copied % sz)
			iov_iter_revert(to, copied % sz);
		for (i = 0; i < ok; i++) {
			node = tw_wheel_pop(&wh->w);
			/*
			 * Removing an earlier event's entry may have shifted
			 * this one back a slot: look it up again only then.
			 */
			if (ent[i]->node != node)
				ent[i] = tw_index_find(&wh->idx, node->id);
			tw_node_free(wh, ent[i]);
		}
		wh->delivered += ok;
		if (nowait)
			tw_maintain_nowait(wh, 0);
		else
			tw_maintain(wh, ok);
		tw_spin_unlock(wh);
		done += ok * sz;
		safe = ok < n ? 0 : safe - ok * sz;	/* a page went away */
		if (!nowait)
			cond_resched();
	}
	return done ? done : -EFAULT;
}

static __poll_t tw_poll(struct file *file, struct poll_table_struct *wait)
{
	struct twheel *wh = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &wh->wq, wait);
	/* the expiry that is due, before the answer (tw_timer_fn()) */
	if (tw_due(wh) && !tw_has_events(wh)) {
		tw_spin_lock(wh);
		tw_run_due(wh, true, false);
		tw_unlock(wh);
	}
	if (tw_has_events(wh))
		mask |= EPOLLIN | EPOLLRDNORM;
	/* false only while a nowait writer waits for the index to grow */
	if (!READ_ONCE(wh->full))
		mask |= EPOLLOUT | EPOLLWRNORM;
	return mask;
}

/*
 * The work item: what no call on the fd may be there to do.  It grows the
 * index for a nowait writer waiting for EPOLLOUT (tw_grow()), runs the
 * expiry that fell due while events were queued unread (tw_timer_fn()),
 * TW_WORK_NODES nodes of it, for the new edge an edge-triggered epoll
 * waits for (the rest is the owner's: tw_run_due()), and finishes an
 * index resize that the calls stopped driving: while they migrate it (the
 * position moved since the last run), it only looks again TW_WORK_DELAY
 * later, and does at most TW_WORK_HOLDS batches a run.  On an unbound
 * worker at normal priority; its runs and time are in the stats
 * (work_runs, work_ns).
 */
static void tw_work_fn(struct work_struct *work)
{
	struct twheel *wh = container_of(to_delayed_work(work), struct twheel,
					 work);
	struct tw_index *x = &wh->idx;
	u64 t0 = ktime_get_ns(), expired;
	unsigned int holds = 0;
	bool hand_over = false;

	tw_spin_lock(wh);
	if (wh->grow && !wh->closing)
		tw_grow(wh);	/* drops the lock while it allocates */
	/*
	 * Expiry due while events were unread (tw_timer_fn()): one hold of
	 * TW_WORK_NODES nodes, for the edge.  An event queued wakes the
	 * waiters (tw_expire_batch()); if none was and more is due, a wake
	 * without a key hands the rest to them, whose poll or read pays for
	 * it (an edge-triggered epoll may then be told of the old events
	 * again); else it waits for the owner's next call.
	 */
	if (READ_ONCE(wh->due) && tw_has_events(wh) && !wh->closing) {
		wh->timer_at = KTIME_MAX;
		expired = wh->expirations;
		if (!tw_expire_batch(wh, true, TW_WORK_NODES))
			/* pairs with the smp_load_acquire() of tw_due() */
			smp_store_release(&wh->due, false);
		else
			hand_over = wh->expirations == expired;
	} else if (READ_ONCE(wh->due) && !wh->closing) {
		/*
		 * A BPF touch discarded the events since the hrtimer queued
		 * this: no edge to fear, wake as the hrtimer would have.
		 */
		hand_over = true;
	}
	if (x->old && x->mpos == wh->work_mpos) {
		while (x->old && holds++ < TW_WORK_HOLDS && !wh->closing) {
			tw_free_later(wh, tw_index_migrate(x, TW_EXPIRE_BATCH));
			if (x->old)
				tw_relock(wh);
		}
	}
	wh->work_mpos = x->mpos;
	/* under the lock: release() sets closing, then cancels the work */
	if (x->old && !wh->closing)
		queue_delayed_work(system_dfl_wq, &wh->work, TW_WORK_DELAY);
	wh->work_runs++;
	wh->work_ns += ktime_get_ns() - t0;
	tw_unlock(wh);
	if (hand_over)
		wake_up(&wh->wq);
}

static u64 tw_mem_bytes(const struct twheel *wh)
{
	const struct tw_index *x = &wh->idx;
	u64 b = sizeof(*wh) + (u64)(x->size + x->old_size) * sizeof(*x->tab);

	/* a node per id and the ready queue's sentinel */
	return b + ((u64)x->nr + 1) * kmem_cache_size(tw_node_cache);
}

/* The counters; @run: do the expiry that is due first (the fd's user). */
static void tw_get_stats(struct twheel *wh, struct twheel_stats *st, bool run)
{
	memset(st, 0, sizeof(*st));
	tw_spin_lock(wh);
	if (run)
		tw_run_due(wh, true, true);
	st->armed = wh->w.nr_armed;
	st->pending = wh->w.nr_ready;
	st->touches = wh->touches;
	st->arms = wh->arms;
	st->cancels = wh->cancels;
	st->expirations = wh->expirations;
	st->delivered = wh->delivered;
	st->timer_fires = READ_ONCE(wh->timer_fires);
	st->late_max_ns = wh->w.late_max;
	st->mem_bytes = tw_mem_bytes(wh);
	st->discarded = wh->discarded;
	st->reslots = wh->w.reslots;
	st->runs = wh->runs;
	st->hold_max_ns = wh->hold_max;
	st->work_runs = wh->work_runs;
	st->work_ns = wh->work_ns;
	st->bpf_touches = wh->bpf_touches;
	st->bpf_absent = wh->bpf_absent;
	tw_unlock(wh);
}

static int tw_set_config(struct twheel *wh, void __user *arg, size_t usize)
{
	struct twheel_config c;
	int err;

	err = copy_struct_from_user(&c, sizeof(c), arg, usize);
	if (err)
		return err;
	if (c.tick_ns < TWHEEL_TICK_MIN_NS || c.tick_ns > TWHEEL_TICK_MAX_NS ||
	    !c.timeout_ns || c.timeout_ns > TWHEEL_DEADLINE_MAX ||
	    !c.max_ids || c.max_ids > TWHEEL_MAX_IDS_LIMIT ||
	    (c.clockid != CLOCK_MONOTONIC && c.clockid != CLOCK_BOOTTIME) ||
	    c.flags || memchr_inv(c.reserved, 0, sizeof(c.reserved)))
		return -EINVAL;

	tw_spin_lock(wh);
	if ((wh->idx.nr && (c.tick_ns != wh->cfg.tick_ns ||
			    c.clockid != wh->cfg.clockid)) ||
	    c.max_ids < wh->idx.nr) {
		tw_spin_unlock(wh);
		return -EBUSY;
	}
	if (c.clockid != wh->cfg.clockid) {
		hrtimer_cancel(&wh->timer);
		hrtimer_setup(&wh->timer, tw_timer_fn, c.clockid,
			      HRTIMER_MODE_ABS);
		wh->timer_at = KTIME_MAX;
	}
	wh->cfg = c;
	if (!wh->idx.nr)
		tw_wheel_init(&wh->w, c.tick_ns, tw_now(wh), &wh->idx,
			      tw_wheel_sentinel(&wh->w));
	tw_spin_unlock(wh);
	return 0;
}

/*
 * Validate a batch header.  The entries are not checked with access_ok()
 * up front: each chunk is copied on its own, so a fault stops the batch at
 * the exact entry it hits, wherever the buffer lies in the address space.
 */
static int tw_batch_in(const struct twheel_batch *b, size_t esz)
{
	u64 bytes;

	if (b->flags || memchr_inv(b->reserved, 0, sizeof(b->reserved)))
		return -EINVAL;
	if (check_mul_overflow(b->count, (u64)esz, &bytes))
		return -EINVAL;
	return 0;
}

static int tw_batch_out(struct twheel_batch __user *arg, u64 done, int err)
{
	if (put_user(done, &arg->done))
		return -EFAULT;
	return err;
}

static int tw_ioc_arm(struct twheel *wh, struct twheel_batch __user *arg)
{
	struct twheel_arm e[TW_ARM_CHUNK];
	struct tw_call c = {};
	struct twheel_batch b;
	u64 done = 0;
	int err;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	err = tw_batch_in(&b, sizeof(e[0]));
	if (err)
		return tw_batch_out(arg, 0, err);
	while (done < b.count) {
		long n = tw_copy_in(e, u64_to_user_ptr(b.ptr) + done * sizeof(e[0]),
				    min_t(u64, b.count - done, TW_ARM_CHUNK),
				    sizeof(e[0]));
		u64 now;
		long i;

		if (n < 0) {
			err = n;
			break;
		}
		now = tw_lock(wh, n);
		for (i = 0; i < n; i++) {
			u64 deadline = e[i].timeout_ns;
			struct tw_ent *ent;

			if ((e[i].flags & ~TWHEEL_ARM_FLAGS) || e[i].reserved ||
			    deadline > TWHEEL_DEADLINE_MAX) {
				err = -EINVAL;
				break;
			}
			if (!(e[i].flags & TWHEEL_ARM_ABSTIME))
				deadline = tw_deadline(now, deadline ?:
						       wh->cfg.timeout_ns);
			else
				deadline = tw_time_in(wh, deadline);
			ent = tw_set(wh, e[i].id, deadline, &e[i].data,
				     e[i].flags & TWHEEL_ARM_NOREPLACE, &c, now);
			if (IS_ERR(ent)) {
				err = PTR_ERR(ent);
				break;
			}
			trace_twheel_arm(wh->wid, ent->id, deadline,
					 ent->node->data);
		}
		wh->arms += i;
		tw_unlock(wh);
		done += i;
		err = tw_between_chunks(&c, err, done, done < b.count);
		if (err)
			break;
	}
	tw_call_end(&c);
	return tw_batch_out(arg, done, err);
}

static int tw_ioc_cancel(struct twheel *wh, struct twheel_batch __user *arg)
{
	u64 ids[TW_CHUNK], pos = 0, done = 0;
	struct twheel_batch b;
	int err;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	err = tw_batch_in(&b, sizeof(ids[0]));
	if (err)
		return tw_batch_out(arg, 0, err);
	while (pos < b.count) {
		long n = tw_copy_in(ids, u64_to_user_ptr(b.ptr) + pos * sizeof(u64),
				    min_t(u64, b.count - pos, TW_CHUNK),
				    sizeof(u64));
		long i;

		if (n < 0) {
			err = n;
			break;
		}
		tw_lock(wh, n);
		for (i = 0; i < n; i++) {
			struct tw_ent *e = tw_index_find(&wh->idx, ids[i]);

			if (!e)
				continue;
			trace_twheel_cancel(wh->wid, e->id, tw_ent_deadline(e),
					    e->node->data);
			if (tw_wheel_detach(&wh->w, e))
				wh->discarded++;
			tw_node_free(wh, e);
			wh->cancels++;
			done++;
		}
		tw_unlock(wh);
		pos += n;
		/*
		 * Only a fatal signal ends a CANCEL: done counts the ids
		 * removed, so it could not tell the caller where to resume.
		 */
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		cond_resched();
	}
	return tw_batch_out(arg, done, err);
}

static int tw_ioc_query(struct twheel *wh, struct twheel_query __user *arg)
{
	struct twheel_query q;
	struct tw_ent *e;

	if (copy_from_user(&q, arg, sizeof(q)))
		return -EFAULT;
	if (q.reserved)
		return -EINVAL;
	tw_lock_due(wh);	/* an id whose deadline passed is EXPIRED */
	e = tw_index_find(&wh->idx, q.id);
	if (e) {
		q.state = tw_ent_queued(e) ? TWHEEL_STATE_EXPIRED :
					     TWHEEL_STATE_ARMED;
		q.deadline_ns = tw_time_out(wh, tw_ent_deadline(e));
		q.data = e->node->data;
	}
	tw_unlock(wh);
	if (!e)
		return -ENOENT;
	return copy_to_user(arg, &q, sizeof(q)) ? -EFAULT : 0;
}

static int tw_ioc_dump(struct twheel *wh, struct twheel_dump __user *arg)
{
	struct tw_ent ents[TW_DUMP_CHUNK];
	struct twheel_arm out[TW_DUMP_CHUNK];
	struct twheel_dump d;
	u64 bytes, done = 0;
	int err = 0;

	if (copy_from_user(&d, arg, sizeof(d)))
		return -EFAULT;
	if (memchr_inv(d.reserved, 0, sizeof(d.reserved)) || !d.count ||
	    check_mul_overflow(d.count, (u64)sizeof(out[0]), &bytes))
		return -EINVAL;
	while (done < d.count && d.cursor != TW_CURSOR_END) {
		unsigned long room = min_t(u64, d.count - done, TW_DUMP_CHUNK);
		unsigned long slots = TW_DUMP_SLOTS, nr, i;
		u64 cursor = d.cursor;

		tw_spin_lock(wh);
		nr = tw_index_dump(&wh->idx, &cursor, ents, room, &slots);
		memset(out, 0, nr * sizeof(out[0]));
		for (i = 0; i < nr; i++) {
			out[i].id = ents[i].id;
			out[i].timeout_ns = tw_time_out(wh, tw_ent_deadline(&ents[i]));
			out[i].data = ents[i].node->data;
			out[i].flags = TWHEEL_ARM_ABSTIME;
		}
		tw_spin_unlock(wh);
		if (!nr && cursor != TW_CURSOR_END && slots) {
			/* room for one and two ids in the cell with no odd cursor */
			if (!done)
				err = -EOVERFLOW;
			break;
		}
		if (copy_to_user(u64_to_user_ptr(d.ptr) + done * sizeof(out[0]),
				 out, nr * sizeof(out[0]))) {
			err = -EFAULT;
			break;
		}
		done += nr;
		d.cursor = cursor;
		if (done < d.count && d.cursor != TW_CURSOR_END) {
			/* a signal ends a dump short, as it would a read() */
			err = tw_interrupted(done);
			if (err) {
				if (done && !fatal_signal_pending(current))
					err = 0;
				break;
			}
			cond_resched();
		}
	}
	d.done = done;
	if (copy_to_user(arg, &d, sizeof(d)))
		return -EFAULT;
	return err;
}

/*
 * The BPF export (TWHEEL_IOC_BPF_HANDLE, bpf_twheel_touch()).  An exported
 * wheel is in tw_exports under its handle, which a counter hands out: not
 * zero, unique for the boot, never reused.  The kfunc finds the wheel
 * under RCU and touches it under its lock, like one id of a write(); the
 * export ends in release(), which takes the wheel out of tw_exports and
 * waits for an RCU grace period before anything is freed.  The kfuncs are
 * registered only if the module was built with BTF that the running
 * kernel accepted; otherwise the ioctl fails with EOPNOTSUPP.
 */
static DEFINE_XARRAY(tw_exports);
static atomic64_t tw_handles = ATOMIC64_INIT(0);
static bool tw_bpf_ready;

/*
 * One touch from BPF: write()'s, for an id the wheel has.  A touch that
 * only moves an armed id's deadline later (TW_SET_LAZY: a heartbeat's)
 * changes no slot and queues no event: the hrtimer stays as it is and
 * nobody is woken, so the lock is dropped without tw_unlock()'s re-arm.
 */
static int tw_bpf_touch(struct twheel *wh, u64 id)
{
	struct tw_ent *e;
	unsigned int did;
	u64 now, deadline;
	int ret = 0;

	tw_spin_lock(wh);
	if (wh->closing) {
		ret = -ESRCH;
		goto out;
	}
	e = tw_index_find(&wh->idx, id);
	if (!e) {
		wh->bpf_absent++;
		ret = -ENOENT;
		goto out;
	}
	now = tw_now(wh);
	tw_wheel_catch_up(&wh->w, now);
	deadline = tw_deadline(now, wh->cfg.timeout_ns);
	did = tw_wheel_set(&wh->w, e, deadline, now);
	tw_count_set(wh, e, did, deadline, now);
	wh->bpf_touches++;
	if (trace_twheel_touch_enabled())
		trace_twheel_touch(wh->wid, id, deadline, e->node->data);
	if (!(did & TW_SET_LAZY)) {
		tw_unlock(wh);
		return 0;
	}
out:
	tw_spin_unlock(wh);
	return ret;
}

__bpf_kfunc_start_defs();

/**
 * bpf_twheel_touch() - touch an id of an exported wheel, from XDP or TC
 * @handle: the wheel's handle, from TWHEEL_IOC_BPF_HANDLE
 * @id: the id
 *
 * write()'s touch for an ARMED or EXPIRED id: its deadline moves to now
 * plus the wheel's timeout, and an expired id's queued event is
 * discarded.  It never sleeps and never allocates; an absent id is not
 * created (the program passes its packet up, and the service arms it).
 *
 * Return: 0; -ENOENT if the wheel has no such id; -ESRCH if no exported
 * wheel has @handle (any more).
 */
__bpf_kfunc int bpf_twheel_touch(u64 handle, u64 id)
{
	struct twheel *wh;
	int ret = -ESRCH;

	if (handle > ULONG_MAX)
		return -ESRCH;
	rcu_read_lock();
	wh = xa_load(&tw_exports, (unsigned long)handle);
	if (wh)
		ret = tw_bpf_touch(wh, id);
	rcu_read_unlock();
	return ret;
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(tw_kfunc_ids)
BTF_ID_FLAGS(func, bpf_twheel_touch)
BTF_KFUNCS_END(tw_kfunc_ids)

static const struct btf_kfunc_id_set tw_kfunc_set = {
	.owner	= THIS_MODULE,
	.set	= &tw_kfunc_ids,
};

/*
 * Register the kfunc for XDP and TC programs.  The module's BTF is needed:
 * without it (a build without BTF, or BTF the running kernel refused, as
 * one built against another kernel is), register_btf_kfunc_id_set() only
 * warns, so the module checks first that its BTF was loaded: the kernel
 * then shows it as /sys/kernel/btf/twheel.
 */
static void tw_bpf_init(void)
{
	struct path path;
	int err;

	if (!IS_ENABLED(CONFIG_DEBUG_INFO_BTF_MODULES) || BITS_PER_LONG < 64 ||
	    kern_path("/sys/kernel/btf/" KBUILD_MODNAME, 0, &path)) {
		pr_info("no module BTF: the BPF touch is unavailable (TWHEEL_IOC_BPF_HANDLE fails with EOPNOTSUPP)\n");
		return;
	}
	path_put(&path);
	err = register_btf_kfunc_id_set(BPF_PROG_TYPE_XDP, &tw_kfunc_set);
	if (!err)
		err = register_btf_kfunc_id_set(BPF_PROG_TYPE_SCHED_CLS,
						&tw_kfunc_set);
	if (err) {
		pr_warn("registering bpf_twheel_touch failed (%d): the BPF touch is unavailable\n",
			err);
		return;
	}
	tw_bpf_ready = true;
}

/* TWHEEL_IOC_BPF_HANDLE: export the wheel (once) and return its handle. */
static int tw_ioc_bpf_handle(struct twheel *wh, u64 __user *arg)
{
	u64 h = READ_ONCE(wh->handle);
	int err;

	if (!tw_bpf_ready)
		return -EOPNOTSUPP;
	if (!h) {
		h = atomic64_inc_return(&tw_handles);
		err = xa_insert(&tw_exports, (unsigned long)h, wh,
				GFP_KERNEL_ACCOUNT);
		if (err)
			return err;
		/* another thread exported it first: keep its handle */
		if (cmpxchg(&wh->handle, 0, h)) {
			xa_erase(&tw_exports, (unsigned long)h);
			h = READ_ONCE(wh->handle);
		}
	}
	return put_user(h, arg);
}

/* End the export: no kfunc can reach the wheel once this returns. */
static void tw_bpf_unexport(struct twheel *wh)
{
	if (!wh->handle)
		return;
	xa_erase(&tw_exports, (unsigned long)wh->handle);
	synchronize_rcu();
}

static long tw_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct twheel *wh = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case TWHEEL_IOC_SET_CONFIG:
		return tw_set_config(wh, uarg, _IOC_SIZE(cmd));
	case TWHEEL_IOC_GET_CONFIG: {
		struct twheel_config c;

		tw_spin_lock(wh);
		c = wh->cfg;
		tw_spin_unlock(wh);
		return copy_to_user(uarg, &c, sizeof(c)) ? -EFAULT : 0;
	}
	case TWHEEL_IOC_ARM:
		return tw_ioc_arm(wh, uarg);
	case TWHEEL_IOC_CANCEL:
		return tw_ioc_cancel(wh, uarg);
	case TWHEEL_IOC_QUERY:
		return tw_ioc_query(wh, uarg);
	case TWHEEL_IOC_GET_STATS: {
		struct twheel_stats st;

		tw_get_stats(wh, &st, true);
		return copy_to_user(uarg, &st, sizeof(st)) ? -EFAULT : 0;
	}
	case TWHEEL_IOC_DUMP:
		return tw_ioc_dump(wh, uarg);
	case TWHEEL_IOC_BPF_HANDLE:
		return tw_ioc_bpf_handle(wh, uarg);
	}
	return -ENOTTY;
}

static void tw_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct twheel *wh = file->private_data;
	struct twheel_config c;
	struct twheel_stats st;

	/* another process may read it: it does not run this wheel's expiry */
	tw_get_stats(wh, &st, false);
	tw_spin_lock(wh);
	c = wh->cfg;
	tw_spin_unlock(wh);
	seq_printf(m, "tick_ns:\t%llu\ntimeout_ns:\t%llu\nclockid:\t%u\n",
		   c.tick_ns, c.timeout_ns, c.clockid);
	seq_printf(m, "max_ids:\t%llu\nconfig_flags:\t%u\narmed:\t%llu\npending:\t%llu\n",
		   c.max_ids, c.flags, st.armed, st.pending);
	seq_printf(m, "touches:\t%llu\narms:\t%llu\ncancels:\t%llu\n",
		   st.touches, st.arms, st.cancels);
	seq_printf(m, "expirations:\t%llu\ndelivered:\t%llu\ndiscarded:\t%llu\n",
		   st.expirations, st.delivered, st.discarded);
	seq_printf(m, "timer_fires:\t%llu\nlate_max_ns:\t%llu\nmem_bytes:\t%llu\n",
		   st.timer_fires, st.late_max_ns, st.mem_bytes);
	seq_printf(m, "runs:\t%llu\nwork_runs:\t%llu\nwork_ns:\t%llu\n",
		   st.runs, st.work_runs, st.work_ns);
	seq_printf(m, "wheel_id:\t%llu\n", wh->wid);
}

static int tw_open(struct inode *inode, struct file *file)
{
	struct twheel *wh;
	struct tw_ent *tab;
	struct tw_node *sentinel;
	u64 secret[TW_SECRET_WORDS];

	wh = kzalloc(sizeof(*wh), GFP_KERNEL_ACCOUNT);
	tab = tw_tab_alloc(TW_IDX_MIN, GFP_KERNEL_ACCOUNT);
	sentinel = tw_node_alloc(0, GFP_KERNEL_ACCOUNT);
	if (!wh || !tab || !sentinel)
		goto nomem;
	wh->user = tw_user_get(current_uid());
	if (!wh->user)
		goto nomem;
	spin_lock_init(&wh->lock);
	init_waitqueue_head(&wh->wq);
	INIT_DELAYED_WORK(&wh->work, tw_work_fn);
	hrtimer_setup(&wh->timer, tw_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS);
	wh->timer_at = KTIME_MAX;
	wh->cfg.tick_ns = TWHEEL_DEFAULT_TICK_NS;
	wh->cfg.timeout_ns = TWHEEL_DEFAULT_TIMEOUT_NS;
	wh->cfg.max_ids = TWHEEL_DEFAULT_MAX_IDS;
	wh->cfg.clockid = CLOCK_MONOTONIC;
	get_random_bytes(secret, sizeof(secret));
	tw_index_init(&wh->idx, tab, TW_IDX_MIN, secret);
	tw_wheel_init(&wh->w, wh->cfg.tick_ns, tw_now(wh), &wh->idx, sentinel);
	wh->memcg = get_mem_cgroup_from_mm(current->mm);
	wh->wid = atomic64_inc_return(&tw_wheel_ids);
	tw_timens_init(wh);
	file->private_data = wh;
	atomic_inc(&tw_fds);
	stream_open(inode, file);
	file->f_mode |= FMODE_NOWAIT;
	return 0;
nomem:
	if (sentinel)
		kmem_cache_free(tw_node_cache, sentinel);
	kvfree(tab);
	kfree(wh);
	return -ENOMEM;
}

static int tw_release(struct inode *inode, struct file *file)
{
	struct twheel *wh = file->private_data;
	unsigned long pos = 0, nr = 0;
	struct tw_node *n;

	tw_spin_lock(wh);
	wh->closing = true;
	tw_spin_unlock(wh);
	tw_bpf_unexport(wh);
	hrtimer_cancel(&wh->timer);
	cancel_delayed_work_sync(&wh->work);

	/* every node is in the index, queued ones too, but the sentinel */
	kmem_cache_free(tw_node_cache, tw_wheel_sentinel(&wh->w));
	while ((n = tw_index_pop(&wh->idx, &pos))) {
		kmem_cache_free(tw_node_cache, n);
		if (!(++nr % 1024))
			cond_resched();
	}
	tw_uncharge(wh, nr);
	kvfree(wh->idx.old);
	kvfree(wh->idx.tab);
	tw_user_put(wh->user);
	mem_cgroup_put(wh->memcg);
	kfree(wh);
	atomic_dec(&tw_fds);
	return 0;
}

static const struct file_operations tw_fops = {
	.owner		= THIS_MODULE,
	.open		= tw_open,
	.release	= tw_release,
	.read_iter	= tw_read_iter,
	.write_iter	= tw_write_iter,
	.poll		= tw_poll,
	.unlocked_ioctl	= tw_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.show_fdinfo	= tw_show_fdinfo,
};

/* Module-wide counters: /sys/class/misc/twheel/{ids,fds}. */
static ssize_t ids_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&tw_total_ids));
}
static DEVICE_ATTR_RO(ids);

static ssize_t fds_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&tw_fds));
}
static DEVICE_ATTR_RO(fds);

static struct attribute *tw_attrs[] = {
	&dev_attr_ids.attr,
	&dev_attr_fds.attr,
	NULL,
};
ATTRIBUTE_GROUPS(tw);

static struct miscdevice tw_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "twheel",
	.fops	= &tw_fops,
	.groups	= tw_groups,
};

/* Per-user usage against the cap: /sys/kernel/debug/twheel/users. */
static int tw_users_show(struct seq_file *m, void *v)
{
	struct tw_user *u;
	int bkt;

	seq_printf(m, "# uid ids max_user_ids=%lu\n", READ_ONCE(max_user_ids));
	spin_lock(&tw_users_lock);
	hash_for_each(tw_users, bkt, u, node)
		seq_printf(m, "%u %ld\n", from_kuid(&init_user_ns, u->uid),
			   atomic_long_read(&u->ids));
	spin_unlock(&tw_users_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tw_users);

static struct dentry *tw_debugfs;

static int __init tw_init(void)
{
	unsigned long ram_ids = (totalram_pages() << PAGE_SHIFT) / 64;
	int err;

	if (!max_user_ids)
		max_user_ids = max(ram_ids / 10, 1UL << 20);
	if (!max_ids_total)
		max_ids_total = max(ram_ids / 4, 1UL << 20);
	max_user_ids = min(max_user_ids, tw_limit_max);
	max_ids_total = min(max_ids_total, tw_limit_max);
	tw_node_cache = kmem_cache_create("twheel_node", sizeof(struct tw_node),
					  0, SLAB_ACCOUNT, NULL);
	if (!tw_node_cache)
		return -ENOMEM;
	tw_sysctl_header = register_sysctl("fs/twheel", tw_sysctls);
	if (!tw_sysctl_header) {
		kmem_cache_destroy(tw_node_cache);
		return -ENOMEM;
	}
	tw_misc.mode = dev_mode;
	err = misc_register(&tw_misc);
	if (err) {
		unregister_sysctl_table(tw_sysctl_header);
		kmem_cache_destroy(tw_node_cache);
		return err;
	}
	tw_bpf_init();
	tw_debugfs = debugfs_create_dir("twheel", NULL);
	debugfs_create_file("users", 0400, tw_debugfs, NULL, &tw_users_fops);
	return 0;
}

static void __exit tw_exit(void)
{
	debugfs_remove_recursive(tw_debugfs);
	misc_deregister(&tw_misc);
	unregister_sysctl_table(tw_sysctl_header);
	kmem_cache_destroy(tw_node_cache);
}

module_init(tw_init);
module_exit(tw_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The twheel authors");
MODULE_DESCRIPTION("Hierarchical timing wheel for millions of timeouts behind /dev/twheel");
MODULE_VERSION(TWHEEL_VERSION);
