// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * twheelctl: inspect the twheel module and its wheels, save a running
 * process's wheel to a snapshot, restore a snapshot into it, check one.
 *
 * Exit status: 0 success, 1 error, 2 usage error.  See twheelctl(8).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "twheel.h"
#include "util.h"
#include "opts.h"

#ifndef TWHEELCTL_VERSION
#define TWHEELCTL_VERSION "0.1.0"
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#define DEV_PATH "/dev/twheel"
#define SYS_MODULE "/sys/module/twheel"

static const char *prog = "twheelctl";

/* A command: its synopsis and help, for usage() (see main()). */
struct command {
	const char *name;
	const char *args;	/* the synopsis, after "usage: twheelctl " */
	const char *help;
	int (*run)(int argc, char **argv);	/* argv[0] is the command */
};

/* The command whose arguments are parsed; NULL: twheelctl's own. */
static const struct command *cmd;

static void usage(FILE *f, int status)
{
	if (cmd)
		usage_exit(f, status, cmd->args, cmd->help);
	usage_exit(f, status, "COMMAND [ARGS]",
		   "\n"
		   "Commands:\n"
		   "  status                        module loaded?, parameters, /dev/twheel\n"
		   "  top [--interval S] [--once] [--iterations N]\n"
		   "                                twheel fds of every process, with rates\n"
		   "  save [--pid PID] --fd N FILE  snapshot the wheel behind fd N (of PID,\n"
		   "                                through pidfd_getfd) to FILE\n"
		   "  restore [--pid PID] --fd N FILE\n"
		   "                                arm the ids of snapshot FILE in that wheel\n"
		   "  check FILE                    validate a snapshot, print its header\n"
		   "\n"
		   "Options: -h, --help (also after a command), -V, --version\n"
		   "Exit status: 0 ok, 1 error, 2 usage error.  See twheelctl(8).\n");
}

/* The options of the commands that have none but --help. */
static const struct opt no_opts[] = {
	{ NULL },
};

