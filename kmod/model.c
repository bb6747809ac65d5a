// SPDX-License-Identifier: GPL-2.0
/*
 * The model of one wheel and its index (wheel.c, index.c) that the tests
 * drive the core against: the KUnit suites (model_kunit.c and others, in
 * the kernel and in user space) and the fuzzer (selftests/core/fuzz_core.c).  The
 * model knows each id (its state, deadline, data and node), the ready
 * queue as two arrays (its events' ids, and the nodes that hold them with
 * the sentinel last), the nodes as a pool with an owner each, and the
 * index's tables.  Its operations do what the device (twheel.h) does with the
 * core, and check every property after every step:
 *
 *   - never early: an event is queued only once now >= its deadline, and
 *     the wheel queues it only once cur has reached its expiry tick;
 *   - at most one tick late: after a full tw_wheel_advance() no armed node
 *     has an expiry tick <= now's tick;
 *   - exactly once: nothing expires twice, nothing is lost (a flush to the
 *     end of time expires everything but the deadlines past the last tick,
 *     and one tick past the end of time expires those);
 *   - ordered: expiry ticks of nodes armed in the future never decrease;
 *     within one advance, the events come in the order of their expiry
 *     ticks, those due by the advance's start first;
 *   - tw_wheel_next(): false iff nothing is armed, never later than the
 *     earliest expiry tick (or than cur while something overdue waits);
 *   - tw_wheel_advance() moves exactly as many nodes (expired or
 *     re-slotted) as it takes from its budget, and returns true iff work
 *     is still due;
 *   - nr_armed, nr_ready, late_max, the ready queue, the slot lists and the
 *     pending bits (set exactly for the slots that hold nodes) agree with
 *     the model; cur never goes back nor past now;
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
 *     expiry clocks that never decrease and are never before their
 *     deadlines; each one's entry points at it and is marked
 *     TW_ENT_QUEUED; the sentinel ends the list and is in no entry; no
 *     other entry is marked TW_ENT_QUEUED; every node on the wheel has an
 *     entry that points at it;
 *   - nodes come from a pool: a node set free is poisoned (where the
 *     program can: the fuzzer's ASan; so is a red zone after each node),
 *     is not reused for a while, and every node is given back exactly
 *     once (the sentinel at teardown);
 *   - the index: after every operation both tables are valid ordered
 *     linear-probing tables (every entry at or after its home with no
 *     empty slot between, keys in circular order, the old table empty
 *     below mpos), hold every present id exactly once with its deadline
 *     and TW_ENT_QUEUED as the model has them; nr, nr_tab, nr_old,
 *     room(), want_size() (the documented thresholds); find() (of the ids
 *     an operation touched, of every id after a resize step and every
 *     find_every operations); incremental resize in both directions with
 *     migrate steps of any size between the other operations (each step
 *     moves exactly its entries or passes its empty slots, the old table
 *     comes back once, when empty); and tw_index_dump() with tiny rooms
 *     and budgets while the index is mutated and resized: entries come out
 *     in ascending key order, as copies of the current entries, each call
 *     lists exactly the ids whose cells it passed over, and a finished dump
 *     has listed every id present throughout exactly once;
 *   - tw_index_pop() tears everything down exactly once, armed and queued
 *     ids included.
 *
 * The wheel and index are used as the device does (twheel.h): the wheel is set up
 * with the index and a sentinel node; a touch finds the id's entry and
 * moves it by tw_wheel_set() (TWM_EAGER: tw_wheel_move()): a later
 * deadline of an armed id, not already due, is written to the entry only
 * (the wheel picks it up when the node's slot comes due); another
 * deadline is tw_wheel_detach() (an armed node off its slot, or a queued
 * event discarded) and tw_wheel_place() of the node it leaves (armed
 * again, or queued at once when already due), data kept; a new id is
 * inserted and placed; a cancel detaches the same way, removes the entry
 * and frees the node; a read peeks at up to TWM_READ_CHUNK events from
 * w.head, then for each one delivered (all, or fewer as when the copy
 * faults) tw_wheel_pop(), a lookup of its entry only if an earlier
 * removal shifted it, removal and free; before a batch of ids, a resize
 * is finished first while tw_index_finish_first() says so, the one
 * tw_index_want_size() asks for is started and the batch's share migrated
 * (tw_index_migrate_batch(): (ids + 1) * TW_MIGRATE_PER_ID entries).  The model
 * reads each policy itself, from its documentation: what the core reports
 * (TW_SET_*, finish first or not, the size wanted, a table still wanted)
 * and what it leaves are checked against that.  Plus the raw API the core
 * documents (TWM_RAW: tw_wheel_del() or tw_wheel_discard(), then
 * tw_wheel_add(), and one of a deadline already due goes to the drain
 * list; a later deadline written to the entry even when due; resizes to
 * any size that fits, whenever none is in progress, and migrate steps of
 * any size).
 *
 * The program gives the model its memory, its way of failing and its
 * randomness: struct twm_hooks, and bytes from an input (the fuzzer's) or
 * from splitmix64 (the suite's).  Nothing here calls more than what the
 * kernel and libc both have.
 */

#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/stdarg.h>
#include <linux/string.h>
#include <linux/twheel.h>

#include "model.h"

/**
 * twm_rand() - splitmix64: the generator of the suite and of the fuzzer
 * @state: in/out: the generator's state, any value
 *
 * Return: the next 64 random bits.
 */
