// SPDX-License-Identifier: GPL-2.0
/*
 * Contender "scan": a hash map id -> deadline (last_seen + timeout) and a
 * loop that scans the whole map once per tick.  A touch is one map update;
 * an expired id is removed from the map and reported after the scan.
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "bench.h"

struct scan {
	struct contender c;
	struct hmap map;	/* id -> deadline */
	uint64_t next_tick;
	uint64_t scans;
	uint64_t scan_ns;	/* time spent in passes over the table */
	struct bench_event *found;
	uint64_t nfound, capfound;
};

static struct scan *scan_of(struct contender *c)
{
	return (struct scan *)c;
}

uint64_t scan_table_bytes(struct contender *c)
{
	return hmap_bytes(&scan_of(c)->map);
}

uint64_t scan_count(struct contender *c)
{
	return scan_of(c)->scans;
}

double scan_pass_ns(struct contender *c)
{
	struct scan *s = scan_of(c);

	return s->scans ? (double)s->scan_ns / (double)s->scans : 0;
}

static int scan_open(struct contender **cp, const struct copts *o)
{
	struct scan *s = xcalloc(1, sizeof(*s));

	hmap_init(&s->map, o->n_max);
	*cp = &s->c;
	return 0;
}

static int scan_arm_abs(struct contender *c, const uint64_t *ids,
			const uint64_t *deadlines, size_t n)
{
	struct scan *s = scan_of(c);
	size_t i;
	int added;

	for (i = 0; i < n; i++)
		*hmap_upsert(&s->map, ids[i], &added) = deadlines[i];
	c->n_ids = s->map.nr;
	return 0;
}

static int scan_touch(struct contender *c, const uint64_t *ids, size_t n,
		      uint64_t now)
{
	struct scan *s = scan_of(c);
	uint64_t deadline = now + c->o.timeout_ns;
	size_t i;
	int added;

	for (i = 0; i < n; i++)
		*hmap_upsert(&s->map, ids[i], &added) = deadline;
	c->n_ids = s->map.nr;
	return 0;
}

/* One pass over the whole table; expired ids are removed. */
static void scan_once(struct scan *s, uint64_t now, struct sink *sk)
{
	struct hmap *m = &s->map;
	uint64_t i, seen;

	s->nfound = 0;
	for (i = 0; i <= m->mask;) {
		uint64_t d = m->vals[i];

		if (m->keys[i] == HMAP_EMPTY || d > now) {
			i++;
			continue;
		}
		if (s->nfound == s->capfound) {
			s->capfound = s->capfound ? s->capfound * 2 : 1024;
			s->found = realloc(s->found, s->capfound * sizeof(*s->found));
			if (!s->found)
				die("out of memory");
		}
		s->found[s->nfound++] = (struct bench_event){
			.id = m->keys[i], .deadline = d,
		};
		/* the cluster shifts back into i: look at i again */
		hmap_delete_at(m, i);
	}
	s->scans++;
	s->c.n_ids = m->nr;
	seen = mono_ns();
	s->scan_ns += seen - now;
	for (i = 0; i < s->nfound; i++) {
		s->found[i].seen = seen;
		sk->fn(sk, &s->found[i]);
	}
}

/* A scan if a tick is due, else sleep until one is or until @until */
static int scan_look(struct contender *c, uint64_t now, uint64_t until,
		     struct sink *sk)
{
	struct scan *s = scan_of(c);
	uint64_t tick = c->o.tick_ns;

	if (now >= s->next_tick) {
		scan_once(s, now, sk);
		/* every tick; a scan longer than a tick runs back to back */
		s->next_tick = (now / tick + 1) * tick;
	} else if (now < until) {
		sleep_until_ns(s->next_tick < until ? s->next_tick : until);
	}
	return 0;
}

static int scan_wait(struct contender *c, uint64_t until, struct sink *sk)
{
	return wait_loop(c, until, sk, scan_look);
}

static void scan_close(struct contender *c)
{
	struct scan *s = scan_of(c);

	hmap_free(&s->map);
	free(s->found);
	free(s);
}

const struct contender_ops scan_ops =
	CONTENDER_OPS("scan", scan_open, scan_arm_abs,
		      scan_touch, scan_wait, scan_close, NULL);