static int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(prog, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

/* ------------------------------------------------------------- files */

/* Read a small file into buf (NUL-terminated, trailing newline cut). */
static int read_small(const char *path, char *buf, size_t size)
{
	ssize_t r;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	r = read(fd, buf, size - 1);
	if (r < 0) {
		r = -errno;
		close(fd);
		return (int)r;
	}
	close(fd);
	buf[r] = 0;
	while (r > 0 && (buf[r - 1] == '\n' || buf[r - 1] == ' '))
		buf[--r] = 0;
	return 0;
}

/* ------------------------------------------------------------ status */

static int cmd_status(int argc, char **argv)
{
	char path[PATH_MAX], val[256];
	struct dirent **names = NULL;
	int loaded, n, i, rc = 0;
	struct stat st;

	parse_opts(argc, argv, no_opts, OPTS_NO_OPERANDS | OPTS_UNKNOWN_APART);
	loaded = stat(SYS_MODULE, &st) == 0 && S_ISDIR(st.st_mode);
	if (loaded) {
		if (read_small(SYS_MODULE "/initstate", val, sizeof(val)))
			strcpy(val, "live");
		printf("module:      twheel loaded (%s)", val);
		if (!read_small(SYS_MODULE "/srcversion", val, sizeof(val)))
			printf(", srcversion %s", val);
		if (!read_small(SYS_MODULE "/refcnt", val, sizeof(val)))
			printf(", %s open fd(s) or users", val);
		printf("\n");
	} else {
		printf("module:      twheel not loaded (no %s)\n", SYS_MODULE);
		rc = 1;
	}

	n = loaded ? scandir(SYS_MODULE "/parameters", &names, NULL, alphasort) : -1;
	if (n >= 0) {
		printf("parameters:\n");
		for (i = 0; i < n; i++) {
			const char *name = names[i]->d_name;

			if (name[0] != '.') {
				snprintf(path, sizeof(path), SYS_MODULE "/parameters/%s", name);
				if (read_small(path, val, sizeof(val)))
					snprintf(val, sizeof(val), "(unreadable: %s)",
						 strerror(errno));
				if (!strcmp(name, "dev_mode") && isdigit((unsigned char)val[0]))
					printf("  %-14s %s (0%lo)\n", name, val,
					       strtoul(val, NULL, 10));
				else
					printf("  %-14s %s\n", name, val);
			}
			free(names[i]);
		}
		free(names);
	} else if (loaded) {
		printf("parameters:  (cannot list %s/parameters: %s)\n", SYS_MODULE,
		       strerror(errno));
	}

	if (stat(DEV_PATH, &st) < 0) {
		printf("device:      %s: %s\n", DEV_PATH, strerror(errno));
		rc = 1;
	} else if (!S_ISCHR(st.st_mode)) {
		printf("device:      %s: not a character device\n", DEV_PATH);
		rc = 1;
	} else {
		char mode[11] = "c---------";
		static const char rwx[] = "rwxrwxrwx";

		for (i = 0; i < 9; i++)
			if (st.st_mode & (0400 >> i))
				mode[i + 1] = rwx[i];
		printf("device:      %s: character device %u:%u, mode %04o (%s), uid %u gid %u\n",
		       DEV_PATH, major(st.st_rdev), minor(st.st_rdev),
		       (unsigned int)(st.st_mode & 07777), mode,
		       (unsigned int)st.st_uid, (unsigned int)st.st_gid);
		printf("access:      %s\n", access(DEV_PATH, R_OK | W_OK) ?
		       "this user cannot open it read-write" :
		       "this user can open it");
	}
	return rc;
}

/* --------------------------------------------------------------- top */

struct wheel_info {
	int pid, fd;
	char comm[32];
	uint64_t armed, pending, touches, arms, cancels, expirations;
	uint64_t delivered, mem_bytes;
};

struct sample {
	struct wheel_info *v;
	size_t n, cap;
	unsigned int procs, denied;
	uint64_t at;		/* CLOCK_MONOTONIC, ns */
};

/* Parse fdinfo; 0 if it is a twheel fd (has tick_ns, armed and pending). */
static int parse_fdinfo(const char *path, struct wheel_info *w)
{
	char line[256];
	unsigned int seen = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		static const struct {
			const char *key;
			size_t off;
			unsigned int bit;
		} keys[] = {
			{ "tick_ns", 0, 1 },
			{ "armed", offsetof(struct wheel_info, armed), 2 },
			{ "pending", offsetof(struct wheel_info, pending), 4 },
			{ "touches", offsetof(struct wheel_info, touches), 0 },
			{ "arms", offsetof(struct wheel_info, arms), 0 },
			{ "cancels", offsetof(struct wheel_info, cancels), 0 },
			{ "expirations", offsetof(struct wheel_info, expirations), 0 },
			{ "delivered", offsetof(struct wheel_info, delivered), 0 },
			{ "mem_bytes", offsetof(struct wheel_info, mem_bytes), 0 },
		};
		char *colon = strchr(line, ':');
		unsigned long long v;
		size_t k;

		if (!colon)
			continue;
		*colon = 0;
		for (k = 0; k < ARRAY_LEN(keys); k++) {
			if (strcmp(line, keys[k].key))
				continue;
			v = strtoull(colon + 1, NULL, 10);
			if (keys[k].off)
				*(uint64_t *)((char *)w + keys[k].off) = v;
			seen |= keys[k].bit;
		}
	}
	fclose(f);
	return seen == 7 ? 0 : -1;
}

static int sample_add(struct sample *s, const struct wheel_info *w)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		struct wheel_info *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = *w;
	return 0;
}

/* The device number of /dev/twheel, from sysfs or the node itself. */
static int twheel_rdev(dev_t *rdev)
{
	unsigned int ma, mi;
	char buf[64];
	struct stat st;

	if (!read_small("/sys/class/misc/twheel/dev", buf, sizeof(buf)) &&
	    sscanf(buf, "%u:%u", &ma, &mi) == 2) {
		*rdev = makedev(ma, mi);
		return 0;
	}
	if (!stat(DEV_PATH, &st) && S_ISCHR(st.st_mode)) {
		*rdev = st.st_rdev;
		return 0;
	}
	return -1;
}

