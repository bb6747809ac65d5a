// SPDX-License-Identifier: MIT
/*
 * orders: unpaid orders are cancelled at their pay-by deadline (seed 003),
 * with SQLite as the system of record and twheel as the timer (seed 004's
 * "wheel + database").
 *
 *  - an order is created in a transaction (state 'unpaid', deadline on
 *    CLOCK_REALTIME), then armed on the wheel: ABSTIME deadline converted to
 *    the wheel's clock, data = order id;
 *  - an expiry cancels the order in a transaction, only if it is still
 *    unpaid and its deadline has passed;
 *  - a payment marks the order paid in a transaction, only if it is still
 *    unpaid and before its deadline, then cancels the timer;
 *  - at start every unpaid order is re-armed from the database (recovery):
 *    the wheel is only a cache of the database, so a crash anywhere (even
 *    between a commit and the matching wheel call) loses nothing.
 *
 * Every settlement also appends a row to the `events` table in the same
 * transaction; `orders check` verifies from those rows that every order
 * was paid or cancelled exactly once, never cancelled before its deadline
 * and never paid after it.  `orders torture` SIGKILLs the service at random
 * times, restarts it, drains and checks.
 *
 * Simulated customers: at creation each order gets, with --pay-fraction,
 * a time at which its customer tries to pay (table sim_payments); those
 * attempts are timers too, on a second wheel fd.  Some come after the
 * deadline and are refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <sqlite3.h>

#include "twheel.h"
#include "common.h"

#define EV_BATCH	256

struct opts {
	const char *cmd;
	const char *db;
	uint64_t window_ns;	/* deadline = created + window * U(0.5, 1) */
	double pay_fraction;
	double rate;		/* new orders per second */
	uint64_t duration_ns;	/* 0: forever (run) */
	uint64_t tick_ns;
	uint64_t kills;
	uint64_t kill_min_ns, kill_max_ns;
	uint64_t seed;
	double chaos;		/* probability of a self-SIGKILL at each crash point */
	uint64_t order_id;	/* pay */
	int drain;
	int quiet;
};

static const char *prog = "orders";

static void usage(FILE *f, int status)
{
	usage_exit(f, status, "COMMAND --db FILE [options]",
"Unpaid orders are cancelled at their pay-by deadline; SQLite is the system\n"
"of record, /dev/twheel the timer (re-armed from the database at start).\n"
"\n"
"commands:\n"
"  run        the order service: creates orders (simulated shop), takes\n"
"             simulated payments, cancels expired orders\n"
"  pay ID     pay order ID now (refused if cancelled or past its deadline)\n"
"  status     counts per state\n"
"  check      verify the database: exactly one settlement per order, no\n"
"             order left unpaid past its deadline, none cancelled early\n"
"  torture    run the service, SIGKILL it at random times --kills times,\n"
"             restart it, drain, then check\n"
"\n"
"options:\n"
"  --db FILE           the database (created if missing)\n"
"  --window SEC        pay-by window; deadlines in [window/2, window]\n"
"                      (default 86400)\n"
"  --rate N            new orders per second (run; default 20)\n"
"  --pay-fraction F    customers who try to pay, at a random time up to\n"
"                      1.2 * window (default 0.6)\n"
"  --duration SEC      run: stop after SEC (default: forever)\n"
"  --drain             run: create nothing, exit once no order is unpaid\n"
"  --tick-ms MS        wheel tick (default 10)\n"
"  --kills N           torture: SIGKILLs (default 8)\n"
"  --kill-after A,B    torture: kill after a random time in [A, B] seconds\n"
"                      (default 0.2,1.5)\n"
"  --chaos P           also SIGKILL itself with probability P at each crash\n"
"                      point (after a commit, before the wheel call, ...)\n"
"  --seed N            seed of the simulation (default: from the clock)\n"
"  --quiet             no progress lines\n"
"  --help              this text\n"
"\n"
"Exit status: 0 success (check/torture: verified), 1 failure, 2 usage error.\n");
}

/*
 * What follows the options, from argv[i]: COMMAND (and pay's order id);
 * --db is required.
 */
