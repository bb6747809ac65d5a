// SPDX-License-Identifier: GPL-2.0
/*
 * Host-side tests of kmod/twheel_core.c, built in user space against small
 * shims of the kernel headers (shim/linux/).  Randomised against simple
 * models; the seed is printed and can be set with TWHEEL_SEED.  TAP output.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../kmod/twheel_core.h"

#define TWHEEL_DEADLINE_MAX_T 0x7fffffffffffffffULL

static int failures;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		printf("#   FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);	\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		failures++;						\
		return;							\
	}								\
} while (0)

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ------------------------------------------------------------- wheel test */

enum { ABSENT, ARMED, EXPIRED };

struct mnode {
	struct tw_node n;
	int state;
	uint64_t deadline;	/* the model: the id's current deadline */
	uint64_t placed;	/* the deadline it was last armed with */
};

static const uint64_t ticks[] = { 100000, 1000000, 7777777, 1000000000ULL,
				  3600000000000ULL };

static struct tw_ent *tab_alloc(unsigned long size)
{
	struct tw_ent *t = calloc(size, sizeof(*t));

	if (!t) {
		printf("# out of memory\n");
		exit(2);
	}
	return t;
}

/* What the module does per batch: resize when asked, migrate a bit. */
static void index_step(struct tw_index *x, unsigned long extra,
		       unsigned long entries)
{
	unsigned long size = tw_index_want_size(x, extra);

	if (size)
		tw_index_start_resize(x, tab_alloc(size), size);
	if (x->old)
		free(tw_index_migrate(x, entries));
}

/*
 * Room for one more id, and for every id of the old table still to
 * migrate: the new table must never fill up, or tw_index_migrate() has
 * nowhere to put an entry.
 */
static void index_make_room(struct tw_index *x)
{
	while (!tw_index_room(x) || x->nr >= x->size - x->size / 16) {
		if (x->old)
			free(tw_index_migrate(x, ~0UL));
		else
			index_step(x, 1, 0);
	}
}

/*
 * @use_idx: the wheel has the index attached, and a later deadline of an
 * armed id is written to its index entry only (as the module does);
 * without, it is written to the node (the wheel's own lazy re-slotting).
 */
