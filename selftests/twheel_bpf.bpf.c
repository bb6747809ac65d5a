// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF programs of twheel_bpf_test.c: XDP and TC programs that call the
 * module's kfunc bpf_twheel_touch(handle, id) with what the test wrote
 * into their globals and count its results, and an XDP program that does
 * the same work without the call: the baseline of the kfunc's cost; and
 * a TC program for lo's ingress that touches the id a UDP datagram carries,
 * in softirq context, on the CPU that sent it (softirq_race).
 * Built with clang -target bpf into twheel_bpf.bpf.o, embedded in the test
 * by bpftool gen skeleton (twheel_bpf.skel.h).
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define ENOENT	2
#define ESRCH	3

/* kmod/twheel_bpf.h: the module's kfunc, for XDP and SCHED_CLS programs */
extern int bpf_twheel_touch(__u64 handle, __u64 id) __ksym;

/* Set by the test before a run: ids id .. id + span - 1 in turn (span > 1). */
__u64 handle;
__u64 id;
__u64 span;

/* What the calls returned, counted. */
__u64 calls;
__u64 ok;
__u64 noent;
__u64 srch;
__u64 other;
__s64 last;

static __always_inline void count(int ret)
{
	__sync_fetch_and_add(&calls, 1);
	last = ret;
	if (ret == 0)
		__sync_fetch_and_add(&ok, 1);
	else if (ret == -ENOENT)
		__sync_fetch_and_add(&noent, 1);
	else if (ret == -ESRCH)
		__sync_fetch_and_add(&srch, 1);
	else
		__sync_fetch_and_add(&other, 1);
}

/* The id of this call: the test runs a program on one CPU at a time. */
static __always_inline __u64 next_id(void)
{
	return span > 1 ? id + calls % span : id;
}

SEC("xdp")
int xdp_touch(struct xdp_md *ctx)
{
	count(bpf_twheel_touch(handle, next_id()));
	return XDP_PASS;
}

/* xdp_touch without the call: what the kfunc adds is the difference. */
SEC("xdp")
int xdp_nop(struct xdp_md *ctx)
{
	count(next_id() == handle ? -ESRCH : 0);
	return XDP_PASS;
}

SEC("tc")
int tc_touch(struct __sk_buff *skb)
{
	count(bpf_twheel_touch(handle, next_id()));
	return TC_ACT_OK;
}

/* softirq_race: datagrams to race_port carry one id (host byte order). */
__u16 race_port;		/* network byte order */
__u64 race_ok, race_noent, race_other;
__u64 race_cpu[2];		/* datagrams touched on CPU 0 and CPU 1 */

SEC("tc")
int tc_udp_touch(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 v;
	int ret;

	if ((void *)(udp + 1) + sizeof(v) > end ||
	    eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5 ||
	    ip->protocol != IPPROTO_UDP || udp->dest != race_port)
		return TC_ACT_OK;
	__builtin_memcpy(&v, udp + 1, sizeof(v));
	ret = bpf_twheel_touch(handle, v);
	if (ret == 0)
		__sync_fetch_and_add(&race_ok, 1);
	else if (ret == -ENOENT)
		__sync_fetch_and_add(&race_noent, 1);
	else
		__sync_fetch_and_add(&race_other, 1);
	if (cpu < 2)
		__sync_fetch_and_add(&race_cpu[cpu], 1);
	return TC_ACT_SHOT;	/* nobody listens: drop it here */
}

char LICENSE[] SEC("license") = "GPL";
