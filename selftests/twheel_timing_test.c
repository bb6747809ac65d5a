// SPDX-License-Identifier: GPL-2.0
/*
 * twheel timing guarantees and concurrency: never early (strict), ordered up
 * to one tick, exactly once, idle costs nothing, touch moves the deadline,
 * wake-ups of blocked readers and of epoll, an fd shared by fork and by
 * threads, close racing with due timers, and fds that stay independent.
 *
 * Lateness is never asserted (the guest runs under TCG): it is logged with
 * TH_LOG and only checked against a sanity bound of 3 s.  The seed of the
 * randomized tests comes from TWHEEL_SEED (else the clock) and is logged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <linux/twheel.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "twheel_test.h"
#pragma GCC diagnostic pop

#define TICK_DEFAULT	TWHEEL_DEFAULT_TICK_NS
#define LATE_SANITY_NS	(30 * SEC)	/* a busy host stalls a TCG guest for seconds */

/* ------------------------------------------------------------- helpers */

static double ms_of(uint64_t ns)
{
	return (double)ns / 1e6;
}

static int tw_arm1(int fd, uint64_t id, uint64_t timeout, uint64_t data,
		   uint32_t flags)
{
	struct twheel_arm e = {
		.id = id, .timeout_ns = timeout, .data = data, .flags = flags,
	};
	uint64_t done = 0;
	int r = arm_n(fd, &e, 1, &done);

	if (!r && done != 1)
		return -EPROTO;
	return r;
}

static uint64_t tw_fires(int fd)
{
	struct twheel_stats st;

	if (get_stats(fd, &st))
		return UINT64_MAX;
	return st.timer_fires;
}

/* 1 if an event is queued now, 0 if not, -1 on error. */
static int readable(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r = poll(&p, 1, timeout_ms);

	if (r < 0)
		return -1;
	return r > 0 && (p.revents & POLLIN);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* "n=N min/median/max = a/b/c ms" of v[0..n), sorted in place. */
static const char *late_str(char *buf, size_t len, uint64_t *v, size_t n)
{
	if (!n) {
		snprintf(buf, len, "n=0");
		return buf;
	}
	qsort(v, n, sizeof(*v), cmp_u64);
	snprintf(buf, len, "n=%zu min/median/max = %.3f/%.3f/%.3f ms", n,
		 ms_of(v[0]), ms_of(v[n / 2]), ms_of(v[n - 1]));
	return buf;
}

/*
 * The guarantees every event must meet: queued no earlier than its
 * deadline, and the clock read after read() returned is past the deadline.
 */
static void check_event(struct __test_metadata *_metadata,
			const struct twheel_event *ev, uint64_t after)
{
	ASSERT_GE(ev->expired_ns, ev->deadline_ns)
		TH_LOG("id %#llx expired early: expired %llu < deadline %llu",
		       U(ev->id), U(ev->expired_ns), U(ev->deadline_ns));
	ASSERT_GE(after, ev->deadline_ns)
		TH_LOG("id %#llx read at %llu before its deadline %llu",
		       U(ev->id), U(after), U(ev->deadline_ns));
	ASSERT_LT(ev->expired_ns - ev->deadline_ns, LATE_SANITY_NS)
		TH_LOG("id %#llx late by %.3f ms (sanity bound 30 s)",
		       U(ev->id), ms_of(ev->expired_ns - ev->deadline_ns));
}

/* An event a test waits for. */
struct want {
	uint64_t id;
	uint64_t data;
	uint64_t deadline;
	bool seen;
};

/*
 * Blocking reads until every w[] event arrived: each exactly once, with its
 * data and deadline, never early.  late[i] = expired - deadline and obs[i]
 * = (clock after the read) - deadline, when not NULL.
 */
static void read_want(struct __test_metadata *_metadata, int fd,
		      struct want *w, size_t n, uint64_t *late, uint64_t *obs)
{
	struct twheel_event ev[64];
	size_t got = 0, i, k;

	while (got < n) {
		ssize_t rr = read(fd, ev, sizeof(ev));
		uint64_t after = now_ns();

		ASSERT_GT(rr, 0) TH_LOG("read: %s", strerror(errno));
		ASSERT_EQ(0U, (size_t)rr % sizeof(ev[0]));
		for (k = 0; k < (size_t)rr / sizeof(ev[0]); k++) {
			const struct twheel_event *x = &ev[k];

			for (i = 0; i < n && w[i].id != x->id; i++)
				;
			ASSERT_LT(i, n) TH_LOG("unexpected id %#llx", U(x->id));
			ASSERT_FALSE(w[i].seen) TH_LOG("id %#llx delivered twice", U(x->id));
			w[i].seen = true;
			ASSERT_EQ(w[i].data, x->data) TH_LOG("id %#llx", U(x->id));
			ASSERT_EQ(w[i].deadline, x->deadline_ns) TH_LOG("id %#llx", U(x->id));
			check_event(_metadata, x, after);
			if (late)
				late[i] = x->expired_ns - x->deadline_ns;
			if (obs)
				obs[i] = after - x->deadline_ns;
			got++;
		}
	}
}

FIXTURE(tw) {
	int fd;
};

FIXTURE_SETUP(tw)
{
	int err;

	self->fd = open_wheel(0);
	err = errno;
	if (self->fd < 0)
		ASSERT_EQ(ENOENT, err) TH_LOG("open /dev/twheel: %s", strerror(err));
}

FIXTURE_TEARDOWN(tw)
{
	if (self->fd >= 0)
		close(self->fd);
}

#define NEED_DEV() do {							\
	if (self->fd < 0)						\
		SKIP(return, "/dev/twheel not present (module not loaded)"); \
} while (0)

/* ----------------------------------------------------- never_early_sweep */

