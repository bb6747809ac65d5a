// SPDX-License-Identifier: GPL-2.0
/*
 * twheel as the VFS sees the fd: readv/writev with records and ids
 * straddling iovecs, preadv2/pwritev2 with RWF_NOWAIT, Linux aio, and a
 * signal ending a long write(), ARM or DUMP with the exact count done
 * (CANCEL runs through it).  io_uring: twheel_uring_test.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/aio_abi.h>

#include <linux/twheel.h>

/* kselftest_harness.h (6.1) has unused parameters in its own macros. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "twheel_test.h"

/* Queue @n events now: ids @first.., data id + 1, deadlines in the past. */
static int queue_events(int fd, uint64_t first, unsigned int n)
{
	struct twheel_arm e[64];
	uint64_t done;
	unsigned int i;
	int ret;

	if (n > 64)
		return -EINVAL;
	for (i = 0; i < n; i++)
		e[i] = (struct twheel_arm){ .id = first + i, .data = first + i + 1,
					    .timeout_ns = 1,
					    .flags = TWHEEL_ARM_ABSTIME };
	ret = arm_n(fd, e, n, &done);
	return ret ? ret : (int)done;
}

/* ---- signals --------------------------------------------------------- */

static volatile sig_atomic_t signals;

static void on_alarm(int sig)
{
	signals++;
}

/*
 * SIGALRM every @ms ms from @ms on (0: stop, keeping the count in
 * signals), without SA_RESTART: a call that does not end at a signal is
 * interrupted again and again.
 */
static int alarm_every(unsigned int ms)
{
	struct itimerval it = {
		.it_value = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 },
		.it_interval = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 },
	};
	struct sigaction sa = { .sa_handler = on_alarm };

	if (ms)
		signals = 0;
	if (sigaction(SIGALRM, &sa, NULL))
		return -errno;
	return setitimer(ITIMER_REAL, &it, NULL) ? -errno : 0;
}

/* Arm ids 1..n through write(), a whole call at a time; 0 or -errno. */
static int write_all(int fd, const uint64_t *ids, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = write(fd, ids + done, (n - done) * sizeof(*ids));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		done += r / sizeof(*ids);
	}
	return 0;
}

/* ---- readv / writev --------------------------------------------------- */

/* Three records over iovecs of 20, 40 and 36 bytes: each record whole. */
TEST(readv_records_straddle_iovecs)
{
	struct twheel_event ev[3];
	unsigned char buf[96];
	struct iovec iov[3] = {
		{ buf, 20 }, { buf + 20, 40 }, { buf + 60, 36 },
	};
	int fd, i;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(3, queue_events(fd, 100, 3));
	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(96, readv(fd, iov, 3));
	memcpy(ev, buf, sizeof(ev));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(100U + i, ev[i].id);
		EXPECT_EQ(101U + i, ev[i].data);
		EXPECT_LE(ev[i].deadline_ns, ev[i].expired_ns);
	}
	close(fd);
}

/*
 * One event queued, two iovecs of one record each: readv() returns the
 * event rather than waiting for a second one (it used to block in the
 * second iovec until a signal).
 */
TEST(readv_returns_with_data_in_hand)
{
	struct twheel_event a, b;
	struct iovec iov[2] = { { &a, sizeof(a) }, { &b, sizeof(b) } };
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(1, queue_events(fd, 7, 1));
	ASSERT_EQ(0, alarm_every(10000));
	EXPECT_EQ((ssize_t)sizeof(a), readv(fd, iov, 2));
	alarm_every(0);
	EXPECT_EQ(0, signals) TH_LOG("readv() waited for a signal");
	EXPECT_EQ(7U, a.id);
	close(fd);
}