static int take_sample(struct sample *s)
{
	dev_t rdev = 0;
	int have_rdev = !twheel_rdev(&rdev);
	struct dirent *pe;
	DIR *proc;

	s->n = 0;
	s->procs = 0;
	s->denied = 0;
	proc = opendir("/proc");
	if (!proc)
		return -errno;
	while ((pe = readdir(proc))) {
		char path[128], link[64];
		struct dirent *fe;
		int pid, found = 0;
		DIR *fds;

		if (!isdigit((unsigned char)pe->d_name[0]))
			continue;
		pid = atoi(pe->d_name);
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		if (!fds) {
			if (errno == EACCES || errno == EPERM)
				s->denied++;
			continue;
		}
		while ((fe = readdir(fds))) {
			struct wheel_info w;
			struct stat st;
			ssize_t l;
			int match;

			if (!isdigit((unsigned char)fe->d_name[0]))
				continue;
			memset(&w, 0, sizeof(w));
			w.pid = pid;
			w.fd = atoi(fe->d_name);
			snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, w.fd);
			/*
			 * /dev/twheel by name, or another node of the same
			 * device under /dev (a container's, a renamed one):
			 * stat() only those, never sockets, pipes or files
			 * on possibly slow filesystems.
			 */
			l = readlink(path, link, sizeof(link) - 1);
			if (l <= 0)
				continue;
			link[l] = 0;
			match = !strcmp(link, DEV_PATH);
			if (!match && have_rdev && !strncmp(link, "/dev/", 5))
				match = !stat(path, &st) && S_ISCHR(st.st_mode) &&
					st.st_rdev == rdev;
			/* the fdinfo keys decide */
			if (!match)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/fdinfo/%d", pid, w.fd);
			if (parse_fdinfo(path, &w))
				continue;
			snprintf(path, sizeof(path), "/proc/%d/comm", pid);
			if (read_small(path, w.comm, sizeof(w.comm)))
				strcpy(w.comm, "?");
			if (sample_add(s, &w)) {
				closedir(fds);
				closedir(proc);
				return -ENOMEM;
			}
			found = 1;
		}
		closedir(fds);
		s->procs += found;
	}
	closedir(proc);
	s->at = mono_ns();
	return 0;
}

static int cmp_wheel(const void *a, const void *b)
{
	const struct wheel_info *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->fd > y->fd) - (x->fd < y->fd);
}

static const struct wheel_info *find_prev(const struct sample *prev,
					  const struct wheel_info *w)
{
	size_t i;

	for (i = 0; prev && i < prev->n; i++)
		if (prev->v[i].pid == w->pid && prev->v[i].fd == w->fd)
			return &prev->v[i];
	return NULL;
}

static void fmt_rate(char *buf, size_t size, const struct wheel_info *p,
		     uint64_t now, uint64_t before, double dt)
{
	if (!p || dt <= 0 || now < before)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.1f", (double)(now - before) / dt);
	(void)p;
}

static void fmt_bytes(char *buf, size_t size, uint64_t b)
{
	if (b < 10240)
		snprintf(buf, size, "%" PRIu64 "B", b);
	else if (b < 10ULL << 20)
		snprintf(buf, size, "%.1fKiB", (double)b / 1024);
	else if (b < 10ULL << 30)
		snprintf(buf, size, "%.1fMiB", (double)b / (1 << 20));
	else
		snprintf(buf, size, "%.1fGiB", (double)b / (1 << 30));
}

