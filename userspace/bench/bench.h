/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel_bench: the benchmark behind `make bench` (scripts/bench.sh).
 *
 * The contenders keep the same stream of 64-bit ids alive and report the
 * ids that went silent:
 *   scan     a hash map id -> last_seen and a loop scanning it every tick
 *   timerfd  one timerfd per id, all in one epoll set
 *   twheel   /dev/twheel: write() touches, read() expirations
 *   uring, sqpoll  the same, touched through io_uring (touch runs only)
 *   inproc   kmod/wheel.c and index.c linked into this process (malloc'd nodes)
 *   libev, libevent, libuv  the timer libraries a C service would use
 *            instead: one timer per id, expired from the library's loop
 *
 * This header is shared by every file, including c_inproc.c, which is
 * compiled against the kernel shims of tools/include (no uapi header).
 */
#ifndef TWHEEL_BENCH_H
#define TWHEEL_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* clocks (mono_ns(), sleep_until_ns(), cpu_self_ns()), splitmix64 */
#include "util.h"

/* ---- contender interface ------------------------------------------------ */

/*
 * One expiration as seen by the bench: the id, the deadline the contender
 * says it had, when the contender queued it (0 if it cannot tell) and the
 * bench's clock right after the event reached user space.
 */
struct bench_event {
	uint64_t id;
	uint64_t deadline;
	uint64_t queued;
	uint64_t seen;
};

struct sink {
	void (*fn)(struct sink *s, const struct bench_event *ev);
	bool done;		/* set by fn: wait() returns early */
};

struct copts {
	uint64_t n_max;		/* ids the contender must be able to hold */
	uint64_t timeout_ns;	/* touch: deadline = now + timeout_ns */
	uint64_t tick_ns;	/* wheel granularity / scan period */
};

struct contender;

struct contender_ops {
	const char *name;
	/* 0 or -errno; on success *c is the new instance */
	int (*open)(struct contender **c, const struct copts *o);
	/* create or replace ids with absolute deadlines (setup, bursts) */
	int (*arm_abs)(struct contender *c, const uint64_t *ids,
		       const uint64_t *deadlines, size_t n);
	/*
	 * touch a batch: deadline = now + timeout.  @now is the bench's clock
	 * read once for the batch (twheel reads its own in the kernel).
	 */
	int (*touch)(struct contender *c, const uint64_t *ids, size_t n,
		     uint64_t now);
	/* deliver events to @s until the clock reaches @until or s->done */
	int (*wait)(struct contender *c, uint64_t until, struct sink *s);
	void (*close)(struct contender *c);
	/*
	 * optional: return once work that the implementation defers past the
	 * calls that caused it is done (the module's work item finishing an
	 * index resize; the in-process wheel finishes it here, as it has no
	 * worker), so that timed rounds start from the same steady state
	 */
	void (*settle)(struct contender *c);
};

struct contender {
	const struct contender_ops *ops;
	struct copts o;
	uint64_t n_ids;		/* ids held (as far as the bench knows) */
};

/*
 * A contender's operations in one statement:
 *   const struct contender_ops x_ops = CONTENDER_OPS("x", x_open, x_arm_abs,
 *	x_touch, x_wait, x_close, NULL);
 * in the order of the struct; settle may be NULL.
 */
#define CONTENDER_OPS(_name, _open, _arm_abs, _touch, _wait, _close, _settle) { \
	.name = (_name), .open = (_open), .arm_abs = (_arm_abs),		\
	.touch = (_touch), .wait = (_wait), .close = (_close),			\
	.settle = (_settle),							\
}

extern const struct contender_ops scan_ops, timerfd_ops, twheel_ops,
	inproc_ops, uring_ops, sqpoll_ops, libev_ops, libevent_ops, libuv_ops;

/* twheel-only extras (c_twheel.c) */
struct twheel_stats;
int twheel_get_stats(struct contender *c, struct twheel_stats *st);
/* ARM with a relative timeout and non-zero data (the node holds it) */
int twheel_arm_data(struct contender *c, const uint64_t *ids, size_t n,
		    uint64_t timeout_ns);
int twheel_fd(struct contender *c);

/* inproc-only extras (c_inproc.c) */
struct inproc_info {
	uint64_t nodes;
	uint64_t index_bytes;
	uint64_t node_size;
	uint64_t reslots;
	uint64_t hold_max_ns;	/* longest advance() call */
};
void inproc_info(struct contender *c, struct inproc_info *i);

/* scan-only extras */
uint64_t scan_table_bytes(struct contender *c);
uint64_t scan_count(struct contender *c);	/* scans done so far */
double scan_pass_ns(struct contender *c);	/* mean time of one scan */

/* timerfd-only extras */
uint64_t timerfd_count(struct contender *c);

/* ---- util.c -------------------------------------------------------------- */

uint64_t clock_res_ns(void);		/* CLOCK_MONOTONIC's resolution: 1 unless coarse */
/*
 * The loop of a contender's wait(): look() once, even if @until has
 * passed, then again until the clock reaches @until or s->done.  look()
 * gets the clock, read just before, and blocks at most until @until (not
 * at all once it has passed).  0, or look()'s -errno, which ends the loop.
 */
int wait_loop(struct contender *c, uint64_t until, struct sink *s,
	      int (*look)(struct contender *c, uint64_t now, uint64_t until,
			  struct sink *s));
