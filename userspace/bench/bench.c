// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_bench: one workload per process; results as JSON lines.
 * userspace/bench/run_guest.sh runs the whole matrix in the QEMU guest and
 * userspace/bench/render.py turns the lines into docs/bench/results.md and
 * the plots.
 *
 *   twheel_bench [-o FILE] [-r REP] -c CONTENDER[,...] -n N WORKLOAD [OPTIONS]
 *
 * One process per run: one contender (heartbeat, idle), or several side by
 * side (touch).  Workloads:
 *   heartbeat  N live ids, each touched once per period P (timeout 2P);
 *              every period 10% go silent, must expire (never early,
 *              exactly once) and are replaced by new ids; CPU per touch,
 *              lateness.  --period-ms P, --window-ms W (periods: enough
 *              for W, at least 2) or --periods K, --batch B
 *   touch      every contender of -c a,b,.. in this one process arms
 *              the N ids, then random touches in batches (--batches
 *              1,64,1024, --touches K split in --rounds R, the contenders
 *              interleaved round by round); ns per touch.  --mem adds the
 *              kernel memory per id, --burst (or --burst-only a,b) an
 *              expiry burst of all N ids in one tick and a read of N events
 *              already queued.
 *   idle       --seconds S with no id, then S with --far F ids a year
 *              away: CPU of the process, hrtimer fires of the wheel
 *   limits     the fd limits the timerfd contender runs into
 *
 * Exit status: 0, or 1 if a correctness check failed (an event early, one
 * missing, one duplicated), 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <linux/twheel.h>

#include "bench.h"
#include "opts.h"

static const char *prog = "twheel_bench";

static const struct contender_ops *all_ops[] = {
	&scan_ops, &timerfd_ops, &twheel_ops, &inproc_ops, &uring_ops,
	&sqpoll_ops, &libev_ops, &libevent_ops, &libuv_ops,
};

/* Contenders named in a list (-c, --burst-only): each once, at most 8. */
struct ops_list {
	const struct contender_ops *v[8];
	int n;
};

struct opts {
	const struct contender_ops *ops;	/* the contender (the first of -c) */
	struct ops_list cont;			/* touch: all of -c a,b,c */
	uint64_t n;
	uint64_t rep;
	uint64_t period_ms;
	uint64_t tick_ns;
	uint64_t window_ms, periods;
	uint64_t batch;
	size_t batches[8];
	int nbatches;
	uint64_t touches;
	uint64_t rounds;
	int mem, burst;
	struct ops_list burst_only;	/* --burst only for these contenders */
	const char *ids;		/* --ids: random, dense or flood */
	uint64_t seconds_ns;
	uint64_t far;
};

static int failed;	/* a correctness check failed */

static bool needs_now(const struct contender_ops *ops)
{
	/*
	 * twheel and inproc read their own clock, as the module does; the
	 * libraries' loops take the bench's, read once per batch, as the
	 * time of a loop iteration
	 */
	return ops == &scan_ops || ops == &timerfd_ops || is_lib(ops);
}

static uint64_t *make_ids(uint64_t n)
{
	uint64_t *ids = xcalloc(n, sizeof(*ids)), i;

	for (i = 0; i < n; i++)
		ids[i] = id_of(i);
	return ids;
}

/*
 * The ids of the touch workload (--ids): random (id_of(), the default),
 * dense (0, 1, 2, ...), or flood: i * 0x0e217c1e66c88cc3, the inverse of
 * GOLDEN_RATIO_64, whose keys were 0, 1, 2, ... when twheel's index was
 * keyed by that constant alone (one home slot for all: quadratic).
 */
static uint64_t *make_touch_ids(const struct opts *o)
{
	uint64_t *ids, i;

	if (!strcmp(o->ids, "random"))
		return make_ids(o->n);
	ids = xcalloc(o->n, sizeof(*ids));
	for (i = 0; i < o->n; i++)
		ids[i] = !strcmp(o->ids, "dense") ? i : i * 0x0e217c1e66c88cc3ULL;
	return ids;
}

/* Open a contender of @ops with @co; 0 or -errno. */
static int copen(const struct contender_ops *ops, struct contender **c,
		 const struct copts *co)
{
	int err = ops->open(c, co);

	if (!err) {
		(*c)->ops = ops;
		(*c)->o = *co;
	}
	return err;
}

static bool in_list(const struct ops_list *l, const struct contender_ops *ops)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->v[i] == ops)
			return true;
	return false;
}

/* ---- heartbeat ------------------------------------------------------------ */

/*
 * N slots, each holding one live id touched once per period P at its own
 * offset x_j = j * P / N in the period; the timeout is 2P.  Every period,
 * one slot in ten (j + p) % 10 == 0 lets its id go silent and starts a new
 * id (generation + 1), so each period has N touches of which N/10 insert a
 * new id, and N/10 ids expire: a steady state whatever N, at a touch rate
 * of N / P.  Id of slot j, generation g: id_of(j + N * g).
 */
#define HB_GOT	1	/* its event arrived */
#define HB_WANT	2	/* silent, due (as scheduled) before the touches end */
#define HB_LIVE	4	/* expired while live, not touched since */

struct hb {
	struct sink s;
	uint64_t n, ngen;	/* slots, generations per slot */
	uint32_t *gen;		/* per slot: current generation */
	uint64_t *lb;		/* per id: lower bound of its deadline */
	uint8_t *got;		/* per id: HB_GOT, HB_WANT */
	uint64_t t_expect;	/* end of the touches */
	uint64_t expected, delivered, exp_delivered, spurious, post, dup;
	uint64_t early, foreign;
	uint64_t late_q_max;
	bool touching_done;
	struct lat lat;
};

static void hb_event(struct sink *s, const struct bench_event *e)
{
	struct hb *h = (struct hb *)s;
	uint64_t idx = index_of(e->id), j, g;

	if (idx >= h->n * h->ngen) {
		h->foreign++;
		return;
	}
	j = idx % h->n;
	g = idx / h->n;
	if (g > h->gen[j]) {
		h->foreign++;
		return;
	}
	/* never early: against what the contender says and what we asked */
	if (e->seen < e->deadline || (e->queued && e->queued < e->deadline) ||
	    e->deadline < h->lb[idx] || e->seen < h->lb[idx]) {
		if (h->early < 5)
			fprintf(stderr, "EARLY: id %#" PRIx64 " deadline %" PRIu64
				" queued %" PRIu64 " seen %" PRIu64 " bound %" PRIu64 "\n",
				e->id, e->deadline, e->queued, e->seen, h->lb[idx]);
		h->early++;
	}
	if (g == h->gen[j]) {		/* a live id */
		if (!h->touching_done) {
			h->spurious++;	/* touched too late */
			h->got[idx] |= HB_LIVE;
		} else {
			h->post++;	/* touching has stopped: expected */
		}
		return;
	}
	if (h->got[idx] & HB_GOT) {
		h->dup++;
		return;
	}
	h->got[idx] |= HB_GOT;
	h->delivered++;
	lat_add(&h->lat, (int64_t)(e->seen - e->deadline));
	if (e->queued && e->queued - e->deadline > h->late_q_max)
		h->late_q_max = e->queued - e->deadline;
	if (h->got[idx] & HB_WANT) {
		h->exp_delivered++;
		if (h->exp_delivered == h->expected && h->touching_done)
			s->done = true;
	}
}