static void print_table(struct sample *cur, const struct sample *prev)
{
	double dt = 0;
	size_t i;

	if (prev)
		dt = (double)(cur->at - prev->at) / 1e9;
	if (cur->n)
		qsort(cur->v, cur->n, sizeof(*cur->v), cmp_wheel);
	printf("twheel: %zu wheel fd(s) in %u process(es)", cur->n, cur->procs);
	if (prev)
		printf(", rates over %.2f s", dt);
	if (cur->denied)
		printf(", %u process(es) not readable", cur->denied);
	printf("\n%7s %-15s %4s %10s %9s %9s %9s %9s %10s\n", "PID", "COMM", "FD",
	       "ARMED", "PENDING", "TOUCH/s", "EXPIRE/s", "DELIV/s", "MEM");
	for (i = 0; i < cur->n; i++) {
		const struct wheel_info *w = &cur->v[i], *p = find_prev(prev, w);
		char r1[32], r2[32], r3[32], mem[32];

		fmt_rate(r1, sizeof(r1), p, w->touches, p ? p->touches : 0, dt);
		fmt_rate(r2, sizeof(r2), p, w->expirations, p ? p->expirations : 0, dt);
		fmt_rate(r3, sizeof(r3), p, w->delivered, p ? p->delivered : 0, dt);
		fmt_bytes(mem, sizeof(mem), w->mem_bytes);
		printf("%7d %-15.15s %4d %10" PRIu64 " %9" PRIu64 " %9s %9s %9s %10s\n",
		       w->pid, w->comm, w->fd, w->armed, w->pending, r1, r2, r3, mem);
	}
	fflush(stdout);
}

static int cmd_top(int argc, char **argv)
{
	struct sample a = { 0 }, b = { 0 }, *cur = &a, *prev = &b, *t;
	uint64_t interval, iterations = 0, it;
	int once = 0, clear, err;
	const struct opt opts[] = {
		{ "interval", OPT_SECONDS, &interval, .min = 0, .max = 86400 * NSEC_PER_SEC,
		  .def = "1", .letter = 'i' },
		{ "once", OPT_FLAG, .dst = &once },
		{ "iterations", OPT_U64, &iterations, .min = 1, .max = UINT32_MAX, .letter = 'n' },
		{ NULL },
	};

	parse_opts(argc, argv, opts, OPTS_NO_OPERANDS | OPTS_UNKNOWN_APART);
	if (once)
		iterations = 1;
	if (!interval && iterations != 1)
		usage_error("--interval 0 needs --once");
	clear = !once && isatty(STDOUT_FILENO);

	err = take_sample(prev);
	if (err)
		return error("cannot scan /proc: %s", strerror(-err));
	for (it = 0; !iterations || it < iterations; it++) {
		if (interval)
			sleep_ns(interval);
		err = take_sample(cur);
		if (err) {
			error("cannot scan /proc: %s", strerror(-err));
			break;
		}
		if (clear)
			printf("\033[H\033[2J");
		else if (it)
			printf("\n");
		print_table(cur, interval ? prev : NULL);
		t = prev;
		prev = cur;
		cur = t;
	}
	free(a.v);
	free(b.v);
	return err ? 1 : 0;
}

/* ------------------------------------------------------ save/restore */

/* Get a twheel fd: ours (pid 0) or one of @pid's through pidfd_getfd(). */
static int get_wheel_fd(long pid, int fd, const char *what)
{
	struct twheel_config cfg;
	int wfd, err;

	if (pid > 0) {
		int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);

		if (pidfd < 0) {
			err = errno;
			if (err == ESRCH)
				return -error("%s: no process %ld", what, pid);
			if (err == ENOSYS)
				return -error("%s: this kernel has no pidfd_open() (Linux 5.3 or later is needed)", what);
			return -error("%s: pidfd_open(%ld): %s", what, pid, strerror(err));
		}
		wfd = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		err = errno;
		close(pidfd);
		if (wfd < 0) {
			if (err == EPERM || err == EACCES)
				return -error("%s: not permitted to take fd %d of process %ld: "
					      "pidfd_getfd() needs ptrace access to it (the same user "
					      "with kernel.yama.ptrace_scope 0, or CAP_SYS_PTRACE). "
					      "Alternatively, have the program call twheel_save(3).",
					      what, fd, pid);
			if (err == EBADF)
				return -error("%s: process %ld has no fd %d", what, pid, fd);
			if (err == ESRCH)
				return -error("%s: process %ld exited", what, pid);
			if (err == ENOSYS)
				return -error("%s: this kernel has no pidfd_getfd() (Linux 5.6 or later is needed)", what);
			return -error("%s: pidfd_getfd(%ld, %d): %s", what, pid, fd,
				      strerror(err));
		}
	} else {
		wfd = fd;
	}
	err = twheel_get_config(wfd, &cfg);
	if (err) {
		if (pid > 0)
			close(wfd);
		if (err == -ENOTTY || err == -EINVAL)
			return -error("%s: fd %d%s is not a twheel fd", what, fd,
				      pid > 0 ? " of that process" : "");
		if (err == -EBADF)
			return -error("%s: fd %d is not open in this process (without "
				      "--pid, --fd names an fd inherited from the caller)",
				      what, fd);
		return -error("%s: fd %d: %s", what, fd, twheel_strerror(err));
	}
	return wfd;
}

