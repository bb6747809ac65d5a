// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF touch: bpf_twheel_touch(handle, id), the module's kfunc for XDP
 * and TC programs, called by the programs of twheel_bpf.bpf.c through
 * BPF_PROG_TEST_RUN (with repeat: exact counts of calls).
 *
 *  - touch_counts: every call on a present id is a touch, counted once in
 *    the program and once in the wheel's bpf_touches; it moves the
 *    deadline to now + timeout like write(), from XDP and from TC;
 *  - touch_expired: an EXPIRED id's event is discarded, the id ARMED;
 *  - absent: -ENOENT, counted in bpf_absent, and the id is not created;
 *  - unknown_handle: -ESRCH for 0, a handle never handed out, ~0;
 *  - closed: -ESRCH once the exported file is closed, with the program
 *    still holding the handle; a new export never reuses it;
 *  - close_race: a thread runs the program without pause while wheels
 *    are exported, touched and closed under it: nothing but 0, -ENOENT
 *    and -ESRCH comes back, and nothing breaks (KASAN, lockdep on the
 *    debug kernel);
 *  - softirq_race: datagrams through lo from both CPUs, touched by a TC
 *    program in the receive softirq, against this thread's writes,
 *    cancels and reads, checked against a model (exactly once, never
 *    early, the program's counts equal to the wheel's);
 *  - rmmod_refused: a loaded program pins the module (its refcnt), and
 *    one attached to lo (XDP, generic) too: rmmod fails; the pin goes
 *    with the program;
 *  - cost: ns per call with and without the kfunc, on one id and over
 *    1M ids, beside write()'s per-id cost at 1M ids (logged, not
 *    asserted: the guest is emulated).
 *
 * Every test skips if the module has no BTF (TWHEEL_IOC_BPF_HANDLE fails
 * with EOPNOTSUPP): the abi suite checks that case.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/if_link.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* kselftest_harness.h (6.1) has unused parameters in its own macros */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "twheel_test.h"
#include "twheel_bpf.skel.h"

#define REFCNT		"/sys/module/twheel/refcnt"
#define COST_IDS_MAX	(1U << 20)
#define COST_CALLS	1000000U

/*
 * The cost case's ids and calls: 1M of each, or TWHEEL_SCALE_IDS ids and
 * a tenth of the calls on the debug kernel (TWHEEL_SLOW_KERNEL), where a
 * call costs ~10 us under KASAN and lockdep: its figures are the stock
 * kernel's, the debug kernel checks its counts.
 */
static uint32_t cost_ids = COST_IDS_MAX, cost_calls = COST_CALLS;

static void __attribute__((constructor)) cost_from_env(void)
{
	const char *e = getenv("TWHEEL_SCALE_IDS");
	unsigned long v = e ? strtoul(e, NULL, 0) : 0;

	if (v >= 1024 && v <= COST_IDS_MAX)
		cost_ids = v;
	if (getenv("TWHEEL_SLOW_KERNEL"))
		cost_calls = COST_CALLS / 10;
}

/* libbpf's messages as TAP comments */
static int bpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	fputs("# libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/* The wheel's handle, or -errno. */
static int64_t export_wheel(int fd)
{
	uint64_t h = 0;

	if (ioctl(fd, TWHEEL_IOC_BPF_HANDLE, &h))
		return -errno;
	return (int64_t)h;
}

/*
 * Run @prog @repeat times on a zeroed 64-byte frame: its return value, or
 * -errno; *ns: the average time per run.
 */
static int run_prog(struct bpf_program *prog, unsigned int repeat, uint32_t *ns)
{
	char frame[64] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame,
		    .data_size_in = sizeof(frame), .repeat = repeat);

	if (bpf_prog_test_run_opts(bpf_program__fd(prog), &o))
		return -errno;
	if (ns)
		*ns = o.duration;
	return (int)o.retval;
}