/* Seconds per id to re-arm existing ids: a sample of up to 10,000. */
static double rearm_rate(struct contender *c, const struct opts *o,
			 const uint64_t *ids, uint64_t n)
{
	uint64_t k = n < 10000 ? n : 10000, i, t0;
	uint64_t *dl = xcalloc(k, sizeof(*dl)), far = mono_ns() + 7200 * NSEC_PER_SEC;
	int err;

	for (i = 0; i < k; i++)
		dl[i] = far + i;
	t0 = mono_ns();
	err = o->ops->arm_abs(c, ids, dl, k);
	if (err)
		die("%s: re-arming a sample failed: %s", o->ops->name, strerror(-err));
	free(dl);
	return (double)(mono_ns() - t0) / 1e9 / (double)k;
}

/*
 * One heartbeat run: the contender, the schedule of its touches and what
 * was measured.  The window of the CPU figures runs from the second period
 * (steady state) to the end of the touches.
 */
struct hb_run {
	const struct opts *o;
	struct contender *c;
	struct hb h;
	uint64_t n, P, T, K;	/* ids, period, timeout, periods */
	uint64_t slots;		/* touches in all: K * n */
	uint64_t *ids, *dl;	/* the first ids, their setup deadlines */
	uint64_t *batch;	/* the ids of one touch() */
	uint64_t create_ns, setup_ns;
	uint64_t t_start, t_touch_end;	/* the touches' schedule */
	uint64_t drain, t_hard;	/* wait for a missing event until t_hard */
	uint64_t t_abort;	/* stop touching then if behind */
	uint64_t t_done, t_look;	/* touching ended, last look when behind */
	uint64_t cursor;	/* the next slot to touch, of 0 .. slots */
	uint64_t touches, inserts, calls, max_lag;
	uint64_t cpu0, busy0, w_touches, t_w0;	/* window start */
	uint64_t cpu1, busy1, t_w1;		/* window end */
	struct twheel_stats st0, st1;		/* twheel: window start, end */
	bool measuring, aborted;
};

/* Size the run from the options, allocate it and open the contender. */
static void hb_init(struct hb_run *r, const struct opts *o)
{
	const uint64_t n = o->n, P = o->period_ms * NSEC_PER_MSEC, T = 2 * P;
	const uint64_t K = o->periods ? o->periods :
		(o->window_ms * NSEC_PER_MSEC + P - 1) / P < 2 ? 2 :
		(o->window_ms * NSEC_PER_MSEC + P - 1) / P;
	const uint64_t ngen = 1 + (K + 9) / 10;
	struct copts co = { .n_max = 2 * n + 64, .timeout_ns = T,
			    .tick_ns = o->tick_ns };
	int err;

	*r = (struct hb_run){ .o = o, .n = n, .P = P, .T = T, .K = K,
			      .slots = K * n,
			      .h = { .s.fn = hb_event, .n = n, .ngen = ngen } };
	r->ids = make_ids(n);
	r->dl = xcalloc(n, sizeof(*r->dl));
	r->batch = xcalloc(o->batch, sizeof(*r->batch));
	r->h.gen = xcalloc(n, sizeof(*r->h.gen));
	r->h.lb = xcalloc(n * ngen, sizeof(*r->h.lb));
	r->h.got = xcalloc(n * ngen, 1);
	err = copen(o->ops, &r->c, &co);
	if (err)
		die("%s: open failed: %s", o->ops->name, strerror(-err));
}

/*
 * Setup, not measured: create every id with a far deadline, time the
 * re-arming of a sample, then re-arm every id as if last seen one period
 * before its offset: deadline = start + x_j + P, with a start that leaves
 * room for this second pass.  Sleeps until that start; sets the schedule.
 */
static void hb_arm(struct hb_run *r)
{
	const struct contender_ops *ops = r->o->ops;
	const uint64_t n = r->n, P = r->P;
	uint64_t t0, i;
	double rate;
	int err;

	t0 = mono_ns();
	for (i = 0; i < n; i++)
		r->dl[i] = t0 + 3600 * NSEC_PER_SEC + i;
	err = ops->arm_abs(r->c, r->ids, r->dl, n);
	if (err)
		die("%s: creating %" PRIu64 " ids failed: %s", ops->name, n,
		    strerror(-err));
	r->create_ns = mono_ns() - t0;
	rate = rearm_rate(r->c, r->o, r->ids, n);
	r->t_start = mono_ns() + (uint64_t)(rate * 1.5e9 * (double)n) +
		200 * NSEC_PER_MSEC;
	for (i = 0; i < n; i++) {
		r->dl[i] = r->t_start + i * P / n + P;
		r->h.lb[i] = r->dl[i];
	}
	err = ops->arm_abs(r->c, r->ids, r->dl, n);
	if (err)
		die("%s: arming %" PRIu64 " ids failed: %s", ops->name, n,
		    strerror(-err));
	r->setup_ns = mono_ns() - t0;
	if (mono_ns() > r->t_start)
		fprintf(stderr, "heartbeat: setup overran the start by %.3f s\n",
			(double)(mono_ns() - r->t_start) / 1e9);
	sleep_until_ns(r->t_start);
	r->t_touch_end = r->t_start + r->K * P;
	r->h.t_expect = r->t_touch_end;
	/* drain: only waited for when an expected event is missing */
	r->drain = P > 5 * NSEC_PER_SEC ? P : 5 * NSEC_PER_SEC;
	r->t_hard = r->t_touch_end + r->drain;
	/* a contender that cannot keep up stops touching at twice the window */
	r->t_abort = r->t_touch_end + (r->t_touch_end - r->t_start) +
		2 * NSEC_PER_SEC;
}

/*
 * Slot @j lets its live id go silent and starts a new one.  The old one
 * was scheduled at (p - 1) P + x_j: due at (p + 1) P + x_j, @wanted if
 * that is within the touches.
 */