/* Ids split over iovecs of 4, 12 and 8 bytes: three whole ids. */
TEST(writev_ids_straddle_iovecs)
{
	uint64_t ids[3] = { 11, 22, 33 };
	unsigned char *p = (unsigned char *)ids;
	struct iovec iov[3] = { { p, 4 }, { p + 4, 12 }, { p + 16, 8 } };
	struct iovec bad[2] = { { p, 4 }, { p + 4, 8 } };
	struct twheel_query q;
	struct twheel_stats st;
	int fd, i;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(24, writev(fd, iov, 3));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, query(fd, ids[i], &q));
	/* 12 bytes are not whole ids: nothing is touched */
	EXPECT_EQ(-1, writev(fd, bad, 2));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(3U, st.touches);
	close(fd);
}

/* ---- RWF_NOWAIT and aio ------------------------------------------------ */

TEST(preadv2_pwritev2_nowait)
{
	uint64_t ids[2] = { 5, 6 };
	struct twheel_event ev[4];
	struct iovec wi = { ids, sizeof(ids) }, ri = { ev, sizeof(ev) };
	struct twheel_query q;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	/* a blocking fd: RWF_NOWAIT returns at once (it was EOPNOTSUPP) */
	EXPECT_EQ(-1, preadv2(fd, &ri, 1, -1, RWF_NOWAIT));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_EQ((ssize_t)sizeof(ids), pwritev2(fd, &wi, 1, -1, RWF_NOWAIT));
	EXPECT_EQ(0, query(fd, 5, &q));
	EXPECT_EQ(0, query(fd, 6, &q));
	ASSERT_EQ(2, queue_events(fd, 40, 2));
	EXPECT_EQ(2 * (ssize_t)sizeof(ev[0]), preadv2(fd, &ri, 1, -1, RWF_NOWAIT));
	EXPECT_EQ(40U, ev[0].id);
	EXPECT_EQ(41U, ev[1].id);
	close(fd);
}

static long io_setup_(unsigned int n, aio_context_t *ctx)
{
	return syscall(__NR_io_setup, n, ctx);
}

static long io_submit_(aio_context_t ctx, long n, struct iocb **cbs)
{
	return syscall(__NR_io_submit, ctx, n, cbs);
}

static long io_getevents_(aio_context_t ctx, long min, long max,
			  struct io_event *ev)
{
	struct timespec ts = { .tv_sec = 30 };

	return syscall(__NR_io_getevents, ctx, min, max, ev, &ts);
}

static long io_destroy_(aio_context_t ctx)
{
	return syscall(__NR_io_destroy, ctx);
}

/* Linux aio: a PWRITE of ids, a PREAD of events, a NOWAIT PREAD (EAGAIN). */
TEST(aio_read_write)
{
	uint64_t ids[4] = { 1, 2, 3, 4 };
	struct twheel_event ev[8];
	struct iocb w = {
		.aio_lio_opcode = IOCB_CMD_PWRITE, .aio_buf = (uintptr_t)ids,
		.aio_nbytes = sizeof(ids),
	}, r = {
		.aio_lio_opcode = IOCB_CMD_PREAD, .aio_buf = (uintptr_t)ev,
		.aio_nbytes = sizeof(ev),
	}, nw = {
		.aio_lio_opcode = IOCB_CMD_PREAD, .aio_buf = (uintptr_t)ev,
		.aio_nbytes = sizeof(ev), .aio_rw_flags = RWF_NOWAIT,
	};
	struct iocb *cbs[1];
	struct io_event out;
	aio_context_t ctx = 0;
	struct twheel_stats st;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	if (io_setup_(4, &ctx) && errno == ENOSYS)
		SKIP(return, "no Linux aio in this kernel (CONFIG_AIO)");
	ASSERT_NE((aio_context_t)0, ctx);
	w.aio_fildes = r.aio_fildes = nw.aio_fildes = fd;

	cbs[0] = &w;
	ASSERT_EQ(1, io_submit_(ctx, 1, cbs));
	ASSERT_EQ(1, io_getevents_(ctx, 1, 1, &out));
	EXPECT_EQ((int64_t)sizeof(ids), out.res);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(4U, st.armed);

	/* nothing queued: a NOWAIT read completes with -EAGAIN */
	cbs[0] = &nw;
	ASSERT_EQ(1, io_submit_(ctx, 1, cbs));
	ASSERT_EQ(1, io_getevents_(ctx, 1, 1, &out));
	EXPECT_EQ(-EAGAIN, out.res);

	ASSERT_EQ(3, queue_events(fd, 50, 3));
	cbs[0] = &r;
	ASSERT_EQ(1, io_submit_(ctx, 1, cbs));
	ASSERT_EQ(1, io_getevents_(ctx, 1, 1, &out));
	EXPECT_EQ(3 * (int64_t)sizeof(ev[0]), out.res);
	EXPECT_EQ(50U, ev[0].id);
	EXPECT_EQ(52U, ev[2].id);
	io_destroy_(ctx);
	close(fd);
}