/* Zero the counters of the programs, set what the next run touches. */
static void aim(struct twheel_bpf *skel, uint64_t handle, uint64_t id,
		uint64_t span)
{
	struct twheel_bpf__bss *b = skel->bss;

	b->handle = handle;
	b->id = id;
	b->span = span;
	b->calls = 0;
	b->ok = 0;
	b->noent = 0;
	b->srch = 0;
	b->other = 0;
	b->last = 0;
}

/* The module's reference count, -1 if unreadable. */
static long refcnt(void)
{
	return read_long(REFCNT);
}

FIXTURE(bpf) {
	struct twheel_bpf *skel;	/* NULL: the test skips */
	int fd;
	uint64_t handle;
	/* softirq_race's filter on lo's ingress, removed in the teardown */
	struct bpf_tc_hook hook;
	struct bpf_tc_opts tco;
	bool tc_attached, tc_created;
};

/*
 * The 6.1 harness runs a test's body after a SKIP() in its setup: each
 * body starts with this.
 */
#define BPF_OR_SKIP() do {						\
	if (!self->skel)						\
		SKIP(return, "module without BTF: no BPF touch");	\
} while (0)

FIXTURE_SETUP(bpf)
{
	int64_t h;

	self->skel = NULL;
	self->tc_attached = false;
	self->tc_created = false;
	self->fd = open_wheel(0);
	ASSERT_LE(0, self->fd) TH_LOG("open " DEV ": %s", strerror(errno));
	h = export_wheel(self->fd);
	if (h == -EOPNOTSUPP)
		return;		/* BPF_OR_SKIP() */
	ASSERT_LT(0, h) TH_LOG("TWHEEL_IOC_BPF_HANDLE: %s", strerror((int)-h));
	self->handle = (uint64_t)h;
	libbpf_set_print(bpf_log);
	self->skel = twheel_bpf__open_and_load();
	ASSERT_NE(NULL, self->skel) TH_LOG("loading the programs failed: %s",
					   strerror(errno));
}

FIXTURE_TEARDOWN(bpf)
{
	if (self->tc_attached) {
		self->tco.flags = self->tco.prog_fd = self->tco.prog_id = 0;
		bpf_tc_detach(&self->hook, &self->tco);
	}
	if (self->tc_created) {
		self->hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&self->hook);
	}
	twheel_bpf__destroy(self->skel);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * 10,000 XDP runs and 1,000 TC runs touch one of three ids: each call is
 * a touch, counted exactly, of that id alone, at write()'s deadline.
 */
TEST_F(bpf, touch_counts)
{
	struct twheel_bpf__bss *b;
	const uint64_t ids[] = { 1, 2, 3 }, timeout = 30 * SEC;
	struct twheel_query q1, q2;
	struct twheel_stats st;
	uint64_t t0, t1;

	BPF_OR_SKIP();
	b = self->skel->bss;
	ASSERT_EQ(0, set_timeout(self->fd, timeout));
	ASSERT_EQ((ssize_t)sizeof(ids), write(self->fd, ids, sizeof(ids)));
	ASSERT_EQ(0, query(self->fd, 1, &q1));
	aim(self->skel, self->handle, 2, 1);
	t0 = now_ns();
	ASSERT_EQ(XDP_PASS, run_prog(self->skel->progs.xdp_touch, 10000, NULL));
	t1 = now_ns();
	EXPECT_EQ(U(10000), U(b->calls));
	EXPECT_EQ(U(10000), U(b->ok));
	EXPECT_EQ(U(0), U(b->noent + b->srch + b->other));
	ASSERT_EQ(0, query(self->fd, 2, &q2));
	EXPECT_EQ((__u32)TWHEEL_STATE_ARMED, q2.state);
	EXPECT_LE(U(t0 + timeout), U(q2.deadline_ns));
	EXPECT_GE(U(t1 + timeout), U(q2.deadline_ns));
	ASSERT_EQ(0, query(self->fd, 1, &q2));
	EXPECT_EQ(U(q1.deadline_ns), U(q2.deadline_ns));

	aim(self->skel, self->handle, 3, 1);
	ASSERT_EQ(TC_ACT_OK, run_prog(self->skel->progs.tc_touch, 1000, NULL));
	EXPECT_EQ(U(1000), U(b->ok));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(U(11000), U(st.bpf_touches));
	EXPECT_EQ(U(0), U(st.bpf_absent));
	EXPECT_EQ(U(3), U(st.touches));
	EXPECT_EQ(U(3), U(st.armed));
	EXPECT_EQ(U(0), U(st.pending));
}

