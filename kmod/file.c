// SPDX-License-Identifier: GPL-2.0
/*
 * The file operations of a twheel fd: open() makes a wheel, write()
 * touches ids, read() takes the expired ones as records, poll() reports
 * them, release() ends the wheel; fdinfo shows its configuration and
 * counters.  The ioctls are in ioctl.c.
 */
#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nsproxy.h>
#include <linux/pagemap.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/time_namespace.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "twheel.h"
#include "twheel_trace.h"

#define TW_HOLD_EVENTS		12	/* events per read() lock hold (stack) */
#define TW_READ_FAULT_IN	65536	/* read() buffer checked at a time */

/* fdinfo's wheel_id: unique since the module was loaded */
static atomic64_t tw_wheel_ids = ATOMIC64_INIT(0);

/* The opener's time namespace's offsets (tw_time_in(), twheel.h). */
static void tw_timens_init(struct twheel *wh)
{
#ifdef CONFIG_TIME_NS
	const struct timens_offsets *o = &current->nsproxy->time_ns->offsets;

	wh->off_mono = timespec64_to_ns(&o->monotonic);
	wh->off_boot = timespec64_to_ns(&o->boottime);
#endif
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
	u64 ids[TW_HOLD_IDS];
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
			u64 want_ids = done ? n : (count - done) / sizeof(u64);

			if (!tw_enter_chunk_nowait(wh, want_ids, &now)) {
				tw_unlock(wh);
				iov_iter_revert(from, got);
				err = -EAGAIN;
				break;
			}
		} else {
			now = tw_enter_chunk(wh, n);
		}
		deadline = tw_deadline(now, wh->cfg.timeout_ns);
		for (i = 0; i < n; i++) {
			struct tw_ent *e = tw_set_deadline(wh, ids[i], deadline, NULL,
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
		tw_leave(wh);
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
 * One hold of a read(): the first events of the queue, at most
 * TW_HOLD_EVENTS and as many as fit in the @safe bytes of @to that are
 * faulted in, copied with page faults disabled.  Those copied leave the
 * queue; a record a page fault cut short stays unread.  Returns how many
 * were copied, and in @tried how many it tried.
 */
static unsigned long tw_read_hold(struct twheel *wh, struct iov_iter *to,
				  size_t safe, bool nowait,
				  unsigned long *tried)
{
	struct twheel_event ev[TW_HOLD_EVENTS];
	struct tw_ent *ent[TW_HOLD_EVENTS];
	const size_t sz = sizeof(ev[0]);
	unsigned long n = 0, ok, i;
	struct tw_node *node;
	size_t copied;

	tw_lock(wh);
	for (node = tw_ready_first(&wh->w); node;
	     node = tw_ready_next(&wh->w, node)) {
		if (n == TW_HOLD_EVENTS || (n + 1) * sz > safe)
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
		 * Removing an earlier event's entry may have shifted this one
		 * back a slot: look it up again only then.
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
	tw_unlock(wh);
	*tried = n;
	return ok;
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
	const size_t sz = sizeof(struct twheel_event);
	size_t count = iov_iter_count(to), done = 0, safe = 0;
	unsigned long n, ok;
	int err;

	if (count < sz)
		return -EINVAL;
	count -= count % sz;
	while (done < count) {
		if (tw_due(wh) && !tw_has_events(wh)) {
			tw_lock(wh);
			tw_run_due(wh, false, true);
			tw_leave(wh);
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
		ok = tw_read_hold(wh, to, safe, nowait, &n);
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
		tw_lock(wh);
		tw_run_due(wh, true, false);
		tw_leave(wh);
	}
	if (tw_has_events(wh))
		mask |= EPOLLIN | EPOLLRDNORM;
	/* false only while a nowait writer waits for the index to grow */
	if (!READ_ONCE(wh->full))
		mask |= EPOLLOUT | EPOLLWRNORM;
	return mask;
}

static void tw_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct twheel *wh = file->private_data;
	struct twheel_config c;
	struct twheel_stats st;

	/* another process may read it: it does not run this wheel's expiry */
	tw_get_stats(wh, &st, false);
	tw_lock(wh);
	c = wh->cfg;
	tw_unlock(wh);
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

	wh = kzalloc_obj(*wh, GFP_KERNEL_ACCOUNT);
	tab = tw_tab_alloc(TW_IDX_MIN, GFP_KERNEL_ACCOUNT);
	sentinel = tw_node_alloc(0, GFP_KERNEL_ACCOUNT);
	if (!wh || !tab || !sentinel)
		goto nomem;
	wh->user = tw_user_get(current_uid());
	if (!wh->user)
		goto nomem;
	spin_lock_init(&wh->lock);
	init_waitqueue_head(&wh->wq);
	tw_expire_init(wh);
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

	tw_lock(wh);
	wh->closing = true;
	tw_unlock(wh);
	tw_bpf_unexport(wh);
	tw_expire_stop(wh);

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

const struct file_operations tw_fops = {
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
