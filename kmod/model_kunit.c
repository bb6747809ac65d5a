// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "twheel_model": the wheel and its index driven by random steps
 * against the model (model.c).
 *
 * One of the suites of twheel_kunit.ko; kunit_helpers.h has the helpers
 * they share and how the module and its user-space build run them.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/limits.h>
#include <linux/list.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <linux/twheel.h>

#include "wheel.h"
#include "model.h"
#include "kunit_helpers.h"

/*
 * twt_queue_random() and twt_queue_module() drive a wheel against the
 * model of model.c, the one the fuzzer drives too: it knows each
 * id's state, deadline and data, which node holds what (the ready queue
 * node for node, the sentinel last), the index's tables and its resizes,
 * and checks the wheel, the queue and the index after every step.  The
 * cases pick the steps from splitmix64 where the fuzzer reads its input;
 * the model's memory is the case's and a broken property fails the case
 * (KUNIT_FAIL_AND_ABORT()).
 */
static void *twt_model_zalloc(void *ctx, size_t size)
{
	return kunit_kzalloc(ctx, size, GFP_KERNEL);
}

static void twt_model_free(void *ctx, void *p)
{
	kunit_kfree(ctx, p);
}

static void twt_model_fail(void *ctx, const char *why)
{
	struct kunit *test = ctx;

	KUNIT_FAIL_AND_ABORT(test, "%s", why);
}

static const struct twm_hooks twt_model_hooks = {
	.zalloc = twt_model_zalloc,
	.free = twt_model_free,
	.fail = twt_model_fail,
};

/*
 * A run: @nr ids on a wheel of @tick from @now with an index of @size
 * slots keyed by the suite's secrets, its steps from @seed.
 */
static struct twm *twt_model_new(struct kunit *test, unsigned int nr,
				 u64 seed, u64 tick, u64 now,
				 unsigned long size)
{
	struct twm *m = twm_new(&twt_model_hooks, test, nr);
	u64 secret[TW_SECRET_WORDS];

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->prng = seed;
	m->prng_on = true;
	twt_secret(secret);
	twm_start(m, tick, now, size, secret);
	return m;
}

/* A random level's span: 1 to 2^30 ticks, at most 2^52 ns. */
static u64 twt_model_span(const struct twm *m, u64 r)
{
	unsigned int shift = TW_LVL_BITS * (r % 6);

	if (m->tick > BIT_ULL(52) >> shift)
		return BIT_ULL(52);
	return m->tick << shift;
}

/*
 * twt_queue_module()'s deadlines: up to 70 spans of a random level ahead,
 * TWHEEL_DEADLINE_MAX past the end of time; one in 16 already due, by up
 * to 64 ticks.
 */
static u64 twt_model_far(struct twm *m, u64 r)
{
	u64 ahead = twm_rand(&m->prng), d;

	if ((r >> 4) % 16 == 0)
		return m->now - ahead % min(m->now + 1, 64 * m->tick);
	d = m->now + 1 + ahead % (twt_model_span(m, r) * (1 + (r >> 8) % 70));
	if (d > TWHEEL_DEADLINE_MAX || d <= m->now)
		d = TWHEEL_DEADLINE_MAX;
	return d;
}

/*
 * A deadline: one in 4 from the model's generator (tick and slot
 * boundaries, ties, the end of time), else from now: twt_model_far() for
 * twt_queue_module(), or ahead by up to 2^36 ns, one in 8 already due by
 * up to 10 ms.
 */
static u64 twt_model_deadline(struct twm *m, bool module)
{
	u64 r = twm_rand(&m->prng);

	if (r % 4 == 0)
		return twm_gen_deadline(m);
	r >>= 2;
	if (module)
		return twt_model_far(m, r);
	if (r % 8 == 0)
		return m->now - (r >> 8) % min(m->now + 1, 10 * TWT_MS);
	return m->now + ((r >> 16) & (BIT_ULL(8 + (r >> 3) % 29) - 1));
}

/* Armed id @i's deadline moved later by up to 2^31 ns: its entry alone. */
static void twt_model_later(struct twm *m, unsigned int i)
{
	u64 r = twm_rand(&m->prng), d = m->ids[i].deadline;

	d += (r >> 8) & (BIT_ULL(r % 32) - 1);
	twm_later(m, i, min(d, TWHEEL_DEADLINE_MAX));
}

/*
 * The clock moved on: by up to 2^33 ns, or for twt_queue_module() by a
 * few ticks, up to 200, to exactly the next slot due, or by up to a
 * random level's span (at most 2^40 ns); never past the end of time.
 */
