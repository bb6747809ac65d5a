/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libtwheel: a small C library over /dev/twheel (uapi/linux/twheel.h).
 *
 * Every function returns 0 (or a count) on success and a negative errno on
 * failure; errno is left as the failing system call set it.  The wheel is
 * a plain fd: put it in epoll/poll/io_uring, fork it, pass it over
 * SCM_RIGHTS, close() it.
 */
#ifndef LIBTWHEEL_H
#define LIBTWHEEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
/* Found next to this header first (the Debian package's
 * /usr/include/twheel/linux/twheel.h), then on the include path. */
#include "linux/twheel.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LIBTWHEEL_VERSION_MAJOR 0
#define LIBTWHEEL_VERSION_MINOR 1

/* Open /dev/twheel (flags: O_NONBLOCK, O_CLOEXEC); cfg NULL keeps the defaults. */
int twheel_open(const struct twheel_config *cfg, int flags);
int twheel_get_config(int fd, struct twheel_config *cfg);
int twheel_set_config(int fd, const struct twheel_config *cfg);
/* Current time on the wheel's clock. */
int twheel_now(int fd, uint64_t *now_ns);

/* Touch ids (re-arm at now + timeout): number of ids that took effect. */
/* Short writes are continued; once some ids took effect, a later failure
 * returns their count (ids[0..count-1]) instead of the error. */
ssize_t twheel_touch(int fd, const uint64_t *ids, size_t n);
/* Arm entries; *done (may be NULL) = entries that took effect. */
int twheel_arm(int fd, const struct twheel_arm *entries, size_t n, size_t *done);
int twheel_arm_one(int fd, uint64_t id, uint64_t timeout_ns, uint64_t data,
		   uint32_t flags);
/* Cancel ids; *removed (may be NULL) = ids that were present. */
int twheel_cancel(int fd, const uint64_t *ids, size_t n, size_t *removed);
/* -ENOENT if id is absent; q may be NULL (presence test only). */
int twheel_query(int fd, uint64_t id, struct twheel_query *q);
int twheel_stats(int fd, struct twheel_stats *st);

/* Read up to n events: count, -EAGAIN on an O_NONBLOCK fd with none. */
ssize_t twheel_read(int fd, struct twheel_event *ev, size_t n);
/* Wait up to timeout_ms (-1: forever) for events: count, 0 on timeout. */
/* poll() then read(); a signal does not shorten the wait (it goes on for
 * the time left).  Use an O_NONBLOCK fd if several readers share it. */
ssize_t twheel_wait(int fd, struct twheel_event *ev, size_t n, int timeout_ms);

/* Call cb for every armed or expired id, in batches; stops on cb != 0. */
/* Returns 0 at the end, cb's non-zero value if it stopped, or -errno.
 * Entries carry TWHEEL_ARM_ABSTIME and the absolute deadline. */
int twheel_dump(int fd, int (*cb)(const struct twheel_arm *e, size_t n, void *arg),
		void *arg);

/* Checkpoint to a file (atomic, versioned, checksummed; deadlines kept
 * against CLOCK_REALTIME) and restore into a wheel (ids already due expire
 * at once).  A corrupt file is refused (-EBADMSG) and changes nothing. */
/* Format and guarantees: twheel_save(3).  restore arms in batches with
 * TWHEEL_ARM_ABSTIME, in deadline order; on an error midway (-ENOSPC...)
 * *restored (may be NULL) = the entries armed, the first ones of the file. */
int twheel_save(int fd, const char *path);
int twheel_restore(int fd, const char *path, size_t *restored);

/* Human-readable message for a negative errno returned by libtwheel. */
const char *twheel_strerror(int err);

/* --- Additions (libtwheel 0.1): snapshot inspection. --- */

/* Version of the snapshot file format written by twheel_save(). */
#define TWHEEL_SNAPSHOT_VERSION 1

/*
 * What twheel_snapshot_check() found in a snapshot file.  Deadlines are
 * nanoseconds on CLOCK_REALTIME (since the Epoch).  On -EBADMSG, @problem
 * names the first thing found wrong (a static string) and the other fields
 * hold whatever could be read before it.
 */
struct twheel_snapshot_info {
	uint32_t version;		/* file format version */
	uint32_t flags;			/* file flags (0) */
	uint32_t clockid;		/* clock of the wheel it was saved from */
	uint32_t entry_size;		/* bytes per entry */
	uint64_t count;			/* number of ids */
	uint64_t saved_realtime_ns;	/* when it was saved */
	uint64_t tick_ns;		/* tick of the wheel it was saved from */
	uint64_t timeout_ns;		/* default timeout of that wheel */
	uint64_t min_deadline_ns;	/* earliest deadline (0 if count is 0) */
	uint64_t max_deadline_ns;	/* latest deadline (0 if count is 0) */
	uint32_t header_crc;		/* CRC-32 of the header */
	uint32_t entries_crc;		/* CRC-32 of the entries */
	const char *problem;		/* NULL, or why the file is refused */
};

/* Validate a snapshot file without touching any wheel: 0 if it would be
 * accepted by twheel_restore(), -EBADMSG if it is corrupt or truncated,
 * another negative errno if it cannot be read.  info may be NULL. */
int twheel_snapshot_check(const char *path, struct twheel_snapshot_info *info);

#ifdef __cplusplus
}
#endif
#endif /* LIBTWHEEL_H */