u64 twm_rand(u64 *state)
{
	u64 z = (*state += TWM_GAMMA);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/**
 * twm_home() - the home slot of a key, computed apart from the core
 * @key: the key
 * @size: slots in the table, below 2^32
 *
 * floor(key * size / 2^64) in 32-bit halves, rather than as the core
 * does, so that a test does not check the core with its own arithmetic.
 *
 * Return: the slot.
 */
unsigned long twm_home(u64 key, unsigned long size)
{
	u64 hi = (key >> 32) * size, lo = (key & U32_MAX) * size;

	return (hi + (lo >> 32)) >> 32;
}

const char *const twm_count_name[TWM_COUNTS] = {
	"new", "lazy", "data", "at_once", "add_due", "del_touch", "del_cancel",
	"discard_touch", "discard_cancel", "only", "head", "middle", "last",
	"cancel", "advance", "expired", "reslot", "read", "pop", "relookup",
	"fault", "grow", "shrink", "resize", "dump",
};

const char *const twm_state_name[] = { "absent", "armed", "queued" };

/* ------------------------------------------------------------- reporting */

/**
 * twm_fail() - report a broken property through the program's fail hook
 * @m: the model
 * @file: where the property is checked
 * @line: the line there
 * @fmt: the message, printf-style
 *
 * The report also says where the model was: the operation, the clock and
 * the wheel's counts.  TWM_CHECK() calls it.
 */
__printf(4, 5) void twm_fail(struct twm *m, const char *file, int line,
			     const char *fmt, ...)
{
	size_t len;
	va_list ap;

	len = snprintf(m->why, sizeof(m->why), "%s:%d: ", file, line);
	len = min(len, sizeof(m->why) - 1);
	va_start(ap, fmt);
	len += vsnprintf(m->why + len, sizeof(m->why) - len, fmt, ap);
	va_end(ap);
	len = min(len, sizeof(m->why) - 1);
	snprintf(m->why + len, sizeof(m->why) - len,
		 " [op %lu (%s): tick_ns %llu now %llu cur %llu armed %lu ready %u present %lu]",
		 m->op_no, m->op_name, m->tick, m->now, m->w.cur, m->nr_armed,
		 m->rq_len, m->nr_present);
	m->hooks->fail(m->ctx, m->why);
}

/**
 * twm_trace() - print an operation through the program's trace hook
 * @m: the model
 * @fmt: what, printf-style
 *
 * Nothing when the program traces nothing.
 */
__printf(2, 3) void twm_trace(struct twm *m, const char *fmt, ...)
{
	char buf[160];
	va_list ap;

	if (!m->hooks->trace)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	m->hooks->trace(m->ctx, buf);
}

static void *twm_zalloc(struct twm *m, size_t size)
{
	void *p = m->hooks->zalloc(m->ctx, size);

	TWM_CHECK(m, p, "out of memory: %zu bytes", size);
	return p;
}

static void twm_poison(struct twm *m, const void *p, size_t size, bool on)
{
	if (m->hooks->poison)
		m->hooks->poison(p, size, on);
}

/* ---------------------------------------------------------------- bytes */

/**
 * twm_u8() - the next byte of the model's input
 * @m: the model
 *
 * Return: the next byte: from splitmix64, or from the input (0 past its
 * end).
 */
u8 twm_u8(struct twm *m)
{
	if (m->prng_on)
		return twm_rand(&m->prng) >> 56;
	if (!m->in_n)
		return 0;
	m->in_n--;
	return *m->in++;
}

/**
 * twm_bytes() - the next bytes of the model's input, big-endian
 * @m: the model
 * @nr: how many, up to 8
 *
 * Return: the bytes (twm_u8()) as a number.
 */
u64 twm_bytes(struct twm *m, unsigned int nr)
{
	u64 v = 0;

	while (nr--)
		v = v << 8 | twm_u8(m);
	return v;
}

/**
 * twm_pick() - an id of the model, from its input
 * @m: the model
 *
 * Return: the id's index: one byte for up to 256 ids, else two.
 */
unsigned int twm_pick(struct twm *m)
{
	return twm_bytes(m, m->nr > 256 ? 2 : 1) % m->nr;
}

/* ------------------------------------------------------------ arithmetic */

/**
 * twm_sat_add() - a sum that stops at the end of time
 * @a: a time in ns
 * @b: another
 *
 * Return: @a + @b, or TWM_KMAX if it is later.
 */
u64 twm_sat_add(u64 a, u64 b)
{
	return (a > TWM_KMAX || b > TWM_KMAX - a) ? TWM_KMAX : a + b;
}

/**
 * twm_sat_mul() - a product that stops at the end of time
 * @a: a factor
 * @b: another
 *
 * Return: @a * @b, or TWM_KMAX if it is later.
 */
u64 twm_sat_mul(u64 a, u64 b)
{
	return (a && b > div64_u64(TWM_KMAX, a)) ? TWM_KMAX : a * b;
}

/**
 * twm_at_tick() - the time at a tick, or just before or after it
 * @m: the model
 * @t: the tick
 * @off: -1, 0 or 1 ns added
 *
 * Return: @t's time in ns, clamped to the end of time, plus @off.
 */
u64 twm_at_tick(struct twm *m, u64 t, int off)
{
	u64 ns = twm_sat_mul(t, m->tick);

	if (off < 0 && ns)
		return ns - 1;
	return off > 0 ? twm_sat_add(ns, 1) : ns;
}

/* The expiry tick of deadline @d: the first tick boundary at or after it. */
static u64 twm_exp_tick(const struct twm *m, u64 d)
{
	u64 rem, q = div64_u64_rem(d, m->tick, &rem);

	return q + (rem != 0);
}

/* The last tick boundary before the end of time, in ns. */
static u64 twm_last_tick(const struct twm *m)
{
	return div64_u64(TWM_KMAX, m->tick) * m->tick;
}

/**
 * twm_now_tick() - the tick of the model's clock
 * @m: the model
 *
 * Return: the tick that m->now falls in.
 */
u64 twm_now_tick(const struct twm *m)
{
	return div64_u64(m->now, m->tick);
}

/* ----------------------------------------------------------------- nodes */

/* The pool slot of node @n. */
static unsigned int twm_pidx(struct twm *m, const struct tw_node *n,
			     const char *where)
{
	unsigned long p = (unsigned long)n, b = (unsigned long)&m->pool[0].n;
	unsigned long k = (p - b) / sizeof(struct twm_pnode);

	TWM_CHECK(m, p >= b && (p - b) % sizeof(struct twm_pnode) == 0 &&
		  k < m->pool_nr, "%s: pointer %p is not a node", where, n);
	return k;
}

/* The id node @n belongs to, in the model: it must belong to one. */
static unsigned int twm_node_id(struct twm *m, const struct tw_node *n,
				const char *where)
{
	int i = m->owner[twm_pidx(m, n, where)];

	TWM_CHECK(m, i >= 0, "%s: node %p is %s", where, n,
		  i == TWM_P_FREE ? "free" : "the sentinel");
	TWM_CHECK(m, m->ids[i].node == n,
		  "%s: node %p belongs to id %d, whose node is %p", where, n,
		  i, m->ids[i].node);
	return i;
}

static void twm_set_owner(struct twm *m, const struct tw_node *n, int i)
{
	m->owner[twm_pidx(m, n, "model")] = i;
}

static void twm_pool_reset(struct twm *m)
{
	unsigned int p;

	for (p = 0; p < m->pool_nr; p++) {
		m->owner[p] = TWM_P_FREE;
		m->freeq[p] = p;
	}
	m->free_head = 0;
	m->free_len = m->pool_nr;
	m->nodes_live = 0;
	twm_poison(m, m->pool, m->pool_nr * sizeof(*m->pool), true);
}

/* A node for id @i (or the sentinel), as tw_node_alloc(): id set, data 0. */
static struct tw_node *twm_node_alloc(struct twm *m, u64 id, int i)
{
	struct tw_node *n;
	unsigned int p;

	TWM_CHECK(m, m->free_len, "out of nodes: %lu in use", m->nodes_live);
	p = m->freeq[m->free_head];
	m->free_head = (m->free_head + 1) % m->pool_nr;
	m->free_len--;
	TWM_CHECK(m, m->owner[p] == TWM_P_FREE,
		  "node %u on the free list is in use", p);
	n = &m->pool[p].n;
	twm_poison(m, n, sizeof(*n), false);
	memset(n, 0x5a, sizeof(*n));	/* the core must set what it uses */
	n->id = id;
	n->data = 0;
	m->owner[p] = i;
	m->nodes_live++;
	return n;
}

static void twm_node_free(struct twm *m, struct tw_node *n)
{
	unsigned int p = twm_pidx(m, n, "free");

	TWM_CHECK(m, m->owner[p] != TWM_P_FREE, "node %u freed twice", p);
	m->owner[p] = TWM_P_FREE;
	twm_poison(m, n, sizeof(*n), true);
	m->freeq[(m->free_head + m->free_len) % m->pool_nr] = p;
	m->free_len++;
	m->nodes_live--;
}

/* -------------------------------------------------------- the queue model */

static unsigned int twm_rq_pos(struct twm *m, unsigned int i)
{
	unsigned int k;

	for (k = 0; k < m->rq_len && m->rq[k] != i; k++)
		;
	TWM_CHECK(m, k < m->rq_len, "model: id %u not on the ready queue", i);
	return k;
}

/*
 * The model of tw_wheel_expire(): id @i's event goes into the sentinel,
 * and the id's node becomes the sentinel.
 */
static void twm_model_expire(struct twm *m, unsigned int i)
{
	struct twm_id *y = &m->ids[i];

	m->rq[m->rq_len] = i;
	m->rqn[m->rq_len + 1] = y->node;
	twm_set_owner(m, y->node, TWM_P_SENTINEL);
	y->node = m->rqn[m->rq_len];
	twm_set_owner(m, y->node, i);
	m->rq_len++;
	y->state = TWM_QUEUED;
	y->stamp = max(m->now, 1ULL);
	m->max_queue = max(m->max_queue, m->rq_len);
}

/*
 * The model of tw_wheel_discard(): the events after id @i's move up, and
 * so do the nodes after the next one, which is set free (the sentinel,
 * for the last event: the node that held it becomes the sentinel).  The
 * node set free, now the id's, is returned.
 */
static struct tw_node *twm_model_discard(struct twm *m, unsigned int i)
{
	unsigned int k = twm_rq_pos(m, i), j;
	struct tw_node *freed = m->rqn[k + 1];

	memmove(&m->rq[k], &m->rq[k + 1], (m->rq_len - k - 1) * sizeof(*m->rq));
	memmove(&m->rqn[k + 1], &m->rqn[k + 2],
		(m->rq_len - k - 1) * sizeof(*m->rqn));
	m->rq_len--;
	for (j = k; j < m->rq_len; j++) {
		m->ids[m->rq[j]].node = m->rqn[j];
		twm_set_owner(m, m->rqn[j], m->rq[j]);
	}
	twm_set_owner(m, m->rqn[m->rq_len], TWM_P_SENTINEL);
	m->ids[i].node = freed;
	twm_set_owner(m, freed, i);
	return freed;
}

/* The model of tw_wheel_pop(): the head's node, still its id's. */
static struct tw_node *twm_model_pop(struct twm *m)
{
	struct tw_node *n = m->rqn[0];

	TWM_CHECK(m, m->rq_len, "model: pop of an empty queue");
	memmove(&m->rq[0], &m->rq[1], (m->rq_len - 1) * sizeof(*m->rq));
	memmove(&m->rqn[0], &m->rqn[1], m->rq_len * sizeof(*m->rqn));
	m->rq_len--;
	return n;
}

/* Is @id held by a present id other than @self? */
static bool twm_id_used(const struct twm *m, u64 id, unsigned int self)
{
	unsigned int i;

	for (i = 0; i < m->nr; i++)
		if (i != self && m->ids[i].state != TWM_ABSENT &&
		    m->ids[i].id == id)
			return true;
	return false;
}

/* ------------------------------------------------------------ the checks */

/* The entry word the model expects of present id @i. */
static u64 twm_ent_word(const struct twm_id *y)
{
	return y->deadline | (y->state == TWM_QUEUED ? TW_ENT_QUEUED : 0);
}

/* Entries of table @t marked queued; none may hold the sentinel. */
static unsigned long twm_tab_queued(struct twm *m, const struct tw_ent *t,
				    unsigned long size, const char *what)
{
	unsigned long p, queued = 0;

	for (p = 0; p < size; p++) {
		TWM_CHECK(m, t[p].node != m->w.tail,
			  "the sentinel is in %s entry %lu", what, p);
		queued += t[p].node && tw_ent_queued(&t[p]);
	}
	return queued;
}

/*
 * The ready queue, after every operation: from w.head, the model's events
 * in their nodes, each one's entry pointing at it and marked queued, with
 * expiry clocks that never decrease and are never before the deadline,
 * up to the sentinel, which ends the list; exactly nr_ready of them; the
 * sentinel in no entry, and no other entry marked queued.
 */
static void twm_check_queue(struct twm *m)
{
	const struct tw_wheel *w = &m->w;
	unsigned long queued;
	const struct tw_node *n;
	unsigned int k;
	u64 last = 1;

	TWM_CHECK(m, w->nr_ready == m->rq_len, "nr_ready %lu, model %u",
		  w->nr_ready, m->rq_len);
	TWM_CHECK(m, w->tail == m->rqn[m->rq_len], "sentinel %p, model %p",
		  w->tail, m->rqn[m->rq_len]);
	TWM_CHECK(m, m->owner[twm_pidx(m, w->tail, "sentinel")] ==
		  TWM_P_SENTINEL, "the sentinel belongs to id %d",
		  m->owner[twm_pidx(m, w->tail, "sentinel")]);
	TWM_CHECK(m, !w->tail->next, "the sentinel's next is %p",
		  w->tail->next);
	for (k = 0, n = w->head; n != w->tail; n = n->next, k++) {
		const struct twm_id *y;
		const struct tw_ent *e;

		TWM_CHECK(m, n, "ready queue ends after %u events without the sentinel",
			  k);
		TWM_CHECK(m, k < m->rq_len,
			  "ready queue longer than the model's %u (node %p)",
			  m->rq_len, n);
		TWM_CHECK(m, n == m->rqn[k],
			  "ready queue position %u is node %p, model %p", k, n,
			  m->rqn[k]);
		y = &m->ids[m->rq[k]];
		TWM_CHECK(m, n->id == y->id && n->data == y->data &&
			  n->expired == y->stamp,
			  "event %u of id %u: id %#llx data %#llx expired %llu, expected %#llx %#llx %llu",
			  k, m->rq[k], n->id, n->data, n->expired, y->id,
			  y->data, y->stamp);
		TWM_CHECK(m, n->expired >= last && n->expired >= y->deadline,
			  "event %u expired at %llu after one at %llu, deadline %llu",
			  k, n->expired, last, y->deadline);
		last = n->expired;
		e = tw_index_find(&m->x, n->id);
		TWM_CHECK(m, e && e->node == n && tw_ent_queued(e),
			  "event %u (id %u): entry %p, its node %p, deadline word %#llx",
			  k, m->rq[k], e, e ? e->node : NULL,
			  e ? e->deadline : 0);
	}
	TWM_CHECK(m, k == m->rq_len, "ready queue has %u events, model %u", k,
		  m->rq_len);
	queued = twm_tab_queued(m, m->x.tab, m->x.size, "new");
	if (m->x.old)
		queued += twm_tab_queued(m, m->x.old, m->x.old_size, "old");
	TWM_CHECK(m, queued == w->nr_ready,
		  "%lu entries marked queued, nr_ready %lu", queued,
		  w->nr_ready);
}

/* Whether a node with expiry tick @e may sit in slot @s of level @l now. */
static bool twm_slot_fits(const struct twm *m, u64 e, unsigned int l,
			  unsigned int s)
{
	unsigned int sh = l * TW_LVL_BITS;

	return (e >> sh & TW_LVL_MASK) == s && e > m->w.cur &&
	       e >> (sh + TW_LVL_BITS) == m->w.cur >> (sh + TW_LVL_BITS);
}

/*
 * A slotted node stays in its slot until the slot comes due: its slot
 * matches the deadline it was slotted by (the one it was armed with, or
 * the id's deadline when the wheel last moved it), a tick after cur that
 * agrees with cur above the slot's level.  @moved: the wheel may have
 * re-slotted nodes since the last check, by their ids' deadlines.
 */
static void twm_check_slotted(struct twm *m, unsigned int i, unsigned int l,
			      unsigned int s, bool moved)
{
	struct twm_id *y = &m->ids[i];
	u64 e = twm_exp_tick(m, y->deadline);

	if (twm_slot_fits(m, y->slotted_e, l, s))
		return;
	TWM_CHECK(m, moved && twm_slot_fits(m, e, l, s),
		  "id %u (slotted by %llu, deadline %llu) in slot %u/%u with cur %llu",
		  i, y->slotted, y->deadline, l, s, m->w.cur);
	y->slotted = y->deadline;
	y->slotted_e = e;
}

/*
 * One slot list (@l == TW_LEVELS: the drain list), its nodes added to
 * *@count: each an armed id's, seen once on the wheel, holding its id and
 * data, and every 16th, or every one when all are looked up, its entry's.
 */
static void twm_check_hlist(struct twm *m, const struct hlist_head *h,
			    unsigned int l, unsigned int s, bool moved,
			    unsigned long *count)
{
	struct hlist_node *const *pprev = &h->first;
	const struct hlist_node *hn;

	for (hn = h->first; hn; pprev = &hn->next, hn = hn->next) {
		const struct tw_node *n = hlist_entry(hn, struct tw_node, slot);
		unsigned int i = twm_node_id(m, n, l < TW_LEVELS ? "slot" :
					     "drain");
		const struct twm_id *y = &m->ids[i];
		const struct tw_ent *e;

		TWM_CHECK(m, hn->pprev == pprev,
			  "slot %u/%u: id %u has a stale pprev", l, s, i);
		TWM_CHECK(m, y->state == TWM_ARMED,
			  "slot %u/%u holds id %u, which is %s", l, s, i,
			  twm_state_name[y->state]);
		TWM_CHECK(m, !m->seen[i], "id %u on the wheel twice (%u/%u)",
			  i, l, s);
		m->seen[i] = 1;
		TWM_CHECK(m, n->id == y->id && n->data == y->data,
			  "armed id %u's node holds id %#llx data %#llx", i,
			  n->id, n->data);
		if (l < TW_LEVELS)
			twm_check_slotted(m, i, l, s, moved);
		if (++*count % 16 == 0 || y->touched || m->find_all) {
			e = tw_index_find(&m->x, n->id);
			TWM_CHECK(m, e && e->node == n && !tw_ent_queued(e),
				  "armed id %u: entry %p", i, e);
		}
	}
}

/*
 * Slot lists, drain and pending bits against the model: the nodes of the
 * slots with their pending bit set and of the drain list are the armed
 * ones.  @all: also the pending bits are set exactly for the slots that
 * hold nodes.
 */
static void twm_check_lists(struct twm *m, bool moved, bool all)
{
	unsigned long count = 0;
	unsigned int l, s;

	memset(m->seen, 0, m->nr);
	for (l = 0; l < TW_LEVELS; l++) {
		u64 bits = m->w.pending[l];

		for (s = 0; all && s < TW_LVL_SIZE; s++) {
			bool pending = bits & BIT_ULL(s);

			TWM_CHECK(m, pending != hlist_empty(&m->w.slots[l][s]),
				  "slot %u/%u: pending bit %d, first node %p", l,
				  s, pending, m->w.slots[l][s].first);
		}
		for (; bits; bits &= bits - 1) {
			s = __ffs64(bits);
			twm_check_hlist(m, &m->w.slots[l][s], l, s, moved,
					&count);
		}
	}
	twm_check_hlist(m, &m->w.drain, TW_LEVELS, 0, moved, &count);
	TWM_CHECK(m, count == m->nr_armed,
		  "%lu nodes in pending slots and the drain list, model has %lu armed",
		  count, m->nr_armed);
}

/*
 * Counters, cur and tw_wheel_next(): after each wheel call.  (The nodes,
 * armed and queued, are checked by twm_check_lists() and twm_check_queue().)
 */
static void twm_check_wheel(struct twm *m)
{
	const struct tw_wheel *w = &m->w;
	u64 t, min_e = U64_MAX;
	unsigned int i;
	bool any;

	TWM_CHECK(m, w->nr_armed == m->nr_armed, "nr_armed %lu, model %lu",
		  w->nr_armed, m->nr_armed);
	TWM_CHECK(m, w->nr_ready == m->rq_len, "nr_ready %lu, model %u",
		  w->nr_ready, m->rq_len);
	TWM_CHECK(m, m->nr_present == m->nr_armed + m->rq_len,
		  "model: %lu present, %lu armed, %u queued", m->nr_present,
		  m->nr_armed, m->rq_len);
	TWM_CHECK(m, w->idx == &m->x, "idx %p", w->idx);
	for (i = 0; i < m->nr; i++) {
		const struct twm_id *y = &m->ids[i];

		if (y->state != TWM_ARMED)
			continue;
		TWM_CHECK(m, y->slotted >= y->placed && y->slotted <= y->deadline,
			  "model: id %u slotted by %llu", i, y->slotted);
		min_e = min(min_e, y->slotted_e);
	}
	TWM_CHECK(m, w->cur <= twm_now_tick(m), "cur %llu is past now's tick",
		  w->cur);
	TWM_CHECK(m, w->cur >= m->prev_cur, "cur went back from %llu",
		  m->prev_cur);
	m->prev_cur = w->cur;
	TWM_CHECK(m, w->late_max == m->late_max, "late_max %llu, model %llu",
		  w->late_max, m->late_max);
	any = tw_wheel_next(w, &t);
	TWM_CHECK(m, any == (m->nr_armed > 0),
		  "tw_wheel_next() says %d with %lu armed", any, m->nr_armed);
	if (!any)
		return;
	TWM_CHECK(m, t <= max(min_e, w->cur),
		  "tw_wheel_next() %llu is later than the earliest expiry tick %llu",
		  t, min_e);
	TWM_CHECK(m, t >= w->cur, "tw_wheel_next() %llu is before cur", t);
}

/*
 * tw_index_want_size() as documented: nr + extra above 9/10 grows, below
 * 1/4 shrinks, to 3/4 full.
 */
static unsigned long twm_want(const struct twm *m, unsigned long extra)
{
	u64 want = (u64)m->nr_present + extra;

	if (m->mold)
		return 0;
	if (want * 10 <= (u64)m->msize * 9 &&
	    (m->msize <= TW_IDX_MIN || want * 4 >= m->msize))
		return 0;
	want = max(want * 4 / 3 + 1, (u64)TW_IDX_MIN);
	return want != m->msize ? want : 0;
}

/**
 * twm_table_check() - whether a table is an ordered linear-probing table
 * @x: the index, whose secret makes the keys
 * @t: the table
 * @size: its slots
 * @empty_below: the slots below this one must be empty
 * @why: out: what is wrong, or NULL
 * @slot: out: where, if something is
 *
 * Every entry sits at or after its home with no empty slot in between
 * (each entry is at home, or its predecessor slot holds an entry at most
 * one slot less far from home); in slot order, the entries at or after
 * their home, then those that wrapped past the end (home > slot), have
 * strictly increasing keys.  The index tests of the suite and the model
 * hold every table they see to this.
 *
 * Return: the number of entries.
 */
unsigned long twm_table_check(const struct tw_index *x,
			      const struct tw_ent *t, unsigned long size,
			      unsigned long empty_below,
			      const char **why, unsigned long *slot)
{
	unsigned long p, count = 0, prev_dist = 0, first_wrapped = 0;
	u64 prev[2] = { 0, 0 }, min_wrapped = 0;
	bool any[2] = { false, false }, prev_full = t[size - 1].node;

	*why = NULL;
	if (prev_full)	/* the last slot, as slot 0's predecessor */
		prev_dist = size - 1 - twm_home(tw_key(x, t[size - 1].id), size);
	for (p = 0; p < size && !*why; p++) {
		unsigned long h, dist;
		bool wrapped;
		u64 key;

		if (!t[p].node) {
			prev_full = false;
			continue;
		}
		key = tw_key(x, t[p].id);
		h = twm_home(key, size);
		wrapped = h > p;
		dist = wrapped ? p + size - h : p - h;
		*slot = p;
		if (p < empty_below)
			*why = "an entry below mpos";
		else if (dist && (!prev_full || prev_dist + 1 < dist))
			*why = "away from home, after an empty slot or an entry nearer its home";
		else if (any[wrapped] && key <= prev[wrapped])
			*why = "keys out of order";
		if (wrapped && !any[1]) {
			min_wrapped = key;
			first_wrapped = p;
		}
		prev[wrapped] = key;
		any[wrapped] = true;
		prev_full = true;
		prev_dist = dist;
		count++;
	}
	if (!*why && any[0] && any[1] && min_wrapped <= prev[0]) {
		*why = "a wrapped key below one that did not wrap";
		*slot = first_wrapped;
	}
	return count;
}

/*
 * One table: a valid one (twm_table_check()) holding what the model
 * says, each present id once with its deadline word.  Returns the number
 * of entries.
 */
static unsigned long twm_check_table(struct twm *m, const struct tw_ent *t,
				     unsigned long size,
				     unsigned long empty_below,
				     const char *what)
{
	unsigned long p, count;
	const char *why;

	count = twm_table_check(&m->x, t, size, empty_below, &why, &p);
	TWM_CHECK(m, !why, "index %s slot %lu of %lu (mpos %lu): id %#llx, key %#llx: %s",
		  what, p, size, empty_below, t[p].id, tw_key(&m->x, t[p].id),
		  why);
	for (p = 0; p < size; p++) {
		const struct tw_ent *e = &t[p];
		const struct twm_id *y;
		unsigned int i;

		if (!e->node)
			continue;
		i = twm_node_id(m, e->node, "index entry");
		y = &m->ids[i];
		TWM_CHECK(m, y->state != TWM_ABSENT,
			  "index %s slot %lu holds removed id %u", what, p, i);
		TWM_CHECK(m, e->id == y->id,
			  "index %s slot %lu: id %#llx for id %u (%#llx)", what,
			  p, e->id, i, y->id);
		TWM_CHECK(m, !m->seen[i], "id %u twice in the index", i);
		m->seen[i] = 1;
		TWM_CHECK(m, e->deadline == twm_ent_word(y),
			  "index %s slot %lu: id %u (%s) deadline word %#llx, expected %#llx",
			  what, p, i, twm_state_name[y->state], e->deadline,
			  twm_ent_word(y));
	}
	return count;
}

/* find() of id @i: its entry in either table, or none if it is absent. */
static void twm_check_find(struct twm *m, unsigned int i)
{
	const struct twm_id *y = &m->ids[i];
	struct tw_ent *f = tw_index_find(&m->x, y->id);
	unsigned int j;

	if (y->state != TWM_ABSENT) {
		TWM_CHECK(m, f && f->node == y->node && f->id == y->id,
			  "find(%#llx) of id %u gives %p", y->id, i, f);
		TWM_CHECK(m, (f >= m->mtab && f < m->mtab + m->msize) ||
			  (m->mold && f >= m->mold + m->x.mpos &&
			   f < m->mold + m->mold_size),
			  "find(%#llx) gives %p, in neither table", y->id, f);
	} else if (f) {
		/* a removed id: found only if another id now has it */
		j = twm_node_id(m, f->node, "find");
		TWM_CHECK(m, m->ids[j].state != TWM_ABSENT &&
			  m->ids[j].id == y->id,
			  "find(%#llx) of removed id %u gives id %u", y->id, i,
			  j);
	}
}

/*
 * tw_index_finish_first() as documented: a resize migrates, and the ids
 * with the batch's would fill its new table past 9/10.
 */
static bool twm_finish_first(const struct twm *m, unsigned long ids)
{
	return m->mold && ((u64)m->nr_present + ids) * 10 > (u64)m->msize * 9;
}

/*
 * tw_index_still_wanted() as documented, for a batch of @ids ids and
 * tables of the size asked for and of either side of the 9/10 mark: taken
 * iff a resize is wanted and the table holds the ids at no more than 9/10.
 */
static void twm_check_still_wanted(struct twm *m, unsigned long ids)
{
	u64 need = (u64)m->nr_present + ids;
	unsigned long sizes[3], k;

	sizes[0] = twm_want(m, ids);
	sizes[1] = div64_u64(need * 10 + 8, 9);	/* the least that holds them */
	sizes[2] = sizes[1] ? sizes[1] - 1 : 0;
	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		bool want = twm_want(m, ids) && need * 10 <= (u64)sizes[k] * 9;

		TWM_CHECK(m, tw_index_still_wanted(&m->x, ids, sizes[k]) == want,
			  "still_wanted(%lu, %lu) %d (nr %lu, size %lu%s)", ids,
			  sizes[k], !want, m->nr_present, m->msize,
			  m->mold ? ", resizing" : "");
	}
}

