// SPDX-License-Identifier: MIT
/*
 * idle-reaper: an epoll TCP server on 127.0.0.1 that closes connections
 * silent for --timeout seconds (seed 001), with one twheel fd for all of
 * them.
 *
 * Each accepted connection gets the id (generation << 32 | fd): the fd
 * finds the connection, the generation tells a connection from an older
 * one that had the same fd number.  The id is touched (write()) at accept
 * and after every read that returned data; when it expires the server
 * closes the connection.  A peer that closes first has its id cancelled.
 *
 * With --tc the server touches nothing itself: a TC ingress program on lo
 * (idle_tc.bpf.c) touches the connection of every inbound segment through
 * the module's kfunc, in the kernel, as the segment arrives.  The id is
 * then the connection's 4-tuple (idle_conn_id(), idle_tc.h), which both
 * sides can compute, and the event's data word carries (generation << 32 |
 * fd); the server arms the id at accept (ARM) and after an expiry that
 * data saved, and never writes a touch.
 *
 * Without --serve, a load generator (a child process) opens --conns
 * connections; every connection pings every --interval seconds, and a
 * --quiet-fraction of them stops at a random time.  The generator checks
 * that every quiet connection was closed by the server no earlier than
 * --timeout after its last ping and not much later, and that no active
 * connection was closed; the server checks the same from its side.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <bpf/libbpf.h>

#include "twheel.h"
#include "common.h"
#include "idle_tc.h"
#include "idle_tc.skel.h"

#define EV_BATCH	256
#define ID_FD(id)	((int)((id) & 0xffffffffULL))
#define ID_GEN(id)	((uint32_t)((id) >> 32))

struct opts {
	uint64_t conns;
	uint64_t timeout_ns;
	uint64_t interval_ns;
	uint64_t duration_ns;
	uint64_t tick_ns;
	uint64_t slack_ns;
	uint64_t max_late_ns;
	uint64_t seed;
	double quiet_frac;
	uint64_t port;
	int serve;
	int tc;
	int quiet;
};

static const char *prog = "idle-reaper";
static volatile sig_atomic_t stop_flag;

static void usage(FILE *f, int status)
{
	usage_exit(f, status, "[options]",
"An epoll TCP server on 127.0.0.1 that closes connections idle for --timeout,\n"
"with one /dev/twheel fd for all connections.  By default a load generator\n"
"(child process) opens --conns connections, some of which go quiet, and the\n"
"closures are checked against the expected times.\n"
"\n"
"  --conns N            connections of the load generator (default 2000,\n"
"                       lowered to what RLIMIT_NOFILE allows)\n"
"  --timeout SEC        idle timeout (default 30)\n"
"  --interval SEC       ping interval of active connections (default timeout/3)\n"
"  --quiet-fraction F   connections that stop pinging (default 0.3)\n"
"  --duration SEC       load time (default 2*timeout+5)\n"
"  --tick-ms MS         wheel tick (default 10)\n"
"  --slack-ms MS        lateness counted as on time beyond one tick (default 200)\n"
"  --max-late-ms MS     lateness that fails the run (default 5000)\n"
"  --port N             TCP port (default 0: any free port)\n"
"  --seed N             seed of the load generator (default 1)\n"
"  --serve              only run the server (until SIGINT/SIGTERM), no load\n"
"  --tc                 a TC program on lo touches the connections, the server\n"
"                       none (needs the module built with BTF: make BTF=1)\n"
"  --quiet              no progress lines\n"
"  --help               this text\n"
"\n"
"Exit status: 0 verified, 1 verification failed, 2 usage or setup error.\n");
}

/* Defaults that depend on other options, and the options' constraints. */
static void check_opts(struct opts *o)
{
	if (!o->interval_ns)
		o->interval_ns = o->timeout_ns / 3;
	if (!o->duration_ns)
		o->duration_ns = 2 * o->timeout_ns + 5 * NSEC_PER_SEC;
	if (o->interval_ns * 2 > o->timeout_ns)
		usage_error("--interval must be at most half of --timeout");
	if (!o->serve && o->duration_ns < o->timeout_ns + 2 * NSEC_PER_SEC + o->tick_ns + o->slack_ns)
		usage_error("--duration must be at least timeout + %.1f s",
			    (double)(2 * NSEC_PER_SEC + o->tick_ns + o->slack_ns) / 1e9);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	const struct opt opts[] = {
		{ "conns", OPT_U64, &o->conns, .min = 1, .max = 1000000, .def = "2000" },
		{ "timeout", OPT_SECONDS, &o->timeout_ns, .min = 10 * NSEC_PER_MSEC,
		  .max = UINT64_MAX, .def = "30" },
		{ "interval", OPT_SECONDS, &o->interval_ns, .min = NSEC_PER_MSEC, .max = UINT64_MAX },
		{ "quiet-fraction", OPT_DOUBLE, &o->quiet_frac, .dmax = 1.0, .def = "0.3" },
		{ "duration", OPT_SECONDS, &o->duration_ns, .min = 1, .max = UINT64_MAX },
		{ "tick-ms", OPT_MS, &o->tick_ns, .min = 1, .max = 60000, .def = "10" },
		{ "slack-ms", OPT_MS, &o->slack_ns, .min = 0, .max = 3600000, .def = "200" },
		{ "max-late-ms", OPT_MS, &o->max_late_ns, .min = 1, .max = 3600000, .def = "5000" },
		{ "port", OPT_U64, &o->port, .min = 0, .max = 65535 },
		{ "seed", OPT_U64, &o->seed, .min = 0, .max = UINT64_MAX, .def = "1" },
		{ "serve", OPT_FLAG, .dst = &o->serve },
		{ "tc", OPT_FLAG, .dst = &o->tc },
		{ "quiet", OPT_FLAG, .dst = &o->quiet },
		{ NULL },
	};

	memset(o, 0, sizeof(*o));
	parse_opts(argc, argv, opts, OPTS_NO_OPERANDS);
	check_opts(o);
}