TEST_F_TIMEOUT(tw, never_early_sweep, 90)
{
	static const uint64_t tmo[] = { 1 * MS, 10 * MS, 100 * MS, 1 * SEC, 10 * SEC };
	static const char *const tname[] = { "1 ms", "10 ms", "100 ms", "1 s", "10 s" };
	enum { NT = 5, PER = 8, N = NT * PER };
	struct twheel_arm e[N];
	struct want w[N];
	uint64_t late[N], obs[N], gl[PER], go[PER], t0, t1, done, maxlate = 0;
	struct twheel_stats st;
	unsigned int i, k;
	char buf[128];

	NEED_DEV();
	memset(e, 0, sizeof(e));
	for (i = 0; i < N; i++) {
		/* timeouts interleaved, ids using the upper 32 bits */
		e[i].id = 0x5eed000000000000ULL + (uint64_t)i * 0x100000001ULL;
		e[i].timeout_ns = tmo[i % NT];
		e[i].data = 0xda7a000000000000ULL ^ ((uint64_t)i * SPLITMIX64_GAMMA);
	}
	t0 = now_ns();
	ASSERT_EQ(0, arm_n(self->fd, e, N, &done));
	t1 = now_ns();
	ASSERT_EQ((uint64_t)N, done);

	for (i = 0; i < N; i++) {
		struct twheel_query q;

		ASSERT_EQ(0, query(self->fd, e[i].id, &q));
		ASSERT_TRUE(q.state == TWHEEL_STATE_ARMED ||
			    q.state == TWHEEL_STATE_EXPIRED);
		ASSERT_EQ(0U, q.reserved);
		ASSERT_EQ(e[i].data, q.data);
		/* the kernel took now between t0 and t1 */
		ASSERT_GE(q.deadline_ns, t0 + e[i].timeout_ns);
		ASSERT_LE(q.deadline_ns, t1 + e[i].timeout_ns);
		w[i] = (struct want){ e[i].id, e[i].data, q.deadline_ns, false };
	}
	read_want(_metadata, self->fd, w, N, late, obs);
	ASSERT_EQ(0, readable(self->fd, 0));
	for (i = 0; i < N; i++)
		maxlate = late[i] > maxlate ? late[i] : maxlate;
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ((uint64_t)N, st.expirations);
	EXPECT_EQ((uint64_t)N, st.delivered);
	EXPECT_EQ(0ULL, st.armed);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(maxlate, st.late_max_ns);

	for (k = 0; k < NT; k++) {
		for (i = 0; i < PER; i++) {
			gl[i] = late[i * NT + k];
			go[i] = obs[i * NT + k];
		}
		TH_LOG("timeout %-6s lateness expired-deadline: %s", tname[k],
		       late_str(buf, sizeof(buf), gl, PER));
		TH_LOG("timeout %-6s read returned after deadline: %s", tname[k],
		       late_str(buf, sizeof(buf), go, PER));
	}
	TH_LOG("timer_fires %llu runs %llu reslots %llu late_max %.3f ms",
	       U(st.timer_fires), U(st.runs), U(st.reslots),
	       ms_of(st.late_max_ns));
}

/* -------------------------------------------------------------- ordering */

TEST_F_TIMEOUT(tw, ordering, 60)
{
	enum { N = 2000, BUF = 256 };
	const uint64_t step = 150 * US;	/* N * step = 300 ms */
	struct rng r = { .s = time_seed() };
	uint64_t seed = r.s, *ids, *dl, *late, *seen, base, t0, t1, done;
	uint64_t maxprev = 0, exempt = 0, inversions = 0, maxinv = 0, lastdl = 0;
	struct twheel_event *ev;
	struct twheel_arm *e;
	struct idmap m;
	unsigned int total = 0, i;
	char buf[128];

	NEED_DEV();
	TH_LOG("seed %#llx", U(seed));
	ids = calloc(N, sizeof(*ids));
	dl = calloc(N, sizeof(*dl));
	late = calloc(N, sizeof(*late));
	e = calloc(N, sizeof(*e));
	ev = calloc(BUF, sizeof(*ev));
	seen = bitmap_alloc(N);
	ASSERT_TRUE(ids && dl && late && e && ev && seen);
	ASSERT_EQ(0, idmap_random_ids(&m, &r, ids, N));

	t0 = now_ns();
	base = t0 + 150 * MS;	/* room for arming 2000 ids under TCG */
	for (i = 0; i < N; i++) {
		dl[i] = base + i * step + rng_range(&r, 0, step - 1);
		e[i].id = ids[i];
		e[i].timeout_ns = dl[i];
		e[i].data = i;
		e[i].flags = TWHEEL_ARM_ABSTIME;
	}
	for (i = N - 1; i > 0; i--) {	/* arm in random order */
		unsigned int j = (unsigned int)rng_range(&r, 0, i);
		struct twheel_arm t = e[i];

		e[i] = e[j];
		e[j] = t;
	}
	ASSERT_EQ(0, arm_n(self->fd, e, N, &done));
	t1 = now_ns();
	ASSERT_EQ((uint64_t)N, done);
	TH_LOG("armed %d ids in %.3f ms; deadlines from +%.3f ms to +%.3f ms",
	       N, ms_of(t1 - t0), ms_of(dl[0] - t0), ms_of(dl[N - 1] - t0));

	while (total < N) {
		ssize_t rr = read(self->fd, ev, BUF * sizeof(*ev));
		uint64_t after = now_ns();
		size_t k;

		ASSERT_GT(rr, 0) TH_LOG("read: %s", strerror(errno));
		ASSERT_EQ(0U, (size_t)rr % sizeof(*ev));
		for (k = 0; k < (size_t)rr / sizeof(*ev); k++) {
			const struct twheel_event *x = &ev[k];
			int64_t idx = idmap_get(&m, x->id);

			ASSERT_GE(idx, 0) TH_LOG("unknown id %#llx", U(x->id));
			ASSERT_FALSE(bitmap_test_set(seen, (uint64_t)idx))
				TH_LOG("id %#llx delivered twice", U(x->id));
			ASSERT_EQ((uint64_t)idx, x->data);
			ASSERT_EQ(dl[idx], x->deadline_ns);
			check_event(_metadata, x, after);
			late[total++] = x->expired_ns - x->deadline_ns;
			if (x->deadline_ns < lastdl) {
				inversions++;
				if (lastdl - x->deadline_ns > maxinv)
					maxinv = lastdl - x->deadline_ns;
			}
			lastdl = x->deadline_ns;
			/* armed with a deadline already past: queued at once */
			if (x->deadline_ns <= t1) {
				exempt++;
				continue;
			}
			ASSERT_LE(maxprev, x->deadline_ns + TICK_DEFAULT)
				TH_LOG("event #%u (deadline +%.3f ms) read after one with deadline +%.3f ms",
				       total, ms_of(x->deadline_ns - t0), ms_of(maxprev - t0));
			if (x->deadline_ns > maxprev)
				maxprev = x->deadline_ns;
		}
	}
	ASSERT_EQ(0, readable(self->fd, 0));
	TH_LOG("%llu ids exempt (deadline passed before ARM returned)", U(exempt));
	TH_LOG("%llu in-tick inversions, largest %.3f ms", U(inversions),
	       ms_of(maxinv));
	TH_LOG("lateness expired-deadline: %s", late_str(buf, sizeof(buf), late, N));
	idmap_free(&m);
	free(ids);
	free(dl);
	free(late);
	free(e);
	free(ev);
	free(seen);
}

/* --------------------------------------------------------- level_horizons */

enum { G_L1, G_L2, G_L3, G_RANDOM, G_NR };

