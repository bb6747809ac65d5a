// SPDX-License-Identifier: GPL-2.0
/*
 * twheel ABI tests: every operation of uapi/linux/twheel.h and every errno
 * path (SET/GET_CONFIG, write() touches, ARM, CANCEL, QUERY, GET_STATS,
 * DUMP, read(), poll/epoll, unknown ioctls, fdinfo, fd independence and the
 * compat layout of the structs).  Timeouts are a few ms so the whole file
 * runs quickly under TCG; lateness is never asserted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <assert.h>

#include <linux/twheel.h>

/* kselftest_harness.h (6.1) has unused parameters in its own macros. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "twheel_test.h"

/* ---- compat layout: same on i386 and x86_64 ------------------------- */
static_assert(sizeof(struct twheel_config) == 64, "config size");
static_assert(sizeof(struct twheel_arm) == 32, "arm size");
static_assert(sizeof(struct twheel_batch) == 40, "batch size");
static_assert(sizeof(struct twheel_query) == 32, "query size");
static_assert(sizeof(struct twheel_stats) == 160, "stats size");
static_assert(sizeof(struct twheel_dump) == 48, "dump size");
static_assert(sizeof(struct twheel_event) == 32, "event size");
static_assert(offsetof(struct twheel_config, clockid) == 24, "config.clockid");
static_assert(offsetof(struct twheel_config, flags) == 28, "config.flags");
static_assert(offsetof(struct twheel_config, reserved) == 32, "config.reserved");
static_assert(offsetof(struct twheel_arm, data) == 16, "arm.data");
static_assert(offsetof(struct twheel_arm, flags) == 24, "arm.flags");
static_assert(offsetof(struct twheel_arm, reserved) == 28, "arm.reserved");
static_assert(offsetof(struct twheel_batch, done) == 16, "batch.done");
static_assert(offsetof(struct twheel_batch, flags) == 24, "batch.flags");
static_assert(offsetof(struct twheel_batch, reserved) == 28, "batch.reserved");
static_assert(offsetof(struct twheel_query, state) == 24, "query.state");
static_assert(offsetof(struct twheel_query, reserved) == 28, "query.reserved");
static_assert(offsetof(struct twheel_stats, discarded) == 80, "stats.discarded");
static_assert(offsetof(struct twheel_stats, hold_max_ns) == 104, "stats.hold_max_ns");
static_assert(offsetof(struct twheel_stats, work_runs) == 112, "stats.work_runs");
static_assert(offsetof(struct twheel_stats, work_ns) == 120, "stats.work_ns");
static_assert(offsetof(struct twheel_stats, bpf_touches) == 128, "stats.bpf_touches");
static_assert(offsetof(struct twheel_stats, bpf_absent) == 136, "stats.bpf_absent");
static_assert(offsetof(struct twheel_stats, reserved) == 144, "stats.reserved");
static_assert(offsetof(struct twheel_dump, cursor) == 24, "dump.cursor");
static_assert(offsetof(struct twheel_dump, reserved) == 32, "dump.reserved");
static_assert(offsetof(struct twheel_event, deadline_ns) == 16, "event.deadline_ns");
static_assert(offsetof(struct twheel_event, expired_ns) == 24, "event.expired_ns");

/* ---- helpers --------------------------------------------------------- */

/* NULL, hidden from the compiler's nonnull checks */
static void *volatile vnull;

/* An unmapped page (mapped then unmapped). */
static void *unmapped_page(void)
{
	void *p = mmap(NULL, page_size(), PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, page_size());
	return p;
}

/* write/read returning -errno on failure */
static ssize_t wr(int fd, const void *buf, size_t len)
{
	ssize_t r = write(fd, buf, len);

	return r < 0 ? -errno : r;
}

static ssize_t rd(int fd, void *buf, size_t len)
{
	ssize_t r = read(fd, buf, len);

	return r < 0 ? -errno : r;
}

static void batch_init(struct twheel_batch *b, const void *ptr, __u64 count)
{
	memset(b, 0, sizeof(*b));
	b->ptr = (__u64)(uintptr_t)ptr;
	b->count = count;
}

/* 0 if absent, else the state */
static int state_of(int fd, __u64 id)
{
	struct twheel_query q;
	int ret = query(fd, id, &q);

	if (ret == -ENOENT)
		return 0;
	return ret ? ret : (int)q.state;
}

static int get_config(int fd, struct twheel_config *c)
{
	memset(c, 0xAA, sizeof(*c));
	return ioctl(fd, TWHEEL_IOC_GET_CONFIG, c) ? -errno : 0;
}

static int set_config(int fd, const struct twheel_config *c)
{
	return ioctl(fd, TWHEEL_IOC_SET_CONFIG, c) ? -errno : 0;
}

/*
 * The guarantees every event must meet.  @timed: the deadline was in the
 * future when armed, so the lateness is the wheel's: log it, with a
 * generous sanity bound (never a real bound under TCG).  Ids armed with a
 * deadline already past are "late" by however far in the past it was.
 */
static void check_event(struct __test_metadata *_metadata,
			const struct twheel_event *ev, clockid_t clk, bool timed)
{
	__u64 now = clock_ns(clk);

	ASSERT_LE(ev->deadline_ns, ev->expired_ns)
		TH_LOG("id %" PRIu64 " expired early", (uint64_t)ev->id);
	ASSERT_LE(ev->deadline_ns, now)
		TH_LOG("id %" PRIu64 " read before its deadline", (uint64_t)ev->id);
	ASSERT_GE(now, ev->expired_ns);
	if (!timed)
		return;
	TH_LOG("id %" PRIu64 " late by %" PRIu64 " ns", (uint64_t)ev->id,
	       (uint64_t)(ev->expired_ns - ev->deadline_ns));
	EXPECT_GT(U(30) * SEC, ev->expired_ns - ev->deadline_ns);	/* sanity: a busy host stalls a TCG guest */
}

/* Nonblocking read of up to @n events; returns the count or -errno. */
static int read_events(int fd, struct twheel_event *ev, int n)
{
	ssize_t r;

	if (set_nonblock(fd, 1))
		return -errno;
	r = read(fd, ev, (size_t)n * sizeof(*ev));
	if (r < 0)
		return -errno;
	return (int)(r / (ssize_t)sizeof(*ev));
}

/* ---- layout ---------------------------------------------------------- */

TEST(compat_layout)
{
	/* The static_asserts above do the work; repeat them at run time. */
	ASSERT_EQ((size_t)64, sizeof(struct twheel_config));
	ASSERT_EQ((size_t)32, sizeof(struct twheel_arm));
	ASSERT_EQ((size_t)40, sizeof(struct twheel_batch));
	ASSERT_EQ((size_t)32, sizeof(struct twheel_query));
	ASSERT_EQ((size_t)160, sizeof(struct twheel_stats));
	ASSERT_EQ((size_t)48, sizeof(struct twheel_dump));
	ASSERT_EQ((size_t)32, sizeof(struct twheel_event));
	/* The ioctl numbers encode these sizes. */
	ASSERT_EQ(64U, _IOC_SIZE(TWHEEL_IOC_SET_CONFIG));
	ASSERT_EQ(64U, _IOC_SIZE(TWHEEL_IOC_GET_CONFIG));
	ASSERT_EQ(40U, _IOC_SIZE(TWHEEL_IOC_ARM));
	ASSERT_EQ(40U, _IOC_SIZE(TWHEEL_IOC_CANCEL));
	ASSERT_EQ(32U, _IOC_SIZE(TWHEEL_IOC_QUERY));
	ASSERT_EQ(160U, _IOC_SIZE(TWHEEL_IOC_GET_STATS));
	ASSERT_EQ(48U, _IOC_SIZE(TWHEEL_IOC_DUMP));
}

/* ---- SET_CONFIG / GET_CONFIG ----------------------------------------- */

TEST(config_defaults)
{
	struct twheel_config c;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, get_config(fd, &c));
	ASSERT_EQ(TWHEEL_DEFAULT_TICK_NS, c.tick_ns);
	ASSERT_EQ(TWHEEL_DEFAULT_TIMEOUT_NS, c.timeout_ns);
	ASSERT_EQ(TWHEEL_DEFAULT_MAX_IDS, c.max_ids);
	ASSERT_EQ((__u32)CLOCK_MONOTONIC, c.clockid);
	ASSERT_EQ(0U, c.flags);
	ASSERT_TRUE(all_bytes(c.reserved, 0, sizeof(c.reserved)));
	/* GET_CONFIG into a bad pointer */
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_GET_CONFIG, NULL));
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_SET_CONFIG, NULL));
	close(fd);
}

enum { F_TICK, F_TIMEOUT, F_MAXIDS, F_CLOCK, F_FLAGS, F_RES };

static const struct bad_cfg {
	const char *what;
	int field;
	__u64 val;
	int idx;
} bad_cfgs[] = {
	{ "tick 0", F_TICK, 0, 0 },
	{ "tick 1 ns", F_TICK, 1, 0 },
	{ "tick below min", F_TICK, TWHEEL_TICK_MIN_NS - 1, 0 },
	{ "tick above max", F_TICK, TWHEEL_TICK_MAX_NS + 1, 0 },
	{ "tick huge", F_TICK, UINT64_MAX, 0 },
	{ "timeout 0", F_TIMEOUT, 0, 0 },
	{ "timeout > max", F_TIMEOUT, TWHEEL_DEADLINE_MAX + 1, 0 },
	{ "timeout u64 max", F_TIMEOUT, UINT64_MAX, 0 },
	{ "max_ids 0", F_MAXIDS, 0, 0 },
	{ "max_ids > limit", F_MAXIDS, TWHEEL_MAX_IDS_LIMIT + 1, 0 },
	{ "CLOCK_REALTIME", F_CLOCK, CLOCK_REALTIME, 0 },
	{ "CLOCK_PROCESS_CPUTIME_ID", F_CLOCK, CLOCK_PROCESS_CPUTIME_ID, 0 },
	{ "CLOCK_MONOTONIC_RAW", F_CLOCK, CLOCK_MONOTONIC_RAW, 0 },
	{ "CLOCK_REALTIME_ALARM", F_CLOCK, 8, 0 },
	{ "CLOCK_BOOTTIME_ALARM", F_CLOCK, 9, 0 },
	{ "clockid 0xffffffff", F_CLOCK, 0xffffffffULL, 0 },
	{ "flags 1", F_FLAGS, 1, 0 },
	{ "flags high bit", F_FLAGS, 0x80000000ULL, 0 },
	{ "reserved[0]", F_RES, 1, 0 },
	{ "reserved[1]", F_RES, 1ULL << 63, 1 },
	{ "reserved[2]", F_RES, 1, 2 },
	{ "reserved[3]", F_RES, 0x100, 3 },
};

