// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for kmod/twheel_core.c: the input is a sequence of
 * operations on one wheel and one index, run against a plain model (an
 * array of ids with their state, deadline, data and node, and the ready
 * queue as two arrays: its events' ids, and the nodes that hold them with
 * the sentinel last), with every property checked after every step:
 *
 *   - never early: an event is queued only once now >= its deadline, and the
 *     wheel queues it only once now's tick has reached its expiry tick;
 *   - at most one tick late: after a full tw_wheel_advance() no armed node
 *     has an expiry tick <= now's tick;
 *   - exactly once: nothing expires twice, nothing is lost (a final flush to
 *     the end of time expires everything but deadlines past the last tick);
 *   - ordered: expiry ticks of nodes armed in the future never decrease;
 *   - tw_wheel_next(): false iff nothing is armed, never later than the
 *     earliest expiry tick (or than cur while something overdue waits);
 *   - tw_wheel_advance() moves exactly as many nodes (expired or re-slotted)
 *     as it takes from its budget, and returns true iff work is still due;
 *   - nr_armed, nr_ready, late_max, the ready queue, the slot lists and the
 *     pending bits agree with the model; cur never goes back nor past now;
 *   - an armed node sits in a slot that matches the deadline it was armed
 *     with, or, once the wheel has moved it, the id's deadline at the time;
 *     nodes hold their id and data, armed or queued;
 *   - the ready queue, node for node: tw_wheel_expire() writes the event
 *     (id, data, expiry clock) into the sentinel and the expired node
 *     becomes the sentinel; tw_wheel_discard() leaves the node of the
 *     discarded event holding the next one and hands back the next node
 *     (or the sentinel, for the last event); tw_wheel_pop() hands back the
 *     head.  After every operation: walking from w.head to the sentinel
 *     w.tail passes exactly nr_ready nodes, in the model's order, with
 *     expiry clocks that never decrease; each one's entry points at it and
 *     is marked TW_ENT_QUEUED; the sentinel ends the list and is in no
 *     entry; no other entry is marked TW_ENT_QUEUED; every node on the
 *     wheel has an entry that points at it;
 *   - nodes come from a pool: a node set free is poisoned for ASan (so is
 *     a red zone after each node), is not reused for a while, and every
 *     node is given back exactly once (the sentinel at teardown);
 *   - the index: after every op both tables are valid ordered linear-probing
 *     tables (every entry at or after its home with no empty slot between,
 *     keys in circular order, the old table empty below mpos), hold every
 *     present id exactly once with its deadline and TW_ENT_QUEUED as the
 *     model has them; nr, nr_tab, nr_old, room(), want_size() (the
 *     documented thresholds); find() (of the ids an op touched, of every id
 *     after a resize step and every 8th op); incremental resize in both
 *     directions with migrate steps of any size interleaved with the other
 *     operations (each step moves exactly its entries or passes its empty
 *     slots, the old table comes back once, when empty); and
 *     tw_index_dump() with tiny rooms and budgets while the index is
 *     mutated and resized: entries come out in ascending key order, as
 *     copies of the current entries, each call lists exactly the ids whose
 *     cells it passed over, and a finished dump has listed every id present
 *     throughout exactly once;
 *   - tw_index_pop() tears everything down exactly once.
 *
 * The wheel and index are used as kmod/twheel_main.c does: the wheel is
 * set up with the index and a sentinel node; a touch finds the id's entry;
 * a later deadline of an armed id is written to the entry only (the wheel
 * picks it up when the node's slot comes due); another deadline of an
 * armed id is tw_wheel_del(), the entry's deadline, tw_wheel_add() (or
 * tw_wheel_expire() when already due); a touch of a queued id is
 * tw_wheel_discard() and the node it hands back placed the same way, data
 * kept; a cancel detaches the same way, removes the entry and frees the
 * node; a read peeks at up to 12 events from w.head, then for each one
 * delivered (all, or fewer as when the copy faults) tw_wheel_pop(), a
 * lookup of its entry only if an earlier removal shifted it, removal and
 * free; each batch asks tw_index_want_size() and migrates (ids + 1) * 16
 * entries.  Touches and cancels also aim at queued ids directly, at any
 * position in the queue.  Plus the raw API the core documents
 * (tw_wheel_add() of a deadline already due goes to the drain list; resize
 * to any size that fits, in either direction, whenever none is in
 * progress).
 *
 * A violation prints what went wrong and abort()s.  TWHEEL_FUZZ_TRACE=1 in
 * the environment prints every operation to stderr (for replaying a crash
 * file: ./fuzz_core crash-...).  TWHEEL_FUZZ_SEED=N keys the index with
 * another secret (default 1; the module draws one per fd): a crash replays
 * with the seed it was found with.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sanitizer/asan_interface.h>

#include "twheel_core.h"

#define KMAX		0x7fffffffffffffffULL	/* KTIME_MAX, TWHEEL_DEADLINE_MAX */
#define NODES		256
#define RESIZE_MAX	4096	/* forced resizes: up to this many slots */
#define ADVANCE_CALLS	200000	/* more calls than this: advance never ends */
#define READ_CHUNK	12	/* events per read() hold, as TW_READ_CHUNK */
#define POOL		(2 * NODES + 2)	/* nodes: every id, the sentinel, spares */

enum { ABSENT, ARMED, READY };
static const char *const state_name[] = { "absent", "armed", "ready" };

struct mnode {
	int state;
	u64 id;
	u64 data;	/* the data its node, or its event, holds */
	struct tw_node *node;	/* its entry's node: armed, or its event's */
	u64 deadline;	/* the id's deadline: its index entry's */
	u64 placed;	/* ARMED: the deadline the node was last armed with */
	u64 slotted;	/* ARMED: a deadline its slot matches */
	u64 slotted_e;	/* its expiry tick */
	u64 stamp;	/* READY: the expected expiry clock of its event */
	bool future;	/* ARMED with deadline > now: takes part in ordering */
	bool stable;	/* dump: present, at or past the start, since it began */
	unsigned int listed;	/* dump: times listed */
	bool touched;	/* id inserted or removed by the current op */
};

static struct mnode m[NODES];
static struct tw_wheel w;
static struct tw_index x;

/*
 * The nodes: a pool with a red zone after each node, poisoned like the
 * free nodes, which go back to the end of a FIFO so that a node set free
 * stays poisoned for a while.  owner[] is the model's: the id a node
 * belongs to (its own, or the one whose event it holds), or P_FREE, or
 * P_SENTINEL.
 */
struct pnode {
	struct tw_node n;
	u64 redzone[4];
};

enum { P_FREE = -1, P_SENTINEL = -2 };

static struct pnode pool[POOL];
static int owner[POOL];
static unsigned int freeq[POOL], free_head, free_len;
static unsigned long nodes_live;

static u64 now, tick;
static u64 last_e;		/* highest expiry tick of an ordered expiry */
static bool last_e_set;
static u64 late_max;		/* model of w.late_max */
static u64 prev_cur;
static unsigned long nr_present, nr_armed;

/* model of the ready queue: the events' ids, their nodes, the sentinel */
static int rq[NODES];
static struct tw_node *rqn[NODES + 1];
static unsigned int rq_len;

/* what the run exercised, printed at exit */
static struct {
	unsigned long discard[2][4];	/* touch/cancel: only, head, middle, last */
	unsigned long pops, relookups, faults, expired, direct, lazy;
	unsigned long queue_len[5];	/* inputs by longest queue: 0, 1, 2-7, 8-63, 64+ */
	unsigned int max_queue;		/* of the current input */
} stats;

/* model of the index tables */
static struct tw_ent *mtab, *mold;
static unsigned long msize, mold_size;

/* dump in progress */
static bool dump_on;
static u64 dump_cursor, dump_start, dump_last_key;
static bool dump_any;

static u64 secret[TW_SECRET_WORDS];		/* the index's key: TWHEEL_FUZZ_SEED */
static bool trace;
static bool find_all;		/* find() every id at the next check */
static unsigned long op_no;
static u64 data_seq;		/* touches that carried data */
static const char *op_name = "init";

/* ------------------------------------------------------------- reporting */

