// SPDX-License-Identifier: GPL-2.0
/*
 * Contender "libev": one ev_timer per id in a malloc'd record (the map id
 * -> record of c_lib.c) and one ev loop.  A touch is ev_timer_again() with
 * the timer's repeat set to the timeout (libev's idiom for an inactivity
 * timeout: the timer moves in the loop's 4-heap); arm_abs() stops the
 * timer and starts it again with its own delay.  Expirations are the
 * timers' callbacks, run by ev_run(): EVRUN_ONCE with one more timer due
 * at wait()'s @until, EVRUN_NOWAIT once it has passed.  The callback
 * reports the id, stops its timer (the repeat would start it again) and
 * frees its record.
 *
 * Clock: libev's timers run on CLOCK_MONOTONIC, the bench's clock, as a
 * double in seconds cached in the loop; a timer started with a delay
 * fires once that cache is past the cached time it was started at plus
 * the delay.  The cache is refreshed (ev_now_update()) after the bench
 * read its clock, so it is never behind the bench's, and a deadline D
 * becomes the delay D - (the bench's clock) + LEV_SLACK: never early.
 */
#include <errno.h>
#include <stdlib.h>
#include <ev.h>

#include "bench.h"

/* against the rounding of libev's doubles: ~1e-10 s at 1e6 s of uptime */
#define LEV_SLACK	0.000001

struct lev_rec {
	ev_timer t;		/* first: the callback gets &t */
	uint64_t id;
	uint64_t deadline;	/* as asked for, on the bench's clock */
};

struct lev {
	struct lib_contender l;	/* first: the bench's struct contender */
	struct ev_loop *loop;
	ev_timer until;		/* ends an EVRUN_ONCE of wait() */
	ev_tstamp repeat;	/* the touch timeout, with LEV_SLACK */
};

static struct lev *lev_of(struct contender *c)
{
	return (struct lev *)c;
}

/* The delay for @deadline from @now, the bench's clock before the cache's */
static ev_tstamp lev_delay(uint64_t deadline, uint64_t now)
{
	return deadline > now ? (double)(deadline - now) / 1e9 + LEV_SLACK : 0;
}

static void lev_expired(struct ev_loop *loop, ev_timer *w, int revents)
{
	struct lev *p = ev_userdata(loop);
	struct lev_rec *r = (struct lev_rec *)w;

	(void)revents;
	ev_timer_stop(loop, w);
	lib_expire(&p->l, r->id, r->deadline);
	free(r);
}

static void lev_until(struct ev_loop *loop, ev_timer *w, int revents)
{
	(void)loop;
	(void)w;
	(void)revents;
}

static int lev_run(struct lib_contender *l, uint64_t now, uint64_t until)
{
	struct lev *p = (struct lev *)l;

	if (now >= until) {
		ev_run(p->loop, EVRUN_NOWAIT);
		return 0;
	}
	ev_now_update(p->loop);
	ev_timer_set(&p->until, lev_delay(until, now), 0);
	ev_timer_start(p->loop, &p->until);
	ev_run(p->loop, EVRUN_ONCE);
	ev_timer_stop(p->loop, &p->until);
	return 0;
}

static int lev_open(struct contender **cp, const struct copts *o)
{
	struct lev *p = xcalloc(1, sizeof(*p));

	p->loop = ev_loop_new(EVFLAG_AUTO);
	if (!p->loop) {
		free(p);
		return -ENOMEM;
	}
	ev_set_userdata(p->loop, p);
	ev_timer_init(&p->until, lev_until, 0, 0);
	p->repeat = (double)o->timeout_ns / 1e9 + LEV_SLACK;
	lib_init(&p->l, o, sizeof(struct lev_rec), lev_run);
	*cp = &p->l.c;
	return 0;
}

/*
 * The record of @id, due at @deadline, its timer initialised if new;
 * NULL: out of memory
 */
static struct lev_rec *lev_rec(struct lev *p, uint64_t id, uint64_t deadline)
{
	int added;
	struct lev_rec *r = lib_get(&p->l, id, &added);

	if (!r)
		return NULL;
	if (added) {
		ev_timer_init(&r->t, lev_expired, 0, p->repeat);
		r->id = id;
	}
	r->deadline = deadline;
	return r;
}

static int lev_arm_abs(struct contender *c, const uint64_t *ids,
		       const uint64_t *deadlines, size_t n)
{
	struct lev *p = lev_of(c);
	uint64_t now = mono_ns();
	size_t i;

	ev_now_update(p->loop);
	for (i = 0; i < n; i++) {
		struct lev_rec *r = lev_rec(p, ids[i], deadlines[i]);

		if (!r)
			return -ENOMEM;
		ev_timer_stop(p->loop, &r->t);
		ev_timer_set(&r->t, lev_delay(deadlines[i], now), p->repeat);
		ev_timer_start(p->loop, &r->t);
	}
	return 0;
}

static int lev_touch(struct contender *c, const uint64_t *ids, size_t n,
		     uint64_t now)
{
	struct lev *p = lev_of(c);
	uint64_t deadline = now + c->o.timeout_ns;
	size_t i;

	/* the loop's cached time, as a callback of the loop would see it */
	ev_now_update(p->loop);
	for (i = 0; i < n; i++) {
		struct lev_rec *r = lev_rec(p, ids[i], deadline);

		if (!r)
			return -ENOMEM;
		ev_timer_again(p->loop, &r->t);
	}
	return 0;
}

static void lev_close(struct contender *c)
{
	struct lev *p = lev_of(c);

	/* the loop frees its own arrays, never a watcher: records after it */
	ev_loop_destroy(p->loop);
	lib_free_all(&p->l, NULL);
	free(p);
}

const struct contender_ops libev_ops =
	CONTENDER_OPS("libev", lev_open, lev_arm_abs,
		      lev_touch, lib_wait, lev_close, NULL);
