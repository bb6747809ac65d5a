// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libtwheel: thin wrappers over the /dev/twheel ABI (uapi/linux/twheel.h).
 *
 * Conventions: every function returns 0 or a count on success and a
 * negative errno on failure; errno keeps whatever the failing system call
 * set.  Nothing here allocates or keeps global state, so every function is
 * thread-safe as far as the fd itself allows.  Snapshots (save/restore)
 * live in snapshot.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>

#include "twheel.h"

#define TWHEEL_DEVICE "/dev/twheel"
/* Entries per DUMP ioctl: a stack buffer of 8 KiB. */
#define DUMP_BATCH 256

static int neg_errno(void)
{
	return errno > 0 ? -errno : -EIO;
}

/* An ioctl that reads or fills the struct at @arg: 0, -errno, or -EINVAL for NULL. */
static int struct_ioctl(int fd, unsigned long req, const void *arg)
{
	if (!arg)
		return -EINVAL;
	if (ioctl(fd, req, arg) < 0)
		return neg_errno();
	return 0;
}

int twheel_open(const struct twheel_config *cfg, int flags)
{
	int fd, err;

	if (flags & ~(O_NONBLOCK | O_CLOEXEC))
		return -EINVAL;
	fd = open(TWHEEL_DEVICE, O_RDWR | flags);
	if (fd < 0)
		return neg_errno();
	if (cfg) {
		err = twheel_set_config(fd, cfg);
		if (err) {
			int saved = errno;

			close(fd);
			errno = saved;
			return err;
		}
	}
	return fd;
}

int twheel_get_config(int fd, struct twheel_config *cfg)
{
	return struct_ioctl(fd, TWHEEL_IOC_GET_CONFIG, cfg);
}

int twheel_set_config(int fd, const struct twheel_config *cfg)
{
	return struct_ioctl(fd, TWHEEL_IOC_SET_CONFIG, cfg);
}

int twheel_now(int fd, uint64_t *now_ns)
{
	struct twheel_config cfg;
	struct timespec ts;
	int err;

	if (!now_ns)
		return -EINVAL;
	err = twheel_get_config(fd, &cfg);
	if (err)
		return err;
	if (clock_gettime((clockid_t)cfg.clockid, &ts) < 0)
		return neg_errno();
	*now_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	return 0;
}

ssize_t twheel_touch(int fd, const uint64_t *ids, size_t n)
{
	/* Largest chunk whose byte count fits a ssize_t. */
	const size_t max_chunk = (size_t)SSIZE_MAX / sizeof(uint64_t);
	size_t done = 0;

	while (done < n) {
		size_t chunk = n - done;
		ssize_t r;

		if (chunk > max_chunk)
			chunk = max_chunk;
		r = write(fd, ids + done, chunk * sizeof(uint64_t));
		if (r < 0) {
			if (errno == EINTR && !done)
				continue;
			if (done)
				break;
			return neg_errno();
		}
		if (r == 0 || r % sizeof(uint64_t))
			/* The ABI never does this; do not spin on it. */
			return done ? (ssize_t)done : -EIO;
		done += (size_t)r / sizeof(uint64_t);
		/*
		 * A short count means the next id failed (ENOSPC, ENOMEM,
		 * EFAULT) or a fatal signal: the next write() reports the
		 * error, or carries on if it was transient.
		 */
	}
	return (ssize_t)done;
}

static int batch_ioctl(int fd, unsigned long req, const void *ptr, size_t n,
		       size_t *done)
{
	struct twheel_batch b;
	int ret = 0;

	memset(&b, 0, sizeof(b));
	b.ptr = (uint64_t)(uintptr_t)ptr;
	b.count = n;
	if (ioctl(fd, req, &b) < 0)
		ret = neg_errno();
	if (done)
		*done = (size_t)b.done;
	return ret;
}

int twheel_arm(int fd, const struct twheel_arm *entries, size_t n, size_t *done)
{
	return batch_ioctl(fd, TWHEEL_IOC_ARM, entries, n, done);
}

int twheel_arm_one(int fd, uint64_t id, uint64_t timeout_ns, uint64_t data,
		   uint32_t flags)
{
	struct twheel_arm e;

	memset(&e, 0, sizeof(e));
	e.id = id;
	e.timeout_ns = timeout_ns;
	e.data = data;
	e.flags = flags;
	return twheel_arm(fd, &e, 1, NULL);
}