static void hb_go_silent(struct hb *h, uint64_t j, bool wanted)
{
	uint64_t old = j + h->n * h->gen[j];

	if (wanted) {
		h->got[old] |= HB_WANT;
		h->expected++;
	}
	/*
	 * A contender that fell behind may have expired it already, as a
	 * live id: that was its final event after all.
	 */
	if (h->got[old] & HB_LIVE) {
		h->spurious--;
		h->got[old] |= HB_GOT;
		h->delivered++;
		h->exp_delivered += !!(h->got[old] & HB_WANT);
	}
	h->gen[j]++;
}

/*
 * Fill r->batch with the ids of the slots from r->cursor up to @due, at
 * most o->batch of them; @lb is the lower bound of their new deadlines,
 * @now the time of this turn of the loop (for the lag).  Returns how many.
 */
static size_t hb_fill_batch(struct hb_run *r, uint64_t now, uint64_t due,
			    uint64_t lb)
{
	const uint64_t n = r->n, P = r->P, K = r->K, t_start = r->t_start;
	/* in locals, kept in registers across id_of(); written back at the end */
	uint64_t cursor = r->cursor, max_lag = r->max_lag;
	uint64_t *batch = r->batch;
	struct hb *h = &r->h;
	size_t k = 0;

	for (; cursor < due && k < r->o->batch; cursor++) {
		uint64_t p = cursor / n, j = cursor % n;
		uint64_t slot_t = t_start + cursor * P / n;

		if ((j + p) % 10 == 0) {
			hb_go_silent(h, j, (p + 1) * n + j <= K * n);
			r->inserts++;
		}
		if (now - slot_t > max_lag)
			max_lag = now - slot_t;
		h->lb[j + n * h->gen[j]] = lb;
		h->got[j + n * h->gen[j]] &= ~HB_LIVE;
		batch[k++] = id_of(j + n * h->gen[j]);
	}
	r->cursor = cursor;
	r->max_lag = max_lag;
	return k;
}

/*
 * Touch the slots up to @due, a batch per touch(); @now is the time of
 * this turn of the loop.  Stops early (r->aborted) past r->t_abort.
 */
static void hb_touch_due(struct hb_run *r, uint64_t now, uint64_t due)
{
	const struct contender_ops *ops = r->o->ops;
	int err;

	while (r->cursor < due && !r->aborted) {
		uint64_t tnow = needs_now(ops) ? mono_ns() : 0;
		uint64_t lb = (tnow ? tnow : mono_ns()) + r->T;
		size_t k = hb_fill_batch(r, now, due, lb);

		err = ops->touch(r->c, r->batch, k, tnow);
		if (err)
			die("%s: touch failed: %s", ops->name, strerror(-err));
		r->touches += k;
		r->calls++;
		if (r->cursor >= due)
			continue;
		/*
		 * Behind schedule.  An event-driven contender still takes its
		 * ready events between batches (a non-blocking look, at most
		 * every 10 ms), so that expired ids do not pile up; the scan
		 * loop, whose look is a whole scan, works off its backlog of
		 * touches first, its best strategy.
		 */
		if (ops != &scan_ops && mono_ns() - r->t_look > 10 * NSEC_PER_MSEC) {
			err = ops->wait(r->c, 0, &r->h.s);
			if (err)
				die("%s: wait failed: %s", ops->name, strerror(-err));
			r->t_look = mono_ns();
		}
		r->aborted = mono_ns() >= r->t_abort;
	}
}

/* The window opens (second period, steady state): CPU and stats so far. */
static void hb_window_begin(struct hb_run *r, uint64_t now)
{
	r->measuring = true;
	r->t_w0 = now;
	r->w_touches = r->touches;
	r->cpu0 = cpu_self_ns();
	r->busy0 = cpu_busy_ns();
	if (r->o->ops == &twheel_ops)
		twheel_get_stats(r->c, &r->st0);
}

/*
 * The touches are over (all done, or given up): the window closes; from
 * now on only the expected events are waited for, at most a drain long.
 */
static void hb_window_end(struct hb_run *r)
{
	r->t_done = r->t_w1 = mono_ns();
	r->cpu1 = cpu_self_ns();
	r->busy1 = cpu_busy_ns();
	if (r->o->ops == &twheel_ops)
		twheel_get_stats(r->c, &r->st1);
	r->w_touches = r->touches - r->w_touches;
	r->h.touching_done = true;
	if (r->h.exp_delivered == r->h.expected)
		r->h.s.done = true;
	if (r->t_done + r->drain > r->t_hard)
		r->t_hard = r->t_done + r->drain;
	r->cursor = r->slots;	/* no more touches */
}

/*
 * The run: touch what is due, take the events until the next batch is
 * due, until the touches are over and every expected event is in (or
 * t_hard has come).
 */
static void hb_loop(struct hb_run *r)
{
	const struct contender_ops *ops = r->o->ops;
	const uint64_t n = r->n, P = r->P;
	int err;

	for (;;) {
		uint64_t now = mono_ns(), due, next;

		/* CPU is measured from the second period on: steady state */
		if (!r->measuring && now >= r->t_start + P)
			hb_window_begin(r, now);
		if (r->cursor < r->slots) {
			due = (now - r->t_start) * n / P;
			if (due > r->slots)
				due = r->slots;
			hb_touch_due(r, now, due);
			/* the window ends with the touches */
			if (r->cursor == r->slots || r->aborted)
				hb_window_end(r);
			next = r->t_start + (r->cursor + r->o->batch) * P / n;
			if (next > r->t_touch_end)
				next = r->t_touch_end;
			if (!r->measuring && next > r->t_start + P)
				next = r->t_start + P;
		} else {
			next = r->t_hard;
		}
		if (r->h.s.done || (r->h.touching_done && now >= r->t_hard))
			break;
		if (next > r->t_hard)
			next = r->t_hard;
		err = ops->wait(r->c, next, &r->h.s);
		if (err)
			die("%s: wait failed: %s", ops->name, strerror(-err));
		if (r->h.s.done && r->cursor < r->slots)
			r->h.s.done = false;	/* keep touching */
	}
}