/* A touch of an EXPIRED id discards its event and arms it, as write(). */
TEST_F(bpf, touch_expired)
{
	struct twheel_bpf__bss *b;
	struct twheel_event ev;
	struct twheel_query q;
	struct twheel_stats st;
	uint64_t t0;

	BPF_OR_SKIP();
	b = self->skel->bss;
	ASSERT_EQ(0, set_timeout(self->fd, 10 * SEC));
	ASSERT_EQ(0, arm_past(self->fd, 5, 55));
	ASSERT_EQ(0, query(self->fd, 5, &q));
	ASSERT_EQ((__u32)TWHEEL_STATE_EXPIRED, q.state);
	aim(self->skel, self->handle, 5, 1);
	t0 = now_ns();
	ASSERT_EQ(XDP_PASS, run_prog(self->skel->progs.xdp_touch, 1, NULL));
	EXPECT_EQ(U(1), U(b->ok)) TH_LOG("returned %lld", (long long)b->last);
	ASSERT_EQ(0, query(self->fd, 5, &q));
	EXPECT_EQ((__u32)TWHEEL_STATE_ARMED, q.state);
	EXPECT_EQ(U(55), U(q.data));
	EXPECT_LE(U(t0 + 10 * SEC), U(q.deadline_ns));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(U(0), U(st.pending));
	EXPECT_EQ(U(1), U(st.armed));
	EXPECT_EQ(U(1), U(st.discarded));
	EXPECT_EQ(U(1), U(st.bpf_touches));
	ASSERT_EQ(0, set_nonblock(self->fd, 1));
	EXPECT_EQ(-1, read(self->fd, &ev, sizeof(ev)));
	EXPECT_EQ(EAGAIN, errno);
}

/* An absent id: -ENOENT every time, counted, and never created. */
TEST_F(bpf, absent)
{
	struct twheel_bpf__bss *b;
	const uint64_t id = 7;
	struct twheel_query q;
	struct twheel_stats st;

	BPF_OR_SKIP();
	b = self->skel->bss;
	ASSERT_EQ((ssize_t)sizeof(id), write(self->fd, &id, sizeof(id)));
	aim(self->skel, self->handle, 99, 1);
	ASSERT_EQ(XDP_PASS, run_prog(self->skel->progs.xdp_touch, 500, NULL));
	EXPECT_EQ(U(500), U(b->noent));
	EXPECT_EQ(-ENOENT, b->last);
	EXPECT_EQ(-ENOENT, query(self->fd, 99, &q));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(U(500), U(st.bpf_absent));
	EXPECT_EQ(U(0), U(st.bpf_touches));
	EXPECT_EQ(U(1), U(st.armed));
}

/* Handles that name no wheel: -ESRCH, and no wheel counts anything. */
TEST_F(bpf, unknown_handle)
{
	struct twheel_bpf__bss *b;
	const uint64_t bad[] = { 0, self->handle + (1ULL << 40), ~0ULL };
	const uint64_t id = 1;
	struct twheel_stats st;
	unsigned int i;

	BPF_OR_SKIP();
	b = self->skel->bss;
	ASSERT_EQ((ssize_t)sizeof(id), write(self->fd, &id, sizeof(id)));
	for (i = 0; i < 3; i++) {
		aim(self->skel, bad[i], 1, 1);
		ASSERT_EQ(XDP_PASS, run_prog(self->skel->progs.xdp_touch, 100, NULL));
		EXPECT_EQ(U(100), U(b->srch)) TH_LOG("handle %#llx", U(bad[i]));
		EXPECT_EQ(-ESRCH, b->last);
	}
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(U(0), U(st.bpf_touches + st.bpf_absent));
}