static void parse_command(int argc, char **argv, int i, struct opts *o)
{
	static const char *const cmds[] = { "run", "pay", "status", "check", "torture" };
	int known = 0;

	if (i >= argc)
		usage_error("missing COMMAND");
	o->cmd = argv[i++];
	for (size_t k = 0; k < ARRAY_LEN(cmds); k++)
		known |= !strcmp(o->cmd, cmds[k]);
	if (!known)
		usage_error("unknown command: %s", o->cmd);
	if (!strcmp(o->cmd, "pay")) {
		if (i >= argc || parse_u64(argv[i], &o->order_id) < 0 || !o->order_id)
			usage_error("pay needs an order id (a positive integer)");
		i++;
	}
	if (i < argc)
		usage_error("unexpected argument: %s", argv[i]);
	if (!o->db)
		usage_error("--db FILE is required");
}

/* --kill-after A,B: seconds, 0 <= A <= B, B > 0 */
static int parse_kill_after(char *val, void *dst)
{
	struct opts *o = dst;

	if (parse_pair(val, parse_seconds_ns, &o->kill_min_ns, &o->kill_max_ns) < 0 ||
	    o->kill_min_ns > o->kill_max_ns || !o->kill_max_ns)
		return -1;
	return 0;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	const struct opt opts[] = {
		{ "db", OPT_STRING, .dst = &o->db },
		{ "window", OPT_SECONDS, &o->window_ns, .min = 2 * NSEC_PER_MSEC,
		  .max = 100ULL * 366 * 86400 * NSEC_PER_SEC, .def = "86400" },
		{ "rate", OPT_DOUBLE, &o->rate, .dmax = 1e6, .def = "20" },
		{ "pay-fraction", OPT_DOUBLE, &o->pay_fraction, .dmax = 1.0, .def = "0.6" },
		{ "duration", OPT_SECONDS, &o->duration_ns, .min = 0, .max = UINT64_MAX },
		{ "drain", OPT_FLAG, .dst = &o->drain },
		{ "tick-ms", OPT_MS, &o->tick_ns, .min = 1, .max = 60000, .def = "10" },
		{ "kills", OPT_U64, &o->kills, .min = 0, .max = 10000, .def = "8" },
		{ "kill-after", OPT_CUSTOM, o, .parse = parse_kill_after, .def = "0.2,1.5" },
		{ "chaos", OPT_DOUBLE, &o->chaos, .dmax = 0.5 },
		{ "seed", OPT_U64, &o->seed, .min = 0, .max = UINT64_MAX },
		{ "quiet", OPT_FLAG, .dst = &o->quiet },
		{ NULL },
	};

	memset(o, 0, sizeof(*o));
	o->seed = mix64(real_ns() ^ (uint64_t)getpid());	/* --seed's default */
	parse_command(argc, argv, parse_opts(argc, argv, opts, 0), o);
}

/* --------------------------------------------------------------- database */

static const char schema[] =
	"PRAGMA journal_mode=WAL;"
	"PRAGMA synchronous=NORMAL;"
	"CREATE TABLE IF NOT EXISTS orders("
	"  id INTEGER PRIMARY KEY,"
	"  created_ns INTEGER NOT NULL,"		/* CLOCK_REALTIME */
	"  deadline_ns INTEGER NOT NULL,"		/* CLOCK_REALTIME */
	"  state TEXT NOT NULL CHECK(state IN ('unpaid','paid','cancelled')),"
	"  settled_ns INTEGER);"
	"CREATE INDEX IF NOT EXISTS orders_unpaid ON orders(deadline_ns) WHERE state='unpaid';"
	/* append-only audit log, written in the settling transaction */
	"CREATE TABLE IF NOT EXISTS events("
	"  seq INTEGER PRIMARY KEY,"
	"  order_id INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  at_ns INTEGER NOT NULL,"
	"  pid INTEGER NOT NULL);"
	"CREATE INDEX IF NOT EXISTS events_order ON events(order_id);"
	/* the simulated customers' intentions (not part of the shop's data) */
	"CREATE TABLE IF NOT EXISTS sim_payments("
	"  order_id INTEGER PRIMARY KEY,"
	"  pay_at_ns INTEGER NOT NULL);";

struct app {
	const struct opts *o;
	sqlite3 *db;
	sqlite3_stmt *ins_order, *ins_plan, *upd_cancel, *upd_pay, *ins_event, *sel_order;
	int ofd;	/* order deadlines: id = data = order id */
	int pfd;	/* simulated payment attempts: id = order id */
	uint64_t rng;
	uint64_t created, paid, refused, cancelled, rearmed, recovered, unpaid;
};

