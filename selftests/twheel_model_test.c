// SPDX-License-Identifier: GPL-2.0
/*
 * twheel model tests: a user-space model of every id checked against the
 * module through random operations (exactly once, never early, no stale
 * generation), and DUMP checked for exactly-once listing and for
 * checkpoint/restore, also while the id index is resized under it.
 *
 * Environment: TWHEEL_SEED overrides the PRNG seed (printed with TH_LOG).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

/* kselftest_harness.h (6.1) has unused parameters in its own macros */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "twheel_test.h"

/* ------------------------------------------------------------ helpers */

/* One DUMP call; returns 0 or -errno, fills *done and advances *cursor. */
static int dump_call(int fd, struct twheel_arm *out, uint64_t count,
		     uint64_t *cursor, uint64_t *done)
{
	struct twheel_dump d;

	memset(&d, 0, sizeof(d));
	d.ptr = (uintptr_t)out;
	d.count = count;
	d.cursor = *cursor;
	d.done = ~0ULL;
	if (ioctl(fd, TWHEEL_IOC_DUMP, &d))
		return -errno;
	*cursor = d.cursor;
	*done = d.done;
	return 0;
}

/* Touch ids[0..n) through write() in batches of at most 1024; 0 or -errno. */
static int touch_all(int fd, const uint64_t *ids, size_t n)
{
	size_t i = 0;

	while (i < n) {
		size_t k = n - i > 1024 ? 1024 : n - i;
		ssize_t r = write(fd, ids + i, k * sizeof(*ids));

		if (r < 0)
			return -errno;
		if ((size_t)r != k * sizeof(*ids))
			return -EIO;
		i += k;
	}
	return 0;
}

FIXTURE(twheel) {
	int unused;
};

FIXTURE_SETUP(twheel)
{
	self->unused = 0;
}

FIXTURE_TEARDOWN(twheel)
{
}

/* Fills ids[0..n) with distinct ids, 0 and ~0 first, the rest random. */
static int make_ids(struct idmap *m, struct rng *r, uint64_t *ids, uint32_t n)
{
	uint32_t i;

	if (idmap_init(m, n))
		return -1;
	for (i = 0; i < n; i++) {
		uint64_t id;

		do {
			if (i == 0)
				id = 0;
			else if (i == 1)
				id = ~0ULL;
			else if (i < 64)
				id = i;	/* a few small sequential ids */
			else
				id = rng_next(r);
		} while (!idmap_put(m, id, i));
		ids[i] = id;
	}
	return 0;
}

/* ------------------------------------------------ exactly_once_model */

#define M_IDS		3000
#define M_RUN_NS	(3 * SEC)
#define M_TMIN		(5 * MS)
#define M_TMAX		(300 * MS)
#define M_MAXEV		64
#define M_LATE_SANE	(30 * SEC)	/* sanity: a busy host stalls a TCG guest */

/* What the model knows about one id. */
struct mid {
	uint64_t deadline;	/* as reported by QUERY after the last op */
	uint64_t data;
	uint64_t lo, hi;	/* bounds of the deadline set by the last op */
	uint64_t rel;		/* relative timeout of the last op, 0: ABSTIME */
	uint32_t stamp;		/* op number of the last op that set it */
	uint8_t present;	/* armed or expired-unread (only read() removes) */
	uint8_t wheel;		/* deadline was in the future at the op */
	uint8_t must_expire;	/* ABSTIME <= now at the op: queued at once */
};

struct model {
	uint32_t n;
	uint64_t *ids;
	struct idmap map;
	struct mid *m;
	uint32_t op;
	uint64_t timeout;	/* the fd's timeout_ns */
	uint64_t touches, arms, cancels, delivered, nr_present;
	uint64_t max_wheel_read;	/* largest deadline of a wheel event read */
	uint64_t late_max, late_sum, late_n;
	uint64_t eagain, reads;
	uint32_t *list;		/* indices an op set, to QUERY after it */
	uint32_t nlist;
};

static void mark(struct model *md, uint32_t idx)
{
	if (md->m[idx].stamp != md->op) {
		md->m[idx].stamp = md->op;
		md->list[md->nlist++] = idx;
	}
}

/* QUERY every id the last op set and record its exact deadline. */
static void check_after_op(struct __test_metadata *_metadata, int fd,
			   struct model *md)
{
	uint32_t i;