static void wheel_body(struct tw_index *xp, unsigned int nr, unsigned int steps,
		       bool use_idx)
{
	uint64_t tick = ticks[rnd_below(5)];
	uint64_t now = rnd_below(1ULL << 50);
	static struct tw_wheel w;
	static struct mnode m[1000];
	uint64_t last_e = 0, expired = 0, armed = 0, lazy = 0;
	unsigned int step, j;

	memset(m, 0, sizeof(m));
	for (j = 0; j < nr; j++)
		m[j].n.id = j * 7 + (use_idx ? rnd_below(1 << 20) << 20 : 0);
	tw_wheel_init(&w, tick, now);
	CHECK(w.idx == NULL, "init leaves idx NULL");
	tw_index_init(xp, tab_alloc(TW_IDX_MIN), TW_IDX_MIN);
	if (use_idx)
		w.idx = xp;
	for (step = 0; step < steps; step++) {
		unsigned int i = rnd_below(nr), op = rnd_below(100);
		struct mnode *y = &m[i];
		struct tw_ent *e = NULL;
		uint64_t span, d;

		if (use_idx) {
			index_step(xp, 1, 1 + rnd_below(3));
			e = tw_index_find(xp, y->n.id);
			CHECK((e != NULL) == (y->state != ABSENT),
			      "find id %u: %p, state %d", i, (void *)e, y->state);
			CHECK(!e || (e->node == &y->n && e->id == y->n.id &&
				     tw_ent_deadline(e) == y->deadline &&
				     tw_ent_queued(e) == (y->state == EXPIRED)),
			      "entry of id %u", i);
		}
		/* a deadline at a random level's scale, never in the past */
		span = tick << (6 * rnd_below(6));
		if (span > 1ULL << 52)
			span = 1ULL << 52;
		d = now + 1 + rnd_below(span * (1 + rnd_below(70)));
		if (d > TWHEEL_DEADLINE_MAX_T || d <= now)
			d = TWHEEL_DEADLINE_MAX_T;
		if (d <= now)
			op = 99;	/* at the end of time: only advance */

		if (op < 40) {
			if (y->state == ARMED && d >= y->deadline) {
				/* lazy: the node stays where it is */
				if (use_idx)
					e->deadline = d;
				else
					tw_node_set_deadline(&y->n, d);
				y->deadline = d;
				lazy++;
			} else {
				if (y->state == ARMED) {
					tw_wheel_del(&w, &y->n);
				} else if (y->state == EXPIRED) {
					tw_wheel_unqueue(&w, &y->n);
					if (e)
						e->deadline &= ~TW_ENT_QUEUED;
				} else if (use_idx) {
					index_make_room(xp);
					e = tw_index_insert(xp, &y->n, d);
				}
				if (y->state != ARMED)
					armed++;
				tw_node_set_deadline(&y->n, d);
				if (e)
					e->deadline = d;
				y->deadline = y->placed = d;
				tw_wheel_add(&w, &y->n);
				y->state = ARMED;
			}
		} else if (op < 50) {
			if (y->state == ARMED)
				tw_wheel_del(&w, &y->n);
			else if (y->state == EXPIRED)
				tw_wheel_unqueue(&w, &y->n);
			if (e)
				tw_index_remove(xp, e);
			y->state = ABSENT;
		} else if (op < 60 && y->state == EXPIRED) {
			tw_wheel_unqueue(&w, &y->n);	/* read */
			if (e)
				tw_index_remove(xp, e);
			y->state = ABSENT;
		} else {
			uint64_t nt, t, min_e = UINT64_MAX;
			unsigned int budget;
			bool any;

			/*
			 * The wheel must wake no later than the first expiry
			 * of a node by the deadline it is slotted by (with the
			 * index, that may be earlier than the id's deadline).
			 */
			for (j = 0; j < nr; j++) {
				uint64_t nd = tw_node_deadline(&m[j].n);

				if (m[j].state != ARMED)
					continue;
				CHECK(nd >= m[j].placed && nd <= m[j].deadline,
				      "id %u slotted by %" PRIu64 ", armed with %"
				      PRIu64 ", deadline %" PRIu64, j, nd,
				      m[j].placed, m[j].deadline);
				CHECK(use_idx || nd == m[j].deadline,
				      "id %u: node deadline changed", j);
				if (tw_ticks(&w, nd) < min_e)
					min_e = tw_ticks(&w, nd);
			}
			any = tw_wheel_next(&w, &t);
			CHECK(any == (min_e != UINT64_MAX), "next %d", any);
			CHECK(!any || t <= min_e, "next %" PRIu64 " > %" PRIu64,
			      t, min_e);

			switch (rnd_below(4)) {
			case 0:
				now += rnd_below(tick * 3);
				break;
			case 1:
				now += rnd_below(tick * 200);
				break;
			case 2:
				if (any && t * tick > now)
					now = t * tick;	/* exactly at the slot */
				break;
			default:
				now += rnd_below(span < 1ULL << 40 ? span : 1ULL << 40);
				break;
			}
			nt = now / tick;
			do {
				budget = 1 + rnd_below(50);
				/* the index may be resizing under the wheel */
				if (use_idx)
					index_step(xp, 0, 1 + rnd_below(2));
			} while (tw_wheel_advance(&w, now, &budget));
			/* drain the ready queue in order */
			while (!list_empty(&w.ready)) {
				struct tw_node *n = list_first_entry(&w.ready,
							struct tw_node, ready);
				struct mnode *z = container_of(n, struct mnode, n);
				uint64_t ze = tw_ticks(&w, z->deadline);

				CHECK(z->state == ARMED, "expired twice");
				CHECK(z->deadline <= now, "early by %" PRIu64,
				      z->deadline - now);
				CHECK(tw_node_expired(n) == now, "expired stamp");
				CHECK(!(n->expired & TW_NODE_FLAG), "flag set");
				CHECK(ze >= last_e, "order: tick %" PRIu64
				      " after %" PRIu64, ze, last_e);
				if (use_idx) {
					struct tw_ent *f = tw_index_find(xp, n->id);

					CHECK(f && f->node == n && tw_ent_queued(f) &&
					      tw_ent_deadline(f) == z->deadline,
					      "expired id's entry not queued");
					tw_index_remove(xp, f);
				}
				last_e = ze;
				tw_wheel_unqueue(&w, n);
				z->state = ABSENT;
				expired++;
			}
			for (j = 0; j < nr; j++)
				CHECK(m[j].state != ARMED ||
				      tw_ticks(&w, m[j].deadline) > nt,
				      "id %u due at tick %" PRIu64 " not expired at %"
				      PRIu64, j, tw_ticks(&w, m[j].deadline), nt);
		}
	}
	CHECK(expired > 0 || armed == 0, "nothing ever expired");
	CHECK(lazy > 0, "no lazy touch");
	{
		unsigned long count = 0;

		for (j = 0; j < nr; j++)
			count += m[j].state != ABSENT;
		CHECK(xp->nr == (use_idx ? count : 0), "index holds %lu ids, %lu present",
		      xp->nr, count);
	}
}