TEST_F_TIMEOUT(tw, level_horizons, 75)
{
	static const char *const gname[G_NR] = { "L1 (64 ticks)", "L2 (64^2 ticks)",
						 "L3 (64^3 ticks)", "random" };
	static const struct { int lvl; uint64_t k; } ks[] = {
		{ 1, 1 }, { 1, 2 }, { 1, 5 }, { 1, 63 }, { 2, 1 }, { 2, 3 }, { 3, 1 },
	};
	enum { NMAX = 128 };
	const uint64_t tick = TWHEEL_TICK_MIN_NS;
	struct rng r = { .s = time_seed() };
	uint64_t seed = r.s, now, nt, t1, done, *late[G_NR], past = 0, maxdl = 0;
	struct twheel_arm e[NMAX];
	struct want w[NMAX];
	uint64_t lt[NMAX];
	int grp[NMAX];
	size_t n = 0, ng[G_NR] = { 0 }, i;
	struct twheel_stats st;
	char buf[128];

	NEED_DEV();
	TH_LOG("seed %#llx", U(seed));
	ASSERT_EQ(0, config_set(self->fd, tick, 0, 0));
	for (i = 0; i < G_NR; i++) {
		late[i] = calloc(NMAX, sizeof(uint64_t));
		ASSERT_TRUE(late[i] != NULL);
	}
	memset(e, 0, sizeof(e));
	now = now_ns();
	nt = now / tick;
	for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		uint64_t span = ks[i].k << (6 * ks[i].lvl);
		int d;

		for (d = -1; d <= 1; d++) {
			/* k level-L slots from now's tick, and from now */
			e[n].timeout_ns = (nt + span + d) * tick;
			grp[n++] = ks[i].lvl - 1;
			/* around the start of a level-L slot: the cascade edge */
			e[n].timeout_ns = ((((nt >> (6 * ks[i].lvl)) + ks[i].k) <<
					    (6 * ks[i].lvl)) + d) * tick;
			grp[n++] = ks[i].lvl - 1;
			if (ks[i].lvl == 3 && d)
				continue;	/* L3 is long: only a few ids */
			e[n].timeout_ns = now + (span + d) * tick;
			grp[n++] = ks[i].lvl - 1;
		}
	}
	for (i = 0; i < 16; i++) {
		uint64_t hi = i < 12 ? 3 * 4096 : 262144;	/* ticks */

		e[n].timeout_ns = now + rng_range(&r, tick, hi * tick);
		grp[n++] = G_RANDOM;
	}
	ASSERT_LE(n, (size_t)NMAX);
	for (i = 0; i < n; i++) {
		e[i].id = 0x1e7e100000000000ULL | ((uint64_t)i << 32) | (i * 977);
		e[i].data = ~e[i].id;
		e[i].flags = TWHEEL_ARM_ABSTIME;
		if (e[i].timeout_ns > maxdl)
			maxdl = e[i].timeout_ns;
	}
	ASSERT_EQ(0, arm_n(self->fd, e, n, &done));
	t1 = now_ns();
	ASSERT_EQ((uint64_t)n, done);
	for (i = 0; i < n; i++) {
		struct twheel_query q;

		ASSERT_EQ(0, query(self->fd, e[i].id, &q));
		ASSERT_EQ(e[i].timeout_ns, q.deadline_ns);
		w[i] = (struct want){ e[i].id, e[i].data, q.deadline_ns, false };
		if (e[i].timeout_ns <= t1)
			past++;
	}
	TH_LOG("%zu ids, last deadline +%.3f s; %llu already due when ARM returned",
	       n, (double)(maxdl - now) / 1e9, U(past));

	read_want(_metadata, self->fd, w, n, lt, NULL);
	for (i = 0; i < n; i++)
		late[grp[i]][ng[grp[i]]++] = lt[i];
	sleep_ns(100 * MS);
	ASSERT_EQ(0, readable(self->fd, 0));	/* exactly once */
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ((uint64_t)n, st.expirations);
	EXPECT_EQ((uint64_t)n, st.delivered);
	EXPECT_EQ(0ULL, st.armed);
	for (i = 0; i < G_NR; i++) {
		TH_LOG("%-16s lateness: %s", gname[i],
		       late_str(buf, sizeof(buf), late[i], ng[i]));
		free(late[i]);
	}
	TH_LOG("tick 100 us: timer_fires %llu runs %llu reslots %llu",
	       U(st.timer_fires), U(st.runs), U(st.reslots));
}

/* -------------------------------------------------------- far_future_idle */

TEST_F_TIMEOUT(tw, far_future_idle, 40)
{
	const uint64_t hour = 3600 * SEC, day = 24 * hour, year = 36525 * day / 100;
	const uint64_t far[] = { hour, day, year, 100 * year };
	enum { NF = 4, N = 2 * NF + 2, NEAR = 8 };
	struct twheel_arm e[N], near[NEAR];
	uint64_t ids[N + NEAR + 1], t0, t1, done, f0, f1, dlnear, ta, tc;
	uint64_t may = 0;
	struct twheel_stats st;
	struct twheel_query q;
	struct twheel_event ev[2];
	unsigned int i;
	int fd2;

	NEED_DEV();
	ASSERT_EQ(0, set_nonblock(self->fd, 1));
	memset(e, 0, sizeof(e));
	for (i = 0; i < NF; i++) {
		e[i].id = 0xfa0000000000ULL + i;
		e[i].timeout_ns = far[i];
		e[NF + i].id = 0xfa0000000100ULL + i;
		e[NF + i].flags = TWHEEL_ARM_ABSTIME;
	}
	e[2 * NF].id = 0xfa0000000200ULL;	/* ABSTIME at the largest deadline */
	e[2 * NF].timeout_ns = TWHEEL_DEADLINE_MAX;
	e[2 * NF].flags = TWHEEL_ARM_ABSTIME;
	e[2 * NF + 1].id = 0xfa0000000201ULL;	/* relative: saturates */
	e[2 * NF + 1].timeout_ns = TWHEEL_DEADLINE_MAX;
	for (i = 0; i < N; i++) {
		e[i].data = 0xfeed0000ULL + i;
		ids[i] = e[i].id;
	}
	t0 = now_ns();
	for (i = 0; i < NF; i++)
		e[NF + i].timeout_ns = t0 + far[i];
	ASSERT_EQ(0, arm_n(self->fd, e, N, &done));
	t1 = now_ns();
	ASSERT_EQ((uint64_t)N, done);

	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, query(self->fd, e[i].id, &q));
		ASSERT_EQ((uint32_t)TWHEEL_STATE_ARMED, q.state);
		ASSERT_EQ(e[i].data, q.data);
		if (i < NF) {
			ASSERT_GE(q.deadline_ns, t0 + far[i]);
			ASSERT_LE(q.deadline_ns, t1 + far[i]);
		} else if (i == 2 * NF + 1) {
			ASSERT_EQ(TWHEEL_DEADLINE_MAX, q.deadline_ns);
		} else {
			ASSERT_EQ(e[i].timeout_ns, q.deadline_ns);
		}
	}

	/* only far ids: no hrtimer callback at all, nothing readable */
	fd2 = open_wheel(0);
	ASSERT_GE(fd2, 0);
	f0 = tw_fires(self->fd);
	sleep_ns(1500 * MS);
	f1 = tw_fires(self->fd);
	TH_LOG("far ids only: timer_fires %llu -> %llu over 1.5 s", U(f0), U(f1));
	ASSERT_EQ(f0, f1) TH_LOG("idle wheel with far ids fired its timer");
	ASSERT_EQ(0, readable(self->fd, 0));
	ASSERT_EQ(-1, read(self->fd, ev, sizeof(ev)));
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	ASSERT_EQ((uint64_t)N, st.armed);
	ASSERT_EQ(0ULL, st.pending);
	ASSERT_EQ(0ULL, st.expirations);

	/* a fresh empty fd, open for 1.5 s, never fired */
	ASSERT_EQ(0, get_stats(fd2, &st));
	ASSERT_EQ(0ULL, st.timer_fires);
	ASSERT_EQ(0ULL, st.runs);
	close(fd2);
	fd2 = open_wheel(0);	/* and one sampled after exactly 0.5 s */
	ASSERT_GE(fd2, 0);
	sleep_ns(500 * MS);
	ASSERT_EQ(0, get_stats(fd2, &st));
	ASSERT_EQ(0ULL, st.timer_fires);
	close(fd2);

	/* a near id among the far ones: once it is read, quiet again */
	ASSERT_EQ(0, tw_arm1(self->fd, 0xfa0000000300ULL, 50 * MS, 7, 0));
	ASSERT_EQ(0, query(self->fd, 0xfa0000000300ULL, &q));
	dlnear = q.deadline_ns;
	ASSERT_EQ(1, readable(self->fd, 20000));
	ASSERT_EQ((ssize_t)sizeof(ev[0]), read(self->fd, ev, sizeof(ev)));
	ASSERT_EQ(0xfa0000000300ULL, ev[0].id);
	ASSERT_EQ(dlnear, ev[0].deadline_ns);
	check_event(_metadata, &ev[0], now_ns());
	f0 = tw_fires(self->fd);
	sleep_ns(1500 * MS);
	f1 = tw_fires(self->fd);
	TH_LOG("after a near id was read: timer_fires %llu -> %llu over 1.5 s",
	       U(f0), U(f1));
	ASSERT_EQ(f0, f1) TH_LOG("wheel kept firing after its only near id expired");

	/* cancel everything, including near ids not yet due: timer stops */
	memset(near, 0, sizeof(near));
	for (i = 0; i < NEAR; i++) {
		near[i].id = 0xfa0000000400ULL + i;
		near[i].timeout_ns = (100 + 40 * i) * MS;
		ids[N + i] = near[i].id;
	}
	ids[N + NEAR] = 0xfa0000000300ULL;	/* already read: absent */
	ta = now_ns();
	ASSERT_EQ(0, arm_n(self->fd, near, NEAR, &done));
	ASSERT_EQ(0, cancel_n(self->fd, ids, N + NEAR + 1, &done));
	tc = now_ns();
	/* a near id may expire before the cancel only if we were that late */
	for (i = 0; i < NEAR; i++)
		may += ta + near[i].timeout_ns <= tc;
	ASSERT_EQ((uint64_t)(N + NEAR), done);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	ASSERT_EQ(0ULL, st.armed);
	ASSERT_EQ(0ULL, st.pending);
	f0 = st.timer_fires;
	sleep_ns(600 * MS);	/* past every cancelled near deadline */
	f1 = tw_fires(self->fd);
	TH_LOG("after cancelling everything: timer_fires %llu -> %llu over 0.6 s",
	       U(f0), U(f1));
	ASSERT_EQ(f0, f1) TH_LOG("timer still firing with nothing armed");
	ASSERT_EQ(0, readable(self->fd, 0));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	if (may)
		TH_LOG("descheduled %.1f ms between ARM and CANCEL: %llu near ids were due",
		       (tc - ta) / 1e6, U(may));
	ASSERT_LE(1ULL, st.expirations);
	ASSERT_GE(1ULL + may, st.expirations);
}