static void db_die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, db ? sqlite3_errmsg(db) : "out of memory");
	exit(1);
}

static void db_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "%s: %s: %s\n", prog, sql, err ? err : "?");
		exit(1);
	}
}

static sqlite3 *db_open(const char *path, int create)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0),
			    NULL) != SQLITE_OK)
		db_die(db, path);
	sqlite3_busy_timeout(db, 10000);
	db_exec(db, schema);
	return db;
}

static sqlite3_stmt *prep(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		db_die(db, sql);
	return st;
}

/* Run a statement that returns no row; returns sqlite3_changes(). */
static int step_done(struct app *a, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE)
		db_die(a->db, sqlite3_sql(st));
	sqlite3_reset(st);
	return sqlite3_changes(a->db);
}

static void log_event(struct app *a, uint64_t id, const char *kind, uint64_t at)
{
	sqlite3_bind_int64(a->ins_event, 1, (sqlite3_int64)id);
	sqlite3_bind_text(a->ins_event, 2, kind, -1, SQLITE_STATIC);
	sqlite3_bind_int64(a->ins_event, 3, (sqlite3_int64)at);
	sqlite3_bind_int64(a->ins_event, 4, (sqlite3_int64)getpid());
	step_done(a, a->ins_event);
}

/*
 * Settle order id at now through st (upd_cancel or upd_pay), with its
 * event of that kind, in the caller's transaction; 0 if the order was not
 * in a state to be settled so.
 */
static int settle(struct app *a, sqlite3_stmt *st, uint64_t id, const char *kind, uint64_t now)
{
	sqlite3_bind_int64(st, 1, (sqlite3_int64)now);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)id);
	if (step_done(a, st) != 1)
		return 0;
	log_event(a, id, kind, now);
	return 1;
}

/* A point where a crash must not lose anything: --chaos kills us here. */
static void crash_point(struct app *a)
{
	if (a->o->chaos > 0 && rng_unit(&a->rng) < a->o->chaos)
		raise(SIGKILL);
}

/* ------------------------------------------------------------ the wheels */

/* A CLOCK_REALTIME deadline on the wheel's clock (CLOCK_MONOTONIC). */
static uint64_t real_to_mono(uint64_t real_deadline)
{
	uint64_t m = mono_ns(), r = real_ns();

	if (real_deadline <= r)
		return m > 0 ? m : 1;	/* already due: expires at once */
	return m + (real_deadline - r);
}

struct arm_buf {
	struct twheel_arm e[EV_BATCH];
	size_t n;
	int fd;
};

static void arm_flush(struct arm_buf *b)
{
	size_t done = 0;
	int r;

	if (!b->n)
		return;
	r = twheel_arm(b->fd, b->e, b->n, &done);
	if (r < 0)
		die("%s: TWHEEL_IOC_ARM: %s (%zu of %zu done)", prog, twheel_strerror(r), done, b->n);
	b->n = 0;
}

static void arm_add(struct arm_buf *b, uint64_t id, uint64_t real_deadline)
{
	struct twheel_arm *e = &b->e[b->n++];

	memset(e, 0, sizeof(*e));
	e->id = id;
	e->data = id;
	e->timeout_ns = real_to_mono(real_deadline);
	e->flags = TWHEEL_ARM_ABSTIME;
	if (b->n == EV_BATCH)
		arm_flush(b);
}