static void apply_bad(struct twheel_config *c, const struct bad_cfg *b)
{
	switch (b->field) {
	case F_TICK:
		c->tick_ns = b->val;
		break;
	case F_TIMEOUT:
		c->timeout_ns = b->val;
		break;
	case F_MAXIDS:
		c->max_ids = b->val;
		break;
	case F_CLOCK:
		c->clockid = (__u32)b->val;
		break;
	case F_FLAGS:
		c->flags = (__u32)b->val;
		break;
	case F_RES:
		c->reserved[b->idx] = b->val;
		break;
	}
}

/*
 * Every invalid value fails EINVAL, on an empty fd and on one with ids,
 * and leaves the configuration as it was.
 */
TEST(config_einval)
{
	struct twheel_config base, c, now;
	unsigned int i, pass;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, get_config(fd, &base));
	/* a non-default base so "unchanged" means something */
	base.tick_ns = 2 * MS;
	base.timeout_ns = 5 * SEC;
	base.max_ids = 1000;
	ASSERT_EQ(0, set_config(fd, &base));
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1)	/* EINVAL comes before EBUSY */
			ASSERT_EQ(0, arm1(fd, 42, 10 * SEC, 0, 0));
		for (i = 0; i < sizeof(bad_cfgs) / sizeof(bad_cfgs[0]); i++) {
			c = base;
			apply_bad(&c, &bad_cfgs[i]);
			EXPECT_EQ(-EINVAL, set_config(fd, &c))
				TH_LOG("%s (pass %u)", bad_cfgs[i].what, pass);
			ASSERT_EQ(0, get_config(fd, &now));
			EXPECT_EQ(0, memcmp(&now, &base, sizeof(base)))
				TH_LOG("config changed by failed %s", bad_cfgs[i].what);
		}
	}
	close(fd);
}

/* The edges of every range are accepted on an empty fd. */
TEST(config_edges)
{
	struct twheel_config base, c, now;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, get_config(fd, &base));
	c = base;
	c.tick_ns = TWHEEL_TICK_MIN_NS;
	c.timeout_ns = 1;
	c.max_ids = 1;
	ASSERT_EQ(0, set_config(fd, &c));
	ASSERT_EQ(0, get_config(fd, &now));
	ASSERT_EQ(0, memcmp(&now, &c, sizeof(c)));
	c.tick_ns = TWHEEL_TICK_MAX_NS;
	c.timeout_ns = TWHEEL_DEADLINE_MAX;
	c.max_ids = TWHEEL_MAX_IDS_LIMIT;
	ASSERT_EQ(0, set_config(fd, &c));
	ASSERT_EQ(0, get_config(fd, &now));
	ASSERT_EQ(0, memcmp(&now, &c, sizeof(c)));
	ASSERT_EQ(0, set_config(fd, &base));
	ASSERT_EQ(0, get_config(fd, &now));
	ASSERT_EQ(0, memcmp(&now, &base, sizeof(base)));
	close(fd);
}

/* Changing tick/clockid with an armed id, or max_ids below the count. */
TEST(config_ebusy_armed)
{
	struct twheel_config base, c, now;
	uint64_t ids[3] = { 1, 2, 3 };
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, get_config(fd, &base));
	ASSERT_EQ((ssize_t)sizeof(ids), write(fd, ids, sizeof(ids)));

	c = base;
	c.tick_ns = 2 * MS;
	ASSERT_EQ(-EBUSY, set_config(fd, &c));
	c = base;
	c.clockid = CLOCK_BOOTTIME;
	ASSERT_EQ(-EBUSY, set_config(fd, &c));
	c = base;
	c.max_ids = 2;
	ASSERT_EQ(-EBUSY, set_config(fd, &c));
	ASSERT_EQ(0, get_config(fd, &now));
	ASSERT_EQ(0, memcmp(&now, &base, sizeof(base)));

	/* max_ids == count is fine, as is a new default timeout */
	c = base;
	c.max_ids = 3;
	ASSERT_EQ(0, set_config(fd, &c));
	c.timeout_ns = 7 * SEC;
	ASSERT_EQ(0, set_config(fd, &c));
	ASSERT_EQ(0, get_config(fd, &now));
	ASSERT_EQ(0, memcmp(&now, &c, sizeof(c)));
	ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd, 1));

	/* once empty, tick and clock can change again */
	ASSERT_EQ(0, cancel_n(fd, ids, 3, NULL));
	c.tick_ns = 2 * MS;
	c.clockid = CLOCK_BOOTTIME;
	ASSERT_EQ(0, set_config(fd, &c));
	close(fd);
}

/* An expired, unread id still counts as held. */
TEST(config_ebusy_expired_only)
{
	struct twheel_config base, c, now;
	struct twheel_stats st;
	struct twheel_event ev[4];
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, get_config(fd, &base));
	ASSERT_EQ(0, arm_past(fd, 10, 0));
	ASSERT_EQ(0, arm_past(fd, 11, 0));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(0), st.armed);
	ASSERT_EQ(U(2), st.pending);

	c = base;
	c.tick_ns = 5 * MS;
	ASSERT_EQ(-EBUSY, set_config(fd, &c));
	c = base;
	c.clockid = CLOCK_BOOTTIME;
	ASSERT_EQ(-EBUSY, set_config(fd, &c));
	c = base;
	c.max_ids = 1;
	ASSERT_EQ(-EBUSY, set_config(fd, &c));
	ASSERT_EQ(0, get_config(fd, &now));
	ASSERT_EQ(0, memcmp(&now, &base, sizeof(base)));
	c = base;
	c.timeout_ns = 3 * SEC;
	ASSERT_EQ(0, set_config(fd, &c));

	ASSERT_EQ(2, read_events(fd, ev, 4));
	c.tick_ns = 5 * MS;
	ASSERT_EQ(0, set_config(fd, &c));
	ASSERT_EQ(0, get_config(fd, &now));
	ASSERT_EQ(0, memcmp(&now, &c, sizeof(c)));
	close(fd);
}

/* CLOCK_BOOTTIME on an empty fd: accepted, reflected, and used. */
TEST(config_boottime)
{
	struct twheel_config c, now;
	struct twheel_query q;
	struct twheel_event ev;
	__u64 t0, t1, dl;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, get_config(fd, &c));
	c.clockid = CLOCK_BOOTTIME;
	ASSERT_EQ(0, set_config(fd, &c));
	ASSERT_EQ(0, get_config(fd, &now));
	ASSERT_EQ((__u32)CLOCK_BOOTTIME, now.clockid);
	ASSERT_EQ(0, memcmp(&now, &c, sizeof(c)));

	t0 = clock_ns(CLOCK_BOOTTIME);
	ASSERT_EQ(0, arm1(fd, 1, 5 * SEC, 0, 0));
	t1 = clock_ns(CLOCK_BOOTTIME);
	ASSERT_EQ(0, query(fd, 1, &q));
	ASSERT_LE(t0 + 5 * SEC, q.deadline_ns);
	ASSERT_GE(t1 + 5 * SEC, q.deadline_ns);

	dl = clock_ns(CLOCK_BOOTTIME) + 2 * MS;
	ASSERT_EQ(0, arm1(fd, 2, dl, 9, TWHEEL_ARM_ABSTIME));
	ASSERT_EQ(0, set_nonblock(fd, 0));
	ASSERT_EQ((ssize_t)sizeof(ev), read(fd, &ev, sizeof(ev)));
	ASSERT_EQ(U(2), ev.id);
	ASSERT_EQ(U(9), ev.data);
	ASSERT_EQ(dl, ev.deadline_ns);
	check_event(_metadata, &ev, CLOCK_BOOTTIME, true);

	/* back to CLOCK_MONOTONIC once empty */
	ASSERT_EQ(0, cancel_n(fd, (uint64_t[]){ 1 }, 1, NULL));
	c.clockid = CLOCK_MONOTONIC;
	ASSERT_EQ(0, set_config(fd, &c));
	ASSERT_EQ(0, get_config(fd, &now));
	ASSERT_EQ((__u32)CLOCK_MONOTONIC, now.clockid);
	close(fd);
}

/* ---- write(): touch -------------------------------------------------- */

TEST(write_touch_new)
{
	__u64 ids[3] = { 100, 200, 1ULL << 63 };
	struct twheel_config c;
	struct twheel_query q;
	struct twheel_stats st;
	__u64 t0, t1;
	unsigned int i;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	t0 = now_ns();
	ASSERT_EQ((ssize_t)sizeof(ids), write(fd, ids, sizeof(ids)));
	t1 = now_ns();
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, query(fd, ids[i], &q));
		ASSERT_EQ((__u32)TWHEEL_STATE_ARMED, q.state);
		ASSERT_EQ(U(0), q.data);
		ASSERT_LE(t0 + TWHEEL_DEFAULT_TIMEOUT_NS, q.deadline_ns);
		ASSERT_GE(t1 + TWHEEL_DEFAULT_TIMEOUT_NS, q.deadline_ns);
	}
	/* with a configured timeout */
	ASSERT_EQ(0, get_config(fd, &c));
	c.timeout_ns = 4 * SEC;
	ASSERT_EQ(0, set_config(fd, &c));
	t0 = now_ns();
	ASSERT_EQ((ssize_t)sizeof(__u64), write(fd, &ids[0], sizeof(__u64)));
	ASSERT_EQ((ssize_t)sizeof(__u64), write(fd, (__u64[]){ 300 }, sizeof(__u64)));
	t1 = now_ns();
	ASSERT_EQ(0, query(fd, 300, &q));
	ASSERT_LE(t0 + 4 * SEC, q.deadline_ns);
	ASSERT_GE(t1 + 4 * SEC, q.deadline_ns);
	ASSERT_EQ(0, query(fd, ids[0], &q));
	ASSERT_LE(t0 + 4 * SEC, q.deadline_ns);
	ASSERT_GE(t1 + 4 * SEC, q.deadline_ns);

	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(5), st.touches);
	ASSERT_EQ(U(4), st.armed);
	ASSERT_EQ(U(0), st.arms);
	close(fd);
}

TEST(write_len_zero_and_misaligned)
{
	__u64 ids[4] = { 1, 2, 3, 4 };
	struct twheel_stats st;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, write(fd, ids, 0));
	ASSERT_EQ(-EINVAL, wr(fd, ids, 12));
	ASSERT_EQ(-EINVAL, wr(fd, ids, 7));
	ASSERT_EQ(-EINVAL, wr(fd, ids, 31));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(0), st.armed);
	ASSERT_EQ(U(0), st.touches);
	ASSERT_EQ(0, state_of(fd, 1));
	ASSERT_EQ(0, state_of(fd, 2));
	close(fd);
}

TEST(write_efault)
{
	struct twheel_stats st;
	void *bad = unmapped_page();
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_NE(NULL, bad);
	ASSERT_EQ(-EFAULT, wr(fd, bad, 16));
	ASSERT_EQ(-EFAULT, wr(fd, vnull, 8));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(0), st.armed);
	ASSERT_EQ(U(0), st.touches);
	close(fd);
}

