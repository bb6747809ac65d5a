// SPDX-License-Identifier: GPL-2.0
/*
 * Contender "twheel": /dev/twheel.  Touches are write() batches of ids,
 * setup and bursts use TWHEEL_IOC_ARM with absolute deadlines, expirations
 * come from poll() + read() of struct twheel_event records.
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
#include <linux/twheel.h>

#include "bench.h"

#define TW_READ_EVENTS	1024	/* events per read() */
#define TW_ARM_BATCH	1024	/* entries per TWHEEL_IOC_ARM */

struct tw {
	struct contender c;
	int fd;
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

static int tw_open(struct contender **cp, const struct copts *o)
{
	struct twheel_config cfg;
	struct tw *t;

	t = xcalloc(1, sizeof(*t));
	t->fd = open("/dev/twheel", O_RDWR | O_NONBLOCK | O_CLOEXEC);
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
	t->ev = xcalloc(TW_READ_EVENTS, sizeof(*t->ev));
	t->arm = xcalloc(TW_ARM_BATCH, sizeof(*t->arm));
	*cp = &t->c;
	return 0;
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

/* Read every queued event; returns how many, or -errno. */
static long tw_drain(struct tw *t, struct sink *s)
{
	long total = 0;

	for (;;) {
		ssize_t r = read(t->fd, t->ev, TW_READ_EVENTS * sizeof(*t->ev));
		uint64_t seen;
		long i, k;

		if (r < 0) {
			if (errno == EAGAIN)
				return total;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		seen = now_ns();
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

static int tw_wait(struct contender *c, uint64_t until, struct sink *s)
{
	struct tw *t = tw_of(c);
	struct pollfd p = { .fd = t->fd, .events = POLLIN };

	bool once = false;

	/* at least one look, even when @until has passed already */
	while (!s->done) {
		uint64_t now = now_ns(), left = now < until ? until - now : 0;
		struct timespec ts = {
			.tv_sec = (time_t)(left / NSEC_PER_SEC),
			.tv_nsec = (long)(left % NSEC_PER_SEC),
		};
		long r;

		if (!left && once)
			break;
		once = true;
		r = ppoll(&p, 1, &ts, NULL);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0) {
			r = tw_drain(t, s);
			if (r < 0)
				return (int)r;
		}
	}
	return 0;
}

static void tw_close(struct contender *c)
{
	struct tw *t = tw_of(c);

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
	uint64_t runs = ~0ULL, end = now_ns() + 30 * NSEC_PER_SEC;
	int still = 0;

	while (!twheel_get_stats(c, &st)) {
		still = st.runs == runs ? still + 1 : 0;
		runs = st.runs;
		if (still == 2 || now_ns() >= end)
			return;
		sleep_until(now_ns() + 50 * NSEC_PER_MSEC);
	}
}

const struct contender_ops twheel_ops = {
	.name = "twheel",
	.open = tw_open,
	.arm_abs = tw_arm_abs,
	.touch = tw_touch,
	.wait = tw_wait,
	.close = tw_close,
	.settle = tw_settle,
};