/* Recovery: every unpaid order (and its customer's plan) back on the wheels. */
static void recover(struct app *a)
{
	struct arm_buf *b = xcalloc(1, sizeof(*b));
	sqlite3_stmt *st;
	uint64_t now = real_ns(), due = 0;

	b->fd = a->ofd;
	st = prep(a->db, "SELECT id, deadline_ns FROM orders WHERE state='unpaid'");
	while (sqlite3_step(st) == SQLITE_ROW) {
		uint64_t id = (uint64_t)sqlite3_column_int64(st, 0);
		uint64_t dl = (uint64_t)sqlite3_column_int64(st, 1);

		arm_add(b, id, dl);
		a->recovered++;
		due += dl <= now;
	}
	sqlite3_finalize(st);
	arm_flush(b);
	crash_point(a);

	b->fd = a->pfd;
	st = prep(a->db, "SELECT p.order_id, p.pay_at_ns FROM sim_payments p"
			 " JOIN orders o ON o.id = p.order_id WHERE o.state='unpaid'");
	while (sqlite3_step(st) == SQLITE_ROW)
		arm_add(b, (uint64_t)sqlite3_column_int64(st, 0),
			(uint64_t)sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	arm_flush(b);
	free(b);
	a->unpaid = a->recovered;
	if (!a->o->quiet)
		printf("orders: recovered %" PRIu64 " unpaid orders from %s (%" PRIu64
		       " already past their deadline)\n", a->recovered, a->o->db, due);
}

/* ------------------------------------------------------------ the service */

static void begin(struct app *a)
{
	db_exec(a->db, "BEGIN IMMEDIATE");
}

static void commit(struct app *a)
{
	db_exec(a->db, "COMMIT");
}

/* The simulated shop: n new orders in one transaction, then on the wheels. */
static void create_orders(struct app *a, uint64_t n)
{
	struct arm_buf *bo = xcalloc(1, sizeof(*bo)), *bp = xcalloc(1, sizeof(*bp));
	uint64_t (*made)[3] = xcalloc(n, sizeof(*made));

	begin(a);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t now = real_ns();
		uint64_t dl = now + (uint64_t)((0.5 + 0.5 * rng_unit(&a->rng)) * (double)a->o->window_ns);
		uint64_t pay_at = 0;

		sqlite3_bind_int64(a->ins_order, 1, (sqlite3_int64)now);
		sqlite3_bind_int64(a->ins_order, 2, (sqlite3_int64)dl);
		step_done(a, a->ins_order);
		made[i][0] = (uint64_t)sqlite3_last_insert_rowid(a->db);
		made[i][1] = dl;
		if (rng_unit(&a->rng) < a->o->pay_fraction) {
			pay_at = now + (uint64_t)(1.2 * rng_unit(&a->rng) * (double)a->o->window_ns);
			sqlite3_bind_int64(a->ins_plan, 1, (sqlite3_int64)made[i][0]);
			sqlite3_bind_int64(a->ins_plan, 2, (sqlite3_int64)pay_at);
			step_done(a, a->ins_plan);
		}
		made[i][2] = pay_at;
	}
	crash_point(a);			/* inside the transaction: rolled back */
	commit(a);
	crash_point(a);			/* committed, not armed: recovery arms it */
	bo->fd = a->ofd;
	bp->fd = a->pfd;
	for (uint64_t i = 0; i < n; i++) {
		arm_add(bo, made[i][0], made[i][1]);
		if (made[i][2])
			arm_add(bp, made[i][0], made[i][2]);
	}
	arm_flush(bo);
	arm_flush(bp);
	a->created += n;
	a->unpaid += n;
	free(made);
	free(bo);
	free(bp);
}

/* Expired deadlines: cancel what is still unpaid, in one transaction. */
static int on_expiry(struct app *a)
{
	struct twheel_event ev[EV_BATCH];
	struct arm_buf *again;
	uint64_t ids[EV_BATCH], now;
	size_t nc = 0;
	ssize_t n = read_events(a->ofd, ev, EV_BATCH, "read");

	if (!n)
		return 0;
	crash_point(a);			/* events read, nothing written */
	again = xcalloc(1, sizeof(*again));
	again->fd = a->ofd;
	begin(a);
	now = real_ns();
	for (ssize_t i = 0; i < n; i++) {
		uint64_t id = ev[i].data;

		if (settle(a, a->upd_cancel, id, "cancelled", now)) {
			a->cancelled++;
			a->unpaid--;
			ids[nc++] = id;
			continue;
		}
		/* paid meanwhile (maybe by another process), or the realtime
		 * clock is a hair behind the monotonic deadline: re-arm */
		sqlite3_bind_int64(a->sel_order, 1, (sqlite3_int64)id);
		if (sqlite3_step(a->sel_order) == SQLITE_ROW &&
		    !strcmp((const char *)sqlite3_column_text(a->sel_order, 0), "unpaid")) {
			arm_add(again, id, (uint64_t)sqlite3_column_int64(a->sel_order, 1));
			a->rearmed++;
		}
		sqlite3_reset(a->sel_order);
	}
	crash_point(a);			/* uncommitted: rolled back, re-armed at restart */
	commit(a);
	crash_point(a);
	arm_flush(again);
	free(again);
	/* their customers will not pay any more */
	if (nc)
		twheel_cancel(a->pfd, ids, nc, NULL);
	return (int)n;
}