TEST(write_enospc)
{
	uint64_t ids[12], two[2] = { 3, 11 };
	struct twheel_config c;
	struct twheel_stats st;
	unsigned int i;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, get_config(fd, &c));
	c.max_ids = 10;
	ASSERT_EQ(0, set_config(fd, &c));
	for (i = 0; i < 12; i++)
		ids[i] = i + 1;
	ASSERT_EQ(80, write(fd, ids, sizeof(ids)));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd, ids[i]));
	ASSERT_EQ(0, state_of(fd, 11));
	ASSERT_EQ(0, state_of(fd, 12));
	/* a lone new id fails, existing ones still work at the cap */
	ASSERT_EQ(-ENOSPC, wr(fd, &ids[10], 8));
	ASSERT_EQ(8, write(fd, &ids[4], 8));
	ASSERT_EQ(80, write(fd, ids, 80));
	ASSERT_EQ(8, write(fd, two, sizeof(two)));
	/* ARM of a new id at the cap too */
	ASSERT_EQ(-ENOSPC, arm1(fd, 11, 10 * SEC, 0, 0));
	ASSERT_EQ(0, arm1(fd, 5, 10 * SEC, 0, 0));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(10), st.armed);
	ASSERT_EQ(U(10 + 1 + 10 + 1), st.touches);
	/* room again after a cancel */
	ASSERT_EQ(0, cancel_n(fd, ids, 1, NULL));
	ASSERT_EQ(8, write(fd, &ids[10], 8));
	ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd, 11));
	close(fd);
}

/*
 * The ids before an unmapped hole take effect and the call returns their
 * byte count; the ones beyond are not touched.  @before ids are placed
 * right before the hole, @after more are claimed beyond it.
 */
static void partial_write(struct __test_metadata *_metadata, unsigned int before,
			  unsigned int after)
{
	char *page = map_hole(false);
	long ps = page_size();
	struct twheel_stats st;
	__u64 *ids;
	ssize_t r;
	unsigned int i;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_NE(NULL, page);
	ids = (__u64 *)(page + ps) - before;
	for (i = 0; i < before; i++)
		ids[i] = 1000 + i;
	r = write(fd, ids, (size_t)(before + after) * 8);
	TH_LOG("%u ids before the hole: write returned %zd (%s)", before, r,
	       r < 0 ? strerror(errno) : "ok");
	ASSERT_LT(0, r) TH_LOG("write: %s", r < 0 ? strerror(errno) : "0");
	ASSERT_EQ(0, r % 8);
	ASSERT_GE((ssize_t)before * 8, r);
	if (before < 64)	/* a small prefix must be taken whole */
		ASSERT_EQ((ssize_t)before * 8, r);
	for (i = 0; i < before; i++)
		ASSERT_EQ((ssize_t)i < r / 8 ? TWHEEL_STATE_ARMED : 0,
			  state_of(fd, 1000 + i));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ((__u64)r / 8, st.armed);
	ASSERT_EQ((__u64)r / 8, st.touches);
	close(fd);
	munmap(page, ps);
}

TEST(write_partial_fault_small)
{
	partial_write(_metadata, 3, 5);
}

TEST(write_partial_fault_large)
{
	partial_write(_metadata, 100, 3);
}

TEST(write_keeps_data)
{
	struct twheel_query q;
	__u64 id = 77, t0, t1;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, arm1(fd, id, 2 * SEC, 0x1234, 0));
	t0 = now_ns();
	ASSERT_EQ(8, write(fd, &id, 8));
	t1 = now_ns();
	ASSERT_EQ(0, query(fd, id, &q));
	ASSERT_EQ((__u32)TWHEEL_STATE_ARMED, q.state);
	ASSERT_EQ(U(0x1234), q.data);
	ASSERT_LE(t0 + TWHEEL_DEFAULT_TIMEOUT_NS, q.deadline_ns);
	ASSERT_GE(t1 + TWHEEL_DEFAULT_TIMEOUT_NS, q.deadline_ns);
	/* a touch that moves the deadline earlier keeps the data too */
	ASSERT_EQ(0, arm1(fd, id, 100 * SEC, 0x5678, 0));
	ASSERT_EQ(8, write(fd, &id, 8));
	ASSERT_EQ(0, query(fd, id, &q));
	ASSERT_EQ(U(0x5678), q.data);
	ASSERT_GE(now_ns() + TWHEEL_DEFAULT_TIMEOUT_NS, q.deadline_ns);
	close(fd);
}

/* Touching an expired, unread id discards its event and re-arms it. */
TEST(write_expired_discards)
{
	struct twheel_stats st;
	struct twheel_query q;
	struct twheel_event ev;
	__u64 id = 5, t0;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, arm_past(fd, id, 7));
	ASSERT_EQ(0, query(fd, id, &q));
	ASSERT_EQ((__u32)TWHEEL_STATE_EXPIRED, q.state);
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(1), st.pending);
	ASSERT_EQ(U(0), st.discarded);

	t0 = now_ns();
	ASSERT_EQ(8, write(fd, &id, 8));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(0), st.pending);
	ASSERT_EQ(U(1), st.armed);
	ASSERT_EQ(U(1), st.discarded);
	ASSERT_EQ(0, query(fd, id, &q));
	ASSERT_EQ((__u32)TWHEEL_STATE_ARMED, q.state);
	ASSERT_EQ(U(7), q.data);
	ASSERT_LE(t0 + TWHEEL_DEFAULT_TIMEOUT_NS, q.deadline_ns);
	ASSERT_EQ(-EAGAIN, read_events(fd, &ev, 1));
	close(fd);
}

/* ---- ARM ------------------------------------------------------------- */

TEST(arm_relative_and_default)
{
	struct twheel_config c;
	struct twheel_query q;
	struct twheel_stats st;
	__u64 t0, t1;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	t0 = now_ns();
	ASSERT_EQ(0, arm1(fd, 1, 5 * SEC, 11, 0));
	ASSERT_EQ(0, arm1(fd, 2, 0, 22, 0));	/* 0: the fd's default */
	t1 = now_ns();
	ASSERT_EQ(0, query(fd, 1, &q));
	ASSERT_EQ((__u32)TWHEEL_STATE_ARMED, q.state);
	ASSERT_EQ(U(11), q.data);
	ASSERT_LE(t0 + 5 * SEC, q.deadline_ns);
	ASSERT_GE(t1 + 5 * SEC, q.deadline_ns);
	ASSERT_EQ(0, query(fd, 2, &q));
	ASSERT_EQ(U(22), q.data);
	ASSERT_LE(t0 + TWHEEL_DEFAULT_TIMEOUT_NS, q.deadline_ns);
	ASSERT_GE(t1 + TWHEEL_DEFAULT_TIMEOUT_NS, q.deadline_ns);

	ASSERT_EQ(0, get_config(fd, &c));
	c.timeout_ns = 7 * SEC;
	ASSERT_EQ(0, set_config(fd, &c));
	t0 = now_ns();
	ASSERT_EQ(0, arm1(fd, 3, 0, 33, TWHEEL_ARM_NOREPLACE));
	t1 = now_ns();
	ASSERT_EQ(0, query(fd, 3, &q));
	ASSERT_LE(t0 + 7 * SEC, q.deadline_ns);
	ASSERT_GE(t1 + 7 * SEC, q.deadline_ns);

	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(3), st.arms);
	ASSERT_EQ(U(3), st.armed);
	ASSERT_EQ(U(0), st.touches);
	close(fd);
}

TEST(arm_abstime_future)
{
	struct twheel_query q;
	__u64 dl;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	dl = now_ns() + 10 * SEC + 12345;
	ASSERT_EQ(0, arm1(fd, 9, dl, 99, TWHEEL_ARM_ABSTIME));
	ASSERT_EQ(0, query(fd, 9, &q));
	ASSERT_EQ((__u32)TWHEEL_STATE_ARMED, q.state);
	ASSERT_EQ(dl, q.deadline_ns);
	ASSERT_EQ(U(99), q.data);
	/* the largest deadline is accepted as is */
	ASSERT_EQ(0, arm1(fd, 10, TWHEEL_DEADLINE_MAX, 0, TWHEEL_ARM_ABSTIME));
	ASSERT_EQ(0, query(fd, 10, &q));
	ASSERT_EQ(TWHEEL_DEADLINE_MAX, q.deadline_ns);
	close(fd);
}

TEST(arm_abstime_past)
{
	struct twheel_event ev;
	struct twheel_query q;
	struct twheel_stats st;
	__u64 dl;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	dl = now_ns() - 1 * MS;
	ASSERT_EQ(0, arm1(fd, 4, dl, 44, TWHEEL_ARM_ABSTIME));
	ASSERT_EQ(0, query(fd, 4, &q));
	ASSERT_EQ((__u32)TWHEEL_STATE_EXPIRED, q.state);
	ASSERT_EQ(dl, q.deadline_ns);
	ASSERT_EQ(1, read_events(fd, &ev, 1));
	ASSERT_EQ(U(4), ev.id);
	ASSERT_EQ(U(44), ev.data);
	ASSERT_EQ(dl, ev.deadline_ns);
	check_event(_metadata, &ev, CLOCK_MONOTONIC, false);
	ASSERT_EQ(-ENOENT, query(fd, 4, &q));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(1), st.expirations);
	ASSERT_EQ(U(1), st.delivered);
	ASSERT_EQ(U(0), st.pending);
	close(fd);
}

TEST(arm_noreplace)
{
	struct twheel_query q, q2;
	struct twheel_stats st;
	uint64_t done;
	struct twheel_arm e = {
		.id = 1, .timeout_ns = 1 * SEC, .data = 5,
		.flags = TWHEEL_ARM_NOREPLACE,
	};
	int fd;

	OPEN_OR_SKIP(fd, 0);
	/* absent: fine */
	ASSERT_EQ(0, arm1(fd, 1, 20 * SEC, 1, TWHEEL_ARM_NOREPLACE));
	ASSERT_EQ(0, query(fd, 1, &q));
	/* armed: EEXIST, unchanged */
	ASSERT_EQ(-EEXIST, arm_n(fd, &e, 1, &done));
	ASSERT_EQ(U(0), done);
	ASSERT_EQ(0, query(fd, 1, &q2));
	ASSERT_EQ(0, memcmp(&q, &q2, sizeof(q)));
	e.flags |= TWHEEL_ARM_ABSTIME;
	ASSERT_EQ(-EEXIST, arm_n(fd, &e, 1, &done));
	ASSERT_EQ(0, query(fd, 1, &q2));
	ASSERT_EQ(0, memcmp(&q, &q2, sizeof(q)));

	/* expired: EEXIST, event still queued */
	ASSERT_EQ(0, arm_past(fd, 2, 22));
	ASSERT_EQ(0, query(fd, 2, &q));
	ASSERT_EQ((__u32)TWHEEL_STATE_EXPIRED, q.state);
	e.id = 2;
	e.flags = TWHEEL_ARM_NOREPLACE;
	ASSERT_EQ(-EEXIST, arm_n(fd, &e, 1, &done));
	ASSERT_EQ(U(0), done);
	ASSERT_EQ(0, query(fd, 2, &q2));
	ASSERT_EQ(0, memcmp(&q, &q2, sizeof(q)));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(1), st.pending);
	ASSERT_EQ(U(1), st.armed);
	ASSERT_EQ(U(0), st.discarded);
	ASSERT_EQ(U(2), st.arms);
	close(fd);
}