static void __attribute__((noreturn, format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "\ntwheel fuzz: VIOLATION at op %lu (%s): ", op_no, op_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  tick_ns %llu now %llu (tick %llu"
		") cur %llu armed %lu ready %u present %lu\n",
		tick, now, tick ? now / tick : 0, w.cur, nr_armed, rq_len,
		nr_present);
	abort();
}

#define CHECK(cond, ...) do { if (!(cond)) fail(__VA_ARGS__); } while (0)

static void __attribute__((format(printf, 1, 2))) tr(const char *fmt, ...)
{
	va_list ap;

	if (!trace)
		return;
	/* stderr: unbuffered, so tracing allocates nothing (see -detect_leaks) */
	va_start(ap, fmt);
	fprintf(stderr, "[%lu] ", op_no);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

/* ----------------------------------------------------------------- input */

static const uint8_t *in_p;
static size_t in_n;
static uint64_t prng;		/* while nonzero, bytes come from here */

static uint8_t in_u8(void)
{
	if (prng) {
		prng ^= prng << 13;
		prng ^= prng >> 7;
		prng ^= prng << 17;
		return prng >> 24;
	}
	if (!in_n)
		return 0;
	in_n--;
	return *in_p++;
}

static u64 bytes(unsigned int nr)
{
	u64 v = 0;

	while (nr--)
		v = v << 8 | in_u8();
	return v;
}

/* functions, not the kernel's macros: arguments may consume input */
static u64 umin(u64 a, u64 b)
{
	return a < b ? a : b;
}

static u64 umax(u64 a, u64 b)
{
	return a > b ? a : b;
}

static u64 sat_add(u64 a, u64 b)
{
	return (a > KMAX || b > KMAX - a) ? KMAX : a + b;
}

static u64 sat_mul(u64 a, u64 b)
{
	return (a && b > KMAX / a) ? KMAX : a * b;
}

/* The time at tick @t (clamped to the end of time) plus @off in [-1, 1]. */
static u64 at_tick(u64 t, int off)
{
	u64 ns = sat_mul(t, tick);

	if (off < 0 && ns)
		return ns - 1;
	return off > 0 ? sat_add(ns, 1) : ns;
}

/* ---------------------------------------------------------------- helpers */

static u64 exp_tick(u64 d)
{
	return d / tick + (d % tick != 0);
}

/* The pool slot of node @n. */
static unsigned int pidx(const struct tw_node *n, const char *where)
{
	uintptr_t p = (uintptr_t)n, b = (uintptr_t)&pool[0].n;

	CHECK(p >= b && (p - b) % sizeof(struct pnode) == 0 &&
	      (p - b) / sizeof(struct pnode) < POOL,
	      "%s: pointer %p is not a node", where, (void *)n);
	return (p - b) / sizeof(struct pnode);
}

/* The id node @n belongs to, in the model: it must belong to one. */
static int node_idx(const struct tw_node *n, const char *where)
{
	int i = owner[pidx(n, where)];

	CHECK(i >= 0, "%s: node %p is %s", where, (void *)n,
	      i == P_FREE ? "free" : "the sentinel");
	CHECK(m[i].node == n, "%s: node %p belongs to id %d, whose node is %p",
	      where, (void *)n, i, (void *)m[i].node);
	return i;
}

static void set_owner(struct tw_node *n, int i)
{
	owner[pidx(n, "model")] = i;
}

static void pool_reset(void)
{
	unsigned int p;

	for (p = 0; p < POOL; p++) {
		owner[p] = P_FREE;
		freeq[p] = p;
	}
	free_head = 0;
	free_len = POOL;
	nodes_live = 0;
	ASAN_POISON_MEMORY_REGION(pool, sizeof(pool));
}

/* A node for id @i (or the sentinel), as tw_node_alloc(): id set, data 0. */
static struct tw_node *node_alloc(u64 id, int i)
{
	unsigned int p;
	struct tw_node *n;

	CHECK(free_len, "out of nodes: %lu in use", nodes_live);
	p = freeq[free_head];
	free_head = (free_head + 1) % POOL;
	free_len--;
	CHECK(owner[p] == P_FREE, "node %u on the free list is in use", p);
	n = &pool[p].n;
	ASAN_UNPOISON_MEMORY_REGION(n, sizeof(*n));
	memset(n, 0x5a, sizeof(*n));	/* the core must set what it uses */
	n->id = id;
	n->data = 0;
	owner[p] = i;
	nodes_live++;
	return n;
}

static void node_free(struct tw_node *n)
{
	unsigned int p = pidx(n, "free");

	CHECK(owner[p] != P_FREE, "node %u freed twice", p);
	owner[p] = P_FREE;
	ASAN_POISON_MEMORY_REGION(n, sizeof(*n));
	freeq[(free_head + free_len) % POOL] = p;
	free_len++;
	nodes_live--;
}

static unsigned int rq_pos(int i)
{
	unsigned int k;

	for (k = 0; k < rq_len && rq[k] != i; k++)
		;
	CHECK(k < rq_len, "model: node %d not on the ready queue", i);
	return k;
}

/*
 * The model of tw_wheel_expire(): id @i's event goes into the sentinel,
 * and the id's node becomes the sentinel.
 */
static void model_expire(int i)
{
	struct mnode *y = &m[i];

	rq[rq_len] = i;
	rqn[rq_len + 1] = y->node;
	set_owner(y->node, P_SENTINEL);
	y->node = rqn[rq_len];
	set_owner(y->node, i);
	rq_len++;
	y->state = READY;
	y->stamp = umax(now, 1);
	if (rq_len > stats.max_queue)
		stats.max_queue = rq_len;
}

/*
 * The model of tw_wheel_discard(): the events after id @i's move up, and
 * so do the nodes after the next one, which is set free (the sentinel,
 * for the last event: the node that held it becomes the sentinel).  The
 * node set free, now the id's, is returned.
 */
static struct tw_node *model_discard(int i)
{
	unsigned int k = rq_pos(i), j;
	struct tw_node *freed = rqn[k + 1];

	memmove(&rq[k], &rq[k + 1], (rq_len - k - 1) * sizeof(rq[0]));
	memmove(&rqn[k + 1], &rqn[k + 2], (rq_len - k - 1) * sizeof(rqn[0]));
	rq_len--;
	for (j = k; j < rq_len; j++) {
		m[rq[j]].node = rqn[j];
		set_owner(rqn[j], rq[j]);
	}
	set_owner(rqn[rq_len], P_SENTINEL);
	m[i].node = freed;
	set_owner(freed, i);
	return freed;
}

/* The model of tw_wheel_pop(): the head's node, still its id's. */
static struct tw_node *model_pop(void)
{
	struct tw_node *n = rqn[0];

	CHECK(rq_len, "model: pop of an empty queue");
	memmove(&rq[0], &rq[1], (rq_len - 1) * sizeof(rq[0]));
	memmove(&rqn[0], &rqn[1], rq_len * sizeof(rqn[0]));
	rq_len--;
	return n;
}

/* Is @id held by a present node other than @self? */
static bool id_used(u64 id, int self)
{
	int i;

	for (i = 0; i < NODES; i++)
		if (i != self && m[i].state != ABSENT && m[i].id == id)
			return true;
	return false;
}

static u64 id_of_key(u64 key)
{
	return tw_key_id(&x, key);
}

/* ------------------------------------------------------------ the checks */

/*
 * The ready queue, after every operation: from w.head, the model's events
 * in their nodes, each one's entry pointing at it and marked queued, with
 * expiry clocks that never decrease, up to the sentinel, which ends the
 * list; exactly nr_ready of them; the sentinel in no entry, and no other
 * entry marked queued.
 */
static void check_queue(void)
{
	const struct tw_node *n;
	unsigned long p, queued = 0;
	unsigned int k;
	u64 last = 1;

	CHECK(w.nr_ready == rq_len, "nr_ready %lu, model %u", w.nr_ready, rq_len);
	CHECK(w.tail == rqn[rq_len], "sentinel %p, model %p", (void *)w.tail,
	      (void *)rqn[rq_len]);
	CHECK(owner[pidx(w.tail, "sentinel")] == P_SENTINEL,
	      "the sentinel belongs to id %d", owner[pidx(w.tail, "sentinel")]);
	CHECK(!w.tail->next, "the sentinel's next is %p", (void *)w.tail->next);
	for (k = 0, n = w.head; n != w.tail; n = n->next, k++) {
		const struct tw_ent *e;
		const struct mnode *y;

		CHECK(n, "ready queue ends after %u events without the sentinel", k);
		CHECK(k < rq_len, "ready queue longer than the model's %u (node %p)",
		      rq_len, (void *)n);
		CHECK(n == rqn[k], "ready queue position %u is node %p, model %p",
		      k, (void *)n, (void *)rqn[k]);
		y = &m[rq[k]];
		CHECK(n->id == y->id && n->data == y->data && n->expired == y->stamp,
		      "event %u of node %d: id %#llx data %#llx"
		      " expired %llu, expected %#llx %#llx %llu",
		      k, rq[k], n->id, n->data, n->expired, y->id, y->data,
		      y->stamp);
		CHECK(n->expired >= last, "event %u expired at %llu after one "
		      "at %llu", k, n->expired, last);
		last = n->expired;
		e = tw_index_find(&x, n->id);
		CHECK(e && e->node == n && tw_ent_queued(e), "event %u (node %d): "
		      "entry %p, its node %p, deadline word %#llx", k, rq[k],
		      (void *)e, e ? (void *)e->node : NULL, e ? e->deadline : 0);
	}
	CHECK(k == rq_len, "ready queue has %u events, model %u", k, rq_len);
	for (p = 0; p < x.size; p++) {
		CHECK(x.tab[p].node != w.tail,
		      "the sentinel is in entry %lu", p);
		queued += x.tab[p].node && tw_ent_queued(&x.tab[p]);
	}
	for (p = 0; x.old && p < x.old_size; p++) {
		CHECK(x.old[p].node != w.tail,
		      "the sentinel is in old entry %lu", p);
		queued += x.old[p].node && tw_ent_queued(&x.old[p]);
	}
	CHECK(queued == w.nr_ready, "%lu entries marked queued, nr_ready %lu",
	      queued, w.nr_ready);
}

/* Whether a node with expiry tick @e may sit in slot @s of level @l now. */
static bool slot_fits(u64 e, int l, int s)
{
	unsigned int sh = l * TW_LVL_BITS;

	return (e >> sh & TW_LVL_MASK) == (u64)s && e > w.cur &&
	       e >> (sh + TW_LVL_BITS) == w.cur >> (sh + TW_LVL_BITS);
}

/*
 * One slot list (l < 0: the drain list).  @moved: the wheel may have
 * re-slotted nodes since the last check, by their ids' deadlines.
 */
static void check_hlist(const struct hlist_head *h, unsigned char *seen,
			unsigned long *count, const char *what, int l, int s,
			bool moved)
{
	struct hlist_node *const *pprev = &h->first;
	const struct hlist_node *hn;

	for (hn = h->first; hn; pprev = &hn->next, hn = hn->next) {
		const struct tw_node *n = hlist_entry(hn, struct tw_node, slot);
		int i = node_idx(n, what);
		struct mnode *y = &m[i];
		const struct tw_ent *e;

		CHECK(hn->pprev == pprev, "%s %d/%d: node %d has a stale pprev",
		      what, l, s, i);
		CHECK(y->state == ARMED, "%s %d/%d holds node %d which is %s",
		      what, l, s, i, state_name[y->state]);
		CHECK(!seen[i], "node %d on the wheel twice (%s %d/%d)", i, what, l, s);
		seen[i] = 1;
		++*count;
		CHECK(n->id == y->id && n->data == y->data, "armed node %d holds id %#"
		      "llx data %#llx", i, n->id, n->data);
		/*
		 * A slotted node stays in its slot until the slot comes due:
		 * its slot matches the deadline it was slotted by (the one it
		 * was armed with, or the id's deadline when the wheel last
		 * moved it), a tick after cur that agrees with cur above the
		 * slot's level.
		 */
		if (l >= 0 && !slot_fits(y->slotted_e, l, s)) {
			CHECK(moved && slot_fits(exp_tick(y->deadline), l, s), "node %d "
			      "(slotted by %llu, deadline %llu) in slot "
			      "%d/%d with cur %llu", i, y->slotted, y->deadline, l,
			      s, w.cur);
			y->slotted = y->deadline;
			y->slotted_e = exp_tick(y->deadline);
		}
		if (!(*count & 15) || y->touched) {
			e = tw_index_find(&x, n->id);
			CHECK(e && e->node == n && !tw_ent_queued(e), "armed node %d: "
			      "entry %p", i, (void *)e);
		}
	}
}

/*
 * Slot lists, drain and pending bits against the model.  Only the slots
 * with their pending bit set are walked: a node in another slot is missing
 * from the count.
 */
static void check_wheel_lists(bool moved)
{
	static unsigned char seen[NODES];
	unsigned long count = 0;
	unsigned int l, s;

	memset(seen, 0, sizeof(seen));
	for (l = 0; l < TW_LEVELS; l++) {
		u64 bits = w.pending[l];

		while (bits) {
			s = __builtin_ctzll(bits);
			bits &= bits - 1;
			check_hlist(&w.slots[l][s], seen, &count, "slot", l, s, moved);
		}
	}
	check_hlist(&w.drain, seen, &count, "drain", -1, -1, moved);
	CHECK(count == nr_armed, "%lu nodes in pending slots and the drain list, "
	      "model has %lu armed", count, nr_armed);
}

/*
 * Counters, cur and tw_wheel_next(): after each wheel call.  (The nodes,
 * armed and queued, are checked by check_wheel_lists() and check_queue().)
 */
static void check_wheel(void)
{
	u64 t, min_e = UINT64_MAX;
	bool any;
	int i;

	CHECK(w.nr_armed == nr_armed, "nr_armed %lu, model %lu", w.nr_armed, nr_armed);
	CHECK(w.nr_ready == rq_len, "nr_ready %lu, model %u", w.nr_ready, rq_len);
	CHECK(w.idx == &x, "idx %p", (void *)w.idx);
	for (i = 0; i < NODES; i++) {
		const struct mnode *y = &m[i];

		if (y->state != ARMED)
			continue;
		CHECK(y->slotted >= y->placed && y->slotted <= y->deadline,
		      "model: node %d slotted by %llu", i, y->slotted);
		min_e = umin(min_e, y->slotted_e);
	}

	CHECK(w.cur <= now / tick, "cur %llu is past now's tick", w.cur);
	CHECK(w.cur >= prev_cur, "cur went back from %llu", prev_cur);
	prev_cur = w.cur;
	CHECK(w.late_max == late_max, "late_max %llu, model %llu",
	      w.late_max, late_max);

	any = tw_wheel_next(&w, &t);
	CHECK(any == (nr_armed > 0), "tw_wheel_next() says %d with %lu armed",
	      any, nr_armed);
	if (any) {
		u64 bound = umax(min_e, w.cur);

		CHECK(t <= bound, "tw_wheel_next() %llu is later than the "
		      "earliest expiry tick %llu", t, min_e);
		CHECK(t >= w.cur, "tw_wheel_next() %llu is before cur", t);
	}
}

/*
 * tw_index_want_size() as documented: nr + extra above 9/10 grows, below
 * 1/4 shrinks, to 3/4 full.
 */
static unsigned long model_want(unsigned long extra)
{
	u64 want = (u64)nr_present + extra;

	if (mold)
		return 0;
	if (want * 10 > (u64)msize * 9 ||
	    (msize > TW_IDX_MIN && want * 4 < msize))
		want = want * 4 / 3 + 1;
	else
		return 0;
	want = umax(want, TW_IDX_MIN);
	return want != msize ? want : 0;
}

static unsigned long home_of(u64 key, unsigned long size)
{
	return (unsigned long)(((unsigned __int128)key * size) >> 64);
}

/*
 * One table: an ordered linear-probing table holding what the model says.
 * Every entry sits at or after its home with no empty slot in between
 * (each entry is at home, or its predecessor slot holds an entry at most
 * one slot less far from home); in slot order, the entries at or after
 * their home, then those that wrapped past the end (home > slot), have
 * strictly increasing keys.  Slots below @empty_below are empty.  Returns
 * the number of entries.
 */
static unsigned long check_table(const struct tw_ent *t, unsigned long size,
				 unsigned long empty_below, unsigned char *seen,
				 const char *what)
{
	unsigned long p, count = 0, prev_dist = 0;
	u64 prev[2] = { 0, 0 }, max_flat = 0, min_wrapped = 0;
	bool any[2] = { false, false }, prev_full = t[size - 1].node;

	if (prev_full) {	/* the last slot, as slot 0's predecessor */
		u64 key = tw_key(&x, t[size - 1].id);

		prev_dist = size - 1 - home_of(key, size);
	}
	for (p = 0; p < size; p++) {
		const struct tw_ent *e = &t[p];
		unsigned long h, dist;
		u64 key, want;
		bool wrapped;
		int i;

		if (!e->node) {
			prev_full = false;
			continue;
		}
		key = tw_key(&x, e->id);
		h = home_of(key, size);
		wrapped = h > p;
		dist = wrapped ? p + size - h : p - h;
		i = node_idx(e->node, "index entry");
		CHECK(p >= empty_below, "index %s slot %lu (below mpos %lu) holds "
		      "node %d", what, p, empty_below, i);
		CHECK(m[i].state != ABSENT, "index %s slot %lu holds removed node %d",
		      what, p, i);
		CHECK(e->id == m[i].id, "index %s slot %lu: id %#llx for node "
		      "%d (id %#llx)", what, p, e->id, i, m[i].id);
		CHECK(!seen[i], "node %d twice in the index", i);
		seen[i] = 1;
		want = m[i].deadline | (m[i].state == READY ? TW_ENT_QUEUED : 0);
		CHECK(e->deadline == want, "index %s slot %lu: node %d (%s) deadline "
		      "word %#llx, expected %#llx", what, p, i,
		      state_name[m[i].state], e->deadline, want);
		CHECK(!dist || (prev_full && prev_dist + 1 >= dist), "index %s: node "
		      "%d at slot %lu, %lu from its home %lu, after %s", what, i, p,
		      dist, h, prev_full ? "an entry nearer its home" : "an empty slot");
		CHECK(!any[wrapped] || key > prev[wrapped], "index %s slot %lu: key %#"
		      "llx after %#llx (out of order)", what, p, key,
		      prev[wrapped]);
		if (wrapped && !any[1])
			min_wrapped = key;
		if (!wrapped)
			max_flat = key;
		prev[wrapped] = key;
		any[wrapped] = true;
		prev_full = true;
		prev_dist = dist;
		count++;
	}
	CHECK(!any[0] || !any[1] || max_flat < min_wrapped, "index %s: wrapped key "
	      "%#llx below key %#llx", what, min_wrapped, max_flat);
	return count;
}

static void check_index(void)
{
	static unsigned char seen[NODES];
	static const unsigned long extras[] = { 0, 1, 16, 64, 129 };
	unsigned long count_tab, count_old = 0, k;
	int i;

	CHECK(x.tab == mtab && x.size == msize, "index table %p/%lu, expected "
	      "%p/%lu", (void *)x.tab, x.size, (void *)mtab, msize);
	CHECK(x.old == mold, "index old table %p, expected %p", (void *)x.old,
	      (void *)mold);
	CHECK(!mold || x.old_size == mold_size, "index old table of %lu slots, "
	      "expected %lu", x.old_size, mold_size);
	CHECK(mold || x.nr_old == 0, "nr_old %lu with no old table", x.nr_old);
	CHECK(x.nr == nr_present, "index nr %lu, model %lu", x.nr, nr_present);
	CHECK(x.nr == x.nr_tab + x.nr_old, "index nr %lu != %lu + %lu", x.nr,
	      x.nr_tab, x.nr_old);
	CHECK(!mold || x.mpos <= mold_size, "mpos %lu past %lu", x.mpos, mold_size);

	memset(seen, 0, sizeof(seen));
	count_tab = check_table(mtab, msize, 0, seen, "new");
	if (mold)
		count_old = check_table(mold, mold_size, x.mpos, seen, "old");
	CHECK(count_tab == x.nr_tab && count_old == x.nr_old, "index tables hold "
	      "%lu + %lu entries, nr_tab %lu nr_old %lu", count_tab, count_old,
	      x.nr_tab, x.nr_old);
	CHECK(count_tab + count_old == nr_present, "index holds %lu ids, model %lu",
	      count_tab + count_old, nr_present);
	CHECK(tw_index_room(&x) ==
	      (count_tab + count_old < msize - msize / 16),
	      "room() %d with %lu + %lu ids for %lu slots", tw_index_room(&x),
	      count_tab, count_old, msize);
	find_all |= op_no % 8 == 0;

	/*
	 * find() of every id after index surgery and every 8th op; else of
	 * the ids the op touched and a few others (the table walk above
	 * already places every entry).
	 */
	for (i = 0; i < NODES; i++) {
		struct tw_ent *f;
		int j;

		if (!find_all && !m[i].touched && (i * 37 + op_no) % 64)
			continue;
		m[i].touched = false;
		f = tw_index_find(&x, m[i].id);

		if (m[i].state != ABSENT) {
			CHECK(f && f->node == m[i].node && f->id == m[i].id,
			      "find(%#llx) of node %d gives %p", m[i].id, i,
			      (void *)f);
			CHECK((f >= mtab && f < mtab + msize) ||
			      (mold && f >= mold + x.mpos && f < mold + mold_size),
			      "find(%#llx) gives %p, in neither table",
			      m[i].id, (void *)f);
		} else if (f) {
			/* a removed id: found only if another node now holds it */
			j = node_idx(f->node, "find");
			CHECK(m[j].state != ABSENT && m[j].id == m[i].id,
			      "find(%#llx) of removed node %d gives node %d",
			      m[i].id, i, j);
		}
	}

	for (k = 0; k < sizeof(extras) / sizeof(extras[0]); k++)
		CHECK(tw_index_want_size(&x, extras[k]) == model_want(extras[k]),
		      "want_size(%lu) %lu, expected %lu (nr %lu, size %lu%s)",
		      extras[k], tw_index_want_size(&x, extras[k]),
		      model_want(extras[k]), nr_present, msize,
		      mold ? ", resizing" : "");
}

static void check_all(void)
{
	check_queue();
	check_wheel_lists(false);
	check_wheel();
	check_index();
	find_all = false;
}

/* ---------------------------------------------------------- wheel model */

/*
 * One tw_wheel_advance() call; compare what it queued with the model.
 * Returns what the call returned.
 */
static bool advance_once(unsigned int budget)
{
	unsigned int before = budget, k, queued = rq_len;
	u64 nt = now / tick, t, reslots = w.reslots;
	const struct tw_node *p, *first = w.tail;
	bool more, due;

	more = tw_wheel_advance(&w, now, &budget);
	CHECK(budget <= before, "advance raised the budget %u -> %u", before, budget);
	CHECK(w.reslots >= reslots, "reslots went back");

	/*
	 * The queue up to the former sentinel is unchanged; the new events
	 * follow, the first one in the former sentinel, each one's node the
	 * expired node of the one before (as the module traces them).
	 */
	for (k = 0, p = w.head; k < queued; k++, p = p->next)
		CHECK(p && p == rqn[k], "advance changed the ready queue at %u", k);
	CHECK(p == first, "the first new event is in %p, not in the former "
	      "sentinel %p", (void *)p, (void *)first);
	for (; p != w.tail; p = p->next) {
		struct mnode *y;
		struct tw_ent *f;
		u64 e;
		int i;

		CHECK(p && rq_len < NODES, "ready queue loops or ends");
		CHECK(p == rqn[rq_len], "new event %u in node %p, not in the "
		      "sentinel %p", rq_len, (void *)p, (void *)rqn[rq_len]);
		/* the node after an event's: the expired id's own */
		i = node_idx(p->next, "expired node");
		y = &m[i];
		CHECK(y->state != READY, "node %d expired twice", i);
		CHECK(y->state == ARMED, "node %d expired while %s", i,
		      state_name[y->state]);
		CHECK(p->id == y->id && p->data == y->data, "event of node %d: id %#"
		      "llx data %#llx", i, p->id, p->data);
		e = exp_tick(y->deadline);
		CHECK(y->deadline <= now, "node %d expired early: deadline %llu"
		      " > now by %llu", i, y->deadline, y->deadline - now);
		CHECK(e <= nt, "node %d expired before its tick: tick %llu"
		      " > now's %llu", i, e, nt);
		CHECK(p->expired == umax(now, 1), "node %d: expired stamp %llu"
		      ", expected %llu", i, p->expired, umax(now, 1));
		f = tw_index_find(&x, y->id);
		CHECK(f && f->node == p && tw_ent_queued(f) &&
		      tw_ent_deadline(f) == y->deadline, "expired node %d: entry %p "
		      "node %p deadline word %#llx", i, (void *)f,
		      f ? (void *)f->node : NULL, f ? f->deadline : 0);
		if (y->future) {
			CHECK(!last_e_set || e >= last_e, "out of order: node %d tick %"
			      "llu after tick %llu", i, e, last_e);
			last_e = e;
			last_e_set = true;
		}
		late_max = umax(late_max, now - y->deadline);
		model_expire(i);
		nr_armed--;
		stats.expired++;
		tr("  expired node %d deadline %llu tick %llu%s", i,
		   y->deadline, e, y->future ? "" : " (armed overdue)");
	}
	CHECK(w.tail == rqn[rq_len], "sentinel %p, model %p", (void *)w.tail,
	      (void *)rqn[rq_len]);
	CHECK(before - budget == (rq_len - queued) + (w.reslots - reslots),
	      "advance used %u of its budget %u but moved %u nodes (%u expired, %"
	      "llu re-slotted)", before - budget, before,
	      (unsigned int)(rq_len - queued + (w.reslots - reslots)),
	      rq_len - queued, w.reslots - reslots);
	CHECK(!more || !budget, "advance returned true with budget %u left", budget);

	due = tw_wheel_next(&w, &t) && t <= nt;
	CHECK(more == due, "advance returned %d but work due is %d", more, due);
	if (!more) {
		int i;

		for (i = 0; i < NODES; i++)
			CHECK(m[i].state != ARMED || exp_tick(m[i].deadline) > nt,
			      "late: node %d (deadline %llu, tick %llu"
			      ") still armed after a full advance to tick %llu",
			      i, m[i].deadline, exp_tick(m[i].deadline), nt);
	}
	/* the nodes it re-slotted, by their ids' deadlines */
	if (w.reslots != reslots)
		check_wheel_lists(true);
	check_wheel();	/* the queue and index are checked after the operation */
	return more;
}

/* Budgets cycle through a pattern picked by one byte. */
static void advance_full(uint8_t b)
{
	unsigned long calls = 0;
	unsigned int budget;

	do {
		if (b >= 224)
			budget = 1U << 20;
		else
			budget = 1 + (b * 7 + calls * 13) % (1 + b % 17);
		CHECK(++calls < ADVANCE_CALLS, "advance does not finish");
	} while (advance_once(budget));
	tr("  full advance in %lu calls", calls);
}

/* The entry of present node @i, as the module finds it: by id. */
static struct tw_ent *find_ent(int i, const char *where)
{
	struct tw_ent *e = tw_index_find(&x, m[i].id);

	CHECK(e && e->node == m[i].node && e->id == m[i].id,
	      "%s: find(%#llx) of node %d gives %p (node %p, model %p)",
	      where, m[i].id, i, (void *)e, e ? (void *)e->node : NULL,
	      (void *)m[i].node);
	CHECK(tw_ent_queued(e) == (m[i].state == READY), "%s: node %d is %s but "
	      "its entry's deadline word is %#llx", where, i,
	      state_name[m[i].state], e->deadline);
	return e;
}

enum { BY_TOUCH, BY_CANCEL };

/*
 * Take node @i off the wheel, or discard its event (as tw_detach()):
 * afterwards its entry's node, holding its id and data, is on no list.
 */
static void detach(int i, struct tw_ent *e, int by)
{
	struct mnode *y = &m[i];
	struct tw_node *n, *freed, *next;
	unsigned int k;

	if (y->state == ARMED) {
		tw_wheel_del(&w, e->node);
		nr_armed--;
		return;
	}
	k = rq_pos(i);
	next = rqn[k + 1];
	stats.discard[by][rq_len == 1 ? 0 : !k ? 1 : k + 1 < rq_len ? 2 : 3]++;
	tr("  discard event %u of %u", k, rq_len);
	n = tw_wheel_discard(&w, e);
	freed = model_discard(i);
	CHECK(n == freed && n == next, "discard of node %d (event %u of %u) "
	      "returned %p, expected %p", i, k, rq_len + 1, (void *)n,
	      (void *)freed);
	CHECK(e->node == n && !tw_ent_queued(e) &&
	      tw_ent_deadline(e) == y->deadline, "discard of node %d: entry's "
	      "node %p, deadline word %#llx", i, (void *)e->node, e->deadline);
	CHECK(n->id == y->id && n->data == y->data, "discard of node %d: the "
	      "node holds id %#llx data %#llx", i, n->id, n->data);
	CHECK(w.nr_ready == rq_len && w.tail == rqn[rq_len], "discard: nr_ready "
	      "%lu (model %u), sentinel %p (model %p)", w.nr_ready, rq_len,
	      (void *)w.tail, (void *)rqn[rq_len]);
}

/* Arm through the wheel (even when already due), or queue directly. */
static void place(int i, struct tw_ent *e, u64 d, bool raw)
{
	struct mnode *y = &m[i];
	struct tw_node *s = w.tail;

	e->deadline = d;
	y->deadline = d;
	y->placed = d;
	if (!raw && d <= now) {
		tw_wheel_expire(&w, e, now);
		model_expire(i);
		CHECK(e->node == s && w.tail == rqn[rq_len] && tw_ent_queued(e) &&
		      tw_ent_deadline(e) == d, "expire of node %d: entry's node %p "
		      "(sentinel was %p), sentinel %p (model %p), deadline word %#llx",
		      i, (void *)e->node, (void *)s, (void *)w.tail,
		      (void *)rqn[rq_len], e->deadline);
		stats.direct++;
		return;
	}
	tw_wheel_add(&w, e->node, d);
	y->state = ARMED;
	y->slotted = d;
	y->slotted_e = exp_tick(d);
	y->future = d > now;
	nr_armed++;
}

/* ---------------------------------------------------------- index model */

static void dump_forget(int i)
{
	m[i].stable = false;
}

static u64 gen_id(int i)
{
	unsigned int mode = in_u8() % 8;
	u64 id = 0, a;
	int j;

	switch (mode) {
	case 0:
		id = i;
		break;
	case 1:
		id = (u64)i << 40;
		break;
	case 2:
		id = bytes(8);
		break;
	case 3:	/* the other key of another node's cell */
	case 4:	/* a key near another node's, often next to it in a table */
		j = in_u8() % NODES;
		if (m[j].state == ABSENT) {
			id = bytes(2);
			break;
		}
		if (mode == 3) {
			id = id_of_key(tw_key(&x, m[j].id) ^ 1);
		} else {
			a = in_u8();
			id = id_of_key(tw_key(&x, m[j].id) ^ a << (in_u8() % 56));
		}
		break;
	case 5: {	/* keys at the ends of the key space */
		static const u64 keys[] = { 0, 1, 2, 3, ~0ULL, ~0ULL - 1,
					    1ULL << 63, (1ULL << 63) - 1,
					    (1ULL << 63) + 1, 1ULL << 62 };

		id = id_of_key(keys[in_u8() % (sizeof(keys) / sizeof(keys[0]))]);
		break;
	}
	case 6:	/* home slot region and low bits chosen */
		a = in_u8();
		id = id_of_key(a << 56 | bytes(1));
		break;
	default:
		a = bytes(1);
		id = a + ((u64)in_u8() << 32);
		break;
	}
	while (id_used(id, i))
		id = id * 3 + 1;
	return id;
}

static void start_resize(unsigned long size)
{
	struct tw_ent *tab = calloc(size, sizeof(*tab));

	CHECK(tab, "out of memory");
	tr("  resize %lu -> %lu slots", msize, size);
	tw_index_start_resize(&x, tab, size);
	find_all = true;
	mold = mtab;
	mold_size = msize;
	mtab = tab;
	msize = size;
	CHECK(x.nr_tab == 0 && x.nr_old == nr_present && x.mpos == 0,
	      "start_resize: nr_tab %lu nr_old %lu mpos %lu", x.nr_tab, x.nr_old,
	      x.mpos);
}

static void migrate(unsigned long entries)
{
	unsigned long nr_old = x.nr_old, mpos = x.mpos, moved;
	struct tw_ent *ret = tw_index_migrate(&x, entries);

	find_all = true;
	if (!mold) {
		CHECK(!ret, "migrate returned a table while not resizing");
		return;
	}
	CHECK(x.nr_old <= nr_old, "migrate added to the old table");
	moved = nr_old - x.nr_old;
	CHECK(moved <= entries, "migrate moved %lu of %lu entries", moved, entries);
	CHECK(x.nr == nr_present && x.nr_tab == nr_present - x.nr_old,
	      "migrate: nr %lu nr_tab %lu nr_old %lu, %lu present", x.nr,
	      x.nr_tab, x.nr_old, nr_present);
	tr("  migrate %lu: moved %lu, mpos %lu -> %lu", entries, moved, mpos,
	   x.mpos);
	if (ret) {
		CHECK(ret == mold && !x.old && !x.nr_old, "migrate returned %p "
		      "(old %p, nr_old %lu), not %p", (void *)ret, (void *)x.old,
		      x.nr_old, (void *)mold);
		free(ret);
		mold = NULL;
		mold_size = 0;
		tr("  resize done");
		return;
	}
	CHECK(x.old == mold, "migrate dropped the old table without returning it");
	CHECK(x.mpos >= mpos, "migrate moved mpos back %lu -> %lu", mpos, x.mpos);
	/* it stops only when out of entries or out of empty slots to pass */
	CHECK(moved == entries || x.mpos - mpos == entries * 16,
	      "migrate of %lu stopped after %lu entries and %lu empty slots with "
	      "%lu entries left", entries, moved, x.mpos - mpos, x.nr_old);
}

/*
 * Room for one more id: the table new ids go to has room (room()), and
 * would still have it with every entry of the old table migrated into it;
 * else a later migrate would find the new table full.  Finish the resize,
 * or start one, until there is.
 */
static bool room_for_one(void)
{
	return tw_index_room(&x) && x.nr < x.size - x.size / 16;
}

static void make_room(void)
{
	while (!room_for_one()) {
		unsigned long size;

		tr("  no room: nr %lu (tab %lu) in %lu slots%s", x.nr, x.nr_tab,
		   x.size, mold ? ", resizing" : "");
		if (mold) {
			migrate(~0UL);
			continue;
		}
		size = tw_index_want_size(&x, 1);
		CHECK(size > x.size, "no room for an id in %lu slots, but "
		      "want_size(1) is %lu", x.size, size);
		start_resize(size);
	}
}

/* A new id for node @i, as tw_node_new(): the entry, to be placed. */
static struct tw_ent *create(int i)
{
	struct mnode *y = &m[i];
	struct tw_ent *e;

	make_room();
	y->id = gen_id(i);
	y->data = 0;
	y->node = node_alloc(y->id, i);
	y->deadline = 0;
	e = tw_index_insert(&x, y->node, 0);
	CHECK(e && e->node == y->node && e->id == y->id && e->deadline == 0,
	      "insert of node %d: entry %p", i, (void *)e);
	CHECK(tw_index_find(&x, y->id) == e, "find of a new id is not its entry");
	CHECK(e >= mtab && e < mtab + msize, "new id not in the new table");
	nr_present++;
	y->touched = true;
	y->stable = false;
	y->listed = 0;
	return e;
}

/* A cancel: detach, remove the entry, free the node (as tw_node_free()). */
static void destroy(int i)
{
	struct tw_ent *e = find_ent(i, "destroy");

	detach(i, e, BY_CANCEL);
	CHECK(e->node == m[i].node, "cancel of node %d: entry's node %p, model "
	      "%p", i, (void *)e->node, (void *)m[i].node);
	tw_index_remove(&x, e);
	node_free(m[i].node);
	m[i].node = NULL;
	CHECK(!tw_index_find(&x, m[i].id), "removed id %#llx still found",
	      m[i].id);
	m[i].state = ABSENT;
	m[i].touched = true;
	nr_present--;
	dump_forget(i);
}

static unsigned long migrate_count(void)
{
	uint8_t b = in_u8();

	return b >= 240 ? ~0UL : b % 9;
}

/* ----------------------------------------------------------------- dump */

static void dump_begin(void)
{
	unsigned int mode = in_u8() % 6;
	u64 c = 0;
	int i, j;

	switch (mode) {
	case 1:
		c = bytes(8) >> 1;
		break;
	case 2:
		j = in_u8() % NODES;
		c = m[j].state != ABSENT ? tw_key(&x, m[j].id) >> 1 : 0;
		i = in_u8() % 3;
		if (i == 1 && c + 1 < TW_CURSOR_END)
			c += TW_CURSOR_END + 1;	/* the cell's odd key */
		else if (i == 2)
			c++;
		break;
	case 3:		/* the last cells, even and odd keys */
		c = TW_CURSOR_END - 1 - in_u8() % 2;
		c += in_u8() % 2 ? 0 : TW_CURSOR_END + 1;
		if (c == 2 * TW_CURSOR_END)
			c = UINT64_MAX;
		break;
	case 4:
		c = in_u8() == 255 ? TW_CURSOR_END : (u64)in_u8() << 55;
		break;
	default:
		break;
	}
	dump_on = true;
	dump_cursor = dump_start = c;
	dump_any = false;
	for (i = 0; i < NODES; i++) {
		m[i].listed = 0;
		m[i].stable = m[i].state != ABSENT && c != TW_CURSOR_END &&
			      tw_key(&x, m[i].id) >= tw_cursor_key(c);
	}
	tr("  dump from cursor %#llx", c);
}

static void dump_step(void)
{
	uint8_t rb = in_u8(), bb = in_u8();
	unsigned long room = 1 + rb % 9;
	unsigned long budget = bb >= 250 ? ~0UL : 1 + bb % 64, b0 = budget;
	static unsigned char now_listed[NODES];
	u64 c0, c1;
	struct tw_ent *out;
	unsigned long nr, j;
	int i;

	if (!dump_on)
		dump_begin();
	c0 = dump_cursor;
	out = malloc(room * sizeof(*out));	/* exact size: ASan sees overruns */
	CHECK(out, "out of memory");
	nr = tw_index_dump(&x, &dump_cursor, out, room, &budget);
	c1 = dump_cursor;
	tr("  dump room %lu budget %lu: %lu ids, cursor %#llx -> %#llx"
	   " budget %lu", room, b0, nr, c0, c1, budget);
	CHECK(nr <= room, "dump stored %lu into room %lu", nr, room);
	CHECK(budget <= b0, "dump raised the budget");
	CHECK(c0 == TW_CURSOR_END ? c1 == c0 :
	      c1 == c0 || tw_cursor_passed(c1, tw_cursor_key(c0)),
	      "dump cursor went %#llx -> %#llx", c0, c1);
	/*
	 * Every call makes progress, even one that runs out of budget (it
	 * goes on until it can move the cursor) or has room for one entry
	 * and two in the next cell (it lists the even key alone), but for
	 * that pair in the last cell; an unlimited budget never runs out.
	 */
	CHECK(c0 == TW_CURSOR_END || c1 != c0 ||
	      (room == 1 && c0 == TW_CURSOR_END - 1),
	      "dump made no progress at %#llx with room %lu, budget %lu "
	      "left", c0, room, budget);
	CHECK(b0 != ~0UL || budget, "dump ran out of an unlimited budget");
	memset(now_listed, 0, sizeof(now_listed));
	for (j = 0; j < nr; j++) {
		u64 key;

		i = node_idx(out[j].node, "dump");
		key = tw_key(&x, m[i].id);
		CHECK(m[i].state != ABSENT, "dump listed removed node %d", i);
		CHECK(out[j].id == m[i].id && out[j].deadline == (m[i].deadline |
		      (m[i].state == READY ? TW_ENT_QUEUED : 0)), "dump entry of "
		      "node %d: id %#llx deadline word %#llx", i,
		      out[j].id, out[j].deadline);
		CHECK(!dump_any || key > dump_last_key, "dump out of key order: "
		      "node %d key %#llx after %#llx", i, key, dump_last_key);
		CHECK(key >= tw_cursor_key(c0) && tw_cursor_passed(c1, key),
		      "dump listed node %d (key %#llx) outside cursors [%#"
		      "llx, %#llx)", i, key, c0, c1);
		dump_last_key = key;
		dump_any = true;
		m[i].listed++;
		now_listed[i] = 1;
	}
	free(out);
	/* every node in the keys passed over was listed by this very call */
	for (i = 0; i < NODES; i++) {
		u64 key = tw_key(&x, m[i].id);

		if (m[i].state == ABSENT || c0 == TW_CURSOR_END ||
		    key < tw_cursor_key(c0) || !tw_cursor_passed(c1, key))
			continue;
		CHECK(now_listed[i], "dump passed key %#llx but did not "
		      "list node %d", key, i);
	}
	if (!nr && c1 != TW_CURSOR_END && budget) {
		unsigned int pair = 0;

		for (i = 0; i < NODES; i++)
			pair += m[i].state != ABSENT && tw_key(&x, m[i].id) >> 1 == c1;
		CHECK(room == 1 && pair == 2 && c1 == TW_CURSOR_END - 1,
		      "dump returned 0 with budget left at cursor %#llx"
		      " (room %lu, %u nodes in the cell)", c1, room, pair);
	}
	if (c1 == TW_CURSOR_END) {
		for (i = 0; i < NODES; i++) {
			CHECK(!m[i].stable || m[i].listed == 1, "finished dump listed "
			      "node %d (present throughout) %u times", i, m[i].listed);
			CHECK(m[i].listed <= 1, "dump listed node %d %u times", i,
			      m[i].listed);
		}
		dump_on = false;
		tr("  dump finished");
	}
}

/* ------------------------------------------------------------ deadlines */

static u64 gen_deadline(void)
{
	u64 nt = now / tick, d = now, a;
	unsigned int l;
	int j, off;

	/* one in_u8() per expression: the order of reads must be defined */
	switch (in_u8() % 10) {
	case 0:		/* within a few ticks */
		a = tick * in_u8() / 32;
		d = sat_add(now, 1 + a + in_u8());
		break;
	case 1:		/* at the scale of a level, 0..7 */
		l = in_u8() % TW_LEVELS;
		a = sat_mul(sat_mul(tick, 1ULL << (TW_LVL_BITS * l)) / 64, 1 + in_u8());
		d = sat_add(now, a + in_u8());
		break;
	case 2:
		d = KMAX;
		break;
	case 3:		/* on a tick boundary, or next to one */
		off = (int)(in_u8() % 3) - 1;
		d = at_tick(nt + in_u8() % 70, off);
		break;
	case 4:		/* on a slot boundary of some level */
		l = 1 + in_u8() % (TW_LEVELS - 1);
		off = (int)(in_u8() % 3) - 1;
		d = at_tick(((nt >> (TW_LVL_BITS * l)) + 1 + in_u8() % 3) <<
			    (TW_LVL_BITS * l), off);
		break;
	case 5:		/* already due */
		a = in_u8();
		d = now - umin(now, sat_mul(a, tick / 4 + in_u8()));
		break;
	case 6:
		d = bytes(8) & KMAX;
		break;
	case 7:		/* tie with another node */
		j = in_u8() % NODES;
		d = m[j].state != ABSENT ? m[j].deadline : sat_add(now, 1);
		d = sat_add(d, in_u8() % 3);
		break;
	case 8:		/* the last reachable tick boundary, and past it */
		d = in_u8() & 1 ? KMAX / tick * tick : KMAX - in_u8();
		break;
	default:	/* far, random, saturating */
		a = bytes(4);
		d = sat_add(now, sat_mul(sat_mul(a, 1 + in_u8()), tick / 1000 + 1));
		break;
	}
	return d;
}

/* ---------------------------------------------------------------- time */

static void time_step(void)
{
	u64 nt = now / tick, to = now, t, a;
	unsigned int l;
	int i;

	switch (in_u8() % 9) {
	case 0:
		to = sat_add(now, sat_mul(tick, in_u8()) / 64);
		break;
	case 1:
		to = sat_add(now, sat_mul(tick, 1 + in_u8() % 66));
		break;
	case 2:		/* to the next slot that comes due, or next to it */
		if (tw_wheel_next(&w, &t))
			to = at_tick(t, (int)(in_u8() % 3) - 1);
		break;
	case 3:		/* to the earliest deadline, or just before it */
		t = 0;
		for (i = 0; i < NODES; i++)
			if (m[i].state == ARMED && (!t || m[i].deadline < t))
				t = m[i].deadline;
		to = t ? t - (in_u8() & 1) : now;
		break;
	case 4:		/* a jump at the scale of a level */
		l = in_u8() % TW_LEVELS;
		a = sat_mul(sat_mul(tick, 1ULL << (TW_LVL_BITS * l)), 1 + in_u8() % 64);
		to = sat_add(now, a + in_u8());
		break;
	case 5:		/* huge */
		to = sat_add(now, bytes(8) & KMAX);
		break;
	case 6:
		a = in_u8() % 2;
		to = KMAX - a * in_u8();
		break;
	case 7:		/* to the start of the next period of a level */
		l = 1 + in_u8() % (TW_LEVELS - 1);
		to = at_tick(((nt >> (TW_LVL_BITS * l)) + 1) << (TW_LVL_BITS * l),
			     (int)(in_u8() % 3) - 1);
		break;
	default:
		to = sat_add(now, 1 + in_u8());
		break;
	}
	if (to > now)
		now = to;
	tr("  now %llu (tick %llu)", now, now / tick);
}

/* ----------------------------------------------------------- operations */

enum op {
	OP_SET, OP_ADD_RAW, OP_CANCEL, OP_READ, OP_ADVANCE_FULL,
	OP_ADVANCE_PARTIAL, OP_CATCH_UP, OP_TIME, OP_MAINTAIN, OP_RESIZE,
	OP_MIGRATE, OP_DUMP_BEGIN, OP_DUMP_STEP, OP_FIND, OP_BULK_SET,
	OP_BULK_CANCEL, OP_FLUSH, OP_TOUCH_QUEUED, OP_CANCEL_QUEUED, OP_NR
};

static const char *const op_names[] = {
	"set", "add_raw", "cancel", "read", "advance_full", "advance_partial",
	"catch_up", "time", "maintain", "resize", "migrate", "dump_begin",
	"dump_step", "find", "bulk_set", "bulk_cancel", "flush", "touch_queued",
	"cancel_queued",
};

/*
 * Opcode byte -> operation, the common ones more often.  Bytes up to 31
 * keep their meaning when operations are added (the start scripts use
 * them).
 */
static const unsigned char op_table[36] = {
	OP_SET, OP_SET, OP_SET, OP_SET, OP_SET, OP_ADD_RAW, OP_CANCEL, OP_CANCEL,
	OP_READ, OP_READ, OP_ADVANCE_FULL, OP_ADVANCE_FULL, OP_ADVANCE_FULL,
	OP_ADVANCE_PARTIAL, OP_ADVANCE_PARTIAL, OP_CATCH_UP, OP_TIME, OP_TIME,
	OP_TIME, OP_TIME, OP_MAINTAIN, OP_MAINTAIN, OP_RESIZE, OP_MIGRATE,
	OP_DUMP_BEGIN, OP_DUMP_STEP, OP_DUMP_STEP, OP_DUMP_STEP, OP_FIND,
	OP_BULK_SET, OP_BULK_CANCEL, OP_FLUSH, OP_TOUCH_QUEUED, OP_TOUCH_QUEUED,
	OP_CANCEL_QUEUED, OP_SET,
};

/*
 * The data a touch carries, or none (@has false): one input byte, mixed
 * with a count of touches so that no two touches carry the same.
 */
static u64 gen_data(bool *has)
{
	uint8_t b = in_u8();

	*has = b >= 64;
	return (++data_seq << 8 | b) * 0x9e3779b97f4a7c15ULL;
}

/*
 * kmod's tw_set(): create if absent; a later deadline of an armed node
 * lazily (the entry alone); else detach (a queued event is discarded) and
 * place again.  @raw: arm through the wheel even when already due.
 */
static void op_set(int i, u64 d, bool raw)
{
	struct mnode *y = &m[i];
	struct tw_ent *e;
	bool has;
	u64 data = gen_data(&has);

	tr("%s node %d deadline %llu (tick %llu, %s)%s",
	   raw ? "add_raw" : "set", i, d, exp_tick(d), state_name[y->state],
	   has ? " with data" : "");
	if (y->state == ABSENT) {
		e = create(i);
	} else {
		e = find_ent(i, "set");
		/* armed, and later: the entry alone; the node stays put */
		if (!raw && !tw_ent_queued(e) && d >= e->deadline && d > now) {
			e->deadline = d;
			if (has)
				e->node->data = y->data = data;
			y->deadline = d;
			stats.lazy++;
			tr("  lazy");
			return;
		}
		detach(i, e, BY_TOUCH);
	}
	if (has)
		e->node->data = y->data = data;
	place(i, e, d, raw);
}

/*
 * kmod's read(): up to @nr events, in holds of at most READ_CHUNK.  Each
 * hold peeks at the events from w.head (each one's entry looked up), then
 * delivers them (@fault: fewer, picked by the input, after which read()
 * stops): tw_wheel_pop(), the entry looked up again only if removing an
 * earlier one shifted it, removed, the node freed.
 */
static void op_read(unsigned int nr, bool fault)
{
	while (nr && rq_len) {
		struct tw_node *peek[READ_CHUNK], *node;
		struct tw_ent *ent[READ_CHUNK];
		unsigned int n = 0, k = umin(nr, READ_CHUNK), ok, j;

		for (node = w.head; node != w.tail && n < k; node = node->next) {
			const struct mnode *y;

			CHECK(node && n < rq_len && node == rqn[n], "read: event %u "
			      "in node %p, model %p", n, (void *)node,
			      n < rq_len ? (void *)rqn[n] : NULL);
			y = &m[rq[n]];
			CHECK(y->state == READY && node->id == y->id &&
			      node->data == y->data && node->expired == y->stamp,
			      "read: event %u of node %d (%s): id %#llx data %#"
			      "llx expired %llu", n, rq[n],
			      state_name[y->state], node->id, node->data,
			      node->expired);
			ent[n] = tw_index_find(&x, node->id);
			CHECK(ent[n] && ent[n]->node == node && tw_ent_queued(ent[n]) &&
			      tw_ent_deadline(ent[n]) == y->deadline &&
			      y->deadline <= node->expired, "read: event %u of node "
			      "%d: entry %p", n, rq[n], (void *)ent[n]);
			peek[n++] = node;
		}
		CHECK(n == umin(k, rq_len), "read: peeked at %u events of %u", n,
		      rq_len);
		ok = fault ? in_u8() % (n + 1) : n;
		tr("  read %u of %u events%s", ok, n, fault ? " (fault)" : "");
		for (j = 0; j < ok; j++) {
			int i = rq[0];
			struct mnode *y = &m[i];

			node = tw_wheel_pop(&w);
			CHECK(node == peek[j] && node == model_pop(), "read: pop %u "
			      "gave %p, peeked at %p", j, (void *)node,
			      (void *)peek[j]);
			CHECK(w.nr_ready == rq_len && w.head == (rq_len ? rqn[0] :
			      w.tail), "read: after a pop nr_ready %lu (model %u), "
			      "head %p", w.nr_ready, rq_len, (void *)w.head);
			if (ent[j]->node != node) {
				ent[j] = tw_index_find(&x, node->id);
				stats.relookups++;
			}
			CHECK(ent[j] && ent[j]->node == node && tw_ent_queued(ent[j]) &&
			      ent[j]->id == y->id, "read: popped node %d: entry %p", i,
			      (void *)ent[j]);
			tw_index_remove(&x, ent[j]);
			node_free(node);
			y->node = NULL;
			y->state = ABSENT;
			y->touched = true;
			nr_present--;
			dump_forget(i);
			stats.pops++;
		}
		if (ok < n) {
			stats.faults++;
			break;
		}
		nr -= ok;
	}
}

static void op_find(void)
{
	u64 id = in_u8() & 1 ? bytes(8) : id_of_key(bytes(8));
	struct tw_ent *f = tw_index_find(&x, id);
	int i;

	for (i = 0; i < NODES; i++)
		if (m[i].state != ABSENT && m[i].id == id)
			break;
	CHECK(i < NODES ? f && f->node == m[i].node && f->id == id : !f,
	      "find(%#llx) gives %p", id, (void *)f);
}

static void run_op(void)
{
	enum op op = op_table[in_u8() % sizeof(op_table)];
	unsigned int k, nr;
	uint8_t b;
	int i;

	op_name = op_names[op];
	switch (op) {
	case OP_SET:
	case OP_ADD_RAW:
		i = in_u8() % NODES;
		op_set(i, gen_deadline(), op == OP_ADD_RAW);
		break;
	case OP_CANCEL:
		i = in_u8() % NODES;
		tr("cancel node %d (%s)", i, state_name[m[i].state]);
		if (m[i].state != ABSENT)
			destroy(i);
		break;
	case OP_READ:	/* one byte: how many, and whether the copy faults */
		b = in_u8();
		nr = 1 + b % 32;
		tr("read %u%s", nr, b >= 224 ? " (fault)" : "");
		op_read(nr, b >= 224);
		break;
	case OP_TOUCH_QUEUED:	/* a queued id, anywhere in the queue */
	case OP_CANCEL_QUEUED:
		b = in_u8();
		if (!rq_len) {
			tr("%s: none queued", op_names[op]);
			break;
		}
		k = b % rq_len;
		i = rq[k];
		tr("%s: event %u of %u, node %d", op_names[op], k, rq_len, i);
		if (op == OP_TOUCH_QUEUED)
			op_set(i, gen_deadline(), false);
		else
			destroy(i);
		break;
	case OP_ADVANCE_FULL:
		b = in_u8();
		tr("advance_full to %llu pattern %u", now, b);
		advance_full(b);
		break;
	case OP_ADVANCE_PARTIAL:
		b = in_u8() % 16;
		tr("advance_partial to %llu budget %u", now, b);
		advance_once(b);
		break;
	case OP_CATCH_UP:
		tr("catch_up to %llu", now);
		tw_wheel_catch_up(&w, now);
		break;
	case OP_TIME:
		tr("time");
		time_step();
		break;
	case OP_MAINTAIN: {	/* a batch of up to @extra new ids */
		unsigned long extra = in_u8(), size = tw_index_want_size(&x, extra);

		tr("maintain %lu (want %lu)", extra, size);
		if (size)
			start_resize(size);
		migrate(migrate_count());
		break;
	}
	case OP_RESIZE: {	/* to any size that holds the ids, with room */
		unsigned long lo = umax(TW_IDX_MIN, nr_present + nr_present / 8 + 2);
		unsigned long size;

		b = in_u8();
		size = b & 1 ? lo + bytes(2) % (RESIZE_MAX - lo + 1) : lo + in_u8() % 16;
		tr("resize to %lu%s", size, mold ? " (busy)" : "");
		if (!mold)
			start_resize(size);
		break;
	}
	case OP_MIGRATE:
		tr("migrate");
		migrate(migrate_count());
		break;
	case OP_DUMP_BEGIN:
		tr("dump_begin");
		dump_begin();
		break;
	case OP_DUMP_STEP:
		tr("dump_step");
		dump_step();
		break;
	case OP_FIND:
		op_find();
		break;
	case OP_BULK_SET:
	case OP_BULK_CANCEL: {
		uint64_t seed = bytes(2) | 1ULL << 40;
		unsigned int stride = 1 + 2 * (in_u8() % 64);

		nr = 1 + in_u8() % 128;
		i = in_u8() % NODES;
		tr("%s %u from node %d stride %u", op_names[op], nr, i, stride);
		/* like a write() or CANCEL in kmod: tw_lock() maintains, catches up */
		k = tw_index_want_size(&x, nr);
		if (k)
			start_resize(k);
		if (mold)
			migrate((nr + 1) * 16);
		tw_wheel_catch_up(&w, now);
		check_wheel();
		prng = seed;
		for (k = 0; k < nr; k++, i = (i + stride) % NODES) {
			if (op == OP_BULK_SET)
				op_set(i, gen_deadline(), false);
			else if (m[i].state != ABSENT)
				destroy(i);
		}
		prng = 0;
		break;
	}
	case OP_FLUSH:
		tr("flush");
		now = KMAX;
		advance_full(in_u8());
		break;
	default:
		break;
	}
	check_all();
}

/* ------------------------------------------------------------- one input */

static const u64 ticks[] = { 100000, 1000000, 7777777, 3600000000000ULL,
			     1000000000, 100001, 123456789 };

static void setup(void)
{
	unsigned int k = in_u8();
	u64 t0;
	int i;

	if (k < 224)
		tick = ticks[k % (sizeof(ticks) / sizeof(ticks[0]))];
	else	/* any tick the module accepts: [100 us, 1 h] */
		tick = 100000 + bytes(6) % (3600000000000ULL - 100000 + 1);
	switch (in_u8() % 6) {
	case 0:
		t0 = 0;
		break;
	case 1:
		t0 = sat_mul(bytes(3), tick);
		t0 = sat_add(t0, in_u8());
		break;
	case 2:
		t0 = bytes(8) >> 2;
		break;
	case 3:
		t0 = KMAX - sat_mul(tick, bytes(2));
		break;
	case 4:
		t0 = KMAX - in_u8();
		break;
	default:
		t0 = bytes(8) & KMAX;
		break;
	}
	now = t0;
	last_e = 0;
	last_e_set = false;
	late_max = 0;
	nr_present = nr_armed = 0;
	data_seq = 0;
	for (i = 0; i < NODES; i++) {
		m[i].state = ABSENT;
		m[i].id = ~0ULL - i;
		m[i].node = NULL;
	}
	msize = TW_IDX_MIN;
	mtab = calloc(msize, sizeof(*mtab));
	CHECK(mtab, "out of memory");
	mold = NULL;
	mold_size = 0;
	memset(&x, 0x5a, sizeof(x));
	tw_index_init(&x, mtab, msize, secret);
	/* as the module: the index, then the wheel with it and a sentinel */
	pool_reset();
	rq_len = 0;
	rqn[0] = node_alloc(0x5a5a5a5a5a5a5a5aULL, P_SENTINEL);
	memset(&w, 0, sizeof(w));
	w.head = w.tail = NULL;
	tw_wheel_init(&w, tick, now, &x, rqn[0]);
	CHECK(w.cur == now / tick, "init: cur %llu", w.cur);
	CHECK(w.idx == &x, "init: idx %p", (void *)w.idx);
	CHECK(w.head == rqn[0] && w.tail == rqn[0] && !rqn[0]->next &&
	      !w.nr_ready && !w.nr_armed, "init: head %p tail %p (sentinel %p)",
	      (void *)w.head, (void *)w.tail, (void *)rqn[0]);
	prev_cur = w.cur;
	stats.max_queue = 0;
	dump_on = false;
	tr("setup tick %llu now %llu", tick, now);
}

/*
 * Start states, picked by one input byte, that take many operations to
 * build: 120 nodes (mixed ids and deadlines), then a shrink or a grow of
 * the index in progress, a wheel advanced part way with its drain list
 * full, or most of the nodes expired, their events queued.  Written in the
 * input's own encoding: opcode bytes are indexes into op_table[].
 */
#define OPB_ADVANCE_FULL	10
#define OPB_ADVANCE_PARTIAL	13
#define OPB_TIME		16
#define OPB_MAINTAIN		20
#define OPB_RESIZE		22
#define OPB_MIGRATE		23
#define OPB_BULK_SET		29

static const uint8_t script_nodes[] = {
	OPB_BULK_SET, 0x12, 0x34, 37, 119, 0,	/* seed, stride 75, 120, from 0 */
};
static const uint8_t script_shrink[] = {
	OPB_RESIZE, 0, 3,			/* 161 -> 140 slots */
	OPB_MIGRATE, 1,				/* one entry moved */
};
static const uint8_t script_grow[] = {
	OPB_MAINTAIN, 100, 3,			/* 161 -> 294, three moved */
};
static const uint8_t script_drain[] = {
	OPB_TIME, 4, 3, 5, 0,			/* six level-3 slots later */
	OPB_ADVANCE_PARTIAL, 5,			/* five nodes moved */
};
static const uint8_t script_queue[] = {
	OPB_TIME, 4, 4, 63, 0,			/* 64 level-4 slots later */
	OPB_ADVANCE_FULL, 255,			/* all due expired at once */
};

static void run_script(const uint8_t *script, size_t len)
{
	const uint8_t *p = in_p;
	size_t n = in_n;

	in_p = script;
	in_n = len;
	while (in_n) {
		op_no++;
		run_op();
	}
	in_p = p;
	in_n = n;
}

static void start_state(void)
{
	unsigned int k = in_u8();

	if (k < 192)
		return;
	k %= 5;
	tr("start state %u", k);
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

/* Expire everything that can expire, read it all, pop the index empty. */
static void teardown(void)
{
	static unsigned char seen[NODES];
	unsigned long pos = 0, popped = 0;
	struct tw_node *n;
	int i;

	op_name = "final flush";
	op_no++;
	tr("final flush");
	now = KMAX;
	advance_full(0);
	for (i = 0; i < NODES; i++)
		CHECK(m[i].state != ARMED || m[i].deadline > KMAX / tick * tick,
		      "lost: node %d (deadline %llu) never expired", i,
		      m[i].deadline);
	op_read(NODES, false);
	CHECK(w.head == w.tail && w.nr_ready == 0 && !rq_len,
	      "ready queue not empty");
	check_all();

	/* as release(): the sentinel, then every node in the index */
	op_name = "teardown";
	CHECK(owner[pidx(w.tail, "teardown")] == P_SENTINEL, "the sentinel "
	      "belongs to node %d", owner[pidx(w.tail, "teardown")]);
	node_free(w.tail);
	memset(seen, 0, sizeof(seen));
	while ((n = tw_index_pop(&x, &pos))) {
		i = node_idx(n, "pop");
		CHECK(m[i].state != ABSENT, "pop returned removed node %d", i);
		CHECK(!seen[i], "pop returned node %d twice", i);
		seen[i] = 1;
		popped++;
		CHECK(popped <= nr_present, "pop returned more than %lu nodes",
		      nr_present);
		node_free(n);
	}
	CHECK(popped == nr_present, "pop returned %lu of %lu nodes", popped,
	      nr_present);
	CHECK(x.nr == 0, "index nr %lu after popping everything", x.nr);
	CHECK(!tw_index_pop(&x, &pos), "pop of an empty index");
	CHECK(!nodes_live, "%lu nodes not given back", nodes_live);
	stats.queue_len[stats.max_queue == 0 ? 0 : stats.max_queue == 1 ? 1 :
			stats.max_queue < 8 ? 2 : stats.max_queue < 64 ? 3 : 4]++;
	free(x.tab);
	free(x.old);
}

/* What the queue operations covered, in the log of a run. */
static void print_stats(void)
{
	static const char *const by[] = { "touch", "cancel" };
	int k;

	if (!stats.pops && !stats.expired)
		return;
	for (k = 0; k < 2; k++)
		fprintf(stderr, "twheel fuzz: discards by %s: %lu of the only event, "
			"%lu at the head, %lu in the middle, %lu last\n", by[k],
			stats.discard[k][0], stats.discard[k][1],
			stats.discard[k][2], stats.discard[k][3]);
	fprintf(stderr, "twheel fuzz: %lu expired by the wheel, %lu queued at "
		"once, %lu lazy touches; %lu read (%lu looked up again, %lu "
		"faults); inputs by longest queue: %lu none, %lu 1, %lu 2-7, %lu "
		"8-63, %lu 64+\n", stats.expired, stats.direct, stats.lazy,
		stats.pops, stats.relookups, stats.faults, stats.queue_len[0],
		stats.queue_len[1], stats.queue_len[2], stats.queue_len[3],
		stats.queue_len[4]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *env = getenv("TWHEEL_FUZZ_TRACE");
	const char *seed_env = getenv("TWHEEL_FUZZ_SEED");
	u64 seed = seed_env ? strtoull(seed_env, NULL, 0) : 1;
	struct tw_ent t[TW_IDX_MIN];
	int k;

	(void)argc;
	(void)argv;
	/* the index's secret, as the module draws one per fd: splitmix64 */
	for (k = 0; k < TW_SECRET_WORDS; k++) {
		u64 z = (seed += 0x9E3779B97F4A7C15ULL);

		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
		secret[k] = z ^ (z >> 31);
	}
	tw_index_init(&x, t, TW_IDX_MIN, secret);
	if (tw_key_id(&x, tw_key(&x, 12345)) != 12345 ||
	    tw_key(&x, tw_key_id(&x, 1)) != 1) {
		fprintf(stderr, "twheel fuzz: bad key inverse\n");
		abort();
	}
	memset(&x, 0, sizeof(x));
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
	trace = env && *env && *env != '0';
	atexit(print_stats);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	in_p = data;
	in_n = size;
	prng = 0;
	op_no = 0;
	op_name = "setup";
	setup();
	check_all();
	start_state();
	while (in_n) {
		op_no++;
		run_op();
	}
	teardown();
	return 0;
}
