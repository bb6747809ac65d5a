// SPDX-License-Identifier: GPL-2.0
/*
 * The owner pays: one user's wheel cannot take another user's CPU.
 *
 * A nice-0 CPU-bound victim pinned to CPU 0 measures the CPU it gets, in
 * 100 ms windows, twice: beside an idle nice-19 process, then beside
 * another user's worst-case wheel, its owner at nice 19 on CPU 0 with
 * millions of ids that all come due at one instant and are re-armed as
 * soon as they are read.  The expiry of those ids must be paid by their
 * owner, at its priority: the victim keeps at least 90% of the CPU it got
 * beside the idle process.  A module that expires ids in a high-priority
 * kworker (twheel before "the owner pays") gives the victim a fraction of
 * that while the burst is expired.
 *
 * owner.pays_unread: the same owner keeps an event unread, so that the
 * expiry due is the work item's (the edge for edge-triggered epoll), with
 * unbound work confined to the victim's CPU: the work item stops at the
 * edge, and the victim keeps its 90%.
 *
 * 2,000,000 ids; TWHEEL_SCALE_IDS sets fewer (the debug kernel's run,
 * where TWHEEL_SLOW_KERNEL makes the share logged, not asserted).  Both
 * shares and the victim's worst 100 ms window are logged.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* kselftest_harness.h (6.1) has unused parameters in its own macros */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "twheel_test.h"

#define OWN_IDS		2000000ULL
#define OWN_WIN		(100 * MS)	/* the victim's window */
#define OWN_WINDOWS	256
#define OWN_BASE	(2 * SEC)	/* the victim beside the idle process */
#define OWN_ATTACK	(2500 * MS)	/* the victim after the burst is due */
#define OWN_LEAD	(300 * MS)	/* and before it */
#define OWN_CHUNK	4096		/* ids per ARM, events per read */
#define OWN_SHARE	90		/* percent of the idle share kept */
#define WQ_CPUMASK	"/sys/devices/virtual/workqueue/cpumask"

/* What the processes share (MAP_SHARED): the victim's windows, the burst. */
struct own_shared {
	uint64_t t[OWN_WINDOWS + 1];	/* window boundaries, CLOCK_MONOTONIC */
	uint64_t cpu[OWN_WINDOWS + 1];	/* the victim's CPU time at each */
	unsigned int nwin;
	uint64_t burst;			/* when the owner's ids come due */
	uint64_t armed, read, cycles;	/* the owner's progress */
	int err;			/* the owner's setup errno, or 0 */
};

