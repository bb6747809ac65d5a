// SPDX-License-Identifier: GPL-2.0
/*
 * Contender "libevent": one timer event per id, assigned into a malloc'd
 * record (the map id -> record of c_lib.c), and one event base.  A touch
 * is event_add() with the base's common timeout of the touch timeout (a
 * FIFO list per duration instead of the min-heap: libevent's idiom for
 * many timers of one duration), run from a callback of the base's loop
 * as a service's touches would be; arm_abs() adds each event with its
 * own timeval, into the min-heap.  Expirations are the events' callbacks,
 * run by event_base_loop(): EVLOOP_ONCE with one more timer event due at
 * wait()'s @until, with EVLOOP_NONBLOCK too once it has passed (one
 * iteration: EVLOOP_NONBLOCK alone iterates until one finds nothing).
 * The callback reports the id and frees its record (the event is no
 * longer pending); in a touch's iteration it puts the expiration off to
 * the next wait().
 *
 * Clock: the base is made with EVENT_BASE_FLAG_PRECISE_TIMER, so its clock
 * is CLOCK_MONOTONIC, the bench's, in microseconds, truncated; without it,
 * it is CLOCK_MONOTONIC_COARSE, a tick or more behind, which would make
 * deadlines early.  event_add() adds the duration to the time cached for
 * the loop's iteration (read after the bench's clock for a touch), or to
 * the clock it reads outside the loop (arm_abs(): read after the bench's
 * clock), so a duration rounded up to microseconds plus one microsecond
 * for the truncation is never early.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <event2/event.h>

#include "bench.h"

struct levt_rec {
	uint64_t id;
	uint64_t deadline;	/* as asked for, on the bench's clock */
	/* the struct event: event_get_struct_event_size() bytes */
	uint64_t ev[];
};

struct levt {
	struct lib_contender l;	/* first: the bench's struct contender */
	struct event_base *base;
	const struct timeval *common;	/* the touch timeout's common timeout */
	struct event *until;	/* ends an EVLOOP_ONCE of wait() */
	struct event *toucher;	/* runs a touch batch in the loop */
	const uint64_t *ids;	/* the batch of the touch running */
	size_t n;
	uint64_t deadline;
	int err;
};

static struct levt *levt_of(struct contender *c)
{
	return (struct levt *)c;
}

static struct event *levt_ev(struct levt_rec *r)
{
	return (struct event *)r->ev;
}

static struct levt_rec *levt_rec_of(struct event *ev)
{
	return (struct levt_rec *)((char *)ev - offsetof(struct levt_rec, ev));
}

/* @ns as a timeval, rounded up to microseconds, plus one for truncation */
static struct timeval levt_tv(uint64_t ns)
{
	uint64_t us = div_up(ns, 1000) + 1;

	return (struct timeval){
		.tv_sec = (time_t)(us / 1000000),
		.tv_usec = (suseconds_t)(us % 1000000),
	};
}

static void levt_expired(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval at_once;
	struct levt *p = arg;
	struct event *ev = event_base_get_running_event(p->base);
	struct levt_rec *r = levt_rec_of(ev);

	(void)fd;
	(void)what;
	/*
	 * Expired in a touch's iteration: due again at once, for the next
	 * wait() to report, unless a touch re-arms the id first (as a touch
	 * of an expired id does that the other contenders have not reported)
	 */
	if (!p->l.sink) {
		event_add(ev, &at_once);
		return;
	}
	lib_expire(&p->l, r->id, r->deadline);
	free(r);
}

