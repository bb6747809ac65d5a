// SPDX-License-Identifier: GPL-2.0
/*
 * twheel reliability tests: races between close, the hrtimer, blocked
 * waiters, fork/dup and concurrent users of one fd.
 *
 *   race.close_while_firing  open, arm ids due in 0-2 ticks, sleep a random
 *	fraction of a tick, close; thousands of times, two threads at once.
 *   race.close_blocked_{read,poll,epoll}  close every fd of a wheel while a
 *	thread is blocked in read(), poll() or epoll_wait() on it, with an
 *	expiry racing the close or a signal ending the wait: never a crash,
 *	never a hang; the epoll set drops the wheel at its last close.
 *   race.fork_dup_churn  children dup, touch, arm, read and close one
 *	wheel while the parent closes its copies.
 *   race.exactly_once_8_threads  8 threads doing random write/ARM/CANCEL/
 *	QUERY/DUMP/read/GET_STATS/poll on one fd, each owning a disjoint id
 *	range; at the end every event read matches exactly one arm or touch
 *	its owner made (no duplicate, none early), the last arm of every id
 *	was delivered, and the counters add up.
 *   race.grow_contended  8 threads add new ids to a fresh wheel at once,
 *	by ARM and write(), through every growth of its index: every call
 *	adds all its ids.
 *
 * Bounded by time, 5-10 s a test, the same on the debug kernel (where
 * that buys about 800-2,000 rounds a test, against 5,000-28,000 on the
 * stock kernel).  A 32-bit build skips the threaded tests on a kernel without
 * CONFIG_COMPAT_32BIT_TIME (glibc's futex calls fail there).
 * Environment: TWHEEL_SEED overrides the seed (logged).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

/* kselftest_harness.h (6.1) has unused parameters in its own macros */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "twheel_test.h"

/* The module-wide fd count returns to @want (closes may finish late). */
static bool fds_settle(long want)
{
	uint64_t t0 = now_ns();

	while (sysfs_long("fds") != want) {
		if (now_ns() - t0 > 5 * SEC)
			return false;
		usleep(1000);
	}
	return true;
}

static uint64_t seed(struct __test_metadata *_metadata)
{
	uint64_t v = time_seed();

	TH_LOG("seed %#" PRIx64 " (set TWHEEL_SEED to repeat)", v);
	return v;
}

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Whether thread @tid sleeps (state S: blocked in a syscall). */
static bool thread_sleeping(pid_t tid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

/*
 * NULL if threads work, else why not: 32-bit glibc makes its untimed futex
 * waits (pthread_join, sem_wait, mutexes) with the time32 futex syscall,
 * which a kernel without CONFIG_COMPAT_32BIT_TIME lacks (ENOSYS, and
 * glibc aborts: "The futex facility returned an unexpected error code").
 */
static const char *threads_unusable(void)
{
#ifdef __i386__
	static int word;

	if (syscall(SYS_futex, &word, 1 /* FUTEX_WAKE */, 1, NULL, NULL, 0) < 0 &&
	    errno == ENOSYS)
		return "32-bit futex syscall absent (kernel without "
		       "CONFIG_COMPAT_32BIT_TIME): glibc threads cannot work";
#endif
	return NULL;
}

#define THREADS_OR_SKIP() do {						\
	const char *why = threads_unusable();				\
									\
	if (why)							\
		SKIP(return, "%s", why);				\
} while (0)

static void on_signal(int sig)
{
	(void)sig;
}

