// SPDX-License-Identifier: MIT
/*
 * presence: an online/away/offline presence service for N users on two
 * twheel fds (seeds 000 and 002).
 *
 *  - every message from a user (a heartbeat) touches the user's id on the
 *    "offline" wheel (timeout --timeout, 30 s by default): a user silent for
 *    that long goes OFFLINE;
 *  - a heartbeat that carries user activity (a chat message; the first one,
 *    the login, always does) also touches the id on the "away" wheel
 *    (--away, 5 minutes by default): a user who keeps its connection but
 *    does nothing for that long goes AWAY until its next activity.
 *
 * Simulated clients run in a child process and send heartbeats over a Unix
 * SOCK_SEQPACKET socket, in datagrams of up to --batch ids (a u64 user id,
 * bit 63 set for activity).  Users log in spread over --login seconds, then
 * heartbeat every --interval seconds;
 * a --silent-fraction of them stops at a random round and must go offline;
 * an --idle-fraction never shows activity after login and must go away.
 *
 * The service touches each datagram's ids with one write() per wheel, reads
 * the expirations through epoll, prints a progress line every second and
 * finally checks every user against what it knows of the clients.  Exit
 * status 0 only if everything checked out.
 *
 * --upgrade-at SEC: a restart that loses nothing.  At that time the service
 * re-executes itself (an upgrade would exec the new binary), keeping its
 * wheels: their fds are inherited across execve(), and every deadline
 * stays where it was in the kernel while no process runs the service.  Its
 * own state (the per-user arrays and counters) lives in a memfd, also
 * inherited, and the new image picks both up (--resume FD) and goes on.
 * The heartbeats sent meanwhile wait in the socket; the expirations wait in
 * the wheels.  The summary checks that the wheels held the same ids before
 * and after.
 *
 * With --udp ADDR the heartbeats come as real clients send them: one UDP
 * datagram per heartbeat, to ADDR:--port, from the network namespace
 * --client-netns (the far end of a veth pair), received with recvmmsg().
 * With --xdp IFACE besides, they never reach the service: an XDP program on
 * IFACE touches the wheels through the module's kfunc and drops them; only
 * the heartbeats of users the wheels do not have (logins, users back from
 * offline or away) come up to the socket, and the service arms those.  The
 * never-early check then takes the time of each user's last touch from
 * the program (presence_net.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "twheel.h"
#include "common.h"
#include "presence_net.h"

#define ACT_FLAG	PRESENCE_ACT
#define EV_BATCH	1024

enum { ST_NEW, ST_ONLINE, ST_AWAY, ST_OFFLINE };
enum { K_SILENT = 1, K_IDLE = 2, K_AWAYEXP = 4 };	/* AWAYEXP: must go away */

struct opts {
	uint64_t users;
	uint64_t timeout_ns;
	uint64_t away_ns;
	uint64_t interval_ns;
	uint64_t login_ns;
	uint64_t duration_ns;
	uint64_t tick_ns;
	uint64_t slack_ns;
	uint64_t max_late_ns;
	uint64_t batch;
	uint64_t seed;
	double silent;
	double idle;
	int quiet;
	uint64_t upgrade_ns;	/* re-execute at t0 + this, or 0 */
	uint64_t resume_fd;	/* the saved state of a re-executed service, or 0 */
	const char *udp;	/* the service's IPv4 address: UDP heartbeats */
	uint64_t port;
	uint64_t rcvbuf;	/* the service's socket receive buffer */
	const char *netns;	/* the clients' network namespace */
	const char *raw;	/* the clients' interface for AF_PACKET frames */
	const char *xdp;	/* the interface of the XDP program */
	int sink;		/* --xdp-sink */
	struct sockaddr_in addr;	/* udp:port */
};

/* What the client process tells the service through shared memory. */
struct sender_stats {
	volatile uint64_t sent;		/* ids sent */
	volatile uint64_t max_behind_ns;	/* worst lag behind the schedule */
	volatile uint64_t lag_ns;		/* current lag */
	volatile uint64_t dev_drops0;		/* drops in their namespace at the start */
};

/*
 * Per-user state of the service (in the saved state, struct saved), plus
 * the clients' plan (kind, stop: computed again by a resumed service).
 */
static uint8_t *kind;		/* K_* bits */
static uint16_t *stop_round;	/* silent users send in rounds < stop_round */
static uint8_t *state;
static uint8_t *n_offline;	/* offline events seen (saturating) */
static uint8_t *n_away;
static uint64_t *last_hb;	/* service clock before the touch */
static uint64_t *last_act;

static const char *prog = "presence";

static void usage(FILE *f, int status)
{
	usage_exit(f, status, "[options]",
"A presence service on /dev/twheel: users silent for --timeout go offline,\n"
"users without activity for --away go away.  Simulated clients (a child\n"
"process) heartbeat over a Unix socket; at the end every user is verified.\n"
"\n"
"  --users N             number of users (default 1000000)\n"
"  --timeout SEC         offline timeout (default 30)\n"
"  --away SEC            away timeout (default 300)\n"
"  --interval SEC        heartbeat interval (default timeout/3)\n"
"  --login SEC           users log in spread over SEC (default: one interval)\n"
"  --silent-fraction F   users that stop heartbeating (default 0.1)\n"
"  --idle-fraction F     users without activity after login (default 0.1)\n"
"  --duration SEC        run time from the first login (default 2*timeout+10)\n"
"  --tick-ms MS          wheel tick (default 10)\n"
"  --slack-ms MS         lateness counted as on time beyond one tick (default 200)\n"
"  --max-late-ms MS      lateness that fails the run (default 5000; a loaded\n"
"                        or emulated machine is late, that is not a failure)\n"
"  --batch N             ids per heartbeat datagram (default 8192); with --udp,\n"
"                        datagrams of one id each, 64 to a sendmmsg()\n"
"  --seed N              seed of the clients' choices (default 1)\n"
"  --upgrade-at SEC      re-execute the service SEC after the start, keeping\n"
"                        its wheels (default: never)\n"
"  --resume FD           (set by --upgrade-at) go on from the state in FD\n"
"  --udp ADDR            heartbeats as UDP datagrams of one id each, to the\n"
"                        IPv4 address ADDR (the service's) on --port\n"
"  --port N              UDP port of the heartbeats (default 7777)\n"
"  --rcvbuf BYTES        the service's socket receive buffer, with --udp\n"
"                        (default 64 MiB: 10,000 logins a second for a few\n"
"                        seconds of a stalled service)\n"
"  --client-netns PATH   the clients send from this network namespace\n"
"                        (/run/netns/NAME), with --udp\n"
"  --client-raw IFACE    the clients write whole frames to IFACE (AF_PACKET),\n"
"                        past their own IP and UDP layers: a cheaper load\n"
"                        generator (with --udp)\n"
"  --xdp IFACE           with --udp: an XDP program on IFACE touches the users\n"
"                        the wheels have and drops their heartbeats (the\n"
"                        module must have BTF); the service sees the rest\n"
"  --xdp-sink            with --xdp: the program drops every heartbeat and\n"
"                        touches nothing, so nobody logs in: the cost of the\n"
"                        clients and of the packets up to XDP, a baseline for\n"
"                        the steady CPU per heartbeat (nothing verified)\n"
"  --quiet               no progress lines\n"
"  --help                this text\n"
"\n"
"Exit status: 0 verified, 1 verification failed, 2 usage or setup error.\n");
}

