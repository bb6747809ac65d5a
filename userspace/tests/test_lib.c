// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Tests of libtwheel (linked against the shared library).
 *
 * Prints one line per test: "PASS name", "FAIL name: why" or
 * "SKIP name: why"; tests/run_guest.sh turns them into TAP.  Exits 1 if any
 * test failed.  Tests that need /dev/twheel skip when it is absent (ENOENT),
 * so this is harmless on a host without the module; the file-format tests
 * run anywhere.
 *
 * Usage: test_lib [TMPDIR]   (default: $TMPDIR or /tmp)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "twheel.h"

#define MS ((uint64_t)1000000)
#define SEC ((uint64_t)1000000000)

static int failed, passed, skipped;
static char tmpdir[512];
static int have_dev;
static char why[512];

/* A test returns 0 (pass), 1 (fail, why[] set) or 2 (skip, why[] set). */
#define FAILF(...) do { snprintf(why, sizeof(why), __VA_ARGS__); return 1; } while (0)
#define CHECK(cond, ...) do { if (!(cond)) { \
	snprintf(why, sizeof(why), "line %d: %s: ", __LINE__, #cond); \
	snprintf(why + strlen(why), sizeof(why) - strlen(why), __VA_ARGS__); \
	return 1; } } while (0)
#define EQ(a, b) CHECK((long long)(a) == (long long)(b), "%lld != %lld", \
		       (long long)(a), (long long)(b))
#define NEED_DEV() do { if (!have_dev) { \
	snprintf(why, sizeof(why), "no /dev/twheel"); return 2; } } while (0)

static void run(const char *name, int (*fn)(void))
{
	int r;

	why[0] = 0;
	r = fn();
	if (r == 0) {
		passed++;
		printf("PASS %s\n", name);
	} else if (r == 2) {
		skipped++;
		printf("SKIP %s: %s\n", name, why);
	} else {
		failed++;
		printf("FAIL %s: %s\n", name, why);
	}
	fflush(stdout);
}

static uint64_t now_on(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

static void msleep(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void path_of(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
}

/* ------------------------------------------------ an independent encoder */

/* Bitwise CRC-32 (IEEE), written separately from the library's. */
static uint32_t ref_crc32(const unsigned char *p, size_t n)
{
	uint32_t c = 0xFFFFFFFFU;

	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320U & (0U - (c & 1)));
	}
	return ~c;
}

static void le(unsigned char *p, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

struct ref_entry {
	uint64_t id, deadline_rt, data;
};

/* Encode a snapshot by the documented format; returns its length. */
static size_t ref_encode(unsigned char *buf, const struct ref_entry *e, size_t n,
			 uint32_t version, uint32_t flags)
{
	size_t i;

	memset(buf, 0, 64);
	memcpy(buf, "TWHEELCK", 8);
	le(buf + 8, version, 4);
	le(buf + 12, flags, 4);
	le(buf + 16, n, 8);
	le(buf + 24, CLOCK_MONOTONIC, 4);
	le(buf + 28, 24, 4);
	le(buf + 32, now_on(CLOCK_REALTIME), 8);
	le(buf + 40, TWHEEL_DEFAULT_TICK_NS, 8);
	le(buf + 48, TWHEEL_DEFAULT_TIMEOUT_NS, 8);
	for (i = 0; i < n; i++) {
		le(buf + 64 + 24 * i, e[i].id, 8);
		le(buf + 64 + 24 * i + 8, e[i].deadline_rt, 8);
		le(buf + 64 + 24 * i + 16, e[i].data, 8);
	}
	le(buf + 56, ref_crc32(buf + 64, 24 * n), 4);
	le(buf + 60, ref_crc32(buf, 60), 4);
	return 64 + 24 * n;
}

/* Re-seal the header CRC after editing the header. */
static void ref_reseal(unsigned char *buf)
{
	le(buf + 60, ref_crc32(buf, 60), 4);
}

static int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = write(fd, buf, len);
	close(fd);
	return r == (ssize_t)len ? 0 : -EIO;
}

static int read_file(const char *path, unsigned char **buf, size_t *len)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len + 1);
	if (!*buf || read(fd, *buf, *len) != (ssize_t)*len) {
		close(fd);
		free(*buf);
		return -EIO;
	}
	close(fd);
	return 0;
}

/* ---------------------------------------------------- format (no device) */

static int t_format_reference_accepted(void)
{
	struct ref_entry e[3] = {
		{ 7, 1000, 70 }, { 8, 2000, 80 }, { 9, 3000, 90 },
	};
	struct twheel_snapshot_info info;
	unsigned char buf[64 + 3 * 24];
	char p[600];
	size_t len = ref_encode(buf, e, 3, 1, 0);

	path_of(p, sizeof(p), "ref.snap");
	EQ(write_file(p, buf, len), 0);
	EQ(twheel_snapshot_check(p, &info), 0);
	EQ(info.version, 1);
	EQ(info.count, 3);
	EQ(info.entry_size, 24);
	EQ(info.clockid, CLOCK_MONOTONIC);
	EQ(info.min_deadline_ns, 1000);
	EQ(info.max_deadline_ns, 3000);
	CHECK(info.problem == NULL, "problem %s", info.problem);
	/* An empty snapshot is valid too. */
	len = ref_encode(buf, e, 0, 1, 0);
	EQ(write_file(p, buf, len), 0);
	EQ(twheel_snapshot_check(p, &info), 0);
	EQ(info.count, 0);
	return 0;
}