/* SIGUSR1 interrupts blocking calls (no SA_RESTART). */
static void install_sigusr1(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

FIXTURE(race) {
	long fds0;
};

FIXTURE_SETUP(race)
{
	self->fds0 = sysfs_long("fds");
}

FIXTURE_TEARDOWN(race)
{
}

/* ------------------------------------------------ close while firing */

struct firing {
	struct rng r;
	uint64_t until;
	unsigned long iters, events, errors;
};

static void *firing_loop(void *arg)
{
	struct firing *f = arg;
	struct twheel_arm a[8];
	struct twheel_event ev[8];

	while (now_ns() < f->until && f->iters < 20000) {
		int fd = open_wheel(O_NONBLOCK), i, n;
		uint64_t tick = rng_pct(&f->r, 50) ? TWHEEL_TICK_MIN_NS : 1 * MS;
		ssize_t r;

		if (fd < 0 || config_set(fd, tick, 0, 0)) {
			f->errors++;
			break;
		}
		n = 1 + rng_next(&f->r) % 8;
		memset(a, 0, sizeof(a));
		for (i = 0; i < n; i++) {
			a[i].id = i;
			a[i].timeout_ns = rng_range(&f->r, 1, 2 * tick);
		}
		if (batch(fd, TWHEEL_IOC_ARM, a, n, NULL))
			f->errors++;
		switch (rng_next(&f->r) % 4) {
		case 0:
			break;
		case 1:
			sched_yield();
			break;
		default:
			sleep_ns(rng_range(&f->r, 0, tick));
		}
		if (rng_pct(&f->r, 30)) {
			r = read(fd, ev, sizeof(ev));
			if (r > 0)
				f->events += r / EVSZ;
		}
		close(fd);
		f->iters++;
	}
	return NULL;
}

TEST_F_TIMEOUT(race, close_while_firing, 120)
{
	struct firing f[2];
	pthread_t th;
	uint64_t s, t0 = now_ns();
	int fd;

	OPEN_OR_SKIP(fd, 0);
	close(fd);
	THREADS_OR_SKIP();
	s = seed(_metadata);
	memset(f, 0, sizeof(f));
	f[0].r.s = s;
	f[1].r.s = s ^ 0x5555;
	f[0].until = f[1].until = t0 + 8 * SEC;
	ASSERT_EQ(0, pthread_create(&th, NULL, firing_loop, &f[1]));
	firing_loop(&f[0]);
	ASSERT_EQ(0, pthread_join(th, NULL));
	TH_LOG("%lu open/arm/close cycles in %.1f s, %lu events read before close",
	       f[0].iters + f[1].iters, (now_ns() - t0) / 1e9, f[0].events + f[1].events);
	EXPECT_EQ(0UL, f[0].errors + f[1].errors);
	EXPECT_LT(50UL, f[0].iters + f[1].iters);
	EXPECT_TRUE(fds_settle(self->fds0));
}

/* ------------------------------------------------ close under a waiter */

enum { W_READ, W_POLL, W_EPOLL };

/* A thread that blocks in one call per round (semaphores go and done). */
struct waiter {
	int kind, fd;		/* the wheel (read/poll) or the epoll fd */
	pthread_t thread;
	pid_t tid;
	int started, quit, fdbase;
	sem_t go, done;
	long ret;
	int err;
	uint64_t id;
	short revents;
};

static void *waiter_fn(void *arg)
{
	struct waiter *w = arg;
	struct timespec zero = { 0, 0 };
	struct twheel_event ev;
	struct epoll_event ee;
	struct pollfd p;
	sigset_t usr1;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	w->tid = gettid_();
	for (;;) {
		while (sem_wait(&w->go))
			;
		if (w->quit)
			return NULL;
		/* a kick of the last round may still be pending: drop it */
		while (sigtimedwait(&usr1, NULL, &zero) == SIGUSR1)
			;
		pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
		__atomic_store_n(&w->started, 1, __ATOMIC_RELEASE);
		errno = 0;
		memset(&ev, 0, sizeof(ev));
		memset(&ee, 0, sizeof(ee));
		switch (w->kind) {
		case W_READ:
			w->ret = read(w->fd, &ev, sizeof(ev));
			w->id = ev.id;
			break;
		case W_POLL:
			p.fd = w->fd;
			p.events = POLLIN;
			p.revents = 0;
			w->ret = poll(&p, 1, 10000);
			w->revents = p.revents;
			break;
		default:
			w->ret = epoll_wait(w->fd, &ee, 1, 10000);
			w->id = ee.data.u64;
		}
		w->err = errno;
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		sem_post(&w->done);
	}
}

/* sem_timedwait() for @ns at most; 0 once @sem was taken. */
static int sem_wait_ns(sem_t *sem, uint64_t ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ns += ts.tv_nsec;
	ts.tv_sec += ns / SEC;
	ts.tv_nsec = ns % SEC;
	return sem_timedwait(sem, &ts);
}

/* Items in an epoll set: "tfd:" lines of its fdinfo. */
static int epoll_items(int ep)
{
	char path[64], line[256];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "tfd:", 4);
	fclose(f);
	return n;
}

/*
 * One round.  Scenarios: 0 an expiry races the close of every fd (read,
 * poll: the waiter holds the last reference and must return; epoll: the
 * item goes at the close, a signal ends the wait); 1 every fd closed, then
 * a signal ends the wait; 2 (epoll) the watched fd closed while a dup
 * keeps the file: the item stays and reports the event.  Returns "" or
 * what went wrong.
 */
static const char *blocked_round(struct __test_metadata *_metadata,
				 struct rng *r, struct waiter *w, int sc,
				 unsigned long *outcome)
{
	struct epoll_event ee = { .events = EPOLLIN, .data.u64 = 77 };
	int kind = w->kind, a, b = -1, ep = -1, i, o;
	bool dup_it = sc == 2 || (kind != W_EPOLL && rng_pct(r, 50));
	bool kick = sc == 1 || (sc == 0 && kind == W_EPOLL);
	uint64_t t0;

	/*
	 * Fixed fd numbers, far above what open() hands out: a closed one is
	 * never reused by another driver before the waiter uses it.
	 */
	a = open_wheel(0);
	if (a < 0 || dup3(a, w->fdbase, O_CLOEXEC) < 0)
		return "open failed";
	close(a);
	a = w->fdbase;
	if (dup_it) {
		b = dup3(a, a + 1, O_CLOEXEC);
		if (b < 0)
			return "dup failed";
	}
	w->fd = a;
	if (kind == W_EPOLL) {
		ep = epoll_create1(EPOLL_CLOEXEC);
		if (ep < 0 || dup3(ep, a + 2, O_CLOEXEC) < 0)
			return "epoll_create failed";
		close(ep);
		ep = a + 2;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, a, &ee))
			return "epoll_ctl failed";
		w->fd = ep;
	}
	w->started = 0;
	w->ret = -2;
	sem_post(&w->go);
	t0 = now_ns();
	if (rng_pct(r, 60)) {		/* close while it surely sleeps */
		while (!__atomic_load_n(&w->started, __ATOMIC_ACQUIRE) ||
		       !thread_sleeping(w->tid)) {
			if (now_ns() - t0 > 200 * MS)
				break;
			sched_yield();
		}
	} else {
		sleep_ns(rng_range(r, 0, 300 * US));
	}
	if (sc == 0)
		arm1(b >= 0 ? b : a, 1, rng_range(r, 1, 2 * MS), 0, 0);
	if (sc == 2) {
		close(a);
		arm1(b, 1, rng_range(r, 1, 2 * MS), 0, 0);
	} else if (b >= 0 && rng_pct(r, 50)) {
		close(b);
		close(a);
	} else {
		close(a);
		if (b >= 0)
			close(b);
	}
	if (kick) {
		sleep_ns(rng_range(r, 0, 1 * MS));
		pthread_kill(w->thread, SIGUSR1);
	}
	for (t0 = now_ns(); sem_wait_ns(&w->done, kick ? 2 * MS : 100 * MS); ) {
		if (now_ns() - t0 > 10 * SEC) {
			TH_LOG("kind %d scenario %d: the waiter never returned", kind, sc);
			return "hang";
		}
		if (kick)
			pthread_kill(w->thread, SIGUSR1);
	}
	if (sc == 2) {
		i = epoll_items(ep);
		close(b);
		if (i != 1)
			return "epoll dropped an item whose file is still open";
	}
	if (ep >= 0) {
		i = epoll_items(ep);
		close(ep);
		if (i != 0)
			return "epoll set kept a closed wheel";
	}
	/*
	 * Outcomes: 1 the event (poll: POLLIN), 2 EINTR, 3 EBADF (read called
	 * after the close) or POLLNVAL (poll rescans its fds after any wakeup).
	 */
	o = 0;
	if (w->ret == 1 && kind == W_POLL)
		o = w->revents == POLLIN ? 1 : w->revents == POLLNVAL ? 3 : 0;
	else if (w->ret == 1 && kind == W_EPOLL && w->id == 77)
		o = 1;
	else if (w->ret == (long)EVSZ && kind == W_READ && w->id == 1)
		o = 1;
	else if (w->ret < 0 && w->err == EINTR)
		o = 2;
	else if (w->ret < 0 && w->err == EBADF && kind == W_READ)
		o = 3;
	if (!o) {
		TH_LOG("kind %d scenario %d: ret %ld errno %d revents %#x id %" PRIu64,
		       kind, sc, w->ret, w->err, w->revents, w->id);
		return "unexpected result";
	}
	if ((sc == 0 && o == 2 && kind != W_EPOLL) || (sc == 1 && o == 1) ||
	    (sc == 2 && o != 1)) {
		TH_LOG("kind %d scenario %d: outcome %d", kind, sc, o);
		return "wrong outcome for the scenario";
	}
	outcome[o]++;
	return "";
}

