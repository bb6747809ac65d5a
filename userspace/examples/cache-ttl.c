// SPDX-License-Identifier: MIT
/*
 * cache-ttl: a key-value cache whose keys expire through twheel (seed 004).
 *
 * The cache is an in-process hash map.  Every entry lives in a slot of a
 * pool; its wheel id is (generation << 32 | slot), armed with ABSTIME at
 * the entry's deadline, so that an event always finds its entry (or knows
 * the slot was reused).  Setting a key again re-arms the same id (ARM
 * replaces the deadline); deleting it cancels the id.
 *
 * Two kinds of expiry, as in most caches:
 *  - active: the wheel's events remove expired keys even if nobody reads
 *    them again (memory is bounded by the live keys, not by the history);
 *  - lazy: get() also compares the deadline with the clock, so a key is
 *    never served after its TTL even while its event is in flight.
 *
 * Without --test, commands are read from stdin, one per line:
 *   set KEY VALUE TTL_MS | get KEY | del KEY | ttl KEY | size | sleep MS | stats
 * With --test, a random workload runs against a model and every answer is
 * checked; at the end every key must have been removed by the wheel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "twheel.h"
#include "common.h"

#define EV_BATCH	256

/* ------------------------------------------------------------- the cache */

struct entry {
	char *key;
	char *value;
	uint64_t deadline;	/* CLOCK_MONOTONIC ns, the wheel's clock */
	uint64_t hash;
	uint32_t gen;
	uint32_t next;		/* bucket chain / free list; UINT32_MAX = end */
	uint8_t used;
};

struct cache_stats {
	uint64_t sets, hits, misses, dels;
	uint64_t expired_wheel, expired_lazy, stale_events;
	struct hist late;	/* wheel removal time - deadline */
};

struct cache {
	int wfd;
	struct entry *e;
	uint32_t cap, nfree_head, size;
	uint32_t *bucket;
	uint32_t nbuckets;	/* power of two */
	struct cache_stats st;
	/* called for every key removed by expiry (wheel or lazy) */
	void (*on_expire)(void *arg, const char *key, uint64_t deadline, uint64_t now, int lazy);
	void *arg;
};

static const char *prog = "cache-ttl";

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return mix64(h);
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		die("%s: out of memory", prog);
	return p;
}

static uint64_t entry_id(const struct cache *c, uint32_t i)
{
	return (uint64_t)c->e[i].gen << 32 | i;
}

static void cache_init(struct cache *c, uint64_t tick_ns)
{
	memset(c, 0, sizeof(*c));
	c->wfd = open_wheel(tick_ns, TWHEEL_DEFAULT_TIMEOUT_NS);
	c->nbuckets = 1024;
	c->bucket = xcalloc(c->nbuckets, sizeof(*c->bucket));
	memset(c->bucket, 0xff, c->nbuckets * sizeof(*c->bucket));
	c->nfree_head = UINT32_MAX;
}

static void rehash(struct cache *c)
{
	uint32_t nb = c->nbuckets * 2;
	uint32_t *b = xcalloc(nb, sizeof(*b));

	memset(b, 0xff, nb * sizeof(*b));
	for (uint32_t i = 0; i < c->cap; i++) {
		if (!c->e[i].used)
			continue;
		c->e[i].next = b[c->e[i].hash & (nb - 1)];
		b[c->e[i].hash & (nb - 1)] = i;
	}
	free(c->bucket);
	c->bucket = b;
	c->nbuckets = nb;
}

static uint32_t *find_link(struct cache *c, const char *key, uint64_t h)
{
	uint32_t *link = &c->bucket[h & (c->nbuckets - 1)];

	while (*link != UINT32_MAX) {
		struct entry *e = &c->e[*link];

		if (e->hash == h && !strcmp(e->key, key))
			return link;
		link = &e->next;
	}
	return link;
}

/* Unlink slot i (found through *link) and free it. */
static void remove_at(struct cache *c, uint32_t *link)
{
	uint32_t i = *link;
	struct entry *e = &c->e[i];

	*link = e->next;
	free(e->key);
	free(e->value);
	e->key = e->value = NULL;
	e->used = 0;
	e->next = c->nfree_head;
	c->nfree_head = i;
	c->size--;
}