/* Simulated customers paying: mark paid if still unpaid and in time. */
static int on_payment(struct app *a)
{
	struct twheel_event ev[EV_BATCH];
	uint64_t ids[EV_BATCH], now;
	size_t np = 0;
	ssize_t n = read_events(a->pfd, ev, EV_BATCH, "read");

	if (!n)
		return 0;
	begin(a);
	now = real_ns();
	for (ssize_t i = 0; i < n; i++) {
		uint64_t id = ev[i].data;

		if (settle(a, a->upd_pay, id, "paid", now)) {
			a->paid++;
			a->unpaid--;
			ids[np++] = id;
		} else {
			a->refused++;	/* too late, or already settled */
		}
	}
	crash_point(a);
	commit(a);
	crash_point(a);			/* paid, timer still armed: the expiry finds it paid */
	if (np)
		twheel_cancel(a->ofd, ids, np, NULL);
	return (int)n;
}

static void app_open(struct app *a, const struct opts *o, int wheels)
{
	memset(a, 0, sizeof(*a));
	a->o = o;
	a->rng = o->seed ^ mix64((uint64_t)getpid());
	a->ofd = a->pfd = -1;
	a->db = db_open(o->db, !strcmp(o->cmd, "run") || !strcmp(o->cmd, "torture"));
	a->ins_order = prep(a->db, "INSERT INTO orders(created_ns, deadline_ns, state)"
				   " VALUES(?1, ?2, 'unpaid')");
	a->ins_plan = prep(a->db, "INSERT INTO sim_payments(order_id, pay_at_ns) VALUES(?1, ?2)");
	a->upd_cancel = prep(a->db, "UPDATE orders SET state='cancelled', settled_ns=?1"
				    " WHERE id=?2 AND state='unpaid' AND deadline_ns<=?1");
	a->upd_pay = prep(a->db, "UPDATE orders SET state='paid', settled_ns=?1"
				 " WHERE id=?2 AND state='unpaid' AND deadline_ns>?1");
	a->ins_event = prep(a->db, "INSERT INTO events(order_id, kind, at_ns, pid)"
				   " VALUES(?1, ?2, ?3, ?4)");
	a->sel_order = prep(a->db, "SELECT state, deadline_ns FROM orders WHERE id=?1");
	if (wheels) {
		a->ofd = open_wheel(o->tick_ns, TWHEEL_DEFAULT_TIMEOUT_NS);
		a->pfd = open_wheel(o->tick_ns, TWHEEL_DEFAULT_TIMEOUT_NS);
	}
}

static uint64_t count_unpaid(struct app *a)
{
	sqlite3_stmt *st = prep(a->db, "SELECT count(*) FROM orders WHERE state='unpaid'");
	uint64_t n = 0;

	if (sqlite3_step(st) == SQLITE_ROW)
		n = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

static int cmd_run(const struct opts *o)
{
	struct app a;
	struct epoll_event ee, evs[4];
	uint64_t t0, next_prog, made_target = 0;
	int ep;

	app_open(&a, o, 1);
	recover(&a);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		die("%s: epoll_create1: %s", prog, strerror(errno));
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	ee.data.fd = a.ofd;
	epoll_ctl(ep, EPOLL_CTL_ADD, a.ofd, &ee);
	ee.data.fd = a.pfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, a.pfd, &ee);
	t0 = mono_ns();
	next_prog = t0 + NSEC_PER_SEC;
	for (;;) {
		uint64_t now = mono_ns();
		int n;

		if (o->duration_ns && now - t0 >= o->duration_ns)
			break;
		if (o->drain && a.unpaid == 0)
			break;
		n = epoll_wait(ep, evs, (int)ARRAY_LEN(evs), o->drain ? 100 : 10);
		if (n < 0 && errno != EINTR)
			die("%s: epoll_wait: %s", prog, strerror(errno));
		while (on_expiry(&a) == EV_BATCH)
			;
		while (on_payment(&a) == EV_BATCH)
			;
		now = mono_ns();
		if (!o->drain && o->rate > 0) {
			uint64_t want = (uint64_t)(o->rate * (double)(now - t0) / 1e9);

			if (want > made_target) {
				uint64_t k = want - made_target;

				create_orders(&a, k > 1000 ? 1000 : k);
				made_target = want;
			}
		}
		if (now >= next_prog) {
			if (o->drain)
				a.unpaid = count_unpaid(&a);	/* payments by others */
			if (!o->quiet) {
				printf("[%6.1fs] created %" PRIu64 "  paid %" PRIu64 "  refused %"
				       PRIu64 "  cancelled %" PRIu64 "  unpaid %" PRIu64 "\n",
				       (double)(now - t0) / 1e9, a.created, a.paid, a.refused,
				       a.cancelled, a.unpaid);
				fflush(stdout);
			}
			while (next_prog <= now)
				next_prog += NSEC_PER_SEC;
		}
	}
	if (!o->quiet)
		printf("orders: this run: created %" PRIu64 ", paid %" PRIu64 " (%" PRIu64
		       " refused), cancelled %" PRIu64 ", re-armed %" PRIu64 ", %" PRIu64
		       " unpaid left\n", a.created, a.paid, a.refused, a.cancelled, a.rearmed,
		       a.unpaid);
	sqlite3_close_v2(a.db);
	return 0;
}