#define NDRV 4	/* drivers, each with its own waiter and fd numbers */

struct driver {
	struct __test_metadata *md;
	struct waiter w;
	struct rng r;
	uint64_t until;
	unsigned long outcome[4], rounds;
	const char *res;
};

static void *driver_fn(void *arg)
{
	struct driver *d = arg;

	while (now_ns() < d->until && d->rounds < 5000 && !*d->res) {
		int sc = rng_next(&d->r) % (d->w.kind == W_EPOLL ? 3 : 2);

		d->res = blocked_round(d->md, &d->r, &d->w, sc, d->outcome);
		d->rounds++;
	}
	if (strcmp(d->res, "hang")) {
		d->w.quit = 1;
		sem_post(&d->w.go);
		pthread_join(d->w.thread, NULL);
	}
	return NULL;
}

static void blocked_close(struct __test_metadata *_metadata, int kind, long fds0)
{
	uint64_t t0 = now_ns(), s;
	unsigned long outcome[4] = { 0 }, rounds = 0;
	static struct driver d[NDRV];
	pthread_t th[NDRV];
	int fd, k, o;

	OPEN_OR_SKIP(fd, 0);
	close(fd);
	THREADS_OR_SKIP();
	install_sigusr1();
	s = seed(_metadata);
	for (k = 0; k < NDRV; k++) {
		memset(&d[k], 0, sizeof(d[k]));
		d[k].md = _metadata;
		d[k].r.s = s + k;
		d[k].until = t0 + 10 * SEC;
		d[k].res = "";
		d[k].w.kind = kind;
		d[k].w.fdbase = 500 + 4 * k;
		ASSERT_EQ(0, sem_init(&d[k].w.go, 0, 0));
		ASSERT_EQ(0, sem_init(&d[k].w.done, 0, 0));
		ASSERT_EQ(0, pthread_create(&d[k].w.thread, NULL, waiter_fn, &d[k].w));
		ASSERT_EQ(0, pthread_create(&th[k], NULL, driver_fn, &d[k]));
	}
	for (k = 0; k < NDRV; k++) {
		ASSERT_EQ(0, pthread_join(th[k], NULL));
		ASSERT_STREQ("", d[k].res);
		rounds += d[k].rounds;
		for (o = 1; o < 4; o++)
			outcome[o] += d[k].outcome[o];
	}
	TH_LOG("%lu rounds in %.1f s: %lu events, %lu EINTR, %lu EBADF/POLLNVAL",
	       rounds, (now_ns() - t0) / 1e9, outcome[1], outcome[2], outcome[3]);
	EXPECT_LT(20UL, rounds);
	EXPECT_TRUE(fds_settle(fds0));
}

TEST_F_TIMEOUT(race, close_blocked_read, 120)
{
	blocked_close(_metadata, W_READ, self->fds0);
}

TEST_F_TIMEOUT(race, close_blocked_poll, 120)
{
	blocked_close(_metadata, W_POLL, self->fds0);
}

TEST_F_TIMEOUT(race, close_blocked_epoll, 120)
{
	blocked_close(_metadata, W_EPOLL, self->fds0);
}

/* --------------------------------------------------- fork/dup/close churn */

/* A child: dup, touch, arm, read, query, cancel, close; exit 0 if sane. */
static int churn_child(int fd, uint64_t s, uint64_t base)
{
	struct rng r = { s };
	struct twheel_event ev[8];
	struct twheel_query q;
	uint64_t ids[4], j, now;
	int k, d, i;
	ssize_t n;

	for (k = 0; k < 12; k++) {
		d = rng_pct(&r, 70) ? dup(fd) : fd;
		if (d < 0)
			return 10;
		for (i = 0; i < 4; i++)
			ids[i] = base + k * 4 + i;
		if (write(d, ids, sizeof(ids)) != sizeof(ids))
			return 11;
		memset(&q, 0, sizeof(q));
		q.id = ids[0];		/* default timeout 30 s: still armed */
		if (ioc(d, TWHEEL_IOC_QUERY, &q) || q.state != TWHEEL_STATE_ARMED)
			return 12;
		if (arm1(d, base + 1000 + k, rng_range(&r, 1, 2 * MS), 0, 0))
			return 13;
		n = read(d, ev, sizeof(ev));
		if (n < 0 && errno != EAGAIN)
			return 14;
		now = now_ns();
		for (j = 0; n > 0 && j < (uint64_t)n / EVSZ; j++)
			if (ev[j].expired_ns < ev[j].deadline_ns || now < ev[j].deadline_ns)
				return 15;
		if (rng_pct(&r, 50) && batch(d, TWHEEL_IOC_CANCEL, ids, 2, &j))
			return 16;
		if (d != fd)
			close(d);
		if (rng_pct(&r, 10))
			usleep(rng_range(&r, 0, 500));
	}
	if (rng_pct(&r, 50))
		close(fd);
	return 0;
}

