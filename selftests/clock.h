/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers the twheel selftests share: CLOCK_MONOTONIC (the wheel's default
 * clock) in ns, sleeping until a time on it, the run's seed, the fd's
 * default timeout and cap on ids, and runs of ids.  Header-only, like
 * model.h.
 */
#ifndef TWHEEL_SELFTEST_CLOCK_H
#define TWHEEL_SELFTEST_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>

#include <linux/twheel.h>

#define TW_TEST_SEC		1000000000ULL
/* the seed of every randomised test unless TWHEEL_SEED is set */
#define TW_TEST_DEFAULT_SEED	0x7477686565ULL

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * TW_TEST_SEC + (uint64_t)ts.tv_nsec;
}

static inline void sleep_until(uint64_t t)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t / TW_TEST_SEC),
		.tv_nsec = (long)(t % TW_TEST_SEC),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static inline uint64_t get_seed(void)
{
	const char *s = getenv("TWHEEL_SEED");

	return (s && *s) ? strtoull(s, NULL, 0) : TW_TEST_DEFAULT_SEED;
}

/* The fd's default timeout; 0 or -errno. */
static inline int set_timeout(int fd, uint64_t timeout_ns)
{
	struct twheel_config c;

	if (ioctl(fd, TWHEEL_IOC_GET_CONFIG, &c))
		return -errno;
	c.timeout_ns = timeout_ns;
	return ioctl(fd, TWHEEL_IOC_SET_CONFIG, &c) ? -errno : 0;
}

/* The fd's cap on ids; 0 or -errno. */
static inline int set_max_ids(int fd, uint64_t max)
{
	struct twheel_config c;

	if (ioctl(fd, TWHEEL_IOC_GET_CONFIG, &c))
		return -errno;
	c.max_ids = max;
	return ioctl(fd, TWHEEL_IOC_SET_CONFIG, &c) ? -errno : 0;
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

#endif /* TWHEEL_SELFTEST_CLOCK_H */