/* In every child: CPU 0 alone, and gone with the test. */
static void pin_cpu0(void)
{
	cpu_set_t set;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The victim: spin until @t_end, recording its own CPU time every
 * OWN_WIN of wall time.
 */
static __attribute__((noinline, noreturn))
void victim(struct own_shared *sh, uint64_t t_end)
{
	uint64_t t = now_ns(), next = t + OWN_WIN;
	unsigned int n = 0;

	pin_cpu0();
	sh->t[0] = t;
	sh->cpu[0] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	while ((t = now_ns()) < t_end && n < OWN_WINDOWS) {
		if (t < next)
			continue;
		n++;
		sh->t[n] = t;
		sh->cpu[n] = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		next = t + OWN_WIN;
	}
	sh->nwin = n;
	_exit(0);
}

static void nice19(void)
{
	pin_cpu0();
	setpriority(PRIO_PROCESS, 0, 19);
	/* another user's, when the test can be another user */
	if (!geteuid() && (setresgid(65534, 65534, 65534) ||
			   setresuid(65534, 65534, 65534)))
		_exit(3);
}

/* Arm @n ids, all due at @dl. */
static int own_arm(int fd, struct twheel_arm *e, uint64_t n, uint64_t dl)
{
	uint64_t i, k;

	for (i = 0; i < n; i += k) {
		k = n - i < OWN_CHUNK ? n - i : OWN_CHUNK;
		for (uint64_t j = 0; j < k; j++)
			e[j] = (struct twheel_arm){ .id = i + j + 1, .timeout_ns = dl,
						    .flags = TWHEEL_ARM_ABSTIME };
		if (arm_n(fd, e, k, NULL))
			return -errno;
	}
	return 0;
}

/*
 * The burst: @n ids all due at one instant, far enough ahead for the
 * arming to end first (timed on a sample armed an hour ahead), in
 * sh->burst.  0 or -errno.
 */
static int own_burst(struct own_shared *sh, int fd, struct twheel_arm *e,
		     uint64_t n)
{
	const uint64_t sample = n < 65536 ? n : 65536;
	uint64_t t0 = now_ns();
	int err = own_arm(fd, e, sample, t0 + 3600 * SEC);

	if (err)
		return err;
	sh->burst = now_ns() + 2 * (now_ns() - t0) * (n / sample) + 500 * MS;
	return own_arm(fd, e, n, sh->burst);
}

/*
 * The owner: nice 19 on CPU 0, another user.  Arms @n ids due at one
 * instant far enough ahead for the arming to end first (timed on a
 * sample), says when, then reads every event with a blocking read and
 * re-arms them all 100 ms ahead, until killed.
 */
static __attribute__((noinline, noreturn))
void owner(struct own_shared *sh, uint64_t n)
{
	struct twheel_arm *e = calloc(OWN_CHUNK, sizeof(*e));
	struct twheel_event *ev = calloc(OWN_CHUNK, sizeof(*ev));
	uint64_t got;
	int fd, err;

	nice19();
	fd = open_wheel(0);
	if (fd < 0 || !e || !ev) {
		sh->err = fd < 0 ? errno : ENOMEM;
		_exit(1);
	}
	err = config_set(fd, MS, 0, n);
	if (!err)
		err = own_burst(sh, fd, e, n);
	if (err) {
		sh->err = -err;
		_exit(1);
	}
	__atomic_store_n(&sh->armed, n, __ATOMIC_RELEASE);
	for (;;) {
		for (got = 0; got < n;) {
			ssize_t r = read(fd, ev, OWN_CHUNK * EVSZ);

			if (r <= 0)
				_exit(2);
			got += (uint64_t)r / EVSZ;
			__atomic_add_fetch(&sh->read, (uint64_t)r / EVSZ,
					   __ATOMIC_RELAXED);
		}
		__atomic_add_fetch(&sh->cycles, 1, __ATOMIC_RELAXED);
		if (own_arm(fd, e, n, now_ns() + 100 * MS))
			_exit(2);
	}
}

static pid_t spawn(void (*fn)(struct own_shared *, uint64_t),
		   struct own_shared *sh, uint64_t arg)
{
	pid_t pid = fork();

	if (!pid)
		fn(sh, arg);
	return pid;
}

static __attribute__((noinline, noreturn))
void idle19(struct own_shared *sh, uint64_t arg)
{
	(void)sh;
	(void)arg;
	nice19();
	for (;;)
		pause();
}

/*
 * The victim's CPU share in percent over its windows starting in [@from,
 * @to); -1 if none does.
 */
static double share(const struct own_shared *sh, uint64_t from, uint64_t to,
		    double *worst)
{
	uint64_t cpu = 0, wall = 0;
	unsigned int i;

	*worst = 100;
	for (i = 0; i < sh->nwin; i++) {
		uint64_t dt = sh->t[i + 1] - sh->t[i];
		uint64_t dc = sh->cpu[i + 1] - sh->cpu[i];

		if (sh->t[i] < from || sh->t[i] >= to)
			continue;
		cpu += dc;
		wall += dt;
		if (100.0 * dc / dt < *worst)
			*worst = 100.0 * dc / dt;
	}
	return wall ? 100.0 * cpu / wall : -1;
}

static int reap(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

FIXTURE(owner) {
	struct own_shared *sh;
	pid_t idle, own;
	char wq_mask[256];	/* the workqueue cpumask to restore, or "" */
};

FIXTURE_SETUP(owner)
{
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
}

FIXTURE_TEARDOWN(owner)
{
	if (self->idle > 0)
		kill(self->idle, SIGKILL);
	if (self->own > 0)
		kill(self->own, SIGKILL);
	if (self->sh && self->sh != MAP_FAILED)
		munmap(self->sh, sizeof(*self->sh));
	if (self->wq_mask[0] && write_str(WQ_CPUMASK, self->wq_mask))
		TH_LOG("could not restore the workqueue cpumask %s", self->wq_mask);
}

/*
 * The victim's CPU share beside an idle nice-19 process (@base), then from
 * just before the burst of @owner_fn's wheel of the test's ids to
 * OWN_ATTACK after it (@att), logged under @what; asserted to keep
 * OWN_SHARE percent, except on the debug kernel.
 */
static void victim_shares(struct __test_metadata *_metadata,
			  FIXTURE_DATA(owner) *self,
			  void (*owner_fn)(struct own_shared *, uint64_t),
			  const char *what)
{
	const char *env = getenv("TWHEEL_SCALE_IDS");
	uint64_t n = env ? strtoull(env, NULL, 0) : OWN_IDS, from, t_end;
	struct own_shared *sh = self->sh;
	double base, base_worst, att, att_worst;
	pid_t own, vic;

	if (n > OWN_IDS)
		n = OWN_IDS;
	/* beside an idle nice-19 process */
	self->idle = spawn(idle19, sh, 0);
	ASSERT_LT(0, self->idle);
	vic = spawn(victim, sh, now_ns() + OWN_BASE);
	ASSERT_LT(0, vic);
	ASSERT_EQ(0, reap(vic));
	kill(self->idle, SIGKILL);
	reap(self->idle);
	self->idle = 0;
	base = share(sh, 0, UINT64_MAX, &base_worst);
	ASSERT_LT(0, base);

	/* beside the owner of the worst-case wheel */
	memset(sh, 0, sizeof(*sh));
	own = self->own = spawn(owner_fn, sh, n);
	ASSERT_LT(0, own);
	while (!__atomic_load_n(&sh->armed, __ATOMIC_ACQUIRE) && !sh->err &&
	       !waitpid(own, NULL, WNOHANG))
		sleep_ns(10 * MS);
	ASSERT_EQ(0, sh->err) TH_LOG("owner setup: %s", strerror(sh->err));
	ASSERT_EQ(n, sh->armed);
	/*
	 * The victim's windows from just before the burst (it has
	 * OWN_WINDOWS of them), or from the end of the arming if a busy
	 * host made that end after the burst (the ARMs then ran its
	 * expiry, and the owner's reads go on with it).
	 */
	from = sh->burst;
	if (now_ns() > from) {
		TH_LOG("arming ended %.3f s after the ids came due",
		       (now_ns() - from) / 1e9);
		from = now_ns();
	} else if (now_ns() + OWN_LEAD < from) {
		sleep_until(from - OWN_LEAD);
	}
	t_end = from + OWN_ATTACK;
	vic = spawn(victim, sh, t_end);
	ASSERT_LT(0, vic);
	ASSERT_EQ(0, reap(vic));
	kill(own, SIGKILL);
	reap(own);
	self->own = 0;
	att = share(sh, from, t_end, &att_worst);
	ASSERT_LE(0, att) TH_LOG("no window of the victim's began in the %.1f s measured",
				 OWN_ATTACK / 1e9);

	TH_LOG("%llu ids due at once%s: victim's CPU %.1f%% beside an idle nice-19 process (worst 100 ms %.1f%%), %.1f%% beside the wheel's owner (worst 100 ms %.1f%%): %.1f%% kept",
	       U(n), what, base, base_worst, att, att_worst, 100 * att / base);
	TH_LOG("owner, in %.1f s: %llu events read, %llu full cycles",
	       OWN_ATTACK / 1e9, U(sh->read), U(sh->cycles));
	/*
	 * The debug kernel's own threads (kmemleak's scan, KASAN's
	 * quarantine) take CPU 0 at times of their choosing: there the run
	 * is for its reports, the share is only logged.
	 */
	if (getenv("TWHEEL_SLOW_KERNEL"))
		return;
	EXPECT_LE(OWN_SHARE * base, 100 * att)
		TH_LOG("the victim kept %.1f%% of its CPU (wanted >= %d%%)",
		       100 * att / base, OWN_SHARE);
}

TEST_F_TIMEOUT(owner, pays, 300)
{
	int fd;

	OPEN_OR_SKIP(fd, 0);
	close(fd);
	victim_shares(_metadata, self, owner, "");
}

/*
 * The owner of the worst-case wheel keeps an event unread: the expiry
 * that falls due then is the work item's (an edge for edge-triggered
 * epoll), not the owner's.  With unbound work confined to CPU 0 (an
 * administrator's workqueue cpumask, as on a machine whose other CPUs
 * are isolated), the work item runs on the victim's CPU at nice 0.  It
 * must stop at the edge, one batch, and leave the rest to the owner: the
 * victim keeps at least 90% of its CPU.  A module whose work item
 * expires the whole burst there takes about half the victim's CPU while
 * it does.
 */
static __attribute__((noinline, noreturn))
void owner_unread(struct own_shared *sh, uint64_t n)
{
	struct twheel_arm *e = calloc(OWN_CHUNK, sizeof(*e));
	struct twheel_stats st;
	int fd, err;

	nice19();
	fd = open_wheel(O_NONBLOCK);
	if (fd < 0 || !e) {
		sh->err = fd < 0 ? errno : ENOMEM;
		_exit(1);
	}
	err = config_set(fd, MS, 0, n + 1);
	/* an event at once, kept unread: the ARMs below queue it */
	if (!err)
		err = arm1(fd, ~0ULL, 1, 0, TWHEEL_ARM_ABSTIME);
	if (!err)
		err = own_burst(sh, fd, e, n);
	/* the event is queued (GET_STATS runs the expiry due first) */
	if (!err)
		err = get_stats(fd, &st);
	if (!err && st.pending != 1)
		err = -EPROTO;
	if (err) {
		sh->err = -err;
		_exit(1);
	}
	__atomic_store_n(&sh->armed, n, __ATOMIC_RELEASE);
	for (;;)
		pause();
}

TEST_F_TIMEOUT(owner, pays_unread, 300)
{
	char mask[256] = "";
	FILE *f;
	int fd, len;

	OPEN_OR_SKIP(fd, 0);
	close(fd);
	f = fopen(WQ_CPUMASK, "r");
	if (!f || !fgets(mask, sizeof(mask), f) || fclose(f))
		SKIP(return, "cannot read " WQ_CPUMASK);
	len = strlen(mask);
	ASSERT_TRUE(len > 1 && mask[len - 1] == '\n');
	if (write_str(WQ_CPUMASK, "1"))
		SKIP(return, "cannot confine unbound work to CPU 0 (" WQ_CPUMASK ")");
	strcpy(self->wq_mask, mask);
	victim_shares(_metadata, self, owner_unread,
		      ", an event unread, unbound work on CPU 0");
}

/*
 * A process that neither polls nor reads: the hrtimer fires once for the
 * first due slot and is not armed again until a call does the expiry; the
 * call that comes back queues every event then, in deadline order.  (A
 * module that expires in a kworker fires once per slot and queues each
 * event within a tick of its deadline.)
 */
TEST(pays_later)
{
	struct twheel_arm a[3];
	struct twheel_event ev[4];
	struct twheel_stats st;
	uint64_t t0, back;
	int fd, i;

	OPEN_OR_SKIP(fd, O_NONBLOCK);
	ASSERT_EQ(0, config_set(fd, MS, 0, 0));
	/* one call: a slow guest cannot have a later ARM run the expiry */
	t0 = now_ns();
	for (i = 0; i < 3; i++)
		a[i] = (struct twheel_arm){ .id = 10 + i, .data = i,
					    .timeout_ns = t0 + (100 + 10 * i) * MS,
					    .flags = TWHEEL_ARM_ABSTIME };
	ASSERT_EQ(0, arm_n(fd, a, 3, NULL));
	if (now_ns() >= t0 + 100 * MS)
		SKIP(return, "the ARM returned after the first deadline");
	sleep_until(t0 + 400 * MS);
	back = now_ns();
	ASSERT_EQ(3 * (ssize_t)EVSZ, read(fd, ev, sizeof(ev)));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(U(10 + i), U(ev[i].id));
		EXPECT_LE(ev[i].deadline_ns, ev[i].expired_ns);
		/* queued by the read, not at the deadline */
		EXPECT_LE(back, ev[i].expired_ns)
			TH_LOG("event %d queued %.3f ms after its deadline, before the read",
			       i, (ev[i].expired_ns - ev[i].deadline_ns) / 1e6);
	}
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(U(1), U(st.timer_fires));
	EXPECT_EQ(U(3), U(st.expirations));
	EXPECT_EQ(U(0), U(st.work_runs));
	close(fd);
}

/*
 * The hrtimer's wake claims nothing: a slot that comes due with only ids
 * touched since (re-slotted, no event) wakes epoll and poll, which find no
 * event and go on waiting; an id armed afterwards is reported, and read.
 */
TEST(wake_without_event)
{
	struct epoll_event e = { .events = EPOLLIN }, out;
	struct pollfd p;
	struct twheel_event ev;
	struct twheel_stats st;
	uint64_t t0;
	int fd, ep;

	OPEN_OR_SKIP(fd, O_NONBLOCK);
	ASSERT_EQ(0, config_set(fd, MS, 0, 0));
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e));
	t0 = now_ns();
	ASSERT_EQ(0, arm1(fd, 1, t0 + 30 * MS, 0, TWHEEL_ARM_ABSTIME));
	/* a touch moves it later: it stays in the 30 ms slot (lazily) */
	ASSERT_EQ(0, arm1(fd, 1, t0 + 10 * SEC, 0, TWHEEL_ARM_ABSTIME));
	/* the 30 ms slot fires: no event, epoll goes on waiting */
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 150));
	p = (struct pollfd){ .fd = fd, .events = POLLIN };
	EXPECT_EQ(0, poll(&p, 1, 50));
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_LE(U(1), U(st.timer_fires));
	EXPECT_LE(U(1), U(st.reslots));
	EXPECT_EQ(U(0), U(st.expirations));
	/* id 2, due 50 ms from now: epoll reports it */
	ASSERT_EQ(0, arm1(fd, 2, 50 * MS, 0, 0));
	ASSERT_EQ(1, epoll_wait(ep, &out, 1, 5000));
	EXPECT_EQ(U(EPOLLIN), U(out.events & EPOLLIN));
	ASSERT_EQ((ssize_t)EVSZ, read(fd, &ev, sizeof(ev)));
	EXPECT_EQ(U(2), U(ev.id));
	EXPECT_LE(ev.deadline_ns, ev.expired_ns);
	TH_LOG("id 2 queued %.3f ms after its deadline by the epoll waiter",
	       (ev.expired_ns - ev.deadline_ns) / 1e6);
	close(ep);
	close(fd);
}

TEST_HARNESS_MAIN