TEST_F_TIMEOUT(race, fork_dup_churn, 120)
{
	uint64_t t0 = now_ns(), until = t0 + 8 * SEC;
	struct rng r = { seed(_metadata) };
	unsigned long rounds = 0, children = 0, reopen = 0;
	uint64_t id;
	int fd, i;

	OPEN_OR_SKIP(fd, O_NONBLOCK);
	while (now_ns() < until && rounds < 2000) {
		pid_t pid[3];
		int nc = 1 + rng_next(&r) % 3, d1, d2, st;

		ASSERT_EQ(0, arm1(fd, 1 + rounds, rng_range(&r, 1, 3 * MS), 0, 0));
		for (i = 0; i < nc; i++) {
			uint64_t s = rng_next(&r);

			fflush(NULL);
			pid[i] = fork();
			ASSERT_LE(0, pid[i]);
			if (!pid[i])
				_exit(churn_child(fd, s, ((uint64_t)rounds * 3 + i + 1) << 20));
		}
		d1 = dup(fd);
		d2 = dup(d1);
		ASSERT_LE(0, d2);
		id = rounds;
		ASSERT_EQ(8, write(d1, &id, 8));
		close(d1);
		if (rng_pct(&r, 30)) {	/* children may hold the last references */
			close(fd);
			fd = open_wheel(O_NONBLOCK);
			ASSERT_LE(0, fd);
			reopen++;
		}
		close(d2);
		for (i = 0; i < nc; i++) {
			uint64_t tw = now_ns();

			while (waitpid(pid[i], &st, WNOHANG) == 0) {
				ASSERT_GT(30 * SEC, now_ns() - tw) TH_LOG("child hangs");
				usleep(200);
			}
			ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
				TH_LOG("child status %#x", st);
			children++;
		}
		rounds++;
	}
	close(fd);
	TH_LOG("%lu rounds, %lu children, %lu reopens in %.1f s", rounds,
	       children, reopen, (now_ns() - t0) / 1e9);
	EXPECT_LE(2UL, rounds);
	EXPECT_TRUE(fds_settle(self->fds0));
}

/* ------------------------------------------- 8 threads, exactly once */

#define NTH		8
#define RIDS		32		/* ids per thread */
#define STO		(8 * MS)	/* the fd's default timeout */
#define SID(t, j)	(((uint64_t)(t) + 1) << 48 | (uint64_t)(j))

enum { A_ARM = 1, A_TOUCH, A_CANCEL };

/* What the owner did to an id: an event must match exactly one of these. */
struct act {
	uint64_t lo, hi;	/* the deadline it set, in [lo, hi] */
	uint64_t data;		/* ARM: its data; TOUCH: data kept (or 0) */
	uint8_t kind, used;
};

struct alog {
	struct act *a;
	size_t n, cap;
};

struct elog {
	struct twheel_event *e;
	size_t n, cap;
};

struct sthread {
	int fd, t;
	struct rng r;
	uint64_t until, gen;
	struct alog log[RIDS];
	uint64_t cur_data[RIDS];	/* data of the last ARM of each id */
	struct elog ev;
	uint64_t touches, arms, cancels, ops[8];
	struct twheel_stats last;
	char err[256];
};

static bool grow(void **p, size_t *cap, size_t n, size_t sz)
{
	void *q;

	if (n < *cap)
		return true;
	q = realloc(*p, (*cap ? 2 * *cap : 64) * sz);
	if (!q)
		return false;
	*p = q;
	*cap = *cap ? 2 * *cap : 64;
	return true;
}

static bool act_add(struct alog *l, int kind, uint64_t lo, uint64_t hi,
		    uint64_t data)
{
	struct act *a;

	if (!grow((void **)&l->a, &l->cap, l->n, sizeof(*a)))
		return false;
	a = &l->a[l->n++];
	a->lo = lo;
	a->hi = hi;
	a->data = data;
	a->kind = kind;
	a->used = 0;
	return true;
}

static bool ev_add(struct elog *l, const struct twheel_event *e)
{
	if (!grow((void **)&l->e, &l->cap, l->n, sizeof(*e)))
		return false;
	l->e[l->n++] = *e;
	return true;
}

/* Whether @a can have produced an event or QUERY answer (data, deadline). */
static bool act_match(const struct act *a, uint64_t data, uint64_t dl)
{
	if (a->kind == A_CANCEL || dl < a->lo || dl > a->hi)
		return false;
	return a->data == data || (a->kind == A_TOUCH && data == 0);
}

/* The owner of an id, or -1. */
static int sid_owner(uint64_t id, int *j)
{
	uint64_t t = (id >> 48) - 1, k = id & ((1ULL << 48) - 1);

	*j = 0;
	if (t >= NTH || k >= RIDS)
		return -1;
	*j = (int)k;
	return (int)t;
}

#define SFAIL(...) do {							\
	snprintf(s->err, sizeof(s->err), __VA_ARGS__);			\
	return false;							\
} while (0)