static void twm_check_index(struct twm *m)
{
	static const unsigned long extras[] = { 0, 1, 16, 64, 129 };
	const struct tw_index *x = &m->x;
	unsigned long nr_tab, nr_old = 0, k;
	unsigned int i;

	TWM_CHECK(m, x->tab == m->mtab && x->size == m->msize,
		  "index table %p/%lu, expected %p/%lu", x->tab, x->size,
		  m->mtab, m->msize);
	TWM_CHECK(m, x->old == m->mold, "index old table %p, expected %p",
		  x->old, m->mold);
	TWM_CHECK(m, !m->mold || x->old_size == m->mold_size,
		  "index old table of %lu slots, expected %lu", x->old_size,
		  m->mold_size);
	TWM_CHECK(m, m->mold || !x->nr_old, "nr_old %lu with no old table",
		  x->nr_old);
	TWM_CHECK(m, x->nr == m->nr_present, "index nr %lu, model %lu", x->nr,
		  m->nr_present);
	TWM_CHECK(m, x->nr == x->nr_tab + x->nr_old, "index nr %lu != %lu + %lu",
		  x->nr, x->nr_tab, x->nr_old);
	TWM_CHECK(m, !m->mold || x->mpos <= m->mold_size, "mpos %lu past %lu",
		  x->mpos, m->mold_size);
	memset(m->seen, 0, m->nr);
	nr_tab = twm_check_table(m, m->mtab, m->msize, 0, "new");
	if (m->mold)
		nr_old = twm_check_table(m, m->mold, m->mold_size, x->mpos,
					 "old");
	TWM_CHECK(m, nr_tab == x->nr_tab && nr_old == x->nr_old,
		  "index tables hold %lu + %lu entries, nr_tab %lu nr_old %lu",
		  nr_tab, nr_old, x->nr_tab, x->nr_old);
	TWM_CHECK(m, nr_tab + nr_old == m->nr_present,
		  "index holds %lu ids, model %lu", nr_tab + nr_old,
		  m->nr_present);
	TWM_CHECK(m, tw_index_room(x) ==
		  (nr_tab + nr_old < m->msize - m->msize / 16),
		  "room() %d with %lu + %lu ids for %lu slots", tw_index_room(x),
		  nr_tab, nr_old, m->msize);
	/*
	 * find() of every id after index surgery and every find_every
	 * operations; else of the ids the operation touched and a few
	 * others (the table walk above already places every entry).
	 */
	for (i = 0; i < m->nr; i++) {
		if (m->find_all || m->ids[i].touched ||
		    (i * 37 + m->op_no) % 64 == 0)
			twm_check_find(m, i);
		m->ids[i].touched = false;
	}
	for (k = 0; k < ARRAY_SIZE(extras); k++) {
		TWM_CHECK(m, tw_index_want_size(x, extras[k]) ==
			  twm_want(m, extras[k]),
			  "want_size(%lu) %lu, expected %lu (nr %lu, size %lu%s)",
			  extras[k], tw_index_want_size(x, extras[k]),
			  twm_want(m, extras[k]), m->nr_present, m->msize,
			  m->mold ? ", resizing" : "");
		TWM_CHECK(m, tw_index_finish_first(x, extras[k]) ==
			  twm_finish_first(m, extras[k]),
			  "finish_first(%lu) %d (nr %lu, size %lu%s)",
			  extras[k], tw_index_finish_first(x, extras[k]),
			  m->nr_present, m->msize,
			  m->mold ? ", resizing" : "");
		twm_check_still_wanted(m, extras[k]);
	}
}

