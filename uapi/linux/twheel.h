/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * twheel: a hierarchical timing wheel behind /dev/twheel.
 *
 * Each open() of /dev/twheel is an independent wheel of 64-bit ids.
 *
 *   write(fd, __u64 ids[], n * 8)   touch: (re-)arm each id at now + timeout_ns
 *   read(fd, struct twheel_event[], n * sizeof) expired ids, oldest first
 *   poll/epoll                      EPOLLIN while an event is queued
 *   ioctl(fd, TWHEEL_IOC_*, ...)    configure, arm, cancel, query, stats, dump
 *
 * Every struct has only fixed-width fields and no implicit padding, so the
 * layout is the same for 32-bit and 64-bit callers.  Reserved fields must be
 * zero on input (else EINVAL) and are zeroed on output.  Times are
 * nanoseconds on the wheel's clock (CLOCK_MONOTONIC unless configured) as
 * the time namespace of the process that opened the fd sees it.
 */
#ifndef _UAPI_LINUX_TWHEEL_H
#define _UAPI_LINUX_TWHEEL_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* Defaults of a fresh fd, and the accepted ranges (see twheel(4)). */
#define TWHEEL_DEFAULT_TICK_NS		1000000ULL	/* 1 ms */
#define TWHEEL_DEFAULT_TIMEOUT_NS	30000000000ULL	/* 30 s */
#define TWHEEL_DEFAULT_MAX_IDS		1048576ULL
#define TWHEEL_TICK_MIN_NS		100000ULL	/* 100 us */
#define TWHEEL_TICK_MAX_NS		3600000000000ULL	/* 1 h */
#define TWHEEL_MAX_IDS_LIMIT		0x100000000ULL
/* Deadlines are clamped to this (KTIME_MAX, about 292 years). */
#define TWHEEL_DEADLINE_MAX		0x7fffffffffffffffULL

/**
 * struct twheel_config - per-fd configuration
 * @tick_ns: granularity of the wheel, in [TWHEEL_TICK_MIN_NS, TWHEEL_TICK_MAX_NS]
 * @timeout_ns: default timeout of write() touches and of ARM entries with
 *	timeout_ns == 0, in [1, TWHEEL_DEADLINE_MAX]
 * @max_ids: cap on ids (armed + expired) held by this fd, in
 *	[1, TWHEEL_MAX_IDS_LIMIT]
 * @clockid: CLOCK_MONOTONIC (1) or CLOCK_BOOTTIME (7)
 * @flags: must be 0
 * @reserved: must be 0
 *
 * SET_CONFIG replaces the whole configuration (start from GET_CONFIG).
 * Changing @tick_ns or @clockid while the fd holds ids fails with EBUSY, as
 * does a @max_ids below the number of ids held.
 */
struct twheel_config {
	__u64 tick_ns;
	__u64 timeout_ns;
	__u64 max_ids;
	__u32 clockid;
	__u32 flags;
	__u64 reserved[4];
};

/* struct twheel_arm.flags */
#define TWHEEL_ARM_ABSTIME	0x1U	/* timeout_ns is an absolute deadline */
#define TWHEEL_ARM_NOREPLACE	0x2U	/* EEXIST if the id is armed or expired */
#define TWHEEL_ARM_FLAGS	(TWHEEL_ARM_ABSTIME | TWHEEL_ARM_NOREPLACE)

/**
 * struct twheel_arm - one entry of TWHEEL_IOC_ARM, and of TWHEEL_IOC_DUMP output
 * @id: the id
 * @timeout_ns: relative timeout (0: the fd's default), or with
 *	TWHEEL_ARM_ABSTIME the absolute deadline.  Values above
 *	TWHEEL_DEADLINE_MAX are rejected (EINVAL, like a negative timespec for
 *	timerfd); now + timeout saturates at TWHEEL_DEADLINE_MAX.
 * @data: payload returned with the id's event (every id has room for it:
 *	ARM of an existing id never fails for want of memory)
 * @flags: TWHEEL_ARM_*
 * @reserved: must be 0
 */
struct twheel_arm {
	__u64 id;
	__u64 timeout_ns;
	__u64 data;
	__u32 flags;
	__u32 reserved;
};

/**
 * struct twheel_batch - argument of TWHEEL_IOC_ARM and TWHEEL_IOC_CANCEL
 * @ptr: user pointer to struct twheel_arm[@count] (ARM) or __u64[@count] (CANCEL)
 * @count: number of entries
 * @done: out: ARM: entries that took effect (on error, the index of the
 *	failing entry; a signal ends a long ARM with EINTR there); CANCEL: ids
 *	that were removed (absent ids are skipped; only a fatal signal ends
 *	a CANCEL, as this count cannot say where to resume)
 * @flags: must be 0
 * @reserved: must be 0
 */
struct twheel_batch {
	__u64 ptr;
	__u64 count;
	__u64 done;
	__u32 flags;
	__u32 reserved[3];
};

/* struct twheel_query.state */
#define TWHEEL_STATE_ARMED	1
#define TWHEEL_STATE_EXPIRED	2