/* A bad entry at @bad of 3: EINVAL, done == bad, earlier entries armed. */
static void arm_bad_entry(struct __test_metadata *_metadata, unsigned int bad,
			  __u32 flags, __u32 reserved, __u64 timeout)
{
	struct twheel_arm e[3];
	struct twheel_stats st;
	uint64_t done;
	unsigned int i;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	memset(e, 0, sizeof(e));
	for (i = 0; i < 3; i++) {
		e[i].id = 500 + i;
		e[i].timeout_ns = 10 * SEC;
		e[i].data = i;
	}
	e[bad].flags = flags;
	e[bad].reserved = reserved;
	e[bad].timeout_ns = timeout;
	ASSERT_EQ(-EINVAL, arm_n(fd, e, 3, &done));
	ASSERT_EQ((__u64)bad, done);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(i < bad ? TWHEEL_STATE_ARMED : 0, state_of(fd, 500 + i));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ((__u64)bad, st.arms);
	ASSERT_EQ((__u64)bad, st.armed);
	close(fd);
}

TEST(arm_bad_entry_flags)
{
	arm_bad_entry(_metadata, 1, 0x4, 0, 10 * SEC);
	arm_bad_entry(_metadata, 0, 0x80000000U | TWHEEL_ARM_ABSTIME, 0, 10 * SEC);
	arm_bad_entry(_metadata, 2, ~TWHEEL_ARM_FLAGS, 0, 10 * SEC);
}

TEST(arm_bad_entry_reserved)
{
	arm_bad_entry(_metadata, 2, 0, 1, 10 * SEC);
	arm_bad_entry(_metadata, 0, 0, 0x80000000U, 10 * SEC);
}

TEST(arm_timeout_too_big)
{
	arm_bad_entry(_metadata, 1, 0, 0, TWHEEL_DEADLINE_MAX + 1);
	arm_bad_entry(_metadata, 2, 0, 0, UINT64_MAX);
	arm_bad_entry(_metadata, 0, TWHEEL_ARM_ABSTIME, 0, TWHEEL_DEADLINE_MAX + 1);
	arm_bad_entry(_metadata, 1, TWHEEL_ARM_ABSTIME, 0, UINT64_MAX);
}

TEST(arm_relative_saturates)
{
	struct twheel_config c;
	struct twheel_query q;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, arm1(fd, 1, TWHEEL_DEADLINE_MAX, 0, 0));
	ASSERT_EQ(0, query(fd, 1, &q));
	ASSERT_EQ(TWHEEL_DEADLINE_MAX, q.deadline_ns);
	ASSERT_EQ(0, arm1(fd, 2, TWHEEL_DEADLINE_MAX - 1, 0, 0));
	ASSERT_EQ(0, query(fd, 2, &q));
	ASSERT_EQ(TWHEEL_DEADLINE_MAX, q.deadline_ns);
	/* a huge default timeout saturates too */
	ASSERT_EQ(0, get_config(fd, &c));
	c.timeout_ns = TWHEEL_DEADLINE_MAX;
	ASSERT_EQ(0, set_config(fd, &c));
	ASSERT_EQ(0, arm1(fd, 3, 0, 0, 0));
	ASSERT_EQ(0, query(fd, 3, &q));
	ASSERT_EQ(TWHEEL_DEADLINE_MAX, q.deadline_ns);
	ASSERT_EQ(8, write(fd, (__u64[]){ 4 }, 8));
	ASSERT_EQ(0, query(fd, 4, &q));
	ASSERT_EQ(TWHEEL_DEADLINE_MAX, q.deadline_ns);
	close(fd);
}

TEST(arm_batch_flags_reserved)
{
	struct twheel_arm e = { .id = 1, .timeout_ns = 10 * SEC };
	struct twheel_stats st;
	struct twheel_batch b;
	unsigned int i;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	for (i = 0; i < 6; i++) {
		batch_init(&b, &e, 1);
		if (i < 2)
			b.flags = i ? 0x80000000U : 1;
		else if (i < 5)
			b.reserved[i - 2] = 1;
		else
			b.reserved[2] = 0xffffffffU;
		b.done = 0x1234;
		ASSERT_EQ(-EINVAL, ioc(fd, TWHEEL_IOC_ARM, &b)) TH_LOG("case %u", i);
		ASSERT_TRUE(b.done == 0x1234 || b.done == 0) TH_LOG("done %" PRIu64,
								   (uint64_t)b.done);
	}
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(0), st.arms);
	ASSERT_EQ(U(0), st.armed);
	ASSERT_EQ(0, state_of(fd, 1));
	close(fd);
}

TEST(arm_count_edges)
{
	struct twheel_arm e = { .id = 1, .timeout_ns = 10 * SEC };
	struct twheel_stats st;
	struct twheel_batch b;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	/* count 0: nothing to do, even with a NULL ptr */
	batch_init(&b, NULL, 0);
	b.done = 77;
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_ARM, &b));
	ASSERT_EQ(U(0), b.done);
	batch_init(&b, &e, 0);
	b.done = 77;
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_ARM, &b));
	ASSERT_EQ(U(0), b.done);
	/* count * 32 overflows */
	batch_init(&b, &e, UINT64_MAX / 32 + 1);
	ASSERT_EQ(-EINVAL, ioc(fd, TWHEEL_IOC_ARM, &b));
	batch_init(&b, &e, UINT64_MAX);
	ASSERT_EQ(-EINVAL, ioc(fd, TWHEEL_IOC_ARM, &b));
	/* NULL entries, NULL batch */
	batch_init(&b, NULL, 1);
	b.done = 77;
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_ARM, &b));
	ASSERT_TRUE(b.done == 0 || b.done == 77);
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_ARM, NULL));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(0), st.arms);
	ASSERT_EQ(U(0), st.armed);
	close(fd);
}

/* count INT_MAX over one page of valid entries followed by a hole. */
TEST(arm_count_huge_efault)
{
	long ps = page_size();
	char *page = map_hole(false);
	struct twheel_arm *e = (struct twheel_arm *)page;
	unsigned int n = (unsigned int)(ps / sizeof(*e)), i;
	struct twheel_stats st;
	uint64_t done;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_NE(NULL, page);
	for (i = 0; i < n; i++) {
		e[i] = (struct twheel_arm){
			.id = 7000 + i, .timeout_ns = 10 * SEC, .data = i,
		};
	}
	ASSERT_EQ(-EFAULT, arm_n(fd, e, INT_MAX, &done));
	ASSERT_EQ((__u64)n, done);
	for (i = 0; i < n; i++)
		ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd, 7000 + i));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ((__u64)n, st.arms);
	ASSERT_EQ((__u64)n, st.armed);
	close(fd);
	munmap(page, ps);
}

/* A small valid prefix right before a hole: those entries take effect. */
TEST(arm_partial_fault_small)
{
	long ps = page_size();
	char *page = map_hole(false);
	struct twheel_arm *e;
	struct twheel_stats st;
	uint64_t done;
	unsigned int i;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_NE(NULL, page);
	e = (struct twheel_arm *)(page + ps) - 3;
	for (i = 0; i < 3; i++)
		e[i] = (struct twheel_arm){ .id = 60 + i, .timeout_ns = 10 * SEC };
	ASSERT_EQ(-EFAULT, arm_n(fd, e, INT_MAX, &done));
	ASSERT_EQ(U(3), done);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd, 60 + i));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(3), st.arms);
	close(fd);
	munmap(page, ps);
}

TEST(arm_replaces)
{
	struct twheel_query q;
	struct twheel_stats st;
	struct twheel_event ev[2];
	__u64 t0, t1;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, arm1(fd, 1, 10 * SEC, 1, 0));
	/* later deadline, new data */
	t0 = now_ns();
	ASSERT_EQ(0, arm1(fd, 1, 20 * SEC, 2, 0));
	t1 = now_ns();
	ASSERT_EQ(0, query(fd, 1, &q));
	ASSERT_EQ(U(2), q.data);
	ASSERT_LE(t0 + 20 * SEC, q.deadline_ns);
	ASSERT_GE(t1 + 20 * SEC, q.deadline_ns);
	/* earlier deadline, new data */
	t0 = now_ns();
	ASSERT_EQ(0, arm1(fd, 1, 5 * SEC, 3, 0));
	t1 = now_ns();
	ASSERT_EQ(0, query(fd, 1, &q));
	ASSERT_EQ(U(3), q.data);
	ASSERT_LE(t0 + 5 * SEC, q.deadline_ns);
	ASSERT_GE(t1 + 5 * SEC, q.deadline_ns);
	/* exact absolute deadline */
	ASSERT_EQ(0, arm1(fd, 1, t1 + 9 * SEC, 4, TWHEEL_ARM_ABSTIME));
	ASSERT_EQ(0, query(fd, 1, &q));
	ASSERT_EQ(t1 + 9 * SEC, q.deadline_ns);
	ASSERT_EQ(U(4), q.data);
	/* into the past: expires at once with the new data, one event */
	ASSERT_EQ(0, arm_past(fd, 1, 5));
	ASSERT_EQ(0, query(fd, 1, &q));
	ASSERT_EQ((__u32)TWHEEL_STATE_EXPIRED, q.state);
	ASSERT_EQ(U(5), q.data);
	/* ARM of an expired id discards its event */
	ASSERT_EQ(0, arm1(fd, 1, 10 * SEC, 6, 0));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(0), st.pending);
	ASSERT_EQ(U(1), st.armed);
	ASSERT_EQ(U(1), st.discarded);
	ASSERT_EQ(-EAGAIN, read_events(fd, ev, 2));
	/* and past again: exactly one event with the latest data */
	ASSERT_EQ(0, arm_past(fd, 1, 7));
	ASSERT_EQ(1, read_events(fd, ev, 2));
	ASSERT_EQ(U(1), ev[0].id);
	ASSERT_EQ(U(7), ev[0].data);
	check_event(_metadata, &ev[0], CLOCK_MONOTONIC, false);
	close(fd);
}