/**
 * twm_check() - the wheel, its queue and its index against the model
 * @m: the model
 *
 * After every operation; every id is looked up every @m->find_every
 * operations and after index surgery.
 */
void twm_check(struct twm *m)
{
	m->find_all |= m->op_no % m->find_every == 0;
	twm_check_queue(m);
	twm_check_lists(m, false, true);
	twm_check_wheel(m);
	twm_check_index(m);
	m->find_all = false;
}

/* ------------------------------------------------------------ the wheel */

/*
 * After an advance from cur @cur0 that queued events from @p on: each
 * the event of an armed id whose tick is reached, written into the
 * sentinel of its time, with the clock and its data, in the order of
 * their ticks (those due by @cur0 count as @cur0: the drain list comes
 * first, in any order).  They join the model's queue.
 */
static void twm_took(struct twm *m, const struct tw_node *p, u64 cur0)
{
	u64 nt = twm_now_tick(m), prev = 0;

	for (; p != m->w.tail; p = p->next) {
		struct twm_id *y;
		struct tw_ent *f;
		unsigned int i;
		u64 e;

		TWM_CHECK(m, p && m->rq_len < m->nr, "ready queue loops or ends");
		TWM_CHECK(m, p == m->rqn[m->rq_len],
			  "new event %u in node %p, not in the sentinel %p",
			  m->rq_len, p, m->rqn[m->rq_len]);
		/* the node after an event's: the expired id's own */
		i = twm_node_id(m, p->next, "expired node");
		y = &m->ids[i];
		TWM_CHECK(m, y->state == TWM_ARMED, "id %u expired while %s", i,
			  twm_state_name[y->state]);
		TWM_CHECK(m, p->id == y->id && p->data == y->data,
			  "event of id %u: id %#llx data %#llx", i, p->id,
			  p->data);
		e = twm_exp_tick(m, y->deadline);
		TWM_CHECK(m, y->deadline <= m->now,
			  "id %u expired early: deadline %llu > now by %llu", i,
			  y->deadline, y->deadline - m->now);
		TWM_CHECK(m, e <= m->w.cur && e <= nt,
			  "id %u expired before its tick: tick %llu > cur %llu (now's %llu)",
			  i, e, m->w.cur, nt);
		TWM_CHECK(m, p->expired == max(m->now, 1ULL),
			  "id %u: expired stamp %llu, expected %llu", i,
			  p->expired, max(m->now, 1ULL));
		f = tw_index_find(&m->x, y->id);
		TWM_CHECK(m, f && f->node == p && tw_ent_queued(f) &&
			  tw_ent_deadline(f) == y->deadline,
			  "expired id %u: entry %p node %p deadline word %#llx",
			  i, f, f ? f->node : NULL, f ? f->deadline : 0);
		/* those due by the advance's start come first, in any order */
		TWM_CHECK(m, prev <= max(e, cur0),
			  "out of order in one advance: id %u tick %llu after %llu",
			  i, e, prev);
		prev = max(e, cur0);
		if (y->future) {
			TWM_CHECK(m, !m->last_e_set || e >= m->last_e,
				  "out of order: id %u tick %llu after tick %llu",
				  i, e, m->last_e);
			m->last_e = e;
			m->last_e_set = true;
		}
		m->late_max = max(m->late_max, m->now - y->deadline);
		twm_model_expire(m, i);
		m->nr_armed--;
		m->count[TWM_EXPIRED]++;
		twm_trace(m, "  expired id %u deadline %llu tick %llu%s", i,
			  y->deadline, e, y->future ? "" : " (armed overdue)");
	}
}

/**
 * twm_advance_once() - one tw_wheel_advance() call, checked
 * @m: the model
 * @budget: its budget
 *
 * Return: what the call returned: true if work is still due.
 */
bool twm_advance_once(struct twm *m, unsigned int budget)
{
	unsigned int before = budget, k, queued = m->rq_len;
	u64 nt = twm_now_tick(m), t, reslots = m->w.reslots, cur0 = m->w.cur;
	const struct tw_node *p, *first = m->w.tail;
	unsigned int i;
	bool more, due;

	more = tw_wheel_advance(&m->w, m->now, &budget);
	m->count[TWM_ADVANCE]++;
	TWM_CHECK(m, budget <= before, "advance raised the budget %u -> %u",
		  before, budget);
	TWM_CHECK(m, m->w.reslots >= reslots, "reslots went back");
	/*
	 * The queue up to the former sentinel is unchanged; the new events
	 * follow, the first one in the former sentinel, each one's node the
	 * expired node of the one before (as the module traces them).
	 */
	for (k = 0, p = m->w.head; k < queued; k++, p = p->next)
		TWM_CHECK(m, p && p == m->rqn[k],
			  "advance changed the ready queue at %u", k);
	TWM_CHECK(m, p == first,
		  "the first new event is in %p, not in the former sentinel %p",
		  p, first);
	twm_took(m, p, cur0);
	TWM_CHECK(m, m->w.tail == m->rqn[m->rq_len], "sentinel %p, model %p",
		  m->w.tail, m->rqn[m->rq_len]);
	TWM_CHECK(m, before - budget == (m->rq_len - queued) +
		  (m->w.reslots - reslots),
		  "advance used %u of its budget %u but moved %u nodes (%u expired, %llu re-slotted)",
		  before - budget, before,
		  (unsigned int)(m->rq_len - queued + (m->w.reslots - reslots)),
		  m->rq_len - queued, m->w.reslots - reslots);
	m->count[TWM_RESLOT] += m->w.reslots - reslots;
	TWM_CHECK(m, !more || !budget,
		  "advance returned true with budget %u left", budget);
	due = tw_wheel_next(&m->w, &t) && t <= nt;
	TWM_CHECK(m, more == due, "advance returned %d but work due is %d",
		  more, due);
	for (i = 0; !more && i < m->nr; i++)
		TWM_CHECK(m, m->ids[i].state != TWM_ARMED ||
			  twm_exp_tick(m, m->ids[i].deadline) > nt,
			  "late: id %u (deadline %llu, tick %llu) still armed after a full advance to tick %llu",
			  i, m->ids[i].deadline,
			  twm_exp_tick(m, m->ids[i].deadline), nt);
	/* the nodes it re-slotted, by their ids' deadlines */
	if (m->w.reslots != reslots)
		twm_check_lists(m, true, false);
	twm_check_wheel(m);	/* queue and index: after the operation */
	return more;
}

/**
 * twm_advance_full() - advance until nothing is due
 * @m: the model
 * @b: picks a pattern of budgets the calls cycle through
 */
void twm_advance_full(struct twm *m, u8 b)
{
	unsigned long calls = 0;
	unsigned int budget;

	do {
		if (b >= 224)
			budget = 1U << 20;
		else
			budget = 1 + (b * 7 + calls * 13) % (1 + b % 17);
		TWM_CHECK(m, ++calls < TWM_ADVANCE_CALLS,
			  "advance does not finish");
	} while (twm_advance_once(m, budget));
	twm_trace(m, "  full advance in %lu calls", calls);
}