/* Defaults that depend on other options, and the options' constraints. */
static void check_opts(struct opts *o)
{
	if (!o->interval_ns)
		o->interval_ns = o->timeout_ns / 3;
	if (!o->duration_ns)
		o->duration_ns = 2 * o->timeout_ns + 10 * NSEC_PER_SEC;
	if (o->interval_ns * 2 > o->timeout_ns)
		usage_error("--interval must be at most half of --timeout");
	if (o->interval_ns * 2 > o->away_ns)
		usage_error("--interval must be at most half of --away");
	if ((o->xdp || o->netns || o->raw) && !o->udp)
		usage_error("--xdp, --client-netns and --client-raw go with --udp");
	if (o->sink && !o->xdp)
		usage_error("--xdp-sink goes with --xdp");
	if (o->udp && net_addr(o->udp, o->port, &o->addr) < 0)
		usage_error("invalid value for --udp: '%s'", o->udp);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	const struct opt opts[] = {
		{ "users", OPT_U64, &o->users, .min = 1, .max = 1ULL << 32, .def = "1000000" },
		{ "timeout", OPT_SECONDS, &o->timeout_ns, .min = 10 * NSEC_PER_MSEC,
		  .max = UINT64_MAX, .def = "30" },
		{ "away", OPT_SECONDS, &o->away_ns, .min = 10 * NSEC_PER_MSEC, .max = UINT64_MAX,
		  .def = "300" },
		{ "interval", OPT_SECONDS, &o->interval_ns, .min = NSEC_PER_MSEC, .max = UINT64_MAX },
		{ "login", OPT_SECONDS, &o->login_ns, .min = 0, .max = UINT64_MAX },
		{ "silent-fraction", OPT_DOUBLE, &o->silent, .dmax = 1.0, .def = "0.1" },
		{ "idle-fraction", OPT_DOUBLE, &o->idle, .dmax = 1.0, .def = "0.1" },
		{ "duration", OPT_SECONDS, &o->duration_ns, .min = 1, .max = UINT64_MAX },
		{ "tick-ms", OPT_MS, &o->tick_ns, .min = 1, .max = 60000, .def = "10" },
		{ "slack-ms", OPT_MS, &o->slack_ns, .min = 0, .max = 3600000, .def = "200" },
		{ "max-late-ms", OPT_MS, &o->max_late_ns, .min = 1, .max = 3600000, .def = "5000" },
		{ "batch", OPT_U64, &o->batch, .min = 1, .max = 16384, .def = "8192" },
		{ "seed", OPT_U64, &o->seed, .min = 0, .max = UINT64_MAX, .def = "1" },
		{ "upgrade-at", OPT_SECONDS, &o->upgrade_ns, .min = 1, .max = UINT64_MAX },
		{ "resume", OPT_U64, &o->resume_fd, .min = 3, .max = INT32_MAX },
		{ "quiet", OPT_FLAG, .dst = &o->quiet },
		{ "udp", OPT_STRING, .dst = &o->udp },
		{ "port", OPT_U64, &o->port, .min = 1, .max = 65535, .def = "7777" },
		{ "rcvbuf", OPT_U64, &o->rcvbuf, .min = 4096, .max = INT32_MAX / 2,
		  .def = "67108864" },
		{ "client-netns", OPT_STRING, .dst = &o->netns },
		{ "client-raw", OPT_STRING, .dst = &o->raw },
		{ "xdp", OPT_STRING, .dst = &o->xdp },
		{ "xdp-sink", OPT_FLAG, .dst = &o->sink },
		{ NULL },
	};

	memset(o, 0, sizeof(*o));
	parse_opts(argc, argv, opts, OPTS_NO_OPERANDS | OPTS_UNKNOWN_APART);
	check_opts(o);
	if (o->upgrade_ns && o->upgrade_ns >= o->duration_ns)
		usage_error("--upgrade-at must come before the end (--duration)");
	/* the XDP program and its stamps would not survive the execve() */
	if (o->upgrade_ns && o->xdp)
		usage_error("--upgrade-at does not go with --xdp");
}

/* ------------------------------------------------------------ the clients */

/*
 * Schedule.  A round (one --interval) is cut in `slices` ticks; users are
 * spread over slots = slices * login_rounds, slot(u) = u % slots, so that
 * logins ramp up over the first --login seconds instead of hitting the
 * service all at once.  User u logs in at offset(u) = slot(u) * interval /
 * slices and heartbeats every interval after that; its k-th heartbeat goes
 * out at tick slot(u) + k * slices.
 */
static uint64_t act_every;	/* non-idle users show activity every act_every heartbeats */
static uint64_t slices;		/* ticks per interval */
static uint64_t login_rounds;	/* logins spread over this many intervals */
static uint64_t grace_ns;	/* what an expected expiry must leave before the end */

static uint64_t slot_of(uint64_t u)
{
	return u % (slices * login_rounds);
}

static uint64_t offset_of(const struct opts *o, uint64_t u)
{
	return slot_of(u) * o->interval_ns / slices;
}

/*
 * Deterministic plan: who is silent (and after how many heartbeats it
 * stops: its offline deadline must fall `grace` before the end), who is
 * idle (and whether its away deadline falls before the end).
 */
static void make_plan(const struct opts *o)
{
	uint64_t ts = o->silent >= 1.0 ? UINT64_MAX : (uint64_t)(o->silent * 18446744073709551616.0);
	uint64_t ti = o->idle >= 1.0 ? UINT64_MAX : (uint64_t)(o->idle * 18446744073709551616.0);

	for (uint64_t u = 0; u < o->users; u++) {
		uint64_t h1 = mix64(o->seed * 0x100000001b3ULL ^ u);
		uint64_t h2 = mix64(h1 ^ 0x5bd1e995ULL);
		uint64_t h3 = mix64(h2 + 0x27d4eb2dULL);
		uint64_t off = offset_of(o, u), rmax;

		kind[u] = 0;
		if (o->silent > 0.0 && (ts == UINT64_MAX || h1 < ts))
			kind[u] |= K_SILENT;
		if (o->idle > 0.0 && (ti == UINT64_MAX || h2 < ti))
			kind[u] |= K_IDLE;
		stop_round[u] = 0;
		if (kind[u] & K_SILENT) {
			/* last heartbeat (number stop-1) at off + (stop-1) * interval */
			rmax = (o->duration_ns - grace_ns - o->timeout_ns - off) / o->interval_ns + 1;
			if (rmax > 65535)
				rmax = 65535;
			stop_round[u] = (uint16_t)(1 + h3 % rmax);
		}
		if ((kind[u] & (K_IDLE | K_SILENT)) == K_IDLE &&
		    off + o->away_ns + grace_ns <= o->duration_ns)
			kind[u] |= K_AWAYEXP;
	}
}

/* The schedule's parameters, from the options (see "Schedule" above). */
static void plan_schedule(const struct opts *o)
{
	/* what an expected expiry must leave before the end of the run */
	grace_ns = NSEC_PER_SEC + o->tick_ns + o->slack_ns;
	slices = o->interval_ns / (100 * NSEC_PER_MSEC);
	if (slices < 1)
		slices = 1;
	if (slices > 100)
		slices = 100;
	login_rounds = (o->login_ns + o->interval_ns / 2) / o->interval_ns;	/* nearest */
	if (login_rounds < 1)
		login_rounds = 1;
	if (o->duration_ns < o->timeout_ns + grace_ns + login_rounds * o->interval_ns)
		usage_error("--duration must be at least timeout + login + %.1f s",
			    (double)grace_ns / 1e9);
	act_every = o->away_ns / (2 * o->interval_ns);
	if (!act_every)
		act_every = 1;
}

