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
};

static const uint64_t ticks[] = { 100000, 1000000, 7777777, 1000000000ULL,
				  3600000000000ULL };

static void wheel_run(unsigned int nr, unsigned int steps)
{
	uint64_t tick = ticks[rnd_below(5)];
	uint64_t now = rnd_below(1ULL << 50);
	static struct tw_wheel w;
	static struct mnode m[1000];
	uint64_t last_e = 0, expired = 0, armed = 0;
	unsigned int step;

	memset(m, 0, sizeof(m));
	tw_wheel_init(&w, tick, now);
	for (step = 0; step < steps; step++) {
		unsigned int i = rnd_below(nr), op = rnd_below(100);
		struct mnode *x = &m[i];
		uint64_t span, d;

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
			if (x->state == ARMED) {
				if (d >= x->n.deadline) {
					x->n.deadline = d;	/* lazy */
				} else {
					tw_wheel_del(&w, &x->n);
					x->n.deadline = d;
					tw_wheel_add(&w, &x->n);
				}
			} else {
				if (x->state == EXPIRED)
					tw_wheel_unqueue(&w, &x->n);
				x->n.deadline = d;
				tw_wheel_add(&w, &x->n);
				x->state = ARMED;
				armed++;
			}
		} else if (op < 50) {
			if (x->state == ARMED)
				tw_wheel_del(&w, &x->n);
			else if (x->state == EXPIRED)
				tw_wheel_unqueue(&w, &x->n);
			x->state = ABSENT;
		} else if (op < 60 && x->state == EXPIRED) {
			tw_wheel_unqueue(&w, &x->n);	/* read */
			x->state = ABSENT;
		} else {
			uint64_t nt, t, min_e = UINT64_MAX;
			unsigned int budget, j;
			bool any;

			/* the wheel must wake no later than the first expiry */
			for (j = 0; j < nr; j++)
				if (m[j].state == ARMED &&
				    tw_ticks(&w, m[j].n.deadline) < min_e)
					min_e = tw_ticks(&w, m[j].n.deadline);
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
			} while (tw_wheel_advance(&w, now, &budget));
			/* drain the ready queue in order */
			while (!list_empty(&w.ready)) {
				struct tw_node *n = list_first_entry(&w.ready,
							struct tw_node, ready);
				struct mnode *y = container_of(n, struct mnode, n);
				uint64_t e = tw_ticks(&w, n->deadline);

				CHECK(y->state == ARMED, "expired twice");
				CHECK(n->deadline <= now, "early by %" PRIu64,
				      n->deadline - now);
				CHECK(n->expired == now, "expired stamp");
				CHECK(e >= last_e, "order: tick %" PRIu64
				      " after %" PRIu64, e, last_e);
				last_e = e;
				tw_wheel_unqueue(&w, n);
				y->state = ABSENT;
				expired++;
			}
			for (j = 0; j < nr; j++)
				CHECK(m[j].state != ARMED ||
				      tw_ticks(&w, m[j].n.deadline) > nt,
				      "id %u due at tick %" PRIu64 " not expired at %"
				      PRIu64, j, tw_ticks(&w, m[j].n.deadline), nt);
		}
	}
	CHECK(expired > 0 || armed == 0, "nothing ever expired");
}

static void test_wheel(void)
{
	int i;

	for (i = 0; i < 40; i++)
		wheel_run(200 + rnd_below(800), 20000);
}

/* Far deadlines, the largest tick count, and an idle wheel that jumps. */
static void test_wheel_edges(void)
{
	static struct tw_wheel w;
	struct tw_node a = {0}, b = {0};
	unsigned int budget = 1000;
	uint64_t t;

	tw_wheel_init(&w, 100000, 5);
	/* the last tick boundary a clock can reach */
	a.deadline = TWHEEL_DEADLINE_MAX_T / 100000 * 100000;
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
	budget = 1000;
	tw_wheel_advance(&w, a.deadline - 1, &budget);
	CHECK(w.nr_ready == 1, "a early");
	budget = 1000;
	tw_wheel_advance(&w, a.deadline, &budget);
	CHECK(w.nr_ready == 2 && w.nr_armed == 0, "a at the horizon");
	CHECK(!tw_wheel_next(&w, &t), "empty wheel has no next");
}

