/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What presence and its XDP program (presence_xdp.bpf.c) agree on: the
 * heartbeat's activity bit and the per-user stamps of the program's
 * touches.  Included by both, so fixed-width types only.
 */
#ifndef PRESENCE_XDP_H
#define PRESENCE_XDP_H

#include <linux/types.h>

/* Bit 63 of a heartbeat's user id: the heartbeat carries activity. */
#define PRESENCE_ACT	(1ULL << 63)

/* When the XDP program last touched a user on each wheel (CLOCK_MONOTONIC). */
struct presence_stamp {
	__u64 off;
	__u64 away;
};

#endif /* PRESENCE_XDP_H */