/* Raise the soft fd limit to the hard one; returns the new soft limit. */
static uint64_t raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	return rl.rlim_cur == RLIM_INFINITY ? 1ULL << 20 : (uint64_t)rl.rlim_cur;
}

/* ------------------------------------------------------------- the server */

struct conn {
	uint64_t last_read;	/* our clock before the touch that armed the id */
	uint64_t id;		/* with --tc: idle_conn_id() of its 4-tuple */
	uint32_t gen;
	uint8_t open;
	uint8_t dirty;		/* read data this round: touch pending */
};

struct server {
	const struct opts *o;
	int lfd, wfd, ep;
	struct conn *c;
	size_t nc;
	uint32_t gen;
	int *dirty;
	size_t ndirty;
	uint64_t t0;
	uint64_t accepted, open, closed_idle, closed_peer, stale, early, rescued, errors;
	uint64_t mem_max;
	struct hist late;
	unsigned int port;
	struct idle_tc *tc;	/* with --tc, the program, and its hook on lo */
	struct bpf_tc_hook hook;
	struct bpf_tc_opts tc_opts;
	int tc_created;		/* the hook (lo's clsact qdisc) is ours */
	struct idle_tc__bss tc_counts;	/* the program's counters, at its detach */
};

/* (generation << 32 | fd): the id, or with --tc the data word of the id */
static uint64_t conn_key(const struct server *s, int fd)
{
	return (uint64_t)s->c[fd].gen << 32 | (uint32_t)fd;
}

static uint64_t conn_id(const struct server *s, int fd)
{
	return s->o->tc ? s->c[fd].id : conn_key(s, fd);
}

/* --tc: arm the connection's id, its data the key (at accept, after a rescue) */
static void tc_arm(struct server *s, int fd, uint64_t now)
{
	s->c[fd].last_read = now;
	if (twheel_arm_one(s->wfd, s->c[fd].id, 0, conn_key(s, fd), 0) < 0) {
		s->errors++;
		fprintf(stderr, "%s: ARM: %s\n", prog, strerror(errno));
	}
}

static void close_conn(struct server *s, int fd, int by_peer)
{
	uint64_t id = conn_id(s, fd);

	if (by_peer) {
		twheel_cancel(s->wfd, &id, 1, NULL);
		s->closed_peer++;
	} else {
		s->closed_idle++;
	}
	s->c[fd].open = 0;
	s->c[fd].dirty = 0;
	s->open--;
	close(fd);
}