/*
 * The program keeps the handle of a file that is closed: -ESRCH from
 * then on.  The next export gets a new handle, never the old one.
 */
TEST_F(bpf, closed)
{
	struct twheel_bpf__bss *b;
	const uint64_t id = 3;
	int64_t h2, h3;
	int fd2, fd3;

	BPF_OR_SKIP();
	b = self->skel->bss;
	fd2 = open_wheel(0);
	ASSERT_LE(0, fd2);
	ASSERT_EQ((ssize_t)sizeof(id), write(fd2, &id, sizeof(id)));
	h2 = export_wheel(fd2);
	ASSERT_LT(0, h2);
	EXPECT_NE(U(self->handle), U(h2));
	aim(self->skel, (uint64_t)h2, id, 1);
	ASSERT_EQ(XDP_PASS, run_prog(self->skel->progs.xdp_touch, 10, NULL));
	EXPECT_EQ(U(10), U(b->ok));
	ASSERT_EQ(0, close(fd2));
	aim(self->skel, (uint64_t)h2, id, 1);
	ASSERT_EQ(XDP_PASS, run_prog(self->skel->progs.xdp_touch, 10, NULL));
	EXPECT_EQ(U(10), U(b->srch));
	fd3 = open_wheel(0);
	ASSERT_LE(0, fd3);
	h3 = export_wheel(fd3);
	EXPECT_LT(h2, h3);
	close(fd3);
}

struct racer {
	struct twheel_bpf *skel;
	int stop;
	uint64_t runs;		/* runs of 100 calls completed */
	int err;
};