/* Data comes back with the events; past deadlines queue in arm order. */
TEST(arm_data_in_events)
{
	struct twheel_arm e[5];
	struct twheel_event ev[6];
	uint64_t base = now_ns() - 10 * MS, done;
	int fd, i;

	OPEN_OR_SKIP(fd, 0);
	for (i = 0; i < 5; i++) {
		e[i] = (struct twheel_arm){
			.id = 40 + i, .timeout_ns = base + i * 1000,
			.data = 0xdead0000ULL + i, .flags = TWHEEL_ARM_ABSTIME,
		};
	}
	ASSERT_EQ(0, arm_n(fd, e, 5, &done));
	ASSERT_EQ(U(5), done);
	ASSERT_EQ(5, read_events(fd, ev, 6));
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(e[i].id, ev[i].id);
		ASSERT_EQ(e[i].data, ev[i].data);
		ASSERT_EQ(e[i].timeout_ns, ev[i].deadline_ns);
		check_event(_metadata, &ev[i], CLOCK_MONOTONIC, false);
	}
	/* and from a real timer expiry */
	ASSERT_EQ(0, arm1(fd, 50, 3 * MS, 0xfeed, 0));
	ASSERT_EQ(0, set_nonblock(fd, 0));
	ASSERT_EQ((ssize_t)sizeof(ev[0]), read(fd, ev, sizeof(ev)));
	ASSERT_EQ(U(50), ev[0].id);
	ASSERT_EQ(U(0xfeed), ev[0].data);
	check_event(_metadata, &ev[0], CLOCK_MONOTONIC, true);
	close(fd);
}

/* ---- CANCEL ---------------------------------------------------------- */

TEST(cancel_basic)
{
	uint64_t ids[4] = { 1, 999, 3, 1 }, done;
	struct twheel_stats st;
	struct twheel_event ev;
	struct twheel_query q;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, arm1(fd, 1, 10 * SEC, 0, 0));	/* armed */
	ASSERT_EQ(0, arm1(fd, 2, 10 * SEC, 0, 0));	/* armed, kept */
	ASSERT_EQ(0, arm_past(fd, 3, 0));		/* expired */
	ASSERT_EQ(0, arm_past(fd, 4, 0));		/* expired, kept */
	/* 999 is absent, 1 is listed twice: only present ids count */
	ASSERT_EQ(0, cancel_n(fd, ids, 4, &done));
	ASSERT_EQ(U(2), done);
	ASSERT_EQ(-ENOENT, query(fd, 1, &q));
	ASSERT_EQ(-ENOENT, query(fd, 3, &q));
	ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd, 2));
	ASSERT_EQ(TWHEEL_STATE_EXPIRED, state_of(fd, 4));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(2), st.cancels);
	ASSERT_EQ(U(1), st.armed);
	ASSERT_EQ(U(1), st.pending);
	ASSERT_EQ(U(1), st.discarded);
	/* only id 4's event is readable */
	ASSERT_EQ(1, read_events(fd, &ev, 1));
	ASSERT_EQ(U(4), ev.id);
	ASSERT_EQ(-EAGAIN, read_events(fd, &ev, 1));
	/* all absent now */
	ASSERT_EQ(0, cancel_n(fd, ids, 4, &done));
	ASSERT_EQ(U(0), done);
	close(fd);
}

TEST(cancel_errors)
{
	__u64 ids[2] = { 1, 2 };
	struct twheel_stats st;
	struct twheel_batch b;
	unsigned int i;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(8, write(fd, ids, 8));
	for (i = 0; i < 5; i++) {
		batch_init(&b, ids, 1);
		if (i < 2)
			b.flags = i ? 0x80000000U : 1;
		else
			b.reserved[i - 2] = 1;
		b.done = 0x1234;
		ASSERT_EQ(-EINVAL, ioc(fd, TWHEEL_IOC_CANCEL, &b)) TH_LOG("case %u", i);
		ASSERT_TRUE(b.done == 0x1234 || b.done == 0);
	}
	/* count * 8 overflows */
	batch_init(&b, ids, UINT64_MAX / 8 + 1);
	ASSERT_EQ(-EINVAL, ioc(fd, TWHEEL_IOC_CANCEL, &b));
	/* bad pointers */
	batch_init(&b, NULL, 1);
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_CANCEL, &b));
	batch_init(&b, unmapped_page(), 2);
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_CANCEL, &b));
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_CANCEL, NULL));
	/* count 0 */
	batch_init(&b, NULL, 0);
	b.done = 77;
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_CANCEL, &b));
	ASSERT_EQ(U(0), b.done);

	ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd, 1));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(0), st.cancels);
	ASSERT_EQ(U(1), st.armed);
	close(fd);
}

/* ---- QUERY ----------------------------------------------------------- */

TEST(query_errors)
{
	struct twheel_query q;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(-ENOENT, query(fd, 1, &q));
	ASSERT_EQ(-ENOENT, query(fd, 0, &q));
	ASSERT_EQ(-ENOENT, query(fd, UINT64_MAX, &q));
	ASSERT_EQ(8, write(fd, (__u64[]){ 1 }, 8));
	memset(&q, 0, sizeof(q));
	q.id = 1;
	q.reserved = 1;
	ASSERT_EQ(-EINVAL, ioc(fd, TWHEEL_IOC_QUERY, &q));
	q.id = 2;	/* absent: EINVAL still wins over ENOENT */
	q.reserved = 0x80000000U;
	ASSERT_EQ(-EINVAL, ioc(fd, TWHEEL_IOC_QUERY, &q));
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_QUERY, NULL));
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_QUERY, unmapped_page()));
	close(fd);
}

TEST(query_output)
{
	struct twheel_query q;
	__u64 dl;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	dl = now_ns() + 10 * SEC;
	ASSERT_EQ(0, arm1(fd, 12, dl, 0xabcdef, TWHEEL_ARM_ABSTIME));
	ASSERT_EQ(0, arm_past(fd, 13, 0x1313));
	memset(&q, 0xAA, sizeof(q));
	q.id = 12;
	q.reserved = 0;
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_QUERY, &q));
	ASSERT_EQ(U(12), q.id);
	ASSERT_EQ(dl, q.deadline_ns);
	ASSERT_EQ(U(0xabcdef), q.data);
	ASSERT_EQ((__u32)TWHEEL_STATE_ARMED, q.state);
	ASSERT_EQ(0U, q.reserved);
	memset(&q, 0xAA, sizeof(q));
	q.id = 13;
	q.reserved = 0;
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_QUERY, &q));
	ASSERT_EQ(U(13), q.id);
	ASSERT_EQ(U(1), q.deadline_ns);
	ASSERT_EQ(U(0x1313), q.data);
	ASSERT_EQ((__u32)TWHEEL_STATE_EXPIRED, q.state);
	ASSERT_EQ(0U, q.reserved);
	close(fd);
}

/*
 * Data costs no memory: every id has the same node, data or not, and
 * mem_bytes does not move when data arrives.  Data, deadline and state
 * survive every transition, including an event discarded from the middle,
 * the head and the end of the ready queue (the queue is singly linked: the
 * discarded event's node takes over its successor's event).
 */
TEST(data_costs_no_memory)
{
	uint64_t ids[4] = { 1, 2, 3, 4 }, q5[5] = { 11, 12, 13, 14, 15 };
	uint64_t mem0, per_id, done;
	struct twheel_query q1, q2;
	struct twheel_stats st;
	struct twheel_event ev[6];
	int fd, i;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, get_stats(fd, &st));
	mem0 = st.mem_bytes;
	ASSERT_EQ(32, write(fd, ids, 32));
	ASSERT_EQ(0, get_stats(fd, &st));
	per_id = (st.mem_bytes - mem0) / 4;
	ASSERT_EQ(mem0 + 4 * per_id, st.mem_bytes);
	ASSERT_LE(U(32), per_id);

	/* id 1: ARMED, gets data with a later deadline (the lazy path) */
	ASSERT_EQ(0, query(fd, 1, &q1));
	ASSERT_EQ(U(0), q1.data);
	ASSERT_EQ(0, arm1(fd, 1, 7200 * SEC, 0x1111, 0));
	ASSERT_EQ(0, query(fd, 1, &q2));
	ASSERT_EQ(U(0x1111), q2.data);
	ASSERT_EQ(U(TWHEEL_STATE_ARMED), q2.state);
	ASSERT_LT(q1.deadline_ns, q2.deadline_ns);
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(mem0 + 4 * per_id, st.mem_bytes);

	/* data 0 clears it; a touch keeps the data */
	ASSERT_EQ(0, arm1(fd, 1, 3600 * SEC, 0, 0));
	ASSERT_EQ(0, query(fd, 1, &q1));
	ASSERT_EQ(U(0), q1.data);
	ASSERT_EQ(0, arm1(fd, 1, 3600 * SEC, 0x2222, 0));
	ASSERT_EQ(8, write(fd, ids, 8));
	ASSERT_EQ(0, query(fd, 1, &q1));
	ASSERT_EQ(U(0x2222), q1.data);

	/* id 2: EXPIRED, then armed again with data: its old event is gone */
	ASSERT_EQ(0, arm_past(fd, 2, 0));
	ASSERT_EQ(TWHEEL_STATE_EXPIRED, state_of(fd, 2));
	ASSERT_EQ(0, arm1(fd, 2, 3600 * SEC, 0x3333, 0));
	ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd, 2));
	ASSERT_EQ(0, query(fd, 2, &q1));
	ASSERT_EQ(U(0x3333), q1.data);
	ASSERT_EQ(-EAGAIN, read_events(fd, ev, 2));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(mem0 + 4 * per_id, st.mem_bytes);

	/* id 3: data and a deadline in the past at once: the event has both */
	ASSERT_EQ(0, arm_past(fd, 3, 0x4444));
	ASSERT_EQ(1, read_events(fd, ev, 2));
	ASSERT_EQ(U(3), ev[0].id);
	ASSERT_EQ(U(0x4444), ev[0].data);
	ASSERT_EQ(U(1), ev[0].deadline_ns);

	/* NOREPLACE refuses before anything moves */
	ASSERT_EQ(-EEXIST, arm1(fd, 4, 3600 * SEC, 0x5555, TWHEEL_ARM_NOREPLACE));
	ASSERT_EQ(0, query(fd, 4, &q1));
	ASSERT_EQ(U(0), q1.data);
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(mem0 + 3 * per_id, st.mem_bytes);
	ASSERT_EQ(U(3), st.armed);

	/*
	 * Five queued events 11..15 (deadlines 1..5, data 0x11..0x15): discard
	 * the middle one by a touch (13, data kept), the first by ARM with new
	 * data (11), the last by CANCEL (15): 12 and 14 come out, in order,
	 * with their own deadline and data, and 11 and 13 are ARMED again.
	 */
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, arm1(fd, q5[i], i + 1, 0x11 + i,
				  TWHEEL_ARM_ABSTIME));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(5), st.pending);
	ASSERT_EQ(8, write(fd, &q5[2], 8));
	ASSERT_EQ(0, arm1(fd, 11, 3600 * SEC, 0xaa, 0));
	ASSERT_EQ(0, cancel_n(fd, &q5[4], 1, &done));
	ASSERT_EQ(U(1), done);
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(2), st.pending);
	ASSERT_EQ(mem0 + 7 * per_id, st.mem_bytes);
	ASSERT_EQ(0, query(fd, 13, &q1));
	ASSERT_EQ(U(TWHEEL_STATE_ARMED), q1.state);
	ASSERT_EQ(U(0x13), q1.data);
	ASSERT_EQ(0, query(fd, 11, &q1));
	ASSERT_EQ(U(TWHEEL_STATE_ARMED), q1.state);
	ASSERT_EQ(U(0xaa), q1.data);
	ASSERT_EQ(-ENOENT, query(fd, 15, &q1));
	ASSERT_EQ(0, query(fd, 14, &q1));
	ASSERT_EQ(U(TWHEEL_STATE_EXPIRED), q1.state);
	ASSERT_EQ(U(0x14), q1.data);
	ASSERT_EQ(U(4), q1.deadline_ns);
	ASSERT_EQ(2, read_events(fd, ev, 6));
	ASSERT_EQ(U(12), ev[0].id);
	ASSERT_EQ(U(0x12), ev[0].data);
	ASSERT_EQ(U(2), ev[0].deadline_ns);
	ASSERT_EQ(U(14), ev[1].id);
	ASSERT_EQ(U(0x14), ev[1].data);
	ASSERT_EQ(U(4), ev[1].deadline_ns);
	ASSERT_EQ(-EAGAIN, read_events(fd, ev, 6));

	ASSERT_EQ(0, cancel_n(fd, ids, 4, &done));
	ASSERT_EQ(U(3), done);
	ASSERT_EQ(0, cancel_n(fd, q5, 5, &done));
	ASSERT_EQ(U(2), done);
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(mem0, st.mem_bytes);
	ASSERT_EQ(U(0), st.armed);
	close(fd);
}