/* The contender's own figures, for the heartbeat line: twheel, scan, inproc. */
static void hb_json_contender(const struct hb_run *r)
{
	const struct twheel_stats *st0 = &r->st0, *st1 = &r->st1;
	const struct contender_ops *ops = r->o->ops;

	if (ops == &twheel_ops) {
		json_u("timer_fires", st1->timer_fires - st0->timer_fires);
		json_u("runs", st1->runs - st0->runs);
		json_u("reslots", st1->reslots - st0->reslots);
		json_f("reslots_per_touch", (double)(st1->reslots - st0->reslots) /
		       (double)r->w_touches);
		json_u("hold_max_ns", st1->hold_max_ns);
		json_u("late_max_ns", st1->late_max_ns);
		json_u("mem_bytes", st1->mem_bytes);
		json_u("work_runs", st1->work_runs - st0->work_runs);
		json_u("work_ns", st1->work_ns - st0->work_ns);
	}
	if (ops == &scan_ops) {
		json_u("scans", scan_count(r->c));
		json_f("scan_pass_ms", scan_pass_ns(r->c) / 1e6);
	}
	if (ops == &inproc_ops) {
		struct inproc_info ii;

		inproc_info(r->c, &ii);
		json_u("reslots", ii.reslots);
		/* over the whole run: the core counts no window */
		json_f("reslots_per_touch", (double)ii.reslots / (double)r->touches);
		json_u("hold_max_ns", ii.hold_max_ns);
	}
}

/* The "heartbeat" JSON line of the run. */
static void hb_json(struct hb_run *r)
{
	const struct opts *o = r->o;
	const double touching = (double)(r->t_done - r->t_start);
	const double cpu_self = (double)(r->cpu1 - r->cpu0);
	const double cpu_sys = (double)(r->busy1 - r->busy0);
	struct hb *h = &r->h;
	int64_t p50, p99, pmax;

	lat_summary(&h->lat, &p50, &p99, &pmax);
	json_begin("heartbeat", o->ops->name, r->n, o->rep);
	json_u("period_ms", o->period_ms);
	json_u("timeout_ms", r->T / NSEC_PER_MSEC);
	json_u("periods", r->K);
	json_u("tick_ns", o->tick_ns);
	json_u("batch", o->batch);
	json_f("touch_rate_per_ms", (double)r->n / (double)o->period_ms);
	json_f("create_s", (double)r->create_ns / 1e9);
	json_f("setup_s", (double)r->setup_ns / 1e9);
	json_f("window_s", (double)(r->t_touch_end - r->t_start) / 1e9);
	json_f("touching_s", touching / 1e9);
	json_f("achieved_rate_per_ms", (double)r->touches / (touching / 1e6));
	json_u("aborted", r->aborted);
	json_u("kept_up", !r->aborted && !h->spurious &&
	       r->t_done < r->t_touch_end + r->P / 2);
	json_f("cpu_window_s", (double)(r->t_w1 - r->t_w0) / 1e9);
	json_u("touches", r->touches);
	json_u("inserts", r->inserts);
	json_u("window_touches", r->w_touches);
	json_u("touch_calls", r->calls);
	json_f("max_touch_lag_ms", (double)r->max_lag / 1e6);
	json_f("cpu_self_s", cpu_self / 1e9);
	json_f("cpu_sys_s", cpu_sys / 1e9);
	json_f("cpu_self_s_per_mtouch", cpu_self / 1e3 / (double)r->w_touches);
	json_f("cpu_sys_s_per_mtouch", cpu_sys / 1e3 / (double)r->w_touches);
	json_u("expected", h->expected);
	json_u("delivered_expected", h->exp_delivered);
	json_u("delivered", h->delivered);
	json_u("missing", h->expected - h->exp_delivered);
	json_u("spurious", h->spurious);
	json_u("post_window", h->post);
	json_u("duplicates", h->dup);
	json_u("foreign", h->foreign);
	json_u("early", h->early);
	json_f("late_p50_ms", (double)p50 / 1e6);
	json_f("late_p99_ms", (double)p99 / 1e6);
	json_f("late_max_ms", (double)pmax / 1e6);
	if (h->late_q_max)
		json_f("late_queue_max_ms", (double)h->late_q_max / 1e6);
	hb_json_contender(r);
	json_end();
}

/* Close the contender and free what hb_init() allocated. */
static void hb_free(struct hb_run *r)
{
	r->o->ops->close(r->c);
	lat_free(&r->h.lat);
	free(r->h.gen);
	free(r->h.lb);
	free(r->h.got);
	free(r->ids);
	free(r->dl);
	free(r->batch);
}

/* The heartbeat workload: set up, run, report, check. */
static void heartbeat(const struct opts *o)
{
	struct hb_run r;

	hb_init(&r, o);
	hb_arm(&r);
	hb_loop(&r);
	if (r.aborted)
		fprintf(stderr, "heartbeat: %s could not keep up: %" PRIu64
			" of %" PRIu64 " touches in %.1f s\n", o->ops->name,
			r.touches, r.slots, (double)(r.t_done - r.t_start) / 1e9);
	hb_json(&r);
	if (r.h.early || r.h.dup || r.h.foreign ||
	    r.h.exp_delivered != r.h.expected)
		failed = 1;
	hb_free(&r);
}

/* ---- touch throughput, memory, expiry burst ------------------------------- */

struct count_sink {
	struct sink s;
	uint64_t want, got, early, first, last;
	uint64_t n;
	uint8_t *seen;
	uint64_t dup, foreign;
};

static void count_event(struct sink *s, const struct bench_event *e)
{
	struct count_sink *k = (struct count_sink *)s;
	uint64_t i = index_of(e->id);

	if (e->seen < e->deadline || (e->queued && e->queued < e->deadline))
		k->early++;
	if (i >= k->n) {
		k->foreign++;
		return;
	}
	if (k->seen[i]) {
		k->dup++;
		return;
	}
	k->seen[i] = 1;
	if (!k->got++)
		k->first = e->seen;
	k->last = e->seen;
	if (k->got == k->want)
		s->done = true;
}

/*
 * Arm all @n ids at @deadline (absolute), wait until then and collect the
 * events; returns the time from @t_ref to the last event.  @deadline 1
 * (in the past) queues them at once: the "already queued" reading.
 */
static uint64_t burst_once(struct contender *c, const struct opts *o,
			   const uint64_t *ids, uint64_t n, uint64_t deadline,
			   uint64_t *arm_ns, struct count_sink *k)
{
	uint64_t *dl = xcalloc(n, sizeof(*dl)), i, t0, t_ref;
	int err;

	for (i = 0; i < n; i++)
		dl[i] = deadline;
	memset(k->seen, 0, n);
	k->got = k->early = k->dup = k->foreign = 0;
	k->s.done = false;
	k->want = n;
	t0 = mono_ns();
	err = o->ops->arm_abs(c, ids, dl, n);
	if (err)
		die("%s: burst arm failed: %s", o->ops->name, strerror(-err));
	*arm_ns = mono_ns() - t0;
	free(dl);
	t_ref = deadline > mono_ns() ? deadline : mono_ns();
	err = o->ops->wait(c, t_ref + 120 * NSEC_PER_SEC, &k->s);
	if (err)
		die("%s: burst wait failed: %s", o->ops->name, strerror(-err));
	/* wait() returns as soon as the last event has been handled */
	k->last = mono_ns();
	if (k->got != n || k->early || k->dup || k->foreign)
		failed = 1;
	return k->got ? k->last - t_ref : 0;
}