/* One touch for every connection that sent data during this epoll round. */
static void flush_touches(struct server *s)
{
	uint64_t ids[256];
	size_t n = 0;

	for (size_t i = 0; i < s->ndirty; i++) {
		int fd = s->dirty[i];

		if (!s->c[fd].open || !s->c[fd].dirty)
			continue;
		s->c[fd].dirty = 0;
		ids[n++] = conn_id(s, fd);
		if (n == ARRAY_LEN(ids)) {
			if (twheel_touch(s->wfd, ids, n) != (ssize_t)n)
				s->errors++;
			n = 0;
		}
	}
	if (n && twheel_touch(s->wfd, ids, n) != (ssize_t)n)
		s->errors++;
	s->ndirty = 0;
}

static void mark_read(struct server *s, int fd, uint64_t now)
{
	s->c[fd].last_read = now;
	if (!s->c[fd].dirty) {
		if (s->ndirty == 2 * s->nc)
			flush_touches(s);
		s->c[fd].dirty = 1;
		s->dirty[s->ndirty++] = fd;
	}
}

static void on_accept(struct server *s)
{
	for (;;) {
		struct sockaddr_in peer;
		socklen_t plen = sizeof(peer);
		int fd = accept4(s->lfd, (struct sockaddr *)&peer, &plen,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct epoll_event ee;

		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED) {
				s->errors++;
				fprintf(stderr, "%s: accept: %s\n", prog, strerror(errno));
			}
			return;
		}
		if ((size_t)fd >= s->nc) {
			close(fd);
			s->errors++;
			continue;
		}
		if (++s->gen == 0)
			s->gen = 1;
		s->c[fd].gen = s->gen;
		s->c[fd].open = 1;
		s->c[fd].dirty = 0;
		s->accepted++;
		s->open++;
		memset(&ee, 0, sizeof(ee));
		ee.events = EPOLLIN | EPOLLRDHUP;
		ee.data.u64 = (uint64_t)fd;
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ee) < 0)
			die("%s: epoll_ctl: %s", prog, strerror(errno));
		/* arm: the connection counts as active from its accept */
		if (s->o->tc) {
			s->c[fd].id = idle_conn_id(ntohl(peer.sin_addr.s_addr),
						   ntohs(peer.sin_port), (uint16_t)s->port);
			tc_arm(s, fd, mono_ns());
		} else {
			mark_read(s, fd, mono_ns());
		}
	}
}

/* Read what the peer sent; returns 1 if data came, 0 if none, -1 if closed. */
static int read_conn(int fd)
{
	char buf[4096];
	int got = 0;

	for (;;) {
		ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (r > 0) {
			got = 1;
			continue;
		}
		if (r == 0)
			return -1;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return got;
		return -1;	/* ECONNRESET and friends */
	}
}

static void on_conn(struct server *s, int fd)
{
	int r;

	if ((size_t)fd >= s->nc || !s->c[fd].open)
		return;
	r = read_conn(fd);
	if (r < 0)
		close_conn(s, fd, 1);
	else if (r > 0 && s->o->tc)
		s->c[fd].last_read = mono_ns();	/* the program touched it */
	else if (r > 0)
		mark_read(s, fd, mono_ns());
}

/*
 * An expiry that closes a connection: never before its deadline, nor
 * before its last read + timeout.  With --tc the program touched the id
 * as the data arrived, before the server read it: the deadline is the
 * program's touch + timeout, and the lateness counts from it.
 */
static void check_close(struct server *s, const struct conn *c, const struct twheel_event *ev,
			uint64_t now)
{
	uint64_t due = s->o->tc ? ev->deadline_ns : c->last_read + s->o->timeout_ns;

	if (now < due || ev->deadline_ns < due || ev->expired_ns < ev->deadline_ns) {
		s->early++;
		fprintf(stderr, "%s: EARLY close: idle %.3f s\n", prog,
			(double)(now - c->last_read) / 1e9);
	}
	hist_add(&s->late, now > due ? now - due : 0);
}

static void on_expiry(struct server *s)
{
	struct twheel_event ev[EV_BATCH];

	for (;;) {
		ssize_t n = read_events(s->wfd, ev, EV_BATCH, "read wheel");
		uint64_t now = mono_ns();

		if (!n)
			return;
		for (ssize_t i = 0; i < n; i++) {
			uint64_t key = s->o->tc ? ev[i].data : ev[i].id;
			int fd = ID_FD(key), r;
			struct conn *c = (size_t)fd < s->nc ? &s->c[fd] : NULL;

			if (!c || !c->open || c->gen != ID_GEN(key) ||
			    conn_id(s, fd) != ev[i].id) {
				s->stale++;	/* an older connection with this fd */
				continue;
			}
			/* data that arrived while the event was in flight wins */
			r = read_conn(fd);
			if (r > 0) {
				s->rescued++;
				if (s->o->tc)
					tc_arm(s, fd, now);
				else
					mark_read(s, fd, now);
				continue;
			}
			if (r < 0) {
				close_conn(s, fd, 1);
				continue;
			}
			check_close(s, c, &ev[i], now);
			if (s->o->serve && !s->o->quiet)
				printf("closed idle connection (fd %d) after %.3f s\n", fd,
				       (double)(now - c->last_read) / 1e9);
			close_conn(s, fd, 0);
		}
		if (n < EV_BATCH)
			return;
	}
}