	for (i = 0; i < md->nlist; i++) {
		struct mid *m = &md->m[md->list[i]];
		uint64_t id = md->ids[md->list[i]];
		struct twheel_query q;
		uint64_t t;

		ASSERT_EQ(0, query(fd, id, &q)) TH_LOG("id %#" PRIx64, id);
		t = now_ns();
		ASSERT_EQ(0U, q.reserved);
		ASSERT_EQ(id, q.id);
		ASSERT_EQ(m->data, q.data) TH_LOG("id %#" PRIx64, id);
		ASSERT_LE(m->lo, q.deadline_ns) TH_LOG("id %#" PRIx64, id);
		ASSERT_GE(m->hi, q.deadline_ns) TH_LOG("id %#" PRIx64, id);
		ASSERT_TRUE(q.state == TWHEEL_STATE_ARMED ||
			    q.state == TWHEEL_STATE_EXPIRED);
		if (m->must_expire) {
			ASSERT_EQ((__u32)TWHEEL_STATE_EXPIRED, q.state)
				TH_LOG("ABSTIME in the past not queued at once");
		}
		if (q.state == TWHEEL_STATE_EXPIRED) {
			ASSERT_LE(q.deadline_ns, t) TH_LOG("expired early");
		}
		m->deadline = q.deadline_ns;
	}
	md->nlist = 0;
}

/* Validate one event against the model and retire its generation. */
static void check_event(struct __test_metadata *_metadata, struct model *md,
			const struct twheel_event *ev, uint64_t t_after)
{
	int64_t idx = idmap_get(&md->map, ev->id);
	struct mid *m;

	ASSERT_LE(0, idx) TH_LOG("event for unknown id %#" PRIx64, (uint64_t)ev->id);
	m = &md->m[idx];
	ASSERT_TRUE(m->present)
		TH_LOG("event for absent id %#" PRIx64 " (duplicate or stale)",
		       (uint64_t)ev->id);
	ASSERT_EQ(m->deadline, ev->deadline_ns)
		TH_LOG("stale generation of id %#" PRIx64 ": %" PRIu64
		       " (model %" PRIu64 ")", (uint64_t)ev->id,
		       (uint64_t)ev->deadline_ns, m->deadline);
	ASSERT_EQ(m->data, ev->data) TH_LOG("id %#" PRIx64, (uint64_t)ev->id);
	ASSERT_LE(ev->deadline_ns, ev->expired_ns) TH_LOG("early (expired_ns)");
	ASSERT_LE(ev->deadline_ns, t_after) TH_LOG("early (clock after read)");
	if (m->wheel) {
		uint64_t late = ev->expired_ns - ev->deadline_ns;

		/* no event after one whose deadline is > 1 tick later */
		ASSERT_LE(md->max_wheel_read, ev->deadline_ns + 1 * MS)
			TH_LOG("order: id %#" PRIx64 " deadline %" PRIu64
			       " read after a deadline of %" PRIu64,
			       (uint64_t)ev->id, (uint64_t)ev->deadline_ns,
			       md->max_wheel_read);
		if (ev->deadline_ns > md->max_wheel_read)
			md->max_wheel_read = ev->deadline_ns;
		if (late > md->late_max)
			md->late_max = late;
		md->late_sum += late;
		md->late_n++;
		ASSERT_GT(M_LATE_SANE, late) TH_LOG("absurdly late");
	}
	m->present = 0;
	md->nr_present--;
	md->delivered++;
}

/* One nonblocking read of up to maxev events; returns how many. */
static int read_some(struct __test_metadata *_metadata, int fd,
		     struct model *md, unsigned int maxev, size_t extra)
{
	struct twheel_event ev[M_MAXEV];
	ssize_t r;
	uint64_t t;
	int i, n;

	r = read(fd, ev, maxev * sizeof(ev[0]) + extra);
	t = now_ns();
	md->reads++;
	if (r < 0) {
		ASSERT_EQ(EAGAIN, errno);
		md->eagain++;
		return 0;
	}
	ASSERT_EQ(0, r % (ssize_t)sizeof(ev[0]));
	n = (int)(r / (ssize_t)sizeof(ev[0]));
	ASSERT_LT(0, n);
	ASSERT_GE((int)maxev, n);
	for (i = 0; i < n; i++)
		check_event(_metadata, md, &ev[i], t);
	return n;
}

