// SPDX-License-Identifier: GPL-2.0
/*
 * Contender "libuv": one uv_timer_t per id in a malloc'd record (the map
 * id -> record of c_lib.c) and one loop.  A touch is uv_timer_start() with
 * the timeout (it stops the timer and starts it again: the loop's min-heap
 * of timers); arm_abs() is the same with each id's own timeout.
 * Expirations are the timers' callbacks, run by uv_run(): UV_RUN_ONCE with
 * one more timer due at wait()'s @until, UV_RUN_NOWAIT once it has passed.
 * The callback reports the id and closes its timer; the record is freed
 * when the loop has closed it (its next iteration).
 *
 * Clock: the loop's time is milliseconds, truncated, of CLOCK_MONOTONIC
 * (or of CLOCK_MONOTONIC_COARSE where that ticks every millisecond or
 * faster: libuv's choice), cached in the loop and refreshed by
 * uv_update_time() after the bench read its clock.  It never runs ahead of
 * CLOCK_MONOTONIC, and a timer fires once it has reached uv_now() at start
 * plus the timeout, so a deadline D becomes the timeout ceil(D / 1 ms) -
 * uv_now() and cannot fire early, whatever the clock's lag.
 */
#include <errno.h>
#include <stdlib.h>
#include <uv.h>

#include "bench.h"

struct luv_rec {
	uv_timer_t t;		/* first: the callbacks get &t */
	uint64_t id;
	uint64_t deadline;	/* as asked for, on the bench's clock */
};

struct luv {
	struct lib_contender l;	/* first: the bench's struct contender */
	uv_loop_t loop;
	uv_timer_t until;	/* ends a UV_RUN_ONCE of wait() */
	uv_check_t check;	/* after the poll, before the timers again */
};

static struct luv *luv_of(struct contender *c)
{
	return (struct luv *)c;
}

/* The timeout for @deadline from the loop's time, in milliseconds */
static uint64_t luv_ms(struct luv *p, uint64_t deadline)
{
	uint64_t due = div_up(deadline, NSEC_PER_MSEC), now = uv_now(&p->loop);

	return due > now ? due - now : 0;
}

static void luv_free(uv_handle_t *h)
{
	free(h);
}

static void luv_expired(uv_timer_t *t)
{
	struct luv *p = t->loop->data;
	struct luv_rec *r = (struct luv_rec *)t;

	lib_expire(&p->l, r->id, r->deadline);
	uv_close((uv_handle_t *)t, luv_free);
}

static void luv_until(uv_timer_t *t)
{
	(void)t;
}

/* UV_RUN_ONCE runs the timers before and after its poll: a new batch */
static void luv_check(uv_check_t *h)
{
	((struct luv *)h->loop->data)->l.seen = 0;
}

static int luv_run(struct lib_contender *l, uint64_t now, uint64_t until)
{
	struct luv *p = (struct luv *)l;

	if (now >= until) {
		uv_run(&p->loop, UV_RUN_NOWAIT);
		return 0;
	}
	uv_update_time(&p->loop);
	uv_timer_start(&p->until, luv_until, luv_ms(p, until), 0);
	uv_run(&p->loop, UV_RUN_ONCE);
	uv_timer_stop(&p->until);
	return 0;
}

static int luv_open(struct contender **cp, const struct copts *o)
{
	struct luv *p = xcalloc(1, sizeof(*p));
	int err = uv_loop_init(&p->loop);

	if (err) {
		free(p);
		return err;
	}
	p->loop.data = p;
	uv_timer_init(&p->loop, &p->until);
	uv_check_init(&p->loop, &p->check);
	uv_check_start(&p->check, luv_check);
	uv_unref((uv_handle_t *)&p->check);
	lib_init(&p->l, o, sizeof(struct luv_rec), luv_run);
	*cp = &p->l.c;
	return 0;
}

/*
 * @id due at @deadline, its timer started for @ms: its record, with its
 * timer initialised if new
 */
static int luv_set(struct luv *p, uint64_t id, uint64_t deadline,
		   uint64_t ms)
{
	int added;
	struct luv_rec *r = lib_get(&p->l, id, &added);

	if (!r)
		return -ENOMEM;
	if (added) {
		uv_timer_init(&p->loop, &r->t);
		r->id = id;
	}
	r->deadline = deadline;
	return uv_timer_start(&r->t, luv_expired, ms, 0);
}

static int luv_arm_abs(struct contender *c, const uint64_t *ids,
		       const uint64_t *deadlines, size_t n)
{
	struct luv *p = luv_of(c);
	size_t i;

	uv_update_time(&p->loop);
	for (i = 0; i < n; i++) {
		int err = luv_set(p, ids[i], deadlines[i],
				  luv_ms(p, deadlines[i]));

		if (err)
			return err;
	}
	return 0;
}

static int luv_touch(struct contender *c, const uint64_t *ids, size_t n,
		     uint64_t now)
{
	struct luv *p = luv_of(c);
	uint64_t deadline = now + c->o.timeout_ns, ms;
	size_t i;

	/* the loop's cached time, as a callback of the loop would see it */
	uv_update_time(&p->loop);
	ms = luv_ms(p, deadline);
	for (i = 0; i < n; i++) {
		int err = luv_set(p, ids[i], deadline, ms);

		if (err)
			return err;
	}
	return 0;
}

static void luv_dispose(void *rec)
{
	uv_close((uv_handle_t *)rec, luv_free);
}

static void luv_close(struct contender *c)
{
	struct luv *p = luv_of(c);

	lib_free_all(&p->l, luv_dispose);
	uv_close((uv_handle_t *)&p->until, NULL);
	uv_close((uv_handle_t *)&p->check, NULL);
	/* the close callbacks: the records of every closed timer are freed */
	uv_run(&p->loop, UV_RUN_DEFAULT);
	if (uv_loop_close(&p->loop))
		fprintf(stderr, "libuv: the loop still had handles at close\n");
	free(p);
}

const struct contender_ops libuv_ops =
	CONTENDER_OPS("libuv", luv_open, luv_arm_abs,
		      luv_touch, lib_wait, luv_close, NULL);