static void server_progress(struct server *s, uint64_t now)
{
	struct twheel_stats st;
	char a[32], b[32], c[32], d[32];

	if (twheel_stats(s->wfd, &st) < 0)
		return;
	if (st.mem_bytes > s->mem_max)
		s->mem_max = st.mem_bytes;
	if (s->o->quiet)
		return;
	printf("[%6.1fs] open %s  accepted %s  closed idle %s  closed by peer %s"
	       "  armed %" PRIu64 "  kmem %.1f KiB\n",
	       (double)(now - s->t0) / 1e9, fmt_count(a, s->open), fmt_count(b, s->accepted),
	       fmt_count(c, s->closed_idle), fmt_count(d, s->closed_peer),
	       (uint64_t)st.armed, (double)st.mem_bytes / 1024.0);
	fflush(stdout);
}

/* Serve until done_fd reports EOF (the load generator exited) or a signal. */
static void serve(struct server *s, int done_fd)
{
	struct epoll_event ee, evs[256];
	uint64_t next_prog = s->t0 + NSEC_PER_SEC;

	s->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->ep < 0)
		die("%s: epoll_create1: %s", prog, strerror(errno));
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	ee.data.u64 = UINT64_MAX - 1;
	if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->lfd, &ee) < 0)
		die("%s: epoll_ctl: %s", prog, strerror(errno));
	ee.data.u64 = UINT64_MAX - 2;
	if (epoll_ctl(s->ep, EPOLL_CTL_ADD, s->wfd, &ee) < 0)
		die("%s: epoll_ctl: %s", prog, strerror(errno));
	if (done_fd >= 0) {
		ee.data.u64 = UINT64_MAX - 3;
		if (epoll_ctl(s->ep, EPOLL_CTL_ADD, done_fd, &ee) < 0)
			die("%s: epoll_ctl: %s", prog, strerror(errno));
	}
	while (!stop_flag) {
		uint64_t now = mono_ns();
		int n, tmo = next_prog > now ? (int)((next_prog - now) / NSEC_PER_MSEC) + 1 : 0;
		int expired = 0, done = 0;

		n = epoll_wait(s->ep, evs, (int)ARRAY_LEN(evs), tmo);
		if (n < 0 && errno != EINTR)
			die("%s: epoll_wait: %s", prog, strerror(errno));
		/* connections first, expirations last: a read in this round counts */
		for (int i = 0; i < n; i++) {
			uint64_t k = evs[i].data.u64;

			if (k == UINT64_MAX - 1)
				on_accept(s);
			else if (k == UINT64_MAX - 2)
				expired = 1;
			else if (k == UINT64_MAX - 3)
				done = 1;
			else
				on_conn(s, (int)k);
		}
		flush_touches(s);
		if (expired) {
			on_expiry(s);
			flush_touches(s);
		}
		now = mono_ns();
		if (now >= next_prog) {
			server_progress(s, now);
			while (next_prog <= now)
				next_prog += NSEC_PER_SEC;
		}
		if (done)
			break;
	}
	server_progress(s, mono_ns());
}

/* ------------------------------------------------------ the load generator */

struct cconn {
	int fd;
	uint8_t quiet, closed;
	uint64_t next_send;
	uint64_t quiet_at;	/* quiet connections send nothing from then on */
	uint64_t last_send;	/* our clock before the last send (or connect) */
};