/**
 * struct twheel_query - argument of TWHEEL_IOC_QUERY
 * @id: in: the id
 * @deadline_ns: out: its absolute deadline
 * @data: out: its payload
 * @state: out: TWHEEL_STATE_ARMED or TWHEEL_STATE_EXPIRED (event queued)
 * @reserved: must be 0
 *
 * An absent id fails with ENOENT.
 */
struct twheel_query {
	__u64 id;
	__u64 deadline_ns;
	__u64 data;
	__u32 state;
	__u32 reserved;
};

/**
 * struct twheel_stats - per-fd counters (TWHEEL_IOC_GET_STATS)
 * @armed: ids currently armed
 * @pending: events queued, not yet read
 * @touches: ids touched through write()
 * @arms: entries applied by TWHEEL_IOC_ARM
 * @cancels: ids removed by TWHEEL_IOC_CANCEL
 * @expirations: ids that expired (events queued)
 * @delivered: events read
 * @timer_fires: hrtimer callbacks
 * @late_max_ns: largest expired_ns - deadline_ns of an id whose deadline
 *	passed while it was armed (the wheel's lateness: an id armed with a
 *	deadline already passed is queued at once and not counted)
 * @mem_bytes: kernel memory held by this fd
 * @discarded: queued events discarded by a touch, an ARM or a CANCEL
 * @reslots: ids moved between slots (cascades and lazy re-slots)
 * @runs: expiry batches, each a bounded hold of the wheel's lock in the
 *	call that found the expiry due (read, poll, write, an ioctl)
 * @hold_max_ns: longest time the wheel lock was held by an expiry batch
 * @work_runs: runs of the module's work item, which grows the index for
 *	a nowait writer, finishes a resize the calls left, and, while
 *	events are queued unread, runs the first 64 nodes of the expiry
 *	that falls due
 * @work_ns: time spent in those runs, in ns
 * @bpf_touches: ids touched by BPF programs (bpf_twheel_touch())
 * @bpf_absent: BPF touches of ids the wheel did not have (-ENOENT)
 * @reserved: zero
 *
 * Counters are monotonic for the life of the fd.
 */
struct twheel_stats {
	__u64 armed;
	__u64 pending;
	__u64 touches;
	__u64 arms;
	__u64 cancels;
	__u64 expirations;
	__u64 delivered;
	__u64 timer_fires;
	__u64 late_max_ns;
	__u64 mem_bytes;
	__u64 discarded;
	__u64 reslots;
	__u64 runs;
	__u64 hold_max_ns;
	__u64 work_runs;
	__u64 work_ns;
	__u64 bpf_touches;
	__u64 bpf_absent;
	__u64 reserved[2];
};

/**
 * struct twheel_dump - argument of TWHEEL_IOC_DUMP
 * @ptr: user pointer to struct twheel_arm[@count], filled with armed and
 *	expired ids, each with TWHEEL_ARM_ABSTIME and its absolute deadline
 * @count: room in @ptr, at least 1
 * @done: out: entries written; 0 at the end
 * @cursor: in/out: 0 to start, then the value returned by the previous call
 * @reserved: must be 0
 *
 * Ids present for the whole dump appear exactly once.  Feeding the entries
 * to TWHEEL_IOC_ARM on a new fd recreates the wheel.  Any @count makes
 * progress (EOVERFLOW in the one exception, see twheel(4)); every value
 * of @cursor is valid.
 */
struct twheel_dump {
	__u64 ptr;
	__u64 count;
	__u64 done;
	__u64 cursor;
	__u64 reserved[2];
};

/**
 * struct twheel_event - one record of read()
 * @id: the id that expired
 * @data: its payload
 * @deadline_ns: its deadline
 * @expired_ns: when it was queued; always >= @deadline_ns
 */
struct twheel_event {
	__u64 id;
	__u64 data;
	__u64 deadline_ns;
	__u64 expired_ns;
};

#define TWHEEL_IOC_MAGIC	0xD7

#define TWHEEL_IOC_SET_CONFIG	_IOW(TWHEEL_IOC_MAGIC, 0x00, struct twheel_config)
#define TWHEEL_IOC_GET_CONFIG	_IOR(TWHEEL_IOC_MAGIC, 0x01, struct twheel_config)
#define TWHEEL_IOC_ARM		_IOWR(TWHEEL_IOC_MAGIC, 0x02, struct twheel_batch)
#define TWHEEL_IOC_CANCEL	_IOWR(TWHEEL_IOC_MAGIC, 0x03, struct twheel_batch)
#define TWHEEL_IOC_QUERY	_IOWR(TWHEEL_IOC_MAGIC, 0x04, struct twheel_query)
#define TWHEEL_IOC_GET_STATS	_IOR(TWHEEL_IOC_MAGIC, 0x05, struct twheel_stats)
#define TWHEEL_IOC_DUMP		_IOWR(TWHEEL_IOC_MAGIC, 0x06, struct twheel_dump)
/*
 * Export the wheel to BPF programs: the handle that bpf_twheel_touch()
 * takes, not zero, unique for the boot, the same for every call on the
 * file; the export ends when its last reference is closed.  EOPNOTSUPP
 * when the module has no BTF the running kernel accepted.
 */
#define TWHEEL_IOC_BPF_HANDLE	_IOR(TWHEEL_IOC_MAGIC, 0x07, __u64)

#endif /* _UAPI_LINUX_TWHEEL_H */