int twheel_cancel(int fd, const uint64_t *ids, size_t n, size_t *removed)
{
	return batch_ioctl(fd, TWHEEL_IOC_CANCEL, ids, n, removed);
}

int twheel_query(int fd, uint64_t id, struct twheel_query *q)
{
	struct twheel_query tmp;

	memset(&tmp, 0, sizeof(tmp));
	tmp.id = id;
	if (ioctl(fd, TWHEEL_IOC_QUERY, &tmp) < 0)
		return neg_errno();
	if (q)
		*q = tmp;
	return 0;
}

int twheel_stats(int fd, struct twheel_stats *st)
{
	return struct_ioctl(fd, TWHEEL_IOC_GET_STATS, st);
}

ssize_t twheel_read(int fd, struct twheel_event *ev, size_t n)
{
	ssize_t r;

	if (!n)
		return -EINVAL;
	if (n > (size_t)SSIZE_MAX / sizeof(*ev))
		n = (size_t)SSIZE_MAX / sizeof(*ev);
	r = read(fd, ev, n * sizeof(*ev));
	if (r < 0)
		return neg_errno();
	return r / (ssize_t)sizeof(*ev);
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ssize_t twheel_wait(int fd, struct twheel_event *ev, size_t n, int timeout_ms)
{
	int64_t end = 0;
	int left = timeout_ms;

	if (!n)
		return -EINVAL;
	if (timeout_ms > 0)
		end = mono_ms() + timeout_ms;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;
		int p;

		p = poll(&pfd, 1, timeout_ms < 0 ? -1 : left);
		if (p < 0 && errno != EINTR)
			return neg_errno();
		if (p > 0) {
			if (pfd.revents & POLLNVAL)
				return -EBADF;
			if (pfd.revents & POLLIN) {
				r = twheel_read(fd, ev, n);
				/* -EAGAIN: another reader took the events */
				if (r != -EAGAIN && r != -EINTR)
					return r;
			} else if (pfd.revents & (POLLERR | POLLHUP)) {
				return -EIO;
			}
		}
		if (p == 0)
			return 0;
		/* Interrupted, or raced with another reader: wait what is left. */
		if (timeout_ms > 0) {
			int64_t rem = end - mono_ms();

			if (rem <= 0)
				return 0;
			left = rem > INT_MAX ? INT_MAX : (int)rem;
		} else if (timeout_ms == 0) {
			return 0;
		}
	}
}

int twheel_dump(int fd, int (*cb)(const struct twheel_arm *e, size_t n, void *arg),
		void *arg)
{
	struct twheel_arm buf[DUMP_BATCH];
	struct twheel_dump d;

	if (!cb)
		return -EINVAL;
	memset(&d, 0, sizeof(d));
	for (;;) {
		int ret;

		d.ptr = (uint64_t)(uintptr_t)buf;
		d.count = DUMP_BATCH;
		d.done = 0;
		if (ioctl(fd, TWHEEL_IOC_DUMP, &d) < 0)
			return neg_errno();
		if (!d.done)
			return 0;
		if (d.done > DUMP_BATCH)
			return -EIO;
		ret = cb(buf, (size_t)d.done, arg);
		if (ret)
			return ret;
	}
}

const char *twheel_strerror(int err)
{
	if (err >= 0)
		return "Success";
	switch (-err) {
	case ENOENT:
		return "No such file or directory (or no such id; is the twheel module loaded?)";
	case ENODEV:
	case ENXIO:
		return "No twheel device (is the twheel module loaded?)";
	case EINVAL:
		return "Invalid argument";
	case EBUSY:
		return "Device busy (tick/clock cannot change while ids are held, or max_ids below the ids held)";
	case ENOSPC:
		return "No space for more ids (max_ids, max_user_ids or max_ids_total reached)";
	case ENOMEM:
		return "Out of memory";
	case EEXIST:
		return "Id already present (TWHEEL_ARM_NOREPLACE)";
	case EAGAIN:
		return "No event ready (O_NONBLOCK)";
	case EBADMSG:
		return "Corrupt, truncated or unsupported twheel snapshot";
	case ENOTTY:
		return "Not a twheel file descriptor";
	case EFAULT:
		return "Bad address";
	case EBADF:
		return "Bad file descriptor";
	case EINTR:
		return "Interrupted by a signal";
	case EACCES:
		return "Permission denied";
	case EPERM:
		return "Operation not permitted";
	case EIO:
		return "Input/output error";
	}
	return strerror(-err);
}