/* What the plan promises, and so what the service must see. */
struct expect {
	uint64_t silent;		/* users that stop: each goes offline once */
	uint64_t active;		/* users that must stay online */
	uint64_t idle_away;		/* idle users that must go away */
	uint64_t last_silent_deadline;	/* when the last silent user is due */
};

/* The plan's per-user arrays, then the plan itself. */
static void plan_users(const struct opts *o, struct expect *x)
{
	kind = xcalloc(o->users, 1);
	stop_round = xcalloc(o->users, sizeof(*stop_round));
	make_plan(o);
	memset(x, 0, sizeof(*x));
	for (uint64_t u = 0; u < o->users; u++) {
		if (kind[u] & K_SILENT) {
			/* last heartbeat: number stop-1, at offset + (stop-1) * interval */
			uint64_t dl = offset_of(o, u) + (stop_round[u] - 1) * o->interval_ns +
				      o->timeout_ns;

			x->silent++;
			if (dl > x->last_silent_deadline)
				x->last_silent_deadline = dl;
		} else {
			x->active++;
		}
		if (kind[u] & K_AWAYEXP)
			x->idle_away++;
	}
}

static int send_batch(int sock, const uint64_t *ids, size_t n)
{
	for (;;) {
		ssize_t r = send(sock, ids, n * sizeof(*ids), MSG_NOSIGNAL);

		if (r >= 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

/* A batch of heartbeats: one datagram, or one each with --udp. */
static int send_heartbeats(const struct opts *o, int sock, const uint64_t *ids, size_t n)
{
	return o->udp ? net_send(sock, ids, n) : send_batch(sock, ids, n);
}

/*
 * A batch sent and counted with SIGTERM blocked: the service stops the
 * clients with it, and a count that missed the last batch sent would show
 * as heartbeats handled but never sent.
 */
static void send_counted(const struct opts *o, int sock, const uint64_t *ids, size_t n,
			 struct sender_stats *ss)
{
	sigset_t term;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	if (send_heartbeats(o, sock, ids, n) < 0)
		_exit(0);
	ss->sent += n;
	sigprocmask(SIG_UNBLOCK, &term, NULL);
}

/* The client process: heartbeats on schedule until the service hangs up. */
static void run_clients(int sock, const struct opts *o, uint64_t t0, struct sender_stats *ss)
{
	uint64_t *buf = xcalloc(o->batch, sizeof(*buf));
	uint64_t nslots = slices * login_rounds;
	if (o->netns)
		ss->dev_drops0 = net_dev_drops("/proc/self/net/dev");
	for (uint64_t q = 0;; q++) {
		uint64_t t = t0 + q / slices * o->interval_ns + q % slices * o->interval_ns / slices;
		uint64_t now = mono_ns(), n = 0;

		if (now < t) {
			ss->lag_ns = 0;
			sleep_until_ns(t);
		} else {
			ss->lag_ns = now - t;
			if (now - t > ss->max_behind_ns)
				ss->max_behind_ns = now - t;
		}
		/* slots s <= q with s == q (mod slices): heartbeat k = (q - s) / slices */
		for (uint64_t s = q % slices; s <= q && s < nslots; s += slices) {
			uint64_t k = (q - s) / slices;

			for (uint64_t u = s; u < o->users; u += nslots) {
				uint64_t id = u;

				if (stop_round[u] && k >= stop_round[u])
					continue;
				if (k == 0 || (!(kind[u] & K_IDLE) && k % act_every == 0))
					id |= ACT_FLAG;
				buf[n++] = id;
				if (n == o->batch) {
					send_counted(o, sock, buf, n, ss);
					n = 0;
				}
			}
		}
		if (n)
			send_counted(o, sock, buf, n, ss);
	}
}

/* -------------------------------------------------------------- the service */

struct service {
	const struct opts *o;
	struct saved *sd;
	char **argv;
	int off_fd, away_fd, sock;
	pid_t child;
	uint64_t t0, cpu0;
	int upgraded;	/* re-executed (--upgrade-at) */
	/* counters */
	uint64_t online, away, offline;
	uint64_t hb, acts;
	uint64_t offline_events, away_events;
	uint64_t silent_off, idle_away;	/* silent users offline, idle users away */
	uint64_t false_off, false_away, reconnects, dup_off, bad_away, early, bad_id;
	uint64_t touch_errors;
	/* with --udp: dropped on the way (net_sock_drops()), at the end */
	uint64_t dev_drops0, dev_drops, sock_drops, client_drops;
	uint64_t mem_max, armed_max;
	uint64_t cpu_ns, wall_ns;	/* the service's CPU time and run time */
	struct {			/* at the last progress line */
		uint64_t t, off, hb, cpu;
	} prev;
	/*
	 * The steady phase, from one interval after the last login to the
	 * end of the heartbeats: no logins, every user heartbeating or gone
	 * silent.  Its CPU per heartbeat, the service's and the whole
	 * machine's, is what the XDP path changes.
	 */
	struct steady {
		uint64_t t, cpu, sys, hb;
	} steady[2];
	int steady_n;			/* samples taken */
	struct hist late_k_off, late_s_off, late_k_away, late_s_away;
	uint64_t *ids, *act_ids, *cancel_ids;
	struct twheel_event *ev;
	struct net_path *np;		/* --udp, --xdp: presence_net.h */
	struct twheel_stats st_off, st_away;	/* at the last sample */
};

/* ------------------------------------------------------- the saved state */

#define SAVED_MAGIC	0x70726573656e6365ULL	/* "presence" */

/*
 * What outlives the process image (--upgrade-at), in a memfd mapped
 * shared: the clients' figures (the client process writes them there),
 * the service as it was at the upgrade (its fds and counters; not its
 * pointers), then the per-user arrays, on the next page (SAVED_HDR).
 */
struct saved {
	uint64_t magic, users;
	int fd;				/* the memfd */
	struct sender_stats ss;
	struct service sv;
	uint64_t upgrade_t, resume_t;	/* the execve(), the new image back */
	uint64_t held_before, held_after; /* ids armed or queued, both wheels */
};

#define SAVED_HDR	((sizeof(struct saved) + 4095) & ~(size_t)4095)

/* Bytes of the per-user byte arrays, rounded up for the u64 ones after. */
static uint64_t bytes_of(uint64_t users)
{
	return (3 * users + 7) & ~7ULL;
}

static size_t saved_size(uint64_t users)
{
	return SAVED_HDR + bytes_of(users) + 2 * users * sizeof(uint64_t);
}

/* Map the saved state in @fd and point the per-user arrays into it. */
static struct saved *map_saved(int fd, uint64_t users)
{
	struct saved *sd = mmap(NULL, saved_size(users), PROT_READ | PROT_WRITE, MAP_SHARED,
				fd, 0);
	uint8_t *p = (uint8_t *)sd + SAVED_HDR;

	if (sd == MAP_FAILED)
		die("%s: mmap of the saved state: %s", prog, strerror(errno));
	state = p;
	n_offline = p + users;
	n_away = p + 2 * users;
	last_hb = (uint64_t *)(p + bytes_of(users));
	last_act = last_hb + users;
	return sd;
}

/* A new saved state (zeroed: every user ST_NEW). */
static struct saved *new_saved(uint64_t users)
{
	int fd = memfd_create("presence-state", MFD_CLOEXEC);
	struct saved *sd;

	if (fd < 0 || ftruncate(fd, (off_t)saved_size(users)) < 0)
		die("%s: memfd for the saved state: %s", prog, strerror(errno));
	sd = map_saved(fd, users);
	sd->magic = SAVED_MAGIC;
	sd->users = users;
	sd->fd = fd;
	return sd;
}

/* The saved state a re-executed service inherited in @fd. */
static struct saved *open_saved(int fd, uint64_t users)
{
	struct stat st;
	struct saved *sd;

	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != saved_size(users))
		die("%s: --resume %d: not the saved state of %" PRIu64 " users", prog, fd,
		    users);
	sd = map_saved(fd, users);
	if (sd->magic != SAVED_MAGIC || sd->users != users || sd->fd != fd)
		die("%s: --resume %d: not the saved state of this run", prog, fd);
	return sd;
}

/* The stats of both wheels. */
static void both_stats(const struct service *sv, struct twheel_stats *a,
		       struct twheel_stats *b)
{
	if (twheel_stats(sv->off_fd, a) < 0 || twheel_stats(sv->away_fd, b) < 0)
		die("%s: GET_STATS: %s", prog, strerror(errno));
}

/* Ids armed or queued in both wheels. */
static uint64_t held_ids(const struct service *sv)
{
	struct twheel_stats a, b;

	both_stats(sv, &a, &b);
	return a.armed + a.pending + b.armed + b.pending;
}

/* Set or clear close-on-exec on the fds that outlive the process image. */
static void keep_fds(const struct service *sv, int cloexec)
{
	const int fds[] = { sv->sd->fd, sv->sock, sv->off_fd, sv->away_fd };

	for (size_t i = 0; i < ARRAY_LEN(fds); i++)
		if (fcntl(fds[i], F_SETFD, cloexec ? FD_CLOEXEC : 0) < 0)
			die("%s: fcntl: %s", prog, strerror(errno));
}

/*
 * The upgrade: save the service, then execute this program again with the
 * same options and --resume.  The wheels go on meanwhile, in the kernel.
 */
static void upgrade(struct service *sv)
{
	struct saved *sd = sv->sd;
	char fdarg[16], **argv;
	int argc = 0;

	while (sv->argv[argc])
		argc++;
	argv = xcalloc((size_t)argc + 3, sizeof(*argv));
	memcpy(argv, sv->argv, (size_t)argc * sizeof(*argv));
	snprintf(fdarg, sizeof(fdarg), "%d", sd->fd);
	argv[argc] = "--resume";
	argv[argc + 1] = fdarg;
	sd->held_before = held_ids(sv);
	sv->upgraded = 1;
	sd->sv = *sv;
	keep_fds(sv, 0);
	if (!sv->o->quiet)
		printf("presence: t=%.1fs: upgrade: re-executing with %" PRIu64
		       " ids in the wheels\n", (double)(mono_ns() - sv->t0) / 1e9,
		       sd->held_before);
	fflush(stdout);
	sd->upgrade_t = mono_ns();
	execv("/proc/self/exe", argv);
	die("%s: execv /proc/self/exe: %s", prog, strerror(errno));
}

/* The new image: the service as it was saved, its fds inherited. */
static void resume_service(struct service *sv, const struct opts *o, struct saved *sd,
			   char **argv)
{
	sd->resume_t = mono_ns();
	*sv = sd->sv;
	sv->o = o;
	sv->sd = sd;
	sv->argv = argv;
	keep_fds(sv, 1);
	sd->held_after = held_ids(sv);
	if (!o->quiet)
		printf("presence: t=%.1fs: resumed %.1f ms after the execve, %" PRIu64
		       " ids in the wheels\n", (double)(sd->resume_t - sv->t0) / 1e9,
		       (double)(sd->resume_t - sd->upgrade_t) / 1e6, sd->held_after);
}

static void touch_all(struct service *sv, int fd, const uint64_t *ids, size_t n)
{
	ssize_t r = twheel_touch(fd, ids, n);

	if (r != (ssize_t)n) {
		sv->touch_errors++;
		if (sv->touch_errors < 5)
			fprintf(stderr, "%s: touch of %zu ids: %zd (%s)\n", prog, n, r,
				r < 0 ? twheel_strerror((int)r) : "short");
	}
}

/* One heartbeat datagram: update the users, touch both wheels. */
static void on_heartbeats(struct service *sv, const uint64_t *msg, size_t n)
{
	uint64_t now = mono_ns();
	size_t nh = 0, na = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t u = msg[i] & ~ACT_FLAG;
		int act = !!(msg[i] & ACT_FLAG);

		if (u >= sv->o->users) {
			sv->bad_id++;
			continue;
		}
		switch (state[u]) {
		case ST_NEW:
			sv->online++;
			state[u] = ST_ONLINE;
			break;
		case ST_OFFLINE:
			/* back after being declared offline: a new login */
			sv->reconnects++;
			sv->offline--;
			sv->online++;
			state[u] = ST_ONLINE;
			act = 1;
			break;
		}
		last_hb[u] = now;
		sv->ids[nh++] = u;
		if (act) {
			if (state[u] == ST_AWAY) {
				sv->away--;
				state[u] = ST_ONLINE;
			}
			last_act[u] = now;
			sv->act_ids[na++] = u;
		}
	}
	if (nh)
		touch_all(sv, sv->off_fd, sv->ids, nh);
	if (na)
		touch_all(sv, sv->away_fd, sv->act_ids, na);
	sv->hb += nh;
	sv->acts += na;
}

/* With --udp: up to 4 vectors of one-id datagrams. */
static void drain_udp(struct service *sv)
{
	uint64_t *buf = sv->ids + sv->o->batch;

	for (int k = 0; k < 4; k++) {
		size_t n = net_recv(sv->np, sv->sock, buf, sv->o->batch);

		if (!n)
			return;
		on_heartbeats(sv, buf, n);
	}
}

static void drain_socket(struct service *sv)
{
	if (sv->o->udp) {
		drain_udp(sv);
		return;
	}
	for (int k = 0; k < 4; k++) {
		ssize_t r = recv(sv->sock, sv->ids + sv->o->batch, sv->o->batch * 8, MSG_DONTWAIT);

		if (r < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			die("%s: recv: %s", prog, strerror(errno));
		}
		if (r == 0)
			die("%s: the client process hung up", prog);
		if (r % 8)
			die("%s: bad datagram of %zd bytes", prog, r);
		on_heartbeats(sv, sv->ids + sv->o->batch, (size_t)r / 8);
	}
}

/*
 * When user @u was last touched on the offline wheel (@away: the away
 * wheel): by the service, or by the XDP program if later.
 */
static uint64_t last_touch(const struct service *sv, uint64_t u, int away)
{
	uint64_t t = away ? last_act[u] : last_hb[u], x = net_stamp(sv->np, u, away);

	return x > t ? x : t;
}

/* Checks common to both wheels; returns the lateness seen by the service. */
static uint64_t check_event(struct service *sv, const struct twheel_event *e,
			    uint64_t touched, uint64_t timeout, uint64_t now,
			    struct hist *hk, struct hist *hs)
{
	if (e->expired_ns < e->deadline_ns || now < e->deadline_ns ||
	    e->deadline_ns < touched + timeout) {
		sv->early++;
		if (sv->early <= 5)
			fprintf(stderr, "%s: EARLY: id %" PRIu64 " touched %" PRIu64
				" timeout %" PRIu64 " deadline %" PRIu64 " expired %" PRIu64
				" now %" PRIu64 "\n", prog, (uint64_t)e->id, touched, timeout,
				(uint64_t)e->deadline_ns, (uint64_t)e->expired_ns, now);
	}
	hist_add(hk, e->expired_ns > e->deadline_ns ? e->expired_ns - e->deadline_ns : 0);
	hist_add(hs, now > touched + timeout ? now - touched - timeout : 0);
	return now - touched;
}

static void drain_offline(struct service *sv)
{
	for (int k = 0; k < 16; k++) {
		ssize_t n = read_events(sv->off_fd, sv->ev, EV_BATCH, "read offline wheel");
		uint64_t now = mono_ns();
		size_t nc = 0;

		if (!n)
			return;
		for (ssize_t i = 0; i < n; i++) {
			const struct twheel_event *e = &sv->ev[i];
			uint64_t u = e->id;

			sv->offline_events++;
			if (u >= sv->o->users || state[u] == ST_NEW) {
				sv->bad_id++;
				continue;
			}
			check_event(sv, e, last_touch(sv, u, 0), sv->o->timeout_ns, now,
				    &sv->late_k_off, &sv->late_s_off);
			if (state[u] == ST_OFFLINE) {
				sv->dup_off++;
				continue;
			}
			if (state[u] == ST_AWAY)
				sv->away--;
			sv->online--;
			sv->offline++;
			state[u] = ST_OFFLINE;
			if (n_offline[u] < 255)
				n_offline[u]++;
			if (kind[u] & K_SILENT) {
				if (n_offline[u] == 1)
					sv->silent_off++;
			} else {
				sv->false_off++;
			}
			sv->cancel_ids[nc++] = u;
		}
		/* an offline user is not "away" any more */
		if (nc)
			twheel_cancel(sv->away_fd, sv->cancel_ids, nc, NULL);
		if (n < EV_BATCH)
			return;
	}
}

static int away_expected(uint64_t u)
{
	return kind[u] & K_AWAYEXP;
}

static void drain_away(struct service *sv)
{
	for (int k = 0; k < 16; k++) {
		ssize_t n = read_events(sv->away_fd, sv->ev, EV_BATCH, "read away wheel");
		uint64_t now = mono_ns();

		if (!n)
			return;
		for (ssize_t i = 0; i < n; i++) {
			const struct twheel_event *e = &sv->ev[i];
			uint64_t u = e->id;

			sv->away_events++;
			if (u >= sv->o->users || state[u] == ST_NEW) {
				sv->bad_id++;
				continue;
			}
			check_event(sv, e, last_touch(sv, u, 1), sv->o->away_ns, now,
				    &sv->late_k_away, &sv->late_s_away);
			if (state[u] != ST_ONLINE) {
				/* away twice, or away after offline (cancelled) */
				sv->bad_away++;
				continue;
			}
			state[u] = ST_AWAY;
			sv->away++;
			if (n_away[u] < 255)
				n_away[u]++;
			if (away_expected(u)) {
				if (n_away[u] == 1)
					sv->idle_away++;
			} else if (!(kind[u] & (K_SILENT | K_IDLE))) {
				sv->false_away++;
			}
		}
		if (n < EV_BATCH)
			return;
	}
}

static void sample_stats(struct service *sv, uint64_t *armed, uint64_t *mem)
{
	struct twheel_stats *a = &sv->st_off, *b = &sv->st_away;

	both_stats(sv, a, b);
	*armed = a->armed + a->pending + b->armed + b->pending;
	*mem = a->mem_bytes + b->mem_bytes;
	if (*mem > sv->mem_max)
		sv->mem_max = *mem;
	if (*armed > sv->armed_max)
		sv->armed_max = *armed;
}

/* Heartbeats handled: by the service, and by the XDP program alone. */
static uint64_t hb_total(const struct service *sv)
{
	struct net_counts c;

	net_xdp_counts(sv->np, &c);
	return sv->hb + c.dropped;
}

/* CPU time of the whole machine, every CPU, but idle and iowait (/proc/stat). */
static uint64_t cpu_busy_ns(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 8)
		return 0;
	/* user nice system idle iowait irq softirq steal, in USER_HZ ticks */
	return (uint64_t)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) *
	       (NSEC_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK));
}