/* ---- GET_STATS ------------------------------------------------------- */

TEST(stats_counters)
{
	struct twheel_stats st, prev;
	struct twheel_event ev[4];
	__u64 ids[3] = { 1, 2, 3 }, mem0;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(0), st.armed);
	ASSERT_EQ(U(0), st.pending);
	ASSERT_EQ(U(0), st.touches);
	ASSERT_EQ(U(0), st.arms);
	ASSERT_EQ(U(0), st.cancels);
	ASSERT_EQ(U(0), st.expirations);
	ASSERT_EQ(U(0), st.delivered);
	ASSERT_EQ(U(0), st.timer_fires);
	ASSERT_EQ(U(0), st.late_max_ns);
	ASSERT_EQ(U(0), st.discarded);
	ASSERT_LT(U(0), st.mem_bytes);
	ASSERT_TRUE(all_bytes(st.reserved, 0, sizeof(st.reserved)));
	mem0 = st.mem_bytes;

	/* touches */
	ASSERT_EQ(24, write(fd, ids, 24));
	ASSERT_EQ(16, write(fd, ids, 16));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(5), st.touches);
	ASSERT_EQ(U(3), st.armed);
	ASSERT_LT(mem0, st.mem_bytes);
	ASSERT_TRUE(all_bytes(st.reserved, 0, sizeof(st.reserved)));

	/* arms, expirations */
	ASSERT_EQ(0, arm1(fd, 10, 10 * SEC, 0, 0));
	ASSERT_EQ(0, arm1(fd, 1, 10 * SEC, 0, 0));
	ASSERT_EQ(0, arm_past(fd, 11, 0));
	ASSERT_EQ(0, arm_past(fd, 12, 0));
	ASSERT_EQ(0, arm_past(fd, 13, 0));
	prev = st;
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(5), st.arms);
	ASSERT_EQ(U(4), st.armed);
	ASSERT_EQ(U(3), st.pending);
	ASSERT_EQ(U(3), st.expirations);
	ASSERT_EQ(U(5), st.touches);
	ASSERT_LT(prev.mem_bytes, st.mem_bytes);

	/* delivered */
	ASSERT_EQ(1, read_events(fd, ev, 1));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(1), st.delivered);
	ASSERT_EQ(U(2), st.pending);

	/* discarded: by a touch and by a cancel */
	ASSERT_EQ(8, write(fd, (__u64[]){ 12 }, 8));
	ASSERT_EQ(0, cancel_n(fd, (uint64_t[]){ 13, 2, 55 }, 3, NULL));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(2), st.discarded);
	ASSERT_EQ(U(2), st.cancels);
	ASSERT_EQ(U(6), st.touches);
	ASSERT_EQ(U(4), st.armed);	/* 1, 3, 10, 12 */
	ASSERT_EQ(U(0), st.pending);
	ASSERT_EQ(U(3), st.expirations);
	ASSERT_EQ(U(1), st.delivered);
	ASSERT_TRUE(all_bytes(st.reserved, 0, sizeof(st.reserved)));

	/* a real expiry fires the hrtimer */
	ASSERT_EQ(0, arm1(fd, 20, 2 * MS, 0, 0));
	ASSERT_EQ(0, set_nonblock(fd, 0));
	ASSERT_EQ((ssize_t)sizeof(ev[0]), read(fd, ev, sizeof(ev)));
	ASSERT_EQ(U(20), ev[0].id);
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(4), st.expirations);
	ASSERT_EQ(U(2), st.delivered);
	ASSERT_LE(U(1), st.timer_fires);
	ASSERT_LE(ev[0].expired_ns - ev[0].deadline_ns, st.late_max_ns);
	TH_LOG("late_max_ns %" PRIu64, (uint64_t)st.late_max_ns);

	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_GET_STATS, NULL));
	close(fd);
}

/* ---- DUMP ------------------------------------------------------------ */

static void dump_init(struct twheel_dump *d, void *ptr, __u64 count)
{
	memset(d, 0, sizeof(*d));
	d->ptr = (__u64)(uintptr_t)ptr;
	d->count = count;
}

/*
 * late_max_ns is the wheel's own lateness: the largest expired_ns -
 * deadline_ns of an id whose deadline passed while it was armed.  An id
 * armed with a passed deadline is queued at once and not counted (here:
 * ~uptime late, which would drown every real figure).
 */
TEST(stats_late_max_wheel_only)
{
	struct twheel_event ev;
	struct twheel_stats st;
	struct pollfd p;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, arm_past(fd, 1, 0));
	ASSERT_EQ(1, read_events(fd, &ev, 1));
	ASSERT_LT(U(1000) * MS, ev.expired_ns - ev.deadline_ns);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(U(0), st.late_max_ns);

	ASSERT_EQ(0, arm1(fd, 2, 5 * MS, 0, 0));
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	ASSERT_EQ(1, poll(&p, 1, 30000));
	ASSERT_EQ(1, read_events(fd, &ev, 1));
	ASSERT_EQ(U(2), ev.id);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(ev.expired_ns - ev.deadline_ns, st.late_max_ns);
	close(fd);
}

TEST(dump_errors)
{
	struct twheel_arm out[4];
	struct twheel_dump d;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, arm1(fd, 1, 10 * SEC, 0, 0));
	ASSERT_EQ(0, arm_past(fd, 2, 0));
	dump_init(&d, out, 0);
	ASSERT_EQ(-EINVAL, ioc(fd, TWHEEL_IOC_DUMP, &d));
	dump_init(&d, out, 4);
	d.reserved[0] = 1;
	ASSERT_EQ(-EINVAL, ioc(fd, TWHEEL_IOC_DUMP, &d));
	dump_init(&d, out, 4);
	d.reserved[1] = 1ULL << 63;
	ASSERT_EQ(-EINVAL, ioc(fd, TWHEEL_IOC_DUMP, &d));
	/*
	 * Every value is a cursor: above 2^63 a cell's odd key, after a
	 * call with room for one entry listed its even key alone.
	 */
	dump_init(&d, out, 4);
	d.cursor = (1ULL << 63) + 1;
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_DUMP, &d));
	ASSERT_GE(U(2), d.done);
	dump_init(&d, out, 4);
	d.cursor = UINT64_MAX;
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_DUMP, &d));
	ASSERT_GE(U(2), d.done);
	/* 2^63 is the end: nothing more */
	dump_init(&d, out, 4);
	d.cursor = 1ULL << 63;
	d.done = 55;
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_DUMP, &d));
	ASSERT_EQ(U(0), d.done);
	/* bad pointers */
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_DUMP, NULL));
	dump_init(&d, NULL, 4);
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_DUMP, &d));
	dump_init(&d, unmapped_page(), 4);
	ASSERT_EQ(-EFAULT, ioc(fd, TWHEEL_IOC_DUMP, &d));
	/* nothing changed */
	ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd, 1));
	ASSERT_EQ(TWHEEL_STATE_EXPIRED, state_of(fd, 2));
	close(fd);
}

TEST(dump_small)
{
	enum { N = 7, ROOM = 3 };
	__u64 ids[N] = { 1, 2, 3, 1ULL << 40, UINT64_MAX, 0, 0x123456789ULL };
	struct twheel_arm out[ROOM + 1], all[N + 1];
	bool seen[N] = { false };
	struct twheel_dump d;
	struct twheel_query q, q2;
	uint64_t cursor = 0, now = now_ns(), done;
	unsigned int total = 0, calls = 0, i, k;
	int fd, fd2;

	OPEN_OR_SKIP(fd, 0);
	/* empty fd: done 0 at once */
	memset(out, 0xAA, sizeof(out));
	dump_init(&d, out, ROOM);
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_DUMP, &d));
	ASSERT_EQ(U(0), d.done);
	ASSERT_TRUE(all_bytes(out, 0xAA, sizeof(out)));

	ASSERT_EQ(0, arm1(fd, ids[0], 10 * SEC, 100, 0));
	ASSERT_EQ(0, arm1(fd, ids[1], 0, 101, 0));
	ASSERT_EQ(0, arm1(fd, ids[2], now + 5 * SEC, 102, TWHEEL_ARM_ABSTIME));
	ASSERT_EQ(0, arm1(fd, ids[3], TWHEEL_DEADLINE_MAX, 103, TWHEEL_ARM_ABSTIME));
	ASSERT_EQ(0, arm_past(fd, ids[4], 104));
	ASSERT_EQ(0, arm1(fd, ids[5], now - 1, 105, TWHEEL_ARM_ABSTIME));
	ASSERT_EQ(8, write(fd, &ids[6], 8));

	for (;;) {
		ASSERT_GT(50U, ++calls);
		memset(out, 0xAA, sizeof(out));
		dump_init(&d, out, ROOM);
		d.cursor = cursor;
		ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_DUMP, &d));
		ASSERT_GE(U(ROOM), d.done);
		/* never beyond count */
		ASSERT_TRUE(all_bytes(&out[ROOM], 0xAA, sizeof(out[ROOM])));
		ASSERT_TRUE(all_bytes(&out[d.done], 0xAA,
				      (ROOM - d.done) * sizeof(out[0])));
		if (!d.done)
			break;
		cursor = d.cursor;
		for (i = 0; i < d.done; i++) {
			for (k = 0; k < N && ids[k] != out[i].id; k++)
				;
			ASSERT_GT((unsigned int)N, k)
				TH_LOG("unknown id %" PRIu64, (uint64_t)out[i].id);
			ASSERT_FALSE(seen[k]);
			seen[k] = true;
			total++;
			ASSERT_EQ((__u32)TWHEEL_ARM_ABSTIME, out[i].flags);
			ASSERT_EQ(0U, out[i].reserved);
			ASSERT_EQ(0, query(fd, out[i].id, &q));
			ASSERT_EQ(q.deadline_ns, out[i].timeout_ns);
			ASSERT_EQ(q.data, out[i].data);
		}
	}
	ASSERT_EQ((unsigned int)N, total);
	/* the dump changed nothing */
	ASSERT_EQ(TWHEEL_STATE_EXPIRED, state_of(fd, ids[4]));
	ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd, ids[3]));

	/* feeding the dump to ARM on a new fd recreates it */
	fd2 = open_wheel(0);
	ASSERT_LE(0, fd2);
	dump_init(&d, all, N + 1);
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_DUMP, &d));
	ASSERT_EQ(U(N), d.done);
	ASSERT_EQ(0, arm_n(fd2, all, N, &done));
	ASSERT_EQ(U(N), done);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, query(fd, ids[i], &q));
		ASSERT_EQ(0, query(fd2, ids[i], &q2));
		ASSERT_EQ(0, memcmp(&q, &q2, sizeof(q)));
	}
	close(fd2);
	close(fd);
}