static int save_restore(int argc, char **argv, int restore)
{
	const char *name = restore ? "restore" : "save", *file;
	uint64_t pid = 0, fd = UINT64_MAX;
	int wfd, err;
	const struct opt opts[] = {
		{ "pid", OPT_U64, &pid, .min = 1, .max = INT_MAX, .letter = 'p' },
		{ "fd", OPT_U64, &fd, .min = 0, .max = INT_MAX },
		{ NULL },
	};

	file = sole_operand(argc, argv, parse_opts(argc, argv, opts, OPTS_UNKNOWN_APART),
			    "FILE");
	if (fd == UINT64_MAX && restore)
		usage_error("missing --fd N: a wheel lives only as long as its fd, so a "
			    "snapshot is restored into a running process's wheel (--pid PID "
			    "--fd N) or by the program itself with twheel_restore(3); "
			    "'twheelctl check FILE' validates a snapshot");
	if (fd == UINT64_MAX)
		usage_error("missing --fd N (the wheel to save: --pid PID --fd N for "
			    "another process's)");

	wfd = get_wheel_fd((long)pid, (int)fd, name);
	if (wfd < 0)
		return 1;
	if (restore) {
		size_t n = 0;

		err = twheel_restore(wfd, file, &n);
		if (err == -EBADMSG) {
			struct twheel_snapshot_info info;

			twheel_snapshot_check(file, &info);
			error("restore: %s: refused, nothing armed: %s", file,
			      info.problem ? info.problem : twheel_strerror(err));
		} else if (err) {
			error("restore: %s: %s (%zu ids armed before the error)", file,
			      twheel_strerror(err), n);
		} else {
			printf("restored %zu ids from %s\n", n, file);
		}
	} else {
		err = twheel_save(wfd, file);
		if (err) {
			error("save: %s: %s", file, twheel_strerror(err));
		} else {
			struct twheel_snapshot_info info;

			if (!twheel_snapshot_check(file, &info))
				printf("saved %" PRIu64 " ids to %s\n", info.count, file);
			else
				printf("saved to %s\n", file);
		}
	}
	if (pid > 0)
		close(wfd);
	return err ? 1 : 0;
}

static int cmd_save(int argc, char **argv)
{
	return save_restore(argc, argv, 0);
}

static int cmd_restore(int argc, char **argv)
{
	return save_restore(argc, argv, 1);
}

/* ------------------------------------------------------------- check */

