// SPDX-License-Identifier: GPL-2.0
/*
 * The expiry of a wheel.  The hrtimer is armed for the next slot that holds
 * work and does none of it when it fires: it marks the wheel due and wakes
 * the waiters, and the next call that enters the wheel runs the expiry
 * (tw_run_due()) in bounded holds, at its caller's priority and charged to
 * its caller.  The work item is for what no call may be there to do.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

#include "twheel.h"
#include "twheel_trace.h"

/*
 * The hrtimer found expiry work due.  It does none of it: it wakes the
 * waiters, whose poll or read then does it (tw_run_due()), or hands it to
 * the work item while events are queued unread (below).  The wake carries
 * no poll key: EPOLLIN is not claimed before an event is queued, so epoll,
 * aio and io_uring call poll() to learn the mask, and poll() runs the
 * expiry first.  The call that does the work re-arms it.
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

/**
 * tw_rearm() - program the hrtimer for the next slot that holds work
 * @wh: the wheel, locked
 *
 * Or stop it, if no slot holds any.  Not while expiry work is due: the
 * call that finishes it re-arms.
 */
void tw_rearm(struct twheel *wh)
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
 * One bounded hold of the expiry the hrtimer found due: advance the wheel
 * to now by at most @nodes nodes, and migrate as many index entries if a
 * resize is under way.  Returns true if due work remains; else it is no
 * longer due.
 */
static bool tw_expire_batch(struct twheel *wh, bool wake, unsigned int nodes)
{
	unsigned int budget = nodes;
	unsigned long before = wh->w.nr_ready, expired;
	struct tw_node *mark = tw_ready_mark(&wh->w);
	u64 now, held, t0 = ktime_get_ns();
	bool more;

	wh->timer_at = KTIME_MAX;	/* it fired */
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
	if (!more)
		/*
		 * After the events: a waiter that reads due false (tw_due())
		 * then sees them.  A fire since then that this clears is not
		 * lost: tw_rearm() starts the hrtimer again for its slot, now
		 * due at once.
		 */
		/* pairs with the smp_load_acquire() of tw_due() */
		smp_store_release(&wh->due, false);
	return more;
}

/**
 * tw_run_due() - the expiry work that the hrtimer found due
 * @wh: the wheel, locked; the lock is dropped between holds
 * @all: until nothing is due; else only until an event is queued, for a
 *	reader that takes it and comes back for the rest once the queue is
 *	empty
 * @wake: the events wake the waiters (not from poll(): see
 *	tw_expire_batch())
 *
 * Done by the caller, in holds of one batch (tw_expire_batch()).  The
 * hrtimer is re-armed when nothing is due any more (tw_rearm(), in
 * tw_leave()).  A process that neither polls nor reads pays at its next
 * call for all that fell due since.
 */
void tw_run_due(struct twheel *wh, bool all, bool wake)
{
	lockdep_assert_held(&wh->lock);
	while (READ_ONCE(wh->due) && !wh->closing) {
		if (!tw_expire_batch(wh, wake, TW_HOLD_NODES))
			break;
		if (!all && tw_has_events(wh))
			break;
		tw_relock(wh);
	}
}

/*
 * The work item: what no call on the fd may be there to do.  It grows the
 * index for a nowait writer waiting for EPOLLOUT (tw_grow()), runs the
 * expiry that fell due while events were queued unread (tw_timer_fn()),
 * TW_HOLD_WORK_NODES nodes of it, for the new edge an edge-triggered epoll
 * waits for (the rest is the owner's: tw_run_due()), and finishes an index
 * resize that the calls stopped driving: while they migrate it (the
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

	tw_lock(wh);
	if (wh->grow && !wh->closing)
		tw_grow(wh);	/* drops the lock while it allocates */
	/*
	 * Expiry due while events were unread (tw_timer_fn()): one hold of
	 * TW_HOLD_WORK_NODES nodes, for the edge.  An event queued wakes the
	 * waiters (tw_expire_batch()); if none was and more is due, a wake
	 * without a key hands the rest to them, whose poll or read pays for
	 * it (an edge-triggered epoll may then be told of the old events
	 * again); else it waits for the owner's next call.
	 */
	if (READ_ONCE(wh->due) && tw_has_events(wh) && !wh->closing) {
		expired = wh->expirations;
		if (tw_expire_batch(wh, true, TW_HOLD_WORK_NODES))
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
			tw_free_later(wh, tw_index_migrate(x, TW_HOLD_NODES));
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
	tw_leave(wh);
	if (hand_over)
		wake_up(&wh->wq);
}

/**
 * tw_expire_init() - a new wheel's hrtimer, on CLOCK_MONOTONIC, and work
 * @wh: the wheel
 */
void tw_expire_init(struct twheel *wh)
{
	INIT_DELAYED_WORK(&wh->work, tw_work_fn);
	hrtimer_setup(&wh->timer, tw_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_ABS);
	wh->timer_at = KTIME_MAX;
}

/**
 * tw_expire_set_clock() - put the hrtimer on another clock
 * @wh: the wheel, locked, with no id
 * @clockid: CLOCK_MONOTONIC or CLOCK_BOOTTIME
 */
void tw_expire_set_clock(struct twheel *wh, clockid_t clockid)
{
	hrtimer_cancel(&wh->timer);
	hrtimer_setup(&wh->timer, tw_timer_fn, clockid, HRTIMER_MODE_ABS);
	wh->timer_at = KTIME_MAX;
}

/**
 * tw_expire_stop() - stop the hrtimer and the work of a closing wheel
 * @wh: the wheel, marked closing: nothing re-arms or queues them
 */
void tw_expire_stop(struct twheel *wh)
{
	hrtimer_cancel(&wh->timer);
	cancel_delayed_work_sync(&wh->work);
}