void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void *xcalloc(size_t n, size_t size);

/* ids: a bijection of the index, so that ids look like random uids */
uint64_t id_of(uint64_t index);
uint64_t index_of(uint64_t id);

struct rng {
	uint64_t s;
};
uint64_t rng_next(struct rng *r);

/* id -> value map, open addressing, linear probing; key ~0 is reserved */
struct hmap {
	uint64_t *keys;
	uint64_t *vals;
	uint64_t mask;
	uint64_t nr;
};
#define HMAP_EMPTY	UINT64_MAX
void hmap_init(struct hmap *m, uint64_t expect);
void hmap_free(struct hmap *m);
uint64_t *hmap_find(const struct hmap *m, uint64_t key);
/* the value cell of @key, inserted with value 0 if absent (*added = 1) */
uint64_t *hmap_upsert(struct hmap *m, uint64_t key, int *added);
uint64_t hmap_bytes(const struct hmap *m);
bool hmap_delete(struct hmap *m, uint64_t key);
void hmap_delete_at(struct hmap *m, uint64_t i);

/* CPU: the whole machine (/proc/stat); this process's is cpu_self_ns() */
uint64_t cpu_busy_ns(void);		/* all CPUs, non-idle (compare two) */
uint64_t cpu_stat_self_ns(void);	/* /proc/self/stat utime + stime */

/* memory probes */
struct memsnap {
	uint64_t slab_bytes;		/* sum over /proc/slabinfo of slab pages */
	uint64_t meminfo_slab_bytes;	/* /proc/meminfo Slab: with kmalloc_large */
	uint64_t vmalloc_bytes;		/* /proc/meminfo VmallocUsed */
	uint64_t memfree_bytes;		/* /proc/meminfo MemFree */
	uint64_t rss_bytes;		/* this process */
	uint64_t heap_bytes;		/* this process's malloc() (mallinfo2) */
	uint64_t own_heap_bytes;	/* ... of which the snapshot's own */
	int ncache;
	struct cache_snap {
		char name[64];
		uint64_t bytes;		/* slab pages of the cache */
		uint64_t objs;		/* active objects */
		uint64_t objsize;
	} *cache;
};
void mem_snap(struct memsnap *m);	/* shrinks the caches first (root) */
void mem_snap_free(struct memsnap *m);
/* JSON fields: kernel slab/vmalloc deltas and the top caches */
void mem_delta_json(FILE *f, const struct memsnap *a,
		    const struct memsnap *b, uint64_t n);

/* lateness statistics */
struct lat {
	int64_t *v;
	uint64_t n, cap;
};
void lat_add(struct lat *l, int64_t x);
void lat_summary(struct lat *l, int64_t *p50, int64_t *p99, int64_t *max);
void lat_free(struct lat *l);

/* output: one JSON object per line */
extern FILE *out;
extern const char *json_tag;	/* --tag: added to every line */
void json_begin(const char *workload, const char *contender, uint64_t n,
		uint64_t rep);
void json_u(const char *key, uint64_t v);
void json_i(const char *key, int64_t v);
void json_f(const char *key, double v);
void json_s(const char *key, const char *v);
void json_raw(const char *key, const char *v);	/* v is JSON already */
void json_end(void);

/* ---- c_lib.c: what the libev, libevent and libuv contenders share -------- */

/*
 * Each id is a malloc'd record holding the library's timer, the id and the
 * deadline the bench asked for, found through a map id -> record.  Each of
 * the three contenders starts with this.  Their wait() is lib_wait(): it
 * calls run(), one iteration of the library's loop, until @until; the
 * timers' callbacks hand their ids to lib_expire().
 */
struct lib_contender {
	struct contender c;
	struct hmap map;	/* id -> record (its address) */
	uint64_t rec_size;	/* bytes asked of malloc() for one record */
	/*
	 * one iteration of the loop, at @now: until @until at the latest,
	 * without blocking once it has passed; 0 or -errno
	 */
	int (*run)(struct lib_contender *l, uint64_t now, uint64_t until);
	struct sink *sink;	/* of the wait() running, or NULL */
	uint64_t seen;		/* the bench's clock for this batch, or 0 */
};

bool is_lib(const struct contender_ops *ops);
void lib_init(struct lib_contender *l, const struct copts *o, size_t rec_size,
	      int (*run)(struct lib_contender *l, uint64_t now, uint64_t until));
int lib_wait(struct contender *c, uint64_t until, struct sink *s);
/* the record of @id, or NULL */
void *lib_find(struct lib_contender *l, uint64_t id);
/* the record of @id, a new uninitialised one if absent (*added = 1); NULL
 * if malloc() failed */
void *lib_get(struct lib_contender *l, uint64_t id, int *added);
void lib_forget(struct lib_contender *l, uint64_t id);
/* hands every record to @dispose (free() if NULL), then frees the map */
void lib_free_all(struct lib_contender *l, void (*dispose)(void *rec));
/*
 * A timer's callback: @id, due at @deadline, expired; forgets it and hands
 * it to the sink of the wait() running (the caller frees its record).
 */
void lib_expire(struct lib_contender *l, uint64_t id, uint64_t deadline);
/* a ns count as whole units of @unit ns, rounded up */
static inline uint64_t div_up(uint64_t ns, uint64_t unit)
{
	return ns / unit + !!(ns % unit);
}

#endif