/* ---- read() ---------------------------------------------------------- */

/* Queue events for ids first..first+n-1, in that order. */
static int queue_events(int fd, __u64 first, unsigned int n)
{
	struct twheel_arm e[32];
	unsigned int i;

	if (n > 32)
		return -E2BIG;
	for (i = 0; i < n; i++)
		e[i] = (struct twheel_arm){ .id = first + i, .timeout_ns = 1,
					    .data = 0xd0 + i,
					    .flags = TWHEEL_ARM_ABSTIME };
	return arm_n(fd, e, n, NULL);
}

TEST(read_einval_small)
{
	struct twheel_event ev;
	struct twheel_stats st;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(-EINVAL, rd(fd, &ev, 31));	/* empty, blocking */
	ASSERT_EQ(0, queue_events(fd, 1, 1));
	ASSERT_EQ(-EINVAL, rd(fd, &ev, 1));
	ASSERT_EQ(-EINVAL, rd(fd, &ev, 8));
	ASSERT_EQ(-EINVAL, rd(fd, &ev, 31));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(1), st.pending);
	ASSERT_EQ(1, read_events(fd, &ev, 1));
	close(fd);
}

TEST(read_eagain)
{
	struct twheel_event ev;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(-EAGAIN, read_events(fd, &ev, 1));
	ASSERT_EQ(0, arm1(fd, 1, 10 * SEC, 0, 0));	/* armed is not ready */
	ASSERT_EQ(-EAGAIN, read_events(fd, &ev, 1));
	close(fd);
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal++;
}

/*
 * SIGALRM in @ms, then every @ms until disarmed (fire_in(0, ...)): a read
 * that a stalled guest starts only after the first signal still gets one.
 * fire_in(0, ...) disarms, got_signal kept.
 */
static int fire_in(unsigned int ms, int restart)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct itimerval it = {
		.it_value = { 0, (long)ms * 1000 },
		.it_interval = { 0, (long)ms * 1000 },
	};

	if (!ms)
		return setitimer(ITIMER_REAL, &it, NULL);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = restart ? SA_RESTART : 0;
	got_signal = 0;
	if (sigaction(SIGALRM, &sa, NULL))
		return -1;
	return setitimer(ITIMER_REAL, &it, NULL);
}

TEST(read_eintr)
{
	struct twheel_event ev;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, fire_in(30, 0));
	ASSERT_EQ(-EINTR, rd(fd, &ev, sizeof(ev)));
	ASSERT_EQ(0, fire_in(0, 0));
	ASSERT_LE(1, got_signal);

	/*
	 * With SA_RESTART the read goes on and gets the expiry: signals
	 * every 20 ms interrupt it and it restarts each time.
	 */
	ASSERT_EQ(0, arm1(fd, 3, 150 * MS, 33, 0));
	ASSERT_EQ(0, fire_in(20, 1));
	ASSERT_EQ((ssize_t)sizeof(ev), read(fd, &ev, sizeof(ev)));
	ASSERT_EQ(0, fire_in(0, 1));
	ASSERT_LE(1, got_signal);
	ASSERT_EQ(U(3), ev.id);
	ASSERT_EQ(U(33), ev.data);
	check_event(_metadata, &ev, CLOCK_MONOTONIC, true);
	close(fd);
}

/* Only whole records are written, never beyond them. */
TEST(read_whole_records)
{
	unsigned char buf[5 * 32 + 16];
	struct twheel_event ev;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, queue_events(fd, 1, 4));
	/* 40 bytes: exactly one record */
	memset(buf, 0xAA, sizeof(buf));
	ASSERT_EQ(32, read(fd, buf, 40));
	ASSERT_TRUE(all_bytes(buf + 32, 0xAA, sizeof(buf) - 32));
	memcpy(&ev, buf, sizeof(ev));
	ASSERT_EQ(U(1), ev.id);
	ASSERT_EQ(U(0xd0), ev.data);
	check_event(_metadata, &ev, CLOCK_MONOTONIC, false);
	/* room for 5 and a half: the 3 left */
	memset(buf, 0xAA, sizeof(buf));
	ASSERT_EQ(96, read(fd, buf, sizeof(buf)));
	ASSERT_TRUE(all_bytes(buf + 96, 0xAA, sizeof(buf) - 96));
	memcpy(&ev, buf + 64, sizeof(ev));
	ASSERT_EQ(U(4), ev.id);
	ASSERT_EQ(U(0xd3), ev.data);
	ASSERT_EQ(U(1), ev.deadline_ns);
	/* a read event is gone */
	ASSERT_EQ(0, state_of(fd, 1));
	ASSERT_EQ(0, state_of(fd, 4));
	ASSERT_EQ(-EAGAIN, read_events(fd, &ev, 1));
	close(fd);
}

TEST(read_efault_keeps_events)
{
	struct twheel_event ev[8];
	struct twheel_stats st;
	void *bad = unmapped_page();
	int fd, i;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_NE(NULL, bad);
	ASSERT_EQ(0, queue_events(fd, 1, 5));
	ASSERT_EQ(-EFAULT, rd(fd, bad, 4 * 32));
	ASSERT_EQ(-EFAULT, rd(fd, vnull, 32));
	ASSERT_EQ(0, set_nonblock(fd, 1));
	ASSERT_EQ(-EFAULT, rd(fd, bad, 32));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(U(5), st.pending);
	ASSERT_EQ(U(0), st.delivered);
	ASSERT_EQ(5, read_events(fd, ev, 8));
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(U(1 + i), ev[i].id);
		ASSERT_EQ(U(0xd0 + i), ev[i].data);
	}
	close(fd);
}

/* The first K records of the buffer are mapped: exactly K come back. */
TEST(read_partial_mapped)
{
	enum { K = 3, N = 8 };
	long ps = page_size();
	char *page = map_hole(false);
	struct twheel_event *buf, ev[N];
	int fd, i;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_NE(NULL, page);
	ASSERT_EQ(0, queue_events(fd, 1, N));
	buf = (struct twheel_event *)(page + ps) - K;
	memset(buf, 0xAA, K * sizeof(*buf));
	ASSERT_EQ(K * 32, read(fd, buf, N * 32));
	for (i = 0; i < K; i++) {
		ASSERT_EQ(U(1 + i), buf[i].id);
		ASSERT_EQ(U(0xd0 + i), buf[i].data);
		check_event(_metadata, &buf[i], CLOCK_MONOTONIC, false);
	}
	ASSERT_EQ(0, state_of(fd, 1));
	ASSERT_EQ(TWHEEL_STATE_EXPIRED, state_of(fd, K + 1));
	ASSERT_EQ(N - K, read_events(fd, ev, N));
	for (i = 0; i < N - K; i++)
		ASSERT_EQ(U(1 + K + i), ev[i].id);
	close(fd);
	munmap(page, ps);
}

/* ---- poll / epoll ---------------------------------------------------- */

TEST(poll_and_epoll)
{
	struct pollfd p;
	struct epoll_event ee = { 0 }, got;
	struct twheel_event ev;
	int fd, ep_io, ep_in;

	OPEN_OR_SKIP(fd, 0);
	ep_io = epoll_create1(EPOLL_CLOEXEC);
	ep_in = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep_io);
	ASSERT_LE(0, ep_in);
	ee.events = EPOLLIN | EPOLLOUT;
	ASSERT_EQ(0, epoll_ctl(ep_io, EPOLL_CTL_ADD, fd, &ee));
	ee.events = EPOLLIN;
	ASSERT_EQ(0, epoll_ctl(ep_in, EPOLL_CTL_ADD, fd, &ee));

	p = (struct pollfd){ .fd = fd, .events = POLLIN | POLLOUT |
				     POLLRDNORM | POLLWRNORM };
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(POLLOUT | POLLWRNORM, p.revents);
	ASSERT_EQ(1, epoll_wait(ep_io, &got, 1, 0));
	ASSERT_EQ((__u32)EPOLLOUT, got.events);
	ASSERT_EQ(0, epoll_wait(ep_in, &got, 1, 0));
	/* armed but not due: still no EPOLLIN */
	ASSERT_EQ(0, arm1(fd, 1, 10 * SEC, 0, 0));
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(POLLOUT | POLLWRNORM, p.revents);

	ASSERT_EQ(0, arm_past(fd, 2, 0));
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM, p.revents);
	ASSERT_EQ(1, epoll_wait(ep_io, &got, 1, 0));
	ASSERT_EQ((__u32)(EPOLLIN | EPOLLOUT), got.events);
	ASSERT_EQ(1, epoll_wait(ep_in, &got, 1, 0));
	ASSERT_EQ((__u32)EPOLLIN, got.events);

	ASSERT_EQ(1, read_events(fd, &ev, 1));
	ASSERT_EQ(1, poll(&p, 1, 0));
	ASSERT_EQ(POLLOUT | POLLWRNORM, p.revents);
	ASSERT_EQ(0, epoll_wait(ep_in, &got, 1, 0));

	/* a blocking epoll_wait is woken by an expiry */
	ASSERT_EQ(0, arm1(fd, 3, 5 * MS, 0, 0));
	ASSERT_EQ(1, epoll_wait(ep_in, &got, 1, 20000));
	ASSERT_EQ((__u32)EPOLLIN, got.events);
	ASSERT_EQ(1, read_events(fd, &ev, 1));
	ASSERT_EQ(U(3), ev.id);
	check_event(_metadata, &ev, CLOCK_MONOTONIC, true);
	close(ep_io);
	close(ep_in);
	close(fd);
}

/* ---- unknown ioctls -------------------------------------------------- */