/* Each corruption must be refused with -EBADMSG. */
static int t_format_corrupt_refused(void)
{
	struct ref_entry e[4] = {
		{ 1, 10, 1 }, { 2, 20, 2 }, { 3, 30, 3 }, { 4, 40, 4 },
	};
	unsigned char good[64 + 4 * 24], bad[64 + 4 * 24 + 8];
	struct twheel_snapshot_info info;
	size_t len = ref_encode(good, e, 4, 1, 0);
	char p[600];
	struct {
		const char *what;
		size_t len;
		int off;	/* byte to flip, -1 none */
		int reseal;
	} cases[] = {
		{ "empty file", 0, -1, 0 },
		{ "10 bytes", 10, -1, 0 },
		{ "header only", 64, -1, 0 },
		{ "one byte short", len - 1, -1, 0 },
		{ "one entry short", len - 24, -1, 0 },
		{ "trailing byte", len + 1, -1, 0 },
		{ "bad magic", len, 0, 1 },
		{ "header bit flip", len, 17, 0 },
		{ "header crc flip", len, 61, 0 },
		{ "entry id flip", len, 64 + 24 + 3, 0 },
		{ "entry deadline flip", len, 64 + 8 + 1, 0 },
		{ "entry data flip", len, 64 + 3 * 24 + 16, 0 },
		{ "entries crc flip", len, 57, 1 },
		{ "version 2", len, 8, 1 },
		{ "unknown flag", len, 12, 1 },
		{ "entry size 27", len, 28, 1 },
		{ "count not matching the size", len, 16, 1 },
		{ "count above 2^32", len, 20, 1 },
	};

	path_of(p, sizeof(p), "corrupt.snap");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r;

		memset(bad, 0, sizeof(bad));
		memcpy(bad, good, len);
		if (cases[i].off >= 0) {
			if (cases[i].off == 8 || cases[i].off == 28 || cases[i].off == 12)
				bad[cases[i].off] ^= 3;	/* 1 -> 2, 24 -> 27, 0 -> 3 */
			else
				bad[cases[i].off] ^= 0x10;
		}
		if (cases[i].reseal)
			ref_reseal(bad);
		EQ(write_file(p, bad, cases[i].len), 0);
		r = twheel_snapshot_check(p, &info);
		CHECK(r == -EBADMSG, "%s: got %d (%s)", cases[i].what, r,
		      twheel_strerror(r));
		CHECK(info.problem != NULL, "%s: no problem string", cases[i].what);
	}
	/* A deadline beyond TWHEEL_DEADLINE_MAX, with valid checksums. */
	e[2].deadline_rt = UINT64_MAX;
	len = ref_encode(bad, e, 4, 1, 0);
	EQ(write_file(p, bad, len), 0);
	EQ(twheel_snapshot_check(p, &info), -EBADMSG);
	return 0;
}

static int t_format_errors(void)
{
	char p[600];

	path_of(p, sizeof(p), "does-not-exist.snap");
	EQ(twheel_snapshot_check(p, NULL), -ENOENT);
	EQ(twheel_snapshot_check(tmpdir, NULL), -EISDIR);
	EQ(twheel_snapshot_check("", NULL), -EINVAL);
	EQ(twheel_snapshot_check(NULL, NULL), -EINVAL);
	return 0;
}

static int t_strerror(void)
{
	int errs[] = { 0, -EINVAL, -ENOENT, -EBADMSG, -ENOSPC, -EEXIST, -EBUSY,
		       -EAGAIN, -ENOTTY, -9999, 5 };

	for (size_t i = 0; i < sizeof(errs) / sizeof(errs[0]); i++) {
		const char *s = twheel_strerror(errs[i]);

		CHECK(s && *s, "empty message for %d", errs[i]);
	}
	CHECK(strstr(twheel_strerror(-EBADMSG), "snapshot"), "EBADMSG text");
	return 0;
}

/* --------------------------------------------------------- the wrappers */

static int open_or_skip(int *fd, const struct twheel_config *cfg, int flags)
{
	*fd = twheel_open(cfg, flags);
	return *fd;
}