static bool s_read(struct sthread *s)
{
	struct twheel_event ev[16];
	ssize_t r = read(s->fd, ev, sizeof(ev));
	uint64_t now = now_ns();
	int i, j;

	if (r < 0 && errno == EAGAIN)
		return true;
	if (r <= 0 || r % EVSZ)
		SFAIL("read %zd: %s", r, strerror(errno));
	for (i = 0; i < r / (ssize_t)EVSZ; i++) {
		if (sid_owner(ev[i].id, &j) < 0)
			SFAIL("event of unknown id %#" PRIx64, (uint64_t)ev[i].id);
		if (ev[i].expired_ns < ev[i].deadline_ns || now < ev[i].deadline_ns)
			SFAIL("early event: id %#" PRIx64 " deadline %" PRIu64
			      " expired %" PRIu64 " now %" PRIu64, (uint64_t)ev[i].id,
			      (uint64_t)ev[i].deadline_ns, (uint64_t)ev[i].expired_ns, now);
		if (!ev_add(&s->ev, &ev[i]))
			SFAIL("out of memory");
	}
	return true;
}

static bool s_write(struct sthread *s)
{
	uint64_t ids[8], t0, t1;
	int k = 1 + rng_next(&s->r) % 8, j0 = rng_next(&s->r) % RIDS, i;
	ssize_t r;

	for (i = 0; i < k; i++)
		ids[i] = SID(s->t, (j0 + i) % RIDS);
	t0 = now_ns();
	r = write(s->fd, ids, k * 8);
	t1 = now_ns();
	if (r != k * 8)
		SFAIL("write %zd of %d: %s", r, k * 8, strerror(errno));
	for (i = 0; i < k; i++) {
		int j = (j0 + i) % RIDS;

		if (!act_add(&s->log[j], A_TOUCH, t0 + STO, t1 + STO, s->cur_data[j]))
			SFAIL("out of memory");
	}
	s->touches += k;
	return true;
}

static bool s_arm(struct sthread *s)
{
	struct twheel_arm e[8];
	struct twheel_batch b;
	uint64_t now = now_ns(), t0, t1, done;
	int k = 1 + rng_next(&s->r) % 8, j0 = rng_next(&s->r) % RIDS, i, ret;

	memset(e, 0, sizeof(e));
	for (i = 0; i < k; i++) {
		int how = rng_next(&s->r) % 10;

		e[i].id = SID(s->t, (j0 + i) % RIDS);
		e[i].data = ((uint64_t)s->t + 1) << 56 | ++s->gen;
		if (how < 4 || how == 9)
			e[i].timeout_ns = rng_range(&s->r, 1, STO - MS);
		if (how >= 4 && how < 8) {
			e[i].flags = TWHEEL_ARM_ABSTIME;
			e[i].timeout_ns = now - 2 * MS + rng_range(&s->r, 0, STO + MS);
		}
		if (how == 9)
			e[i].flags = TWHEEL_ARM_NOREPLACE;
	}
	memset(&b, 0, sizeof(b));
	b.ptr = (uint64_t)(uintptr_t)e;
	b.count = k;
	t0 = now_ns();
	ret = ioc(s->fd, TWHEEL_IOC_ARM, &b);
	t1 = now_ns();
	done = b.done;
	if (ret && (ret != -EEXIST || done >= (uint64_t)k ||
		    !(e[done].flags & TWHEEL_ARM_NOREPLACE)))
		SFAIL("ARM: %s, done %" PRIu64 " of %d", strerror(-ret), done, k);
	if (!ret && done != (uint64_t)k)
		SFAIL("ARM done %" PRIu64 " of %d", done, k);
	for (i = 0; i < (int)done; i++) {
		int j = (j0 + i) % RIDS;
		uint64_t x = e[i].timeout_ns ? e[i].timeout_ns : STO;
		bool abs = e[i].flags & TWHEEL_ARM_ABSTIME;

		if (!act_add(&s->log[j], A_ARM, abs ? x : t0 + x, abs ? x : t1 + x,
			     e[i].data))
			SFAIL("out of memory");
		s->cur_data[j] = e[i].data;
	}
	s->arms += done;
	return true;
}

static bool s_cancel(struct sthread *s)
{
	uint64_t ids[4], done;
	int k = 1 + rng_next(&s->r) % 4, j0 = rng_next(&s->r) % RIDS, i, ret;

	for (i = 0; i < k; i++)
		ids[i] = SID(s->t, (j0 + i) % RIDS);
	ret = batch(s->fd, TWHEEL_IOC_CANCEL, ids, k, &done);
	if (ret || done > (uint64_t)k)
		SFAIL("CANCEL: %d, done %" PRIu64, ret, done);
	for (i = 0; i < k; i++)
		if (!act_add(&s->log[(j0 + i) % RIDS], A_CANCEL, 0, 0, 0))
			SFAIL("out of memory");
	s->cancels += done;
	return true;
}

/* Only the owner changes its ids: QUERY agrees with its last action. */
static bool s_query(struct sthread *s)
{
	int j = rng_next(&s->r) % RIDS, ret;
	struct alog *l = &s->log[j];
	const struct act *a = l->n ? &l->a[l->n - 1] : NULL;
	struct twheel_query q;
	uint64_t now;

	memset(&q, 0, sizeof(q));
	q.id = SID(s->t, j);
	ret = ioc(s->fd, TWHEEL_IOC_QUERY, &q);
	now = now_ns();
	if (ret == -ENOENT) {
		if (a && a->kind != A_CANCEL && now < a->lo)
			SFAIL("id %#" PRIx64 " gone before its deadline", (uint64_t)q.id);
		return true;
	}
	if (ret)
		SFAIL("QUERY: %s", strerror(-ret));
	if (!a || a->kind == A_CANCEL)
		SFAIL("QUERY of a cancelled or never armed id %#" PRIx64, (uint64_t)q.id);
	if (!act_match(a, q.data, q.deadline_ns) || q.reserved ||
	    (q.state != TWHEEL_STATE_ARMED && q.state != TWHEEL_STATE_EXPIRED) ||
	    (q.state == TWHEEL_STATE_EXPIRED && q.deadline_ns > now))
		SFAIL("QUERY %#" PRIx64 ": state %u deadline %" PRIu64 " data %#" PRIx64
		      ", last action [%" PRIu64 ", %" PRIu64 "] data %#" PRIx64,
		      (uint64_t)q.id, q.state, (uint64_t)q.deadline_ns,
		      (uint64_t)q.data, a->lo, a->hi, a->data);
	return true;
}