/**
 * twm_catch_up() - tw_wheel_catch_up() to now, checked
 * @m: the model
 */
void twm_catch_up(struct twm *m)
{
	tw_wheel_catch_up(&m->w, m->now);
	twm_check_wheel(m);
}

/* The entry of present id @i, as the module finds it: by id. */
static struct tw_ent *twm_find_ent(struct twm *m, unsigned int i,
				   const char *where)
{
	const struct twm_id *y = &m->ids[i];
	struct tw_ent *e = tw_index_find(&m->x, y->id);

	TWM_CHECK(m, e && e->node == y->node && e->id == y->id,
		  "%s: find(%#llx) of id %u gives %p (node %p, model %p)",
		  where, y->id, i, e, e ? e->node : NULL, y->node);
	TWM_CHECK(m, tw_ent_queued(e) == (y->state == TWM_QUEUED),
		  "%s: id %u is %s but its entry's deadline word is %#llx",
		  where, i, twm_state_name[y->state], e->deadline);
	return e;
}

enum { TWM_BY_TOUCH, TWM_BY_CANCEL };

/*
 * The model of taking id @i off the wheel, or of discarding its event,
 * for a touch or a cancel (@by).  Returns the node that holds the id now,
 * on no list: its own, or the one after its event's (tw_wheel_discard()).
 */
static struct tw_node *twm_model_detach(struct twm *m, unsigned int i,
					int by)
{
	unsigned int k;

	if (m->ids[i].state != TWM_QUEUED) {
		m->nr_armed--;
		m->count[TWM_DEL_TOUCH + by]++;
		return m->ids[i].node;
	}
	k = twm_rq_pos(m, i);
	m->count[TWM_DISCARD_TOUCH + by]++;
	m->count[m->rq_len == 1 ? TWM_ONLY : !k ? TWM_HEAD :
		 k + 1 < m->rq_len ? TWM_MIDDLE : TWM_LAST]++;
	twm_trace(m, "  discard event %u of %u", k, m->rq_len);
	return twm_model_discard(m, i);
}

/*
 * Take id @i off the wheel, or discard its event, for a touch or a cancel
 * (@by): as the device, tw_wheel_detach(), which must say whether it
 * discarded an event; @raw: tw_wheel_del() or tw_wheel_discard(), which
 * must hand back the node after the event's.  Afterwards its entry's
 * node, holding its id and data, is on no list.
 */
static void twm_detach(struct twm *m, unsigned int i, struct tw_ent *e, int by,
		       bool raw)
{
	const struct twm_id *y = &m->ids[i];
	bool queued = y->state == TWM_QUEUED, did = queued;
	unsigned int k = queued ? twm_rq_pos(m, i) : 0;
	struct tw_node *ret = NULL, *n;

	if (!raw)
		did = tw_wheel_detach(&m->w, e);
	else if (queued)
		ret = tw_wheel_discard(&m->w, e);
	else
		tw_wheel_del(&m->w, e->node);
	TWM_CHECK(m, did == queued, "detach of id %u (%s) %s", i,
		  twm_state_name[y->state],
		  did ? "discarded an event" : "discarded nothing");
	n = twm_model_detach(m, i, by);
	TWM_CHECK(m, !raw || !queued || ret == n,
		  "discard of id %u (event %u of %u) returned %p, expected %p",
		  i, k, m->rq_len + 1, ret, n);
	TWM_CHECK(m, e->node == n && !tw_ent_queued(e) &&
		  tw_ent_deadline(e) == y->deadline,
		  "detach of id %u: entry's node %p (model %p), deadline word %#llx",
		  i, e->node, n, e->deadline);
	TWM_CHECK(m, n->id == y->id && n->data == y->data,
		  "detach of id %u: the node holds id %#llx data %#llx", i,
		  n->id, n->data);
	TWM_CHECK(m, m->w.nr_ready == m->rq_len &&
		  m->w.tail == m->rqn[m->rq_len] &&
		  m->w.nr_armed == m->nr_armed,
		  "detach: nr_ready %lu (model %u), sentinel %p (model %p), nr_armed %lu (model %lu)",
		  m->w.nr_ready, m->rq_len, m->w.tail, m->rqn[m->rq_len],
		  m->w.nr_armed, m->nr_armed);
}

/*
 * The model of placing id @i, whose node is on no list, at deadline @d:
 * its event queued at once (@expired), else its node armed; then @e, the
 * id's entry, checked against it.
 */
static void twm_model_place(struct twm *m, unsigned int i, struct tw_ent *e,
			    u64 d, bool expired)
{
	struct twm_id *y = &m->ids[i];
	struct tw_node *s = m->rqn[m->rq_len];

	y->deadline = d;
	y->placed = d;
	if (expired) {
		twm_model_expire(m, i);
		TWM_CHECK(m, e->node == s && m->w.tail == m->rqn[m->rq_len] &&
			  tw_ent_queued(e) && tw_ent_deadline(e) == d,
			  "expire of id %u: entry's node %p (sentinel was %p), sentinel %p (model %p), deadline word %#llx",
			  i, e->node, s, m->w.tail, m->rqn[m->rq_len],
			  e->deadline);
		TWM_CHECK(m, s->id == y->id && s->data == y->data &&
			  s->expired == y->stamp && m->w.nr_ready == m->rq_len,
			  "expire of id %u: event of id %#llx data %#llx at %llu, nr_ready %lu (model %u)",
			  i, s->id, s->data, s->expired, m->w.nr_ready,
			  m->rq_len);
		m->count[TWM_AT_ONCE]++;
		return;
	}
	y->state = TWM_ARMED;
	y->slotted = d;
	y->slotted_e = twm_exp_tick(m, d);
	y->future = d > m->now;
	m->count[TWM_ADD_DUE] += y->slotted_e <= m->w.cur;
	m->nr_armed++;
	TWM_CHECK(m, e->node == y->node && e->deadline == d &&
		  m->w.nr_armed == m->nr_armed,
		  "arm of id %u: entry's node %p (model %p), deadline word %#llx, nr_armed %lu (model %lu)",
		  i, e->node, y->node, e->deadline, m->w.nr_armed,
		  m->nr_armed);
	TWM_CHECK(m, y->node->id == y->id && y->node->data == y->data &&
		  m->w.nr_ready == m->rq_len && m->w.tail == m->rqn[m->rq_len],
		  "arm of id %u: the node holds id %#llx data %#llx; nr_ready %lu (model %u), sentinel %p (model %p)",
		  i, y->node->id, y->node->data, m->w.nr_ready, m->rq_len,
		  m->w.tail, m->rqn[m->rq_len]);
}

/*
 * Give id @i, whose node is on no list and @e's, deadline @d: as the
 * device, tw_wheel_place(), which must say whether it queued the event
 * at once (the deadline is due) or armed the node; @raw: tw_wheel_add(),
 * armed through the wheel even when due.
 */
static void twm_place(struct twm *m, unsigned int i, struct tw_ent *e, u64 d,
		      bool raw)
{
	bool expired = !raw && d <= m->now;
	unsigned int did = 0;

	if (raw) {
		e->deadline = d;
		tw_wheel_add(&m->w, e->node, d);
	} else {
		did = tw_wheel_place(&m->w, e, d, m->now);
	}
	TWM_CHECK(m, did == (expired ? TW_SET_EXPIRED : 0U),
		  "place of id %u at %llu (now %llu) says %#x", i, d, m->now,
		  did);
	twm_model_place(m, i, e, d, expired);
}

/* ------------------------------------------------------------ the index */

/**
 * twm_gen_id() - a new id for id @i, unused by the others
 * @m: the model
 * @i: the id's index in the model
 *
 * Small and dense ids, ids shifted high, random ones, and ids whose keys
 * crowd the index: the other key of another id's cell, keys near
 * another's, keys at the ends of the key space, homes chosen.
 *
 * Return: the id.
 */
static u64 twm_gen_id(struct twm *m, unsigned int i)
{
	static const u64 ends[] = { 0, 1, 2, 3, ~0ULL, ~0ULL - 1, 1ULL << 63,
				    (1ULL << 63) - 1, (1ULL << 63) + 1,
				    1ULL << 62 };
	unsigned int mode = twm_u8(m) % 8, j;
	u64 id = 0, a;

	switch (mode) {
	case 0:
		id = i;
		break;
	case 1:
		id = (u64)i << 40;
		break;
	case 2:
		id = twm_bytes(m, 8);
		break;
	case 3:	/* the other key of another id's cell */
	case 4:	/* a key near another id's, often next to it in a table */
		j = twm_pick(m);
		if (m->ids[j].state == TWM_ABSENT) {
			id = twm_bytes(m, 2);
			break;
		}
		a = 1;
		if (mode == 4) {
			a = twm_u8(m);
			a <<= twm_u8(m) % 56;
		}
		id = tw_key_id(&m->x, tw_key(&m->x, m->ids[j].id) ^ a);
		break;
	case 5:	/* keys at the ends of the key space */
		id = tw_key_id(&m->x, ends[twm_u8(m) % ARRAY_SIZE(ends)]);
		break;
	case 6:	/* home slot region and low bits chosen */
		a = twm_u8(m);
		id = tw_key_id(&m->x, a << 56 | twm_bytes(m, 1));
		break;
	default:
		a = twm_bytes(m, 1);
		id = a + ((u64)twm_u8(m) << 32);
		break;
	}
	while (twm_id_used(m, id, i))
		id = id * 3 + 1;
	return id;
}

static void twm_start_resize(struct twm *m, unsigned long size)
{
	struct tw_ent *tab = twm_zalloc(m, size * sizeof(*tab));

	twm_trace(m, "  resize %lu -> %lu slots", m->msize, size);
	m->count[size > m->msize ? TWM_GROW : TWM_SHRINK]++;
	if (m->offer_ids != ~0UL) {
		/* a table tw_index_upkeep() asked for: offered, and taken */
		TWM_CHECK(m, tw_index_offer(&m->x, m->offer_ids, tab, size),
			  "offer of %lu slots for %lu ids let go", size,
			  m->offer_ids);
		m->offer_ids = ~0UL;
	} else {
		tw_index_start_resize(&m->x, tab, size);
	}
	m->find_all = true;
	m->mold = m->mtab;
	m->mold_size = m->msize;
	m->mtab = tab;
	m->msize = size;
	TWM_CHECK(m, !m->x.nr_tab && m->x.nr_old == m->nr_present && !m->x.mpos,
		  "start_resize: nr_tab %lu nr_old %lu mpos %lu", m->x.nr_tab,
		  m->x.nr_old, m->x.mpos);
	TWM_CHECK(m, !tw_index_want_size(&m->x, 0) &&
		  !tw_index_want_size(&m->x, 1000000),
		  "want_size() while resizing");
}

/**
 * twm_resize() - resize the index to any size, if it is not resizing
 * @m: the model
 * @size: at least TW_IDX_MIN, with room for the ids (tw_index_room())
 */
void twm_resize(struct twm *m, unsigned long size)
{
	twm_trace(m, "resize to %lu%s", size, m->mold ? " (busy)" : "");
	if (m->mold)
		return;
	m->count[TWM_RESIZE]++;
	twm_start_resize(m, size);
}

