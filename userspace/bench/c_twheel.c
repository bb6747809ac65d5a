// SPDX-License-Identifier: GPL-2.0
/*
 * Contender "twheel": /dev/twheel.  Touches are write() batches of ids,
 * setup and bursts use TWHEEL_IOC_ARM with absolute deadlines, expirations
 * come from poll() + read() of struct twheel_event records.
 *
 * Contenders "uring" and "sqpoll": the same wheel on a blocking fd, with
 * touches as IORING_OP_WRITEs of up to 1024 ids each, every SQE of a call
 * in one submit (a 8192-id call is 8 SQEs), waiting for their CQEs; with
 * SQPOLL the kernel thread submits and the bench spins on the CQ ring.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
#include <liburing.h>
#include <linux/twheel.h>

#include "bench.h"

#define TW_READ_EVENTS	1024	/* events per read() */
#define TW_ARM_BATCH	1024	/* entries per TWHEEL_IOC_ARM */
#define TW_URING_IDS	1024	/* ids per IORING_OP_WRITE */
#define TW_URING_SQES	64	/* ring size: 64K ids per touch call */

enum tw_via { TW_WRITE, TW_URING, TW_SQPOLL };

struct tw {
	struct contender c;
	int fd;
	enum tw_via via;
	struct io_uring ring;	/* TW_URING, TW_SQPOLL */
	struct twheel_event *ev;
	struct twheel_arm *arm;
};

static struct tw *tw_of(struct contender *c)
{
	return (struct tw *)c;
}

int twheel_fd(struct contender *c)
{
	return tw_of(c)->fd;
}

int twheel_get_stats(struct contender *c, struct twheel_stats *st)
{
	memset(st, 0, sizeof(*st));
	return ioctl(tw_of(c)->fd, TWHEEL_IOC_GET_STATS, st) ? -errno : 0;
}

static int tw_open_via(struct contender **cp, const struct copts *o,
		       enum tw_via via)
{
	struct twheel_config cfg;
	struct tw *t;

	t = xcalloc(1, sizeof(*t));
	t->via = via;
	/* io_uring waits in its poll only on a blocking fd */
	t->fd = open("/dev/twheel", O_RDWR | O_CLOEXEC |
		     (via == TW_WRITE ? O_NONBLOCK : 0));
	if (t->fd < 0) {
		int err = -errno;

		free(t);
		return err;
	}
	if (ioctl(t->fd, TWHEEL_IOC_GET_CONFIG, &cfg))
		die("TWHEEL_IOC_GET_CONFIG: %m");
	cfg.tick_ns = o->tick_ns;
	cfg.timeout_ns = o->timeout_ns;
	if (cfg.max_ids < o->n_max)
		cfg.max_ids = o->n_max;
	if (ioctl(t->fd, TWHEEL_IOC_SET_CONFIG, &cfg))
		die("TWHEEL_IOC_SET_CONFIG (tick %llu, timeout %llu, max_ids %llu): %m",
		    (unsigned long long)cfg.tick_ns,
		    (unsigned long long)cfg.timeout_ns,
		    (unsigned long long)cfg.max_ids);
	if (via != TW_WRITE) {
		struct io_uring_params p = {
			.flags = via == TW_SQPOLL ? IORING_SETUP_SQPOLL : 0,
			.sq_thread_idle = 1000,
		};
		int err = io_uring_queue_init_params(TW_URING_SQES, &t->ring, &p);

		if (err)
			die("io_uring_queue_init_params: %s", strerror(-err));
	}
	t->ev = xcalloc(TW_READ_EVENTS, sizeof(*t->ev));
	t->arm = xcalloc(TW_ARM_BATCH, sizeof(*t->arm));
	*cp = &t->c;
	return 0;
}

static int tw_open(struct contender **cp, const struct copts *o)
{
	return tw_open_via(cp, o, TW_WRITE);
}

static int tw_open_uring(struct contender **cp, const struct copts *o)
{
	return tw_open_via(cp, o, TW_URING);
}

static int tw_open_sqpoll(struct contender **cp, const struct copts *o)
{
	return tw_open_via(cp, o, TW_SQPOLL);
}

/*
 * TWHEEL_IOC_ARM in batches: with @deadlines, absolute deadlines and data
 * 0; else the relative @timeout_ns and non-zero data (the data-node path).
 */
static int tw_arm(struct tw *t, const uint64_t *ids, const uint64_t *deadlines,
		  uint64_t timeout_ns, size_t n)
{
	size_t done = 0, i, k;

	while (done < n) {
		struct twheel_batch b = { 0 };

		k = n - done < TW_ARM_BATCH ? n - done : TW_ARM_BATCH;
		for (i = 0; i < k; i++) {
			const uint64_t id = ids[done + i];

			t->arm[i].id = id;
			t->arm[i].timeout_ns = deadlines ? deadlines[done + i] : timeout_ns;
			t->arm[i].data = deadlines ? 0 : id | 1;
			t->arm[i].flags = deadlines ? TWHEEL_ARM_ABSTIME : 0;
		}
		b.ptr = (uintptr_t)t->arm;
		b.count = k;
		if (ioctl(t->fd, TWHEEL_IOC_ARM, &b))
			return -errno;
		done += k;
	}
	return 0;
}

static int tw_arm_abs(struct contender *c, const uint64_t *ids,
		      const uint64_t *deadlines, size_t n)
{
	return tw_arm(tw_of(c), ids, deadlines, 0, n);
}

int twheel_arm_data(struct contender *c, const uint64_t *ids, size_t n,
		    uint64_t timeout_ns)
{
	return tw_arm(tw_of(c), ids, NULL, timeout_ns, n);
}