static int t_open_config(void)
{
	struct twheel_config c, bad;
	int fd, fd2;

	NEED_DEV();
	EQ(twheel_open(NULL, O_RDONLY | O_TRUNC), -EINVAL);
	CHECK(open_or_skip(&fd, NULL, O_CLOEXEC) >= 0, "open: %s", twheel_strerror(fd));
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC, "no FD_CLOEXEC");
	CHECK(!(fcntl(fd, F_GETFL) & O_NONBLOCK), "O_NONBLOCK without asking");
	EQ(twheel_get_config(fd, &c), 0);
	EQ(c.tick_ns, TWHEEL_DEFAULT_TICK_NS);
	EQ(c.timeout_ns, TWHEEL_DEFAULT_TIMEOUT_NS);
	EQ(c.max_ids, TWHEEL_DEFAULT_MAX_IDS);
	EQ(c.clockid, CLOCK_MONOTONIC);
	EQ(c.flags, 0);
	EQ(twheel_get_config(fd, NULL), -EINVAL);
	EQ(twheel_set_config(fd, NULL), -EINVAL);

	/* A bad config given to open: error, and no fd left behind. */
	bad = c;
	bad.tick_ns = 1;
	fd2 = dup(0);
	close(fd2);
	EQ(twheel_open(&bad, 0), -EINVAL);
	fd = dup(0);	/* the lowest free fd is still the same */
	EQ(fd, fd2);
	close(fd);

	c.tick_ns = 2 * MS;
	c.timeout_ns = 5 * SEC;
	c.max_ids = 100;
	c.clockid = CLOCK_BOOTTIME;
	fd = twheel_open(&c, O_NONBLOCK);
	CHECK(fd >= 0, "open with cfg: %s", twheel_strerror(fd));
	CHECK(fcntl(fd, F_GETFL) & O_NONBLOCK, "no O_NONBLOCK");
	memset(&bad, 0, sizeof(bad));
	EQ(twheel_get_config(fd, &bad), 0);
	EQ(bad.tick_ns, 2 * MS);
	EQ(bad.timeout_ns, 5 * SEC);
	EQ(bad.max_ids, 100);
	EQ(bad.clockid, CLOCK_BOOTTIME);
	/* EBUSY: tick change while ids are held */
	EQ(twheel_arm_one(fd, 1, SEC, 0, 0), 0);
	bad.tick_ns = 4 * MS;
	EQ(twheel_set_config(fd, &bad), -EBUSY);
	CHECK(errno == EBUSY, "errno %d", errno);
	close(fd);
	return 0;
}

static int t_now(void)
{
	struct twheel_config c;
	uint64_t a, n, b;
	int fd;

	NEED_DEV();
	fd = twheel_open(NULL, 0);
	CHECK(fd >= 0, "open");
	a = now_on(CLOCK_MONOTONIC);
	EQ(twheel_now(fd, &n), 0);
	b = now_on(CLOCK_MONOTONIC);
	CHECK(a <= n && n <= b, "%" PRIu64 " not in [%" PRIu64 ", %" PRIu64 "]", n, a, b);
	EQ(twheel_now(fd, NULL), -EINVAL);
	EQ(twheel_get_config(fd, &c), 0);
	c.clockid = CLOCK_BOOTTIME;
	EQ(twheel_set_config(fd, &c), 0);
	a = now_on(CLOCK_BOOTTIME);
	EQ(twheel_now(fd, &n), 0);
	b = now_on(CLOCK_BOOTTIME);
	CHECK(a <= n && n <= b, "boottime %" PRIu64 " not in range", n);
	close(fd);
	return 0;
}

static int t_touch(void)
{
	struct twheel_config c;
	struct twheel_query q;
	uint64_t ids[64], t0;
	ssize_t r;
	int fd;

	NEED_DEV();
	fd = twheel_open(NULL, 0);
	CHECK(fd >= 0, "open");
	for (int i = 0; i < 64; i++)
		ids[i] = 1000 + (uint64_t)i;
	EQ(twheel_touch(fd, ids, 0), 0);
	EQ(twheel_now(fd, &t0), 0);
	EQ(twheel_touch(fd, ids, 64), 64);
	EQ(twheel_query(fd, 1010, &q), 0);
	EQ(q.id, 1010);
	EQ(q.state, TWHEEL_STATE_ARMED);
	EQ(q.data, 0);
	CHECK(q.deadline_ns >= t0 + TWHEEL_DEFAULT_TIMEOUT_NS, "deadline %" PRIu64,
	      (uint64_t)q.deadline_ns);
	/* Nothing readable: bad pointer with nothing done. */
	void *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(bad != MAP_FAILED, "mmap");
	EQ(twheel_touch(fd, bad, 4), -EFAULT);
	munmap(bad, 4096);

	/* The cap: the ids that fit take effect, the count says how many. */
	EQ(twheel_get_config(fd, &c), 0);
	c.max_ids = 70;
	EQ(twheel_set_config(fd, &c), 0);
	for (int i = 0; i < 64; i++)
		ids[i] = 5000 + (uint64_t)i;
	r = twheel_touch(fd, ids, 10);
	EQ(r, 6);
	EQ(twheel_touch(fd, ids + 6, 4), -ENOSPC);
	EQ(twheel_query(fd, 5005, NULL), 0);
	EQ(twheel_query(fd, 5006, NULL), -ENOENT);
	/* existing ids can always be touched */
	EQ(twheel_touch(fd, ids, 6), 6);
	EQ(twheel_touch(-1, ids, 1), -EBADF);
	close(fd);
	return 0;
}