static void wheel_run(unsigned int nr, unsigned int steps, bool use_idx)
{
	struct tw_index x = { 0 };

	wheel_body(&x, nr, steps, use_idx);	/* may return early */
	free(x.old);
	free(x.tab);
}

static void test_wheel(void)
{
	int i, before = failures;

	for (i = 0; i < 40 && failures == before; i++)
		wheel_run(200 + rnd_below(800), 20000, false);
}

static void test_wheel_index(void)
{
	int i, before = failures;

	for (i = 0; i < 40 && failures == before; i++)
		wheel_run(200 + rnd_below(800), 20000, true);
}

/* Far deadlines, the largest tick count, and an idle wheel that jumps. */
static void test_wheel_edges(void)
{
	static struct tw_wheel w;
	struct tw_node a = {0}, b = {0};
	unsigned int budget = 1000;
	uint64_t t, ad;

	tw_wheel_init(&w, 100000, 5);
	/* the last tick boundary a clock can reach; a carries the flag */
	ad = TWHEEL_DEADLINE_MAX_T / 100000 * 100000;
	a.deadline = TW_NODE_FLAG;
	tw_node_set_deadline(&a, ad);
	CHECK(tw_node_deadline(&a) == ad && (a.deadline & TW_NODE_FLAG),
	      "set_deadline keeps the flag");
	tw_wheel_add(&w, &a);
	CHECK(tw_wheel_next(&w, &t), "armed");
	CHECK(!tw_wheel_advance(&w, 1000000000ULL, &budget), "nothing due");
	CHECK(list_empty(&w.ready), "nothing expired");
	b.deadline = 2000000000ULL;
	tw_wheel_add(&w, &b);
	budget = 1000;
	while (tw_wheel_advance(&w, 1999999999ULL, &budget))
		budget = 1000;
	CHECK(list_empty(&w.ready), "b early");
	budget = 1000;
	tw_wheel_advance(&w, 2000000000ULL, &budget);
	CHECK(!list_empty(&w.ready) && w.nr_ready == 1, "b on time");
	CHECK(b.expired == 2000000000ULL, "b stamped %" PRIu64, b.expired);
	budget = 1000;
	tw_wheel_advance(&w, ad - 1, &budget);
	CHECK(w.nr_ready == 1, "a early");
	CHECK(tw_node_deadline(&a) == ad && (a.deadline & TW_NODE_FLAG),
	      "a's deadline word changed while armed");
	budget = 1000;
	tw_wheel_advance(&w, ad, &budget);
	CHECK(w.nr_ready == 2 && w.nr_armed == 0, "a at the horizon");
	CHECK(tw_node_expired(&a) == ad && (a.expired & TW_NODE_FLAG),
	      "a's expiry clock %#" PRIx64, a.expired);
	CHECK(!tw_wheel_next(&w, &t), "empty wheel has no next");
	/* a node expired at clock 0 still reads as expired at 1 */
	tw_wheel_unqueue(&w, &a);
	tw_wheel_unqueue(&w, &b);
	tw_wheel_init(&w, 100000, 0);
	a.deadline = TW_NODE_FLAG;
	tw_wheel_expire(&w, &a, 0);
	CHECK(a.expired == (TW_NODE_FLAG | 1), "expired at 0: %#" PRIx64,
	      a.expired);
	CHECK(w.nr_ready == 1, "expire queues");
}