/* The program, without pause, on whatever handle the test aims it at. */
static void *race_runner(void *arg)
{
	struct racer *r = arg;
	int ret;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		ret = run_prog(r->skel->progs.xdp_touch, 100, NULL);
		if (ret != XDP_PASS) {
			r->err = ret;
			break;
		}
		__atomic_add_fetch(&r->runs, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

/*
 * Until the runner has completed two more runs (the second began after
 * this was called), or for at most 2 s; false if it stopped.
 */
static bool two_runs(struct racer *r)
{
	uint64_t want = __atomic_load_n(&r->runs, __ATOMIC_ACQUIRE) + 2;
	uint64_t end = now_ns() + 2 * SEC;

	while (__atomic_load_n(&r->runs, __ATOMIC_ACQUIRE) < want) {
		if (r->err || now_ns() > end)
			return false;
		sleep_ns(20 * US);
	}
	return true;
}

/*
 * Wheels exported, touched by the running program and closed under it,
 * for 3 s: each call returns 0, -ENOENT or -ESRCH, never anything else.
 * Each wheel lives for a whole run at least (touches: ids 1 and 2 of the
 * program's 1..4), is closed while a run may be under way, and its handle
 * stays aimed at for a whole run more (-ESRCH).
 */
TEST_F_TIMEOUT(bpf, close_race, 60)
{
	struct twheel_bpf__bss *b;
	struct racer r = { .skel = self->skel };
	uint64_t end, cycles = 0;
	pthread_t th;

	BPF_OR_SKIP();
	b = self->skel->bss;
	aim(self->skel, self->handle, 1, 4);
	ASSERT_EQ(0, pthread_create(&th, NULL, race_runner, &r));
	end = now_ns() + 3 * SEC;
	while (now_ns() < end) {
		const uint64_t ids[] = { 1, 2 };
		int fd = open_wheel(0);
		int64_t h;

		ASSERT_LE(0, fd);
		ASSERT_EQ((ssize_t)sizeof(ids), write(fd, ids, sizeof(ids)));
		h = export_wheel(fd);
		ASSERT_LT(0, h);
		b->handle = (uint64_t)h;
		if (!two_runs(&r))
			break;
		ASSERT_EQ(0, close(fd));
		if (!two_runs(&r))
			break;
		cycles++;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	EXPECT_EQ(0, r.err) TH_LOG("test run: %s", strerror(-r.err));
	EXPECT_LT(U(0), U(cycles)) TH_LOG("the runner made no progress");
	EXPECT_EQ(U(0), U(b->other)) TH_LOG("last %lld", (long long)b->last);
	EXPECT_EQ(U(b->calls), U(b->ok + b->noent + b->srch + b->other));
	EXPECT_LE(U(cycles * 50), U(b->ok));	/* ids 1, 2 of 1..4 */
	EXPECT_LE(U(cycles * 100), U(b->srch));
	TH_LOG("%llu wheels exported and closed under %llu runs: %llu calls, %llu touched, %llu absent, %llu after the close",
	       U(cycles), U(r.runs * 100), U(b->calls), U(b->ok), U(b->noent),
	       U(b->srch));
}

/* ------------------------------------------------------------ softirq_race */

#define SR_IDS		512
#define SR_TIMEOUT	(5 * MS)
#define SR_PORT		7477
#define SR_VLEN		64

struct sender {
	int cpu;
	int *stop;
	uint64_t sent;
	int err;
};

/*
 * Datagrams to 127.0.0.1:SR_PORT, each one random id of 0 .. SR_IDS - 1,
 * from a thread pinned to one CPU: lo hands each to the receive softirq
 * of that CPU, where tc_udp_touch() touches the id and drops it.
 */
static void *sender(void *arg)
{
	struct sender *s = arg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(SR_PORT),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct rng r = { .s = (uint64_t)s->cpu * 977 + 1 };
	struct mmsghdr m[SR_VLEN];
	struct iovec iov[SR_VLEN];
	uint64_t ids[SR_VLEN];
	cpu_set_t set;
	int sk, i, n;

	CPU_ZERO(&set);
	CPU_SET(s->cpu, &set);
	sk = socket(AF_INET, SOCK_DGRAM, 0);
	if (sk < 0 || sched_setaffinity(0, sizeof(set), &set) ||
	    connect(sk, (struct sockaddr *)&a, sizeof(a))) {
		s->err = errno;
		return NULL;
	}
	memset(m, 0, sizeof(m));
	for (i = 0; i < SR_VLEN; i++) {
		iov[i] = (struct iovec){ &ids[i], sizeof(ids[i]) };
		m[i].msg_hdr.msg_iov = &iov[i];
		m[i].msg_hdr.msg_iovlen = 1;
	}
	while (!__atomic_load_n(s->stop, __ATOMIC_ACQUIRE)) {
		for (i = 0; i < SR_VLEN; i++)
			ids[i] = rng_range(&r, 0, SR_IDS - 1);
		n = sendmmsg(sk, m, SR_VLEN, 0);
		if (n < 0 && errno != ENOBUFS) {
			s->err = errno;
			break;
		}
		s->sent += n > 0 ? (uint64_t)n : 0;
	}
	close(sk);
	return NULL;
}

/* What the test knows of each id: it alone creates, cancels and reads. */
struct sr_model {
	bool present[SR_IDS];
	uint64_t t_user[SR_IDS];	/* our clock before its last write() */
	uint64_t created[SR_IDS], cancelled[SR_IDS], delivered[SR_IDS];
	uint64_t early, absent_events;
};

static void sr_write(struct __test_metadata *_metadata, int fd, struct sr_model *md,
		     struct rng *r)
{
	uint64_t ids[8], t = now_ns();
	unsigned int i;

	for (i = 0; i < 8; i++)
		ids[i] = rng_range(r, 0, SR_IDS - 1);
	ASSERT_EQ((ssize_t)sizeof(ids), write(fd, ids, sizeof(ids)));
	for (i = 0; i < 8; i++) {
		if (!md->present[ids[i]])
			md->created[ids[i]]++;
		md->present[ids[i]] = true;
		md->t_user[ids[i]] = t;
	}
}

static void sr_cancel(struct __test_metadata *_metadata, int fd, struct sr_model *md,
		      uint64_t id)
{
	uint64_t removed = 0;

	ASSERT_EQ(0, cancel_n(fd, &id, 1, &removed));
	EXPECT_EQ(U(md->present[id]), U(removed)) TH_LOG("cancel of id %llu", U(id));
	md->cancelled[id] += removed;
	md->present[id] = false;
}

/* Read what is queued: each event of a present id, never early. */
static void sr_read(struct __test_metadata *_metadata, int fd, struct sr_model *md)
{
	struct twheel_event ev[64];
	ssize_t n, i;

	do {
		n = read(fd, ev, sizeof(ev));
		if (n < 0) {
			ASSERT_EQ(EAGAIN, errno);
			return;
		}
		for (i = 0; i < n / (ssize_t)EVSZ; i++) {
			uint64_t id = ev[i].id;

			ASSERT_GT(U(SR_IDS), U(id));
			if (!md->present[id])
				md->absent_events++;
			if (ev[i].expired_ns < ev[i].deadline_ns ||
			    ev[i].deadline_ns < md->t_user[id] + SR_TIMEOUT)
				md->early++;
			md->delivered[id]++;
			md->present[id] = false;
		}
	} while (n == sizeof(ev));
}

/*
 * Datagrams from a thread on each of two CPUs go through lo, where the TC
 * program touches their ids in the receive softirq, while this thread
 * creates ids with write(), cancels them and reads their events, for 3 s,
 * with a 5 ms timeout: ids expire, and are touched by the program while
 * ARMED, while EXPIRED with their event queued (which discards it), and
 * while absent (-ENOENT).  This thread alone changes which ids exist (a
 * touch from BPF never does), so it knows: every cancel removes exactly
 * the ids it holds, every event is of an id it holds, never before its
 * last write() + timeout, and at the end each id was created as many
 * times as it was cancelled or delivered.  The program's counts equal
 * the wheel's bpf_touches and bpf_absent.  On the debug kernel, lockdep
 * sees the wheel's lock from softirq and from process context.
 */
TEST_F_TIMEOUT(bpf, softirq_race, 120)
{
	struct sender snd[2] = { { .cpu = 0 }, { .cpu = 1 } };
	struct twheel_bpf__bss *b;
	struct sr_model *md;
	struct twheel_stats st;
	struct rng r = { .s = get_seed() };
	pthread_t th[2];
	int stop = 0, ret, i;
	uint64_t end, ops = 0, id;

	BPF_OR_SKIP();
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU");
	md = calloc(1, sizeof(*md));
	ASSERT_NE(NULL, md);
	b = self->skel->bss;
	aim(self->skel, self->handle, 0, 0);
	b->race_port = htons(SR_PORT);
	ASSERT_EQ(0, config_set(self->fd, MS, SR_TIMEOUT, 0));
	ASSERT_EQ(0, set_nonblock(self->fd, 1));
	self->hook = (struct bpf_tc_hook){ .sz = sizeof(self->hook),
		.ifindex = (int)if_nametoindex("lo"), .attach_point = BPF_TC_INGRESS };
	ASSERT_LT(0, self->hook.ifindex);
	ret = bpf_tc_hook_create(&self->hook);
	if (ret && ret != -EEXIST)
		SKIP(goto out, "no clsact on lo (sch_ingress): %s", strerror(-ret));
	self->tc_created = !ret;
	self->tco = (struct bpf_tc_opts){ .sz = sizeof(self->tco),
		.prog_fd = bpf_program__fd(self->skel->progs.tc_udp_touch) };
	ret = bpf_tc_attach(&self->hook, &self->tco);
	if (ret)
		SKIP(goto out, "no TC BPF filter on lo (cls_bpf): %s", strerror(-ret));
	self->tc_attached = true;

	for (i = 0; i < 2; i++) {
		snd[i].stop = &stop;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, sender, &snd[i]));
	}
	end = now_ns() + 3 * SEC;
	while (now_ns() < end) {
		unsigned int op = (unsigned int)rng_range(&r, 0, 99);

		id = rng_range(&r, 0, SR_IDS - 1);
		if (op < 45)
			sr_write(_metadata, self->fd, md, &r);
		else if (op < 60)
			sr_cancel(_metadata, self->fd, md, id);
		else
			sr_read(_metadata, self->fd, md);
		ops++;
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	self->tco.flags = self->tco.prog_fd = self->tco.prog_id = 0;
	EXPECT_EQ(0, bpf_tc_detach(&self->hook, &self->tco));
	self->tc_attached = false;

	/* nothing touches the ids any more: the rest expire, or are held */
	sleep_ns(SR_TIMEOUT + 20 * MS);
	sr_read(_metadata, self->fd, md);
	for (id = 0; id < SR_IDS; id++)
		sr_cancel(_metadata, self->fd, md, id);
	for (id = 0; id < SR_IDS; id++) {
		EXPECT_EQ(U(md->created[id]), U(md->cancelled[id] + md->delivered[id]))
			TH_LOG("id %llu: created %llu, cancelled %llu, delivered %llu", U(id),
			       U(md->created[id]), U(md->cancelled[id]), U(md->delivered[id]));
	}
	EXPECT_EQ(U(0), U(md->absent_events)) TH_LOG("events of ids not held");
	EXPECT_EQ(U(0), U(md->early)) TH_LOG("events before write() + timeout");
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(0, snd[i].err) TH_LOG("sender %d: %s", i, strerror(snd[i].err));
		EXPECT_LT(U(0), U(b->race_cpu[i])) TH_LOG("no datagram touched on CPU %d", i);
	}
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(U(0), U(b->race_other));
	EXPECT_EQ(U(b->race_ok), U(st.bpf_touches));
	EXPECT_EQ(U(b->race_noent), U(st.bpf_absent));
	EXPECT_LT(U(0), U(b->race_ok));
	EXPECT_LT(U(0), U(st.expirations));
	TH_LOG("%llu ops; datagrams sent %llu + %llu, touched on CPU 0 %llu, CPU 1 %llu; %llu touches, %llu absent; %llu expirations, %llu discarded by touches, %llu delivered",
	       U(ops), U(snd[0].sent), U(snd[1].sent), U(b->race_cpu[0]), U(b->race_cpu[1]),
	       U(b->race_ok), U(b->race_noent), U(st.expirations), U(st.discarded),
	       U(st.delivered));
out:
	free(md);
}

/* delete_module(2) of twheel, without waiting: 0 or -errno. */
static int try_rmmod(void)
{
	return syscall(SYS_delete_module, "twheel", O_NONBLOCK) ? -errno : 0;
}

/*
 * A loaded program that calls the kfunc holds a reference on the module,
 * and one attached to lo as well: rmmod fails with no file open.  The
 * reference goes with the program (freed after an RCU grace period).
 */
TEST_F_TIMEOUT(bpf, rmmod_refused, 60)
{
	int ifindex = (int)if_nametoindex("lo");
	long base, loaded;
	int ret, i;

	BPF_OR_SKIP();
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	loaded = refcnt();
	if (loaded < 0)
		SKIP(return, REFCNT " unreadable");
	ret = try_rmmod();
	if (ret == -EPERM)
		SKIP(return, "no CAP_SYS_MODULE");
	ASSERT_NE(0, ret) TH_LOG("twheel was unloaded under a loaded program");
	EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY) TH_LOG("%s", strerror(-ret));
	ASSERT_LT(0, ifindex);
	ret = bpf_xdp_attach(ifindex, bpf_program__fd(self->skel->progs.xdp_touch),
			     XDP_FLAGS_SKB_MODE, NULL);
	ASSERT_EQ(0, ret) TH_LOG("attach to lo: %s", strerror(-ret));
	ret = try_rmmod();
	EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY) TH_LOG("%s", strerror(-ret));
	EXPECT_EQ(0, bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, NULL));
	twheel_bpf__destroy(self->skel);
	self->skel = NULL;
	/* the program is freed after a grace period, by a work item */
	for (i = 0; i < 500 && (base = refcnt()) >= loaded; i++)
		sleep_ns(10 * MS);
	EXPECT_GT(loaded, base) TH_LOG("refcnt %ld with the program, %ld after",
				       loaded, base);
	TH_LOG("module refcnt %ld with the program loaded, %ld after it", loaded,
	       base);
}

