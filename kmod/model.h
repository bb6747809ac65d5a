/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model of one wheel and its index (model.c, where its properties are
 * listed), shared by the KUnit suites (*_kunit.c, in the kernel and in
 * user space) and the fuzzer (selftests/core/fuzz_core.c).
 */
#ifndef _TWHEEL_MODEL_H
#define _TWHEEL_MODEL_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/twheel.h>

#include "wheel.h"

#define TWM_KMAX	TWHEEL_DEADLINE_MAX	/* KTIME_MAX: the end of time */
#define TWM_READ_CHUNK	12U	/* events per read() lock hold: TW_HOLD_EVENTS */
#define TWM_ADVANCE_CALLS	200000	/* more calls: advance never ends */

/* splitmix64's increment, 2^64 / the golden ratio: an odd multiplier too */
#define TWM_GAMMA	0x9e3779b97f4a7c15ULL

/**
 * struct twm_hooks - what a model needs of the program that runs it
 * @zalloc: zeroed memory for @ctx, or NULL
 * @free: gives back memory from @zalloc
 * @fail: reports a broken property, @why, and does not return
 * @trace: prints an operation, or NULL for no tracing
 * @poison: marks memory that must not be touched (@on) or may be again,
 *	or NULL: the fuzzer's ASan poisoning of free nodes
 */
struct twm_hooks {
	void *(*zalloc)(void *ctx, size_t size);
	void (*free)(void *ctx, void *p);
	void (*fail)(void *ctx, const char *why);
	void (*trace)(void *ctx, const char *what);
	void (*poison)(const void *p, size_t size, bool on);
};

enum twm_state { TWM_ABSENT, TWM_ARMED, TWM_QUEUED };

/**
 * struct twm_id - what the model expects of one id
 * @state: TWM_ABSENT, TWM_ARMED or TWM_QUEUED
 * @id: the id (while absent, the last one it had: find() must miss it)
 * @data: the data its node, or its event, holds
 * @node: its entry's node: armed, or its event's
 * @deadline: the id's deadline: its index entry's
 * @placed: while armed: the deadline the node was last armed with
 * @slotted: while armed: a deadline its slot matches
 * @slotted_e: the expiry tick of @slotted
 * @stamp: while queued: the expected expiry clock of its event
 * @future: armed with a deadline after now: takes part in ordering
 * @stable: dump: present, at or past the start, since the dump began
 * @touched: inserted or removed by the current operation
 * @listed: dump: times listed
 */
struct twm_id {
	enum twm_state state;
	u64 id;
	u64 data;
	struct tw_node *node;
	u64 deadline;
	u64 placed;
	u64 slotted;
	u64 slotted_e;
	u64 stamp;
	bool future;
	bool stable;
	bool touched;
	unsigned int listed;
};

/* A node of the pool, with a red zone after it. */
struct twm_pnode {
	struct tw_node n;
	u64 redzone[4];
};

/* Owners of a pool node that are not ids. */
enum { TWM_P_FREE = -1, TWM_P_SENTINEL = -2 };

/* What the operations did, for the programs to report and require. */
enum twm_count {
	TWM_NEW, TWM_LAZY, TWM_DATA, TWM_AT_ONCE, TWM_ADD_DUE, TWM_DEL_TOUCH,
	TWM_DEL_CANCEL, TWM_DISCARD_TOUCH, TWM_DISCARD_CANCEL, TWM_ONLY,
	TWM_HEAD, TWM_MIDDLE, TWM_LAST, TWM_CANCEL, TWM_ADVANCE, TWM_EXPIRED,
	TWM_RESLOT, TWM_READ, TWM_POP, TWM_RELOOKUP, TWM_FAULT, TWM_GROW,
	TWM_SHRINK, TWM_RESIZE, TWM_DUMP, TWM_COUNTS
};

extern const char *const twm_count_name[TWM_COUNTS];

/* Flags of twm_set(). */
#define TWM_RAW		BIT(0)	/* through the wheel even when due; never lazy */
#define TWM_EAGER	BIT(1)	/* never lazy: taken off and placed again */

