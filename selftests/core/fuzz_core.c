// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for kmod/wheel.c and index.c: the input is a sequence of
 * operations on one wheel and one index, run against the model of
 * kmod/model.c (the one the KUnit suite drives too), which checks
 * every property it lists after every step.  The input picks each
 * operation and its arguments, byte by byte: touches and cancels of any
 * id, also aimed at queued ids at any position in the queue, through the
 * wheel even when due (TWM_RAW); later deadlines written to the entry
 * alone, even when due; reads, faulting ones included; advances to now
 * with budgets of any size; the clock's steps; catch-ups; resizes of the
 * index the way the device asks for them and to any size, and migrate
 * steps of any size; dumps; lookups; batches of touches or cancels as a
 * write() or CANCEL makes them; a flush to the end of time.
 * Start states built by scripts of operations save the input the bytes
 * to reach them.  Each input ends with everything expired, read and torn
 * down.
 *
 * A violation prints what went wrong and abort()s.  TWHEEL_FUZZ_TRACE=1 in
 * the environment prints every operation to stderr (for replaying a crash
 * file: ./fuzz_core crash-...).  TWHEEL_FUZZ_SEED=N keys the index with
 * another secret (default 1; the module draws one per fd): a crash replays
 * with the seed it was found with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sanitizer/asan_interface.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>

#include "model.h"

#define NODES		256
#define RESIZE_MAX	4096	/* forced resizes: up to this many slots */

static struct twm *m;
static u64 secret[TW_SECRET_WORDS];	/* the index's key: TWHEEL_FUZZ_SEED */
static unsigned long queue_len[5];	/* inputs by longest queue */

/* ----------------------------------------------------------------- hooks */

static void *fuzz_zalloc(void *ctx, size_t size)
{
	return calloc(1, size);
}

static void fuzz_free(void *ctx, void *p)
{
	free(p);
}

static void fuzz_fail(void *ctx, const char *why)
{
	fflush(stdout);
	fprintf(stderr, "\ntwheel fuzz: VIOLATION: %s\n", why);
	abort();
}

static void fuzz_trace(void *ctx, const char *what)
{
	/* stderr: unbuffered, so tracing allocates nothing (see -detect_leaks) */
	fprintf(stderr, "[%lu] %s\n", m->op_no, what);
}

static void fuzz_poison(const void *p, size_t size, bool on)
{
	if (on)
		ASAN_POISON_MEMORY_REGION(p, size);
	else
		ASAN_UNPOISON_MEMORY_REGION(p, size);
}

static struct twm_hooks hooks = {
	.zalloc = fuzz_zalloc,
	.free = fuzz_free,
	.fail = fuzz_fail,
	.poison = fuzz_poison,
};

/* ---------------------------------------------------------------- time */

static void time_step(void)
{
	u64 nt = twm_now_tick(m), now = m->now, tick = m->tick, to = now, t, a;
	unsigned int l, i;

	switch (twm_u8(m) % 9) {
	case 0:
		to = twm_sat_add(now, twm_sat_mul(tick, twm_u8(m)) / 64);
		break;
	case 1:
		to = twm_sat_add(now, twm_sat_mul(tick, 1 + twm_u8(m) % 66));
		break;
	case 2:		/* to the next slot that comes due, or next to it */
		if (tw_wheel_next(&m->w, &t))
			to = twm_at_tick(m, t, (int)(twm_u8(m) % 3) - 1);
		break;
	case 3:		/* to the earliest deadline, or just before it */
		t = 0;
		for (i = 0; i < m->nr; i++)
			if (m->ids[i].state == TWM_ARMED &&
			    (!t || m->ids[i].deadline < t))
				t = m->ids[i].deadline;
		to = t ? t - (twm_u8(m) & 1) : now;
		break;
	case 4:		/* a jump at the scale of a level */
		l = twm_u8(m) % TW_LEVELS;
		a = twm_sat_mul(tick, 1ULL << (TW_LVL_BITS * l));
		a = twm_sat_mul(a, 1 + twm_u8(m) % 64);
		to = twm_sat_add(now, a + twm_u8(m));
		break;
	case 5:		/* huge */
		to = twm_sat_add(now, twm_bytes(m, 8) & TWM_KMAX);
		break;
	case 6:
		a = twm_u8(m) % 2;
		to = TWM_KMAX - a * twm_u8(m);
		break;
	case 7:		/* to the start of the next period of a level */
		l = TW_LVL_BITS * (1 + twm_u8(m) % (TW_LEVELS - 1));
		to = twm_at_tick(m, ((nt >> l) + 1) << l,
				 (int)(twm_u8(m) % 3) - 1);
		break;
	default:
		to = twm_sat_add(now, 1 + twm_u8(m));
		break;
	}
	if (to > now)
		m->now = to;
	twm_trace(m, "  now %llu (tick %llu)", m->now, twm_now_tick(m));
}