static int arm_entry(struct cache *c, uint32_t i)
{
	struct twheel_arm a;

	memset(&a, 0, sizeof(a));
	a.id = entry_id(c, i);
	a.timeout_ns = c->e[i].deadline;
	a.flags = TWHEEL_ARM_ABSTIME;
	return twheel_arm(c->wfd, &a, 1, NULL);
}

/* set: insert or replace, expiring ttl_ns from now. */
static int cache_set(struct cache *c, const char *key, const char *value, uint64_t ttl_ns)
{
	uint64_t h = str_hash(key);
	uint32_t *link = find_link(c, key, h), i;
	struct entry *e;

	if (*link != UINT32_MAX) {
		i = *link;
		e = &c->e[i];
		free(e->value);
		e->value = xstrdup(value);
	} else {
		if (c->nfree_head == UINT32_MAX) {
			uint32_t ncap = c->cap ? c->cap * 2 : 1024;
			struct entry *ne = realloc(c->e, ncap * sizeof(*ne));

			if (!ne || ncap > UINT32_MAX / 2)
				die("%s: out of memory", prog);
			memset(ne + c->cap, 0, (ncap - c->cap) * sizeof(*ne));
			for (uint32_t k = ncap; k-- > c->cap;) {
				ne[k].next = c->nfree_head;
				c->nfree_head = k;
			}
			c->e = ne;
			c->cap = ncap;
		}
		i = c->nfree_head;
		e = &c->e[i];
		c->nfree_head = e->next;
		e->used = 1;
		e->gen++;	/* a new id: events of the slot's previous key are stale */
		e->key = xstrdup(key);
		e->value = xstrdup(value);
		e->hash = h;
		e->next = c->bucket[h & (c->nbuckets - 1)];
		c->bucket[h & (c->nbuckets - 1)] = i;
		c->size++;
		if (c->size > c->nbuckets)
			rehash(c);
	}
	e->deadline = mono_ns() + ttl_ns;
	c->st.sets++;
	return arm_entry(c, i);
}

/* get: the value, or NULL if absent or expired (then removed at once). */
static const char *cache_get(struct cache *c, const char *key)
{
	uint32_t *link = find_link(c, key, str_hash(key));
	struct entry *e;
	uint64_t now;

	if (*link == UINT32_MAX) {
		c->st.misses++;
		return NULL;
	}
	e = &c->e[*link];
	now = mono_ns();
	if (now >= e->deadline) {
		/* expired, its event not handled yet: never serve it */
		uint64_t id = entry_id(c, *link);

		twheel_cancel(c->wfd, &id, 1, NULL);
		c->st.expired_lazy++;
		c->st.misses++;
		if (c->on_expire)
			c->on_expire(c->arg, e->key, e->deadline, now, 1);
		remove_at(c, link);
		return NULL;
	}
	c->st.hits++;
	return e->value;
}

static int cache_del(struct cache *c, const char *key)
{
	uint32_t *link = find_link(c, key, str_hash(key));
	uint64_t id;

	if (*link == UINT32_MAX)
		return 0;
	id = entry_id(c, *link);
	twheel_cancel(c->wfd, &id, 1, NULL);
	remove_at(c, link);
	c->st.dels++;
	return 1;
}

/* Remaining TTL in ns, or -1 if absent/expired. */
static int64_t cache_ttl(struct cache *c, const char *key)
{
	uint32_t *link = find_link(c, key, str_hash(key));
	uint64_t now = mono_ns();

	if (*link == UINT32_MAX || c->e[*link].deadline <= now)
		return -1;
	return (int64_t)(c->e[*link].deadline - now);
}

/* Active expiry: handle the wheel's events; returns how many were read. */
static size_t cache_expire(struct cache *c)
{
	struct twheel_event ev[EV_BATCH];
	size_t total = 0;

	for (;;) {
		ssize_t n = read_events(c->wfd, ev, EV_BATCH, "read wheel");
		uint64_t now = mono_ns();

		if (!n)
			return total;
		total += (size_t)n;
		for (ssize_t k = 0; k < n; k++) {
			uint32_t i = (uint32_t)ev[k].id, *link;
			struct entry *e = i < c->cap ? &c->e[i] : NULL;

			if (!e || !e->used || e->gen != (uint32_t)(ev[k].id >> 32) ||
			    e->deadline > now) {
				c->st.stale_events++;
				continue;
			}
			link = find_link(c, e->key, e->hash);
			c->st.expired_wheel++;
			hist_add(&c->st.late, now - e->deadline);
			if (c->on_expire)
				c->on_expire(c->arg, e->key, e->deadline, now, 0);
			remove_at(c, link);
		}
		if (n < EV_BATCH)
			return total;
	}
}

