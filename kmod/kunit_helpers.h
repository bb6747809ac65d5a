/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the KUnit suites of twheel_kunit.ko share: kunit_helpers.c makes
 * wheels, indexes, nodes and ids, kunit_checks.c checks them.
 *
 * twheel_kunit.ko is built only for a kernel with KUnit (kmod/Kbuild) and
 * runs its suites, one per *_kunit.c, when it is loaded (insmod
 * twheel_kunit.ko [kunit_seed=N]); their KTAP results are in
 * /sys/kernel/debug/kunit/<suite>/results (CONFIG_KUNIT_DEBUGFS) until it
 * is unloaded.  The same files are also a user-space program,
 * selftests/core/kunit_core (make check's host tier, TWHEEL_SEED=N for
 * kunit_seed=N), built over the shims of tools/include: what the suites
 * use of the kernel's API must exist there too.
 *
 * Every node and table comes from kunit_kzalloc()/kunit_kcalloc(), so it is
 * freed when the test case ends, whatever the outcome.
 *
 * Every wheel has an index and a sentinel (twt_wheel()), and every node a
 * test arms gets an entry first (twt_add()).  A node holds an id's event
 * only until the event is queued: tw_wheel_expire() writes it into the
 * sentinel, and tw_wheel_discard() may move it again.  So the wheel cases
 * check an armed id through its node, and a queued one through its id
 * (twt_expect_expired()), never through the node it was armed with.
 */
#ifndef _TWHEEL_KUNIT_HELPERS_H
#define _TWHEEL_KUNIT_HELPERS_H

#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/types.h>

#include "wheel.h"

#define TWT_MS		1000000ULL

/* The index of each wheel test: room for 240 ids (tw_index_room()). */
#define TWT_IDX_SIZE	256

/*
 * The index tests keep their own record of what the index should hold in
 * each node's data word, which the index never reads: TWT_IN set while the
 * id is in the index, and the deadline its entry must carry.
 */
#define TWT_IN		BIT_ULL(63)

/* A test's index: @nr nodes with ids @id0.., none in the index yet. */
struct twt_ix {
	struct kunit *test;
	struct tw_index x;
	struct tw_node *nodes;
	unsigned int nr;
	u8 *seen;
	struct tw_ent *old;	/* the table tw_index_migrate() must return */
	unsigned long returned;	/* old tables returned */
};

/* An event as the queue must hold it, with the data twt_arm() gives. */
struct twt_ev {
	u64 id;
	u64 expired;
};

/* The seed of the secrets and random cases: the module parameter. */
extern ulong kunit_seed;

int twt_suite_init(struct kunit_suite *suite);

/* kunit_helpers.c */
u64 twt_rand(u64 *s);
u64 twt_seed(u64 salt);
void twt_secret(u64 secret[TW_SECRET_WORDS]);
u64 twt_data(u64 id);
struct tw_ent *twt_tab(struct kunit *test, unsigned long size);
struct tw_wheel *twt_wheel(struct kunit *test, u64 tick_ns, u64 now);
void twt_reinit(struct tw_wheel *w, u64 tick_ns, u64 now);
struct tw_node *twt_nodes(struct kunit *test, unsigned int nr);
struct tw_ent *twt_ent(struct kunit *test, const struct tw_wheel *w,
		       u64 id);
void twt_add(struct kunit *test, struct tw_wheel *w, struct tw_node *n,
	     u64 deadline);
struct tw_node *twt_arm(struct kunit *test, struct tw_wheel *w,
			u64 id, u64 deadline);
void twt_later(struct kunit *test, struct tw_wheel *w, u64 id,
	       u64 deadline);
void twt_disarm(struct kunit *test, struct tw_wheel *w,
		struct tw_node *n);
void twt_expire_now(struct kunit *test, struct tw_wheel *w,
		    struct tw_ent *e, u64 now);
void twt_new_now(struct kunit *test, struct tw_wheel *w, u64 id,
		 u64 deadline, u64 now);
bool twt_in(const struct tw_node *n);
u64 twt_want_deadline(const struct tw_node *n);
u64 twt_home_key(unsigned long h, unsigned long size);
struct twt_ix *twt_ix(struct kunit *test, unsigned long size,
		      unsigned int nr);
bool twt_in_tab(const struct tw_index *x, const struct tw_ent *e);
struct tw_ent *twt_ins(struct twt_ix *c, unsigned int i, u64 deadline);
void twt_rm(struct twt_ix *c, unsigned int i);
void twt_resize(struct twt_ix *c, unsigned long size);
bool twt_migrate(struct twt_ix *c, unsigned long entries);
struct tw_wheel *twt_queue5(struct kunit *test, struct twt_ev *ev);

/* kunit_checks.c */
bool twt_where(struct kunit *test, const struct tw_wheel *w,
	       const struct tw_node *n, unsigned int *lvl,
	       unsigned int *slot);
bool twt_in_drain(const struct tw_wheel *w, const struct tw_node *n);
void twt_expect_at(struct kunit *test, const struct tw_wheel *w,
		   const struct tw_node *n, unsigned int lvl,
		   unsigned int slot);
void twt_check_pending(struct kunit *test, const struct tw_wheel *w);
void twt_advance(struct kunit *test, struct tw_wheel *w, u64 now);
bool twt_on_queue(const struct tw_wheel *w, const struct tw_node *n);
void twt_check_queue(struct kunit *test, const struct tw_wheel *w);
void twt_check_armed(struct kunit *test, const struct tw_wheel *w);
bool twt_queued(const struct tw_wheel *w, u64 id);
void twt_expect_armed(struct kunit *test, const struct tw_wheel *w,
		      const struct tw_node *n);
void twt_expect_event(struct kunit *test, const struct tw_wheel *w,
		      u64 id, u64 data, u64 when);
void twt_expect_expired(struct kunit *test, const struct tw_wheel *w,
			u64 id, u64 when);
unsigned int twt_run_ticks(struct kunit *test, struct tw_wheel *w,
			   const struct tw_node *nodes, unsigned int nr,
			   const u64 *ticks);
unsigned int twt_run_timer(struct kunit *test, struct tw_wheel *w,
			   const struct tw_node *nodes, unsigned int nr);
unsigned long twt_check_tab(struct twt_ix *c, const struct tw_ent *t,
			    unsigned long size, unsigned long empty);
void twt_check(struct twt_ix *c);
void twt_ev_set(struct twt_ev *ev, u64 id, u64 expired);
void twt_ev_del(struct twt_ev *ev, unsigned int nr, unsigned int k);
void twt_expect_events(struct kunit *test, const struct tw_wheel *w,
		       const struct twt_ev *ev, unsigned int nr);
void twt_read_one(struct kunit *test, struct tw_wheel *w);

#endif /* _TWHEEL_KUNIT_HELPERS_H */