/* ----------------------------------------------------------- operations */

enum op {
	OP_SET, OP_ADD_RAW, OP_CANCEL, OP_READ, OP_ADVANCE_FULL,
	OP_ADVANCE_PARTIAL, OP_CATCH_UP, OP_TIME, OP_MAINTAIN, OP_RESIZE,
	OP_MIGRATE, OP_DUMP_BEGIN, OP_DUMP_STEP, OP_FIND, OP_BULK_SET,
	OP_BULK_CANCEL, OP_FLUSH, OP_TOUCH_QUEUED, OP_CANCEL_QUEUED, OP_LATER,
	OP_NR
};

static const char *const op_names[] = {
	"set", "add_raw", "cancel", "read", "advance_full", "advance_partial",
	"catch_up", "time", "maintain", "resize", "migrate", "dump_begin",
	"dump_step", "find", "bulk_set", "bulk_cancel", "flush", "touch_queued",
	"cancel_queued", "later",
};

/*
 * Opcode byte -> operation, the common ones more often.  Bytes up to 31
 * keep their meaning when operations are added (the start scripts use
 * them).
 */
static const unsigned char op_table[37] = {
	OP_SET, OP_SET, OP_SET, OP_SET, OP_SET, OP_ADD_RAW, OP_CANCEL, OP_CANCEL,
	OP_READ, OP_READ, OP_ADVANCE_FULL, OP_ADVANCE_FULL, OP_ADVANCE_FULL,
	OP_ADVANCE_PARTIAL, OP_ADVANCE_PARTIAL, OP_CATCH_UP, OP_TIME, OP_TIME,
	OP_TIME, OP_TIME, OP_MAINTAIN, OP_MAINTAIN, OP_RESIZE, OP_MIGRATE,
	OP_DUMP_BEGIN, OP_DUMP_STEP, OP_DUMP_STEP, OP_DUMP_STEP, OP_FIND,
	OP_BULK_SET, OP_BULK_CANCEL, OP_FLUSH, OP_TOUCH_QUEUED, OP_TOUCH_QUEUED,
	OP_CANCEL_QUEUED, OP_SET, OP_LATER,
};

static unsigned long migrate_count(void)
{
	u8 b = twm_u8(m);

	return b >= 240 ? ~0UL : b % 9;
}

/* A lookup of any id, or of the id of any key: present ids only. */
static void op_find(void)
{
	u64 id = twm_u8(m) & 1 ? twm_bytes(m, 8) :
		 tw_key_id(&m->x, twm_bytes(m, 8));
	struct tw_ent *f = tw_index_find(&m->x, id);
	unsigned int i;

	for (i = 0; i < m->nr; i++)
		if (m->ids[i].state != TWM_ABSENT && m->ids[i].id == id)
			break;
	TWM_CHECK(m, i < m->nr ? f && f->node == m->ids[i].node &&
		  f->id == id : !f, "find(%#llx) gives %p", id, f);
}

/* A touch or cancel of queued event @b % queued, anywhere in the queue. */
static void op_queued(enum op op, u8 b)
{
	unsigned int k, i;

	if (!m->rq_len) {
		twm_trace(m, "%s: none queued", op_names[op]);
		return;
	}
	k = b % m->rq_len;
	i = m->rq[k];
	twm_trace(m, "%s: event %u of %u, id %u", op_names[op], k, m->rq_len,
		  i);
	if (op == OP_TOUCH_QUEUED)
		twm_set(m, i, twm_gen_deadline(m), 0);
	else
		twm_cancel(m, i);
}

/*
 * A write() or CANCEL of @nr ids from the input's seed: tw_lock()
 * maintains the index and catches up, then the ids follow by a stride.
 */
static void op_bulk(enum op op)
{
	u64 seed = twm_bytes(m, 2) | 1ULL << 40;
	unsigned int stride = 1 + 2 * (twm_u8(m) % 64), nr, i, k;

	nr = 1 + twm_u8(m) % 128;
	i = twm_pick(m);
	twm_trace(m, "%s %u from id %u stride %u", op_names[op], nr, i, stride);
	twm_maintain_batch(m, nr);
	twm_catch_up(m);
	m->prng = seed;
	m->prng_on = true;
	for (k = 0; k < nr; k++, i = (i + stride) % m->nr) {
		if (op == OP_BULK_SET)
			twm_set(m, i, twm_gen_deadline(m), 0);
		else
			twm_cancel(m, i);
	}
	m->prng_on = false;
}

/*
 * An armed id's deadline moved later in its entry alone, by the model, as
 * the raw API allows even when the new deadline is due (tw_wheel_set()
 * takes its fast path only when it is not).
 */
