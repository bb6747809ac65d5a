// SPDX-License-Identifier: GPL-2.0
/*
 * Contender "inproc": the module's wheel and index (kmod/wheel.c and index.c,
 * built with the user-space shims of tools/include) driven in this process
 * the way the module drives them, with the core's batches and policies:
 * chunks of TW_HOLD_IDS touches with one clock read each, index lookup or
 * insert, then tw_wheel_set() (a later deadline of an armed id is written
 * to its index entry only; a touch of a queued id discards its event and
 * re-arms the id), the index resized incrementally as the core's resize
 * policy says, advance() in batches of TW_HOLD_NODES nodes and a drain
 * of the ready queue that pops each event, looks its entry up, removes it
 * and frees the node.  Nodes come from malloc(), the ready queue's
 * sentinel too.  No lock, no system call: the floor that the module's
 * write()/read() are measured against.
 *
 * Compiled with -I tools/include -I kmod: no uapi header here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "wheel.h"
#include "bench.h"

struct ip {
	struct contender c;
	struct tw_index x;
	uint64_t hold_max;
	struct tw_wheel w;	/* last: it holds the slot array */
};

static struct ip *ip_of(struct contender *c)
{
	return (struct ip *)c;
}

void inproc_info(struct contender *c, struct inproc_info *i)
{
	struct ip *p = ip_of(c);

	i->nodes = p->x.nr;
	i->index_bytes = sizeof(struct tw_ent) * (p->x.size + p->x.old_size);
	i->node_size = sizeof(struct tw_node);
	i->reslots = p->w.reslots;
	i->hold_max_ns = p->hold_max;
}

static int ip_open(struct contender **cp, const struct copts *o)
{
	struct ip *p = xcalloc(1, sizeof(*p));
	struct tw_node *sentinel = xcalloc(1, sizeof(*sentinel));
	u64 secret[TW_SECRET_WORDS];

	/* a secret per wheel, as the module draws one per fd */
	if (getrandom(secret, sizeof(secret), 0) != sizeof(secret))
		die("getrandom: %s", strerror(errno));
	tw_index_init(&p->x, xcalloc(TW_IDX_MIN, sizeof(struct tw_ent)),
		      TW_IDX_MIN, secret);
	tw_wheel_init(&p->w, o->tick_ns, mono_ns(), &p->x, sentinel);
	*cp = &p->c;
	return 0;
}

/*
 * Resize the index incrementally, as the module does once per batch of
 * @ids ids that may be added (tw_maintain()), by the core's protocol
 * (tw_index_upkeep()): a resize finished first if the batch needs it, a
 * new table when tw_index_want_size() asks for one, then the batch's share
 * migrated; the old table is freed when the last entry has left it.
 * Afterwards the index has room for the batch's ids.
 */
static void ip_maintain(struct ip *p, unsigned long ids)
{
	struct tw_ent *old, *tab;
	unsigned long size;
	int step;

	do {
		step = tw_index_upkeep(&p->x, ids, &size, &old);
		free(old);
		if (step == TW_UPKEEP_ALLOC) {
			tab = xcalloc(size, sizeof(*tab));
			/* one caller: the table it asked for is taken */
			if (!tw_index_offer(&p->x, ids, tab, size))
				free(tab);
		}
	} while (step != TW_UPKEEP_DONE);
}

/*
 * What the module's work item does when the ids stop while a resize is
 * still migrating: finish it, off the touches' clock.
 */
static void ip_settle(struct contender *c)
{
	struct ip *p = ip_of(c);

	if (p->x.old)
		free(tw_index_migrate(&p->x, ~0UL));
}

/*
 * Set @id's deadline, creating it if absent: the module's tw_set().  The
 * index has room for a new id: ip_maintain() made it for the batch.
 */