/*
 * A migration step of @entries entries, from an old table that held
 * @nr_old entries with its cursor at @mpos, returned @ret.
 */
static void twm_migrated(struct twm *m, struct tw_ent *ret,
			 unsigned long entries, unsigned long nr_old,
			 unsigned long mpos)
{
	struct tw_index *x = &m->x;
	unsigned long moved;

	m->find_all = true;
	if (!m->mold) {
		TWM_CHECK(m, !ret, "migrate returned a table while not resizing");
		return;
	}
	TWM_CHECK(m, x->nr_old <= nr_old, "migrate added to the old table");
	moved = nr_old - x->nr_old;
	TWM_CHECK(m, moved <= entries, "migrate moved %lu of %lu entries",
		  moved, entries);
	TWM_CHECK(m, x->nr == m->nr_present &&
		  x->nr_tab == m->nr_present - x->nr_old,
		  "migrate: nr %lu nr_tab %lu nr_old %lu, %lu present", x->nr,
		  x->nr_tab, x->nr_old, m->nr_present);
	twm_trace(m, "  migrate %lu: moved %lu, mpos %lu -> %lu", entries,
		  moved, mpos, x->mpos);
	if (ret) {
		TWM_CHECK(m, ret == m->mold && !x->old && !x->nr_old,
			  "migrate returned %p (old %p, nr_old %lu), not %p",
			  ret, x->old, x->nr_old, m->mold);
		m->hooks->free(m->ctx, ret);
		m->mold = NULL;
		m->mold_size = 0;
		twm_trace(m, "  resize done");
		return;
	}
	TWM_CHECK(m, x->old == m->mold,
		  "migrate dropped the old table without returning it");
	TWM_CHECK(m, x->mpos >= mpos, "migrate moved mpos back %lu -> %lu",
		  mpos, x->mpos);
	/* it stops only when out of entries or out of empty slots to pass */
	TWM_CHECK(m, moved == entries || x->mpos - mpos == entries * 16,
		  "migrate of %lu stopped after %lu entries and %lu empty slots with %lu entries left",
		  entries, moved, x->mpos - mpos, x->nr_old);
}

/**
 * twm_migrate() - tw_index_migrate(), checked
 * @m: the model
 * @entries: how many entries it may move
 */
void twm_migrate(struct twm *m, unsigned long entries)
{
	unsigned long nr_old = m->x.nr_old, mpos = m->x.mpos;

	twm_migrated(m, tw_index_migrate(&m->x, entries), entries, nr_old,
		     mpos);
}

/**
 * twm_maintain() - the resize asked for, and a migration step of any size
 * @m: the model
 * @extra: ids the batch may add
 * @entries: entries to migrate
 *
 * The resize tw_index_want_size() asks for, started; some entries
 * migrated.
 */
void twm_maintain(struct twm *m, unsigned long extra,
		  unsigned long entries)
{
	unsigned long size = tw_index_want_size(&m->x, extra);

	twm_trace(m, "maintain %lu (want %lu)", extra, size);
	if (size)
		twm_start_resize(m, size);
	twm_migrate(m, entries);
}

/**
 * twm_maintain_batch() - the device's upkeep before a batch of ids
 * @m: the model
 * @ids: ids the batch may add
 *
 * As tw_maintain(), by the core's protocol (tw_index_upkeep()), each step
 * checked against the model's: a resize that the batch would overfill
 * finished first, TW_HOLD_NODES entries a step, while
 * tw_index_finish_first() says so; the resize tw_index_want_size() asks
 * for started, through tw_index_offer(); the batch's share migrated
 * (tw_index_migrate_batch()).
 */
void twm_maintain_batch(struct twm *m, unsigned long ids)
{
	static const char *const name[] = { "done", "migrated", "alloc" };

	for (;;) {
		unsigned long nr_old = m->x.nr_old, mpos = m->x.mpos, size = 0;
		bool first = twm_finish_first(m, ids);
		unsigned long want = first ? 0 : twm_want(m, ids);
		int expect = first ? TW_UPKEEP_MIGRATED :
			     want ? TW_UPKEEP_ALLOC : TW_UPKEEP_DONE;
		struct tw_ent *old;
		int step = tw_index_upkeep(&m->x, ids, &size, &old);

		TWM_CHECK(m, step == expect &&
			  (step != TW_UPKEEP_ALLOC || size == want),
			  "upkeep(%lu): %s (%lu slots), expected %s (%lu) with %lu ids in %lu slots%s",
			  ids, name[step % 3], size, name[expect], want,
			  m->nr_present, m->msize, m->mold ? ", resizing" : "");
		if (step == TW_UPKEEP_MIGRATED) {
			twm_trace(m, "  finish the resize first");
			twm_migrated(m, old, TW_HOLD_NODES, nr_old, mpos);
		} else if (step == TW_UPKEEP_ALLOC) {
			twm_trace(m, "maintain batch %lu (want %lu)", ids, size);
			m->offer_ids = ids;
			twm_start_resize(m, size);
		} else {
			twm_migrated(m, old, (ids + 1) * TW_MIGRATE_PER_ID, nr_old,
				     mpos);
			break;
		}
	}
}

/*
 * Room for one more id: the table new ids go to has room (room()), and
 * would still have it with every entry of the old table migrated into it;
 * else a later migrate would find the new table full.  Finish the resize,
 * or start one, until there is.
 */
static void twm_make_room(struct twm *m)
{
	struct tw_index *x = &m->x;

	while (!tw_index_room(x) || x->nr >= x->size - x->size / 16) {
		unsigned long size;

		twm_trace(m, "  no room: nr %lu (tab %lu) in %lu slots%s",
			  x->nr, x->nr_tab, x->size,
			  m->mold ? ", resizing" : "");
		if (m->mold) {
			twm_migrate(m, ~0UL);
			continue;
		}
		size = tw_index_want_size(x, 1);
		TWM_CHECK(m, size > x->size,
			  "no room for an id in %lu slots, but want_size(1) is %lu",
			  x->size, size);
		twm_start_resize(m, size);
	}
}

/* A new id for absent id @i, as tw_node_new(): the entry, to be placed. */
static struct tw_ent *twm_create(struct twm *m, unsigned int i)
{
	struct twm_id *y = &m->ids[i];
	struct tw_ent *e;

	twm_make_room(m);
	y->id = twm_gen_id(m, i);
	y->data = 0;
	y->node = twm_node_alloc(m, y->id, i);
	y->deadline = 0;
	e = tw_index_insert(&m->x, y->node, 0);
	TWM_CHECK(m, e && e->node == y->node && e->id == y->id && !e->deadline,
		  "insert of id %u: entry %p", i, e);
	TWM_CHECK(m, tw_index_find(&m->x, y->id) == e,
		  "find of a new id is not its entry");
	TWM_CHECK(m, e >= m->mtab && e < m->mtab + m->msize,
		  "new id not in the new table");
	m->nr_present++;
	m->count[TWM_NEW]++;
	y->touched = true;
	y->stable = false;
	y->listed = 0;
	return e;
}

/* Id @i is absent now: its entry removed, its node @n freed. */
static void twm_gone(struct twm *m, unsigned int i, struct tw_ent *e,
		     struct tw_node *n)
{
	struct twm_id *y = &m->ids[i];

	tw_index_remove(&m->x, e);
	twm_node_free(m, n);
	y->node = NULL;
	y->state = TWM_ABSENT;
	y->touched = true;
	y->stable = false;
	m->nr_present--;
}

/**
 * twm_cancel() - cancel id @i, if present, as the device does
 * @m: the model
 * @i: the id
 *
 * Taken off the wheel or its event discarded, its entry removed, its node
 * freed.
 */
void twm_cancel(struct twm *m, unsigned int i)
{
	struct tw_ent *e;

	twm_trace(m, "cancel id %u (%s)", i, twm_state_name[m->ids[i].state]);
	if (m->ids[i].state == TWM_ABSENT)
		return;
	e = twm_find_ent(m, i, "cancel");
	twm_detach(m, i, e, TWM_BY_CANCEL, false);
	TWM_CHECK(m, e->node == m->ids[i].node,
		  "cancel of id %u: entry's node %p, model %p", i, e->node,
		  m->ids[i].node);
	twm_gone(m, i, e, e->node);
	TWM_CHECK(m, !tw_index_find(&m->x, m->ids[i].id),
		  "removed id %#llx still found", m->ids[i].id);
	m->count[TWM_CANCEL]++;
}

/* ----------------------------------------------------------------- dump */

/**
 * twm_dump_begin() - start a dump, from a cursor the input picks
 * @m: the model
 */
void twm_dump_begin(struct twm *m)
{
	unsigned int mode = twm_u8(m) % 6, i, j;
	u64 c = 0;

	switch (mode) {
	case 1:
		c = twm_bytes(m, 8) >> 1;
		break;
	case 2:
		j = twm_pick(m);
		c = m->ids[j].state != TWM_ABSENT ?
		    tw_key(&m->x, m->ids[j].id) >> 1 : 0;
		i = twm_u8(m) % 3;
		if (i == 1 && c + 1 < TW_CURSOR_END)
			c += TW_CURSOR_END + 1;	/* the cell's odd key */
		else if (i == 2)
			c++;
		break;
	case 3:		/* the last cells, even and odd keys */
		c = TW_CURSOR_END - 1 - twm_u8(m) % 2;
		c += twm_u8(m) % 2 ? 0 : TW_CURSOR_END + 1;
		if (c == 2 * TW_CURSOR_END)
			c = U64_MAX;
		break;
	case 4:
		c = twm_u8(m) == 255 ? TW_CURSOR_END : (u64)twm_u8(m) << 55;
		break;
	default:
		break;
	}
	m->dump_on = true;
	m->dump_cursor = c;
	m->dump_any = false;
	for (i = 0; i < m->nr; i++) {
		struct twm_id *y = &m->ids[i];

		y->listed = 0;
		y->stable = y->state != TWM_ABSENT && c != TW_CURSOR_END &&
			    tw_key(&m->x, y->id) >= tw_cursor_key(c);
	}
	twm_trace(m, "  dump from cursor %#llx", c);
}

/* The entries one dump call stored, against the model. */
static void twm_dump_listed(struct twm *m, const struct tw_ent *out,
			    unsigned long nr, u64 c0, u64 c1)
{
	unsigned long j;

	memset(m->seen, 0, m->nr);
	for (j = 0; j < nr; j++) {
		unsigned int i = twm_node_id(m, out[j].node, "dump");
		struct twm_id *y = &m->ids[i];
		u64 key = tw_key(&m->x, y->id);

		TWM_CHECK(m, y->state != TWM_ABSENT, "dump listed removed id %u",
			  i);
		TWM_CHECK(m, out[j].id == y->id &&
			  out[j].deadline == twm_ent_word(y),
			  "dump entry of id %u: id %#llx deadline word %#llx",
			  i, out[j].id, out[j].deadline);
		TWM_CHECK(m, !m->dump_any || key > m->dump_last_key,
			  "dump out of key order: id %u key %#llx after %#llx",
			  i, key, m->dump_last_key);
		TWM_CHECK(m, key >= tw_cursor_key(c0) && tw_cursor_passed(c1, key),
			  "dump listed id %u (key %#llx) outside cursors [%#llx, %#llx)",
			  i, key, c0, c1);
		m->dump_last_key = key;
		m->dump_any = true;
		y->listed++;
		m->seen[i] = 1;
	}
}

