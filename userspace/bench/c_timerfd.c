// SPDX-License-Identifier: GPL-2.0
/*
 * Contender "timerfd": one timerfd per id, all in one epoll set, and a hash
 * map id -> slot (fd, deadline).  A new id costs timerfd_create() +
 * epoll_ctl(); a touch is one timerfd_settime() with an absolute deadline
 * (the bench's clock read once per batch, as twheel reads its clock once
 * per chunk); an expiration is an epoll event plus a read() of the fd,
 * after which the id is done and its timerfd closed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define EP_EVENTS	1024

struct tfd {
	struct contender c;
	int ep;
	struct hmap map;	/* id -> slot */
	uint64_t nr, cap;
	int *fds;
	uint64_t *free_slots, nfree;	/* slots of closed timerfds */
	uint64_t *ids;
	uint64_t *deadlines;
	struct epoll_event *evs;
};

static struct tfd *tfd_of(struct contender *c)
{
	return (struct tfd *)c;
}

uint64_t timerfd_count(struct contender *c)
{
	return tfd_of(c)->nr;
}

static int tfd_open(struct contender **cp, const struct copts *o)
{
	struct tfd *t = xcalloc(1, sizeof(*t));

	t->ep = epoll_create1(EPOLL_CLOEXEC);
	if (t->ep < 0) {
		int err = -errno;

		free(t);
		return err;
	}
	hmap_init(&t->map, o->n_max);
	t->cap = o->n_max ? o->n_max : 1;
	t->fds = xcalloc(t->cap, sizeof(*t->fds));
	t->free_slots = xcalloc(t->cap, sizeof(*t->free_slots));
	t->ids = xcalloc(t->cap, sizeof(*t->ids));
	t->deadlines = xcalloc(t->cap, sizeof(*t->deadlines));
	t->evs = xcalloc(EP_EVENTS, sizeof(*t->evs));
	*cp = &t->c;
	return 0;
}

static void *xrealloc(void *p, size_t n, size_t size)
{
	p = realloc(p, n * size);
	if (!p)
		die("out of memory");
	return p;
}

/* Room for more slots than announced (ids in flight when falling behind). */
static void tfd_grow(struct tfd *t)
{
	t->cap *= 2;
	t->fds = xrealloc(t->fds, t->cap, sizeof(*t->fds));
	t->free_slots = xrealloc(t->free_slots, t->cap, sizeof(*t->free_slots));
	t->ids = xrealloc(t->ids, t->cap, sizeof(*t->ids));
	t->deadlines = xrealloc(t->deadlines, t->cap, sizeof(*t->deadlines));
}

/* The slot of @id, creating its timerfd if needed; -errno on failure. */
static int64_t tfd_slot(struct tfd *t, uint64_t id)
{
	struct epoll_event ev = { .events = EPOLLIN };
	uint64_t slot;
	int added, fd;
	uint64_t *v = hmap_upsert(&t->map, id, &added);

	if (!added)
		return (int64_t)*v;
	if (t->nfree) {
		slot = t->free_slots[--t->nfree];
	} else {
		if (t->nr == t->cap)
			tfd_grow(t);
		slot = t->nr++;
	}
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (fd < 0)
		goto fail;
	ev.data.u64 = slot;
	if (epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &ev)) {
		int err = errno;

		close(fd);
		errno = err;
		goto fail;
	}
	t->fds[slot] = fd;
	t->ids[slot] = id;
	*v = slot;
	t->c.n_ids = t->map.nr;
	return (int64_t)slot;
fail:
	{
		int err = errno;

		t->free_slots[t->nfree++] = slot;
		hmap_delete(&t->map, id);
		return -err;
	}
}

static int tfd_set(struct tfd *t, uint64_t id, uint64_t deadline)
{
	struct itimerspec its = { .it_value = ns_timespec(deadline) };
	int64_t s = tfd_slot(t, id);

	if (s < 0)
		return (int)s;
	if (timerfd_settime(t->fds[s], TFD_TIMER_ABSTIME, &its, NULL))
		return -errno;
	t->deadlines[s] = deadline;
	return 0;
}

static int tfd_arm_abs(struct contender *c, const uint64_t *ids,
		       const uint64_t *deadlines, size_t n)
{
	struct tfd *t = tfd_of(c);
	size_t i;

	for (i = 0; i < n; i++) {
		int err = tfd_set(t, ids[i], deadlines[i]);

		if (err)
			return err;
	}
	return 0;
}

static int tfd_touch(struct contender *c, const uint64_t *ids, size_t n,
		     uint64_t now)
{
	struct tfd *t = tfd_of(c);
	uint64_t deadline = now + c->o.timeout_ns;
	size_t i;

	for (i = 0; i < n; i++) {
		int err = tfd_set(t, ids[i], deadline);

		if (err)
			return err;
	}
	return 0;
}

/* One epoll_pwait2() until @until at the latest, and its expirations */
static int tfd_look(struct contender *c, uint64_t now, uint64_t until,
		    struct sink *s)
{
	struct tfd *t = tfd_of(c);
	struct timespec ts = ns_timespec(now < until ? until - now : 0);
	uint64_t seen;
	int r, i;

	r = epoll_pwait2(t->ep, t->evs, EP_EVENTS, &ts, NULL);
	if (r < 0)
		return errno == EINTR ? 0 : -errno;
	/* one clock read per epoll batch, as twheel per read() */
	seen = mono_ns();
	for (i = 0; i < r; i++) {
		uint64_t slot = t->evs[i].data.u64, ticks;
		struct bench_event e = {
			.id = t->ids[slot],
			.deadline = t->deadlines[slot],
			.queued = 0,
			.seen = seen,
		};

		/* a touch between the wakeup and here disarms it */
		if (read(t->fds[slot], &ticks, sizeof(ticks)) != sizeof(ticks))
			continue;
		/* the id is done: close its timerfd */
		close(t->fds[slot]);
		t->fds[slot] = -1;
		hmap_delete(&t->map, t->ids[slot]);
		t->free_slots[t->nfree++] = slot;
		t->c.n_ids = t->map.nr;
		s->fn(s, &e);
	}
	return 0;
}

static int tfd_wait(struct contender *c, uint64_t until, struct sink *s)
{
	return wait_loop(c, until, s, tfd_look);
}

static void tfd_close(struct contender *c)
{
	struct tfd *t = tfd_of(c);
	uint64_t i;

	close(t->ep);
	for (i = 0; i < t->nr; i++)
		if (t->fds[i] >= 0)
			close(t->fds[i]);
	hmap_free(&t->map);
	free(t->fds);
	free(t->free_slots);
	free(t->ids);
	free(t->deadlines);
	free(t->evs);
	free(t);
}

const struct contender_ops timerfd_ops =
	CONTENDER_OPS("timerfd", tfd_open, tfd_arm_abs,
		      tfd_touch, tfd_wait, tfd_close, NULL);