/* ------------------------------------------------------------- index test */

/*
 * One table: an ordered linear-probing table.  Every entry sits at or
 * after its home with no empty slot in between, and entries in slot order
 * (those that wrapped past the end last) have increasing keys.
 */
static void check_table(const struct tw_ent *t, unsigned long size,
			unsigned long nr, unsigned long empty_below,
			const char *what)
{
	unsigned long p, count = 0, pass;
	uint64_t prev = 0;
	bool any = false;

	if (!t) {
		CHECK(!nr, "%s: no table, %lu entries", what, nr);
		return;
	}
	for (pass = 0; pass < 2; pass++) {
		for (p = 0; p < size; p++) {
			uint64_t key;
			unsigned long h, q;

			if (!t[p].node)
				continue;
			CHECK(p >= empty_below, "%s: slot %lu below %lu in use",
			      what, p, empty_below);
			CHECK(t[p].node->id == t[p].id, "%s: slot %lu id", what, p);
			key = tw_key(t[p].id);
			h = (unsigned long)(((unsigned __int128)key * size) >> 64);
			if ((h > p) != pass)
				continue;	/* pass 1: the wrapped ones */
			count++;
			CHECK(!any || key > prev, "%s: slot %lu key %#" PRIx64
			      " after %#" PRIx64, what, p, key, prev);
			prev = key;
			any = true;
			for (q = h; q != p; q = q + 1 == size ? 0 : q + 1)
				CHECK(t[q].node, "%s: slot %lu empty between home "
				      "%lu and entry at %lu", what, q, h, p);
		}
	}
	CHECK(count == nr, "%s: %lu entries, counted %lu", what, count, nr);
}

static void check_index(const struct tw_index *x)
{
	check_table(x->tab, x->size, x->nr_tab, 0, "tab");
	check_table(x->old, x->old_size, x->nr_old, x->mpos, "old");
	CHECK(x->nr == x->nr_tab + x->nr_old, "nr %lu != %lu + %lu", x->nr,
	      x->nr_tab, x->nr_old);
	CHECK(x->size >= TW_IDX_MIN, "size %lu", x->size);
}