/* write() stopping short (a fault after the first page) is looped over. */
static int t_touch_short(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t per = (size_t)pg / 8;
	uint64_t *m;
	int fd;

	NEED_DEV();
	fd = twheel_open(NULL, 0);
	CHECK(fd >= 0, "open");
	m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED, "mmap");
	for (size_t i = 0; i < 2 * per; i++)
		m[i] = 70000 + i;
	mprotect((char *)m + pg, (size_t)pg, PROT_NONE);
	/* The kernel takes the first page, then faults: a count, not -EFAULT. */
	EQ(twheel_touch(fd, m, 2 * per), per);
	EQ(twheel_query(fd, 70000 + per - 1, NULL), 0);
	EQ(twheel_query(fd, 70000 + per, NULL), -ENOENT);
	munmap(m, 2 * (size_t)pg);
	close(fd);
	return 0;
}

static int t_arm_cancel_query(void)
{
	struct twheel_arm e[5];
	struct twheel_query q;
	struct twheel_stats st;
	uint64_t now, ids[4] = { 1, 2, 99, 3 };
	size_t done = 777;
	int fd;

	NEED_DEV();
	fd = twheel_open(NULL, 0);
	CHECK(fd >= 0, "open");
	memset(e, 0, sizeof(e));
	for (int i = 0; i < 5; i++) {
		e[i].id = (uint64_t)i + 1;
		e[i].timeout_ns = (uint64_t)(i + 1) * 3600 * SEC;
		e[i].data = 100 + (uint64_t)i;
	}
	EQ(twheel_arm(fd, e, 5, &done), 0);
	EQ(done, 5);
	EQ(twheel_arm(fd, e, 0, &done), 0);
	EQ(done, 0);
	EQ(twheel_query(fd, 3, &q), 0);
	EQ(q.data, 102);
	EQ(q.state, TWHEEL_STATE_ARMED);
	/* NOREPLACE on entry 2 (id 7 new, id 8 new, id 2 exists) */
	e[0].id = 7;
	e[1].id = 8;
	e[2].id = 2;
	e[2].flags = TWHEEL_ARM_NOREPLACE;
	EQ(twheel_arm(fd, e, 3, &done), -EEXIST);
	EQ(done, 2);
	EQ(errno, EEXIST);
	EQ(twheel_arm(fd, e, 3, NULL), -EEXIST);
	/* bad flags */
	EQ(twheel_arm_one(fd, 50, 0, 0, 0x80), -EINVAL);
	EQ(twheel_arm_one(fd, 50, TWHEEL_DEADLINE_MAX + 1, 0, 0), -EINVAL);
	/* ABSTIME */
	EQ(twheel_now(fd, &now), 0);
	EQ(twheel_arm_one(fd, 51, now + 3600 * SEC, 5151, TWHEEL_ARM_ABSTIME), 0);
	EQ(twheel_query(fd, 51, &q), 0);
	EQ(q.deadline_ns, now + 3600 * SEC);
	EQ(q.data, 5151);
	/* default timeout */
	EQ(twheel_arm_one(fd, 52, 0, 0, 0), 0);
	EQ(twheel_query(fd, 52, &q), 0);
	CHECK(q.deadline_ns >= now + TWHEEL_DEFAULT_TIMEOUT_NS, "default timeout");
	/* cancel: absent ids skipped */
	EQ(twheel_cancel(fd, ids, 4, &done), 0);
	EQ(done, 3);
	EQ(twheel_cancel(fd, ids, 4, &done), 0);
	EQ(done, 0);
	EQ(twheel_cancel(fd, ids, 4, NULL), 0);
	EQ(twheel_query(fd, 1, &q), -ENOENT);
	EQ(errno, ENOENT);
	EQ(twheel_stats(fd, &st), 0);
	EQ(st.armed, 6);	/* 4 5 7 8 51 52 */
	EQ(st.cancels, 3);
	EQ(st.arms, 5 + 2 + 2 + 1 + 1);	/* EEXIST twice: 2 each */
	EQ(twheel_stats(fd, NULL), -EINVAL);
	close(fd);
	return 0;
}

static int t_bad_fds(void)
{
	struct twheel_config c;
	struct twheel_stats st;
	struct twheel_event ev;
	uint64_t id = 1, now;
	size_t done = 5;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	CHECK(null >= 0, "/dev/null");
	EQ(twheel_get_config(-1, &c), -EBADF);
	EQ(twheel_now(-1, &now), -EBADF);
	EQ(twheel_stats(-1, &st), -EBADF);
	EQ(twheel_query(-1, 1, NULL), -EBADF);
	EQ(twheel_read(-1, &ev, 1), -EBADF);
	EQ(twheel_get_config(null, &c), -ENOTTY);
	EQ(twheel_arm_one(null, 1, 1, 0, 0), -ENOTTY);
	EQ(twheel_cancel(null, &id, 1, &done), -ENOTTY);
	EQ(done, 0);
	EQ(twheel_save(null, "/nonexistent/x"), -ENOTTY);
	EQ(twheel_restore(null, "/nonexistent/x", &done), -ENOTTY);
	EQ(done, 0);
	close(null);
	return 0;
}