/* Open connection i (blocking connect) and schedule its first ping. */
static void open_conn(struct cconn *x, uint64_t i, int ep, const struct sockaddr_in *sa,
		      uint64_t *rng, const struct opts *o)
{
	struct epoll_event ee;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	uint64_t before;

	if (fd < 0)
		die("%s: load: socket #%" PRIu64 ": %s", prog, i, strerror(errno));
	before = mono_ns();
	while (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		if (errno != EINTR)
			die("%s: load: connect #%" PRIu64 ": %s%s", prog, i, strerror(errno),
			    errno == ENETUNREACH ?
			    " (is the loopback interface up? ip link set lo up)" : "");
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	x->fd = fd;
	/* the server arms the id at accept, after this */
	x->last_send = before;
	x->next_send = mono_ns() + (uint64_t)(rng_unit(rng) * (double)o->interval_ns);
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN | EPOLLRDHUP;
	ee.data.u64 = i;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ee) < 0)
		die("%s: load: epoll_ctl: %s", prog, strerror(errno));
}

/* The load generator's connections and what it saw of their closes. */
struct load {
	const struct opts *o;
	struct cconn *cc;
	uint64_t n_open;
	int ep;
	struct sockaddr_in sa;
	uint64_t rng;
	uint64_t n_quiet, quiet_closed, active_closed, early, send_err;
	uint64_t active_gap;	/* active connections that sent nothing for a timeout */
	struct hist *late;
};

/*
 * Connections are opened while the others already ping (opening 2000
 * can take seconds under emulation).  Active ones ping every interval,
 * staggered; quiet ones stop at a random time such that their close is
 * due `grace` before the end.
 */
static void load_plan(struct load *l, uint64_t t0)
{
	const struct opts *o = l->o;
	uint64_t grace = NSEC_PER_SEC + o->tick_ns + o->slack_ns;

	for (uint64_t i = 0; i < o->conns; i++) {
		struct cconn *x = &l->cc[i];

		x->fd = -1;
		x->quiet = rng_unit(&l->rng) < o->quiet_frac;
		l->n_quiet += x->quiet;
		if (x->quiet)
			x->quiet_at = t0 + (uint64_t)(rng_unit(&l->rng) *
				(double)(o->duration_ns - o->timeout_ns - grace));
	}
}

/* The server closed x (EOF or reset): was that due? */
static void load_closed(struct load *l, struct cconn *x, uint64_t now)
{
	const struct opts *o = l->o;

	x->closed = 1;
	epoll_ctl(l->ep, EPOLL_CTL_DEL, x->fd, NULL);
	/*
	 * An active connection closed less than a timeout after
	 * its last ping is a lost or early touch; one that went
	 * a whole timeout without a ping (this loop fell behind
	 * on a busy machine, or a send failed) was idle.
	 */
	if (!x->quiet && now >= x->last_send + o->timeout_ns) {
		l->active_gap++;
		return;
	}
	if (!x->quiet) {
		l->active_closed++;
		fprintf(stderr, "load: active connection closed %.3f s after its last ping\n",
			(double)(now - x->last_send) / 1e9);
		return;
	}
	l->quiet_closed++;
	if (now < x->last_send + o->timeout_ns) {
		l->early++;
		fprintf(stderr, "load: EARLY close: %.3f s after the last ping\n",
			(double)(now - x->last_send) / 1e9);
	}
	hist_add(l->late, now > x->last_send + o->timeout_ns ?
		 now - x->last_send - o->timeout_ns : 0);
}

/* Ping every open connection whose time has come (quiet ones stop). */
static void load_ping(struct load *l, uint64_t now)
{
	const struct opts *o = l->o;

	for (uint64_t i = 0; i < l->n_open; i++) {
		struct cconn *x = &l->cc[i];
		uint64_t before;

		if (x->closed || x->next_send > now)
			continue;
		if (x->quiet && now >= x->quiet_at) {
			x->next_send = UINT64_MAX;
			continue;
		}
		before = mono_ns();
		if (send(x->fd, "ping\n", 5, MSG_NOSIGNAL | MSG_DONTWAIT) == 5) {
			x->last_send = before;
		} else {
			l->send_err++;
		}
		x->next_send += o->interval_ns;
		if (x->next_send <= now)
			x->next_send = now + o->interval_ns;
	}
}