static void check_stats(struct __test_metadata *_metadata, int fd,
			struct model *md)
{
	struct twheel_stats st;

	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(md->nr_present, st.armed + st.pending);
	ASSERT_EQ(md->touches, st.touches);
	ASSERT_EQ(md->arms, st.arms);
	ASSERT_EQ(md->cancels, st.cancels);
	ASSERT_EQ(md->delivered, st.delivered);
	ASSERT_EQ(st.expirations, st.delivered + st.discarded + st.pending);
}

static void op_touch(struct __test_metadata *_metadata, int fd,
		     struct model *md, struct rng *r)
{
	uint64_t ids[64], t0, t1;
	unsigned int k = (unsigned int)rng_range(r, 1, 64), j;
	ssize_t w;

	for (j = 0; j < k; j++)
		ids[j] = md->ids[rng_range(r, 0, md->n - 1)];
	t0 = now_ns();
	w = write(fd, ids, k * sizeof(ids[0]));
	t1 = now_ns();
	ASSERT_EQ((ssize_t)(k * sizeof(ids[0])), w) TH_LOG("write: %s", strerror(errno));
	md->touches += k;
	for (j = 0; j < k; j++) {
		uint32_t idx = (uint32_t)idmap_get(&md->map, ids[j]);
		struct mid *m = &md->m[idx];

		if (!m->present) {
			m->present = 1;
			m->data = 0;
			md->nr_present++;
		}
		m->lo = t0 + md->timeout;
		m->hi = t1 + md->timeout;
		m->wheel = 1;
		m->must_expire = 0;
		mark(md, idx);
	}
	check_after_op(_metadata, fd, md);
}

static void op_arm(struct __test_metadata *_metadata, int fd,
		   struct model *md, struct rng *r)
{
	struct twheel_arm e[32];
	uint32_t idx[32];
	unsigned int k = (unsigned int)rng_range(r, 1, 32), j, fail_at = k;
	uint64_t t0, t1, done, now = now_ns();
	int ret;

	memset(e, 0, sizeof(e));
	for (j = 0; j < k; j++) {
		unsigned int kind = (unsigned int)rng_range(r, 0, 99);

		idx[j] = (uint32_t)rng_range(r, 0, md->n - 1);
		e[j].id = md->ids[idx[j]];
		e[j].data = rng_pct(r, 10) ? 0 : rng_next(r);
		if (kind < 45) {		/* relative, sometimes the default */
			e[j].timeout_ns = rng_pct(r, 15) ? 0 :
					  rng_range(r, M_TMIN, M_TMAX);
		} else if (kind < 75) {		/* ABSTIME in the future */
			e[j].flags = TWHEEL_ARM_ABSTIME;
			e[j].timeout_ns = now + rng_range(r, M_TMIN, M_TMAX);
		} else {			/* ABSTIME in the past */
			e[j].flags = TWHEEL_ARM_ABSTIME;
			e[j].timeout_ns = rng_pct(r, 10) ? 1 :
					  now - rng_range(r, 0, 500 * MS);
		}
		if (rng_pct(r, 15))
			e[j].flags |= TWHEEL_ARM_NOREPLACE;
	}
	/* The first NOREPLACE entry whose id exists (maybe made by this batch) fails. */
	t0 = now_ns();
	for (j = 0; j < k; j++) {
		struct mid *m = &md->m[idx[j]];

		if ((e[j].flags & TWHEEL_ARM_NOREPLACE) && m->present) {
			fail_at = j;
			break;
		}
		if (!m->present) {
			m->present = 1;
			md->nr_present++;
		}
		m->data = e[j].data;
		m->rel = (e[j].flags & TWHEEL_ARM_ABSTIME) ? 0 :
			 (e[j].timeout_ns ? e[j].timeout_ns : md->timeout);
		m->lo = m->hi = e[j].timeout_ns;
		m->must_expire = !m->rel && e[j].timeout_ns <= t0;
		mark(md, idx[j]);
	}
	ret = arm_n(fd, e, k, &done);
	t1 = now_ns();
	if (fail_at < k) {
		ASSERT_EQ(-EEXIST, ret);
		ASSERT_EQ(fail_at, done);
	} else {
		ASSERT_EQ(0, ret) TH_LOG("ARM: %s", strerror(-ret));
		ASSERT_EQ(k, done);
	}
	md->arms += done;
	for (j = 0; j < md->nlist; j++) {
		struct mid *m = &md->m[md->list[j]];

		if (m->rel) {
			m->lo = t0 + m->rel;
			m->hi = t1 + m->rel;
			m->wheel = 1;
		} else {
			m->wheel = m->lo > t1;
		}
	}
	check_after_op(_metadata, fd, md);
}

