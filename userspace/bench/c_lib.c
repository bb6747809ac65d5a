// SPDX-License-Identifier: GPL-2.0
/*
 * What the libev, libevent and libuv contenders share: the map id ->
 * record, a record being what a service keeps per id (the library's timer,
 * the id and, for the bench, the deadline asked for), one malloc() each.
 */
#include <stdlib.h>

#include "bench.h"

bool is_lib(const struct contender_ops *ops)
{
	return ops == &libev_ops || ops == &libevent_ops || ops == &libuv_ops;
}

void lib_init(struct lib_contender *l, const struct copts *o, size_t rec_size,
	      int (*run)(struct lib_contender *l, uint64_t now, uint64_t until))
{
	hmap_init(&l->map, o->n_max);
	l->rec_size = rec_size;
	l->run = run;
}

static int lib_look(struct contender *c, uint64_t now, uint64_t until,
		    struct sink *s)
{
	struct lib_contender *l = (struct lib_contender *)c;

	(void)s;
	l->seen = 0;
	return l->run(l, now, until);
}

int lib_wait(struct contender *c, uint64_t until, struct sink *s)
{
	struct lib_contender *l = (struct lib_contender *)c;
	int err;

	l->sink = s;
	err = wait_loop(c, until, s, lib_look);
	l->sink = NULL;
	return err;
}

void *lib_find(struct lib_contender *l, uint64_t id)
{
	uint64_t *v = hmap_find(&l->map, id);

	return v ? (void *)(uintptr_t)*v : NULL;
}

void *lib_get(struct lib_contender *l, uint64_t id, int *added)
{
	uint64_t *v = hmap_upsert(&l->map, id, added);
	void *rec;

	if (!*added)
		return (void *)(uintptr_t)*v;
	rec = malloc(l->rec_size);
	if (!rec) {
		hmap_delete(&l->map, id);
		return NULL;
	}
	*v = (uintptr_t)rec;
	l->c.n_ids = l->map.nr;
	return rec;
}

void lib_forget(struct lib_contender *l, uint64_t id)
{
	hmap_delete(&l->map, id);
	l->c.n_ids = l->map.nr;
}

void lib_free_all(struct lib_contender *l, void (*dispose)(void *rec))
{
	uint64_t i;

	for (i = 0; i <= l->map.mask; i++) {
		void *rec = (void *)(uintptr_t)l->map.vals[i];

		if (l->map.keys[i] == HMAP_EMPTY)
			continue;
		if (dispose)
			dispose(rec);
		else
			free(rec);
	}
	hmap_free(&l->map);
	l->c.n_ids = 0;
}

void lib_expire(struct lib_contender *l, uint64_t id, uint64_t deadline)
{
	struct bench_event e = { .id = id, .deadline = deadline };

	/*
	 * The bench's clock, read once per batch of expirations (0: not
	 * yet), and read again if it is older than the deadline, which the
	 * library's clock has passed (so the batch's clock went stale).
	 */
	if (l->seen < deadline)
		l->seen = mono_ns();
	e.seen = l->seen;
	lib_forget(l, id);
	l->sink->fn(l->sink, &e);
}
