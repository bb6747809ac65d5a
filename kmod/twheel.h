/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel: a hierarchical timing wheel behind a character device.
 *
 * Every open() of /dev/twheel is an independent wheel of 64-bit ids that a
 * process touches with write(), arms/cancels/queries with ioctl() and whose
 * expirations it reads as records with read()/poll()/epoll.  The algorithm
 * lives in the core (twheel_core.c: no locks, no allocation, built in user
 * space too); the driver around it is:
 *
 *	main.c		the module and the misc device
 *	file.c		open, release, read, write, poll, fdinfo
 *	ioctl.c		the ioctls of uapi/linux/twheel.h
 *	call.c		entering and leaving a wheel: its lock, a call's chunks
 *	expire.c	the expiry runner, the hrtimer and the work item
 *	mem.c		nodes and index tables
 *	limits.c	the per-user and global caps, their sysctls
 *	bpf.c		the kfunc bpf_twheel_touch() for XDP and TC
 *
 * This header: struct twheel, and what those files share.
 *
 * Locking rules
 * -------------
 * wh->lock, a spinlock taken with softirqs off (tw_lock()), protects
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
#ifndef _TWHEEL_H
#define _TWHEEL_H

#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/time_namespace.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/twheel.h>

#include "twheel_compat.h"
#include "twheel_core.h"

struct kmem_cache;
struct mem_cgroup;
struct twheel_stats;
struct tw_user;

/*
 * The work item's budget: at most TW_WORK_HOLDS holds of TW_EXPIRE_BATCH
 * index entries a run, and a run every TW_WORK_DELAY while a resize is
 * left to it; TW_WORK_NODES nodes of expiry each time the hrtimer finds
 * it due while events are unread (tw_work_fn()).
 */
#define TW_WORK_HOLDS		16
#define TW_WORK_NODES		TW_CHUNK
#define TW_WORK_DELAY		max(1UL, msecs_to_jiffies(10))

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

static inline u64 tw_now(const struct twheel *wh)
{
	return wh->cfg.clockid == CLOCK_BOOTTIME ? ktime_get_boottime_ns() :
						    ktime_get_ns();
}

/*
 * Time namespaces, as timerfd has them: every absolute time that crosses
 * the ABI (ARM with TWHEEL_ARM_ABSTIME, the deadline_ns and expired_ns of
 * events, QUERY, DUMP) is on the clock of the time namespace the fd was
 * opened in; the wheel itself runs on the host's.  The offsets are taken
 * at open (file.c): the namespace's clocks cannot change once it has a
 * process.
 */
static inline s64 tw_timens_off(const struct twheel *wh)
{
	return wh->cfg.clockid == CLOCK_BOOTTIME ? wh->off_boot : wh->off_mono;
}

/*
 * A deadline on the fd's clock to the wheel's: "never" stays never, and a
 * time before the host's zero is the host's zero (a passed deadline).
 */
static inline u64 tw_time_in(const struct twheel *wh, u64 t)
{
	s64 off = tw_timens_off(wh);

	if (t >= KTIME_MAX)
		return KTIME_MAX;
	if (off >= 0)
		return t > off ? t - off : 0;
	return t - off >= KTIME_MAX ? KTIME_MAX : t - off;
}

/* A time on the wheel's clock to the fd's; monotonic, so order is kept. */
static inline u64 tw_time_out(const struct twheel *wh, u64 t)
{
	s64 off = tw_timens_off(wh);

	if (t >= KTIME_MAX)
		return KTIME_MAX;
	if (off >= 0)
		return t + off >= KTIME_MAX ? KTIME_MAX : t + off;
	return t > -off ? t + off : 0;
}

/* now + timeout, saturating at the largest deadline */
static inline u64 tw_deadline(u64 now, u64 timeout)
{
	return timeout > KTIME_MAX - now ? KTIME_MAX : now + timeout;
}

static inline bool tw_has_events(struct twheel *wh)
{
	return READ_ONCE(wh->w.nr_ready) != 0;
}

/*
 * Whether expiry is due, for a waiter: read before tw_has_events(), as
 * tw_run_due() clears it after queueing the events.
 */
static inline bool tw_due(struct twheel *wh)
{
	/* pairs with the smp_store_release() of tw_run_due() */
	return smp_load_acquire(&wh->due);
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

/* main.c */
extern atomic_t tw_fds;

/* file.c */
extern const struct file_operations tw_fops;

/* ioctl.c */
long tw_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
void tw_get_stats(struct twheel *wh, struct twheel_stats *st, bool run);

/* call.c */
void tw_lock(struct twheel *wh) __acquires(&wh->lock);
void tw_unlock(struct twheel *wh) __releases(&wh->lock);
void tw_enter(struct twheel *wh) __acquires(&wh->lock);
u64 tw_enter_chunk(struct twheel *wh, unsigned long ids)
	__acquires(&wh->lock);
bool tw_enter_chunk_nowait(struct twheel *wh, u64 ids, u64 *now)
	__acquires(&wh->lock);
void tw_leave(struct twheel *wh) __releases(&wh->lock);
void tw_relock(struct twheel *wh) __must_hold(&wh->lock);
void tw_count_placed(struct twheel *wh, struct tw_ent *e, unsigned int did,
		     u64 deadline, u64 now);
struct tw_ent *tw_set_deadline(struct twheel *wh, u64 id, u64 deadline,
			       const u64 *data, bool noreplace,
			       struct tw_call *c, u64 now);
long tw_copy_in(void *dst, const void __user *src, unsigned long n,
		size_t size);
int tw_interrupted(bool done);
int tw_between_chunks(struct tw_call *c, int err, bool done, bool more);
void tw_call_end(struct tw_call *c);

/* expire.c */
void tw_rearm(struct twheel *wh);
void tw_run_due(struct twheel *wh, bool all, bool wake);
void tw_expire_init(struct twheel *wh);
void tw_expire_set_clock(struct twheel *wh, clockid_t clockid);
void tw_expire_stop(struct twheel *wh);

/* mem.c */
extern struct kmem_cache *tw_node_cache;
struct tw_ent *tw_tab_alloc(unsigned long size, gfp_t gfp);
void tw_free_later(struct twheel *wh, struct tw_ent *old);
void tw_maintain(struct twheel *wh, unsigned long ids);
void tw_maintain_nowait(struct twheel *wh, unsigned long ids);
void tw_wait_room(struct twheel *wh, unsigned long ids);
void tw_grow(struct twheel *wh);
struct tw_node *tw_node_alloc(u64 id, gfp_t gfp);
int tw_spare(struct tw_call *c);
struct tw_ent *tw_node_new(struct twheel *wh, u64 id, struct tw_call *c,
			   int *err);
void tw_node_free(struct twheel *wh, struct tw_ent *e);

/* limits.c */
extern atomic_long_t tw_total_ids;
int tw_limits_init(void);
void tw_limits_exit(void);
struct tw_user *tw_user_get(kuid_t uid);
void tw_user_put(struct tw_user *u);
int tw_charge(struct twheel *wh);
void tw_uncharge(struct twheel *wh, long n);

/* bpf.c */
void tw_bpf_init(void);
int tw_ioc_bpf_handle(struct twheel *wh, u64 __user *arg);
void tw_bpf_unexport(struct twheel *wh);

#endif /* _TWHEEL_H */