/* Sample the steady phase's bounds as the clock passes them. */
static void steady_sample(struct service *sv, uint64_t now)
{
	uint64_t at[2] = { sv->t0 + sv->o->login_ns + sv->o->interval_ns,
			   sv->t0 + sv->o->duration_ns };
	struct steady *s = &sv->steady[sv->steady_n];

	if (sv->steady_n == 2 || sv->o->upgrade_ns || now < at[sv->steady_n])
		return;
	s->t = now;
	s->cpu = cpu_self_ns();
	s->sys = cpu_busy_ns();
	s->hb = hb_total(sv);
	sv->steady_n++;
}

static void fmt_mib(char *buf, size_t len, uint64_t bytes)
{
	snprintf(buf, len, "%.1f MiB", (double)bytes / (1024.0 * 1024.0));
}

/* The line printed every second: the rates are over the last second. */
static void progress(struct service *sv, uint64_t now, const struct sender_stats *ss)
{
	char a[32], b[32], c[32], d[32], e[32], m[32], lag[48] = "";
	uint64_t armed, mem, cpu = cpu_self_ns(), hb = hb_total(sv);
	double dt = (double)(now - sv->prev.t) / 1e9;

	sample_stats(sv, &armed, &mem);
	fmt_mib(m, sizeof(m), mem);
	if (ss->lag_ns > 500 * NSEC_PER_MSEC)
		snprintf(lag, sizeof(lag), "  (clients %.1f s behind)", (double)ss->lag_ns / 1e9);
	printf("[%5.1fs] online %9s (away %7s)  offline %7s %7s/s  heartbeats %9s/s"
	       "  kmem %9s  cpu %3.0f%%%s\n",
	       now > sv->t0 ? (double)(now - sv->t0) / 1e9 : 0.0,
	       fmt_count(a, sv->online), fmt_count(b, sv->away), fmt_count(c, sv->offline),
	       fmt_count(d, (uint64_t)((double)(sv->offline_events - sv->prev.off) / dt + 0.5)),
	       fmt_count(e, (uint64_t)((double)(hb - sv->prev.hb) / dt + 0.5)),
	       m, 100.0 * (double)(cpu - sv->prev.cpu) / 1e9 / dt, lag);
	fflush(stdout);
	sv->prev.t = now;
	sv->prev.off = sv->offline_events;
	sv->prev.hb = hb;
	sv->prev.cpu = cpu;
}

