// SPDX-License-Identifier: GPL-2.0
/*
 * twheel in time namespaces: every absolute time that crosses the ABI
 * (ABSTIME arm, events, QUERY, DUMP) is on the clock of the time namespace
 * the fd was opened in, for CLOCK_MONOTONIC and CLOCK_BOOTTIME, with
 * offsets in both directions; a DUMP taken in one namespace restores in
 * another whose clock reads the same, and means another instant in the
 * host's.  Needs CAP_SYS_ADMIN for unshare(CLONE_NEWTIME) (else skips).
 *
 * Each case runs its namespace side in a child (only children enter the
 * namespace unshare() prepares), which reports a failure as its exit
 * status: the number of the check that failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

/* kselftest_harness.h (6.1) has unused parameters in its own macros. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "twheel_test.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

#define OFFSET_S	1000	/* a namespace 1000 s ahead of the host */

/*
 * Prepare a new time namespace for the children to come, @off_s seconds
 * away from the host on both clocks: 0, -errno, or 1 if /dev/twheel is
 * absent.
 */
static int new_timens(long off_s)
{
	char buf[96];
	int fd, n;

	if (access("/dev/twheel", F_OK))
		return 1;
	if (unshare(CLONE_NEWTIME))
		return -errno;
	fd = open("/proc/self/timens_offsets", O_WRONLY);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "monotonic %ld 0\nboottime %ld 0\n",
		     off_s, off_s);
	if (write(fd, buf, n) != n) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return 0;
}

#define NEW_TIMENS_OR_SKIP(off) do {					\
	int _r = new_timens(off);					\
	if (_r == 1)							\
		SKIP(return, "/dev/twheel not present (module not loaded)"); \
	if (_r == -EPERM || _r == -EINVAL || _r == -ENOENT)		\
		SKIP(return, "no time namespace: %s", strerror(-_r));	\
	ASSERT_EQ(0, _r);						\
} while (0)

static int open_wheel_on(clockid_t clk)
{
	struct twheel_config c;
	int fd = open_wheel(0);

	if (fd < 0)
		return -1;
	if (ioctl(fd, TWHEEL_IOC_GET_CONFIG, &c))
		return -1;
	c.clockid = (__u32)clk;
	return ioctl(fd, TWHEEL_IOC_SET_CONFIG, &c) ? -1 : fd;
}

static int query_deadline(int fd, uint64_t id, uint64_t *d)
{
	struct twheel_query q;

	if (query(fd, id, &q))
		return -1;
	*d = q.deadline_ns;
	return 0;
}

/* The next event, waiting at most @ms; 0 or -1. */
static int next_event(int fd, int ms, struct twheel_event *ev)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (poll(&p, 1, ms) != 1)
		return -1;
	return read(fd, ev, sizeof(*ev)) == sizeof(*ev) ? 0 : -1;
}

/* Wait for the child; its exit status (0: passed), or 255 if it died. */
static int child_status(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return 255;
	return WEXITSTATUS(st);
}

/*
 * @side(@arg) in a child (which enters the namespace unshare() prepared,
 * if any); its status, see child_status().  Fails the test if fork() does.
 */
static int in_child(struct __test_metadata *_metadata, int (*side)(int), int arg)
{
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(side(arg));
	return child_status(pid);
}

/*
 * In the namespace, on @clk: an ABSTIME arm 200 ms ahead of the
 * namespace's now and a relative one of 100 ms; QUERY, the events'
 * deadline_ns and expired_ns, all on the namespace's clock.
 */
static int ns_side(clockid_t clk)
{
	struct twheel_event ev;
	uint64_t t0, t1, d, abs_d;
	int fd = open_wheel_on(clk);

	if (fd < 0)
		return 1;
	t0 = clock_ns(clk);
	abs_d = t0 + 200 * MS;
	if (arm1(fd, 1, abs_d, 0, TWHEEL_ARM_ABSTIME) || arm1(fd, 2, 100 * MS, 0, 0))
		return 2;
	t1 = clock_ns(clk);
	if (query_deadline(fd, 1, &d) || d != abs_d)
		return 3;
	if (query_deadline(fd, 2, &d) || d < t0 + 100 * MS || d > t1 + 100 * MS)
		return 4;
	/* both due within a second: 20 s is plenty, 1000 s would not be */
	if (next_event(fd, 20000, &ev) || ev.id != 2)
		return 5;
	if (ev.deadline_ns != d || ev.expired_ns < ev.deadline_ns ||
	    ev.expired_ns > clock_ns(clk))
		return 6;
	if (next_event(fd, 20000, &ev) || ev.id != 1)
		return 7;
	if (ev.deadline_ns != abs_d || ev.expired_ns < abs_d ||
	    ev.expired_ns > clock_ns(clk))
		return 8;
	close(fd);
	return 0;
}

