/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The helpers the twheel selftests share, one header for the tier: the
 * units, opening /dev/twheel or skipping (OPEN_OR_SKIP; without it the
 * whole program skips), the clocks in ns and sleeps on them, the run's
 * seed, the ioctls as 0 or -errno (batch ARM/CANCEL, QUERY, GET_STATS, the
 * config), fd, sysfs and page helpers, runs of ids, a seeded PRNG
 * (splitmix64), an id -> index hash map and a bitmap.  A helper that one
 * suite alone uses stays in that suite.
 *
 * Include it after kselftest_harness.h (OPEN_OR_SKIP uses SKIP() and
 * ASSERT_LE(), skip_without_wheel() ksft_exit_skip()).  Header-only, so
 * that each suite stays one translation unit (kselftest_harness.h defines
 * non-static symbols).
 */
#ifndef TWHEEL_SELFTEST_H
#define TWHEEL_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

#define US		((uint64_t)1000)
#define MS		((uint64_t)1000000)
#define SEC		((uint64_t)1000000000)

/* printf argument for %llu / %llx, the same on 32 and 64 bits */
#define U(x)		((unsigned long long)(x))

#define DEV		"/dev/twheel"
#define EVSZ		sizeof(struct twheel_event)

/* the seed of every randomised test unless TWHEEL_SEED is set */
#define TW_TEST_DEFAULT_SEED	0x7477686565ULL

/* ---- the device ----------------------------------------------------- */

/* open() of DEV, O_RDWR | O_CLOEXEC | @flags: the fd, or -1 and errno */
static inline int open_wheel(int flags)
{
	return open(DEV, O_RDWR | O_CLOEXEC | flags);
}

/* Opens DEV into @fd (see open_wheel()); skips the test if it is absent. */
#define OPEN_OR_SKIP(fd, flags) do {					\
	(fd) = open_wheel(flags);					\
	if ((fd) < 0 && errno == ENOENT)				\
		SKIP(return, DEV " not present (module not loaded)");	\
	ASSERT_LE(0, (fd)) TH_LOG("open " DEV ": %s", strerror(errno)); \
} while (0)

/*
 * Without DEV the whole program skips, before main(): kselftest's runner
 * then reports it "ok N selftests: twheel: NAME # SKIP" (a harness program
 * whose every test skipped exits 0, which the runner counts as a pass).
 */
static void __attribute__((constructor)) skip_without_wheel(void)
{
	if (access(DEV, F_OK) && errno == ENOENT)
		ksft_exit_skip(DEV " not present (module not loaded)\n");
}

/* ---- clocks ----------------------------------------------------------- */

static inline uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* CLOCK_MONOTONIC, the wheel's default clock */
static inline uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline struct timespec ts_of(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / SEC),
		.tv_nsec = (long)(ns % SEC),
	};

	return ts;
}