static bool s_dump(struct sthread *s)
{
	struct twheel_arm out[32];
	struct twheel_dump d;
	int calls, i, j;

	memset(&d, 0, sizeof(d));
	for (calls = 0; calls < 64; calls++) {
		d.ptr = (uint64_t)(uintptr_t)out;
		d.count = 32;
		if (ioc(s->fd, TWHEEL_IOC_DUMP, &d))
			SFAIL("DUMP: %s", strerror(errno));
		if (!d.done)
			return true;
		if (d.done > 32)
			SFAIL("DUMP done %" PRIu64, (uint64_t)d.done);
		for (i = 0; i < (int)d.done; i++)
			if (sid_owner(out[i].id, &j) < 0 || out[i].reserved ||
			    out[i].flags != TWHEEL_ARM_ABSTIME)
				SFAIL("DUMP entry: id %#" PRIx64 " flags %#x",
				      (uint64_t)out[i].id, out[i].flags);
	}
	return true;
}

static bool s_stats(struct sthread *s)
{
	struct twheel_stats st;
	const uint64_t *a = (const uint64_t *)&st, *b = (const uint64_t *)&s->last;
	int i;

	memset(&st, 0xAA, sizeof(st));
	if (ioc(s->fd, TWHEEL_IOC_GET_STATS, &st))
		SFAIL("GET_STATS: %s", strerror(errno));
	for (i = 2; i < 18; i++)	/* touches .. bpf_absent */
		if (i != 9 && a[i] < b[i])	/* mem_bytes may shrink */
			SFAIL("stats counter %d went back: %" PRIu64 " < %" PRIu64,
			      i, a[i], b[i]);
	if (st.expirations != st.delivered + st.discarded + st.pending)
		SFAIL("expirations %" PRIu64 " != delivered %" PRIu64 " + discarded %"
		      PRIu64 " + pending %" PRIu64, (uint64_t)st.expirations,
		      (uint64_t)st.delivered, (uint64_t)st.discarded, (uint64_t)st.pending);
	for (i = 0; i < 2; i++)
		if (st.reserved[i])
			SFAIL("stats reserved[%d] = %#" PRIx64, i, (uint64_t)st.reserved[i]);
	s->last = st;
	return true;
}

static bool s_poll(struct sthread *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	if (poll(&p, 1, 1) < 0)
		SFAIL("poll: %s", strerror(errno));
	return true;
}

/* by weight: write 25, ARM 25, CANCEL 10, QUERY 10, read 15, DUMP, GET_STATS, poll 5 */
static bool (*const s_ops[8])(struct sthread *s) = {
	s_write, s_arm, s_cancel, s_query, s_read, s_dump, s_stats, s_poll,
};
static const unsigned char s_weight[8] = { 25, 50, 60, 70, 85, 90, 95, 100 };

static void *stress_fn(void *arg)
{
	struct sthread *s = arg;
	bool ok = true;

	while (ok && now_ns() < s->until) {
		unsigned int x = rng_next(&s->r) % 100, op = 0;

		while (x >= s_weight[op])
			op++;
		s->ops[op]++;
		ok = s_ops[op](s);
	}
	return NULL;
}

/* Log what is known of one id: its owner's actions, every event read. */
static void dump_id(struct __test_metadata *_metadata, struct sthread *s,
		    const struct elog *drain, uint64_t id)
{
	static const char *const kind[] = { "?", "ARM", "touch", "CANCEL" };
	const struct elog *l;
	struct alog *al;
	size_t i;
	int t, j;

	t = sid_owner(id, &j);
	if (t < 0)
		return;
	al = &s[t].log[j];
	for (i = 0; i < al->n; i++)
		TH_LOG("  action %zu: %s [%" PRIu64 ", %" PRIu64 "] data %#" PRIx64 "%s",
		       i, kind[al->a[i].kind], al->a[i].lo, al->a[i].hi,
		       al->a[i].data, al->a[i].used ? " (delivered)" : "");
	for (t = 0; t <= NTH; t++) {
		l = t < NTH ? &s[t].ev : drain;
		for (i = 0; i < l->n; i++)
			if (l->e[i].id == id)
				TH_LOG("  read by %d (#%zu): data %#" PRIx64 " deadline %"
				       PRIu64 " expired %" PRIu64, t, i,
				       (uint64_t)l->e[i].data, (uint64_t)l->e[i].deadline_ns,
				       (uint64_t)l->e[i].expired_ns);
	}
}

/*
 * Exactly once, per id: the events read must match distinct actions of the
 * owner (a bipartite matching, as a coarse clock can make the deadline
 * ranges of two touches share an end), and the last action, unless a
 * CANCEL, must match one of them.
 */
struct idm {
	const struct alog *al;
	const struct twheel_event **ev;
	int *owner_of;		/* action -> event index, or -1 */
	char *seen;
};

static bool augment(struct idm *m, int e)
{
	size_t i;

	for (i = 0; i < m->al->n; i++) {
		if (m->seen[i] || !act_match(&m->al->a[i], m->ev[e]->data,
					     m->ev[e]->deadline_ns))
			continue;
		m->seen[i] = 1;
		if (m->owner_of[i] < 0 || augment(m, m->owner_of[i])) {
			m->owner_of[i] = e;
			return true;
		}
	}
	return false;
}