/* write() of ids 1..n in 1024-id batches: ns per id. */
static double write_ns_per_id(int fd, const uint64_t *ids, size_t n)
{
	uint64_t t0 = now_ns();
	size_t i;

	for (i = 0; i < n; i += 1024)
		if (write(fd, ids + i, 1024 * sizeof(*ids)) != 1024 * sizeof(*ids))
			return -1;
	return (double)(now_ns() - t0) / (double)n;
}

/*
 * What a call costs: the program with the kfunc against the same program
 * without it, on one id (cache-hot) and over 1M ids in turn, beside
 * write()'s cost per id over the same 1M ids (fewer on the debug kernel:
 * cost_from_env()).  Logged for the figures in docs/bpf.md; asserted
 * are only the exact counts.
 */
TEST_F_TIMEOUT(bpf, cost, 300)
{
	struct twheel_bpf__bss *b;
	uint32_t nop1, call1, nopn, calln;
	uint64_t *ids = seq_ids(cost_ids);
	struct twheel_stats st;
	double wr;

	BPF_OR_SKIP();
	b = self->skel->bss;
	ASSERT_NE(NULL, ids);
	ASSERT_NE(-1, write_ns_per_id(self->fd, ids, cost_ids));	/* arms */
	wr = write_ns_per_id(self->fd, ids, cost_ids);			/* touches */
	ASSERT_LT(0, wr);
	aim(self->skel, self->handle, 1, 1);
	ASSERT_EQ(XDP_PASS, run_prog(self->skel->progs.xdp_nop, cost_calls, &nop1));
	aim(self->skel, self->handle, 1, 1);
	ASSERT_EQ(XDP_PASS, run_prog(self->skel->progs.xdp_touch, cost_calls, &call1));
	EXPECT_EQ(U(cost_calls), U(b->ok));
	aim(self->skel, self->handle, 1, cost_ids);
	ASSERT_EQ(XDP_PASS, run_prog(self->skel->progs.xdp_nop, cost_ids, &nopn));
	aim(self->skel, self->handle, 1, cost_ids);
	ASSERT_EQ(XDP_PASS, run_prog(self->skel->progs.xdp_touch, cost_ids, &calln));
	EXPECT_EQ(U(cost_ids), U(b->ok));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(U(cost_calls + cost_ids), U(st.bpf_touches));
	EXPECT_EQ(U(cost_ids), U(st.armed));
	TH_LOG("ns per call: one id %u with the kfunc, %u without (kfunc %d); over %u ids %u with, %u without (kfunc %d); write() %.0f per id over %u ids",
	       call1, nop1, (int)call1 - (int)nop1, cost_ids, calln, nopn,
	       (int)calln - (int)nopn, wr, cost_ids);
	free(ids);
}

TEST_HARNESS_MAIN