static void op_cancel(struct __test_metadata *_metadata, int fd,
		      struct model *md, struct rng *r)
{
	uint64_t ids[32], expect = 0, done;
	unsigned int k = (unsigned int)rng_range(r, 1, 32), j;
	struct twheel_query q;

	for (j = 0; j < k; j++) {
		uint32_t idx = (uint32_t)rng_range(r, 0, md->n - 1);

		ids[j] = md->ids[idx];
		if (md->m[idx].present) {
			md->m[idx].present = 0;
			md->nr_present--;
			expect++;
		}
	}
	ASSERT_EQ(0, cancel_n(fd, ids, k, &done));
	ASSERT_EQ(expect, done);
	md->cancels += done;
	for (j = 0; j < k; j++)
		ASSERT_EQ(-ENOENT, query(fd, ids[j], &q));
}

static void op_query(struct __test_metadata *_metadata, int fd,
		     struct model *md, struct rng *r)
{
	uint32_t idx = (uint32_t)rng_range(r, 0, md->n - 1);
	struct mid *m = &md->m[idx];
	struct twheel_query q;
	int ret = query(fd, md->ids[idx], &q);
	uint64_t t = now_ns();

	if (!m->present) {
		ASSERT_EQ(-ENOENT, ret);
		return;
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(m->deadline, q.deadline_ns);
	ASSERT_EQ(m->data, q.data);
	if (q.state == TWHEEL_STATE_EXPIRED) {
		ASSERT_LE(q.deadline_ns, t) TH_LOG("expired early");
	} else {
		ASSERT_EQ((__u32)TWHEEL_STATE_ARMED, q.state);
	}
}

TEST_F_TIMEOUT(twheel, exactly_once_model, 180)
{
	uint64_t seed = get_seed(), t_end, maxd = 0, t_give_up, ops = 0;
	struct twheel_stats st;
	struct twheel_query q;
	struct model md;
	struct rng r;
	uint32_t i;
	int fd;

	OPEN_OR_SKIP(fd, O_NONBLOCK);
	TH_LOG("seed %#" PRIx64 " (set TWHEEL_SEED to override)", seed);
	r.s = seed;
	memset(&md, 0, sizeof(md));
	md.n = M_IDS;
	md.ids = calloc(md.n, sizeof(*md.ids));
	md.m = calloc(md.n, sizeof(*md.m));
	md.list = calloc(128, sizeof(*md.list));
	ASSERT_TRUE(md.ids && md.m && md.list);
	ASSERT_EQ(0, make_ids(&md.map, &r, md.ids, md.n));
	for (i = 0; i < md.n; i++)
		md.m[i].stamp = ~0U;
	md.timeout = 50 * MS;
	ASSERT_EQ(0, set_timeout(fd, md.timeout));

	t_end = now_ns() + M_RUN_NS;
	while (now_ns() < t_end) {
		unsigned int c = (unsigned int)rng_range(&r, 0, 99);

		md.op++;
		ops++;
		if (c < 26) {
			op_touch(_metadata, fd, &md, &r);
		} else if (c < 52) {
			op_arm(_metadata, fd, &md, &r);
		} else if (c < 62) {
			op_cancel(_metadata, fd, &md, &r);
		} else if (c < 90) {
			read_some(_metadata, fd, &md,
				  (unsigned int)rng_range(&r, 1, M_MAXEV),
				  rng_pct(&r, 20) ? (size_t)rng_range(&r, 1, 31) : 0);
		} else if (c < 96) {
			op_query(_metadata, fd, &md, &r);
		} else if (c < 98) {
			check_stats(_metadata, fd, &md);
		} else {
			md.timeout = rng_range(&r, M_TMIN, M_TMAX);
			ASSERT_EQ(0, set_timeout(fd, md.timeout));
		}
	}
	check_stats(_metadata, fd, &md);
	TH_LOG("%" PRIu64 " ops: %" PRIu64 " touches, %" PRIu64 " arms, %"
	       PRIu64 " cancels, %" PRIu64 " events read in %" PRIu64
	       " reads (%" PRIu64 " EAGAIN), %" PRIu64 " ids still held",
	       ops, md.touches, md.arms, md.cancels, md.delivered, md.reads,
	       md.eagain, md.nr_present);

	/* Wait past every deadline, then everything must come out once. */
	for (i = 0; i < md.n; i++)
		if (md.m[i].present && md.m[i].deadline > maxd)
			maxd = md.m[i].deadline;
	sleep_until(maxd + 20 * MS);
	t_give_up = maxd + 5 * SEC;
	while (md.nr_present) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (read_some(_metadata, fd, &md, M_MAXEV, 0))
			continue;
		ASSERT_GT(t_give_up, now_ns())
			TH_LOG("%" PRIu64 " ids never expired", md.nr_present);
		poll(&p, 1, 100);
	}
	/* nothing more: no duplicate, no stale event */
	{
		struct twheel_event ev;

		ASSERT_EQ(-1, read(fd, &ev, sizeof(ev)));
		ASSERT_EQ(EAGAIN, errno);
	}
	for (i = 0; i < md.n; i++)
		ASSERT_EQ(-ENOENT, query(fd, md.ids[i], &q))
			TH_LOG("id %#" PRIx64 " still present", md.ids[i]);
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(0ULL, st.armed);
	ASSERT_EQ(0ULL, st.pending);
	check_stats(_metadata, fd, &md);
	TH_LOG("stats: touches %" PRIu64 " arms %" PRIu64 " cancels %" PRIu64
	       " expirations %" PRIu64 " delivered %" PRIu64 " discarded %"
	       PRIu64 " timer_fires %" PRIu64 " reslots %" PRIu64,
	       (uint64_t)st.touches, (uint64_t)st.arms,
	       (uint64_t)st.cancels, (uint64_t)st.expirations,
	       (uint64_t)st.delivered, (uint64_t)st.discarded,
	       (uint64_t)st.timer_fires, (uint64_t)st.reslots);
	TH_LOG("lateness of wheel events: max %" PRIu64 " us, mean %" PRIu64
	       " us over %" PRIu64 "; module late_max_ns %" PRIu64,
	       md.late_max / 1000,
	       md.late_n ? md.late_sum / md.late_n / 1000 : 0, md.late_n,
	       (uint64_t)st.late_max_ns);
	idmap_free(&md.map);
	free(md.ids);
	free(md.m);
	free(md.list);
	close(fd);
}