/* ------------------------------------------------------------ setting up */

/*
 * The heartbeat channel: a SOCK_SEQPACKET pair with 2 MiB buffers; with
 * --udp, the service's UDP socket (pair[1] -1: the clients open theirs).
 */
static void open_channel(const struct opts *o, int pair[2])
{
	if (o->udp) {
		pair[0] = net_server(&o->addr, (int)o->rcvbuf);
		pair[1] = -1;
		return;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
		die("%s: socketpair: %s", prog, strerror(errno));
	for (int i = 0; i < 2; i++) {
		int sz = 2 << 20;

		if (setsockopt(pair[i], SOL_SOCKET, SO_SNDBUFFORCE, &sz, sizeof(sz)) < 0)
			setsockopt(pair[i], SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
		if (setsockopt(pair[i], SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
			setsockopt(pair[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	}
}

/*
 * The two wheels, both with room for every user: "offline" (timeout
 * --timeout, touched by every heartbeat) and "away" (--away, touched by
 * activity).
 */
static void open_wheels(struct service *sv, const struct opts *o)
{
	struct twheel_config cfg;

	sv->o = o;
	memset(&cfg, 0, sizeof(cfg));
	cfg.tick_ns = o->tick_ns;
	cfg.timeout_ns = o->timeout_ns;
	cfg.max_ids = o->users > TWHEEL_DEFAULT_MAX_IDS ? o->users : TWHEEL_DEFAULT_MAX_IDS;
	cfg.clockid = CLOCK_MONOTONIC;
	sv->off_fd = twheel_open(&cfg, O_NONBLOCK | O_CLOEXEC);
	if (sv->off_fd < 0)
		die("%s: cannot open the offline wheel (/dev/twheel): %s%s", prog,
		    twheel_strerror(sv->off_fd),
		    sv->off_fd == -ENOENT ? " (is the twheel module loaded?)" : "");
	cfg.timeout_ns = o->away_ns;
	sv->away_fd = twheel_open(&cfg, O_NONBLOCK | O_CLOEXEC);
	if (sv->away_fd < 0)
		die("%s: cannot open the away wheel: %s", prog, twheel_strerror(sv->away_fd));
}

static void print_plan(const struct opts *o, const struct expect *x)
{
	char a[32], b[32], c[32];

	printf("presence: %s users, offline after %.1f s, away after %.1f s, heartbeat every %.2f s,"
	       " tick %.0f ms, duration %.0f s\n",
	       fmt_count(a, o->users), (double)o->timeout_ns / 1e9, (double)o->away_ns / 1e9,
	       (double)o->interval_ns / 1e9, (double)o->tick_ns / 1e6, (double)o->duration_ns / 1e9);
	printf("presence: logins spread over %.1f s; %s users go silent (all offline by t=%.1f s),"
	       " %s idle users must go away\n", (double)(login_rounds * o->interval_ns) / 1e9,
	       fmt_count(b, x->silent), (double)x->last_silent_deadline / 1e9,
	       fmt_count(c, x->idle_away));
	fflush(stdout);
}

/* Fork the client process, which starts 200 ms from now (sv->t0). */
static pid_t start_clients(struct service *sv, int pair[2], struct sender_stats *ss)
{
	pid_t child;

	sv->t0 = mono_ns() + 200 * NSEC_PER_MSEC;
	child = fork();
	if (child < 0)
		die("%s: fork: %s", prog, strerror(errno));
	if (child == 0) {
		close(pair[0]);
		close(sv->off_fd);
		close(sv->away_fd);
		signal(SIGTERM, SIG_DFL);
		if (sv->o->udp)
			pair[1] = net_client(sv->o->netns, sv->o->raw, &sv->o->addr);
		run_clients(pair[1], sv->o, sv->t0, ss);
		_exit(0);
	}
	if (pair[1] >= 0)
		close(pair[1]);
	sv->sock = pair[0];
	sv->child = child;
	return child;
}

/* The network path's buffers (presence_net.h), again after an upgrade. */
static struct net_path *open_net(void)
{
	struct net_path *np = xcalloc(1, sizeof(*np));

	net_init(np);
	return np;
}

/* Buffers for a datagram, its touches, the cancels and the events. */
static void alloc_buffers(struct service *sv)
{
	sv->ids = xcalloc(2 * sv->o->batch, sizeof(uint64_t));
	sv->act_ids = xcalloc(sv->o->batch, sizeof(uint64_t));
	sv->cancel_ids = xcalloc(EV_BATCH, sizeof(uint64_t));
	sv->ev = xcalloc(EV_BATCH, sizeof(*sv->ev));
}

/* One epoll set for the heartbeat socket and both wheels. */
static int watch_fds(const struct service *sv)
{
	const int fds[] = { sv->sock, sv->off_fd, sv->away_fd };
	struct epoll_event ee;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep < 0)
		die("%s: epoll_create1: %s", prog, strerror(errno));
	memset(&ee, 0, sizeof(ee));
	ee.events = EPOLLIN;
	for (size_t i = 0; i < ARRAY_LEN(fds); i++) {
		ee.data.fd = fds[i];
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ee) < 0)
			die("%s: epoll_ctl: %s", prog, strerror(errno));
	}
	return ep;
}

/* ---------------------------------------------------------- the event loop */

/*
 * Heartbeats in, expirations out, a progress line every second, until the
 * end of the run; then up to --max-late-ms more for late expirations.
 */
static void run_service(struct service *sv, int ep, const struct expect *x,
			const struct sender_stats *ss)
{
	struct epoll_event evs[8];
	uint64_t t_end = sv->t0 + sv->o->duration_ns, t_settle = t_end + sv->o->max_late_ns;
	uint64_t now = mono_ns(), next_prog = sv->t0 + NSEC_PER_SEC;

	while (next_prog <= now)
		next_prog += NSEC_PER_SEC;
	sv->prev.t = now;
	sv->prev.cpu = cpu_self_ns();
	for (;;) {
		int n, tmo;

		now = mono_ns();
		tmo = next_prog > now ? (int)((next_prog - now) / NSEC_PER_MSEC) + 1 : 0;
		n = epoll_wait(ep, evs, (int)ARRAY_LEN(evs), tmo);
		if (n < 0 && errno != EINTR)
			die("%s: epoll_wait: %s", prog, strerror(errno));
		for (int i = 0; i < n; i++) {
			if (evs[i].data.fd == sv->sock)
				drain_socket(sv);
			else if (evs[i].data.fd == sv->off_fd)
				drain_offline(sv);
			else
				drain_away(sv);
		}
		now = mono_ns();
		steady_sample(sv, now);
		if (now >= next_prog) {
			if (!sv->o->quiet)
				progress(sv, now, ss);
			else
				sample_stats(sv, &(uint64_t){ 0 }, &(uint64_t){ 0 });
			while (next_prog <= now)
				next_prog += NSEC_PER_SEC;
		}
		if (sv->o->upgrade_ns && !sv->upgraded && now >= sv->t0 + sv->o->upgrade_ns)
			upgrade(sv);
		/* settle: wait (up to --max-late-ms) for late expirations */
		if (now >= t_end && (sv->o->sink || now >= t_settle ||
				     (sv->silent_off == x->silent && sv->idle_away == x->idle_away)))
			break;
	}
	/* the process's CPU time: it goes on across an execve() */
	sv->cpu_ns = cpu_self_ns() - sv->cpu0;
	sv->wall_ns = mono_ns() - sv->t0;
}

static void stop_clients(struct service *sv)
{
	int status;

	if (sv->o->udp) {
		sv->sock_drops = net_sock_drops(sv->sock);
		sv->dev_drops = net_dev_drops("/proc/self/net/dev") - sv->dev_drops0;
	}
	if (sv->o->netns) {
		char dev[64];

		snprintf(dev, sizeof(dev), "/proc/%d/net/dev", (int)sv->child);
		sv->client_drops = net_dev_drops(dev) - sv->sd->ss.dev_drops0;
	}
	close(sv->sock);
	kill(sv->child, SIGTERM);
	while (waitpid(sv->child, &status, 0) < 0 && errno == EINTR)
		;
}

/* ---------------------------------------------------------- verification */

struct verdict {
	uint64_t miss_off, miss_away;	/* silent users never offline, idle never away */
	uint64_t lost;			/* datagrams the network dropped (--udp) */
	uint64_t unheard_off, unheard_away;	/* of those misses: nothing arrived */
	uint64_t late_off, late_away;	/* of those misses: heard too late */
	uint64_t tick_slack;		/* lateness still on time */
	uint64_t late_k, late_s;	/* events later than that: kernel's, service's view */
	uint64_t maxlate;		/* the service's worst lateness */
	int lagged;			/* the clients fell a timeout behind */
	struct net_counts xdp;		/* with --xdp */
	int ok_off, ok_act, ok_away, ok_early, ok_late, ok_misc, ok_upgrade, ok_lost, ok;
};

/*
 * The misses that are not the wheel's, each user's classified once.
 *
 * Never heard from: UDP loses datagrams on a loaded machine, and a
 * service that does not run for a while (a host that does not schedule
 * its CPU) finds its socket buffer full, and the kernel drops what comes
 * next.  A silent user whose heartbeats all got lost never reached the
 * service (it cannot go offline), an idle user whose login got lost was
 * never active (it cannot go away).  Such misses are excused, each by one
 * datagram the network counted as dropped (the service's socket, the
 * devices of both ends): more of them than drops, or any other miss, fails
 * the run.  A heartbeat that reached the service and was lost after that
 * still fails it.
 *
 * Heard too late: clients held back by a loaded machine send late, and a
 * stalled service reads late.  A user whose last heartbeat (or activity)
 * was touched so late that the deadline it set, plus a tick and the slack,
 * falls after the service stopped reading (the end of the run and its
 * --max-late-ms of settling) cannot have gone offline (away) while it
 * read, though the plan, which assumed everyone on time, says it must.
 * The deadline is computed from the touch (last_touch(): the service's,
 * or the XDP program's), so the excuse covers the lateness of the clients
 * and of the service, never the wheel's.  An active user sent offline for
 * a late heartbeat (excused once the clients fell a timeout behind,
 * ok_act, so after v->lagged is known) is cancelled from the away wheel:
 * its missing away is excused alike.  A run that excuses most of the
 * plan's transitions that way tested too little, and fails (verify()).
 */
static void excused(const struct service *sv, struct verdict *v)
{
	const struct opts *o = sv->o;
	/* when the service stopped reading, less what an event may be late */
	uint64_t t_stop = sv->t0 + sv->wall_ns - o->tick_ns - o->slack_ns;

	v->lost = sv->sock_drops + sv->dev_drops + sv->client_drops;
	v->unheard_off = v->unheard_away = v->late_off = v->late_away = 0;
	for (uint64_t u = 0; u < o->users; u++) {
		if ((kind[u] & K_SILENT) && !n_offline[u]) {
			if (state[u] == ST_NEW)
				v->unheard_off++;
			else if (last_touch(sv, u, 0) + o->timeout_ns > t_stop)
				v->late_off++;
		}
		if ((kind[u] & K_AWAYEXP) && !n_away[u]) {
			if (!last_act[u])
				v->unheard_away++;
			else if (last_touch(sv, u, 1) + o->away_ns > t_stop ||
				 (n_offline[u] && v->lagged))
				v->late_away++;
		}
	}
}

static void verify(const struct service *sv, const struct expect *x,
		   const struct sender_stats *ss, struct verdict *v)
{
	const struct opts *o = sv->o;

	v->miss_off = x->silent - sv->silent_off;
	v->miss_away = x->idle_away - sv->idle_away;
	v->tick_slack = o->tick_ns + o->slack_ns;
	v->late_k = hist_count_above(&sv->late_k_off, v->tick_slack) +
		    hist_count_above(&sv->late_k_away, v->tick_slack);
	v->late_s = hist_count_above(&sv->late_s_off, v->tick_slack) +
		    hist_count_above(&sv->late_s_away, v->tick_slack);
	v->maxlate = sv->late_s_off.max_ns > sv->late_s_away.max_ns ?
		     sv->late_s_off.max_ns : sv->late_s_away.max_ns;
	/*
	 * An active user goes offline only if no heartbeat of its came
	 * through for a whole timeout: a lost touch shows as an early
	 * event (the deadline is checked against the last heartbeat);
	 * otherwise the clients, held back by a service that did not
	 * keep up (or by a busy host), sent it late.  That is a load
	 * figure, not a defect, once they fell timeout - interval
	 * behind their schedule (less 250 ms for datagrams in flight).
	 */
	v->lagged = ss->max_behind_ns + 250 * NSEC_PER_MSEC >= o->timeout_ns - o->interval_ns;
	excused(sv, v);
	v->ok_lost = v->unheard_off + v->unheard_away <= v->lost;
	v->ok_off = v->miss_off == v->unheard_off + v->late_off && sv->dup_off == 0 &&
		    v->late_off * 2 <= x->silent && v->ok_lost;
	v->ok_act = (sv->false_off == 0 && sv->reconnects == 0) || v->lagged;
	v->ok_away = v->miss_away == v->unheard_away + v->late_away && sv->false_away == 0 &&
		     sv->bad_away == 0 && v->late_away * 2 <= x->idle_away && v->ok_lost;
	v->ok_early = sv->early == 0;
	v->ok_late = v->maxlate <= o->max_late_ns;
	v->ok_misc = sv->bad_id == 0 && sv->touch_errors == 0 && sv->np->truncated == 0;
	net_xdp_counts(sv->np, &v->xdp);
	v->ok_misc = v->ok_misc && v->xdp.errors == 0;
	/* the new image found every id the old one left in the wheels */
	v->ok_upgrade = !o->upgrade_ns ||
			(sv->upgraded && sv->sd->held_before == sv->sd->held_after);
	v->ok = v->ok_off && v->ok_act && v->ok_away && v->ok_early && v->ok_late &&
		v->ok_misc && v->ok_upgrade;
}

/* With --udp: where the datagrams went; with --xdp, what the program did. */
static void print_udp(const struct service *sv, const struct sender_stats *ss,
		      const struct verdict *v)
{
	const struct net_counts *c = &v->xdp;
	uint64_t hb = hb_total(sv);

	report_line("udp", "%" PRIu64 " datagrams sent, %" PRIu64 " handled, %" PRIu64
		    " lost or unread at the end, %" PRIu64 " not one id", (uint64_t)ss->sent, hb,
		    ss->sent > hb ? ss->sent - hb : 0, sv->np->truncated);
	if (!sv->o->xdp)
		return;
	report_line("xdp", "%s on %s: %" PRIu64 " touched in the kernel and dropped, %" PRIu64
		    " up to the service (%" PRIu64 " unknown, %" PRIu64 " back from away),"
		    " %" PRIu64 " kfunc errors, %" PRIu64 " other packets", sv->np->xdp_mode,
		    sv->o->xdp, c->dropped, sv->hb, c->absent, c->away_absent, c->errors, c->other);
	report_line("bpf touches", "offline wheel %" PRIu64 " (%" PRIu64 " absent),"
		    " away wheel %" PRIu64 " (%" PRIu64 " absent)",
		    (uint64_t)sv->st_off.bpf_touches, (uint64_t)sv->st_off.bpf_absent,
		    (uint64_t)sv->st_away.bpf_touches, (uint64_t)sv->st_away.bpf_absent);
}

/* The steady phase's CPU per heartbeat, if the run reached it. */
static void print_steady(const struct service *sv)
{
	const struct steady *s0 = &sv->steady[0], *s1 = &sv->steady[1];
	double hbs = (double)(s1->hb - s0->hb);
	char a[32];

	if (sv->steady_n != 2 || s1->hb <= s0->hb)
		return;
	report_line("steady cpu", "per heartbeat: %.0f ns of the service, %.0f ns of the"
		    " machine (clients included); over %.1f s and %s heartbeats after"
		    " the logins", (double)(s1->cpu - s0->cpu) / hbs,
		    (double)(s1->sys - s0->sys) / hbs, (double)(s1->t - s0->t) / 1e9,
		    fmt_count(a, s1->hb - s0->hb));
}

/* --xdp-sink: what the clients and their packets cost, nothing verified. */
static void print_baseline(const struct service *sv, const struct sender_stats *ss)
{
	struct net_counts c;
	char a[32];

	net_xdp_counts(sv->np, &c);
	printf("presence: baseline (--xdp-sink)\n");
	report_line("xdp sink", "%s heartbeats dropped untouched on %s, %" PRIu64
		    " up to the service, %" PRIu64 " other packets",
		    fmt_count(a, c.dropped), sv->o->xdp, sv->hb, c.other);
	report_line("service cpu", "%.1f s over %.1f s; clients worst lag %.0f ms",
		    (double)sv->cpu_ns / 1e9, (double)sv->wall_ns / 1e9,
		    (double)ss->max_behind_ns / 1e6);
	print_steady(sv);
	printf("presence: baseline, not verified\n");
}

static void print_summary(const struct service *sv, const struct expect *x,
			  const struct sender_stats *ss, const struct verdict *v)
{
	const struct opts *o = sv->o;
	char a[32], b[32], c[32], h[80];

	printf("presence: verification summary\n");
	report_line("users", "%s: %s silent, %s active; %s heartbeats, %s activities",
		    fmt_count(a, o->users), fmt_count(b, x->silent), fmt_count(c, x->active),
		    fmt_count((char[32]){ 0 }, hb_total(sv)), fmt_count((char[32]){ 0 }, sv->acts));
	if (o->udp)
		print_udp(sv, ss, v);
	if (o->udp || v->unheard_off || v->unheard_away)
		check_line("lost on the way", v->ok_lost, "%" PRIu64 " datagrams dropped (socket %"
			   PRIu64 ", devices %" PRIu64 " here, %" PRIu64 " at the clients); never"
			   " heard from: %" PRIu64 " silent users, %" PRIu64 " idle users' logins",
			   v->lost, sv->sock_drops, sv->dev_drops, sv->client_drops,
			   v->unheard_off, v->unheard_away);
	check_line("silent -> offline", v->ok_off, "%s of %s went offline, %" PRIu64 " missing (%"
		   PRIu64 " never heard from, %" PRIu64 " due after the end: heard late), %"
		   PRIu64 " twice", fmt_count(a, sv->silent_off), fmt_count(b, x->silent),
		   v->miss_off, v->unheard_off, v->late_off, sv->dup_off);
	report_line("active stay online", "%" PRIu64 " active users went offline, %" PRIu64
		    " came back  [%s%s]", sv->false_off, sv->reconnects, yesno(v->ok_act),
		    sv->false_off && v->lagged ? ": the clients fell behind by a timeout" : "");
	check_line("idle -> away", v->ok_away, "%s of %s idle users went away (%" PRIu64
		   " logins never heard, %" PRIu64 " due after the end: heard late), %" PRIu64
		   " non-idle went away, %" PRIu64 " bad away events", fmt_count(a, sv->idle_away),
		   fmt_count(b, x->idle_away), v->unheard_away, v->late_away, sv->false_away,
		   sv->bad_away);
	check_line("never early", v->ok_early, "%" PRIu64 " events before last touch + timeout",
		   sv->early);
	report_line("lateness, kernel", "expired_ns - deadline_ns: max %.1f ms, p99 %.0f ms"
		    " (offline), max %.1f ms (away)",
		    (double)sv->late_k_off.max_ns / 1e6, hist_quantile_ms(&sv->late_k_off, 0.99),
		    (double)sv->late_k_away.max_ns / 1e6);
	report_line("lateness, service", "seen - (last touch + timeout): %s (offline),"
		    " max %.1f ms (away)", fmt_hist(h, sizeof(h), &sv->late_s_off),
		    (double)sv->late_s_away.max_ns / 1e6);
	check_line("on time", v->ok_late, "%s kernel / %s service events later than tick + slack"
		   " (%.0f ms); failing bound %.0f ms", fmt_count(a, v->late_k),
		   fmt_count(b, v->late_s), (double)v->tick_slack / 1e6,
		   (double)o->max_late_ns / 1e6);
	report_line("kernel memory", "peak %.1f MiB for %s ids (%.1f B/id over both wheels)",
		    (double)sv->mem_max / (1024.0 * 1024.0), fmt_count(a, sv->armed_max),
		    sv->armed_max ? (double)sv->mem_max / (double)sv->armed_max : 0.0);
	report_line("service cpu", "%.1f s over %.1f s (%.0f%%); clients worst lag %.0f ms",
		    (double)sv->cpu_ns / 1e9, (double)sv->wall_ns / 1e9,
		    100.0 * (double)sv->cpu_ns / (double)sv->wall_ns,
		    (double)ss->max_behind_ns / 1e6);
	print_steady(sv);
	if (o->upgrade_ns)
		check_line("restart", v->ok_upgrade, "re-executed at t=%.1f s, back %.1f ms later;"
			   " %s ids in the wheels before, %s after",
			   (double)(sv->sd->upgrade_t - sv->t0) / 1e9,
			   (double)(sv->sd->resume_t - sv->sd->upgrade_t) / 1e6,
			   fmt_count(a, sv->sd->held_before), fmt_count(b, sv->sd->held_after));
	if (!v->ok_misc)
		report_line("errors", "%" PRIu64 " bad ids, %" PRIu64 " failed touches, %"
			    PRIu64 " failed BPF touches, %" PRIu64 " bad datagrams", sv->bad_id,
			    sv->touch_errors, v->xdp.errors, sv->np->truncated);
	printf("presence: %s\n", v->ok ? "VERIFIED" : "VERIFICATION FAILED");
}

int main(int argc, char **argv)
{
	static struct service sv;	/* about 1 MiB: its histograms */
	struct opts o;
	struct expect x;
	struct saved *sd;
	struct verdict v;
	int pair[2], ep;

	set_prog(argc, argv);
	parse_args(argc, argv, &o);
	plan_schedule(&o);
	plan_users(&o, &x);

	if (o.resume_fd) {
		sd = open_saved((int)o.resume_fd, o.users);
		resume_service(&sv, &o, sd, argv);
		sv.np = open_net();
	} else {
		sd = new_saved(o.users);
		sv.sd = sd;
		sv.argv = argv;
		open_channel(&o, pair);
		if (o.udp)
			sv.dev_drops0 = net_dev_drops("/proc/self/net/dev");
		open_wheels(&sv, &o);
		sv.np = open_net();
		if (o.xdp)
			net_xdp_attach(sv.np, o.xdp, sv.off_fd, sv.away_fd, (uint16_t)o.port,
				       o.users, o.sink);
		print_plan(&o, &x);
		start_clients(&sv, pair, &sd->ss);
		sv.cpu0 = cpu_self_ns();
	}
	alloc_buffers(&sv);
	ep = watch_fds(&sv);

	run_service(&sv, ep, &x, &sd->ss);
	stop_clients(&sv);
	sample_stats(&sv, &(uint64_t){ 0 }, &(uint64_t){ 0 });

	if (o.sink) {
		print_baseline(&sv, &sd->ss);
		net_xdp_detach(sv.np);
		return 0;
	}
	verify(&sv, &x, &sd->ss, &v);
	print_summary(&sv, &x, &sd->ss, &v);
	net_xdp_detach(sv.np);
	return v.ok ? 0 : 1;
}