/* After a dump call from @c0 to @c1: every id it passed over is listed. */
static void twm_dump_passed(struct twm *m, unsigned long nr, u64 c0, u64 c1,
			    unsigned long room, unsigned long budget)
{
	unsigned int i, pair = 0;

	for (i = 0; i < m->nr; i++) {
		const struct twm_id *y = &m->ids[i];
		u64 key = tw_key(&m->x, y->id);

		if (y->state == TWM_ABSENT)
			continue;
		pair += key >> 1 == c1;
		if (c0 == TW_CURSOR_END || key < tw_cursor_key(c0) ||
		    !tw_cursor_passed(c1, key))
			continue;
		TWM_CHECK(m, m->seen[i],
			  "dump passed key %#llx but did not list id %u", key,
			  i);
	}
	TWM_CHECK(m, nr || c1 == TW_CURSOR_END || !budget ||
		  (room == 1 && pair == 2 && c1 == TW_CURSOR_END - 1),
		  "dump returned 0 with budget left at cursor %#llx (room %lu, %u ids in the cell)",
		  c1, room, pair);
	if (c1 != TW_CURSOR_END)
		return;
	for (i = 0; i < m->nr; i++) {
		TWM_CHECK(m, !m->ids[i].stable || m->ids[i].listed == 1,
			  "finished dump listed id %u (present throughout) %u times",
			  i, m->ids[i].listed);
		TWM_CHECK(m, m->ids[i].listed <= 1, "dump listed id %u %u times",
			  i, m->ids[i].listed);
	}
	m->dump_on = false;
	twm_trace(m, "  dump finished");
}

/**
 * twm_dump_step() - one tw_index_dump() call, room and budget from the input
 * @m: the model
 *
 * Starts a dump if none is in progress.
 */
void twm_dump_step(struct twm *m)
{
	u8 rb = twm_u8(m), bb = twm_u8(m);
	unsigned long room = 1 + rb % 9;
	unsigned long budget = bb >= 250 ? ~0UL : 1UL + bb % 64, b0 = budget, nr;
	struct tw_ent *out;
	u64 c0, c1;

	if (!m->dump_on)
		twm_dump_begin(m);
	c0 = m->dump_cursor;
	out = twm_zalloc(m, room * sizeof(*out));	/* exact: overruns seen */
	nr = tw_index_dump(&m->x, &m->dump_cursor, out, room, &budget);
	c1 = m->dump_cursor;
	m->count[TWM_DUMP]++;
	twm_trace(m, "  dump room %lu budget %lu: %lu ids, cursor %#llx -> %#llx budget %lu",
		  room, b0, nr, c0, c1, budget);
	TWM_CHECK(m, nr <= room, "dump stored %lu into room %lu", nr, room);
	TWM_CHECK(m, budget <= b0, "dump raised the budget");
	TWM_CHECK(m, c0 == TW_CURSOR_END ? c1 == c0 :
		  c1 == c0 || tw_cursor_passed(c1, tw_cursor_key(c0)),
		  "dump cursor went %#llx -> %#llx", c0, c1);
	/*
	 * Every call makes progress, even one that runs out of budget (it
	 * goes on until it can move the cursor) or has room for one entry
	 * and two in the next cell (it lists the even key alone), but for
	 * that pair in the last cell; an unlimited budget never runs out.
	 */
	TWM_CHECK(m, c0 == TW_CURSOR_END || c1 != c0 ||
		  (room == 1 && c0 == TW_CURSOR_END - 1),
		  "dump made no progress at %#llx with room %lu, budget %lu left",
		  c0, room, budget);
	TWM_CHECK(m, b0 != ~0UL || budget, "dump ran out of an unlimited budget");
	twm_dump_listed(m, out, nr, c0, c1);
	m->hooks->free(m->ctx, out);
	twm_dump_passed(m, nr, c0, c1, room, budget);
}

/* ---------------------------------------------------------- operations */

/*
 * The data a touch carries, or none (*@has false): one byte, mixed with a
 * count of touches so that no two touches carry the same.
 */
static u64 twm_gen_data(struct twm *m, bool *has)
{
	u8 b = twm_u8(m);

	*has = b >= 64;
	return (++m->data_seq << 8 | b) * TWM_GAMMA;
}

/**
 * twm_gen_deadline() - a deadline, picked by the input
 * @m: the model
 *
 * Within a few ticks; at the scale of any level; the end of time; on a
 * tick or a slot boundary or next to one; already due; random; tied with
 * another id's; the last reachable tick boundary or past it; far.
 *
 * Return: the deadline, at most TWM_KMAX.
 */
u64 twm_gen_deadline(struct twm *m)
{
	u64 nt = twm_now_tick(m), now = m->now, tick = m->tick, d = now, a;
	unsigned int l, j;
	int off;

	/* one byte per expression: the order of reads must be defined */
	switch (twm_u8(m) % 10) {
	case 0:		/* within a few ticks */
		a = tick * twm_u8(m) / 32;
		d = twm_sat_add(now, 1 + a + twm_u8(m));
		break;
	case 1:		/* at the scale of a level, 0..7 */
		l = twm_u8(m) % TW_LEVELS;
		a = twm_sat_mul(tick, BIT_ULL(TW_LVL_BITS * l)) / 64;
		a = twm_sat_mul(a, 1 + twm_u8(m));
		d = twm_sat_add(now, a + twm_u8(m));
		break;
	case 2:
		d = TWM_KMAX;
		break;
	case 3:		/* on a tick boundary, or next to one */
		off = (int)(twm_u8(m) % 3) - 1;
		d = twm_at_tick(m, nt + twm_u8(m) % 70, off);
		break;
	case 4:		/* on a slot boundary of some level */
		l = TW_LVL_BITS * (1 + twm_u8(m) % (TW_LEVELS - 1));
		off = (int)(twm_u8(m) % 3) - 1;
		d = twm_at_tick(m, ((nt >> l) + 1 + twm_u8(m) % 3) << l, off);
		break;
	case 5:		/* already due */
		a = twm_u8(m);
		d = now - min(now, twm_sat_mul(a, tick / 4 + twm_u8(m)));
		break;
	case 6:
		d = twm_bytes(m, 8) & TWM_KMAX;
		break;
	case 7:		/* tied with another id */
		j = twm_pick(m);
		d = m->ids[j].state != TWM_ABSENT ? m->ids[j].deadline :
		    twm_sat_add(now, 1);
		d = twm_sat_add(d, twm_u8(m) % 3);
		break;
	case 8:		/* the last reachable tick boundary, and past it */
		d = twm_u8(m) & 1 ? twm_last_tick(m) : TWM_KMAX - twm_u8(m);
		break;
	default:	/* far, random, saturating */
		a = twm_bytes(m, 4);
		a = twm_sat_mul(a, 1 + twm_u8(m));
		d = twm_sat_add(now, twm_sat_mul(a, div64_u64(tick, 1000) + 1));
		break;
	}
	return d;
}

/*
 * The model of tw_wheel_set()'s fast path: armed id @i's deadline @d in
 * its entry @e alone, its node left in its slot.
 */
static void twm_model_later(struct twm *m, unsigned int i,
			    const struct tw_ent *e, u64 d)
{
	struct twm_id *y = &m->ids[i];

	y->deadline = d;
	m->count[TWM_LAZY]++;
	twm_trace(m, "  lazy");
	TWM_CHECK(m, e->node == y->node && e->deadline == d &&
		  m->w.nr_armed == m->nr_armed,
		  "later of id %u: entry's node %p (model %p), deadline word %#llx, nr_armed %lu (model %lu)",
		  i, e->node, y->node, e->deadline, m->w.nr_armed,
		  m->nr_armed);
}

/**
 * twm_later() - move armed id @i's deadline later: its entry alone
 * @m: the model
 * @i: the id, armed
 * @d: the deadline, no earlier than the id's; may be due
 *
 * The node stays where it is; the wheel finds the deadline when the
 * node's slot comes due.  Written by the model, as the raw API allows,
 * also when @d is due (tw_wheel_set() takes the fast path only when not).
 */
void twm_later(struct twm *m, unsigned int i, u64 d)
{
	struct twm_id *y = &m->ids[i];
	struct tw_ent *e = twm_find_ent(m, i, "later");

	TWM_CHECK(m, y->state == TWM_ARMED && d >= y->deadline,
		  "model: later of id %u (%s, deadline %llu) to %llu", i,
		  twm_state_name[y->state], y->deadline, d);
	e->deadline = d;
	twm_model_later(m, i, e, d);
}

/*
 * Present id @i to deadline @d by the core's policy, as the device's
 * tw_set(): tw_wheel_set(), or tw_wheel_move() when @eager.  The model
 * reads the policy itself: the fast path for an armed id whose deadline
 * moves later and not to a time already due (the entry alone); else the
 * id detached (its event discarded, if queued) and placed (its event
 * queued at once, if due).  What the core reports, and the entry, nodes
 * and queue it leaves, are checked against that.
 */
static void twm_move(struct twm *m, unsigned int i, struct tw_ent *e, u64 d,
		     bool eager)
{
	const struct twm_id *y = &m->ids[i];
	bool lazy = !eager && y->state == TWM_ARMED && d >= y->deadline &&
		    d > m->now;
	unsigned int want = TW_SET_LAZY, did;

	if (!lazy)
		want = (y->state == TWM_QUEUED ? TW_SET_DISCARDED : 0) |
		       (d <= m->now ? TW_SET_EXPIRED : 0);
	if (eager)
		did = tw_wheel_move(&m->w, e, d, m->now);
	else
		did = tw_wheel_set(&m->w, e, d, m->now);
	TWM_CHECK(m, did == want,
		  "%s of id %u (%s, deadline %llu) to %llu (now %llu) says %#x, expected %#x",
		  eager ? "move" : "set", i, twm_state_name[y->state],
		  y->deadline, d, m->now, did, want);
	if (lazy) {
		twm_model_later(m, i, e, d);
		return;
	}
	twm_model_detach(m, i, TWM_BY_TOUCH);
	twm_model_place(m, i, e, d, want & TW_SET_EXPIRED);
}

/**
 * twm_set() - touch or arm id @i for deadline @d, as the device's tw_set()
 * @m: the model
 * @i: the id, in any state
 * @d: the deadline, at most TWM_KMAX
 * @flags: TWM_RAW, TWM_EAGER or 0
 *
 * Created if absent and placed (tw_wheel_place()); else moved by
 * tw_wheel_set() (a later deadline of an armed id lazily, the entry
 * alone), or with TWM_EAGER by tw_wheel_move() (taken off the wheel or
 * its event discarded, and placed again); with TWM_RAW through the
 * primitives.  The input decides whether new data comes with it, written
 * afterwards, as the device does, into the node that holds the id.
 */