/* The load generator's verdict, printed; 1 if everything checked out. */
static int load_report(const struct load *l)
{
	const struct opts *o = l->o;
	char a[32], b[32], c[32], h[80];
	int ok = l->quiet_closed == l->n_quiet && l->active_closed == 0 && l->early == 0 &&
		 l->late->max_ns <= o->max_late_ns;

	printf("idle-reaper: verification summary (load generator)\n");
	report_line("connections", "%s: %s quiet, %s active", fmt_count(a, o->conns),
		    fmt_count(b, l->n_quiet), fmt_count(c, o->conns - l->n_quiet));
	check_line("quiet -> closed", l->quiet_closed == l->n_quiet,
		   "%s of %s closed by the server, %" PRIu64 " missing",
		   fmt_count(a, l->quiet_closed), fmt_count(b, l->n_quiet),
		   l->n_quiet - l->quiet_closed);
	check_line("active stay open", !l->active_closed,
		   "%" PRIu64 " active connections closed within a timeout of a ping",
		   l->active_closed);
	if (l->active_gap)
		report_line("note", "%" PRIu64 " active connections closed after the load generator"
			    " sent no ping for a whole timeout (it fell behind)", l->active_gap);
	check_line("never early", !l->early, "%" PRIu64 " closed before last ping + timeout",
		   l->early);
	check_line("lateness", l->late->max_ns <= o->max_late_ns,
		   "close seen - (last ping + timeout): %s; %" PRIu64
		   " beyond tick + slack (%.0f ms); failing bound %.0f ms",
		   fmt_hist(h, sizeof(h), l->late),
		   hist_count_above(l->late, o->tick_ns + o->slack_ns),
		   (double)(o->tick_ns + o->slack_ns) / 1e6, (double)o->max_late_ns / 1e6);
	if (l->send_err)
		report_line("note", "%" PRIu64 " pings could not be sent", l->send_err);
	fflush(stdout);
	return ok;
}

/*
 * The load generator (a child process): opens --conns connections, 64 at
 * a time, pings on schedule and watches for the server's closes until the
 * end of the load and the last quiet connection's close (or --max-late-ms
 * after the end).  Returns 1 if everything checked out.
 */
static int run_load(const struct opts *o, unsigned int port)
{
	struct load l = { .o = o };
	struct epoll_event evs[256];
	uint64_t t0, t_end, next_scan = 0;
	char a[32], b[32];
	int ok;

	l.cc = xcalloc(o->conns, sizeof(*l.cc));
	l.late = xcalloc(1, sizeof(*l.late));
	l.rng = o->seed * 0x9e3779b97f4a7c15ULL + 7;
	l.ep = epoll_create1(EPOLL_CLOEXEC);
	if (l.ep < 0)
		die("%s: load: epoll_create1: %s", prog, strerror(errno));
	l.sa.sin_family = AF_INET;
	l.sa.sin_port = htons((uint16_t)port);
	l.sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	t0 = mono_ns();
	t_end = t0 + o->duration_ns;
	load_plan(&l, t0);
	if (!o->quiet)
		printf("load: opening %s connections (%s will go quiet), pinging every %.2f s\n",
		       fmt_count(a, o->conns), fmt_count(b, l.n_quiet), (double)o->interval_ns / 1e9);
	fflush(stdout);

	for (;;) {
		uint64_t now = mono_ns();
		int n;

		if (now >= t_end && (l.quiet_closed == l.n_quiet || now >= t_end + o->max_late_ns))
			break;
		for (int k = 0; k < 64 && l.n_open < o->conns; k++) {
			open_conn(&l.cc[l.n_open], l.n_open, l.ep, &l.sa, &l.rng, o);
			l.n_open++;
		}
		n = epoll_wait(l.ep, evs, (int)ARRAY_LEN(evs), l.n_open < o->conns ? 0 : 10);
		if (n < 0 && errno != EINTR)
			die("%s: load: epoll_wait: %s", prog, strerror(errno));
		now = mono_ns();
		for (int k = 0; k < n; k++) {
			struct cconn *x = &l.cc[evs[k].data.u64];
			char buf[256];
			ssize_t r = recv(x->fd, buf, sizeof(buf), MSG_DONTWAIT);

			if (x->closed || r > 0 || (r < 0 && errno == EAGAIN))
				continue;
			load_closed(&l, x, now);	/* EOF or reset */
		}
		if (now < next_scan)
			continue;
		next_scan = now + 10 * NSEC_PER_MSEC;
		load_ping(&l, now);
	}

	ok = load_report(&l);
	for (uint64_t i = 0; i < l.n_open; i++)
		close(l.cc[i].fd);
	return ok;
}

/* ------------------------------------------------------------------- main */

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