static int cmd_pay(const struct opts *o)
{
	struct app a;
	uint64_t now;
	int ok;

	app_open(&a, o, 0);
	begin(&a);
	now = real_ns();
	ok = settle(&a, a.upd_pay, o->order_id, "paid", now);
	commit(&a);
	/* the service's timer still runs: its expiry will find the order paid */
	printf("order %" PRIu64 ": %s\n", o->order_id,
	       ok ? "paid" : "payment refused (unknown, settled or past its deadline)");
	sqlite3_close_v2(a.db);
	return ok ? 0 : 1;
}

static int cmd_status(const struct opts *o)
{
	struct app a;
	sqlite3_stmt *st;

	app_open(&a, o, 0);
	st = prep(a.db, "SELECT state, count(*) FROM orders GROUP BY state ORDER BY state");
	while (sqlite3_step(st) == SQLITE_ROW)
		printf("%-10s %lld\n", (const char *)sqlite3_column_text(st, 0),
		       (long long)sqlite3_column_int64(st, 1));
	sqlite3_finalize(st);
	sqlite3_close_v2(a.db);
	return 0;
}

/* ------------------------------------------------------------- the checks */

static int64_t q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = prep(db, sql);
	int64_t v = -1;

	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void show_examples(sqlite3 *db, const char *what, const char *sql)
{
	sqlite3_stmt *st = prep(db, sql);
	int k = 0;

	while (sqlite3_step(st) == SQLITE_ROW && k++ < 5)
		printf("    %s: order %lld\n", what, (long long)sqlite3_column_int64(st, 0));
	sqlite3_finalize(st);
}

/* The queries that find the orders breaking a rule (shown as examples). */
static const char q_bad_count[] =
	"SELECT o.id FROM orders o WHERE o.state != 'unpaid' AND"
	" (SELECT count(*) FROM events e WHERE e.order_id = o.id) != 1"
	" UNION SELECT o.id FROM orders o WHERE o.state = 'unpaid' AND"
	" EXISTS (SELECT 1 FROM events e WHERE e.order_id = o.id)";
static const char q_bad_kind[] =
	"SELECT o.id FROM orders o JOIN events e ON e.order_id = o.id"
	" WHERE e.kind != o.state OR e.at_ns != o.settled_ns";
static const char q_early[] =
	"SELECT o.id FROM orders o JOIN events e ON e.order_id = o.id"
	" WHERE e.kind = 'cancelled' AND e.at_ns < o.deadline_ns";
static const char q_late_pay[] =
	"SELECT o.id FROM orders o JOIN events e ON e.order_id = o.id"
	" WHERE e.kind = 'paid' AND e.at_ns >= o.deadline_ns";

/* What check counts in the database; every count but the first four must be 0. */
struct audit {
	int64_t total, paid, cancelled, unpaid;
	int64_t unpaid_due;		/* unpaid past the deadline: lost */
	int64_t bad_count;		/* settled orders without exactly one event */
	int64_t bad_kind;		/* events that do not match their order */
	int64_t orphan;			/* events of unknown orders */
	int64_t early, late_pay;	/* cancelled before the deadline, paid after */
	int64_t settled_mismatch;	/* settled_ns set iff settled */
	int64_t incarnations;		/* processes that settled orders */
	struct hist *late;		/* cancellation - deadline */
};