TEST(ioctl_enotty)
{
	__u64 buf[32] = { 0 };
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(-ENOTTY, ioc(fd, _IO(TWHEEL_IOC_MAGIC, 0x7f), NULL));
	ASSERT_EQ(-ENOTTY, ioc(fd, _IOR('T', 1, int), buf));
	ASSERT_EQ(-ENOTTY, ioc(fd, _IOWR(TWHEEL_IOC_MAGIC, 0x02, __u32), buf));
	/* known numbers with the wrong size or direction */
	ASSERT_EQ(-ENOTTY, ioc(fd, _IOR(TWHEEL_IOC_MAGIC, 0x01, __u64), buf));
	ASSERT_EQ(-ENOTTY, ioc(fd, _IOW(TWHEEL_IOC_MAGIC, 0x05, struct twheel_stats), buf));
	ASSERT_EQ(-ENOTTY, ioc(fd, _IO(TWHEEL_IOC_MAGIC, 0x04), NULL));
	ASSERT_EQ(-ENOTTY, ioc(fd, _IOWR(TWHEEL_IOC_MAGIC, 0x07, struct twheel_dump), buf));
	close(fd);
}

/* ---- fdinfo ---------------------------------------------------------- */

static const char *const fdinfo_keys[] = {
	"tick_ns", "timeout_ns", "clockid", "max_ids", "config_flags", "armed",
	"pending", "touches", "arms", "cancels", "expirations", "delivered",
	"discarded", "timer_fires", "late_max_ns", "mem_bytes", "wheel_id",
	"runs", "work_runs", "work_ns",
};
#define NKEYS (sizeof(fdinfo_keys) / sizeof(fdinfo_keys[0]))

/*
 * Parse the module's part of /proc/self/fdinfo/FD (from "tick_ns:" on: the
 * VFS prints its own "flags:" line first).  Returns the number of keys
 * found, -1 on a malformed line or a duplicate key.
 */
static int read_fdinfo(int fd, __u64 *val)
{
	char path[64], line[256];
	bool started = false, seen[NKEYS] = { false };
	int found = 0;
	unsigned int k;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':'), *end;

		if (!started && strncmp(line, "tick_ns:", 8))
			continue;
		started = true;
		if (!colon || colon[1] != '\t')
			goto bad;
		*colon = 0;
		for (k = 0; k < NKEYS && strcmp(line, fdinfo_keys[k]); k++)
			;
		if (k == NKEYS)
			continue;	/* more keys may be added */
		if (seen[k])
			goto bad;
		seen[k] = true;
		errno = 0;
		val[k] = strtoull(colon + 2, &end, 10);
		if (errno || end == colon + 2 || (*end != '\n' && *end))
			goto bad;
		found++;
	}
	fclose(f);
	return found;
bad:
	fclose(f);
	return -1;
}

TEST(fdinfo_matches)
{
	struct twheel_config c;
	struct twheel_stats s1, s2;
	struct twheel_event ev;
	__u64 v[NKEYS], w[NKEYS];
	uint64_t ids[3] = { 1, 2, 3 };
	int fd, fd2;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, get_config(fd, &c));
	c.tick_ns = 2 * MS;
	c.timeout_ns = 12345678900ULL;
	c.max_ids = 4321;
	c.clockid = CLOCK_BOOTTIME;
	ASSERT_EQ(0, set_config(fd, &c));
	ASSERT_EQ(24, write(fd, ids, 24));
	ASSERT_EQ(0, arm1(fd, 4, 3600 * SEC, 0, 0));
	ASSERT_EQ(0, queue_events(fd, 10, 3));
	ASSERT_EQ(1, read_events(fd, &ev, 1));
	ASSERT_EQ(0, cancel_n(fd, ids, 1, NULL));
	ASSERT_EQ(8, write(fd, (__u64[]){ 11 }, 8));	/* discards */

	ASSERT_EQ(0, get_stats(fd, &s1));
	ASSERT_EQ((int)NKEYS, read_fdinfo(fd, v));
	ASSERT_EQ(0, get_stats(fd, &s2));
	ASSERT_EQ(c.tick_ns, v[0]);
	ASSERT_EQ(c.timeout_ns, v[1]);
	ASSERT_EQ((__u64)c.clockid, v[2]);
	ASSERT_EQ(c.max_ids, v[3]);
	ASSERT_EQ((__u64)c.flags, v[4]);
	ASSERT_EQ(s1.armed, v[5]);
	ASSERT_EQ(s1.pending, v[6]);
	ASSERT_EQ(s1.touches, v[7]);
	ASSERT_EQ(s1.arms, v[8]);
	ASSERT_EQ(s1.cancels, v[9]);
	ASSERT_EQ(s1.expirations, v[10]);
	ASSERT_EQ(s1.delivered, v[11]);
	ASSERT_EQ(s1.discarded, v[12]);
	ASSERT_LE(s1.timer_fires, v[13]);
	ASSERT_GE(s2.timer_fires, v[13]);
	ASSERT_LE(s1.late_max_ns, v[14]);
	ASSERT_GE(s2.late_max_ns, v[14]);
	ASSERT_EQ(s1.mem_bytes, v[15]);
	ASSERT_LE(s1.runs, v[17]);
	ASSERT_GE(s2.runs, v[17]);
	ASSERT_LE(s1.work_runs, v[18]);
	ASSERT_GE(s2.work_runs, v[18]);
	ASSERT_LE(s1.work_ns, v[19]);
	ASSERT_GE(s2.work_ns, v[19]);
	/* a wheel id: non-zero, another for another open */
	fd2 = open_wheel(0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ((int)NKEYS, read_fdinfo(fd2, w));
	EXPECT_NE(U(0), v[16]);
	EXPECT_NE(v[16], w[16]);
	close(fd2);
	/* sanity of what was compared */
	ASSERT_EQ(U(4), s1.armed);	/* 2, 3, 4, 11 */
	ASSERT_EQ(U(1), s1.pending);	/* 12 */
	ASSERT_EQ(U(4), s1.touches);
	ASSERT_EQ(U(4), s1.arms);
	ASSERT_EQ(U(1), s1.cancels);
	ASSERT_EQ(U(3), s1.expirations);
	ASSERT_EQ(U(1), s1.delivered);
	ASSERT_EQ(U(1), s1.discarded);
	close(fd);
}

/* ---- independence of fds --------------------------------------------- */

TEST(fds_independent)
{
	struct twheel_config c1, c2, now;
	struct twheel_stats st;
	struct twheel_query q;
	struct twheel_event ev;
	struct twheel_dump d;
	struct twheel_arm out[4];
	struct pollfd p;
	uint64_t done;
	int fd1, fd2;

	OPEN_OR_SKIP(fd1, 0);
	fd2 = open_wheel(0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(8, write(fd1, (__u64[]){ 5 }, 8));
	ASSERT_EQ(0, arm_past(fd1, 6, 66));
	ASSERT_EQ(0, arm1(fd1, 7, 10 * SEC, 71, 0));
	ASSERT_EQ(0, arm1(fd2, 7, 20 * SEC, 72, 0));

	ASSERT_EQ(-ENOENT, query(fd2, 5, &q));
	ASSERT_EQ(-ENOENT, query(fd2, 6, &q));
	ASSERT_EQ(0, query(fd2, 7, &q));
	ASSERT_EQ(U(72), q.data);
	ASSERT_EQ(0, query(fd1, 7, &q));
	ASSERT_EQ(U(71), q.data);
	ASSERT_EQ(-EAGAIN, read_events(fd2, &ev, 1));
	p = (struct pollfd){ .fd = fd2, .events = POLLIN };
	ASSERT_EQ(0, poll(&p, 1, 0));
	ASSERT_EQ(0, get_stats(fd2, &st));
	ASSERT_EQ(U(1), st.armed);
	ASSERT_EQ(U(0), st.pending);
	ASSERT_EQ(U(0), st.touches);
	ASSERT_EQ(U(1), st.arms);
	ASSERT_EQ(U(0), st.expirations);

	/* fd2's dump holds only its own id */
	dump_init(&d, out, 4);
	ASSERT_EQ(0, ioctl(fd2, TWHEEL_IOC_DUMP, &d));
	ASSERT_EQ(U(1), d.done);
	ASSERT_EQ(U(7), out[0].id);
	ASSERT_EQ(U(72), out[0].data);

	/* cancel in fd2 does not reach fd1 */
	ASSERT_EQ(0, cancel_n(fd2, (uint64_t[]){ 5, 6, 7 }, 3, &done));
	ASSERT_EQ(U(1), done);
	ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd1, 5));
	ASSERT_EQ(TWHEEL_STATE_EXPIRED, state_of(fd1, 6));
	ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd1, 7));

	/* fd2 is empty again: it may change its tick; fd1 keeps its own */
	ASSERT_EQ(0, get_config(fd1, &c1));
	c2 = c1;
	c2.tick_ns = 4 * MS;
	ASSERT_EQ(0, set_config(fd2, &c2));
	ASSERT_EQ(-EBUSY, set_config(fd1, &c2));
	ASSERT_EQ(0, get_config(fd1, &now));
	ASSERT_EQ(0, memcmp(&now, &c1, sizeof(c1)));

	ASSERT_EQ(1, read_events(fd1, &ev, 1));
	ASSERT_EQ(U(6), ev.id);
	ASSERT_EQ(U(66), ev.data);
	close(fd2);
	/* closing fd2 leaves fd1 intact */
	ASSERT_EQ(TWHEEL_STATE_ARMED, state_of(fd1, 5));
	close(fd1);
}

/*
 * TWHEEL_IOC_BPF_HANDLE: EOPNOTSUPP exactly when the kernel has no BTF of
 * the module (/sys/kernel/btf/twheel); else a handle, not zero, the same
 * on every call on one file, another for another file, and EFAULT for a
 * bad pointer.
 */
TEST(bpf_handle)
{
	struct stat st;
	__u64 h1 = 0, h2 = 0, h3 = 0;
	int fd, fd2;

	OPEN_OR_SKIP(fd, 0);
	if (ioctl(fd, TWHEEL_IOC_BPF_HANDLE, &h1)) {
		ASSERT_EQ(EOPNOTSUPP, errno);
		EXPECT_NE(0, stat("/sys/kernel/btf/twheel", &st));
		close(fd);
		SKIP(return, "module without BTF: no BPF export");
	}
	ASSERT_NE(U(0), U(h1));
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_BPF_HANDLE, &h2));
	EXPECT_EQ(U(h1), U(h2));
	fd2 = open_wheel(0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, ioctl(fd2, TWHEEL_IOC_BPF_HANDLE, &h3));
	EXPECT_LT(U(h1), U(h3));
	EXPECT_EQ(-1, ioctl(fd2, TWHEEL_IOC_BPF_HANDLE, NULL));
	EXPECT_EQ(EFAULT, errno);
	close(fd2);
	close(fd);
}

TEST_HARNESS_MAIN