/* --------------------------------------------------- touch_moves_deadline */

/*
 * An id touched every tmo/5 for 3 tmo never expires, then expires once at
 * its last deadline.  A guest descheduled past a deadline retries with the
 * timeout doubled (100 ms to 1.6 s), so a busy host cannot turn the test
 * into a skip, which would also break the -m32 pass's equal totals.
 */
TEST_F_TIMEOUT(tw, touch_moves_deadline, 60)
{
	struct twheel_stats st;
	struct twheel_query q;
	struct twheel_event ev[2];
	unsigned int attempt;

	NEED_DEV();
	ASSERT_EQ(0, set_nonblock(self->fd, 1));
	for (attempt = 0; attempt < 5; attempt++) {
		uint64_t id = 0x70c4000000000000ULL + attempt, start, last = 0, exp0;
		const uint64_t tmo = (100 * MS) << attempt;
		unsigned int touches = 0;
		bool hiccup = false;
		ssize_t rr;

		ASSERT_EQ(0, config_set(self->fd, 0, tmo, 0));
		ASSERT_EQ(0, get_stats(self->fd, &st));
		exp0 = st.expirations;
		start = now_ns();
		while (now_ns() - start < 3 * tmo) {
			uint64_t tb, ta;
			int rd = readable(self->fd, 0);
			uint64_t after = now_ns();

			ASSERT_GE(rd, 0);
			if (rd) {
				rr = read(self->fd, ev, sizeof(ev));
				ASSERT_EQ((ssize_t)sizeof(ev[0]), rr);
				ASSERT_EQ(last, ev[0].deadline_ns);
				check_event(_metadata, &ev[0], after);
				hiccup = true;	/* we overslept the deadline */
				break;
			}
			tb = now_ns();
			ASSERT_EQ((ssize_t)sizeof(id), write(self->fd, &id, sizeof(id)));
			ta = now_ns();
			if (last && ta >= last) {
				hiccup = true;	/* the touch may have come too late */
				break;
			}
			ASSERT_EQ(0, query(self->fd, id, &q));
			ASSERT_EQ((uint32_t)TWHEEL_STATE_ARMED, q.state);
			ASSERT_GE(q.deadline_ns, tb + tmo);
			ASSERT_LE(q.deadline_ns, ta + tmo);
			last = q.deadline_ns;
			touches++;
			sleep_ns(tmo / 5);
		}
		/* the last sleep may have overslept the deadline too */
		if (!hiccup && last && now_ns() >= last)
			hiccup = true;
		if (hiccup) {
			TH_LOG("attempt %u: descheduled past the deadline, retrying",
			       attempt);
			cancel_n(self->fd, &id, 1, NULL);
			while (read(self->fd, ev, sizeof(ev)) > 0)
				;
			continue;
		}
		ASSERT_EQ(0, get_stats(self->fd, &st));
		ASSERT_EQ(exp0, st.expirations)
			TH_LOG("the id expired while being touched every tmo/5");
		ASSERT_EQ(0, query(self->fd, id, &q));
		ASSERT_EQ((uint32_t)TWHEEL_STATE_ARMED, q.state);
		ASSERT_EQ(last, q.deadline_ns);
		ASSERT_EQ(1, readable(self->fd, 20000));
		rr = read(self->fd, ev, sizeof(ev));
		ASSERT_EQ((ssize_t)sizeof(ev[0]), rr);
		ASSERT_EQ(id, ev[0].id);
		ASSERT_EQ(0ULL, ev[0].data);
		ASSERT_EQ(last, ev[0].deadline_ns);
		check_event(_metadata, &ev[0], now_ns());
		TH_LOG("timeout %.0f ms: %u touches over %.1f ms; expired %.3f ms after its last deadline (%.3f ms after the first)",
		       ms_of(tmo), touches, ms_of(now_ns() - start), ms_of(ev[0].expired_ns - last),
		       ms_of(ev[0].expired_ns - start - tmo));
		sleep_ns(200 * MS);
		ASSERT_EQ(0, readable(self->fd, 0));	/* expires once */
		ASSERT_EQ(0, get_stats(self->fd, &st));
		ASSERT_EQ(exp0 + 1, st.expirations);
		return;
	}
	ASSERT_TRUE(false) TH_LOG("descheduled past a deadline in every attempt, up to 1.6 s");
}