static void burst(struct contender *c, const struct opts *o,
		  const uint64_t *ids, uint64_t n)
{
	double arm_s_per_id;
	struct count_sink k = { .s.fn = count_event, .n = n };
	struct twheel_stats st0, st1, st2;
	uint64_t arm_ns, qarm_ns, t_all, t_q, d, cpu0, cpu1, cpuq;
	uint64_t early, got, dup, first, reslots0 = 0;

	k.seen = xcalloc(n, 1);
	if (o->ops == &twheel_ops)
		twheel_get_stats(c, &st0);
	if (o->ops == &inproc_ops) {
		struct inproc_info ii;

		inproc_info(c, &ii);
		reslots0 = ii.reslots;
	}
	/* every id due at the same instant, far enough to arm them all first */
	arm_s_per_id = rearm_rate(c, o, ids, n);
	d = mono_ns() + (uint64_t)(arm_s_per_id * 1.3e9 * (double)n) +
		300 * NSEC_PER_MSEC;
	d -= d % o->tick_ns;		/* on a tick boundary: one tick */
	cpu0 = cpu_self_ns();
	t_all = burst_once(c, o, ids, n, d, &arm_ns, &k);
	cpu1 = cpu_self_ns();
	early = k.early;
	got = k.got;
	dup = k.dup;
	first = k.first;
	if (o->ops == &twheel_ops)
		twheel_get_stats(c, &st1);
	/* the same ids, deadline in the past: queued at once, then read */
	t_q = burst_once(c, o, ids, n, 1, &qarm_ns, &k);
	cpuq = cpu_self_ns() - cpu1;
	if (o->ops == &twheel_ops)
		twheel_get_stats(c, &st2);

	json_begin("burst", o->ops->name, n, o->rep);
	json_f("arm_s", (double)arm_ns / 1e9);
	json_f("all_read_s", (double)t_all / 1e9);
	json_f("first_ms", got && first > d ? (double)(first - d) / 1e6 : 0);
	json_f("events_per_s", t_all ? (double)n / ((double)t_all / 1e9) : 0);
	json_f("cpu_self_s", (double)(cpu1 - cpu0) / 1e9);
	json_u("delivered", got);
	json_u("early", early + k.early);
	json_u("duplicates", dup + k.dup);
	json_f("queued_read_s", (double)t_q / 1e9);
	json_f("queued_events_per_s", t_q ? (double)n / ((double)t_q / 1e9) : 0);
	json_f("queued_cpu_self_s", (double)cpuq / 1e9);
	json_u("queued_delivered", k.got);
	if (o->ops == &twheel_ops) {
		json_u("hold_max_ns", st1.hold_max_ns);
		json_u("runs", st1.runs - st0.runs);
		json_u("timer_fires", st1.timer_fires - st0.timer_fires);
		json_u("late_max_ns", st1.late_max_ns);
		json_u("queued_runs", st2.runs - st1.runs);
		json_u("reslots", st1.reslots - st0.reslots);
	}
	if (o->ops == &inproc_ops) {
		struct inproc_info ii;

		inproc_info(c, &ii);
		json_u("hold_max_ns", ii.hold_max_ns);
		json_u("reslots", ii.reslots - reslots0);
	}
	json_end();
	free(k.seen);
}

/*
 * Random touches in batches, every contender of the run in the same
 * process.  The stream is cut into o->rounds segments; each round runs its
 * segment once per contender and batch size (the order rotating from round
 * to round), so that a burst of noise from outside (TCG on a shared host)
 * hits every series alike and the ratio of two series can be taken round by
 * round.  Reported per series: the best round (noise only ever adds time),
 * the median and the worst, and every round.
 */
struct series {
	int c;			/* index of the contender */
	size_t batch;
};

/*
 * The series of the @nc contenders @cs into @sr: one per contender and
 * batch size of --batches; returns how many.
 */
static int touch_series(struct contender **cs, const struct opts *o, int nc,
			struct series *sr)
{
	int ns = 0, k, b;

	for (k = 0; k < nc; k++) {
		size_t maxb = 0;

		for (b = 0; b < o->nbatches; b++)
			if (o->batches[b] > maxb)
				maxb = o->batches[b];
		/*
		 * Per-id APIs have no batch: one series, the bench's loop
		 * reading the clock once per largest batch.
		 */
		if (needs_now(cs[k]->ops)) {
			sr[ns++] = (struct series){ k, maxb };
			continue;
		}
		for (b = 0; b < o->nbatches; b++)
			sr[ns++] = (struct series){ k, o->batches[b] };
	}
	return ns;
}

/*
 * Run the rounds of the @ns series @sr over @seq: @t gets the ns per touch
 * of series x in round r at t[x * o->rounds + r], @cpu the CPU time of
 * each series summed over the rounds.
 */
static void touch_time_rounds(struct contender **cs, const struct opts *o,
			      const struct series *sr, int ns,
			      const uint64_t *seq, double *t, uint64_t *cpu)
{
	uint64_t per = o->touches / o->rounds, r;
	int j;

	for (r = 0; r < o->rounds; r++) {
		const uint64_t *part = seq + r * per;

		for (j = 0; j < ns; j++) {
			int x = (int)((j + r) % (uint64_t)ns);
			struct contender *c = cs[sr[x].c];
			uint64_t done = 0, t0, c0;
			int err;

			t0 = mono_ns();
			c0 = cpu_self_ns();
			while (done < per) {
				size_t m = per - done < sr[x].batch ? per - done : sr[x].batch;

				err = c->ops->touch(c, part + done, m,
						    needs_now(c->ops) ? mono_ns() : 0);
				if (err)
					die("%s: touch failed: %s", c->ops->name,
					    strerror(-err));
				done += m;
			}
			t[x * o->rounds + r] = (double)(mono_ns() - t0) / (double)per;
			cpu[x] += cpu_self_ns() - c0;
		}
	}
}

/*
 * The "touch" JSON line of one series of @ops at @batch: its ns per touch
 * of each round @v (best, median, worst, all) and its CPU time @cpu.
 */
