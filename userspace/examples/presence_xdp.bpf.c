// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * presence --xdp: the heartbeats never reach user space.
 *
 * An XDP program on the service's interface.  A heartbeat is a UDP/IPv4
 * datagram to the service's port whose payload is one user id, a
 * big-endian u64 (bit 63: the heartbeat carries activity).  For a user the
 * service knows, the program touches the id on the "offline" wheel (and on
 * the "away" wheel for activity) with the module's kfunc
 * bpf_twheel_touch(), notes the time of each touch for the service's
 * never-early check (stamps), and drops the packet.  Everything else goes
 * up the stack: an id the wheel does not have (-ENOENT: a login, a user
 * back after going offline or away) reaches the service's socket, which
 * arms it with write(); so does any packet that is not a heartbeat.
 *
 * With sink set (presence --xdp-sink, a baseline of the clients' cost) it
 * drops every heartbeat untouched.
 *
 * The service sets the handles, the port and the number of users before
 * loading (read-only data), and sizes the stamps to the number of users.
 * GPL-compatible: kfuncs are for GPL-compatible programs only.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "presence_xdp.h"

#define ENOENT		2
#define IP_OFFSETS	0x3fff	/* MF and the fragment offset */

/* kmod/twheel_bpf.h: the module's kfunc, for XDP and SCHED_CLS programs */
extern int bpf_twheel_touch(__u64 handle, __u64 id) __ksym;

const volatile __u64 off_handle;	/* TWHEEL_IOC_BPF_HANDLE of each wheel */
const volatile __u64 away_handle;
const volatile __u64 users;		/* ids are 0 .. users - 1 */
const volatile __u16 port;		/* network byte order */
const volatile __u8 sink;		/* --xdp-sink: drop, touch nothing */

/* When the program last touched each user, on CLOCK_MONOTONIC. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct presence_stamp);
	__uint(max_entries, 1);		/* the service sets users */
} stamps SEC(".maps");

/* What became of the packets (struct presence_xdp_counts). */
__u64 dropped, absent, away_absent, errors, other;

static __always_inline void count(__u64 *c)
{
	__sync_fetch_and_add(c, 1);
}

/* A user's heartbeat: touch the wheels, drop it if both took it. */
static __always_inline int heartbeat(__u64 msg)
{
	__u64 id = msg & ~PRESENCE_ACT, t;
	struct presence_stamp *s;
	__u32 key = (__u32)id;
	int ret;

	if (id >= users)
		return XDP_PASS;	/* the service counts it as a bad id */
	s = bpf_map_lookup_elem(&stamps, &key);
	if (!s)
		return XDP_PASS;
	t = bpf_ktime_get_ns();
	ret = bpf_twheel_touch(off_handle, id);
	if (ret) {
		count(ret == -ENOENT ? &absent : &errors);
		return XDP_PASS;
	}
	s->off = t;
	if (msg & PRESENCE_ACT) {
		ret = bpf_twheel_touch(away_handle, id);
		if (ret) {
			count(ret == -ENOENT ? &away_absent : &errors);
			return XDP_PASS;
		}
		s->away = t;
	}
	count(&dropped);
	return XDP_DROP;
}

SEC("xdp")
int presence_xdp(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	__u64 msg;

	if ((void *)(udp + 1) + sizeof(msg) > end ||
	    eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP || (ip->frag_off & bpf_htons(IP_OFFSETS)) ||
	    udp->dest != port || udp->len != bpf_htons(sizeof(*udp) + sizeof(msg))) {
		count(&other);
		return XDP_PASS;
	}
	if (sink) {
		count(&dropped);
		return XDP_DROP;
	}
	__builtin_memcpy(&msg, udp + 1, sizeof(msg));
	return heartbeat(bpf_be64_to_cpu(msg));
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
