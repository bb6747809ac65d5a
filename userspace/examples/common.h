/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by the twheel example programs: clocks, strict
 * argument parsing, a hash for deterministic per-id choices, allocation
 * that dies on failure.  Everything is static so that each example stays a
 * single translation unit plus libtwheel.
 */
#ifndef TWHEEL_EXAMPLES_COMMON_H
#define TWHEEL_EXAMPLES_COMMON_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_MSEC	1000000ULL

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline uint64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline uint64_t real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* Sleep until an absolute CLOCK_MONOTONIC time (restarts after signals). */
static inline void sleep_until_ns(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / NSEC_PER_SEC),
		.tv_nsec = (long)(t % NSEC_PER_SEC),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static inline void sleep_ns(uint64_t ns)
{
	sleep_until_ns(mono_ns() + ns);
}

/* User + system CPU time of this process (children excluded), in ns. */
static inline uint64_t cpu_self_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       ((uint64_t)ru.ru_utime.tv_usec + (uint64_t)ru.ru_stime.tv_usec) * 1000ULL;
}

/* splitmix64: a good 64-bit mix, used as a stateless hash and as a PRNG. */
static inline uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline uint64_t rng_next(uint64_t *state)
{
	*state += 0x9e3779b97f4a7c15ULL;
	return mix64(*state);
}

/* Uniform in [0, 1). */
static inline double rng_unit(uint64_t *state)
{
	return (double)(rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

/* Strict unsigned integer: decimal digits only, no sign, no junk, no overflow. */
static inline int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* Strict finite non-negative decimal number. */
static inline int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v >= 0.0) || v > 1e15)
		return -1;
	*out = v;
	return 0;
}

/* Seconds (may be fractional) to ns; -1 on a bad value. */
static inline int parse_seconds_ns(const char *s, uint64_t *ns)
{
	double v;

	if (parse_double(s, &v) < 0 || v > 1e9)
		return -1;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

static inline void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static inline void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

/* "1234567" -> "1,234,567" into buf (>= 32 bytes). */
static inline const char *fmt_count(char *buf, uint64_t v)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%" PRIu64, v);
	int o = 0;

	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

/*
 * Latency histogram: 1 ms buckets up to HIST_MS, then one overflow bucket;
 * keeps the exact maximum.
 */
#define HIST_MS 60000
struct hist {
	uint64_t n;
	uint64_t max_ns;
	uint64_t over;
	uint32_t b[HIST_MS];
};

static inline void hist_add(struct hist *h, uint64_t ns)
{
	uint64_t ms = ns / NSEC_PER_MSEC;

	h->n++;
	if (ns > h->max_ns)
		h->max_ns = ns;
	if (ms < HIST_MS)
		h->b[ms]++;
	else
		h->over++;
}

/* Upper bound (ms) of the bucket holding the p-quantile (p in [0,1]). */
static inline double hist_quantile_ms(const struct hist *h, double p)
{
	uint64_t want, acc = 0;

	if (!h->n)
		return 0.0;
	want = (uint64_t)(p * (double)h->n);
	if (want >= h->n)
		want = h->n - 1;
	for (uint32_t i = 0; i < HIST_MS; i++) {
		acc += h->b[i];
		if (acc > want)
			return (double)(i + 1);
	}
	return (double)h->max_ns / 1e6;
}

/* Count of samples above ns (to 1 ms resolution, rounding in favour of "above"). */
static inline uint64_t hist_count_above(const struct hist *h, uint64_t ns)
{
	uint64_t ms = ns / NSEC_PER_MSEC, c = h->over;

	for (uint64_t i = ms; i < HIST_MS; i++)
		c += h->b[i];
	return c;
}

#endif /* TWHEEL_EXAMPLES_COMMON_H */
