// SPDX-License-Identifier: GPL-2.0
/*
 * Entering and leaving a wheel.  Every call on a twheel fd that looks at
 * the wheel enters it (tw_enter(): its lock, then the expiry that fell
 * due, at the caller's priority and charged to it) and leaves it
 * (tw_leave(): the hrtimer re-armed, the waiters woken, the lock dropped).
 * A call with more ids than one hold may take (write(), ARM, CANCEL)
 * works in chunks (tw_enter_chunk(), tw_between_chunks()), so that every
 * hold is bounded.  See the locking rules in twheel.h.
 */
#include <linux/err.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "twheel.h"
#include "twheel_trace.h"

/**
 * tw_lock() - take a wheel's lock
 * @wh: the wheel
 *
 * Softirqs are off while it is held, so that softirq context (the BPF
 * touch) may take it too.  Nothing more: tw_enter() is what a call on the
 * fd takes.
 */
void tw_lock(struct twheel *wh)
	__acquires(&wh->lock)
{
	spin_lock_bh(&wh->lock);
	tw_compat_rt_acquire(&wh->lock);
}

/**
 * tw_unlock() - drop a wheel's lock, then free what was let go under it
 * @wh: the wheel
 *
 * The index tables that tw_free_later() kept are freed after the unlock:
 * kvfree() may sleep.
 */
void tw_unlock(struct twheel *wh)
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

/**
 * tw_leave() - leave a wheel a call entered
 * @wh: the wheel, locked
 *
 * Re-arms the hrtimer for the next slot with work (tw_rearm()), drops the
 * lock and wakes the pollers of the events and room this hold made.
 */
void tw_leave(struct twheel *wh)
	__releases(&wh->lock)
{
	__poll_t wake;

	tw_rearm(wh);
	wake = tw_wake_mask(wh);
	tw_unlock(wh);
	if (wake)
		wake_up_poll(&wh->wq, wake);
}

/**
 * tw_relock() - between two bounded holds, let the others have the wheel
 * @wh: the wheel, locked
 *
 * Leaves it (tw_leave()), reschedules, and takes the lock again (without
 * running the expiry that is due: the caller is in the middle of a run).
 */
void tw_relock(struct twheel *wh)
	__must_hold(&wh->lock)
{
	tw_leave(wh);
	cond_resched();
	tw_lock(wh);
}

/**
 * tw_enter() - enter a wheel: take its lock, and do the expiry that is due
 * @wh: the wheel
 */
void tw_enter(struct twheel *wh)
	__acquires(&wh->lock)
{
	tw_lock(wh);
	tw_run_due(wh, true, true);
}

/**
 * tw_enter_chunk() - enter a wheel for a chunk of operations
 * @wh: the wheel
 * @ids: how many ids the chunk may add (the index makes room for them)
 *
 * Return: the time on the wheel's clock, which the wheel has caught up to.
 */
u64 tw_enter_chunk(struct twheel *wh, unsigned long ids)
	__acquires(&wh->lock)
{
	u64 now;

	tw_enter(wh);
	tw_maintain(wh, ids);
	now = tw_now(wh);
	tw_wheel_catch_up(&wh->w, now);
	return now;
}

/**
 * tw_enter_chunk_nowait() - tw_enter_chunk() for an IOCB_NOWAIT caller
 * @wh: the wheel
 * @ids: how many ids the chunk may add
 * @now: set to the time, on success
 *
 * Nothing is allocated with reclaim.  The lock is held on return either
 * way.
 *
 * Return: false if the index has no room for @ids until the work grows it
 * (poll() reports EPOLLOUT again then).
 */
bool tw_enter_chunk_nowait(struct twheel *wh, u64 ids, u64 *now)
	__acquires(&wh->lock)
{
	tw_enter(wh);
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

/**
 * tw_count_placed() - count what the core did to an id's deadline
 * @wh: the wheel, locked
 * @e: the id's entry
 * @did: what tw_wheel_set() or tw_wheel_place() returned
 * @deadline: the id's new deadline
 * @now: the time of the call
 */
void tw_count_placed(struct twheel *wh, struct tw_ent *e, unsigned int did,
		     u64 deadline, u64 now)
{
	if (did & TW_SET_DISCARDED)
		wh->discarded++;
	if (did & TW_SET_EXPIRED) {
		trace_twheel_expire(wh->wid, e->id, deadline, now);
		wh->expirations++;
		wh->wake = true;
	}
}

/**
 * tw_set_deadline() - set an id's deadline, creating the id if absent
 * @wh: the wheel, entered for a chunk
 * @id: the id
 * @deadline: its new deadline, on the wheel's clock
 * @data: its new data, or NULL to keep it (0 for a new id)
 * @noreplace: fail if the id exists (TWHEEL_ARM_NOREPLACE)
 * @c: the call, for a new id's node
 * @now: the time of the call
 *
 * By the core's policy (tw_wheel_set(): a later deadline of an armed id is
 * only written to its index entry); counts what it did.
 *
 * Return: the id's entry, valid until the index next changes, or an
 * ERR_PTR (-EEXIST, -ENOSPC, -ENOMEM, -EAGAIN: see tw_node_new()), in
 * which case nothing has changed.
 */
struct tw_ent *tw_set_deadline(struct twheel *wh, u64 id, u64 deadline,
			       const u64 *data, bool noreplace,
			       struct tw_call *c, u64 now)
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
	tw_count_placed(wh, e, did, deadline, now);
	return e;
}

/**
 * tw_copy_in() - copy a chunk of items from user memory
 * @dst: where to
 * @src: the user's items
 * @n: how many
 * @size: the size of one
 *
 * Return: how many whole items arrived (those before a fault are kept),
 * or -EFAULT for none.
 */
long tw_copy_in(void *dst, const void __user *src, unsigned long n,
		size_t size)
{
	unsigned long left = copy_from_user(dst, src, n * size);

	n = (n * size - left) / size;
	return n ? n : -EFAULT;
}

/**
 * tw_interrupted() - whether a long call should stop between chunks
 * @done: whether it has done some
 *
 * For a signal, not for task_work (TIF_NOTIFY_SIGNAL, which
 * signal_pending() counts too): io_uring queues that on its submitter, and
 * stopping for it would only cut io_uring's own writes short.
 *
 * Return: -EINTR for a fatal signal or with some done, -ERESTARTSYS for a
 * signal with none done, else 0.
 */
int tw_interrupted(bool done)
{
	if (fatal_signal_pending(current))
		return -EINTR;
	if (task_sigpending(current))
		return done ? -EINTR : -ERESTARTSYS;
	return 0;
}

/**
 * tw_between_chunks() - between two chunks of a write() or an ARM
 * @c: the call
 * @err: how the last chunk ended (-EAGAIN: an id wanted a node)
 * @done: whether the call has done some
 * @more: whether it has more to do
 *
 * A node is allocated unlocked for the id that wanted one (@err -EAGAIN
 * from a blocking call: the id is tried again); else a signal may end the
 * call, or it reschedules.
 *
 * Return: what ends the call, or 0.
 */
int tw_between_chunks(struct tw_call *c, int err, bool done, bool more)
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

/**
 * tw_call_end() - the end of a write() or an ARM
 * @c: the call; a spare node it has left is freed
 */
void tw_call_end(struct tw_call *c)
{
	if (c->spare)
		kmem_cache_free(tw_node_cache, c->spare);
}