/* Sleeps @ns, resumed after a signal handler until the whole time passed. */
static inline void sleep_ns(uint64_t ns)
{
	struct timespec ts = ts_of(ns);

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Sleeps until @t on CLOCK_MONOTONIC. */
static inline void sleep_until(uint64_t t)
{
	struct timespec ts = ts_of(t);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---- seeds ------------------------------------------------------------ */

/* TWHEEL_SEED if set and not empty, else @dflt */
static inline uint64_t seed_or(uint64_t dflt)
{
	const char *s = getenv("TWHEEL_SEED");

	return (s && *s) ? strtoull(s, NULL, 0) : dflt;
}

/* TWHEEL_SEED, else the same seed every run */
static inline uint64_t get_seed(void)
{
	return seed_or(TW_TEST_DEFAULT_SEED);
}

/* TWHEEL_SEED, else one from the clock and the pid: another every run */
static inline uint64_t time_seed(void)
{
	return seed_or(now_ns() ^ ((uint64_t)getpid() << 32));
}

/* ---- ioctls: each returns 0 or -errno --------------------------------- */

static inline uint64_t uptr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static inline int ioc(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

/*
 * An ARM or CANCEL (@cmd) of the @n entries at @p; *done, if @done is not
 * NULL: the batch's done after the call (~0 if the kernel left it as it
 * was, which it does only when it could not read or write the batch).
 */
static inline int batch(int fd, unsigned long cmd, const void *p, uint64_t n,
			uint64_t *done)
{
	struct twheel_batch b;
	int ret;

	memset(&b, 0, sizeof(b));
	b.ptr = uptr(p);
	b.count = n;
	b.done = ~0ULL;
	ret = ioc(fd, cmd, &b);
	if (done)
		*done = b.done;
	return ret;
}

static inline int arm_n(int fd, const struct twheel_arm *e, uint64_t n,
			uint64_t *done)
{
	return batch(fd, TWHEEL_IOC_ARM, e, n, done);
}

static inline int cancel_n(int fd, const uint64_t *ids, uint64_t n,
			   uint64_t *done)
{
	return batch(fd, TWHEEL_IOC_CANCEL, ids, n, done);
}

static inline int arm1(int fd, uint64_t id, uint64_t timeout, uint64_t data,
		       uint32_t flags)
{
	struct twheel_arm e = {
		.id = id, .timeout_ns = timeout, .data = data, .flags = flags,
	};

	return arm_n(fd, &e, 1, NULL);
}

/* An event due right now: ABSTIME at 1 ns is always in the past. */
static inline int arm_past(int fd, uint64_t id, uint64_t data)
{
	return arm1(fd, id, 1, data, TWHEEL_ARM_ABSTIME);
}

static inline int query(int fd, uint64_t id, struct twheel_query *q)
{
	memset(q, 0, sizeof(*q));
	q->id = id;
	return ioc(fd, TWHEEL_IOC_QUERY, q);
}

/* *st is filled with 0xAA first: the kernel must write every byte. */
static inline int get_stats(int fd, struct twheel_stats *st)
{
	memset(st, 0xAA, sizeof(*st));
	return ioc(fd, TWHEEL_IOC_GET_STATS, st);
}

/*
 * GET_CONFIG, then SET_CONFIG with tick_ns, timeout_ns and max_ids
 * replaced where the argument is not 0 (0 keeps the field: the kernel
 * refuses 0 for all three).
 */
static inline int config_set(int fd, uint64_t tick_ns, uint64_t timeout_ns,
			     uint64_t max_ids)
{
	struct twheel_config c;
	int ret = ioc(fd, TWHEEL_IOC_GET_CONFIG, &c);

	if (ret)
		return ret;
	if (tick_ns)
		c.tick_ns = tick_ns;
	if (timeout_ns)
		c.timeout_ns = timeout_ns;
	if (max_ids)
		c.max_ids = max_ids;
	return ioc(fd, TWHEEL_IOC_SET_CONFIG, &c);
}

/* The fd's default timeout (not 0). */
static inline int set_timeout(int fd, uint64_t timeout_ns)
{
	return config_set(fd, 0, timeout_ns, 0);
}

/* The fd's cap on ids (not 0). */
static inline int set_max_ids(int fd, uint64_t max)
{
	return config_set(fd, 0, 0, max);
}

/* ---- fds, files and memory --------------------------------------------- */

/* O_NONBLOCK on (@on) or off; -1 and errno on failure */
static inline int set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -1;
	return fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* The number a file (sysfs, a module parameter) starts with; -1 if unread. */
static inline long read_long(const char *path)
{
	char buf[64] = "";
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtol(buf, NULL, 10);
	fclose(f);
	return v;
}

/* Write @s to the file at @path in one write(): 0, or -1 with errno. */
static inline int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

/* /sys/class/misc/twheel/@name: the module-wide "ids" or "fds" */
static inline long sysfs_long(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/misc/twheel/%s", name);
	return read_long(path);
}

/* Whether the @n bytes at @p all equal @c. */
static inline bool all_bytes(const void *p, int c, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != (unsigned char)c)
			return false;
	return true;
}

static inline long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/*
 * A read/write page followed by an unmapped one: returns the first, NULL
 * on failure.  @touch: zeroed by a write, so it is populated before the
 * kernel sees it; else as mmap() left it.
 */
static inline void *map_hole(bool touch)
{
	long ps = page_size();
	char *p = mmap(NULL, 2 * ps, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (munmap(p + ps, ps)) {
		munmap(p, 2 * ps);
		return NULL;
	}
	if (touch)
		memset(p, 0, ps);
	return p;
}

/* Ids 1..n in a buffer the caller frees (NULL if out of memory). */
static inline uint64_t *seq_ids(size_t n)
{
	uint64_t *ids = malloc(n * sizeof(*ids));
	size_t i;

	for (i = 0; ids && i < n; i++)
		ids[i] = i + 1;
	return ids;
}

/* ---- PRNG: splitmix64, deterministic for a given seed ---------------- */

/* splitmix64's increment, 2^64 / the golden ratio: an odd multiplier too */
#define SPLITMIX64_GAMMA	0x9e3779b97f4a7c15ULL

struct rng {
	uint64_t s;
};

static inline uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += SPLITMIX64_GAMMA);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform-enough value in [lo, hi] (inclusive); hi >= lo. */
static inline uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	uint64_t span = hi - lo + 1;

	if (span == 0)		/* full 64-bit range */
		return rng_next(r);
	return lo + rng_next(r) % span;
}

/* true with probability pct/100 */
static inline bool rng_pct(struct rng *r, unsigned int pct)
{
	return rng_next(r) % 100 < pct;
}

/* ---- id -> index map (open addressing, linear probing) --------------- */

struct idmap {
	uint64_t *keys;
	uint32_t *vals;		/* index + 1; 0 = empty slot */
	uint32_t mask;
};

static inline uint64_t idmap_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	return k;
}