/* The server's side: a listening socket on 127.0.0.1; returns its port. */
static unsigned int listen_loopback(struct server *s)
{
	struct sockaddr_in sa;
	socklen_t slen = sizeof(sa);
	int one = 1;

	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0)
		die("%s: socket: %s", prog, strerror(errno));
	setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)s->o->port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s->lfd, 4096) < 0 ||
	    getsockname(s->lfd, (struct sockaddr *)&sa, &slen) < 0)
		die("%s: cannot listen on 127.0.0.1:%" PRIu64 ": %s", prog, s->o->port,
		    strerror(errno));
	return ntohs(sa.sin_port);
}

/* --tc: load the program for the wheel and the port, and attach it to lo's ingress. */
static void tc_attach(struct server *s)
{
	uint64_t h = 0;
	int err;

	if (ioctl(s->wfd, TWHEEL_IOC_BPF_HANDLE, &h) < 0)
		die("%s: TWHEEL_IOC_BPF_HANDLE: %s%s", prog, strerror(errno),
		    errno == EOPNOTSUPP ? " (the module was built without BTF: make BTF=1)" : "");
	s->tc = idle_tc__open();
	if (!s->tc)
		die("%s: opening the TC program: %s", prog, strerror(errno));
	s->tc->rodata->handle = h;
	s->tc->rodata->addr = htonl(INADDR_LOOPBACK);
	s->tc->rodata->port = htons((uint16_t)s->port);
	if (idle_tc__load(s->tc))
		die("%s: loading the TC program failed (is the module's BTF loaded?)", prog);
	s->hook = (struct bpf_tc_hook){ .sz = sizeof(s->hook),
		.ifindex = (int)if_nametoindex("lo"), .attach_point = BPF_TC_INGRESS };
	err = bpf_tc_hook_create(&s->hook);
	if (err && err != -EEXIST)
		die("%s: clsact on lo: %s (modprobe sch_ingress cls_bpf)", prog, strerror(-err));
	s->tc_created = !err;
	s->tc_opts = (struct bpf_tc_opts){ .sz = sizeof(s->tc_opts),
		.prog_fd = bpf_program__fd(s->tc->progs.idle_tc) };
	err = bpf_tc_attach(&s->hook, &s->tc_opts);
	if (err)
		die("%s: attaching the TC program to lo: %s", prog, strerror(-err));
}

/* --tc: detach the program, then keep its counters (final: it runs no more). */
static void tc_detach(struct server *s)
{
	if (!s->tc)
		return;
	s->tc_opts.flags = 0;
	s->tc_opts.prog_fd = 0;
	s->tc_opts.prog_id = 0;
	bpf_tc_detach(&s->hook, &s->tc_opts);
	if (s->tc_created) {
		s->hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&s->hook);
	}
	s->tc_counts = *s->tc->bss;
	idle_tc__destroy(s->tc);
	s->tc = NULL;
}

/* The server's state for up to `limit` fds, and its wheel. */
static void server_init(struct server *s, const struct opts *o, uint64_t limit)
{
	memset(s, 0, sizeof(*s));
	s->o = o;
	s->nc = (size_t)(limit < (1 << 20) ? limit : (1 << 20));
	s->c = xcalloc(s->nc, sizeof(*s->c));
	s->dirty = xcalloc(2 * s->nc, sizeof(*s->dirty));
	s->wfd = open_wheel(o->tick_ns, o->timeout_ns);
}

/* --serve: serve until SIGINT or SIGTERM. */
static int serve_until_signal(struct server *s)
{
	struct sigaction act;

	memset(&act, 0, sizeof(act));
	act.sa_handler = on_signal;
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	s->t0 = mono_ns();
	serve(s, -1);
	printf("idle-reaper: accepted %" PRIu64 ", closed %" PRIu64 " idle, %" PRIu64
	       " by the peer\n", s->accepted, s->closed_idle, s->closed_peer);
	return 0;
}

/*
 * Serve a load generator (a child process) until it exits; the server
 * learns that from EOF on a pipe.  Returns 1 if the generator's checks
 * passed.
 */