/* ------------------------------------------------------------- options */

struct opts {
	int test;
	uint64_t keys;
	uint64_t duration_ns;
	uint64_t ttl_min_ns, ttl_max_ns;
	uint64_t tick_ns;
	uint64_t max_late_ns;
	uint64_t seed;
	int quiet;
};

static void usage(FILE *f, int status)
{
	usage_exit(f, status, "[--test] [options]",
"A key-value cache whose keys expire through /dev/twheel.\n"
"\n"
"Without --test, commands are read from stdin, one per line:\n"
"  set KEY VALUE TTL_MS   store VALUE under KEY for TTL_MS milliseconds\n"
"  get KEY                print the value, or (nil) if absent or expired\n"
"  del KEY                remove KEY\n"
"  ttl KEY                remaining time to live in ms, or -1\n"
"  size                   number of keys held\n"
"  sleep MS               wait (expirations are handled meanwhile)\n"
"  stats                  counters of the cache and of the wheel\n"
"Keys removed by the wheel are reported as they expire.\n"
"\n"
"options:\n"
"  --test               run a random workload against a model and check it:\n"
"                       no key served after its TTL, none lost before it,\n"
"                       every key removed by the wheel in the end\n"
"  --keys N             test: key space (default 5000)\n"
"  --duration SEC       test: workload time (default 4)\n"
"  --ttl-ms MIN,MAX     test: TTLs drawn from [MIN, MAX] ms (default 10,1500)\n"
"  --tick-ms MS         wheel tick (default 1)\n"
"  --max-late-ms MS     test: wheel lateness that fails (default 5000)\n"
"  --seed N             test: seed (default 1)\n"
"  --quiet              interactive: no expiry messages\n"
"  --help               this text\n"
"\n"
"Exit status: 0 success, 1 check failed, 2 usage error.\n");
}

/* --ttl-ms MIN,MAX: 0 < MIN <= MAX <= one day */
static int parse_ttl_ms(char *val, void *dst)
{
	struct opts *o = dst;
	uint64_t v, w;

	if (parse_pair(val, parse_u64, &v, &w) < 0 || !v || v > w || w > 86400000)
		return -1;
	o->ttl_min_ns = v * NSEC_PER_MSEC;
	o->ttl_max_ns = w * NSEC_PER_MSEC;
	return 0;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	const struct opt opts[] = {
		{ "test", OPT_FLAG, .dst = &o->test },
		{ "keys", OPT_U64, &o->keys, .min = 1, .max = 1000000, .def = "5000" },
		{ "duration", OPT_SECONDS, &o->duration_ns, .min = 1, .max = UINT64_MAX,
		  .def = "4" },
		{ "ttl-ms", OPT_CUSTOM, o, .parse = parse_ttl_ms, .def = "10,1500" },
		{ "tick-ms", OPT_MS, &o->tick_ns, .min = 1, .max = 60000, .def = "1" },
		{ "max-late-ms", OPT_MS, &o->max_late_ns, .min = 1, .max = 3600000, .def = "5000" },
		{ "seed", OPT_U64, &o->seed, .min = 0, .max = UINT64_MAX, .def = "1" },
		{ "quiet", OPT_FLAG, .dst = &o->quiet },
		{ NULL },
	};

	memset(o, 0, sizeof(*o));
	parse_opts(argc, argv, opts, OPTS_NO_OPERANDS);
}

/* ---------------------------------------------------------------- the test */

struct mkey {
	uint64_t t0, t1, ttl;	/* set between t0 and t1 (our clock), for ttl */
	uint64_t ver;
	uint8_t live;		/* set and not removed, as far as the model knows */
};