/* --------------------------------------------------- blocked_reader_woken */

struct reader_arg {
	int fd;
	ssize_t r;
	int err;
	uint64_t after;
	struct twheel_event ev[4];
};

static void *reader_fn(void *p)
{
	struct reader_arg *a = p;

	a->r = read(a->fd, a->ev, sizeof(a->ev));
	a->err = errno;
	a->after = now_ns();
	return NULL;
}

TEST_F_TIMEOUT(tw, blocked_reader_woken, 30)
{
	struct reader_arg a = { .fd = self->fd };
	struct twheel_query q;
	struct timespec ts;
	pthread_t th;
	int r;

	NEED_DEV();
	ASSERT_EQ(0, tw_arm1(self->fd, 0xb10c0001ULL, 3600 * SEC, 0, 0)); /* far */
	ASSERT_EQ(0, pthread_create(&th, NULL, reader_fn, &a));
	sleep_ns(100 * MS);	/* let it block */
	ASSERT_EQ(0, tw_arm1(self->fd, 0xb10c0002ULL, 50 * MS, 0xd00d, 0));
	ASSERT_EQ(0, query(self->fd, 0xb10c0002ULL, &q));
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 10;
	r = pthread_timedjoin_np(th, NULL, &ts);
	if (r) {
		/* unblock it with an id that is already due, then fail */
		tw_arm1(self->fd, 0xb10c0003ULL, 1, 0, TWHEEL_ARM_ABSTIME);
		pthread_join(th, NULL);
	}
	ASSERT_EQ(0, r) TH_LOG("blocked reader not woken 10 s after the ARM");
	ASSERT_EQ((ssize_t)sizeof(a.ev[0]), a.r) TH_LOG("read: %s", strerror(a.err));
	ASSERT_EQ(0xb10c0002ULL, a.ev[0].id);
	ASSERT_EQ(0xd00dULL, a.ev[0].data);
	ASSERT_EQ(q.deadline_ns, a.ev[0].deadline_ns);
	check_event(_metadata, &a.ev[0], a.after);
	TH_LOG("armed +50 ms; reader returned %.3f ms after the deadline (expired_ns +%.3f ms)",
	       ms_of(a.after - q.deadline_ns),
	       ms_of(a.ev[0].expired_ns - q.deadline_ns));
}

/* ------------------------------------------------------------------ epoll */

static void epoll_case(struct __test_metadata *_metadata, int fd, bool et)
{
	struct epoll_event ee = {
		.events = EPOLLIN | (et ? EPOLLET : 0),
		.data.u64 = 0xe9011ULL,
	};
	struct epoll_event out[4];
	struct twheel_event ev[4];
	struct twheel_query qa, qb;
	uint64_t far[2] = { 0xe0f0ULL, 0xe0f1ULL }, t, after, done;
	int ep, n, i, want = 1;
	ssize_t rr;

	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, set_nonblock(fd, 1));
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ee));
	ASSERT_EQ(0, tw_arm1(fd, far[0], 3600 * SEC, 0, 0));
	ASSERT_EQ(0, tw_arm1(fd, far[1], 24 * 3600 * SEC, 0, 0));

	/* only far ids: no wake-up */
	t = now_ns();
	n = epoll_wait(ep, out, 4, 100);
	ASSERT_EQ(0, n) TH_LOG("spurious wake-up with only far ids armed");
	TH_LOG("%s: idle epoll_wait(100 ms) returned 0 after %.3f ms",
	       et ? "edge" : "level", ms_of(now_ns() - t));

	ASSERT_EQ(0, tw_arm1(fd, 0xe0a0ULL, 50 * MS, 1, 0));
	ASSERT_EQ(0, query(fd, 0xe0a0ULL, &qa));
	n = epoll_wait(ep, out, 4, 20000);
	after = now_ns();
	ASSERT_EQ(1, n);
	ASSERT_TRUE(!!(out[0].events & EPOLLIN));
	ASSERT_EQ(0xe9011ULL, (unsigned long long)out[0].data.u64);
	ASSERT_GE(after, qa.deadline_ns) TH_LOG("epoll woke %.3f ms before the deadline",
						ms_of(qa.deadline_ns - after));
	TH_LOG("%s: woke %.3f ms after a +50 ms deadline", et ? "edge" : "level",
	       ms_of(after - qa.deadline_ns));

	if (!et) {
		/* level: still readable while the event is queued */
		ASSERT_EQ(1, epoll_wait(ep, out, 4, 0));
	} else {
		/* edge: reported once; a new expiry is a new edge */
		ASSERT_EQ(0, epoll_wait(ep, out, 4, 100));
		ASSERT_EQ(0, tw_arm1(fd, 0xe0b0ULL, 30 * MS, 2, 0));
		ASSERT_EQ(0, query(fd, 0xe0b0ULL, &qb));
		n = epoll_wait(ep, out, 4, 20000);
		after = now_ns();
		ASSERT_EQ(1, n);
		ASSERT_TRUE(!!(out[0].events & EPOLLIN));
		ASSERT_GE(after, qb.deadline_ns);
		want = 2;
	}
	rr = read(fd, ev, sizeof(ev));
	after = now_ns();
	ASSERT_EQ((ssize_t)(want * sizeof(ev[0])), rr);
	for (i = 0; i < want; i++)
		check_event(_metadata, &ev[i], after);
	ASSERT_EQ(0xe0a0ULL, ev[0].id);
	if (et)
		ASSERT_EQ(0xe0b0ULL, ev[1].id);

	/* drained, only far ids left: no wake-up */
	ASSERT_EQ(0, epoll_wait(ep, out, 4, 100));
	ASSERT_EQ(0, cancel_n(fd, far, 2, &done));
	ASSERT_EQ(2ULL, (unsigned long long)done);
	close(ep);
}

TEST_F_TIMEOUT(tw, epoll_level, 30)
{
	NEED_DEV();
	epoll_case(_metadata, self->fd, false);
}

TEST_F_TIMEOUT(tw, epoll_edge, 30)
{
	NEED_DEV();
	epoll_case(_metadata, self->fd, true);
}

/* ------------------------------------------------------ fork_shared_wheel */

/* Reads @n events in a child: 0 if they are exactly ids[], data[], dl[]. */
static int child_read(int fd, const uint64_t *ids, const uint64_t *data,
		      const uint64_t *dl, unsigned int n)
{
	struct twheel_event ev[16];
	bool seen[16] = { false };
	unsigned int got = 0, i, k;

	while (got < n) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t rr;
		uint64_t after;

		if (poll(&p, 1, 20000) != 1)
			return 20;
		rr = read(fd, ev, sizeof(ev));
		after = now_ns();
		if (rr <= 0 || rr % sizeof(ev[0]))
			return 21;
		for (k = 0; k < rr / sizeof(ev[0]); k++) {
			for (i = 0; i < n && ids[i] != ev[k].id; i++)
				;
			if (i == n || seen[i])
				return 22;
			seen[i] = true;
			if (ev[k].data != data[i] || ev[k].deadline_ns != dl[i])
				return 23;
			if (ev[k].expired_ns < ev[k].deadline_ns || after < ev[k].deadline_ns)
				return 24;	/* early */
			got++;
		}
	}
	return 0;
}