static void fmt_time(char *buf, size_t size, uint64_t ns)
{
	time_t s = (time_t)(ns / NSEC_PER_SEC);
	struct tm tm;

	if (!gmtime_r(&s, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(buf, size, "%" PRIu64 " ns", ns);
		return;
	}
	snprintf(buf + strlen(buf), size - strlen(buf), ".%09" PRIu64 "Z",
		 (uint64_t)(ns % NSEC_PER_SEC));
}

static const char *clock_name(uint32_t c)
{
	switch (c) {
	case CLOCK_MONOTONIC:
		return "CLOCK_MONOTONIC";
	case CLOCK_BOOTTIME:
		return "CLOCK_BOOTTIME";
	}
	return "unknown clock";
}

static int cmd_check(int argc, char **argv)
{
	struct twheel_snapshot_info info;
	const char *file;
	char t1[64], t2[64];
	uint64_t now;
	int err;

	file = sole_operand(argc, argv, parse_opts(argc, argv, no_opts, OPTS_UNKNOWN_APART),
			    "FILE");
	err = twheel_snapshot_check(file, &info);
	if (err == -EBADMSG)
		return error("%s: invalid snapshot: %s", file,
			     info.problem ? info.problem : "corrupt");
	if (err)
		return error("%s: %s", file, strerror(-err));
	now = real_ns();
	fmt_time(t1, sizeof(t1), info.saved_realtime_ns);
	printf("%s: valid twheel snapshot\n", file);
	printf("  version      %" PRIu32 "\n", info.version);
	printf("  flags        0x%" PRIx32 "\n", info.flags);
	printf("  clock        %s (%" PRIu32 ")\n", clock_name(info.clockid), info.clockid);
	printf("  tick_ns      %" PRIu64 "\n", info.tick_ns);
	printf("  timeout_ns   %" PRIu64 "\n", info.timeout_ns);
	printf("  saved        %s\n", t1);
	printf("  ids          %" PRIu64 "\n", info.count);
	if (info.count) {
		fmt_time(t1, sizeof(t1), info.min_deadline_ns);
		fmt_time(t2, sizeof(t2), info.max_deadline_ns);
		printf("  earliest     %s%s\n", t1,
		       info.min_deadline_ns <= now ? " (passed: expires at once on restore)" : "");
		printf("  latest       %s\n", t2);
	}
	printf("  header_crc   0x%08" PRIx32 "\n", info.header_crc);
	printf("  entries_crc  0x%08" PRIx32 "\n", info.entries_crc);
	return 0;
}

/* -------------------------------------------------------------- main */

static const struct command commands[] = {
	{ "status", "status",
	  "Show whether the twheel module is loaded, its parameters and /dev/twheel.\n"
	  "Exit status 0 if the module is loaded and /dev/twheel exists, else 1.\n",
	  cmd_status },
	{ "top", "top [--interval S] [--once] [--iterations N]",
	  "List every twheel fd of every process (/proc/PID/fdinfo) with its\n"
	  "armed and pending ids and the rates of touches, expirations and\n"
	  "deliveries per second between two samples S seconds apart\n"
	  "(default 1).  --once: print one table and exit (with --interval 0:\n"
	  "at once, without rates).  --iterations N: stop after N tables.\n",
	  cmd_top },
	{ "save", "save [--pid PID] --fd N FILE",
	  "Write a snapshot of the wheel behind fd N (of process PID, through\n"
	  "pidfd_getfd(2), or inherited from the caller without --pid) to FILE,\n"
	  "atomically.  Deadlines are stored against CLOCK_REALTIME.\n",
	  cmd_save },
	{ "restore", "restore [--pid PID] --fd N FILE",
	  "Arm every id of snapshot FILE in the wheel behind fd N (of process\n"
	  "PID, through pidfd_getfd(2), or inherited from the caller without\n"
	  "--pid).  The file is validated before anything is armed.  A wheel\n"
	  "lives only as long as its fd, so there is no 'restore into a new\n"
	  "wheel' here: programs use twheel_restore(3).\n",
	  cmd_restore },
	{ "check", "check FILE",
	  "Validate a snapshot written by twheel_save(3) or 'twheelctl save' and\n"
	  "print its header.  Exit status 0 if twheel_restore(3) would accept it,\n"
	  "1 if it is corrupt, truncated or unreadable.\n",
	  cmd_check },
};

int main(int argc, char **argv)
{
	int version = 0, i;
	size_t k;
	const struct opt opts[] = {
		{ "version", OPT_FLAG, .dst = &version, .letter = 'V' },
		{ NULL },
	};

	signal(SIGPIPE, SIG_DFL);
	i = parse_opts(argc, argv, opts, OPTS_IN_ORDER | OPTS_UNKNOWN_APART);
	if (version) {
		printf("twheelctl %s (libtwheel %d.%d)\n", TWHEELCTL_VERSION,
		       LIBTWHEEL_VERSION_MAJOR, LIBTWHEEL_VERSION_MINOR);
		return 0;
	}
	if (i >= argc)
		usage_error("missing COMMAND");
	for (k = 0; k < ARRAY_LEN(commands); k++) {
		if (!strcmp(argv[i], commands[k].name)) {
			cmd = &commands[k];
			return cmd->run(argc - i, argv + i);
		}
	}
	usage_error("unknown command '%s'", argv[i]);
}