/* Room for at least n ids at a load factor <= 1/2. Returns 0 or -1. */
static inline int idmap_init(struct idmap *m, uint32_t n)
{
	uint32_t cap = 16;

	while (cap < 2 * n)
		cap <<= 1;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, sizeof(*m->vals));
	m->mask = cap - 1;
	return (m->keys && m->vals) ? 0 : -1;
}

static inline void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* Returns the index of id, or -1. */
static inline int64_t idmap_get(const struct idmap *m, uint64_t id)
{
	uint32_t i = (uint32_t)idmap_hash(id) & m->mask;

	while (m->vals[i]) {
		if (m->keys[i] == id)
			return (int64_t)m->vals[i] - 1;
		i = (i + 1) & m->mask;
	}
	return -1;
}

/* Inserts id -> idx; returns false if id is already there. */
static inline bool idmap_put(struct idmap *m, uint64_t id, uint32_t idx)
{
	uint32_t i = (uint32_t)idmap_hash(id) & m->mask;

	while (m->vals[i]) {
		if (m->keys[i] == id)
			return false;
		i = (i + 1) & m->mask;
	}
	m->keys[i] = id;
	m->vals[i] = idx + 1;
	return true;
}

/*
 * Fills ids[0..n) with distinct random 64-bit ids (never 0, spread over the
 * whole range so the upper 32 bits matter) and indexes them in m.
 */
static inline int idmap_random_ids(struct idmap *m, struct rng *r,
				   uint64_t *ids, uint32_t n)
{
	uint32_t i;

	if (idmap_init(m, n))
		return -1;
	for (i = 0; i < n; i++) {
		do {
			ids[i] = rng_next(r);
		} while (ids[i] == 0 || !idmap_put(m, ids[i], i));
	}
	return 0;
}

/* ---- bitmap ----------------------------------------------------------- */

static inline uint64_t *bitmap_alloc(uint64_t nbits)
{
	return calloc((size_t)((nbits + 63) / 64), sizeof(uint64_t));
}

/* Sets bit i; returns its previous value. */
static inline bool bitmap_test_set(uint64_t *b, uint64_t i)
{
	uint64_t m = 1ULL << (i & 63);
	bool old = b[i >> 6] & m;

	b[i >> 6] |= m;
	return old;
}

static inline bool bitmap_test(const uint64_t *b, uint64_t i)
{
	return b[i >> 6] & (1ULL << (i & 63));
}

#endif /* TWHEEL_SELFTEST_H */
