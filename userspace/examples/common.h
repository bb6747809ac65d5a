/* SPDX-License-Identifier: MIT */
/*
 * Small helpers shared by the twheel example programs: argument parsing
 * and the usage errors, a hash for deterministic per-id choices,
 * allocation that dies on failure, opening a wheel, the pieces of the
 * verification reports.  Everything is static so that each example stays
 * a single translation unit plus libtwheel.  Clocks and strict number
 * parsing come from ../common/util.h, shared with the bench and twheelctl.
 *
 * Each program defines `prog` (its name in messages, see set_prog()) and
 * usage() (which calls usage_exit()), declared below.
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

/* Defined by each program. */
static const char *prog;
static void usage(FILE *f, int status) __attribute__((noreturn));

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

/* The program's name in messages: argv[0] without its directory. */
static inline void set_prog(int argc, char **argv)
{
	if (argc > 0 && argv[0])
		prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
}

/*
 * The body of each program's usage(): the synopsis ("usage: PROG args"),
 * then the help text on f for status 0, else a hint; exits with status.
 */
static inline __attribute__((noreturn)) void usage_exit(FILE *f, int status,
							 const char *args, const char *text)
{
	fprintf(f, "usage: %s %s\n", prog, args);
	if (status)
		fprintf(f, "Try '%s --help' for the options.\n", prog);
	else
		fputs(text, f);
	exit(status);
}

/* A command line that does not work: say why, then the usage (exit 2). */
static inline __attribute__((format(printf, 1, 2), noreturn)) void usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage(prog, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	usage(stderr, 2);
}

static inline __attribute__((noreturn)) void bad_arg(const char *opt, const char *val)
{
	usage_error("invalid value for --%s: '%s'", opt, val ? val : "");
}

/*
 * Option values, range-checked (bounds included); a bad one is a usage
 * error.  opt is the option's name, without the dashes.
 */
static inline uint64_t opt_u64(const char *opt, const char *val, uint64_t min, uint64_t max)
{
	uint64_t v;

	if (parse_u64(val, &v) < 0 || v < min || v > max)
		bad_arg(opt, val);
	return v;
}

/* Milliseconds in [min, max], returned in ns. */
static inline uint64_t opt_ms(const char *opt, const char *val, uint64_t min, uint64_t max)
{
	return opt_u64(opt, val, min, max) * NSEC_PER_MSEC;
}

/* Seconds (may be fractional), returned in ns within [min_ns, max_ns]. */
static inline uint64_t opt_seconds(const char *opt, const char *val, uint64_t min_ns,
				   uint64_t max_ns)
{
	uint64_t ns;

	if (parse_seconds_ns(val, &ns) < 0 || ns < min_ns || ns > max_ns)
		bad_arg(opt, val);
	return ns;
}

/* A non-negative number up to max (a fraction: max 1). */
static inline double opt_double(const char *opt, const char *val, double max)
{
	double v;

	if (parse_double(val, &v) < 0 || v > max)
		bad_arg(opt, val);
	return v;
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

/* A check's verdict in the verification reports. */
static inline const char *yesno(int ok)
{
	return ok ? "ok" : "FAIL";
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