void twm_set(struct twm *m, unsigned int i, u64 d, unsigned int flags)
{
	struct twm_id *y = &m->ids[i];
	bool raw = flags & TWM_RAW, has;
	u64 data = twm_gen_data(m, &has);
	struct tw_ent *e;

	twm_trace(m, "%s id %u deadline %llu (tick %llu, %s)%s",
		  raw ? "add_raw" : "set", i, d, twm_exp_tick(m, d),
		  twm_state_name[y->state], has ? " with data" : "");
	if (y->state == TWM_ABSENT) {
		e = twm_create(m, i);
		twm_place(m, i, e, d, raw);
	} else if (raw) {
		e = twm_find_ent(m, i, "set");
		twm_detach(m, i, e, TWM_BY_TOUCH, true);
		twm_place(m, i, e, d, true);
	} else {
		e = twm_find_ent(m, i, "set");
		twm_move(m, i, e, d, flags & TWM_EAGER);
	}
	if (has) {
		e->node->data = data;
		y->data = data;
		m->count[TWM_DATA]++;
	}
}

/*
 * One read() lock hold: peek at the @n events from w.head (each one's
 * entry looked up), then deliver them (@fault: fewer, picked by the
 * input): tw_wheel_pop(), the entry looked up again only if removing an
 * earlier one shifted it, removed, the node freed.  Returns how many were
 * delivered.
 */
static unsigned int twm_read_hold(struct twm *m, unsigned int n, bool fault)
{
	struct tw_node *peek[TWM_READ_CHUNK], *node = m->w.head;
	struct tw_ent *ent[TWM_READ_CHUNK];
	unsigned int ok, j;

	for (j = 0; j < n; j++, node = node->next) {
		const struct twm_id *y = &m->ids[m->rq[j]];

		TWM_CHECK(m, node && node != m->w.tail && node == m->rqn[j],
			  "read: event %u in node %p, model %p", j, node,
			  m->rqn[j]);
		TWM_CHECK(m, y->state == TWM_QUEUED && node->id == y->id &&
			  node->data == y->data && node->expired == y->stamp,
			  "read: event %u of id %u (%s): id %#llx data %#llx expired %llu",
			  j, m->rq[j], twm_state_name[y->state], node->id,
			  node->data, node->expired);
		ent[j] = tw_index_find(&m->x, node->id);
		TWM_CHECK(m, ent[j] && ent[j]->node == node &&
			  tw_ent_queued(ent[j]) &&
			  tw_ent_deadline(ent[j]) == y->deadline &&
			  y->deadline <= node->expired,
			  "read: event %u of id %u: entry %p", j, m->rq[j],
			  ent[j]);
		peek[j] = node;
	}
	ok = fault ? twm_u8(m) % (n + 1) : n;
	twm_trace(m, "  read %u of %u events%s", ok, n, fault ? " (fault)" : "");
	for (j = 0; j < ok; j++) {
		unsigned int i = m->rq[0];

		node = tw_wheel_pop(&m->w);
		TWM_CHECK(m, node == peek[j] && node == twm_model_pop(m),
			  "read: pop %u gave %p, peeked at %p", j, node,
			  peek[j]);
		TWM_CHECK(m, m->w.nr_ready == m->rq_len &&
			  m->w.head == (m->rq_len ? m->rqn[0] : m->w.tail),
			  "read: after a pop nr_ready %lu (model %u), head %p",
			  m->w.nr_ready, m->rq_len, m->w.head);
		if (ent[j]->node != node) {
			ent[j] = tw_index_find(&m->x, node->id);
			m->count[TWM_RELOOKUP]++;
		}
		TWM_CHECK(m, ent[j] && ent[j]->node == node &&
			  tw_ent_queued(ent[j]) && ent[j]->id == m->ids[i].id,
			  "read: popped id %u: entry %p", i, ent[j]);
		twm_gone(m, i, ent[j], node);
		m->count[TWM_POP]++;
	}
	return ok;
}

/**
 * twm_read() - the device's read(): up to @nr events
 * @m: the model
 * @nr: how many the buffer holds
 * @fault: the copy faults: fewer are delivered (the input picks how many)
 *	and read() stops there
 */
void twm_read(struct twm *m, unsigned int nr, bool fault)
{
	m->count[TWM_READ]++;
	while (nr && m->rq_len) {
		unsigned int n = min(min(nr, TWM_READ_CHUNK), m->rq_len);

		if (twm_read_hold(m, n, fault) < n) {
			m->count[TWM_FAULT]++;
			break;
		}
		nr -= n;
	}
}

/* ------------------------------------------------------------ a whole run */

/**
 * twm_new() - a model of @nr ids, for twm_start()
 * @hooks: the program's memory and failures
 * @ctx: for the hooks
 * @nr: how many ids, at least 1
 *
 * Return: the model, or NULL if out of memory.
 */
struct twm *twm_new(const struct twm_hooks *hooks, void *ctx,
		    unsigned int nr)
{
	struct twm *m = hooks->zalloc(ctx, sizeof(*m));

	if (!m)
		return NULL;
	m->hooks = hooks;
	m->ctx = ctx;
	m->nr = nr;
	m->pool_nr = 2 * nr + 2;
	m->find_every = 1;
	m->offer_ids = ~0UL;
	m->op_name = "new";
	m->ids = twm_zalloc(m, nr * sizeof(*m->ids));
	m->pool = twm_zalloc(m, m->pool_nr * sizeof(*m->pool));
	m->owner = twm_zalloc(m, m->pool_nr * sizeof(*m->owner));
	m->freeq = twm_zalloc(m, m->pool_nr * sizeof(*m->freeq));
	m->rq = twm_zalloc(m, nr * sizeof(*m->rq));
	m->rqn = twm_zalloc(m, (nr + 1) * sizeof(*m->rqn));
	m->seen = twm_zalloc(m, nr);
	return m;
}

/**
 * twm_start() - a new wheel and index, nothing armed
 * @m: the model, new or torn down (twm_teardown())
 * @tick: the wheel's tick in ns
 * @now: the clock in ns
 * @size: slots of the index's first table, at least TW_IDX_MIN
 * @secret: the index's secret
 *
 * As the device: the index, then the wheel with it and a sentinel.
 */
void twm_start(struct twm *m, u64 tick, u64 now, unsigned long size,
	       const u64 secret[TW_SECRET_WORDS])
{
	unsigned int i;

	m->op_name = "setup";
	m->op_no = 0;
	m->tick = tick;
	m->now = now;
	m->last_e = 0;
	m->last_e_set = false;
	m->late_max = 0;
	m->nr_present = 0;
	m->nr_armed = 0;
	m->data_seq = 0;
	m->max_queue = 0;
	m->dump_on = false;
	for (i = 0; i < m->nr; i++) {
		memset(&m->ids[i], 0, sizeof(m->ids[i]));
		m->ids[i].id = ~0ULL - i;
	}
	m->msize = size;
	m->mtab = twm_zalloc(m, size * sizeof(*m->mtab));
	m->mold = NULL;
	m->mold_size = 0;
	memset(&m->x, 0x5a, sizeof(m->x));
	tw_index_init(&m->x, m->mtab, size, secret);
	TWM_CHECK(m, tw_key_id(&m->x, tw_key(&m->x, 12345)) == 12345 &&
		  tw_key(&m->x, tw_key_id(&m->x, 1)) == 1, "bad key inverse");
	twm_pool_reset(m);
	m->rq_len = 0;
	m->rqn[0] = twm_node_alloc(m, 0x5a5a5a5a5a5a5a5aULL, TWM_P_SENTINEL);
	memset(&m->w, 0, sizeof(m->w));
	tw_wheel_init(&m->w, tick, now, &m->x, m->rqn[0]);
	TWM_CHECK(m, m->w.cur == twm_now_tick(m), "init: cur %llu", m->w.cur);
	TWM_CHECK(m, m->w.head == m->rqn[0] && m->w.tail == m->rqn[0] &&
		  !m->rqn[0]->next && !m->w.nr_ready && !m->w.nr_armed,
		  "init: head %p tail %p (sentinel %p)", m->w.head, m->w.tail,
		  m->rqn[0]);
	m->prev_cur = m->w.cur;
	twm_trace(m, "setup tick %llu now %llu", tick, now);
	twm_check(m);
}

/**
 * twm_finish() - expire everything, read everything
 * @m: the model
 *
 * A flush to the end of time expires every deadline up to the last tick
 * boundary; one tick past the end of time, the rest.
 */
void twm_finish(struct twm *m)
{
	unsigned int i;

	m->op_name = "final flush";
	m->op_no++;
	twm_trace(m, "final flush");
	m->now = TWM_KMAX;
	twm_advance_full(m, 0);
	for (i = 0; i < m->nr; i++)
		TWM_CHECK(m, m->ids[i].state != TWM_ARMED ||
			  m->ids[i].deadline > twm_last_tick(m),
			  "lost: id %u (deadline %llu) never expired", i,
			  m->ids[i].deadline);
	m->now = TWM_KMAX + m->tick;
	twm_advance_full(m, 0);
	TWM_CHECK(m, !m->nr_armed, "lost: %lu armed past the end of time",
		  m->nr_armed);
	twm_read(m, m->nr, false);
	TWM_CHECK(m, m->w.head == m->w.tail && !m->w.nr_ready && !m->rq_len,
		  "ready queue not empty");
	twm_check(m);
}

/**
 * twm_teardown() - tear the index down as the device's release does
 * @m: the model
 *
 * The sentinel freed, then every node in the index popped, armed and
 * queued ids' alike: each one once, and with them every node is free.
 */
void twm_teardown(struct twm *m)
{
	unsigned long pos = 0, popped = 0;
	struct tw_node *n;
	unsigned int i;

	m->op_name = "teardown";
	TWM_CHECK(m, m->owner[twm_pidx(m, m->w.tail, "teardown")] ==
		  TWM_P_SENTINEL, "the sentinel belongs to id %d",
		  m->owner[twm_pidx(m, m->w.tail, "teardown")]);
	twm_node_free(m, m->w.tail);
	memset(m->seen, 0, m->nr);
	while ((n = tw_index_pop(&m->x, &pos))) {
		i = twm_node_id(m, n, "pop");
		TWM_CHECK(m, m->ids[i].state != TWM_ABSENT,
			  "pop returned removed id %u", i);
		TWM_CHECK(m, !m->seen[i], "pop returned id %u twice", i);
		m->seen[i] = 1;
		TWM_CHECK(m, ++popped <= m->nr_present,
			  "pop returned more than %lu nodes", m->nr_present);
		twm_node_free(m, n);
	}
	TWM_CHECK(m, popped == m->nr_present, "pop returned %lu of %lu nodes",
		  popped, m->nr_present);
	TWM_CHECK(m, !m->x.nr, "index nr %lu after popping everything",
		  m->x.nr);
	TWM_CHECK(m, !tw_index_pop(&m->x, &pos), "pop of an empty index");
	TWM_CHECK(m, !m->nodes_live, "%lu nodes not given back",
		  m->nodes_live);
	m->hooks->free(m->ctx, m->x.tab);
	m->hooks->free(m->ctx, m->x.old);
	m->mtab = NULL;
	m->mold = NULL;
}

/**
 * twm_counts() - what the operations did, as "name count" pairs
 * @count: counters, as struct twm's
 * @buf: where to write them
 * @size: room in @buf, at least 1
 */
void twm_counts(const unsigned long *count, char *buf, size_t size)
{
	size_t len = 0;
	unsigned int k;

	buf[0] = 0;
	for (k = 0; k < TWM_COUNTS && len + 1 < size; k++)
		len += snprintf(buf + len, size - len, "%s%s %lu",
				k ? ", " : "", twm_count_name[k], count[k]);
}