/* ---- a signal ends a long call ------------------------------------------ */

/*
 * Enough ids that one call takes well over the signal period (5 ms) on
 * any machine: 256K (tens of ms natively, seconds under TCG), 64K on the
 * debug kernel (TWHEEL_SLOW_KERNEL), where each id costs ~65 us.
 */
static size_t long_ids(void)
{
	return getenv("TWHEEL_SLOW_KERNEL") ? 1UL << 16 : 1UL << 18;
}

FIXTURE(longcall) {
	size_t n;
};

FIXTURE_SETUP(longcall)
{
	self->n = long_ids();
}

FIXTURE_TEARDOWN(longcall)
{
}

/* write() of 1M new ids, SIGALRM every 5 ms: a short count, exactly done. */
TEST_F_TIMEOUT(longcall, write_signal_short_count, 120)
{
	const size_t LONG_IDS = self->n;
	uint64_t *ids = seq_ids(LONG_IDS);
	struct twheel_stats st;
	struct twheel_query q;
	ssize_t r;
	int fd;

	ASSERT_NE(NULL, ids);
	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, set_max_ids(fd, LONG_IDS));
	ASSERT_EQ(0, alarm_every(5));
	r = write(fd, ids, LONG_IDS * sizeof(*ids));
	alarm_every(0);
	ASSERT_LT(0, r) TH_LOG("write: %s", strerror(errno));
	EXPECT_LT(0, signals);
	EXPECT_EQ(0U, r % sizeof(*ids));
	EXPECT_GT((ssize_t)(LONG_IDS * sizeof(*ids)), r)
		TH_LOG("the write ran to the end through %d signals", signals);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(r / sizeof(*ids), st.touches);
	EXPECT_EQ(r / sizeof(*ids), st.armed);
	EXPECT_EQ(0, query(fd, r / sizeof(*ids), &q));
	EXPECT_EQ(-ENOENT, query(fd, r / sizeof(*ids) + 1, &q));
	close(fd);
	free(ids);
}

/* ARM of 1M entries: EINTR, done = the first entry not applied. */
TEST_F_TIMEOUT(longcall, arm_signal_eintr_exact, 120)
{
	const size_t LONG_IDS = self->n;
	struct twheel_arm *e = calloc(LONG_IDS, sizeof(*e));
	struct twheel_batch b = { .ptr = (uintptr_t)e, .count = LONG_IDS };
	struct twheel_stats st;
	struct twheel_query q;
	size_t i;
	int fd, r;

	ASSERT_NE(NULL, e);
	for (i = 0; i < LONG_IDS; i++)
		e[i] = (struct twheel_arm){ .id = i + 1, .data = i,
					    .flags = TWHEEL_ARM_NOREPLACE };
	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, set_max_ids(fd, LONG_IDS));
	ASSERT_EQ(0, alarm_every(5));
	r = ioctl(fd, TWHEEL_IOC_ARM, &b);
	alarm_every(0);
	ASSERT_EQ(-1, r) TH_LOG("ARM ran to the end through %d signals", signals);
	ASSERT_EQ(EINTR, errno);
	ASSERT_LT(0U, b.done);
	ASSERT_GT(LONG_IDS, b.done);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(b.done, st.arms);
	EXPECT_EQ(b.done, st.armed);
	EXPECT_EQ(0, query(fd, b.done, &q));
	EXPECT_EQ(-ENOENT, query(fd, b.done + 1, &q));
	/* the rest, NOREPLACE: not one entry was applied twice */
	b.ptr = (uintptr_t)(e + b.done);
	b.count = LONG_IDS - b.done;
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_ARM, &b));
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(LONG_IDS, st.armed);
	close(fd);
	free(e);
}

