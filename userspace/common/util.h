/* SPDX-License-Identifier: MIT */
/*
 * What the user-space programs (examples/, bench/, twheelctl/) share and
 * would otherwise each write again: clocks in nanoseconds, splitmix64's
 * mixing, strict parsing of numbers, "PROG: message" on stderr.
 * Header-only (everything static inline): a program includes it and gets
 * what it uses, with nothing to build or link.  It needs no libtwheel and
 * no uapi header, so the bench's in-process contender, built against the
 * kernel shims, can include it.
 *
 * Option tables and usage errors (the command lines of the examples, the
 * bench and twheelctl) are in opts.h beside this file.
 */
#ifndef TWHEEL_USERSPACE_UTIL_H
#define TWHEEL_USERSPACE_UTIL_H

#include <errno.h>
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

/* ---- clocks ------------------------------------------------------------ */

static inline uint64_t timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

static inline struct timespec ns_timespec(uint64_t ns)
{
	return (struct timespec){
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};
}

static inline uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return timespec_ns(&ts);
}

/* CLOCK_MONOTONIC, the wheels' default clock. */
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
	struct timespec ts = ns_timespec(t);

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

/* ---- splitmix64 ---------------------------------------------------------- */

/* splitmix64's increment, 2^64 / the golden ratio (an odd multiplier too) */
#define SPLITMIX64_GAMMA	0x9e3779b97f4a7c15ULL
/* the multipliers of its finalizer */
#define SPLITMIX64_MUL1		0xbf58476d1ce4e5b9ULL
#define SPLITMIX64_MUL2		0x94d049bb133111ebULL

/*
 * splitmix64's finalizer: a bijection of 64-bit values that mixes every
 * bit into every other.  The generator's next value is the finalizer of
 * its state after adding SPLITMIX64_GAMMA.
 */
static inline uint64_t splitmix64_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * SPLITMIX64_MUL1;
	z = (z ^ (z >> 27)) * SPLITMIX64_MUL2;
	return z ^ (z >> 31);
}

/* ---- strict numbers ------------------------------------------------------ */

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

/* strtod() of the whole of s: -1 on trailing junk or a range error. */
static inline int strtod_all(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || *end ? -1 : 0;
}

/* Strict finite non-negative decimal number. */
static inline int parse_double(const char *s, double *out)
{
	double v;

	if (!s || !*s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -1;
	if (strtod_all(s, &v) < 0 || !(v >= 0.0) || v > 1e15)
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

/*
 * "A,B", split at the first comma: A into *a and B into *b through parse;
 * -1 if there is no comma or a half is bad.  s is left as it was.
 */
static inline int parse_pair(char *s, int (*parse)(const char *, uint64_t *),
			     uint64_t *a, uint64_t *b)
{
	char *comma = strchr(s, ',');
	int r;

	if (!comma)
		return -1;
	*comma = '\0';
	r = parse(s, a) < 0 || parse(comma + 1, b) < 0 ? -1 : 0;
	*comma = ',';
	return r;
}

/* ---- messages ------------------------------------------------------------ */

/* "PROG: message" on stderr, without the newline: the caller ends the line. */
static inline void vmessage(const char *prog, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
}

#endif /* TWHEEL_USERSPACE_UTIL_H */