static void touch_series_json(const struct contender_ops *ops,
			      const struct opts *o, size_t batch,
			      const double *v, uint64_t cpu)
{
	uint64_t per = o->touches / o->rounds, r;
	double best = v[0];
	struct lat l = { 0 };
	int64_t med, p99, max;
	char buf[32];

	for (r = 0; r < o->rounds; r++) {
		if (v[r] < best)
			best = v[r];
		lat_add(&l, (int64_t)(v[r] * 1000));
	}
	lat_summary(&l, &med, &p99, &max);
	lat_free(&l);
	json_begin("touch", ops->name, o->n, o->rep);
	json_u("batch", needs_now(ops) ? 1 : batch);
	json_u("touches", per * o->rounds);
	json_u("rounds", o->rounds);
	json_f("ns_per_touch", best);
	json_f("ns_per_touch_median", (double)med / 1000);
	json_f("ns_per_touch_worst", (double)max / 1000);
	json_f("cpu_ns_per_touch", (double)cpu / (double)(per * o->rounds));
	/* a guest on the jiffies clocksource times short rounds as 0 */
	json_u("clock_res_ns", clock_res_ns());
	fprintf(out, ",\"rounds_ns\":[");
	for (r = 0; r < o->rounds; r++) {
		snprintf(buf, sizeof(buf), "%.1f", v[r]);
		fprintf(out, "%s%s", r ? "," : "", buf);
	}
	fprintf(out, "]");
	json_end();
}

/* The touch rounds of the session's contenders @cs over @seq, reported. */
static void touch_rounds(struct contender **cs, const struct opts *o, int nc,
			 const uint64_t *seq)
{
	struct series sr[8 * 8];
	int ns, j;
	double *t;
	uint64_t *cpu;

	ns = touch_series(cs, o, nc, sr);
	t = xcalloc((size_t)(ns * o->rounds), sizeof(*t));
	cpu = xcalloc((size_t)ns, sizeof(*cpu));
	touch_time_rounds(cs, o, sr, ns, seq, t, cpu);
	for (j = 0; j < ns; j++)
		touch_series_json(cs[sr[j].c]->ops, o, sr[j].batch,
				  t + j * o->rounds, cpu[j]);
	free(t);
	free(cpu);
}

/* twheel's own view of its memory per id, n ids held */
static double twheel_mem_per_id(struct contender *c, uint64_t n)
{
	struct twheel_stats st;

	twheel_get_stats(c, &st);
	return (double)st.mem_bytes / (double)n;
}

/*
 * Let the contender finish what the arming deferred (its settle: an index
 * resize left migrating, which holds the old and the new table until it
 * ends): it is neither a touch's cost nor what the ids hold, so touches and
 * memory are measured after it.  twheel's own memory figure from before it
 * is kept: at_arm, what the resize added where the last arm fell.
 */
static void settle_arming(struct contender *c, uint64_t n, double *at_arm)
{
	if (c->ops == &twheel_ops)
		*at_arm = twheel_mem_per_id(c, n);
	if (c->ops->settle)
		c->ops->settle(c);
}

/* twheel's own view of its memory, for a "memory" JSON line: n ids held */
static void twheel_mem_json(struct contender *c, uint64_t n, double at_arm)
{
	struct twheel_stats st;

	twheel_get_stats(c, &st);
	json_f("mem_bytes_per_id", (double)st.mem_bytes / (double)n);
	json_f("mem_bytes_per_id_at_arm", at_arm);
	json_u("armed", st.armed);
}

/*
 * A library contender's own count, beside its RSS and heap growth: the
 * map id -> record and one record per id (as asked of malloc(), without
 * the chunk's header and rounding); the library's own arrays (libev's
 * heap of timers, libevent's min-heap) are in the growth only.
 */
static void lib_mem_json(struct lib_contender *l, uint64_t n)
{
	json_f("map_bytes_per_id", (double)hmap_bytes(&l->map) / (double)n);
	json_u("record_size", l->rec_size);
}

/* Arm every id with write()-style touches (the insert path), settle; memory. */
static struct contender *touch_arm(const struct opts *o, const uint64_t *ids)
{
	const uint64_t n = o->n;
	struct copts co = { .n_max = n, .timeout_ns = 3600 * NSEC_PER_SEC,
			    .tick_ns = o->tick_ns };
	uint64_t i, t0, c0, arm_ns;
	struct memsnap m0, m1;
	struct contender *c;
	const size_t chunk = 1024;
	double at_arm = 0;
	int err;

	if (o->mem)
		mem_snap(&m0);
	err = copen(o->ops, &c, &co);
	if (err)
		die("%s: open failed: %s", o->ops->name, strerror(-err));
	t0 = mono_ns();
	c0 = cpu_self_ns();
	for (i = 0; i < n; i += chunk) {
		size_t k = n - i < chunk ? n - i : chunk;

		err = o->ops->touch(c, ids + i, k, needs_now(o->ops) ? mono_ns() : 0);
		if (err) {
			json_begin("limit", o->ops->name, n, o->rep);
			json_u("reached", i);
			json_s("error", strerror(-err));
			json_end();
			die("%s: arming id %" PRIu64 " of %" PRIu64 ": %s",
			    o->ops->name, i, n, strerror(-err));
		}
	}
	arm_ns = mono_ns() - t0;
	json_begin("insert", o->ops->name, n, o->rep);
	json_f("ns_per_id", (double)arm_ns / (double)n);
	json_f("cpu_ns_per_id", (double)(cpu_self_ns() - c0) / (double)n);
	json_end();

	t0 = mono_ns();
	settle_arming(c, n, &at_arm);
	if (c->ops->settle) {
		json_begin("settle", c->ops->name, n, o->rep);
		json_f("ns", (double)(mono_ns() - t0));
		json_end();
	}
	if (o->mem) {
		mem_snap(&m1);
		json_begin("memory", o->ops->name, n, o->rep);
		mem_delta_json(out, &m0, &m1, n);
		if (o->ops == &twheel_ops)
			twheel_mem_json(c, n, at_arm);
		if (o->ops == &inproc_ops) {
			struct inproc_info ii;

			inproc_info(c, &ii);
			json_f("index_bytes_per_id", (double)ii.index_bytes / (double)n);
			json_u("node_size", ii.node_size);
		}
		if (o->ops == &scan_ops)
			json_f("table_bytes_per_id", (double)scan_table_bytes(c) / (double)n);
		if (is_lib(o->ops))
			lib_mem_json((struct lib_contender *)c, n);
		json_end();
		mem_snap_free(&m0);
		mem_snap_free(&m1);
	}
	return c;
}

/*
 * Memory per id when every id carries data (ARM with non-zero data): a
 * fresh twheel fd, the same N ids, after the session's contenders are
 * closed.  Every id has the same node, data or not, so this should match
 * the touched ids' figure but for the index table's fill.
 */
