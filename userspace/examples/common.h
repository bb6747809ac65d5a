/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by the twheel example programs: a hash for
 * deterministic per-id choices, allocation that dies on failure, opening a
 * wheel and reading its events, the verification reports and their latency
 * histogram.
 * Everything is static so that each example stays a single translation
 * unit plus libtwheel.
 *
 * Clocks and strict number parsing come from ../common/util.h (shared
 * with the bench and twheelctl), the option table and the usage errors
 * from ../common/opts.h: each program defines `prog` (its name in
 * messages, see set_prog()) and usage() (which calls usage_exit()).
 */
#ifndef TWHEEL_EXAMPLES_COMMON_H
#define TWHEEL_EXAMPLES_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "twheel.h"
#include "util.h"
#include "opts.h"

/* splitmix64: a good 64-bit mix, used as a stateless hash and as a PRNG. */
static inline uint64_t mix64(uint64_t x)
{
	return splitmix64_mix(x + SPLITMIX64_GAMMA);
}

static inline uint64_t rng_next(uint64_t *state)
{
	*state += SPLITMIX64_GAMMA;
	return mix64(*state);
}

/* Uniform in [0, 1). */
static inline double rng_unit(uint64_t *state)
{
	return (double)(rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
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

/*
 * A wheel on CLOCK_MONOTONIC with the default id limit, non-blocking and
 * close-on-exec; dies if /dev/twheel cannot be opened.
 */
static inline int open_wheel(uint64_t tick_ns, uint64_t timeout_ns)
{
	struct twheel_config cfg;
	int fd;

	memset(&cfg, 0, sizeof(cfg));
	cfg.tick_ns = tick_ns;
	cfg.timeout_ns = timeout_ns;
	cfg.max_ids = TWHEEL_DEFAULT_MAX_IDS;
	cfg.clockid = CLOCK_MONOTONIC;
	fd = twheel_open(&cfg, O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		die("%s: cannot open /dev/twheel: %s%s", prog, twheel_strerror(fd),
		    fd == -ENOENT ? " (is the twheel module loaded?)" : "");
	return fd;
}

/*
 * Up to n events from a non-blocking wheel: how many were read, 0 if none
 * is due (EAGAIN) or a signal came first (EINTR); dies on any other error,
 * "PROG: WHAT: error".
 */
static inline ssize_t read_events(int fd, struct twheel_event *ev, size_t n, const char *what)
{
	ssize_t r = twheel_read(fd, ev, n);

	if (r == -EAGAIN || r == -EINTR)
		return 0;
	if (r < 0)
		die("%s: %s: %s", prog, what, twheel_strerror((int)r));
	return r;
}

/* A check's verdict in the verification reports. */
static inline const char *yesno(int ok)
{
	return ok ? "ok" : "FAIL";
}

/*
 * A line of a verification report, between its "PROG: verification
 * summary" and its "PROG: VERIFIED" (or "VERIFICATION FAILED"):
 * "  LABEL              text", the text in the column after the labels.
 * report_line() ends it there, check_line() with the check's verdict.
 */
static inline void report_vline(const char *label, const char *fmt, va_list ap)
{
	printf("  %-18s ", label);
	vprintf(fmt, ap);
}

static inline __attribute__((format(printf, 2, 3))) void report_line(const char *label,
								     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_vline(label, fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* "  LABEL              text  [ok]" (or [FAIL]) */
static inline __attribute__((format(printf, 3, 4))) void check_line(const char *label, int ok,
								    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_vline(label, fmt, ap);
	va_end(ap);
	printf("  [%s]\n", yesno(ok));
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

/* "max 12.3 ms, p50 4 ms, p99 9 ms" into buf (>= 80 bytes). */
static inline const char *fmt_hist(char *buf, size_t len, const struct hist *h)
{
	snprintf(buf, len, "max %.1f ms, p50 %.0f ms, p99 %.0f ms", (double)h->max_ns / 1e6,
		 hist_quantile_ms(h, 0.5), hist_quantile_ms(h, 0.99));
	return buf;
}

#endif /* TWHEEL_EXAMPLES_COMMON_H */