/* ------------------------------------------------------------- DUMP */

/*
 * Dump the whole wheel with @count entries per call into out[] (room for
 * @max entries), checking per call that done <= count and that every id is
 * one of ids[] (via @map) and listed once.  Returns the number of entries.
 */
static uint64_t dump_all(struct __test_metadata *_metadata, int fd,
			 uint64_t count, const struct idmap *map, uint32_t n,
			 struct twheel_arm *out, uint64_t max)
{
	uint64_t *seen = bitmap_alloc(n), cursor = 0, total = 0, done, i;
	struct twheel_arm *buf = calloc(count, sizeof(*buf));

	ASSERT_TRUE(seen && buf);
	for (;;) {
		memset(buf, 0xa5, count * sizeof(*buf));
		ASSERT_EQ(0, dump_call(fd, buf, count, &cursor, &done))
			TH_LOG("DUMP count %" PRIu64 ": %s", count, strerror(errno));
		ASSERT_GE(count, done);
		if (!done)
			break;
		for (i = 0; i < done; i++) {
			int64_t idx = idmap_get(map, buf[i].id);

			ASSERT_LE(0, idx) TH_LOG("unknown id %#" PRIx64,
						 (uint64_t)buf[i].id);
			ASSERT_FALSE(bitmap_test_set(seen, (uint64_t)idx))
				TH_LOG("id %#" PRIx64 " listed twice",
				       (uint64_t)buf[i].id);
			ASSERT_EQ((__u32)TWHEEL_ARM_ABSTIME, buf[i].flags);
			ASSERT_EQ(0U, buf[i].reserved);
			ASSERT_GT(max, total) TH_LOG("dump does not end");
			out[total++] = buf[i];
		}
		/* the module never writes past count: the guard stays */
		if (done < count) {
			unsigned char *g = (unsigned char *)&buf[done];

			ASSERT_EQ(0xa5, g[0]);
		}
	}
	/* the end is sticky */
	done = 1;
	ASSERT_EQ(0, dump_call(fd, buf, count, &cursor, &done));
	ASSERT_EQ(0ULL, done);
	free(buf);
	free(seen);
	return total;
}