static void twt_model_clock(struct twm *m, u64 r, bool module)
{
	u64 tick = m->tick, step = twm_rand(&m->prng), t;

	if (!module) {
		m->now += (r >> 16) & (BIT_ULL((r >> 4) % 34) - 1);
		return;
	}
	switch ((r >> 4) % 4) {
	case 0:
		m->now += step % (3 * tick);
		break;
	case 1:
		m->now += step % (200 * tick);
		break;
	case 2:
		if (tw_wheel_next(&m->w, &t) && t * tick > m->now)
			m->now = t * tick;
		break;
	default:
		m->now += step % min(twt_model_span(m, r >> 8), BIT_ULL(40));
		break;
	}
	m->now = min(m->now, TWM_KMAX);
}

/*
 * Move the clock on; advance with a random budget, in one call, which may
 * leave work due, or for twt_queue_module() also in calls until none is,
 * the index migrating between them.
 */
static void twt_model_advance(struct twm *m, bool module)
{
	u64 r = twm_rand(&m->prng);
	unsigned int budget = r & 1 ? UINT_MAX : 1 + (r >> 1) % 8;

	twt_model_clock(m, r, module);
	if (!twm_advance_once(m, budget) || !module || !((r >> 40) % 2))
		return;
	do
		twm_maintain(m, 0, 1 + (r >> 41) % 2);
	while (twm_advance_once(m, 1 + twm_rand(&m->prng) % 50));
}

/* Id @i, if in @state, given a deadline through the wheel even if due. */
static void twt_model_raw(struct twm *m, unsigned int i, enum twm_state state,
			  bool module)
{
	if (m->ids[i].state == state)
		twm_set(m, i, twt_model_deadline(m, module), TWM_RAW);
}

/*
 * One random step on a random id: a new id armed through the wheel (some
 * already due), an armed one touched later (the entry alone) or moved
 * (disarmed and added), one cancelled armed or queued (discarded), a
 * queued one armed again (discarded and added), an event popped; the
 * clock advanced; the index resized to 80..299 slots or migrated.
 */
static void twt_model_step(struct twm *m)
{
	u64 r = twm_rand(&m->prng);
	unsigned int i = (r >> 8) % m->nr;

	switch (r % 16) {
	case 0 ... 3:
		twt_model_raw(m, i, TWM_ABSENT, false);
		break;
	case 4 ... 5:
		if (m->ids[i].state == TWM_ARMED)
			twt_model_later(m, i);
		break;
	case 6:
		twt_model_raw(m, i, TWM_ARMED, false);
		break;
	case 7:
		twm_cancel(m, i);
		break;
	case 8 ... 9:
		twt_model_raw(m, i, TWM_QUEUED, false);
		break;
	case 10 ... 11:
		twm_read(m, 1, false);
		break;
	case 12 ... 14:
		twt_model_advance(m, false);
		break;
	default:
		if (!m->mold)
			twm_resize(m, 80 + (r >> 16) % 220);
		else
			twm_migrate(m, 1 + (r >> 16) % 16);
		break;
	}
}

/*
 * One step of twt_queue_module(), as the device takes them: the index
 * kept up by the core's policy (a resize the id would overfill finished
 * first, the one asked for started, the batch's share migrated) and the
 * wheel caught up (its tw_lock()), then on a random id (often one whose
 * event is queued, anywhere in the queue) mostly touches (@eager: each
 * one taken off and placed again; while ids go, @drop, cancels of ids
 * present), cancels, reads, faulting ones too, and advances (@eager: read
 * at once, else one in 8), now and then the other steps and a step of a
 * dump.
 */
static void twt_model_step_module(struct twm *m, bool eager, bool drop)
{
	u64 r = twm_rand(&m->prng);
	unsigned int i = (r >> 8) % m->nr, k;

	if (m->rq_len && !((r >> 40) % 8))
		i = m->rq[(r >> 44) % m->rq_len];
	twm_maintain_batch(m, 1);
	twm_catch_up(m);
	if (drop && r % 32 < 15) {
		for (k = 0; k < 8 && m->ids[i].state == TWM_ABSENT; k++)
			i = twm_rand(&m->prng) % m->nr;
		r = 12;
	}
	switch (r % 32) {
	case 0 ... 11:
		twm_set(m, i, twt_model_deadline(m, true), eager ? TWM_EAGER : 0);
		break;
	case 12 ... 14:
		twm_cancel(m, i);
		break;
	case 15 ... 17:
		twm_read(m, 1 + (r >> 16) % 16, !((r >> 20) % 4));
		break;
	case 18:
		twm_read(m, 1, false);
		break;
	case 19:
		if (m->rq_len)
			i = m->rq[(r >> 44) % m->rq_len];
		twt_model_raw(m, i, TWM_QUEUED, true);
		break;
	case 20:
		twt_model_raw(m, i, TWM_ARMED, true);
		break;
	case 21:
		twt_model_raw(m, i, TWM_ABSENT, true);
		break;
	case 22 ... 23:
		if (m->ids[i].state == TWM_ARMED)
			twt_model_later(m, i);
		break;
	case 24:
		twm_dump_step(m);
		break;
	default:
		twt_model_advance(m, true);
		if (eager || !((r >> 32) % 8))
			twm_read(m, m->rq_len, false);
		break;
	}
}