static void memory_data(const struct opts *o, const uint64_t *ids)
{
	struct copts co = { .n_max = o->n, .timeout_ns = 3600 * NSEC_PER_SEC,
			    .tick_ns = o->tick_ns };
	struct memsnap m0, m1;
	struct contender *c;
	double at_arm = 0;
	int err;

	mem_snap(&m0);
	err = copen(&twheel_ops, &c, &co);
	if (err)
		die("twheel: open failed: %s", strerror(-err));
	err = twheel_arm_data(c, ids, o->n, co.timeout_ns);
	if (err)
		die("twheel: ARM with data failed: %s", strerror(-err));
	settle_arming(c, o->n, &at_arm);
	mem_snap(&m1);
	json_begin("memory_data", "twheel", o->n, o->rep);
	mem_delta_json(out, &m0, &m1, o->n);
	twheel_mem_json(c, o->n, at_arm);
	json_end();
	twheel_ops.close(c);
	mem_snap_free(&m0);
	mem_snap_free(&m1);
}

static void touch_session(const struct opts *o)
{
	struct contender *cs[8];
	uint64_t *ids = make_touch_ids(o), *seq, i;
	struct rng r = { 42 };
	struct opts oc = *o;
	int k;

	/* the random stream of touches, the same for every contender */
	seq = xcalloc(o->touches, sizeof(*seq));
	for (i = 0; i < o->touches; i++)
		seq[i] = ids[rng_next(&r) % o->n];
	/* every contender holds its N ids for the whole session, settled */
	for (k = 0; k < o->cont.n; k++) {
		oc.ops = o->cont.v[k];
		cs[k] = touch_arm(&oc, ids);
	}
	touch_rounds(cs, o, o->cont.n, seq);
	for (k = 0; k < o->cont.n && o->burst; k++) {
		oc.ops = o->cont.v[k];
		if (o->burst_only.n && !in_list(&o->burst_only, oc.ops))
			continue;
		burst(cs[k], &oc, ids, o->n);
	}
	for (k = 0; k < o->cont.n; k++)
		o->cont.v[k]->close(cs[k]);
	for (k = 0; k < o->cont.n && o->mem; k++)
		if (o->cont.v[k] == &twheel_ops)
			memory_data(o, ids);
	free(ids);
	free(seq);
}

/* ---- idle ------------------------------------------------------------------ */

struct null_sink {
	struct sink s;
	uint64_t got;
};

static void null_event(struct sink *s, const struct bench_event *e)
{
	(void)e;
	((struct null_sink *)s)->got++;
}

static void idle_phase(struct contender *c, const struct opts *o,
		       const char *state, uint64_t ids)
{
	struct null_sink k = { .s.fn = null_event };
	uint64_t t0, t1, c0, c1, s0, s1, f0 = 0, f1 = 0;
	struct twheel_stats st;
	int err;

	if (o->ops == &twheel_ops && !twheel_get_stats(c, &st))
		f0 = st.timer_fires;
	t0 = mono_ns();
	c0 = cpu_stat_self_ns();
	s0 = cpu_self_ns();
	err = o->ops->wait(c, t0 + o->seconds_ns, &k.s);
	if (err)
		die("%s: idle wait failed: %s", o->ops->name, strerror(-err));
	t1 = mono_ns();
	c1 = cpu_stat_self_ns();
	s1 = cpu_self_ns();
	if (o->ops == &twheel_ops && !twheel_get_stats(c, &st))
		f1 = st.timer_fires;
	json_begin("idle", o->ops->name, ids, o->rep);
	json_s("state", state);
	json_f("seconds", (double)(t1 - t0) / 1e9);
	json_f("cpu_pct", 100.0 * (double)(c1 - c0) / (double)(t1 - t0));
	json_f("cpu_rusage_pct", 100.0 * (double)(s1 - s0) / (double)(t1 - t0));
	json_u("events", k.got);
	if (o->ops == &twheel_ops) {
		json_u("timer_fires", f1 - f0);
		json_f("fires_per_s", (double)(f1 - f0) / ((double)(t1 - t0) / 1e9));
	}
	if (o->ops == &scan_ops)
		json_f("scans_per_s", (double)scan_count(c) / ((double)(t1 - t0) / 1e9));
	json_end();
	if (k.got)
		failed = 1;
}

static void idle(const struct opts *o)
{
	struct copts co = { .n_max = o->far ? o->far : 1,
			    .timeout_ns = 3600 * NSEC_PER_SEC,
			    .tick_ns = o->tick_ns };
	uint64_t *ids = make_ids(o->far), *dl = xcalloc(o->far, sizeof(*dl));
	uint64_t year = 365ULL * 86400 * NSEC_PER_SEC, now, i;
	struct contender *c;
	int err;

	err = copen(o->ops, &c, &co);
	if (err)
		die("%s: open failed: %s", o->ops->name, strerror(-err));
	idle_phase(c, o, "empty", 0);
	now = mono_ns();
	for (i = 0; i < o->far; i++)
		dl[i] = now + year + i * NSEC_PER_MSEC;
	err = o->ops->arm_abs(c, ids, dl, o->far);
	if (err)
		die("%s: arming far ids failed: %s", o->ops->name, strerror(-err));
	idle_phase(c, o, "far", o->far);
	o->ops->close(c);
	free(ids);
	free(dl);
}

/* ---- limits ---------------------------------------------------------------- */