static int ev_cmp(const void *x, const void *y)
{
	const struct twheel_event *a = *(const struct twheel_event *const *)x;
	const struct twheel_event *b = *(const struct twheel_event *const *)y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return a->deadline_ns < b->deadline_ns ? -1 : a->deadline_ns > b->deadline_ns;
}

static bool match_all(struct __test_metadata *_metadata, struct sthread *s,
		      const struct elog *drain, uint64_t *finals)
{
	const struct twheel_event **all;
	size_t n = drain->n, k = 0, i, lo, hi;
	bool ok = true;
	int t, j;

	for (t = 0; t < NTH; t++)
		n += s[t].ev.n;
	all = malloc((n + 1) * sizeof(*all));
	if (!all)
		return false;
	for (t = 0; t <= NTH; t++) {
		const struct elog *l = t < NTH ? &s[t].ev : drain;

		for (i = 0; i < l->n; i++)
			all[k++] = &l->e[i];
	}
	qsort(all, n, sizeof(*all), ev_cmp);
	for (lo = 0; ok && lo < n; lo = hi) {
		struct idm m;
		struct act *last;
		struct alog *al;

		for (hi = lo + 1; hi < n && all[hi]->id == all[lo]->id; hi++)
			;
		t = sid_owner(all[lo]->id, &j);	/* checked at read time */
		if (t < 0)
			return false;
		al = &s[t].log[j];
		m.al = al;
		m.ev = &all[lo];
		m.owner_of = malloc((al->n + 1) * sizeof(int));
		m.seen = malloc(al->n + 1);
		if (!m.owner_of || !m.seen)
			return false;
		memset(m.owner_of, 0xff, (al->n + 1) * sizeof(int));
		for (i = 0; ok && i < hi - lo; i++) {
			memset(m.seen, 0, al->n + 1);
			if (!augment(&m, i)) {
				TH_LOG("id %#" PRIx64 ": event (data %#" PRIx64 ", deadline %"
				       PRIu64 ") matches no action of its own (duplicate or never armed)",
				       (uint64_t)all[lo]->id, (uint64_t)m.ev[i]->data,
				       (uint64_t)m.ev[i]->deadline_ns);
				ok = false;
			}
		}
		for (i = 0; i < al->n; i++)
			al->a[i].used = m.owner_of[i] >= 0;
		/* an unmatched last action may take over any event it matches */
		last = al->n ? &al->a[al->n - 1] : NULL;
		for (i = 0; ok && last && !last->used && i < hi - lo; i++)
			last->used = act_match(last, m.ev[i]->data, m.ev[i]->deadline_ns);
		if (!ok)
			dump_id(_metadata, s, drain, all[lo]->id);
		free(m.owner_of);
		free(m.seen);
	}
	free(all);
	/* the last arm/touch of every id was delivered */
	for (t = 0; ok && t < NTH; t++) {
		for (j = 0; j < RIDS; j++) {
			struct alog *l = &s[t].log[j];
			const struct act *a = l->n ? &l->a[l->n - 1] : NULL;

			if (!a || a->kind == A_CANCEL)
				continue;
			++*finals;
			if (!a->used) {
				TH_LOG("id %#" PRIx64 ": last %s never delivered",
				       SID(t, j), a->kind == A_ARM ? "ARM" : "touch");
				dump_id(_metadata, s, drain, SID(t, j));
				ok = false;
			}
		}
	}
	return ok;
}

TEST_F_TIMEOUT(race, exactly_once_8_threads, 180)
{
	static struct sthread s[NTH];
	struct elog drain = { 0 };
	struct twheel_stats st;
	struct twheel_event ev[64];
	pthread_t th[NTH];
	uint64_t sd, t0 = now_ns(), touches = 0, arms = 0, cancels = 0, events = 0;
	uint64_t ops[8] = { 0 }, finals = 0;
	int fd, t, j, i;
	ssize_t r;

	OPEN_OR_SKIP(fd, O_NONBLOCK);
	THREADS_OR_SKIP();
	ASSERT_EQ(0, config_set(fd, TWHEEL_DEFAULT_TICK_NS, STO, 0));
	sd = seed(_metadata);
	for (t = 0; t < NTH; t++) {
		memset(&s[t], 0, sizeof(s[t]));
		s[t].fd = fd;
		s[t].t = t;
		s[t].r.s = sd + t * 0x1234567ULL;
		s[t].until = t0 + 5 * SEC;
		ASSERT_EQ(0, pthread_create(&th[t], NULL, stress_fn, &s[t]));
	}
	for (t = 0; t < NTH; t++)
		ASSERT_EQ(0, pthread_join(th[t], NULL));
	/* braces: the harness runs TH_LOG()'s statement after its own */
	for (t = 0; t < NTH; t++) {
		ASSERT_STREQ("", s[t].err) TH_LOG("thread %d", t);
	}

	/* drain: every deadline is at most STO away */
	do {
		ASSERT_EQ(0, ioc(fd, TWHEEL_IOC_GET_STATS, &st));
		ASSERT_GT(30 * SEC, now_ns() - t0) TH_LOG("%" PRIu64 " ids stay armed",
							(uint64_t)st.armed);
		r = read(fd, ev, sizeof(ev));
		for (i = 0; r > 0 && i < r / (ssize_t)EVSZ; i++) {
			ASSERT_TRUE(ev[i].expired_ns >= ev[i].deadline_ns);
			ASSERT_TRUE(ev_add(&drain, &ev[i]));
		}
		if (r < 0) {
			ASSERT_EQ(EAGAIN, errno);
			usleep(2000);
		}
	} while (r > 0 || st.armed || st.pending);
	ASSERT_EQ(0, ioc(fd, TWHEEL_IOC_GET_STATS, &st));
	for (t = 0; t < NTH; t++) {
		touches += s[t].touches;
		arms += s[t].arms;
		cancels += s[t].cancels;
		events += s[t].ev.n;
		for (i = 0; i < 8; i++)
			ops[i] += s[t].ops[i];
	}
	events += drain.n;
	TH_LOG("ops: %" PRIu64 " write, %" PRIu64 " ARM, %" PRIu64 " CANCEL, %" PRIu64
	       " QUERY, %" PRIu64 " read, %" PRIu64 " DUMP, %" PRIu64 " GET_STATS, %"
	       PRIu64 " poll in %.1f s", ops[0], ops[1], ops[2], ops[3], ops[4],
	       ops[5], ops[6], ops[7], (now_ns() - t0) / 1e9);
	TH_LOG("%" PRIu64 " events (%zu at the drain), %" PRIu64 " discarded, %"
	       PRIu64 " timer fires, late max %" PRIu64 " us", events, drain.n,
	       (uint64_t)st.discarded, (uint64_t)st.timer_fires,
	       (uint64_t)st.late_max_ns / 1000);
	EXPECT_EQ(0ULL, st.armed);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(st.expirations, st.delivered + st.discarded);
	EXPECT_EQ(events, st.delivered);
	EXPECT_EQ(touches, st.touches);
	EXPECT_EQ(arms, st.arms);
	EXPECT_EQ(cancels, st.cancels);

	/* every event matches one arm/touch of its owner, none twice */
	ASSERT_TRUE(match_all(_metadata, s, &drain, &finals));
	TH_LOG("%" PRIu64 " ids ended armed, each delivered once", finals);
	for (t = 0; t < NTH; t++) {
		for (j = 0; j < RIDS; j++)
			free(s[t].log[j].a);
		free(s[t].ev.e);
	}
	free(drain.e);
	close(fd);
	EXPECT_TRUE(fds_settle(self->fds0));
}

