// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctls of a twheel fd: SET_CONFIG/GET_CONFIG, ARM, CANCEL, QUERY,
 * GET_STATS, DUMP and BPF_HANDLE (bpf.c).  A batch (ARM, CANCEL, DUMP) is
 * copied in and out in chunks, one wheel hold each, and reports in
 * done exactly what took effect.
 */
#include <linux/overflow.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "twheel.h"
#include "twheel_trace.h"

#define TW_HOLD_DUMP		8	/* DUMP entries per lock hold */
#define TW_HOLD_SLOTS		4096	/* index slots per table per DUMP hold */

/* The wheel's memory: itself, its index tables, its nodes. */
static u64 tw_mem_bytes(const struct twheel *wh)
{
	const struct tw_index *x = &wh->idx;
	u64 b = sizeof(*wh) + (u64)(x->size + x->old_size) * sizeof(*x->tab);

	/* a node per id and the ready queue's sentinel */
	return b + ((u64)x->nr + 1) * kmem_cache_size(tw_node_cache);
}

/**
 * tw_get_stats() - a wheel's counters (TWHEEL_IOC_GET_STATS, fdinfo)
 * @wh: the wheel
 * @st: filled in
 * @run: do the expiry that is due first (only the fd's own user)
 */
void tw_get_stats(struct twheel *wh, struct twheel_stats *st, bool run)
{
	memset(st, 0, sizeof(*st));
	tw_lock(wh);
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
	tw_leave(wh);
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

	tw_lock(wh);
	if ((wh->idx.nr && (c.tick_ns != wh->cfg.tick_ns ||
			    c.clockid != wh->cfg.clockid)) ||
	    c.max_ids < wh->idx.nr) {
		tw_unlock(wh);
		return -EBUSY;
	}
	if (c.clockid != wh->cfg.clockid)
		tw_expire_set_clock(wh, c.clockid);
	wh->cfg = c;
	if (!wh->idx.nr)
		tw_wheel_init(&wh->w, c.tick_ns, tw_now(wh), &wh->idx,
			      tw_wheel_sentinel(&wh->w));
	tw_unlock(wh);
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
	struct twheel_arm e[TW_HOLD_ARMS];
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
				    min_t(u64, b.count - done, TW_HOLD_ARMS),
				    sizeof(e[0]));
		u64 now;
		long i;

		if (n < 0) {
			err = n;
			break;
		}
		now = tw_enter_chunk(wh, n);
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
			ent = tw_set_deadline(wh, e[i].id, deadline, &e[i].data,
					      e[i].flags & TWHEEL_ARM_NOREPLACE,
					      &c, now);
			if (IS_ERR(ent)) {
				err = PTR_ERR(ent);
				break;
			}
			trace_twheel_arm(wh->wid, ent->id, deadline,
					 ent->node->data);
		}
		wh->arms += i;
		tw_leave(wh);
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
	u64 ids[TW_HOLD_IDS], pos = 0, done = 0;
	struct twheel_batch b;
	int err;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	err = tw_batch_in(&b, sizeof(ids[0]));
	if (err)
		return tw_batch_out(arg, 0, err);
	while (pos < b.count) {
		long n = tw_copy_in(ids, u64_to_user_ptr(b.ptr) + pos * sizeof(u64),
				    min_t(u64, b.count - pos, TW_HOLD_IDS),
				    sizeof(u64));
		long i;

		if (n < 0) {
			err = n;
			break;
		}
		tw_enter_chunk(wh, n);
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
		tw_leave(wh);
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
	tw_enter(wh);	/* an id whose deadline passed is EXPIRED */
	e = tw_index_find(&wh->idx, q.id);
	if (e) {
		q.state = tw_ent_queued(e) ? TWHEEL_STATE_EXPIRED :
					     TWHEEL_STATE_ARMED;
		q.deadline_ns = tw_time_out(wh, tw_ent_deadline(e));
		q.data = e->node->data;
	}
	tw_leave(wh);
	if (!e)
		return -ENOENT;
	return copy_to_user(arg, &q, sizeof(q)) ? -EFAULT : 0;
}

static int tw_ioc_dump(struct twheel *wh, struct twheel_dump __user *arg)
{
	struct tw_ent ents[TW_HOLD_DUMP];
	struct twheel_arm out[TW_HOLD_DUMP];
	struct twheel_dump d;
	u64 bytes, done = 0;
	int err = 0;

	if (copy_from_user(&d, arg, sizeof(d)))
		return -EFAULT;
	if (memchr_inv(d.reserved, 0, sizeof(d.reserved)) || !d.count ||
	    check_mul_overflow(d.count, (u64)sizeof(out[0]), &bytes))
		return -EINVAL;
	while (done < d.count && d.cursor != TW_CURSOR_END) {
		unsigned long room = min_t(u64, d.count - done, TW_HOLD_DUMP);
		unsigned long slots = TW_HOLD_SLOTS, nr, i;
		u64 cursor = d.cursor;

		tw_lock(wh);
		nr = tw_index_dump(&wh->idx, &cursor, ents, room, &slots);
		memset(out, 0, nr * sizeof(out[0]));
		for (i = 0; i < nr; i++) {
			out[i].id = ents[i].id;
			out[i].timeout_ns = tw_time_out(wh, tw_ent_deadline(&ents[i]));
			out[i].data = ents[i].node->data;
			out[i].flags = TWHEEL_ARM_ABSTIME;
		}
		tw_unlock(wh);
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

/**
 * tw_ioctl() - the ioctls of uapi/linux/twheel.h
 * @file: a twheel fd
 * @cmd: TWHEEL_IOC_*
 * @arg: its argument, in user memory
 *
 * Return: 0 or the error of @cmd; -ENOTTY for a command it does not know.
 */
long tw_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct twheel *wh = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case TWHEEL_IOC_SET_CONFIG:
		return tw_set_config(wh, uarg, _IOC_SIZE(cmd));
	case TWHEEL_IOC_GET_CONFIG: {
		struct twheel_config c;

		tw_lock(wh);
		c = wh->cfg;
		tw_unlock(wh);
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