static int64_t q_count(sqlite3 *db, const char *query)
{
	char sql[512];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM (%s)", query);
	return q_int(db, sql);
}

static void audit_db(sqlite3 *db, struct audit *k)
{
	sqlite3_stmt *st;
	char sql[512];

	k->total = q_int(db, "SELECT count(*) FROM orders");
	k->paid = q_int(db, "SELECT count(*) FROM orders WHERE state='paid'");
	k->cancelled = q_int(db, "SELECT count(*) FROM orders WHERE state='cancelled'");
	k->unpaid = q_int(db, "SELECT count(*) FROM orders WHERE state='unpaid'");
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM orders WHERE state='unpaid'"
		 " AND deadline_ns <= %" PRIu64, real_ns());
	k->unpaid_due = q_int(db, sql);
	k->bad_count = q_count(db, q_bad_count);
	k->bad_kind = q_count(db, q_bad_kind);
	k->orphan = q_int(db, "SELECT count(*) FROM events e WHERE NOT EXISTS"
			      " (SELECT 1 FROM orders o WHERE o.id = e.order_id)");
	k->early = q_count(db, q_early);
	k->late_pay = q_count(db, q_late_pay);
	k->settled_mismatch = q_int(db, "SELECT count(*) FROM orders WHERE"
				        " (state = 'unpaid') != (settled_ns IS NULL)");
	k->incarnations = q_int(db, "SELECT count(DISTINCT pid) FROM events");
	st = prep(db, "SELECT e.at_ns - o.deadline_ns FROM orders o JOIN events e"
		      " ON e.order_id = o.id WHERE e.kind = 'cancelled'");
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t d = sqlite3_column_int64(st, 0);

		hist_add(k->late, d > 0 ? (uint64_t)d : 0);
	}
	sqlite3_finalize(st);
}

static int cmd_check(const struct opts *o)
{
	struct app a;
	struct audit k = { .late = xcalloc(1, sizeof(*k.late)) };
	char h[80];
	int ok;

	app_open(&a, o, 0);
	audit_db(a.db, &k);
	ok = k.total >= 0 && k.unpaid_due == 0 && k.bad_count == 0 && k.bad_kind == 0 &&
	     k.orphan == 0 && k.early == 0 && k.late_pay == 0 && k.settled_mismatch == 0;
	printf("orders: verification summary (%s)\n", o->db);
	check_line("orders", !k.unpaid_due, "%lld: %lld paid, %lld cancelled, %lld unpaid"
		   " (%lld of them past their deadline)", (long long)k.total, (long long)k.paid,
		   (long long)k.cancelled, (long long)k.unpaid, (long long)k.unpaid_due);
	check_line("exactly once", !k.bad_count && !k.bad_kind && !k.orphan && !k.settled_mismatch,
		   "%lld orders without exactly one settlement, %lld events not matching the"
		   " order, %lld events of unknown orders, %lld bad settled_ns",
		   (long long)k.bad_count, (long long)k.bad_kind, (long long)k.orphan,
		   (long long)k.settled_mismatch);
	check_line("deadlines", !k.early && !k.late_pay,
		   "%lld cancelled before the deadline, %lld paid after it",
		   (long long)k.early, (long long)k.late_pay);
	report_line("cancel lateness", "%s (includes the restarts); settled by %lld processes",
		    fmt_hist(h, sizeof(h), k.late), (long long)k.incarnations);
	if (k.bad_count)
		show_examples(a.db, "settlements != 1", q_bad_count);
	if (k.bad_kind)
		show_examples(a.db, "event/state mismatch", q_bad_kind);
	if (k.early)
		show_examples(a.db, "cancelled early", q_early);
	if (k.late_pay)
		show_examples(a.db, "paid late", q_late_pay);
	if (k.unpaid_due)
		show_examples(a.db, "lost (unpaid past deadline)",
			      "SELECT id FROM orders WHERE state='unpaid' ORDER BY deadline_ns");
	printf("orders: %s\n", ok ? "VERIFIED" : "VERIFICATION FAILED");
	sqlite3_close_v2(a.db);
	free(k.late);
	return ok ? 0 : 1;
}