/* ------------------------------------------------------ read, wait, dump */

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static int t_read_wait(void)
{
	struct twheel_event ev[8];
	struct sigaction sa;
	struct itimerval it;
	uint64_t t0, t1;
	ssize_t r;
	int fd, nb;

	NEED_DEV();
	fd = twheel_open(NULL, 0);
	nb = twheel_open(NULL, O_NONBLOCK);
	CHECK(fd >= 0 && nb >= 0, "open");
	EQ(twheel_read(nb, ev, 8), -EAGAIN);
	EQ(twheel_read(nb, ev, 0), -EINVAL);
	EQ(twheel_wait(fd, ev, 0, 0), -EINVAL);

	/* timeout 0: nothing, at once */
	EQ(twheel_wait(fd, ev, 8, 0), 0);
	/* a timeout with nothing due */
	t0 = now_on(CLOCK_MONOTONIC);
	EQ(twheel_wait(fd, ev, 8, 150), 0);
	t1 = now_on(CLOCK_MONOTONIC);
	CHECK(t1 - t0 >= 140 * MS, "returned after %" PRIu64 " ms", (t1 - t0) / MS);

	/* signals during the wait: retried with what is left, not early */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;	/* no SA_RESTART */
	sigaction(SIGALRM, &sa, NULL);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_usec = 30000;
	it.it_interval.tv_usec = 30000;
	alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	t0 = now_on(CLOCK_MONOTONIC);
	r = twheel_wait(fd, ev, 8, 300);
	t1 = now_on(CLOCK_MONOTONIC);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	EQ(r, 0);
	CHECK(alarms >= 2, "only %d signals", (int)alarms);
	CHECK(t1 - t0 >= 290 * MS, "returned after %" PRIu64 " ms", (t1 - t0) / MS);
	CHECK(t1 - t0 < 5 * SEC, "returned after %" PRIu64 " ms", (t1 - t0) / MS);

	/* an event arriving while signals keep coming */
	EQ(twheel_arm_one(fd, 42, 200 * MS, 4242, 0), 0);
	it.it_value.tv_usec = 20000;
	it.it_interval.tv_usec = 20000;
	setitimer(ITIMER_REAL, &it, NULL);
	r = twheel_wait(fd, ev, 8, 10000);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
	EQ(r, 1);
	EQ(ev[0].id, 42);
	EQ(ev[0].data, 4242);
	CHECK(ev[0].expired_ns >= ev[0].deadline_ns, "early");
	EQ(twheel_query(fd, 42, NULL), -ENOENT);

	/* forever (-1) with an event due soon; and ABSTIME in the past */
	EQ(twheel_arm_one(fd, 43, 50 * MS, 1, 0), 0);
	EQ(twheel_wait(fd, ev, 8, -1), 1);
	EQ(ev[0].id, 43);
	EQ(twheel_arm_one(nb, 44, 1, 2, TWHEEL_ARM_ABSTIME), 0);
	EQ(twheel_arm_one(nb, 45, 2, 3, TWHEEL_ARM_ABSTIME), 0);
	EQ(twheel_read(nb, ev, 1), 1);
	EQ(ev[0].id, 44);
	EQ(twheel_wait(nb, ev, 8, 1000), 1);
	EQ(ev[0].id, 45);
	EQ(twheel_wait(nb, ev, 8, 50), 0);
	close(fd);
	close(nb);
	return 0;
}

struct dump_seen {
	unsigned char *seen;
	uint64_t base, n, calls, bad;
	int stop_after;
};

static int dump_cb(const struct twheel_arm *e, size_t n, void *arg)
{
	struct dump_seen *d = arg;

	d->calls++;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = e[i].id - d->base;

		if (k >= d->n || d->seen[k] || e[i].flags != TWHEEL_ARM_ABSTIME ||
		    e[i].data != e[i].id * 3 || e[i].reserved)
			d->bad++;
		else
			d->seen[k] = 1;
	}
	if (d->stop_after && d->calls >= (uint64_t)d->stop_after)
		return 12345;
	return 0;
}

static int t_dump(void)
{
	enum { N = 3000 };
	static struct twheel_arm e[N];
	struct dump_seen d;
	size_t done;
	int fd;

	NEED_DEV();
	fd = twheel_open(NULL, 0);
	CHECK(fd >= 0, "open");
	memset(&d, 0, sizeof(d));
	d.seen = calloc(N, 1);
	d.base = 1ULL << 40;
	d.n = N;
	EQ(twheel_dump(fd, dump_cb, &d), 0);
	EQ(d.calls, 0);
	for (int i = 0; i < N; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		e[i].id = d.base + (uint64_t)i;
		e[i].timeout_ns = 3600 * SEC + (uint64_t)i * MS;
		e[i].data = e[i].id * 3;
	}
	EQ(twheel_arm(fd, e, N, &done), 0);
	EQ(done, N);
	EQ(twheel_dump(fd, dump_cb, &d), 0);
	EQ(d.bad, 0);
	for (int i = 0; i < N; i++)
		CHECK(d.seen[i], "id %d missing from the dump", i);
	CHECK(d.calls >= N / 256, "%" PRIu64 " calls", d.calls);
	/* the callback's value stops the dump and is returned */
	memset(d.seen, 0, N);
	d.calls = 0;
	d.stop_after = 2;
	EQ(twheel_dump(fd, dump_cb, &d), 12345);
	EQ(d.calls, 2);
	EQ(twheel_dump(fd, NULL, NULL), -EINVAL);
	free(d.seen);
	close(fd);
	return 0;
}