static uint64_t read_u64_file(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

/* Raise RLIMIT_NOFILE to fs.nr_open (what the kernel allows at most). */
static void raise_nofile(void)
{
	struct rlimit rl;
	uint64_t nr_open = read_u64_file("/proc/sys/fs/nr_open");

	if (!nr_open || getrlimit(RLIMIT_NOFILE, &rl))
		return;
	rl.rlim_cur = rl.rlim_max = nr_open;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		/* not root: as far as the hard limit goes */
		getrlimit(RLIMIT_NOFILE, &rl);
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void limits(const struct opts *o)
{
	struct rlimit rl;

	getrlimit(RLIMIT_NOFILE, &rl);
	json_begin("limits", "timerfd", 0, o->rep);
	json_u("nr_open", read_u64_file("/proc/sys/fs/nr_open"));
	json_u("rlimit_nofile", (uint64_t)rl.rlim_cur);
	json_u("file_max", read_u64_file("/proc/sys/fs/file-max"));
	json_u("epoll_max_user_watches",
	       read_u64_file("/proc/sys/fs/epoll/max_user_watches"));
	json_end();
}

/* ---- main ------------------------------------------------------------------ */

static void usage(FILE *f, int status)
{
	usage_exit(f, status, "[-o FILE] [-r REP]\n"
		   "                    -c scan|timerfd|twheel|inproc|uring|sqpoll|libev|libevent|libuv\n"
		   "                    -n N WORKLOAD [OPTIONS]",
		   "       (touch: -c takes a comma-separated list, run side by side)\n"
		   "workloads: heartbeat [--period-ms P] [--window-ms W | --periods K] [--batch B]\n"
		   "           touch [--touches K] [--rounds R] [--batches 1,64,1024] [--mem]\n"
		   "                 [--burst | --burst-only a,b] [--ids random|dense|flood]\n"
		   "                 (--ids: the ids touched; burst only with random ids)\n"
		   "           idle [--seconds S] [--far F]\n"
		   "           limits\n"
		   "common:    [--tick-us U] (default 1000), [--tag T] (a \"tag\" on every line)\n"
		   "defaults:  -r 0, -o stdout (appended to FILE), heartbeat --period-ms 500\n"
		   "           --window-ms 3000 --batch 1024, touch --touches 200000\n"
		   "           --rounds 5, idle --seconds 5 --far 10000\n"
		   "Exit status: 0, 1 if a correctness check failed, 2 on a usage or setup\n"
		   "error.\n");
}

/* Each item of the comma-separated list s through item(); -1 if one is bad. */
static int parse_list(const char *s, void *dst, int (*item)(void *dst, const char *tok))
{
	char *copy = strdup(s), *tok, *save = NULL;
	int err = copy ? 0 : -1, n = 0;

	for (tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && !err;
	     tok = strtok_r(NULL, ",", &save), n++)
		err = item(dst, tok);
	free(copy);
	return err || !n ? -1 : 0;
}

static int ops_item(void *dst, const char *name)
{
	struct ops_list *l = dst;
	size_t k;

	for (k = 0; k < ARRAY_LEN(all_ops); k++)
		if (!strcmp(name, all_ops[k]->name))
			break;
	if (k == ARRAY_LEN(all_ops) || l->n == (int)ARRAY_LEN(l->v) || in_list(l, all_ops[k]))
		return -1;
	l->v[l->n++] = all_ops[k];
	return 0;
}

/* -c a,b,c and --burst-only a,b: contender names, each at most once */
static int parse_ops(char *val, void *dst)
{
	((struct ops_list *)dst)->n = 0;
	return parse_list(val, dst, ops_item);
}

static int batch_item(void *dst, const char *tok)
{
	struct opts *o = dst;
	uint64_t v;

	if (o->nbatches == (int)ARRAY_LEN(o->batches) || parse_u64(tok, &v) < 0 || !v ||
	    v > 1 << 20)
		return -1;
	o->batches[o->nbatches++] = (size_t)v;
	return 0;
}

/* --batches 1,64,1024: up to 8 batch sizes */
static int parse_batches(char *val, void *dst)
{
	((struct opts *)dst)->nbatches = 0;
	return parse_list(val, dst, batch_item);
}

static int parse_ids(char *val, void *dst)
{
	if (strcmp(val, "random") && strcmp(val, "dense") && strcmp(val, "flood"))
		return -1;
	*(const char **)dst = val;
	return 0;
}

static const struct {
	const char *name;
	void (*run)(const struct opts *o);
} workloads[] = {
	{ "heartbeat", heartbeat },
	{ "touch", touch_session },
	{ "idle", idle },
	{ "limits", limits },
};

int main(int argc, char **argv)
{
	struct opts o = { .ids = "random" };
	const char *outfile = NULL, *workload;
	uint64_t tick_us;
	size_t w;
	const struct opt opts[] = {
		{ NULL, OPT_STRING, .dst = &outfile, .letter = 'o' },
		{ NULL, OPT_U64, &o.rep, .min = 0, .max = INT_MAX, .letter = 'r' },
		{ NULL, OPT_CUSTOM, &o.cont, .parse = parse_ops, .letter = 'c' },
		{ NULL, OPT_U64, &o.n, .min = 0, .max = 1ULL << 32, .letter = 'n' },
		{ "period-ms", OPT_U64, &o.period_ms, .min = 1, .max = 86400000, .def = "500" },
		{ "batch", OPT_U64, &o.batch, .min = 1, .max = 1 << 20, .def = "1024" },
		{ "window-ms", OPT_U64, &o.window_ms, .min = 0, .max = 86400000, .def = "3000" },
		{ "periods", OPT_U64, &o.periods, .min = 0, .max = 1ULL << 32 },
		{ "touches", OPT_U64, &o.touches, .min = 1, .max = 1ULL << 32, .def = "200000" },
		{ "batches", OPT_CUSTOM, &o, .parse = parse_batches, .def = "1,64,1024" },
		{ "mem", OPT_FLAG, .dst = &o.mem },
		{ "burst", OPT_FLAG, .dst = &o.burst },
		{ "burst-only", OPT_CUSTOM, &o.burst_only, .parse = parse_ops },
		{ "tag", OPT_STRING, .dst = &json_tag },
		{ "seconds", OPT_SECONDS, &o.seconds_ns, .min = 0, .max = 86400 * NSEC_PER_SEC,
		  .def = "5" },
		{ "far", OPT_U64, &o.far, .min = 0, .max = 1ULL << 32, .def = "10000" },
		{ "tick-us", OPT_U64, &tick_us, .min = 1, .max = 60000000, .def = "1000" },
		{ "rounds", OPT_U64, &o.rounds, .min = 1, .max = 10000, .def = "5" },
		{ "ids", OPT_CUSTOM, &o.ids, .parse = parse_ids },
		{ NULL },
	};

	out = stdout;
	workload = sole_operand(argc, argv, parse_opts(argc, argv, opts, OPTS_UNKNOWN_APART),
				"WORKLOAD");
	for (w = 0; w < ARRAY_LEN(workloads); w++)
		if (!strcmp(workload, workloads[w].name))
			break;
	if (w == ARRAY_LEN(workloads))
		usage_error("unknown workload: %s", workload);
	o.ops = o.cont.n ? o.cont.v[0] : NULL;
	o.burst |= o.burst_only.n > 0;
	o.tick_ns = tick_us * 1000;
	if (o.burst && strcmp(o.ids, "random"))
		usage_error("--burst needs --ids random");
	if (workloads[w].run != limits) {
		if (!o.ops)
			usage_error("-c CONTENDER is required");
		if (!o.n && workloads[w].run != idle)
			usage_error("-n N is required");
		if (o.touches < o.rounds)
			usage_error("--touches must be at least --rounds");
		if (o.cont.n > 1 && workloads[w].run != touch_session)
			usage_error("one contender per %s run", workload);
	}
	if (outfile) {
		out = fopen(outfile, "a");
		if (!out)
			die("%s: %m", outfile);
	}
	raise_nofile();
	workloads[w].run(&o);
	if (failed)
		fprintf(stderr, "twheel_bench: %s/%s: a correctness check failed\n",
			workload, o.ops->name);
	return failed;
}