/**
 * struct twm - the model of one wheel, its index and its nodes
 * @hooks: the program's memory, failure and tracing
 * @ctx: passed to the hooks
 * @nr: ids i in [0, @nr)
 * @ids: the ids
 * @w: the wheel
 * @x: its index
 * @pool: the nodes: 2 * @nr + 2, every id's, the sentinel and spares
 * @pool_nr: nodes in @pool
 * @owner: per node of @pool: the id it belongs to (its own, or the one
 *	whose event it holds), TWM_P_FREE or TWM_P_SENTINEL
 * @freeq: the free nodes, a FIFO, so that a node set free stays free a
 *	while
 * @free_head: the first of @freeq
 * @free_len: nodes in @freeq
 * @nodes_live: nodes not free
 * @now: the clock, in ns
 * @tick: the wheel's tick, in ns
 * @last_e: the highest expiry tick of an ordered expiry
 * @last_e_set: whether @last_e is
 * @late_max: the model of w.late_max
 * @prev_cur: w.cur at the last check
 * @nr_present: ids in the index
 * @nr_armed: ids armed
 * @rq: the ready queue: its events' ids, oldest first
 * @rqn: the nodes that hold them, then the sentinel
 * @rq_len: events queued
 * @max_queue: the longest @rq_len since twm_start()
 * @mtab: the table the index must have
 * @mold: the old table it must have while resizing, or NULL
 * @msize: slots in @mtab
 * @mold_size: slots in @mold
 * @offer_ids: the batch a table tw_index_upkeep() asked for is offered
 *	for (twm_start_resize() through tw_index_offer()), or ~0UL
 * @dump_on: a dump is in progress
 * @dump_any: it listed an id
 * @dump_cursor: its cursor
 * @dump_last_key: the key it listed last
 * @find_all: find() every id at the next check
 * @find_every: find() every id every so many operations (1: always)
 * @op_no: operations since twm_start(), counted by the program
 * @op_name: the current operation, set by the program
 * @data_seq: touches that carried data
 * @in: the input that bytes come from while @prng_on is false
 * @in_n: bytes left in @in: 0 after the last one
 * @prng: splitmix64's state, where bytes come from while @prng_on
 * @prng_on: bytes come from @prng
 * @seen: scratch: a byte per id
 * @count: what the operations did (enum twm_count), since twm_new()
 * @why: the message of a failure
 */
struct twm {
	const struct twm_hooks *hooks;
	void *ctx;
	unsigned int nr;
	struct twm_id *ids;
	struct tw_wheel w;
	struct tw_index x;
	struct twm_pnode *pool;
	unsigned int pool_nr;
	int *owner;
	unsigned int *freeq;
	unsigned int free_head;
	unsigned int free_len;
	unsigned long nodes_live;
	u64 now;
	u64 tick;
	u64 last_e;
	bool last_e_set;
	u64 late_max;
	u64 prev_cur;
	unsigned long nr_present;
	unsigned long nr_armed;
	unsigned int *rq;
	struct tw_node **rqn;
	unsigned int rq_len;
	unsigned int max_queue;
	struct tw_ent *mtab;
	struct tw_ent *mold;
	unsigned long msize;
	unsigned long mold_size;
	unsigned long offer_ids;
	bool dump_on;
	bool dump_any;
	u64 dump_cursor;
	u64 dump_last_key;
	bool find_all;
	unsigned int find_every;
	unsigned long op_no;
	const char *op_name;
	u64 data_seq;
	const u8 *in;
	size_t in_n;
	u64 prng;
	bool prng_on;
	u8 *seen;
	unsigned long count[TWM_COUNTS];
	char why[512];
};

extern const char *const twm_state_name[];

#define TWM_CHECK(m, cond, ...) do {					\
	if (!(cond))							\
		twm_fail(m, __FILE__, __LINE__, __VA_ARGS__);		\
} while (0)

u64 twm_rand(u64 *state);
unsigned long twm_home(u64 key, unsigned long size);
__printf(4, 5) void twm_fail(struct twm *m, const char *file, int line,
			     const char *fmt, ...);
__printf(2, 3) void twm_trace(struct twm *m, const char *fmt, ...);
u8 twm_u8(struct twm *m);
u64 twm_bytes(struct twm *m, unsigned int nr);
unsigned int twm_pick(struct twm *m);
u64 twm_sat_add(u64 a, u64 b);
u64 twm_sat_mul(u64 a, u64 b);
u64 twm_at_tick(struct twm *m, u64 t, int off);
u64 twm_now_tick(const struct twm *m);
unsigned long twm_table_check(const struct tw_index *x,
			      const struct tw_ent *t, unsigned long size,
			      unsigned long empty_below,
			      const char **why, unsigned long *slot);
void twm_check(struct twm *m);
bool twm_advance_once(struct twm *m, unsigned int budget);
void twm_advance_full(struct twm *m, u8 b);
void twm_catch_up(struct twm *m);
void twm_resize(struct twm *m, unsigned long size);
void twm_migrate(struct twm *m, unsigned long entries);
void twm_maintain(struct twm *m, unsigned long extra,
		  unsigned long entries);
void twm_maintain_batch(struct twm *m, unsigned long ids);
void twm_cancel(struct twm *m, unsigned int i);
void twm_dump_begin(struct twm *m);
void twm_dump_step(struct twm *m);
u64 twm_gen_deadline(struct twm *m);
void twm_later(struct twm *m, unsigned int i, u64 d);
void twm_set(struct twm *m, unsigned int i, u64 d, unsigned int flags);
void twm_read(struct twm *m, unsigned int nr, bool fault);
struct twm *twm_new(const struct twm_hooks *hooks, void *ctx,
		    unsigned int nr);
void twm_start(struct twm *m, u64 tick, u64 now, unsigned long size,
	       const u64 secret[TW_SECRET_WORDS]);
void twm_finish(struct twm *m);
void twm_teardown(struct twm *m);
void twm_counts(const unsigned long *count, char *buf, size_t size);

#endif /* _TWHEEL_MODEL_H */