static void index_body(struct tw_index *xp)
{
	enum { N = 20000 };
	static struct tw_node nodes[N];
	static uint64_t dl[N];
	static bool in[N];
	static unsigned int seen[N];
	unsigned int i, round;
	unsigned long grows = 0, shrinks = 0;

	tw_index_init(xp, tab_alloc(TW_IDX_MIN), TW_IDX_MIN);
	for (i = 0; i < N; i++) {
		/* ids: sequential, strided and random */
		nodes[i].id = i % 3 == 0 ? i : i % 3 == 1 ? (uint64_t)i << 40 : rnd();
		in[i] = false;
	}
	for (round = 0; round < 6; round++) {
		unsigned int target = round % 2 ? N / 50 : N - N / 10 * round;
		struct tw_ent out[9];
		uint64_t cursor = 0, last_key = 0;
		unsigned long total = 0;
		bool any = false;

		/* move towards target size, checking membership */
		for (i = 0; i < 8 * N; i++) {
			unsigned int k = rnd_below(N);
			bool add = rnd_below(N) < target;
			unsigned long size = tw_index_want_size(xp, 1), before = xp->size;
			struct tw_ent *e;

			if (size) {
				grows += size > before;
				shrinks += size < before;
				tw_index_start_resize(xp, tab_alloc(size), size);
			}
			if (xp->old)
				free(tw_index_migrate(xp, 1 + rnd_below(8)));
			if (add && !in[k]) {
				index_make_room(xp);
				dl[k] = rnd() >> 1;
				e = tw_index_insert(xp, &nodes[k], dl[k]);
				CHECK(e && e->node == &nodes[k] && e->id == nodes[k].id &&
				      e->deadline == dl[k], "insert %u", k);
				CHECK(tw_index_find(xp, nodes[k].id) == e, "find new %u", k);
				in[k] = true;
			} else if (!add && in[k]) {
				e = tw_index_find(xp, nodes[k].id);
				CHECK(e && e->node == &nodes[k], "find to remove %u", k);
				tw_index_remove(xp, e);
				in[k] = false;
			} else if (in[k]) {
				/* a touch: write the entry's deadline in place */
				e = tw_index_find(xp, nodes[k].id);
				CHECK(e && e->node == &nodes[k], "find to touch %u", k);
				dl[k] = rnd() >> 1;
				e->deadline = dl[k] | (rnd() & TW_ENT_QUEUED);
			}
			k = rnd_below(N);
			e = tw_index_find(xp, nodes[k].id);
			CHECK((e && e->node == &nodes[k]) == in[k], "find %u", k);
			CHECK(!e || (e->id == nodes[k].id &&
				     tw_ent_deadline(e) == dl[k]),
			      "entry of %u: id %#" PRIx64 " deadline %#" PRIx64, k,
			      e->id, e->deadline);
			if (i % 4096 == 0) {
				check_index(xp);
				if (failures)
					return;
			}
		}
		check_index(xp);
		for (i = 0; i < N; i++) {
			struct tw_ent *e = tw_index_find(xp, nodes[i].id);

			CHECK((e != NULL) == in[i], "membership %u", i);
			CHECK(!e || (e->node == &nodes[i] &&
				     tw_ent_deadline(e) == dl[i]), "entry %u", i);
			seen[i] = 0;
		}
		/* dump with tiny rooms while mutating ids 0..N/4 */
		while (cursor < TW_CURSOR_END) {
			unsigned long room = 1 + rnd_below(9), budget = 1 + rnd_below(64);
			uint64_t c0 = cursor;
			unsigned long nr = tw_index_dump(xp, &cursor, out, room, &budget);
			unsigned int j;

			CHECK(nr <= room && cursor >= c0, "dump %lu into %lu, cursor "
			      "%#" PRIx64 " -> %#" PRIx64, nr, room, c0, cursor);
			for (j = 0; j < nr; j++) {
				struct tw_node *n = out[j].node;
				uint64_t key = tw_key(out[j].id);
				unsigned int k;

				CHECK(n >= nodes && n < nodes + N, "dump node %p",
				      (void *)n);
				k = n - nodes;
				seen[k]++;
				CHECK(out[j].id == n->id && in[k], "dump entry %u", k);
				CHECK(tw_ent_deadline(&out[j]) == dl[k],
				      "dump deadline of %u", k);
				CHECK(!any || key > last_key, "dump key order");
				CHECK(key >> 1 >= c0 && key >> 1 < cursor,
				      "dump key outside the cells passed");
				last_key = key;
				any = true;
			}
			total += nr;
			for (j = 0; j < 4; j++) {
				unsigned int k = rnd_below(N / 4);
				struct tw_ent *e;

				index_step(xp, 1, 1 + rnd_below(8));
				if (in[k]) {
					e = tw_index_find(xp, nodes[k].id);
					CHECK(e && e->node == &nodes[k], "find %u", k);
					tw_index_remove(xp, e);
				} else {
					index_make_room(xp);
					dl[k] = rnd() >> 1;
					tw_index_insert(xp, &nodes[k], dl[k]);
				}
				in[k] = !in[k];
			}
		}
		for (i = N / 4; i < N; i++)
			CHECK(seen[i] == in[i], "dump saw id %u %u times (in %d)",
			      i, seen[i], in[i]);
		for (i = 0; i < N / 4; i++)
			CHECK(seen[i] <= 1, "dump saw id %u twice", i);
		CHECK(xp->nr == (unsigned long)({ unsigned long c = 0;
			for (i = 0; i < N; i++) c += in[i]; c; }), "count");
		check_index(xp);
		printf("# round %u: %lu ids, table %lu%s, dump listed %lu\n",
		       round, xp->nr, xp->size, xp->old ? " (resizing)" : "", total);
	}
	CHECK(grows && shrinks, "resizes: %lu grows, %lu shrinks", grows, shrinks);
	{
		unsigned long pos = 0, popped = 0, want = xp->nr;
		struct tw_node *n;

		for (i = 0; i < N; i++)
			seen[i] = 0;
		while ((n = tw_index_pop(xp, &pos))) {
			CHECK(n >= nodes && n < nodes + N && in[n - nodes] &&
			      !seen[n - nodes]++, "pop %p", (void *)n);
			popped++;
		}
		CHECK(xp->nr == 0 && popped == want, "pop empties: %lu of %lu",
		      popped, want);
	}
}