/* -------------------------------------------------------- save/restore */

static int count_dir_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static int t_save_restore_roundtrip(void)
{
	enum { N = 2000 };
	static struct twheel_arm e[N];
	struct twheel_snapshot_info info;
	struct twheel_query qa, qb;
	struct twheel_event ev[4];
	struct twheel_stats st;
	char dir[600], p[700];
	size_t done;
	uint64_t now;
	int a, b, before;

	NEED_DEV();
	a = twheel_open(NULL, 0);
	b = twheel_open(NULL, O_NONBLOCK);
	CHECK(a >= 0 && b >= 0, "open");
	for (int i = 0; i < N; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		e[i].id = (uint64_t)i * 7919 + 1;
		/* from 1 min to ~3 years, plus one at the very end of time */
		e[i].timeout_ns = 60 * SEC + (uint64_t)i * i * 25 * SEC;
		e[i].data = ~(uint64_t)i;
	}
	e[N - 1].timeout_ns = TWHEEL_DEADLINE_MAX;
	EQ(twheel_arm(a, e, N, &done), 0);
	/* one already expired (event queued, unread) */
	EQ(twheel_arm_one(a, 424242, 1, 99, TWHEEL_ARM_ABSTIME), 0);
	EQ(twheel_query(a, 424242, &qa), 0);
	EQ(qa.state, TWHEEL_STATE_EXPIRED);

	path_of(dir, sizeof(dir), "savedir");
	mkdir(dir, 0700);
	snprintf(p, sizeof(p), "%s/wheel.snap", dir);
	EQ(twheel_save(a, p), 0);
	EQ(count_dir_entries(dir), 1);	/* no temp file left */
	/* saving again replaces it atomically */
	EQ(twheel_save(a, p), 0);
	EQ(count_dir_entries(dir), 1);
	EQ(twheel_snapshot_check(p, &info), 0);
	EQ(info.count, N + 1);
	EQ(info.clockid, CLOCK_MONOTONIC);
	EQ(info.tick_ns, TWHEEL_DEFAULT_TICK_NS);
	CHECK(info.max_deadline_ns == TWHEEL_DEADLINE_MAX, "max deadline saturates");
	{
		struct stat sst;

		EQ(stat(p, &sst), 0);
		EQ(sst.st_size, 64 + 24 * (N + 1));
	}

	/* restore into b, which already holds one other id and one of the file's */
	EQ(twheel_arm_one(b, 555, 3600 * SEC, 5, 0), 0);
	EQ(twheel_arm_one(b, e[5].id, 10 * SEC, 1234, 0), 0);
	EQ(twheel_restore(b, p, &done), 0);
	EQ(done, N + 1);
	EQ(twheel_query(b, 555, &qb), 0);
	EQ(twheel_stats(b, &st), 0);
	EQ(st.armed + st.pending, N + 2);
	EQ(twheel_now(b, &now), 0);
	for (int i = 0; i < N; i++) {
		uint64_t d;

		EQ(twheel_query(a, e[i].id, &qa), 0);
		EQ(twheel_query(b, e[i].id, &qb), 0);
		EQ(qb.data, qa.data);
		EQ(qb.state, TWHEEL_STATE_ARMED);
		d = qa.deadline_ns > qb.deadline_ns ? qa.deadline_ns - qb.deadline_ns :
						      qb.deadline_ns - qa.deadline_ns;
		/* same boot, same clock: only the clock pairings differ */
		CHECK(d < 50 * MS, "id %" PRIu64 " deadline off by %" PRIu64 " ns",
		      (uint64_t)e[i].id, d);
	}
	/* the expired one is due at once */
	EQ(twheel_read(b, ev, 4), 1);
	EQ(ev[0].id, 424242);
	EQ(ev[0].data, 99);
	CHECK(ev[0].expired_ns >= ev[0].deadline_ns, "early");
	before = count_dir_entries(dir);
	EQ(before, 1);

	/* a path in a missing directory, and a directory as the path */
	snprintf(p, sizeof(p), "%s/missing/x.snap", dir);
	EQ(twheel_save(a, p), -ENOENT);
	snprintf(p, sizeof(p), "%s/", dir);
	EQ(twheel_save(a, p), -EISDIR);
	EQ(twheel_save(a, ""), -EINVAL);
	EQ(count_dir_entries(dir), 1);
	snprintf(p, sizeof(p), "%s/wheel.snap", dir);
	unlink(p);
	rmdir(dir);
	close(a);
	close(b);
	return 0;
}

