// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF programs of twheel_bpf_test.c: XDP and TC programs that call the
 * module's kfunc bpf_twheel_touch(handle, id) with what the test wrote
 * into their globals and count its results, and an XDP program that does
 * the same work without the call: the baseline of the kfunc's cost.
 * Built with clang -target bpf into twheel_bpf.bpf.o, embedded in the test
 * by bpftool gen skeleton (twheel_bpf.skel.h).
 */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
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

char LICENSE[] SEC("license") = "GPL";