static void check_entry_eq_query(struct __test_metadata *_metadata, int fd,
				 const struct twheel_arm *e)
{
	struct twheel_query q;

	ASSERT_EQ(0, query(fd, e->id, &q)) TH_LOG("id %#" PRIx64, (uint64_t)e->id);
	ASSERT_EQ(q.deadline_ns, e->timeout_ns) TH_LOG("id %#" PRIx64, (uint64_t)e->id);
	ASSERT_EQ(q.data, e->data) TH_LOG("id %#" PRIx64, (uint64_t)e->id);
}

#define D_IDS	5000

static int cmp_arm_id(const void *a, const void *b)
{
	const struct twheel_arm *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

TEST_F_TIMEOUT(twheel, dump_restore, 120)
{
	uint64_t seed = get_seed() ^ 0xd0d0, now, nd1, nd2, nd3, done, i, narm = 0;
	struct twheel_arm *e, *d1, *d2, *d3;
	struct twheel_stats s1, s2;
	uint64_t *ids, *touch;
	uint32_t ntouch = 0, nexp = 0;
	struct idmap map;
	struct rng r = { .s = seed };
	int fd, fd2;

	OPEN_OR_SKIP(fd, O_NONBLOCK);
	fd2 = open_wheel(O_NONBLOCK);
	ASSERT_LE(0, fd2);
	TH_LOG("seed %#" PRIx64, seed);
	ids = calloc(D_IDS, sizeof(*ids));
	touch = calloc(D_IDS, sizeof(*touch));
	e = calloc(D_IDS, sizeof(*e));
	d1 = calloc(D_IDS, sizeof(*d1));
	d2 = calloc(D_IDS, sizeof(*d2));
	d3 = calloc(D_IDS, sizeof(*d3));
	ASSERT_TRUE(ids && touch && e && d1 && d2 && d3);
	ASSERT_EQ(0, make_ids(&map, &r, ids, D_IDS));

	/* touches get a one-hour default timeout */
	ASSERT_EQ(0, set_timeout(fd, 3600 * SEC));
	now = now_ns();
	for (i = 0; i < D_IDS; i++) {
		unsigned int kind = (unsigned int)rng_range(&r, 0, 99);
		struct twheel_arm *a = &e[narm];

		if (kind >= 80) {		/* touched: data 0, one hour */
			touch[ntouch++] = ids[i];
			continue;
		}
		memset(a, 0, sizeof(*a));
		a->id = ids[i];
		a->data = rng_next(&r);
		narm++;
		if (kind < 35) {		/* ABSTIME, 60 s .. 10 years away */
			a->flags = TWHEEL_ARM_ABSTIME;
			a->timeout_ns = now + rng_range(&r, 60 * SEC,
							10 * 365 * 86400 * SEC);
		} else if (kind < 60) {		/* relative, 60 s .. 1 year */
			a->timeout_ns = rng_range(&r, 60 * SEC, 365 * 86400 * SEC);
		} else if (kind < 75) {		/* ABSTIME in the past: EXPIRED */
			a->flags = TWHEEL_ARM_ABSTIME;
			a->timeout_ns = rng_range(&r, 1, now - 1);
			nexp++;
		} else if (kind < 78) {		/* the largest deadlines */
			a->flags = rng_pct(&r, 50) ? TWHEEL_ARM_ABSTIME : 0;
			a->timeout_ns = TWHEEL_DEADLINE_MAX - rng_range(&r, 0, 1);
		} else {			/* relative 0: the default */
			a->timeout_ns = 0;
		}
	}
	ASSERT_EQ(0, arm_n(fd, e, narm, &done));
	ASSERT_EQ(narm, done);
	ASSERT_EQ(0, touch_all(fd, touch, ntouch));
	TH_LOG("%" PRIu64 " ids armed (%u in the past), %u touched",
	       narm, nexp, ntouch);

	/* count 7, then 1000, then 1: the same entries, in the same order */
	nd1 = dump_all(_metadata, fd, 7, &map, D_IDS, d1, D_IDS);
	ASSERT_EQ((uint64_t)D_IDS, nd1);
	for (i = 0; i < nd1; i++)
		check_entry_eq_query(_metadata, fd, &d1[i]);
	nd2 = dump_all(_metadata, fd, 1000, &map, D_IDS, d2, D_IDS);
	ASSERT_EQ(nd1, nd2);
	ASSERT_EQ(0, memcmp(d1, d2, nd1 * sizeof(*d1)));
	nd3 = dump_all(_metadata, fd, 1, &map, D_IDS, d3, D_IDS);
	ASSERT_EQ(nd1, nd3);
	ASSERT_EQ(0, memcmp(d1, d3, nd1 * sizeof(*d1)));

	/* restore on a fresh fd */
	ASSERT_EQ(0, arm_n(fd2, d2, nd2, &done));
	ASSERT_EQ(nd2, done);
	for (i = 0; i < D_IDS; i++) {
		struct twheel_query q1, q2;

		ASSERT_EQ(0, query(fd, ids[i], &q1));
		ASSERT_EQ(0, query(fd2, ids[i], &q2));
		ASSERT_EQ(q1.state, q2.state) TH_LOG("id %#" PRIx64, ids[i]);
		ASSERT_EQ(q1.deadline_ns, q2.deadline_ns);
		ASSERT_EQ(q1.data, q2.data);
	}
	ASSERT_EQ(0, get_stats(fd, &s1));
	ASSERT_EQ(0, get_stats(fd2, &s2));
	ASSERT_EQ(s1.armed, s2.armed);
	ASSERT_EQ(s1.pending, s2.pending);
	ASSERT_EQ((uint64_t)nexp, s1.pending);
	ASSERT_EQ((uint64_t)D_IDS, s1.armed + s1.pending);
	TH_LOG("restored: armed %" PRIu64 " pending %" PRIu64 ", mem %" PRIu64
	       " / %" PRIu64 " bytes", (uint64_t)s2.armed, (uint64_t)s2.pending,
	       (uint64_t)s1.mem_bytes, (uint64_t)s2.mem_bytes);
	/*
	 * and the restored wheel dumps the same entries; in another order,
	 * as each fd keys its index with its own secret
	 */
	nd3 = dump_all(_metadata, fd2, 1000, &map, D_IDS, d3, D_IDS);
	ASSERT_EQ(nd2, nd3);
	qsort(d2, nd2, sizeof(*d2), cmp_arm_id);
	qsort(d3, nd3, sizeof(*d3), cmp_arm_id);
	ASSERT_EQ(0, memcmp(d2, d3, nd2 * sizeof(*d2)));

	idmap_free(&map);
	free(ids);
	free(touch);
	free(e);
	free(d1);
	free(d2);
	free(d3);
	close(fd2);
	close(fd);
}

#define C_STABLE	20000
#define C_SMALL		2000
#define C_BULK		150000
#define C_IDS		(C_STABLE + C_SMALL + C_BULK)
#define C_COUNT		13
#define C_BULK_STEP	3000

TEST_F_TIMEOUT(twheel, dump_exactly_once_under_churn, 240)
{
	uint64_t seed = get_seed() ^ 0xc4c4, cursor = 0, step = 0, *ids, *seen;
	uint64_t *dl, done, i, listed = 0, churn_listed = 0, mem_max = 0;
	uint64_t bulk_added = 0, bulk_cancelled = 0, bulk_full_step = 0;
	uint64_t nsmall = 0, n;
	struct twheel_arm buf[C_COUNT + 1], *out;
	uint8_t *small_present;
	struct twheel_stats st;
	struct twheel_query q;
	struct idmap map;
	struct rng r = { .s = seed };
	int fd;

	OPEN_OR_SKIP(fd, O_NONBLOCK);
	TH_LOG("seed %#" PRIx64, seed);
	ids = calloc(C_IDS, sizeof(*ids));
	dl = calloc(C_STABLE, sizeof(*dl));
	seen = bitmap_alloc(C_IDS);
	small_present = calloc(C_SMALL, 1);
	ASSERT_TRUE(ids && dl && seen && small_present);
	ASSERT_EQ(0, make_ids(&map, &r, ids, C_IDS));
	ASSERT_EQ(0, set_timeout(fd, 3600 * SEC));
	ASSERT_EQ(0, touch_all(fd, ids, C_STABLE));
	for (i = 0; i < C_SMALL; i += 2) {
		ASSERT_EQ(0, touch_all(fd, &ids[C_STABLE + i], 1));
		small_present[i] = 1;
		nsmall++;
	}
	ASSERT_EQ(0, get_stats(fd, &st));
	TH_LOG("start: %" PRIu64 " ids, mem %" PRIu64 " bytes",
	       (uint64_t)st.armed, (uint64_t)st.mem_bytes);

	for (;;) {
		uint64_t small[16], k;

		buf[C_COUNT].id = 0x5a5a5a5a5a5a5a5aULL;	/* guard */
		ASSERT_EQ(0, dump_call(fd, buf, C_COUNT, &cursor, &done));
		ASSERT_GE((uint64_t)C_COUNT, done);
		ASSERT_EQ(0x5a5a5a5a5a5a5a5aULL, buf[C_COUNT].id);
		if (!done)
			break;
		for (i = 0; i < done; i++) {
			int64_t idx = idmap_get(&map, buf[i].id);

			ASSERT_LE(0, idx) TH_LOG("unknown id %#" PRIx64,
						 (uint64_t)buf[i].id);
			ASSERT_FALSE(bitmap_test_set(seen, (uint64_t)idx))
				TH_LOG("id %#" PRIx64 " listed twice (step %"
				       PRIu64 ")", (uint64_t)buf[i].id, step);
			if (idx < C_STABLE)
				dl[idx] = buf[i].timeout_ns;
			else
				churn_listed++;
			listed++;
		}
		step++;

		/* small churn: add 8 ids, cancel 8 ids (of the small pool) */
		for (k = 0; k < 8; k++)
			small[k] = ids[C_STABLE + rng_range(&r, 0, C_SMALL - 1)];
		ASSERT_EQ(0, touch_all(fd, small, 8));
		for (k = 8; k < 16; k++)
			small[k] = ids[C_STABLE + rng_range(&r, 0, C_SMALL - 1)];
		ASSERT_EQ(0, cancel_n(fd, &small[8], 8, &done));
		for (k = 0; k < 16; k++) {
			uint64_t j = (uint64_t)idmap_get(&map, small[k]) - C_STABLE;

			small_present[j] = k < 8;
		}

		/* bulk: grow the index through resizes, then shrink it */
		if (step >= 150 && bulk_added < C_BULK) {
			ASSERT_EQ(0, touch_all(fd, &ids[C_STABLE + C_SMALL + bulk_added],
					       C_BULK_STEP));
			bulk_added += C_BULK_STEP;
			if (bulk_added == C_BULK)
				bulk_full_step = step;
		} else if (bulk_full_step && step >= bulk_full_step + 50 &&
			   bulk_cancelled < C_BULK) {
			ASSERT_EQ(0, cancel_n(fd, &ids[C_STABLE + C_SMALL +
							   bulk_cancelled],
						  C_BULK_STEP, &done));
			ASSERT_EQ((uint64_t)C_BULK_STEP, done);
			bulk_cancelled += C_BULK_STEP;
		}
		if (step % 25 == 0 || bulk_added == C_BULK) {
			ASSERT_EQ(0, get_stats(fd, &st));
			if (st.mem_bytes > mem_max)
				mem_max = st.mem_bytes;
		}
	}
	ASSERT_EQ((uint64_t)C_BULK, bulk_cancelled) TH_LOG("dump ended too early");
	for (i = 0; i < C_STABLE; i++) {
		ASSERT_TRUE(bitmap_test(seen, i))
			TH_LOG("stable id %#" PRIx64 " not listed", ids[i]);
		ASSERT_EQ(0, query(fd, ids[i], &q));
		ASSERT_EQ(q.deadline_ns, dl[i]);
		ASSERT_EQ(0ULL, q.data);
	}
	ASSERT_EQ(0, get_stats(fd, &st));
	TH_LOG("%" PRIu64 " DUMP calls, %" PRIu64 " entries (%" PRIu64
	       " churned ids); mem max %" PRIu64 " bytes, now %" PRIu64
	       " for %" PRIu64 " ids", step, listed, churn_listed, mem_max,
	       (uint64_t)st.mem_bytes, (uint64_t)st.armed);

	/* Without churn, a dump lists exactly what is there. */
	nsmall = 0;
	for (i = 0; i < C_SMALL; i++)
		nsmall += small_present[i];
	ASSERT_EQ((uint64_t)(C_STABLE + nsmall), st.armed + st.pending);
	out = calloc(C_STABLE + C_SMALL, sizeof(*out));
	ASSERT_TRUE(out != NULL);
	n = dump_all(_metadata, fd, C_COUNT, &map, C_IDS, out, C_STABLE + C_SMALL);
	ASSERT_EQ((uint64_t)(C_STABLE + nsmall), n);
	for (i = 0; i < n; i++) {
		int64_t idx = idmap_get(&map, out[i].id);

		ASSERT_TRUE(idx < C_STABLE || small_present[idx - C_STABLE]);
	}
	free(out);

	idmap_free(&map);
	free(ids);
	free(dl);
	free(seen);
	free(small_present);
	close(fd);
}

TEST_HARNESS_MAIN