TEST_F_TIMEOUT(tw, fork_shared_wheel, 30)
{
	enum { NA = 8, NT = 4, NP = 8 };
	uint64_t ids[NP], data[NP], dl[NP], done;
	struct want w[NA + NT + 1] = { { 0 } };
	struct twheel_arm e[NP];
	struct twheel_query q;
	struct twheel_stats st;
	unsigned int i;
	int status;
	pid_t pid;

	NEED_DEV();
	ASSERT_EQ(0, config_set(self->fd, 0, 30 * MS, 0));	/* touch timeout */
	/* an id of the parent's that the child will touch */
	ASSERT_EQ(0, tw_arm1(self->fd, 0xf0f0ULL, 3600 * SEC, 0xabcULL, 0));

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct twheel_arm ce[NA];
		uint64_t t[NT + 1];

		memset(ce, 0, sizeof(ce));
		for (i = 0; i < NA; i++) {
			ce[i].id = 0xf000ULL + i;
			ce[i].timeout_ns = (20 + i) * MS;
			ce[i].data = 0xc0de0000ULL + i;
		}
		if (arm_n(self->fd, ce, NA, &done) || done != NA)
			_exit(10);
		for (i = 0; i < NT; i++)
			t[i] = 0xf100ULL + i;
		t[NT] = 0xf0f0ULL;
		if (write(self->fd, t, sizeof(t)) != (ssize_t)sizeof(t))
			_exit(11);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child 1 status %#x", status);

	/* the parent sees what the child did, and reads its events */
	for (i = 0; i < NA + NT + 1; i++) {
		w[i].id = i < NA ? 0xf000ULL + i : i < NA + NT ? 0xf100ULL + i - NA : 0xf0f0ULL;
		w[i].data = i < NA ? 0xc0de0000ULL + i : i < NA + NT ? 0 : 0xabcULL;
		ASSERT_EQ(0, query(self->fd, w[i].id, &q)) TH_LOG("id %#llx", U(w[i].id));
		ASSERT_EQ(w[i].data, q.data);
		ASSERT_LT(q.deadline_ns, now_ns() + 1 * SEC);	/* the touch moved 0xf0f0 */
		w[i].deadline = q.deadline_ns;
	}
	read_want(_metadata, self->fd, w, NA + NT + 1, NULL, NULL);

	/* the parent arms, a child reads */
	memset(e, 0, sizeof(e));
	for (i = 0; i < NP; i++) {
		e[i].id = 0xf200ULL + i;
		e[i].timeout_ns = (30 + 3 * i) * MS;
		e[i].data = 0xbeef0000ULL + i;
		ids[i] = e[i].id;
		data[i] = e[i].data;
	}
	ASSERT_EQ(0, arm_n(self->fd, e, NP, &done));
	for (i = 0; i < NP; i++) {
		ASSERT_EQ(0, query(self->fd, ids[i], &q));
		dl[i] = q.deadline_ns;
	}
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		alarm(20);
		_exit(child_read(self->fd, ids, data, dl, NP));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child 2 status %#x (20 timeout, 22 wrong id, 23 wrong data/deadline, 24 early)",
		       status);
	ASSERT_EQ(0, readable(self->fd, 0));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	ASSERT_EQ((uint64_t)(NA + NT + 1 + NP), st.delivered);
	ASSERT_EQ(0ULL, st.armed);
	ASSERT_EQ(0ULL, st.pending);
}

/* --------------------------------------------------------- threads_one_fd */

#define TH_WORKERS	4
#define TH_RANGE	16
#define TH_MAX_EV	(1 << 18)

struct th_ev {
	struct twheel_event ev;
	uint64_t after;
};

struct th_shared {
	int fd;
	int stop_workers;
	int stop_reader;
	uint64_t seed;
	pthread_mutex_t lock;
	unsigned int nerr;
	char err[256];
	struct th_ev *evs;
	size_t nev;
	bool overflow;
	uint64_t ops[TH_WORKERS][4];
};

struct th_worker {
	struct th_shared *s;
	unsigned int w;
};

static uint64_t th_id(unsigned int w, unsigned int k)
{
	return ((uint64_t)(w + 1) << 56) | 0x1d000000ULL | k;
}

static void th_fail(struct th_shared *s, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&s->lock);
	if (!s->nerr++) {
		va_start(ap, fmt);
		vsnprintf(s->err, sizeof(s->err), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&s->lock);
}

static void *th_worker_fn(void *p)
{
	struct th_worker *wk = p;
	struct th_shared *s = wk->s;
	unsigned int w = wk->w;
	struct rng r = { .s = s->seed ^ ((uint64_t)(w + 1) * 0xa24baed4963ee407ULL) };
	uint64_t seq = 0;

	while (!__atomic_load_n(&s->stop_workers, __ATOMIC_RELAXED)) {
		unsigned int op = (unsigned int)rng_range(&r, 0, 99);
		unsigned int n = (unsigned int)rng_range(&r, 1, 4), i;
		struct twheel_arm e[4];
		struct twheel_query q;
		uint64_t ids[4], done;
		int err;

		for (i = 0; i < n; i++)
			ids[i] = th_id(w, (unsigned int)rng_range(&r, 0, TH_RANGE - 1));
		if (op < 40) {
			memset(e, 0, sizeof(e));
			for (i = 0; i < n; i++) {
				e[i].id = ids[i];
				e[i].timeout_ns = rng_range(&r, 5 * MS, 50 * MS);
				e[i].data = ((uint64_t)(w + 1) << 48) | ++seq;
			}
			err = arm_n(s->fd, e, n, &done);
			if (err || done != n)
				th_fail(s, "worker %u: ARM: %d done %llu", w, err, U(done));
			s->ops[w][0]++;
		} else if (op < 75) {
			ssize_t rr = write(s->fd, ids, n * sizeof(ids[0]));

			if (rr != (ssize_t)(n * sizeof(ids[0])))
				th_fail(s, "worker %u: write %zd: %s", w, rr, strerror(errno));
			s->ops[w][1]++;
		} else if (op < 90) {
			err = cancel_n(s->fd, ids, n, &done);
			if (err || done > n)
				th_fail(s, "worker %u: CANCEL: %d done %llu", w, err, U(done));
			s->ops[w][2]++;
		} else {
			err = query(s->fd, ids[0], &q);
			if (err && err != -ENOENT)
				th_fail(s, "worker %u: QUERY: %d", w, err);
			if (!err && (q.reserved || (q.state != TWHEEL_STATE_ARMED &&
						    q.state != TWHEEL_STATE_EXPIRED) ||
				     (q.data && (q.data >> 48) != w + 1)))
				th_fail(s, "worker %u: QUERY %#llx: state %u data %#llx",
					w, U(ids[0]), q.state, U(q.data));
			s->ops[w][3]++;
		}
		if (rng_pct(&r, 70))
			usleep((useconds_t)rng_range(&r, 0, 3000));
	}
	return NULL;
}