/* What the runs of a case did, in its log. */
static void twt_model_info(struct kunit *test, const unsigned long *count)
{
	char buf[400];

	twm_counts(count, buf, sizeof(buf));
	kunit_info(test, "%s", buf);
}

/*
 * Random steps against the model: ids armed (some already due), touched
 * later (the entry alone), moved (disarmed and added), cancelled armed or
 * queued (discarded), touched while queued (discarded and re-armed),
 * popped; the clock advanced by steps of any size with budgets large and
 * small; the index resized under it all.  The run ends with everything
 * expired, read and torn down.
 */
static void twt_queue_random(struct kunit *test)
{
	static const enum twm_count used[] = {
		TWM_NEW, TWM_LAZY, TWM_DEL_TOUCH, TWM_DEL_CANCEL,
		TWM_DISCARD_TOUCH, TWM_DISCARD_CANCEL, TWM_CANCEL, TWM_POP,
		TWM_ADVANCE, TWM_EXPIRED, TWM_RESIZE,
	};
	struct twm *m = twt_model_new(test, 64, 43, TWT_MS, 1000 * TWT_MS,
				      TWT_IDX_SIZE);
	unsigned int step, k;

	for (step = 1; step <= 4000; step++) {
		m->op_no = step;
		m->op_name = "random step";
		twt_model_step(m);
		twm_check(m);
	}
	twt_model_info(test, m->count);
	for (k = 0; k < ARRAY_SIZE(used); k++)
		KUNIT_EXPECT_GT_MSG(test, m->count[used[k]], 10UL, "%s",
				    twm_count_name[used[k]]);
	twm_finish(m);
	twm_teardown(m);
}

/* One run of twt_queue_module(): @nr ids, @steps steps from seed @seed. */
static void twt_module_run(struct kunit *test, unsigned int nr,
			   unsigned int steps, u64 tick, bool eager, u64 seed,
			   unsigned long *count)
{
	u64 now = twt_rand(&seed) % BIT_ULL(50);
	struct twm *m = twt_model_new(test, nr, twt_rand(&seed), tick, now,
				      TW_IDX_MIN);
	unsigned int step, k;

	for (step = 0; step < steps; step++) {
		m->op_no = step + 1;
		m->op_name = "device step";
		/* ids come for a quarter of the steps, then go, twice */
		twt_model_step_module(m, eager, step / (steps / 4) % 2);
		twm_check(m);
	}
	if (seed & 1)
		twm_finish(m);
	twm_teardown(m);
	for (k = 0; k < TWM_COUNTS; k++)
		count[k] += m->count[k];
}

/*
 * twt_queue_random() with the device's steps and sizes, from a seed that
 * follows kunit_seed: runs on each tick from TWHEEL_TICK_MIN_NS to
 * TWHEEL_TICK_MAX_NS from any clock, with up to 500 ids, deadlines at
 * every level's scale and at the end of time, events queued at once,
 * touches with new data, reads as the device's, dumps, the index growing
 * and shrinking as it asks; lazy (touches later to the entry alone) or
 * eager (every touch arms again, every advance is read at once).  Each run
 * ends with everything expired and read, or torn down as at release.
 */
static void twt_queue_module(struct kunit *test)
{
	static const u64 ticks[] = {
		TWHEEL_TICK_MIN_NS, TWT_MS, 7777777, 1000 * TWT_MS,
		TWHEEL_TICK_MAX_NS,
	};
	u64 seed = twt_seed(0x90d01e);
	unsigned long count[TWM_COUNTS] = {};
	unsigned int run, k;

	for (run = 0; run < 2 * ARRAY_SIZE(ticks); run++) {
		unsigned int nr = 100 + twt_rand(&seed) % 400;

		twt_module_run(test, nr, 4000, ticks[run % ARRAY_SIZE(ticks)],
			       run >= ARRAY_SIZE(ticks), twt_rand(&seed), count);
	}
	twt_model_info(test, count);
	for (k = 0; k < TWM_COUNTS; k++)
		if (k != TWM_RESIZE)
			KUNIT_EXPECT_GT_MSG(test, count[k], 0UL, "%s",
					    twm_count_name[k]);
}

static struct kunit_case twt_model_cases[] = {
	KUNIT_CASE(twt_queue_random),
	KUNIT_CASE(twt_queue_module),
	{}
};

static struct kunit_suite twt_model_suite = {
	.name = "twheel_model",
	.suite_init = twt_suite_init,
	.test_cases = twt_model_cases,
};

kunit_test_suite(twt_model_suite);