struct tstate {
	const struct opts *o;
	struct cache *c;
	struct mkey *m;
	uint64_t rng, ver, gets;
	uint64_t last_deadline;		/* of the keys set */
	uint64_t early_expire, served_late, wrong_value, vanished, phantom, early_miss;
	uint64_t hits_at_end;		/* hits of the workload */
	uint64_t removed_wheel_final;	/* keys the wheel removed after it */
};

static void test_on_expire(void *arg, const char *key, uint64_t deadline, uint64_t now, int lazy)
{
	struct tstate *t = arg;
	struct mkey *m = &t->m[strtoull(key + 1, NULL, 10)];

	(void)lazy;
	if (now < deadline || deadline < m->t0 + m->ttl || now < m->t0 + m->ttl) {
		t->early_expire++;
		fprintf(stderr, "%s: EARLY expiry of %s: %.3f ms before its TTL\n", prog, key,
			(double)(m->t0 + m->ttl - now) / 1e6);
	}
	m->live = 0;
}

/* set with a random TTL; the model remembers when and for how long. */
static void test_set(struct tstate *t, struct mkey *m, const char *key)
{
	const struct opts *o = t->o;
	uint64_t ttl = o->ttl_min_ns + (uint64_t)(rng_unit(&t->rng) *
		(double)(o->ttl_max_ns - o->ttl_min_ns));
	char val[32];

	snprintf(val, sizeof(val), "v%" PRIu64, ++t->ver);
	m->t0 = mono_ns();
	if (cache_set(t->c, key, val, ttl) < 0)
		die("%s: set: %s", prog, strerror(errno));
	m->t1 = mono_ns();
	m->ttl = ttl;
	m->ver = t->ver;
	m->live = 1;
	if (m->t1 + ttl > t->last_deadline)
		t->last_deadline = m->t1 + ttl;
}

/* get, checked against the model: never a value past its TTL, never a wrong one. */
static void test_get(struct tstate *t, struct mkey *m, const char *key)
{
	uint64_t g0 = mono_ns(), g1;
	const char *v = cache_get(t->c, key);
	char val[32];

	g1 = mono_ns();
	t->gets++;
	if (v) {
		snprintf(val, sizeof(val), "v%" PRIu64, m->ver);
		if (!m->live)
			t->phantom++;
		else if (strcmp(v, val))
			t->wrong_value++;
		if (g0 >= m->t1 + m->ttl) {
			t->served_late++;
			fprintf(stderr, "%s: SERVED %s %.3f ms after its TTL\n", prog, key,
				(double)(g0 - m->t1 - m->ttl) / 1e6);
		}
	} else if (m->live) {
		/* a miss must come from an expiry we were told of */
		t->vanished++;
		if (g1 < m->t0 + m->ttl)
			t->early_miss++;
	}
}

/* One random operation: 30% set, 3% del, the rest get. */
static void test_op(struct tstate *t)
{
	uint64_t ki = rng_next(&t->rng) % t->o->keys;
	double r = rng_unit(&t->rng);
	struct mkey *m = &t->m[ki];
	char key[32];

	snprintf(key, sizeof(key), "k%" PRIu64, ki);
	if (r < 0.30) {
		test_set(t, m, key);
	} else if (r < 0.33) {
		cache_del(t->c, key);
		m->live = 0;
	} else {
		test_get(t, m, key);
	}
}

/* The workload: batches of 64 operations, the wheel's events in between. */
static void test_workload(struct tstate *t, struct pollfd *pfd)
{
	uint64_t t_end = mono_ns() + t->o->duration_ns;

	while (mono_ns() < t_end) {
		for (int k = 0; k < 64; k++)
			test_op(t);
		if (poll(pfd, 1, 1) > 0)
			cache_expire(t->c);
	}
	t->hits_at_end = t->c->st.hits;
}

/* No more reads: every key left must now go through the wheel. */
static void test_drain(struct tstate *t, struct pollfd *pfd)
{
	struct cache *c = t->c;
	uint64_t wheel_before = c->st.expired_wheel;
	uint64_t limit = t->last_deadline + t->o->max_late_ns;

	while (c->size > 0 && mono_ns() < limit) {
		if (poll(pfd, 1, 100) > 0)
			cache_expire(c);
	}
	t->removed_wheel_final = c->st.expired_wheel - wheel_before;
}