/* Deadlines that pass between save and restore expire at once, in order. */
static int t_restore_past_deadlines(void)
{
	enum { N = 300 };
	static struct twheel_arm e[N];
	struct twheel_event ev[N + 1];
	uint64_t now;
	struct twheel_stats st;
	char p[600];
	size_t done;
	ssize_t r;
	int a, b, i;

	NEED_DEV();
	a = twheel_open(NULL, 0);
	b = twheel_open(NULL, O_NONBLOCK);
	CHECK(a >= 0 && b >= 0, "open");
	/* absolute deadlines, all in one batch: decreasing with i */
	EQ(twheel_now(a, &now), 0);
	memset(e, 0, sizeof(e));
	for (i = 0; i < N; i++) {
		e[i].id = 9000 + (uint64_t)i;
		e[i].timeout_ns = now + 300 * MS + (uint64_t)(N - i) * MS;
		e[i].data = (uint64_t)i;
		e[i].flags = TWHEEL_ARM_ABSTIME;
	}
	EQ(twheel_arm(a, e, N, &done), 0);
	/* and one far away, which must stay armed */
	EQ(twheel_arm_one(a, 1, 3600 * SEC, 0, 0), 0);
	path_of(p, sizeof(p), "past.snap");
	EQ(twheel_save(a, p), 0);
	close(a);
	msleep(1000);

	EQ(twheel_restore(b, p, &done), 0);
	EQ(done, N + 1);
	EQ(twheel_stats(b, &st), 0);
	EQ(st.pending, N);	/* queued by the ARM itself, no timer needed */
	EQ(st.armed, 1);
	r = twheel_read(b, ev, N + 1);
	EQ(r, N);
	for (i = 0; i < N; i++) {
		/* file order is deadline order: the last armed expires first */
		EQ(ev[i].id, 9000 + (uint64_t)(N - 1 - i));
		EQ(ev[i].data, (uint64_t)(N - 1 - i));
		CHECK(ev[i].expired_ns >= ev[i].deadline_ns, "early");
	}
	EQ(twheel_query(b, 1, NULL), 0);
	unlink(p);
	close(b);
	return 0;
}

/* Corrupt or truncated snapshots: -EBADMSG, and the wheel is untouched. */
static int t_restore_corrupt(void)
{
	struct twheel_stats s0, s1;
	struct twheel_query q;
	unsigned char *good, *bad;
	size_t len, done;
	char p[600], q2[600];
	int a, b;
	struct {
		const char *what;
		long cut;	/* new length, -1 unchanged */
		long flip;	/* byte to flip, -1 none */
	} cases[] = {
		{ "truncated in the header", 40, -1 },
		{ "truncated in the entries", -2, -1 },	/* len - 5 */
		{ "empty", 0, -1 },
		{ "bad magic", -1, 3 },
		{ "bad version", -1, 9 },
		{ "header checksum", -1, 33 },
		{ "entry checksum (first)", -1, 64 },
		{ "entry checksum (last)", -3, -1 },	/* last byte */
	};

	NEED_DEV();
	a = twheel_open(NULL, 0);
	b = twheel_open(NULL, 0);
	CHECK(a >= 0 && b >= 0, "open");
	for (int i = 0; i < 200; i++)
		EQ(twheel_arm_one(a, 100 + (uint64_t)i, 3600 * SEC, 1, 0), 0);
	path_of(p, sizeof(p), "good.snap");
	path_of(q2, sizeof(q2), "bad.snap");
	EQ(twheel_save(a, p), 0);
	EQ(read_file(p, &good, &len), 0);
	EQ(len, 64 + 200 * 24);
	bad = malloc(len);

	EQ(twheel_arm_one(b, 100, 60 * SEC, 77, 0), 0);	/* also in the file */
	EQ(twheel_arm_one(b, 7, 60 * SEC, 7, 0), 0);
	EQ(twheel_stats(b, &s0), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t l = len;

		memcpy(bad, good, len);
		if (cases[i].cut >= 0)
			l = (size_t)cases[i].cut;
		else if (cases[i].cut == -2)
			l = len - 5;
		else if (cases[i].cut == -3)
			bad[len - 1] ^= 1;
		if (cases[i].flip >= 0)
			bad[cases[i].flip] ^= 0x40;
		EQ(write_file(q2, bad, l), 0);
		done = 999;
		CHECK(twheel_restore(b, q2, &done) == -EBADMSG, "%s", cases[i].what);
		EQ(done, 0);
		EQ(twheel_stats(b, &s1), 0);
		CHECK(s1.arms == s0.arms && s1.armed == s0.armed &&
		      s1.discarded == s0.discarded, "%s: the wheel changed", cases[i].what);
		EQ(twheel_query(b, 100, &q), 0);
		EQ(q.data, 77);
		EQ(twheel_query(b, 101, NULL), -ENOENT);
	}
	EQ(twheel_restore(b, "/nonexistent/dir/x.snap", &done), -ENOENT);
	/* the good file restores, replacing id 100 */
	EQ(twheel_restore(b, p, &done), 0);
	EQ(done, 200);
	EQ(twheel_query(b, 100, &q), 0);
	EQ(q.data, 1);
	EQ(twheel_query(b, 7, &q), 0);
	unlink(p);
	unlink(q2);
	free(good);
	free(bad);
	close(a);
	close(b);
	return 0;
}