static void levt_until(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/*
 * The record of @id, due at @deadline, its event assigned if new; NULL:
 * out of memory
 */
static struct levt_rec *levt_rec(struct levt *p, uint64_t id, uint64_t deadline)
{
	int added;
	struct levt_rec *r = lib_get(&p->l, id, &added);

	if (!r)
		return NULL;
	if (added) {
		event_assign(levt_ev(r), p->base, -1, 0, levt_expired, p);
		r->id = id;
	}
	r->deadline = deadline;
	return r;
}

/* The touch batch, from the loop: event_add() reads the cached time. */
static void levt_touch_cb(evutil_socket_t fd, short what, void *arg)
{
	struct levt *p = arg;
	size_t i;

	(void)fd;
	(void)what;
	for (i = 0; i < p->n; i++) {
		struct levt_rec *r = levt_rec(p, p->ids[i], p->deadline);

		if (!r) {
			p->err = -ENOMEM;
			return;
		}
		if (event_add(levt_ev(r), p->common)) {
			p->err = -EINVAL;
			return;
		}
	}
}

/*
 * libev's emulation of libevent defines event_add(), event_base_loop()
 * and more: libev is linked statically after libevent_core (Makefile), so
 * that none of them comes in.  Had one, the version would say so.
 */
static int levt_check_lib(void)
{
	if (strncmp(event_get_version(), "2.", 2)) {
		fprintf(stderr, "libevent: version %s: libev's libevent emulation\n",
			event_get_version());
		return -ELIBBAD;
	}
	return 0;
}

static struct event_base *levt_base(void)
{
	struct event_config *cfg = event_config_new();
	struct event_base *base;

	if (!cfg)
		return NULL;
	event_config_set_flag(cfg, EVENT_BASE_FLAG_PRECISE_TIMER);
	base = event_base_new_with_config(cfg);
	event_config_free(cfg);
	return base;
}

static int levt_run(struct lib_contender *l, uint64_t now, uint64_t until)
{
	struct levt *p = (struct levt *)l;
	struct timeval tv;
	int flags = EVLOOP_ONCE;

	if (now >= until) {
		flags |= EVLOOP_NONBLOCK;
	} else {
		tv = levt_tv(until - now);
		event_add(p->until, &tv);
	}
	if (event_base_loop(p->base, flags) < 0)
		return -EIO;
	event_del(p->until);
	return 0;
}

static int levt_open(struct contender **cp, const struct copts *o)
{
	struct levt *p;
	struct timeval tv = levt_tv(o->timeout_ns);
	int err = levt_check_lib();

	if (err)
		return err;
	p = xcalloc(1, sizeof(*p));
	p->base = levt_base();
	if (!p->base) {
		free(p);
		return -ENOMEM;
	}
	p->until = evtimer_new(p->base, levt_until, p);
	p->toucher = event_new(p->base, -1, 0, levt_touch_cb, p);
	p->common = event_base_init_common_timeout(p->base, &tv);
	if (!p->until || !p->toucher || !p->common)
		die("libevent: setting up the base failed");
	lib_init(&p->l, o, sizeof(struct levt_rec) + event_get_struct_event_size(),
		 levt_run);
	*cp = &p->l.c;
	return 0;
}

static int levt_arm_abs(struct contender *c, const uint64_t *ids,
			const uint64_t *deadlines, size_t n)
{
	struct levt *p = levt_of(c);
	uint64_t now = mono_ns();
	size_t i;

	for (i = 0; i < n; i++) {
		struct levt_rec *r = levt_rec(p, ids[i], deadlines[i]);
		struct timeval tv;

		if (!r)
			return -ENOMEM;
		tv = levt_tv(deadlines[i] > now ? deadlines[i] - now : 0);
		if (event_add(levt_ev(r), &tv))
			return -EINVAL;
	}
	return 0;
}

/*
 * One iteration of the loop runs the batch, as the callback of a service's
 * socket would (and puts off what expired to the next wait()).
 */
static int levt_touch(struct contender *c, const uint64_t *ids, size_t n,
		      uint64_t now)
{
	struct levt *p = levt_of(c);

	p->ids = ids;
	p->n = n;
	p->deadline = now + c->o.timeout_ns;
	p->err = 0;
	p->l.seen = 0;
	event_active(p->toucher, 0, 0);
	if (event_base_loop(p->base, EVLOOP_ONCE | EVLOOP_NONBLOCK) < 0)
		return -EIO;
	return p->err;
}

static void levt_close(struct contender *c)
{
	struct levt *p = levt_of(c);

	event_free(p->until);
	event_free(p->toucher);
	/* the base deletes every event still added: records after it */
	event_base_free(p->base);
	lib_free_all(&p->l, NULL);
	free(p);
}

const struct contender_ops libevent_ops =
	CONTENDER_OPS("libevent", levt_open, levt_arm_abs,
		      levt_touch, lib_wait, levt_close, NULL);