static int serve_load(struct server *s, unsigned int port)
{
	int pfd[2], status = 0;
	pid_t child;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		die("%s: pipe: %s", prog, strerror(errno));
	child = fork();
	if (child < 0)
		die("%s: fork: %s", prog, strerror(errno));
	if (child == 0) {
		close(pfd[0]);
		close(s->lfd);
		close(s->wfd);
		_exit(run_load(s->o, port) ? 0 : 1);
	}
	close(pfd[1]);
	s->t0 = mono_ns();
	serve(s, pfd[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * --tc: the program's counts against the wheel's, exact (the program was
 * detached before either was read), and the server's own touches: none.
 */
static int tc_report(const struct server *s, const struct twheel_stats *st)
{
	const struct idle_tc__bss *c = &s->tc_counts;
	int ok = c->errors == 0 && c->touched == st->bpf_touches && c->absent == st->bpf_absent;

	check_line("tc", ok, "%" PRIu64 " segments touched their connection in the kernel"
		   " (bpf_touches %" PRIu64 "), %" PRIu64 " of connections the wheel did not"
		   " have: handshakes, after a close (bpf_absent %" PRIu64 "), %" PRIu64
		   " kfunc errors, %" PRIu64 " other packets", (uint64_t)c->touched, (uint64_t)st->bpf_touches,
		   (uint64_t)c->absent, (uint64_t)st->bpf_absent, (uint64_t)c->errors,
		   (uint64_t)c->other);
	check_line("server touches", st->touches == 0 && c->touched > 0,
		   "%" PRIu64 " ids touched by the server's write()s, %" PRIu64 " armed",
		   (uint64_t)st->touches, (uint64_t)st->arms);
	return ok && st->touches == 0 && c->touched > 0;
}

/* The server's verdict, printed after the generator's; 1 if all is well. */
static int server_report(const struct server *s, int load_ok)
{
	const struct opts *o = s->o;
	struct twheel_stats st;
	int ok_early = s->early == 0, ok_late = s->late.max_ns <= o->max_late_ns;
	int ok_misc = s->stale == 0 && s->errors == 0;
	char a[32];

	memset(&st, 0, sizeof(st));
	twheel_stats(s->wfd, &st);
	printf("idle-reaper: verification summary (server)\n");
	check_line("server", ok_misc, "accepted %s, closed %" PRIu64 " idle, %" PRIu64
		   " closed by the peer, %" PRIu64 " saved by late data, %" PRIu64
		   " stale events, %" PRIu64 " errors", fmt_count(a, s->accepted), s->closed_idle,
		   s->closed_peer, s->rescued, s->stale, s->errors);
	check_line("never early", ok_early, "%" PRIu64 " closed before %s + timeout",
		   s->early, o->tc ? "the last touch" : "last read");
	check_line("lateness (server)", ok_late, "close - (%s + timeout): max %.1f ms,"
		   " p99 %.0f ms; kernel late_max %.1f ms", o->tc ? "last touch" : "last read",
		   (double)s->late.max_ns / 1e6,
		   hist_quantile_ms(&s->late, 0.99), (double)st.late_max_ns / 1e6);
	report_line("wheel", "%" PRIu64 " touches, %" PRIu64 " expirations, %" PRIu64
		    " cancels, %" PRIu64 " timer fires, peak %.1f KiB",
		    (uint64_t)st.touches, (uint64_t)st.expirations, (uint64_t)st.cancels,
		    (uint64_t)st.timer_fires, (double)s->mem_max / 1024.0);
	if (o->tc)
		ok_misc = tc_report(s, &st) && ok_misc;
	return load_ok && ok_early && ok_late && ok_misc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct server s;
	unsigned int port;
	uint64_t limit;
	int ok;

	set_prog(argc, argv);
	parse_args(argc, argv, &o);
	limit = raise_nofile();
	if (!o.serve && o.conns + 32 > limit) {
		fprintf(stderr, "%s: RLIMIT_NOFILE is %" PRIu64 ": using %" PRIu64
			" connections\n", prog, limit, limit > 64 ? limit - 32 : 32);
		o.conns = limit > 64 ? limit - 32 : 32;
	}

	server_init(&s, &o, limit);
	port = listen_loopback(&s);
	s.port = port;
	if (o.tc)
		tc_attach(&s);
	printf("idle-reaper: listening on 127.0.0.1:%u, closing connections idle for %.1f s"
	       " (tick %.0f ms)\n", port, (double)o.timeout_ns / 1e9, (double)o.tick_ns / 1e6);
	fflush(stdout);

	signal(SIGPIPE, SIG_IGN);
	if (o.serve) {
		ok = serve_until_signal(&s);
		tc_detach(&s);
		return ok;
	}
	ok = serve_load(&s, port);
	tc_detach(&s);
	ok = server_report(&s, ok);
	printf("idle-reaper: %s\n", ok ? "VERIFIED" : "VERIFICATION FAILED");
	return ok ? 0 : 1;
}