/* ------------------------------------------------------------- index test */

static struct tw_node **tab_alloc(unsigned int bits)
{
	return calloc(1UL << bits, sizeof(struct tw_node *));
}

static void index_step(struct tw_index *x)
{
	unsigned int bits = tw_index_want_bits(x);

	if (bits)
		tw_index_start_resize(x, tab_alloc(bits), bits);
	if (x->old)
		free(tw_index_migrate(x, 1 + rnd_below(8)));
}

static void test_index(void)
{
	enum { N = 20000 };
	static struct tw_node nodes[N];
	static bool in[N];
	static unsigned int seen[N];
	struct tw_index x;
	unsigned int i, round;

	tw_index_init(&x, tab_alloc(TW_IDX_MIN_BITS), TW_IDX_MIN_BITS);
	for (i = 0; i < N; i++) {
		/* ids: sequential, strided and random */
		nodes[i].id = i % 3 == 0 ? i : i % 3 == 1 ? (uint64_t)i << 40 : rnd();
		in[i] = false;
	}
	for (round = 0; round < 6; round++) {
		unsigned int target = round % 2 ? N / 50 : N - N / 10 * round;
		struct tw_node *out[9];
		uint64_t cursor = 0;
		unsigned long total = 0;

		/* move towards target size, checking membership */
		for (i = 0; i < 8 * N; i++) {
			unsigned int k = rnd_below(N);
			bool add = rnd_below(N) < target;

			if (add && !in[k]) {
				tw_index_insert(&x, &nodes[k]);
				in[k] = true;
			} else if (!add && in[k]) {
				tw_index_remove(&x, &nodes[k]);
				in[k] = false;
			}
			index_step(&x);
			k = rnd_below(N);
			CHECK((tw_index_find(&x, nodes[k].id) == &nodes[k]) == in[k],
			      "find %u", k);
		}
		for (i = 0; i < N; i++) {
			CHECK((tw_index_find(&x, nodes[i].id) != NULL) == in[i],
			      "membership %u", i);
			seen[i] = 0;
		}
		/* dump with tiny rooms while mutating ids 0..N/4 */
		while (cursor < TW_CURSOR_END) {
			unsigned long room = 1 + rnd_below(9), budget = 1 + rnd_below(64);
			unsigned long nr = tw_index_dump(&x, &cursor, out, room, &budget);
			unsigned int j;

			for (j = 0; j < nr; j++)
				seen[out[j] - nodes]++;
			total += nr;
			for (j = 0; j < 4; j++) {
				unsigned int k = rnd_below(N / 4);

				if (in[k])
					tw_index_remove(&x, &nodes[k]);
				else
					tw_index_insert(&x, &nodes[k]);
				in[k] = !in[k];
				index_step(&x);
			}
		}
		for (i = N / 4; i < N; i++)
			CHECK(seen[i] == in[i], "dump saw id %u %u times (in %d)",
			      i, seen[i], in[i]);
		for (i = 0; i < N / 4; i++)
			CHECK(seen[i] <= 1, "dump saw id %u twice", i);
		CHECK(x.nr == (unsigned long)({ unsigned long c = 0;
			for (i = 0; i < N; i++) c += in[i]; c; }), "count");
		printf("# round %u: %lu ids, table 2^%u, dump listed %lu\n",
		       round, x.nr, x.bits, total);
	}
	{
		unsigned long pos = 0, popped = 0;

		while (tw_index_pop(&x, &pos))
			popped++;
		CHECK(x.nr == 0, "pop empties");
		free(x.old);
		free(x.tab);
	}
}

int main(void)
{
	const char *env = getenv("TWHEEL_SEED");
	struct { const char *name; void (*fn)(void); } tests[] = {
		{ "wheel_random_vs_model", test_wheel },
		{ "wheel_edges", test_wheel_edges },
		{ "index_random_vs_model_and_dump", test_index },
	};
	unsigned int i, n = sizeof(tests) / sizeof(tests[0]), failed = 0;
	uint64_t seed = env ? strtoull(env, NULL, 0) : 0x7717ee1;

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