static int tw_touch(struct contender *c, const uint64_t *ids, size_t n,
		    uint64_t now)
{
	struct tw *t = tw_of(c);
	size_t done = 0;

	(void)now;
	while (done < n) {
		ssize_t r = write(t->fd, ids + done, (n - done) * sizeof(*ids));

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)r / sizeof(*ids);
	}
	return 0;
}

/* Queue an IORING_OP_WRITE of ids @off.. of @ids, @k of them. */
static void tw_prep_write(struct tw *t, const uint64_t *ids, size_t off,
			  size_t k)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);

	io_uring_prep_write(sqe, t->fd, ids + off, (unsigned int)(k * sizeof(*ids)), 0);
	io_uring_sqe_set_data64(sqe, (uint64_t)off << 32 | k);
}

/*
 * Touch through io_uring: one SQE per TW_URING_IDS ids, all in one submit,
 * then their CQEs (a short write, legal with IOCB_NOWAIT, is sent again).
 */
static int tw_touch_uring(struct contender *c, const uint64_t *ids, size_t n,
			  uint64_t now)
{
	struct tw *t = tw_of(c);
	size_t off, inflight = 0;
	int r;

	(void)now;
	if (n > (size_t)TW_URING_IDS * TW_URING_SQES)
		return -E2BIG;
	for (off = 0; off < n; off += TW_URING_IDS, inflight++)
		tw_prep_write(t, ids, off,
			      n - off < TW_URING_IDS ? n - off : TW_URING_IDS);
	while (inflight) {
		struct io_uring_cqe *cqe;
		uint64_t tag;
		size_t k;

		r = io_uring_submit(&t->ring);
		if (r < 0)
			return r;
		if (t->via == TW_SQPOLL) {
			while (io_uring_peek_cqe(&t->ring, &cqe))
				;	/* the SQ thread works on the other CPU */
		} else {
			r = io_uring_wait_cqe(&t->ring, &cqe);
			if (r < 0)
				return r;
		}
		r = cqe->res;
		tag = io_uring_cqe_get_data64(cqe);
		io_uring_cqe_seen(&t->ring, cqe);
		inflight--;
		if (r < 0)
			return r;
		k = tag & 0xffffffff;
		if ((size_t)r < k * sizeof(*ids)) {
			off = (tag >> 32) + (size_t)r / sizeof(*ids);
			k -= (size_t)r / sizeof(*ids);
			tw_prep_write(t, ids, off, k);
			inflight++;
		}
	}
	return 0;
}

/* Read every queued event; returns how many, or -errno. */
static long tw_drain(struct tw *t, struct sink *s)
{
	long total = 0;

	for (;;) {
		struct iovec iov = { t->ev, TW_READ_EVENTS * sizeof(*t->ev) };
		/* the io_uring contenders' fd blocks: ask not to wait */
		ssize_t r = preadv2(t->fd, &iov, 1, -1, RWF_NOWAIT);
		uint64_t seen;
		long i, k;

		if (r < 0) {
			if (errno == EAGAIN)
				return total;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		seen = mono_ns();
		k = r / (ssize_t)sizeof(*t->ev);
		for (i = 0; i < k; i++) {
			struct bench_event e = {
				.id = t->ev[i].id,
				.deadline = t->ev[i].deadline_ns,
				.queued = t->ev[i].expired_ns,
				.seen = seen,
			};

			s->fn(s, &e);
		}
		total += k;
		if (k < TW_READ_EVENTS)
			return total;
	}
}

/* One ppoll() until @until at the latest, and a drain of the events */
static int tw_look(struct contender *c, uint64_t now, uint64_t until,
		   struct sink *s)
{
	struct tw *t = tw_of(c);
	struct pollfd p = { .fd = t->fd, .events = POLLIN };
	struct timespec ts = ns_timespec(now < until ? until - now : 0);
	long r = ppoll(&p, 1, &ts, NULL);

	if (r < 0 && errno != EINTR)
		return -errno;
	if (r > 0) {
		r = tw_drain(t, s);
		if (r < 0)
			return (int)r;
	}
	return 0;
}

static int tw_wait(struct contender *c, uint64_t until, struct sink *s)
{
	return wait_loop(c, until, s, tw_look);
}

static void tw_close(struct contender *c)
{
	struct tw *t = tw_of(c);

	if (t->via != TW_WRITE)
		io_uring_queue_exit(&t->ring);
	close(t->fd);
	free(t->ev);
	free(t->arm);
	free(t);
}

/*
 * Wait for the module's work item to go idle (an index resize that the
 * arming left migrating is finished there): its run counter unchanged over
 * two 50 ms intervals, for at most 30 s.
 */
static void tw_settle(struct contender *c)
{
	struct twheel_stats st;
	uint64_t runs = ~0ULL, end = mono_ns() + 30 * NSEC_PER_SEC;
	int still = 0;

	while (!twheel_get_stats(c, &st)) {
		still = st.work_runs == runs ? still + 1 : 0;
		runs = st.work_runs;
		if (still == 2 || mono_ns() >= end)
			return;
		sleep_until_ns(mono_ns() + 50 * NSEC_PER_MSEC);
	}
}

/*
 * The three contenders on /dev/twheel arm, wait, close and settle the same
 * way; they differ in how the fd is opened and how touches reach it.
 */
#define TW_OPS(_name, _open, _touch) \
	CONTENDER_OPS(_name, _open, tw_arm_abs, _touch, tw_wait, tw_close, tw_settle)

const struct contender_ops twheel_ops = TW_OPS("twheel", tw_open, tw_touch);
const struct contender_ops uring_ops = TW_OPS("uring", tw_open_uring, tw_touch_uring);
const struct contender_ops sqpoll_ops = TW_OPS("sqpoll", tw_open_sqpoll, tw_touch_uring);
