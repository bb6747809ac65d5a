/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel: a hierarchical timing wheel behind a character device.
 *
 * Every open() of /dev/twheel is an independent wheel of 64-bit ids that a
 * process touches with write(), arms/cancels/queries with ioctl() and whose
 * expirations it reads as records with read()/poll()/epoll.  The algorithm
 * lives in the core, the timing wheel (wheel.c) and the id index (index.c):
 * no locks, no allocation, built in user space too.  The driver around it:
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
 * Locking
 * -------
 * The tables and rules; why each rule is as it is: docs/design.md.
 *
 *   lock            taken in                 protects             never with
 *   --------------  -----------------------  -------------------  -------------
 *   wh->lock        process: the fd's calls  one wheel: its       tw_users_lock
 *   spinlock, _bh   and its work item;       wheel, index,        (and no sleep,
 *   (tw_lock())     softirq: the BPF touch   config, counters     no user fault)
 *   wh->wq.lock     any (the wait queue)     the waiters          -
 *   tw_users_lock   process: open, release,  the per-user table   wh->lock
 *   spinlock        debugfs                  (limits.c)
 *   tw_exports      process: export, release the handles (bpf.c)  -
 *   xa_lock, RCU    RCU reader: the kfunc
 *
 *   without a lock  written by               read by
 *   --------------  -----------------------  -------------------------------
 *   wh->due         the hrtimer (set); the   a waiter, before sleeping
 *                   lock holder (cleared)    (tw_due(), below)
 *   wh->full        the lock holder          poll(), for EPOLLOUT
 *   timer_fires     the hrtimer              GET_STATS
 *   id counts       atomics (limits.c)       the caps
 *
 * The rules of wh->lock:
 * - No hold sleeps.  Nodes come from the cache without reclaim, or are
 *   allocated unlocked (tw_spare()); index tables are allocated with the
 *   lock dropped (tw_maintain()) and freed after it (tw_free_later());
 *   user memory is copied before or after a hold, but read()'s events,
 *   copied under it with page faults disabled.
 * - Every hold is bounded (TW_HOLD_*): at most one chunk of a call
 *   (TW_HOLD_IDS ids, TW_HOLD_ARMS, TW_HOLD_EVENTS, TW_HOLD_DUMP entries)
 *   or of expiry (TW_HOLD_NODES nodes), and a few entries of an index
 *   resize.
 * - The expiry is the callers': the hrtimer only sets wh->due and wakes;
 *   a call that enters the wheel (tw_enter()) runs it, at its priority and
 *   charged to its cgroup.  The work item does what no call may be there
 *   to do (expire.c).  The BPF touch runs none of it.
 * - Teardown: closing set under the lock, the export ended (an RCU grace
 *   period), the hrtimer then the work cancelled, the nodes freed unlocked.
 *
 * The subtle case: a waiter decides to sleep without the lock.  The events
 * are queued before due is cleared, with release and acquire, so a waiter
 * that sees due clear sees the events:
 *
 *   tw_expire_batch(), wh->lock held    read() or poll(), no lock
 *   ---------------------------------   ---------------------------------
 *   queue events: w.nr_ready += n
 *   smp_store_release(&wh->due, false)
 *                                       if (tw_due(wh) &&  <- acquire
 *                                           !tw_has_events(wh))
 *                                               run the expiry
 *                                       if (!tw_has_events(wh))
 *                                               sleep until due or events
 *
 * The hrtimer may fire between the events and the clear: the clear loses
 * its wh->due, not its expiry, since tw_leave() re-arms the hrtimer for the
 * slot, due at once (tw_rearm()).
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
#include "wheel.h"

struct kmem_cache;
struct mem_cgroup;
struct twheel_stats;
struct tw_user;

/*
 * The work item's budget: at most TW_WORK_HOLDS holds of TW_HOLD_NODES
 * index entries a run, and a run every TW_WORK_DELAY while a resize is
 * left to it; one hold of TW_HOLD_WORK_NODES nodes of expiry each time the
 * hrtimer finds it due while events are unread (tw_work_fn()).
 */
#define TW_WORK_HOLDS		16
#define TW_HOLD_WORK_NODES	TW_HOLD_IDS
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
 * tw_expire_batch() clears it after queueing the events.
 */
static inline bool tw_due(struct twheel *wh)
{
	/* pairs with the smp_store_release() of tw_expire_batch() */
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

/* bpf.c; without CONFIG_TWHEEL_BPF, TWHEEL_IOC_BPF_HANDLE is unsupported */
#if IS_ENABLED(CONFIG_TWHEEL_BPF)
void tw_bpf_init(void);
int tw_ioc_bpf_handle(struct twheel *wh, u64 __user *arg);
void tw_bpf_unexport(struct twheel *wh);
#else
static inline void tw_bpf_init(void)
{
}

static inline int tw_ioc_bpf_handle(struct twheel *wh, u64 __user *arg)
{
	return -EOPNOTSUPP;
}

static inline void tw_bpf_unexport(struct twheel *wh)
{
}
#endif

#endif /* _TWHEEL_H */