static void op_later(void)
{
	unsigned int i = twm_pick(m);
	u64 d = twm_gen_deadline(m);

	twm_trace(m, "later id %u (%s) to %llu", i,
		  twm_state_name[m->ids[i].state], d);
	if (m->ids[i].state == TWM_ARMED)
		twm_later(m, i, max(d, m->ids[i].deadline));
}

/* A resize to any size that holds the ids, with room. */
static void op_resize(void)
{
	unsigned long lo = max_t(unsigned long, TW_IDX_MIN,
				 m->nr_present + m->nr_present / 8 + 2);
	u8 b = twm_u8(m);

	if (b & 1)
		twm_resize(m, lo + twm_bytes(m, 2) % (RESIZE_MAX - lo + 1));
	else
		twm_resize(m, lo + twm_u8(m) % 16);
}

static void run_op(void)
{
	enum op op = op_table[twm_u8(m) % sizeof(op_table)];
	unsigned int i;
	u8 b;

	m->op_name = op_names[op];
	switch (op) {
	case OP_SET:
	case OP_ADD_RAW:
		i = twm_pick(m);
		twm_set(m, i, twm_gen_deadline(m), op == OP_ADD_RAW ? TWM_RAW : 0);
		break;
	case OP_CANCEL:
		twm_cancel(m, twm_pick(m));
		break;
	case OP_READ:	/* one byte: how many, and whether the copy faults */
		b = twm_u8(m);
		twm_trace(m, "read %u%s", 1 + b % 32, b >= 224 ? " (fault)" : "");
		twm_read(m, 1 + b % 32, b >= 224);
		break;
	case OP_TOUCH_QUEUED:
	case OP_CANCEL_QUEUED:
		op_queued(op, twm_u8(m));
		break;
	case OP_ADVANCE_FULL:
		b = twm_u8(m);
		twm_trace(m, "advance_full to %llu pattern %u", m->now, b);
		twm_advance_full(m, b);
		break;
	case OP_ADVANCE_PARTIAL:
		b = twm_u8(m) % 16;
		twm_trace(m, "advance_partial to %llu budget %u", m->now, b);
		twm_advance_once(m, b);
		break;
	case OP_CATCH_UP:
		twm_trace(m, "catch_up to %llu", m->now);
		twm_catch_up(m);
		break;
	case OP_TIME:
		twm_trace(m, "time");
		time_step();
		break;
	case OP_MAINTAIN:	/* a batch of up to 255 new ids */
		b = twm_u8(m);
		twm_maintain(m, b, migrate_count());
		break;
	case OP_RESIZE:
		op_resize();
		break;
	case OP_MIGRATE:
		twm_trace(m, "migrate");
		twm_migrate(m, migrate_count());
		break;
	case OP_DUMP_BEGIN:
		twm_trace(m, "dump_begin");
		twm_dump_begin(m);
		break;
	case OP_DUMP_STEP:
		twm_trace(m, "dump_step");
		twm_dump_step(m);
		break;
	case OP_FIND:
		op_find();
		break;
	case OP_LATER:
		op_later();
		break;
	case OP_BULK_SET:
	case OP_BULK_CANCEL:
		op_bulk(op);
		break;
	case OP_FLUSH:
		twm_trace(m, "flush");
		m->now = TWM_KMAX;
		twm_advance_full(m, twm_u8(m));
		break;
	default:
		break;
	}
	twm_check(m);
}

/* ------------------------------------------------------------- one input */

static const u64 ticks[] = { 100000, 1000000, 7777777, 3600000000000ULL,
			     1000000000, 100001, 123456789 };

/* A tick and a clock from the input; the model starts with them. */
static void setup(void)
{
	unsigned int k = twm_u8(m);
	u64 tick, t0;

	if (k < 224)
		tick = ticks[k % (sizeof(ticks) / sizeof(ticks[0]))];
	else	/* any tick the module accepts: [100 us, 1 h] */
		tick = 100000 + twm_bytes(m, 6) % (3600000000000ULL - 100000 + 1);
	switch (twm_u8(m) % 6) {
	case 0:
		t0 = 0;
		break;
	case 1:
		t0 = twm_sat_mul(twm_bytes(m, 3), tick);
		t0 = twm_sat_add(t0, twm_u8(m));
		break;
	case 2:
		t0 = twm_bytes(m, 8) >> 2;
		break;
	case 3:
		t0 = TWM_KMAX - twm_sat_mul(tick, twm_bytes(m, 2));
		break;
	case 4:
		t0 = TWM_KMAX - twm_u8(m);
		break;
	default:
		t0 = twm_bytes(m, 8) & TWM_KMAX;
		break;
	}
	twm_start(m, tick, t0, TW_IDX_MIN, secret);
}

