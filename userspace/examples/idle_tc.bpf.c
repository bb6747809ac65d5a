// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * idle-reaper --tc: the server touches nothing itself.
 *
 * A TC ingress program on the server's interface (lo: the server listens
 * on 127.0.0.1).  Every inbound TCP/IPv4 segment to the server's address
 * and port (data, a bare ACK, a FIN alike) touches its connection's id,
 * idle_conn_id() of its 4-tuple, on the server's wheel through the
 * module's kfunc bpf_twheel_touch(), and goes on up the stack: the program
 * never drops anything.  A segment of a connection the wheel does not
 * have (-ENOENT: the handshake, before the server's accept() armed the
 * id; a segment after the server closed it) is only counted.
 *
 * The server sets the handle, its address and its port before loading
 * (read-only data).  GPL-compatible: kfuncs are for GPL-compatible
 * programs only.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/tcp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "idle_tc.h"

#define ENOENT		2
#define IP_OFFSETS	0x3fff	/* MF and the fragment offset */

/* kmod/twheel_bpf.h: the module's kfunc, for XDP and SCHED_CLS programs */
extern int bpf_twheel_touch(__u64 handle, __u64 id) __ksym;

const volatile __u64 handle;	/* TWHEEL_IOC_BPF_HANDLE of the wheel */
const volatile __u32 addr;	/* the server's, network byte order */
const volatile __u16 port;	/* network byte order */

/* What became of the segments. */
__u64 touched, absent, errors, other;

static __always_inline void count(__u64 *c)
{
	__sync_fetch_and_add(c, 1);
}

SEC("tc")
int idle_tc(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct tcphdr *tcp = (void *)(ip + 1);
	int ret;

	if ((void *)(tcp + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->ihl != 5 || ip->protocol != IPPROTO_TCP ||
	    (ip->frag_off & bpf_htons(IP_OFFSETS)) || ip->daddr != addr ||
	    tcp->dest != port) {
		count(&other);
		return TC_ACT_OK;
	}
	ret = bpf_twheel_touch(handle, idle_conn_id(bpf_ntohl(ip->saddr),
						    bpf_ntohs(tcp->source),
						    bpf_ntohs(tcp->dest)));
	if (!ret)
		count(&touched);
	else
		count(ret == -ENOENT ? &absent : &errors);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