static void run_ns_side(struct __test_metadata *_metadata, long off_s,
			clockid_t clk)
{
	int st;

	NEW_TIMENS_OR_SKIP(off_s);
	st = in_child(_metadata, ns_side, clk);
	ASSERT_EQ(0, st) TH_LOG("check %d failed in the namespace (offset %ld s)",
				st, off_s);
}

TEST(ahead_monotonic)
{
	run_ns_side(_metadata, OFFSET_S, CLOCK_MONOTONIC);
}

TEST(ahead_boottime)
{
	run_ns_side(_metadata, OFFSET_S, CLOCK_BOOTTIME);
}

/* Behind the host: the guest has been up for more than 2 s by now. */
TEST(behind_monotonic)
{
	run_ns_side(_metadata, -2, CLOCK_MONOTONIC);
}

/* Child A: arm id 7 one second ahead, DUMP it, hand the entry over. */
static int dump_side(int wfd)
{
	struct twheel_arm out[4];
	struct twheel_dump d = { .ptr = (uintptr_t)out, .count = 4 };
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
	int fd = open_wheel_on(CLOCK_MONOTONIC);

	if (fd < 0 || arm1(fd, 7, SEC, 0, 0))
		return 1;
	if (ioctl(fd, TWHEEL_IOC_DUMP, &d) || d.done != 1 || out[0].id != 7 ||
	    !(out[0].flags & TWHEEL_ARM_ABSTIME))
		return 2;
	/* on this namespace's clock */
	if (out[0].timeout_ns < t0 + SEC ||
	    out[0].timeout_ns > clock_ns(CLOCK_MONOTONIC) + SEC)
		return 3;
	return write(wfd, &out[0], sizeof(out[0])) == sizeof(out[0]) ? 0 : 4;
}

/* Child B, in another namespace reading the same: restore, same instant. */
static int restore_side(int rfd)
{
	struct twheel_arm e;
	struct twheel_batch b = { .ptr = (uintptr_t)&e, .count = 1 };
	struct twheel_event ev;
	uint64_t d;
	int fd = open_wheel_on(CLOCK_MONOTONIC);

	if (fd < 0 || read(rfd, &e, sizeof(e)) != sizeof(e))
		return 1;
	if (ioctl(fd, TWHEEL_IOC_ARM, &b))
		return 2;
	if (query_deadline(fd, 7, &d) || d != e.timeout_ns)
		return 3;
	if (next_event(fd, 20000, &ev) || ev.id != 7 ||
	    ev.deadline_ns != e.timeout_ns || ev.expired_ns < ev.deadline_ns)
		return 4;
	return 0;
}

/*
 * A DUMP in one namespace 1000 s ahead, restored in another 1000 s ahead:
 * the same deadlines, due about a second later.  Restored in the host's
 * namespace instead, the same numbers are 1000 s away.
 */
TEST(dump_restore_across_namespaces)
{
	struct twheel_arm e;
	struct twheel_batch b = { .ptr = (uintptr_t)&e, .count = 1 };
	struct twheel_event ev;
	int p[2], q[2], fd, st;
	uint64_t d;

	ASSERT_EQ(0, pipe(p));
	ASSERT_EQ(0, pipe(q));
	NEW_TIMENS_OR_SKIP(OFFSET_S);
	st = in_child(_metadata, dump_side, p[1]);
	ASSERT_EQ(0, st) TH_LOG("dump side: check %d failed", st);
	ASSERT_EQ((ssize_t)sizeof(e), read(p[0], &e, sizeof(e)));
	ASSERT_EQ((ssize_t)sizeof(e), write(q[1], &e, sizeof(e)));

	NEW_TIMENS_OR_SKIP(OFFSET_S);	/* another namespace, same clock */
	st = in_child(_metadata, restore_side, q[0]);
	ASSERT_EQ(0, st) TH_LOG("restore side: check %d failed", st);

	/* here, in the host's namespace, the dumped deadline is far ahead */
	fd = open_wheel_on(CLOCK_MONOTONIC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_ARM, &b));
	ASSERT_EQ(0, query_deadline(fd, 7, &d));
	ASSERT_EQ(e.timeout_ns, d);
	ASSERT_LT(clock_ns(CLOCK_MONOTONIC) + (OFFSET_S - 10) * SEC, d);
	ASSERT_NE(0, next_event(fd, 1500, &ev));
	close(fd);
}

TEST_HARNESS_MAIN