/* The verdict, printed; 1 if everything checked out. */
static int test_report(const struct tstate *t)
{
	const struct cache *c = t->c;
	const struct opts *o = t->o;
	struct twheel_stats ws;
	char h[80];
	int ok;

	memset(&ws, 0, sizeof(ws));
	twheel_stats(c->wfd, &ws);
	ok = t->early_expire == 0 && t->served_late == 0 && t->wrong_value == 0 &&
	     t->vanished == 0 && t->phantom == 0 && c->size == 0 && ws.armed == 0 &&
	     ws.pending == 0 && c->st.stale_events == 0 && c->st.late.max_ns <= o->max_late_ns;
	printf("cache-ttl: verification summary\n");
	report_line("workload", "%" PRIu64 " sets, %" PRIu64 " gets (%" PRIu64 " hits), %" PRIu64
		    " dels", c->st.sets, t->gets, t->hits_at_end, c->st.dels);
	check_line("never served late", !t->served_late && !t->wrong_value && !t->phantom,
		   "%" PRIu64 " values served after their TTL, %" PRIu64 " wrong values, %" PRIu64
		   " deleted keys served", t->served_late, t->wrong_value, t->phantom);
	check_line("never early", !t->early_expire && !t->vanished,
		   "%" PRIu64 " keys expired before their TTL, %" PRIu64 " live keys missing (%"
		   PRIu64 " before their TTL)", t->early_expire, t->vanished, t->early_miss);
	check_line("every key expires", !c->size && !ws.armed && !ws.pending && !c->st.stale_events,
		   "%" PRIu64 " removed by the wheel (%" PRIu64 " after the workload), %" PRIu64
		   " lazily by get; %u left, wheel armed %" PRIu64 " pending %" PRIu64 ", %" PRIu64
		   " stale events", c->st.expired_wheel, t->removed_wheel_final,
		   c->st.expired_lazy, c->size, (uint64_t)ws.armed, (uint64_t)ws.pending,
		   c->st.stale_events);
	check_line("wheel lateness", c->st.late.max_ns <= o->max_late_ns,
		   "removal - deadline: %s; failing bound %.0f ms",
		   fmt_hist(h, sizeof(h), &c->st.late), (double)o->max_late_ns / 1e6);
	printf("cache-ttl: %s\n", ok ? "VERIFIED" : "VERIFICATION FAILED");
	return ok;
}

static int run_test(const struct opts *o)
{
	struct cache c;
	struct tstate t;
	struct pollfd pfd;

	cache_init(&c, o->tick_ns);
	memset(&t, 0, sizeof(t));
	t.o = o;
	t.c = &c;
	t.m = xcalloc(o->keys, sizeof(*t.m));
	t.rng = o->seed * 0x9e3779b97f4a7c15ULL + 3;
	c.on_expire = test_on_expire;
	c.arg = &t;
	pfd.fd = c.wfd;
	pfd.events = POLLIN;

	printf("cache-ttl: test: %" PRIu64 " keys, TTL %.0f..%.0f ms, %.1f s of random"
	       " set/get/del, tick %.1f ms\n", o->keys, (double)o->ttl_min_ns / 1e6,
	       (double)o->ttl_max_ns / 1e6, (double)o->duration_ns / 1e9, (double)o->tick_ns / 1e6);
	fflush(stdout);
	test_workload(&t, &pfd);
	test_drain(&t, &pfd);
	return test_report(&t) ? 0 : 1;
}

/* --------------------------------------------------------- interactive */

static void print_on_expire(void *arg, const char *key, uint64_t deadline, uint64_t now, int lazy)
{
	(void)arg;
	printf("expired %s (%s, %.1f ms after its deadline)\n", key,
	       lazy ? "on access" : "by the wheel", (double)(now - deadline) / 1e6);
	fflush(stdout);
}