/*
 * Start states, picked by one input byte, that take many operations to
 * build: 120 ids (mixed ids and deadlines), then a shrink or a grow of
 * the index in progress, a wheel advanced part way with its drain list
 * full, or most of the ids expired, their events queued.  Written in the
 * input's own encoding: opcode bytes are indexes into op_table[].
 */
#define OPB_ADVANCE_FULL	10
#define OPB_ADVANCE_PARTIAL	13
#define OPB_TIME		16
#define OPB_MAINTAIN		20
#define OPB_RESIZE		22
#define OPB_MIGRATE		23
#define OPB_BULK_SET		29

static const u8 script_nodes[] = {
	OPB_BULK_SET, 0x12, 0x34, 37, 119, 0,	/* seed, stride 75, 120, from 0 */
};
static const u8 script_shrink[] = {
	OPB_RESIZE, 0, 3,			/* 161 -> 140 slots */
	OPB_MIGRATE, 1,				/* one entry moved */
};
static const u8 script_grow[] = {
	OPB_MAINTAIN, 100, 3,			/* 161 -> 294, three moved */
};
static const u8 script_drain[] = {
	OPB_TIME, 4, 3, 5, 0,			/* six level-3 slots later */
	OPB_ADVANCE_PARTIAL, 5,			/* five ids moved */
};
static const u8 script_queue[] = {
	OPB_TIME, 4, 4, 63, 0,			/* 64 level-4 slots later */
	OPB_ADVANCE_FULL, 255,			/* all due expired at once */
};

static void run_script(const u8 *script, size_t len)
{
	const u8 *p = m->in;
	size_t n = m->in_n;

	m->in = script;
	m->in_n = len;
	while (m->in_n) {
		m->op_no++;
		run_op();
	}
	m->in = p;
	m->in_n = n;
}

static void start_state(void)
{
	unsigned int k = twm_u8(m);

	if (k < 192)
		return;
	k %= 5;
	twm_trace(m, "start state %u", k);
	run_script(script_nodes, sizeof(script_nodes));
	if (k == 1)
		run_script(script_shrink, sizeof(script_shrink));
	else if (k == 2)
		run_script(script_grow, sizeof(script_grow));
	else if (k == 3)
		run_script(script_drain, sizeof(script_drain));
	else if (k == 4)
		run_script(script_queue, sizeof(script_queue));
}

/* What the operations covered, in the log of a run. */
static void print_stats(void)
{
	char buf[1024];

	if (!m || (!m->count[TWM_POP] && !m->count[TWM_EXPIRED]))
		return;
	twm_counts(m->count, buf, sizeof(buf));
	fprintf(stderr, "twheel fuzz: %s\n", buf);
	fprintf(stderr, "twheel fuzz: inputs by longest queue: %lu none, %lu 1, %lu 2-7, %lu 8-63, %lu 64+\n",
		queue_len[0], queue_len[1], queue_len[2], queue_len[3],
		queue_len[4]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *env = getenv("TWHEEL_FUZZ_TRACE");
	const char *seed_env = getenv("TWHEEL_FUZZ_SEED");
	u64 seed = seed_env ? strtoull(seed_env, NULL, 0) : 1;
	int k;

	/* the index's secret, as the module draws one per fd */
	for (k = 0; k < TW_SECRET_WORDS; k++)
		secret[k] = twm_rand(&seed);
	if (seed_env)
		fprintf(stderr, "twheel fuzz: index secret %#llx %#llx %#llx\n",
			secret[0], secret[1], secret[2]);
	if (op_table[OPB_ADVANCE_FULL] != OP_ADVANCE_FULL ||
	    op_table[OPB_ADVANCE_PARTIAL] != OP_ADVANCE_PARTIAL ||
	    op_table[OPB_TIME] != OP_TIME || op_table[OPB_MAINTAIN] != OP_MAINTAIN ||
	    op_table[OPB_RESIZE] != OP_RESIZE || op_table[OPB_MIGRATE] != OP_MIGRATE ||
	    op_table[OPB_BULK_SET] != OP_BULK_SET) {
		fprintf(stderr, "twheel fuzz: OPB_* do not match op_table[]\n");
		abort();
	}
	if (env && *env && *env != '0')
		hooks.trace = fuzz_trace;
	m = twm_new(&hooks, NULL, NODES);
	if (!m)
		abort();
	m->find_every = 8;
	atexit(print_stats);
	return 0;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	unsigned int q;

	m->in = data;
	m->in_n = size;
	m->prng_on = false;
	setup();
	start_state();
	while (m->in_n) {
		m->op_no++;
		run_op();
	}
	twm_finish(m);
	twm_teardown(m);
	q = m->max_queue;
	queue_len[!q ? 0 : q == 1 ? 1 : q < 8 ? 2 : q < 64 ? 3 : 4]++;
	return 0;
}