/* ------------------------------------------- growing, 8 threads at once */

#define GTH		8
#define GBATCH		8		/* new ids per call */
#define GCALLS		48		/* calls per thread and round */

struct gthread {
	int fd, t;
	pthread_barrier_t *go;
	unsigned long calls, ids;
	char err[128];
};

/* New ids only: ARM from even threads, write() from odd ones. */
static void *grow_fn(void *arg)
{
	struct gthread *g = arg;
	struct twheel_arm a[GBATCH];
	uint64_t ids[GBATCH], done;
	int c, i, ret;

	pthread_barrier_wait(g->go);
	for (c = 0; c < GCALLS && !g->err[0]; c++) {
		for (i = 0; i < GBATCH; i++) {
			ids[i] = ((uint64_t)g->t + 1) << 48 | (uint64_t)(c * GBATCH + i);
			memset(&a[i], 0, sizeof(a[i]));
			a[i].id = ids[i];
			a[i].timeout_ns = 3600 * SEC;
		}
		if (g->t % 2 == 0) {
			ret = arm_n(g->fd, a, GBATCH, &done);
			if (ret || done != GBATCH)
				snprintf(g->err, sizeof(g->err), "ARM: %s, done %" PRIu64 " of %d",
					 strerror(-ret), done, GBATCH);
		} else {
			ssize_t w = write(g->fd, ids, sizeof(ids));

			if (w != (ssize_t)sizeof(ids))
				snprintf(g->err, sizeof(g->err), "write: %zd of %zu (%s)",
					 w, sizeof(ids), w < 0 ? strerror(errno) : "short");
		}
		g->calls++;
		g->ids += GBATCH;
	}
	return NULL;
}

/*
 * Every round a fresh wheel, grown from its smallest index by 8 threads
 * adding new ids at once: every call adds all its ids.  A caller that
 * allocates a bigger table with the lock dropped must not find, once it
 * has the lock again, that another's resize left no room for its own
 * batch (ENOMEM with memory to spare, once in race.exactly_once_8_threads
 * on the debug kernel).
 */
TEST_F_TIMEOUT(race, grow_contended, 120)
{
	static struct gthread g[GTH];
	pthread_barrier_t go;
	pthread_t th[GTH];
	struct twheel_stats st;
	uint64_t t0 = now_ns(), rounds = 0, ids = 0;
	int fd, t;

	THREADS_OR_SKIP();
	while (now_ns() - t0 < 5 * SEC) {
		fd = open_wheel(0);
		ASSERT_LE(0, fd);
		ASSERT_EQ(0, config_set(fd, 0, 3600 * SEC, 0));
		ASSERT_EQ(0, pthread_barrier_init(&go, NULL, GTH));
		for (t = 0; t < GTH; t++) {
			memset(&g[t], 0, sizeof(g[t]));
			g[t].fd = fd;
			g[t].t = t;
			g[t].go = &go;
			ASSERT_EQ(0, pthread_create(&th[t], NULL, grow_fn, &g[t]));
		}
		for (t = 0; t < GTH; t++)
			ASSERT_EQ(0, pthread_join(th[t], NULL));
		pthread_barrier_destroy(&go);
		for (t = 0; t < GTH; t++) {
			ASSERT_STREQ("", g[t].err) TH_LOG("round %" PRIu64 ", thread %d",
							  rounds, t);
		}
		ASSERT_EQ(0, ioc(fd, TWHEEL_IOC_GET_STATS, &st));
		ASSERT_EQ((uint64_t)GTH * GCALLS * GBATCH, st.armed);
		ids += st.armed;
		close(fd);
		rounds++;
	}
	TH_LOG("%" PRIu64 " rounds, %" PRIu64 " ids in %.1f s", rounds, ids,
	       (now_ns() - t0) / 1e9);
	EXPECT_TRUE(fds_settle(self->fds0));
}

TEST_HARNESS_MAIN