static void test_index(void)
{
	struct tw_index x = { 0 };

	index_body(&x);		/* frees nothing: it may return early */
	free(x.old);
	free(x.tab);
}

/* tw_index_want_size(): the documented thresholds. */
static void test_index_sizes(void)
{
	static struct tw_node nodes[2000];
	struct tw_index x;
	unsigned long i, s;

	tw_index_init(&x, tab_alloc(TW_IDX_MIN), TW_IDX_MIN);
	CHECK(tw_index_want_size(&x, 0) == 0, "empty minimum table stays");
	CHECK(tw_index_want_size(&x, 57) == 0, "57 of 64 is not above 9/10");
	s = tw_index_want_size(&x, 58);
	CHECK(s == 58 * 4 / 3 + 1, "58 ids want %lu", s);
	for (i = 0; i < 57; i++) {
		nodes[i].id = i;
		CHECK(tw_index_room(&x), "room at %lu", i);
		tw_index_insert(&x, &nodes[i], i);
	}
	CHECK(tw_index_want_size(&x, 1) == 58 * 4 / 3 + 1, "grow by one");
	tw_index_start_resize(&x, tab_alloc(1000), 1000);
	CHECK(tw_index_want_size(&x, 10000) == 0, "no resize while migrating");
	CHECK(tw_index_find(&x, 3) && tw_index_find(&x, 3)->node == &nodes[3],
	      "find in old");
	while (!(x.old == NULL)) {
		struct tw_ent *old = x.old, *r = tw_index_migrate(&x, 1);

		CHECK(!r || r == old, "migrate returns the old table");
		free(r);
	}
	CHECK(x.nr_tab == 57 && x.nr_old == 0 && x.size == 1000, "migrated");
	/* 57 * 4 = 228 < 1000: shrink to 3/4 full, not below the minimum */
	s = tw_index_want_size(&x, 0);
	CHECK(s == 57 * 4 / 3 + 1, "shrink wants %lu", s);
	for (i = 0; i < 57; i++)
		tw_index_remove(&x, tw_index_find(&x, i));
	CHECK(tw_index_want_size(&x, 0) == TW_IDX_MIN, "shrink to minimum");
	check_index(&x);
	free(x.tab);
}

int main(void)
{
	const char *env = getenv("TWHEEL_SEED");
	struct { const char *name; void (*fn)(void); } tests[] = {
		{ "wheel_random_vs_model", test_wheel },
		{ "wheel_with_index_lazy_entries", test_wheel_index },
		{ "wheel_edges", test_wheel_edges },
		{ "index_random_vs_model_and_dump", test_index },
		{ "index_want_size", test_index_sizes },
	};
	unsigned int i, n = sizeof(tests) / sizeof(tests[0]), failed = 0;
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x7717ee1;

	/* line by line: a sanitizer's report must not swallow the TAP lines */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n1..%u\n# seed %#" PRIx64 "\n", n, seed);
	for (i = 0; i < n; i++) {
		int before = failures;

		rng_state = seed ? seed : 1;
		tests[i].fn();
		if (failures != before)
			failed++;
		printf("%s %u %s\n", failures != before ? "not ok" : "ok", i + 1,
		       tests[i].name);
	}
	printf("# %u passed, %u failed\n", n - failed, failed);
	return failed ? 1 : 0;
}