/* ------------------------------------------------------------ the torture */

/* Fork a service; returns its pid. */
static pid_t spawn_run(const struct opts *o, int drain, double chaos, uint64_t seed)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		die("%s: fork: %s", prog, strerror(errno));
	if (pid == 0) {
		struct opts c = *o;

		c.drain = drain;
		c.chaos = chaos;
		c.seed = seed;
		c.quiet = 1;
		c.duration_ns = 0;
		_exit(cmd_run(&c));
	}
	return pid;
}

static const char *describe(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "status 0x%x", status);
	return buf;
}

/* What the torture saw of the services it started. */
struct torture {
	uint64_t rng;
	uint64_t starts;	/* services started */
	uint64_t kills;		/* SIGKILLed by the torture */
	uint64_t chaos_deaths;	/* SIGKILLed by themselves (--chaos) */
	int failures;		/* any other end */
};

/*
 * Start a service and SIGKILL it after a random time in --kill-after,
 * --kills times (a service that --chaos killed first does not count).
 */
static void torture_kills(const struct opts *o, struct torture *t)
{
	char buf[64];
	int status;
	pid_t pid;

	while (t->kills < o->kills && t->starts < 4 * o->kills + 10) {
		uint64_t after = o->kill_min_ns +
			(uint64_t)(rng_unit(&t->rng) * (double)(o->kill_max_ns - o->kill_min_ns));
		uint64_t until = mono_ns() + after;
		int died = 0;

		pid = spawn_run(o, 0, o->chaos, rng_next(&t->rng));
		t->starts++;
		while (mono_ns() < until) {
			pid_t r = waitpid(pid, &status, WNOHANG);

			if (r == pid) {
				died = 1;
				break;
			}
			sleep_ns(5 * NSEC_PER_MSEC);
		}
		if (died) {
			if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
				t->chaos_deaths++;
			} else {
				printf("  run #%" PRIu64 ": unexpected end: %s\n", t->starts,
				       describe(status, buf, sizeof(buf)));
				t->failures++;
			}
			continue;
		}
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		t->kills++;
		if (!o->quiet)
			printf("  run #%" PRIu64 ": SIGKILL after %.3f s\n", t->starts,
			       (double)after / 1e9);
	}
	fflush(stdout);
}

/* A last run without chaos creates nothing and waits for every order. */
static void torture_drain(const struct opts *o, struct torture *t)
{
	uint64_t drain_limit = mono_ns() + o->window_ns + 60 * NSEC_PER_SEC;
	pid_t pid = spawn_run(o, 1, 0.0, rng_next(&t->rng));
	char buf[64];
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (mono_ns() > drain_limit) {
			printf("  drain run: still unpaid orders after window + 60 s: killed\n");
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			t->failures++;
			break;
		}
		sleep_ns(20 * NSEC_PER_MSEC);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("  drain run: %s\n", describe(status, buf, sizeof(buf)));
		t->failures++;
	}
}

static int cmd_torture(const struct opts *o)
{
	struct torture t = { .rng = o->seed };

	printf("orders: torture: %" PRIu64 " SIGKILLs after %.2f..%.2f s, rate %.0f/s, window"
	       " %.2f s, chaos %g, seed %" PRIu64 ", db %s\n", o->kills,
	       (double)o->kill_min_ns / 1e9, (double)o->kill_max_ns / 1e9, o->rate,
	       (double)o->window_ns / 1e9, o->chaos, o->seed, o->db);
	torture_kills(o, &t);
	torture_drain(o, &t);
	printf("orders: torture: %" PRIu64 " runs, %" PRIu64 " SIGKILLed by the test, %" PRIu64
	       " by --chaos, %d unexpected failures\n", t.starts + 1, t.kills, t.chaos_deaths,
	       t.failures);
	fflush(stdout);
	return cmd_check(o) == 0 && t.failures == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct opts o;

	set_prog(argc, argv);
	parse_args(argc, argv, &o);
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(o.cmd, "run"))
		return cmd_run(&o);
	if (!strcmp(o.cmd, "pay"))
		return cmd_pay(&o);
	if (!strcmp(o.cmd, "status"))
		return cmd_status(&o);
	if (!strcmp(o.cmd, "check"))
		return cmd_check(&o);
	return cmd_torture(&o);
}