/* A wheel too small for the file: the error says how many took effect. */
static int t_restore_partial(void)
{
	struct twheel_config c;
	char p[600];
	size_t done;
	int a, b;

	NEED_DEV();
	a = twheel_open(NULL, 0);
	CHECK(a >= 0, "open");
	for (int i = 0; i < 1000; i++)
		EQ(twheel_arm_one(a, (uint64_t)i, 3600 * SEC + (uint64_t)i * SEC, 0, 0), 0);
	path_of(p, sizeof(p), "partial.snap");
	EQ(twheel_save(a, p), 0);
	EQ(twheel_get_config(a, &c), 0);
	c.max_ids = 600;
	b = twheel_open(&c, 0);
	CHECK(b >= 0, "open small");
	EQ(twheel_restore(b, p, &done), -ENOSPC);
	EQ(done, 600);
	/* the first 600 in deadline order are the ones armed */
	EQ(twheel_query(b, 599, NULL), 0);
	EQ(twheel_query(b, 600, NULL), -ENOENT);
	unlink(p);
	close(a);
	close(b);
	return 0;
}

/* A file written by the independent encoder restores as documented. */
static int t_restore_reference_file(void)
{
	struct ref_entry e[3];
	struct twheel_query q;
	unsigned char buf[64 + 3 * 24];
	uint64_t rt = now_on(CLOCK_REALTIME), wn;
	struct twheel_event ev[4];
	char p[600];
	size_t done;
	int b;

	NEED_DEV();
	b = twheel_open(NULL, O_NONBLOCK);
	CHECK(b >= 0, "open");
	e[0] = (struct ref_entry){ 11, rt - 3600 * SEC, 110 };	/* passed */
	e[1] = (struct ref_entry){ 12, rt + 3600 * SEC, 120 };
	e[2] = (struct ref_entry){ 13, TWHEEL_DEADLINE_MAX, 130 };
	path_of(p, sizeof(p), "ref2.snap");
	EQ(write_file(p, buf, ref_encode(buf, e, 3, 1, 0)), 0);
	EQ(twheel_restore(b, p, &done), 0);
	EQ(done, 3);
	EQ(twheel_now(b, &wn), 0);
	EQ(twheel_query(b, 12, &q), 0);
	EQ(q.data, 120);
	CHECK(q.deadline_ns > wn + 3590 * SEC && q.deadline_ns < wn + 3610 * SEC,
	      "deadline %" PRIu64 " vs now %" PRIu64, (uint64_t)q.deadline_ns, wn);
	EQ(twheel_query(b, 13, &q), 0);
	EQ(q.deadline_ns, TWHEEL_DEADLINE_MAX);
	EQ(twheel_read(b, ev, 4), 1);
	EQ(ev[0].id, 11);
	EQ(ev[0].data, 110);
	unlink(p);
	close(b);
	return 0;
}

int main(int argc, char **argv)
{
	const char *t = argc > 1 ? argv[1] : getenv("TMPDIR");
	int fd;

	snprintf(tmpdir, sizeof(tmpdir), "%s/test_lib.%d", t && *t ? t : "/tmp",
		 (int)getpid());
	if (mkdir(tmpdir, 0700) < 0) {
		fprintf(stderr, "test_lib: mkdir %s: %s\n", tmpdir, strerror(errno));
		return 1;
	}
	fd = twheel_open(NULL, 0);
	have_dev = fd >= 0;
	if (fd >= 0)
		close(fd);
	else if (fd != -ENOENT)
		printf("# twheel_open: %s\n", twheel_strerror(fd));

	run("format: reference file accepted", t_format_reference_accepted);
	run("format: corrupt/truncated files refused (EBADMSG)", t_format_corrupt_refused);
	run("format: errors of twheel_snapshot_check", t_format_errors);
	run("twheel_strerror", t_strerror);
	run("open/get_config/set_config", t_open_config);
	run("twheel_now", t_now);
	run("twheel_touch", t_touch);
	run("twheel_touch loops over a short write", t_touch_short);
	run("arm/arm_one/cancel/query/stats", t_arm_cancel_query);
	run("bad fds and non-twheel fds", t_bad_fds);
	run("read/wait (timeouts, EINTR retry)", t_read_wait);
	run("twheel_dump", t_dump);
	run("save/restore roundtrip", t_save_restore_roundtrip);
	run("restore: past deadlines expire at once", t_restore_past_deadlines);
	run("restore: corrupt files refused, wheel untouched", t_restore_corrupt);
	run("restore: partial on ENOSPC", t_restore_partial);
	run("restore: file from an independent encoder", t_restore_reference_file);

	rmdir(tmpdir);
	printf("# test_lib: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
