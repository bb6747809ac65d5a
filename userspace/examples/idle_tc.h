/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What idle-reaper --tc and its TC program (idle_tc.bpf.c) agree on: a
 * connection's id, from its 4-tuple.  Included by both, so fixed-width
 * types only.
 */
#ifndef IDLE_TC_H
#define IDLE_TC_H

#include <linux/types.h>

/*
 * The id of the TCP connection from saddr:sport to the server's
 * daddr:dport, all in host byte order: (saddr << 32 | sport << 16 |
 * dport).  The server listens on one address, so daddr adds nothing:
 * among the connections to it, two with the same id would have the same
 * 4-tuple.  The server computes it from accept()'s peer address, the
 * program from each inbound segment's headers.
 */
static inline __u64 idle_conn_id(__u32 saddr, __u16 sport, __u16 dport)
{
	return (__u64)saddr << 32 | (__u64)sport << 16 | dport;
}

#endif /* IDLE_TC_H */