/* Reads whatever is queued into s->evs; returns how many, -1 on error. */
static int th_drain(struct th_shared *s)
{
	struct twheel_event ev[64];
	ssize_t rr = read(s->fd, ev, sizeof(ev));
	uint64_t after = now_ns();
	size_t i;

	if (rr < 0)
		return errno == EAGAIN ? 0 : -1;
	for (i = 0; i < (size_t)rr / sizeof(ev[0]); i++) {
		if (s->nev == TH_MAX_EV) {
			s->overflow = true;
			break;
		}
		s->evs[s->nev].ev = ev[i];
		s->evs[s->nev++].after = after;
	}
	return (int)(rr / sizeof(ev[0]));
}

static void *th_reader_fn(void *p)
{
	struct th_shared *s = p;

	while (!__atomic_load_n(&s->stop_reader, __ATOMIC_RELAXED)) {
		struct pollfd pf = { .fd = s->fd, .events = POLLIN };

		if (poll(&pf, 1, 10) < 0 || th_drain(s) < 0) {
			th_fail(s, "reader: %s", strerror(errno));
			break;
		}
	}
	return NULL;
}

static int cmp_id_dl(const void *a, const void *b)
{
	const struct twheel_event *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->deadline_ns < y->deadline_ns ? -1 : x->deadline_ns > y->deadline_ns;
}

TEST_F_TIMEOUT(tw, threads_one_fd, 60)
{
	struct th_shared s = { .fd = self->fd, .seed = time_seed() };
	struct th_worker wk[TH_WORKERS];
	pthread_t tw[TH_WORKERS], tr;
	struct twheel_event *sorted;
	uint64_t *late[TH_WORKERS], *datas, t, now;
	size_t nlate[TH_WORKERS] = { 0 }, nd = 0, i;
	struct twheel_stats st;
	unsigned int w, k;
	char buf[128];

	NEED_DEV();
	TH_LOG("seed %#llx", U(s.seed));
	ASSERT_EQ(0, set_nonblock(self->fd, 1));
	ASSERT_EQ(0, config_set(self->fd, 0, 20 * MS, 0));	/* touch timeout */
	pthread_mutex_init(&s.lock, NULL);
	s.evs = calloc(TH_MAX_EV, sizeof(*s.evs));
	ASSERT_TRUE(s.evs != NULL);

	ASSERT_EQ(0, pthread_create(&tr, NULL, th_reader_fn, &s));
	for (w = 0; w < TH_WORKERS; w++) {
		wk[w].s = &s;
		wk[w].w = w;
		ASSERT_EQ(0, pthread_create(&tw[w], NULL, th_worker_fn, &wk[w]));
	}
	sleep_ns(2 * SEC);
	__atomic_store_n(&s.stop_workers, 1, __ATOMIC_RELAXED);
	for (w = 0; w < TH_WORKERS; w++)
		pthread_join(tw[w], NULL);

	/* past every deadline (<= 50 ms away), then until all is read */
	sleep_ns(100 * MS);
	t = now_ns();
	do {
		ASSERT_EQ(0, get_stats(self->fd, &st));
		if (!st.armed && !st.pending)
			break;
		sleep_ns(20 * MS);
	} while (now_ns() - t < 5 * SEC);
	__atomic_store_n(&s.stop_reader, 1, __ATOMIC_RELAXED);
	pthread_join(tr, NULL);
	while (th_drain(&s) > 0)
		;
	ASSERT_EQ(0U, s.nerr) TH_LOG("%u errors, first: %s", s.nerr, s.err);
	ASSERT_FALSE(s.overflow);

	/* final states: nothing left, in particular nothing overdue */
	now = now_ns();
	for (w = 0; w < TH_WORKERS; w++) {
		for (k = 0; k < TH_RANGE; k++) {
			struct twheel_query q;
			int err = query(self->fd, th_id(w, k), &q);

			ASSERT_EQ(-ENOENT, err)
				TH_LOG("id %#llx still present: state %u deadline %.3f ms ago",
				       U(th_id(w, k)), q.state,
				       ms_of(now - q.deadline_ns));
		}
	}

	sorted = calloc(s.nev + 1, sizeof(*sorted));
	datas = calloc(s.nev + 1, sizeof(*datas));
	ASSERT_TRUE(sorted && datas);
	for (w = 0; w < TH_WORKERS; w++) {
		late[w] = calloc(s.nev + 1, sizeof(uint64_t));
		ASSERT_TRUE(late[w] != NULL);
	}
	for (i = 0; i < s.nev; i++) {
		const struct twheel_event *x = &s.evs[i].ev;
		unsigned int o = (unsigned int)(x->id >> 56) - 1;

		ASSERT_LT(o, (unsigned int)TH_WORKERS) TH_LOG("foreign id %#llx", U(x->id));
		ASSERT_EQ(th_id(o, 0), x->id & ~0xffffULL);
		ASSERT_LT(x->id & 0xffff, (uint64_t)TH_RANGE);
		ASSERT_TRUE(!x->data || (x->data >> 48) == o + 1)
			TH_LOG("id %#llx carries data %#llx of another thread",
			       U(x->id), U(x->data));
		check_event(_metadata, x, s.evs[i].after);
		late[o][nlate[o]++] = x->expired_ns - x->deadline_ns;
		sorted[i] = *x;
		if (x->data)
			datas[nd++] = x->data;
	}
	/* exactly once: per (id, deadline), and per ARM (its unique data) */
	qsort(sorted, s.nev, sizeof(*sorted), cmp_id_dl);
	for (i = 1; i < s.nev; i++)
		ASSERT_FALSE(sorted[i].id == sorted[i - 1].id &&
			     sorted[i].deadline_ns == sorted[i - 1].deadline_ns)
			TH_LOG("id %#llx deadline %llu delivered twice",
			       U(sorted[i].id), U(sorted[i].deadline_ns));
	qsort(datas, nd, sizeof(*datas), cmp_u64);
	for (i = 1; i < nd; i++)
		ASSERT_NE(datas[i], datas[i - 1])
			TH_LOG("the ARM with data %#llx was delivered twice", U(datas[i]));

	ASSERT_EQ(0, get_stats(self->fd, &st));
	ASSERT_EQ(0ULL, st.armed);
	ASSERT_EQ(0ULL, st.pending);
	ASSERT_EQ((uint64_t)s.nev, st.delivered);
	ASSERT_EQ(st.expirations, st.delivered + st.discarded);
	for (w = 0; w < TH_WORKERS; w++) {
		TH_LOG("thread %u: %llu arms %llu touches %llu cancels %llu queries; lateness %s",
		       w, U(s.ops[w][0]), U(s.ops[w][1]), U(s.ops[w][2]),
		       U(s.ops[w][3]), late_str(buf, sizeof(buf), late[w], nlate[w]));
		free(late[w]);
	}
	TH_LOG("%zu events, %llu discarded, timer_fires %llu, hold_max %.3f ms",
	       s.nev, U(st.discarded), U(st.timer_fires), ms_of(st.hold_max_ns));
	free(sorted);
	free(datas);
	free(s.evs);
}