static int ip_set(struct ip *p, uint64_t id, uint64_t deadline, uint64_t now)
{
	struct tw_ent *e = tw_index_find(&p->x, id);
	struct tw_node *n;

	if (e) {
		tw_wheel_set(&p->w, e, deadline, now);
		return 0;
	}
	if (!tw_index_room(&p->x))
		return -ENOSPC;
	n = malloc(sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->id = id;
	n->data = 0;
	tw_wheel_place(&p->w, tw_index_insert(&p->x, n, 0), deadline, now);
	return 0;
}

static int ip_arm_abs(struct contender *c, const uint64_t *ids,
		      const uint64_t *deadlines, size_t n)
{
	struct ip *p = ip_of(c);
	size_t i = 0;

	while (i < n) {
		size_t k = n - i < TW_HOLD_ARMS ? n - i : TW_HOLD_ARMS, j;
		uint64_t now;

		ip_maintain(p, k);
		now = mono_ns();
		tw_wheel_catch_up(&p->w, now);
		for (j = 0; j < k; j++, i++) {
			int err = ip_set(p, ids[i], deadlines[i], now);

			if (err)
				return err;
		}
	}
	c->n_ids = p->x.nr;
	return 0;
}

static int ip_touch(struct contender *c, const uint64_t *ids, size_t n,
		    uint64_t now_unused)
{
	struct ip *p = ip_of(c);
	size_t i = 0;

	(void)now_unused;
	while (i < n) {
		size_t k = n - i < TW_HOLD_IDS ? n - i : TW_HOLD_IDS, j;
		uint64_t now, deadline;

		ip_maintain(p, k);
		now = mono_ns();
		tw_wheel_catch_up(&p->w, now);
		deadline = now + c->o.timeout_ns;
		for (j = 0; j < k; j++, i++) {
			int err = ip_set(p, ids[i], deadline, now);

			if (err)
				return err;
		}
	}
	c->n_ids = p->x.nr;
	return 0;
}

/*
 * Deliver every queued event: pop its node, look its entry up (for the
 * deadline), remove the entry and free the node.
 */
static void ip_drain(struct ip *p, struct sink *s, uint64_t seen)
{
	unsigned long freed = 0;

	while (p->w.nr_ready) {
		struct tw_node *n = tw_wheel_pop(&p->w);
		struct tw_ent *ent = tw_index_find(&p->x, n->id);
		struct bench_event e = {
			.id = n->id,
			.deadline = tw_ent_deadline(ent),
			.queued = n->expired,
			.seen = seen,
		};

		s->fn(s, &e);
		tw_index_remove(&p->x, ent);
		free(n);
		if (++freed % 16 == 0)
			ip_maintain(p, 16);
	}
	ip_maintain(p, freed % 16);
	p->c.n_ids = p->x.nr;
}

static int ip_wait(struct contender *c, uint64_t until, struct sink *s)
{
	struct ip *p = ip_of(c);

	bool once = false;

	/* at least one look, even when @until has passed already */
	while (!s->done) {
		uint64_t now = mono_ns(), due;
		u64 tick;

		if (p->w.nr_ready) {		/* queued by arm_abs() */
			ip_drain(p, s, now);
			continue;
		}
		if (now >= until && once)
			break;
		once = true;
		if (!tw_wheel_next(&p->w, &tick)) {
			if (now < until)
				sleep_until_ns(until);
			continue;
		}
		due = tick > UINT64_MAX / p->w.tick_ns ? UINT64_MAX :
			tick * p->w.tick_ns;
		if (due > now) {
			if (now < until)
				sleep_until_ns(due < until ? due : until);
			continue;
		}
		for (;;) {
			unsigned int budget = TW_HOLD_NODES;
			uint64_t t0 = mono_ns(), held;
			bool more = tw_wheel_advance(&p->w, t0, &budget);

			held = mono_ns() - t0;
			if (held > p->hold_max)
				p->hold_max = held;
			free(tw_index_migrate(&p->x, TW_HOLD_NODES));
			if (!more)
				break;
		}
		ip_drain(p, s, mono_ns());
	}
	return 0;
}

static void ip_close(struct contender *c)
{
	struct ip *p = ip_of(c);
	unsigned long pos = 0;
	struct tw_node *n;

	/* every node is in the index, queued ones too, but the sentinel */
	free(tw_wheel_sentinel(&p->w));
	while ((n = tw_index_pop(&p->x, &pos)))
		free(n);
	free(p->x.old);
	free(p->x.tab);
	free(p);
}

const struct contender_ops inproc_ops =
	CONTENDER_OPS("inproc", ip_open, ip_arm_abs,
		      ip_touch, ip_wait, ip_close, ip_settle);
