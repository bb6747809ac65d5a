/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel's kfunc, for BPF programs on the receive path (XDP, TC): a BPF
 * program declares it as
 *
 *	extern int bpf_twheel_touch(__u64 handle, __u64 id) __ksym;
 *
 * and takes the handle from TWHEEL_IOC_BPF_HANDLE (see uapi/linux/twheel.h).
 */
#ifndef _TWHEEL_BPF_H
#define _TWHEEL_BPF_H

#include <linux/types.h>

int bpf_twheel_touch(u64 handle, u64 id);

#endif /* _TWHEEL_BPF_H */