/* -------------------------------------------------------- close_while_due */

struct cwd_arg {
	int fd;
	int timeout_ms;
	bool do_read;
};

static void *cwd_poll_fn(void *p)
{
	struct cwd_arg *a = p;
	struct pollfd pf = { .fd = a->fd, .events = POLLIN };
	struct twheel_event ev[8];

	if (poll(&pf, 1, a->timeout_ms) == 1 && (pf.revents & POLLIN) && a->do_read)
		(void)!read(a->fd, ev, sizeof(ev));
	return NULL;
}

TEST_F_TIMEOUT(tw, close_while_due, 120)
{
	enum { ITERS = 300, NMAX = 2000 };
	struct rng r = { .s = time_seed() };
	uint64_t seed = r.s, ids_total = 0, t0 = now_ns(), done;
	unsigned int it, modes[4] = { 0 };
	struct twheel_arm *e;

	NEED_DEV();
	TH_LOG("seed %#llx", U(seed));
	e = calloc(NMAX, sizeof(*e));
	ASSERT_TRUE(e != NULL);
	for (it = 0; it < ITERS; it++) {
		unsigned int n = (unsigned int)rng_range(&r, 1, 50), mode, i;
		struct cwd_arg a = { .fd = -1 };
		pthread_t th;
		int fd;

		if (rng_pct(&r, 5))
			n = NMAX;	/* the expiry work needs several batches */
		fd = open_wheel(0);
		ASSERT_GE(fd, 0);
		if (rng_pct(&r, 25))
			ASSERT_EQ(0, config_set(fd, TWHEEL_TICK_MIN_NS, 0, 0));
		memset(e, 0, n * sizeof(*e));
		for (i = 0; i < n; i++) {
			e[i].id = rng_next(&r);
			e[i].data = i;
			/* timeout 0 would mean the 30 s default: start at 1 ns */
			e[i].timeout_ns = rng_range(&r, 1, 2 * MS);
			if (rng_pct(&r, 10)) {
				e[i].timeout_ns = 1;	/* long past: queued at once */
				e[i].flags = TWHEEL_ARM_ABSTIME;
			}
		}
		ASSERT_EQ(0, arm_n(fd, e, n, &done));
		ASSERT_EQ((uint64_t)n, done);
		ids_total += n;
		mode = (unsigned int)rng_range(&r, 0, 3);
		modes[mode]++;
		if (mode == 1 || mode == 2) {
			/* a thread blocked in poll() on a dup; closed after it returns */
			a.fd = dup(fd);
			ASSERT_GE(a.fd, 0);
			a.timeout_ms = mode == 1 ? (int)rng_range(&r, 0, 3) : 2000;
			a.do_read = rng_pct(&r, 50);
			ASSERT_EQ(0, pthread_create(&th, NULL, cwd_poll_fn, &a));
		}
		if (mode == 3 && readable(fd, 0) == 1) {
			struct twheel_event ev[4];

			ASSERT_GT(read(fd, ev, sizeof(ev)), 0);
		}
		if (mode != 3)
			usleep((useconds_t)rng_range(&r, 0, 2000));
		close(fd);
		if (a.fd >= 0) {
			pthread_join(th, NULL);
			close(a.fd);
		}
	}
	TH_LOG("%u opens, %llu ids, modes %u/%u/%u/%u, %.3f s",
	       ITERS, U(ids_total), modes[0], modes[1], modes[2], modes[3],
	       (double)(now_ns() - t0) / 1e9);
	free(e);
}

/* ---------------------------------------------------- two_fds_independent */

TEST_F_TIMEOUT(tw, two_fds_independent, 30)
{
	enum { N = 8 };
	struct twheel_arm ea[N], eb[N];
	struct twheel_event ev[N + 1];
	struct twheel_stats st;
	struct twheel_query q;
	struct want w[N];
	uint64_t done, fires_b;
	unsigned int i;
	int fb;

	NEED_DEV();
	fb = open_wheel(0);
	ASSERT_GE(fb, 0);
	ASSERT_EQ(0, set_nonblock(fb, 1));
	memset(ea, 0, sizeof(ea));
	memset(eb, 0, sizeof(eb));
	for (i = 0; i < N; i++) {
		/* the same ids on both fds: near on A, far on B */
		ea[i].id = eb[i].id = 0x2fd0000000000000ULL + i;
		ea[i].timeout_ns = (20 + 2 * i) * MS;
		ea[i].data = 0xaaaa0000ULL + i;
		eb[i].timeout_ns = 3600 * SEC;
		eb[i].data = 0xbbbb0000ULL + i;
	}
	ASSERT_EQ(0, arm_n(self->fd, ea, N, &done));
	ASSERT_EQ(0, arm_n(fb, eb, N, &done));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, query(self->fd, ea[i].id, &q));
		w[i] = (struct want){ ea[i].id, ea[i].data, q.deadline_ns, false };
	}
	read_want(_metadata, self->fd, w, N, NULL, NULL);
	/* B saw none of it */
	ASSERT_EQ(0, readable(fb, 0));
	ASSERT_EQ(-1, read(fb, ev, sizeof(ev)));
	ASSERT_EQ(EAGAIN, errno);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, query(fb, eb[i].id, &q));
		ASSERT_EQ((uint32_t)TWHEEL_STATE_ARMED, q.state);
		ASSERT_EQ(eb[i].data, q.data);
		ASSERT_GT(q.deadline_ns, now_ns() + 3500 * SEC);
	}
	ASSERT_EQ(0, get_stats(fb, &st));
	ASSERT_EQ(0ULL, st.expirations);
	ASSERT_EQ(0ULL, st.timer_fires);
	ASSERT_EQ((uint64_t)N, st.armed);
	fires_b = st.timer_fires;

	/* and the other way round: B's expiries don't show on A */
	ASSERT_EQ(0, set_nonblock(self->fd, 1));
	ASSERT_EQ(0, tw_arm1(fb, 0x2fd0000000000100ULL, 30 * MS, 0xb0, 0));
	ASSERT_EQ(1, readable(fb, 20000));
	ASSERT_EQ((ssize_t)sizeof(ev[0]), read(fb, ev, sizeof(ev)));
	ASSERT_EQ(0x2fd0000000000100ULL, ev[0].id);
	check_event(_metadata, &ev[0], now_ns());
	ASSERT_EQ(0, readable(self->fd, 0));
	ASSERT_EQ(-1, read(self->fd, ev, sizeof(ev)));
	ASSERT_EQ(EAGAIN, errno);
	ASSERT_EQ(-ENOENT, query(self->fd, 0x2fd0000000000100ULL, &q));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	ASSERT_EQ((uint64_t)N, st.expirations);
	ASSERT_EQ((uint64_t)N, st.delivered);
	ASSERT_EQ(0, get_stats(fb, &st));
	ASSERT_EQ(1ULL, st.expirations);
	TH_LOG("fd B timer_fires %llu -> %llu for its one near id",
	       U(fires_b), U(st.timer_fires));
	close(fb);
}

TEST_HARNESS_MAIN