/*
 * CANCEL of 1M ids runs through signals: its done counts the ids removed
 * and could not say where an interrupted batch would resume.
 */
TEST_F_TIMEOUT(longcall, cancel_runs_through_signals, 120)
{
	const size_t LONG_IDS = self->n;
	uint64_t *ids = seq_ids(LONG_IDS);
	struct twheel_batch b = { .ptr = (uintptr_t)ids, .count = LONG_IDS };
	struct twheel_stats st;
	int fd, r;

	ASSERT_NE(NULL, ids);
	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, set_max_ids(fd, LONG_IDS));
	ASSERT_EQ(0, write_all(fd, ids, LONG_IDS));
	ASSERT_EQ(0, alarm_every(5));
	r = ioctl(fd, TWHEEL_IOC_CANCEL, &b);
	alarm_every(0);
	ASSERT_EQ(0, r) TH_LOG("CANCEL: %s", strerror(errno));
	EXPECT_EQ(LONG_IDS, b.done);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(0U, st.armed);
	TH_LOG("%d signals during the CANCEL", (int)signals);
	close(fd);
	free(ids);
}

/* DUMP of 1M ids into room for all: a signal makes it short, then resume. */
TEST_F_TIMEOUT(longcall, dump_signal_short, 120)
{
	const size_t LONG_IDS = self->n;
	uint64_t *ids = seq_ids(LONG_IDS);
	struct twheel_arm *out = calloc(LONG_IDS, sizeof(*out));
	unsigned char *seen = calloc(LONG_IDS + 1, 1);
	struct twheel_dump d = { .ptr = (uintptr_t)out, .count = LONG_IDS };
	uint64_t total = 0, calls = 0, first = 0, i;
	int fd;

	ASSERT_NE(NULL, ids);
	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, seen);
	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, set_max_ids(fd, LONG_IDS));
	ASSERT_EQ(0, write_all(fd, ids, LONG_IDS));
	ASSERT_EQ(0, alarm_every(5));
	for (;;) {
		d.ptr = (uintptr_t)out;
		d.count = LONG_IDS;
		if (ioctl(fd, TWHEEL_IOC_DUMP, &d)) {
			ASSERT_EQ(EINTR, errno);	/* nothing done: retry */
			continue;
		}
		if (!d.done)
			break;
		if (!calls++)
			first = d.done;
		for (i = 0; i < d.done; i++) {
			ASSERT_LE(1U, out[i].id);
			ASSERT_GE(LONG_IDS, out[i].id);
			ASSERT_EQ(0, seen[out[i].id]) TH_LOG("id %" PRIu64 " twice",
							     (uint64_t)out[i].id);
			seen[out[i].id] = 1;
		}
		total += d.done;
	}
	alarm_every(0);
	EXPECT_LT(0, signals);
	EXPECT_GT(LONG_IDS, first) TH_LOG("the first DUMP ran to the end");
	EXPECT_EQ(LONG_IDS, total);
	TH_LOG("%" PRIu64 " calls, first %" PRIu64 " entries, %d signals",
	       calls, first, (int)signals);
	close(fd);
	free(seen);
	free(out);
	free(ids);
}

TEST_HARNESS_MAIN