static void command(struct cache *c, char *line)
{
	char *argv[5], *save = NULL, *tok;
	int argc = 0;
	uint64_t ms;

	for (tok = strtok_r(line, " \t\r", &save); tok && argc < 5;
	     tok = strtok_r(NULL, " \t\r", &save))
		argv[argc++] = tok;
	if (argc == 0 || argv[0][0] == '#')
		return;
	if (!strcmp(argv[0], "set") && argc == 4 && parse_u64(argv[3], &ms) == 0 && ms &&
	    ms <= 100ULL * 366 * 86400 * 1000) {
		int r = cache_set(c, argv[1], argv[2], ms * NSEC_PER_MSEC);

		if (r < 0)
			printf("ERROR %s\n", twheel_strerror(r));
		else
			printf("OK\n");
	} else if (!strcmp(argv[0], "get") && argc == 2) {
		const char *v = cache_get(c, argv[1]);

		printf("%s\n", v ? v : "(nil)");
	} else if (!strcmp(argv[0], "del") && argc == 2) {
		printf("%s\n", cache_del(c, argv[1]) ? "DELETED" : "NOT FOUND");
	} else if (!strcmp(argv[0], "ttl") && argc == 2) {
		int64_t ns = cache_ttl(c, argv[1]);

		printf("%" PRId64 "\n", ns < 0 ? (int64_t)-1 : ns / (int64_t)NSEC_PER_MSEC);
	} else if (!strcmp(argv[0], "size") && argc == 1) {
		printf("%u\n", c->size);
	} else if (!strcmp(argv[0], "sleep") && argc == 2 && parse_u64(argv[1], &ms) == 0 &&
		   ms <= 86400000) {
		uint64_t until = mono_ns() + ms * NSEC_PER_MSEC;
		struct pollfd p = { .fd = c->wfd, .events = POLLIN };

		fflush(stdout);
		for (uint64_t now; (now = mono_ns()) < until;) {
			if (poll(&p, 1, (int)((until - now) / NSEC_PER_MSEC) + 1) > 0)
				cache_expire(c);
		}
	} else if (!strcmp(argv[0], "stats") && argc == 1) {
		struct twheel_stats ws;

		memset(&ws, 0, sizeof(ws));
		twheel_stats(c->wfd, &ws);
		printf("keys %u sets %" PRIu64 " hits %" PRIu64 " misses %" PRIu64 " dels %" PRIu64
		       " expired_wheel %" PRIu64 " expired_lazy %" PRIu64 " | wheel armed %" PRIu64
		       " pending %" PRIu64 " timer_fires %" PRIu64 " mem %" PRIu64 " B\n",
		       c->size, c->st.sets, c->st.hits, c->st.misses, c->st.dels,
		       c->st.expired_wheel, c->st.expired_lazy, (uint64_t)ws.armed,
		       (uint64_t)ws.pending, (uint64_t)ws.timer_fires, (uint64_t)ws.mem_bytes);
	} else {
		printf("ERROR bad command; use: set KEY VALUE TTL_MS | get KEY | del KEY |"
		       " ttl KEY | size | sleep MS | stats\n");
	}
	fflush(stdout);
}

static int run_interactive(const struct opts *o)
{
	struct cache c;
	struct pollfd p[2];
	char buf[8192];
	size_t len = 0;
	int eof = 0;

	cache_init(&c, o->tick_ns);
	if (!o->quiet)
		c.on_expire = print_on_expire;
	p[0].fd = STDIN_FILENO;
	p[0].events = POLLIN;
	p[1].fd = c.wfd;
	p[1].events = POLLIN;
	while (!eof) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("%s: poll: %s", prog, strerror(errno));
		}
		if (p[1].revents & POLLIN)
			cache_expire(&c);
		if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r = read(STDIN_FILENO, buf + len, sizeof(buf) - 1 - len);
			char *start = buf, *nl;

			if (r <= 0) {
				if (r < 0 && errno == EINTR)
					continue;
				eof = 1;
				if (len < sizeof(buf))
					buf[len++] = '\n';	/* a last unterminated line */
			} else {
				len += (size_t)r;
			}
			while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
				*nl = '\0';
				command(&c, start);
				start = nl + 1;
			}
			len -= (size_t)(start - buf);
			memmove(buf, start, len);
			if (len == sizeof(buf) - 1) {
				printf("ERROR line too long\n");
				len = 0;
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;

	set_prog(argc, argv);
	parse_args(argc, argv, &o);
	return o.test ? run_test(&o) : run_interactive(&o);
}
