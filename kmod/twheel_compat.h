/* SPDX-License-Identifier: GPL-2.0 */
/*
 * twheel is written to the newest kernel API (sid's linux-source, the
 * newest series the harness builds; scripts/lib/kernels.sh).  This header
 * carries the older kernels it still supports, Debian's 6.1 and 6.12: one
 * shim per API change, each naming the release and the upstream commit
 * that made it.  A shim goes when the last supported kernel before that
 * release leaves the list; nothing outside this file tests a version.
 */
#ifndef _TWHEEL_COMPAT_H
#define _TWHEEL_COMPAT_H

#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/version.h>
#include <linux/workqueue.h>

/*
 * 6.13, 908a1d775422 ("hrtimer: Introduce hrtimer_setup() to replace
 * hrtimer_init()"): the callback is set with the timer; 6.15, 9779489a31d7
 * ("hrtimers: Delete hrtimer_init()") removed the old way.  Needed by 6.1
 * and 6.12.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
static inline void
hrtimer_setup(struct hrtimer *timer,
	      enum hrtimer_restart (*function)(struct hrtimer *),
	      clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = function;
}
#endif

/*
 * 6.17, "workqueue: Add system_percpu_wq and system_dfl_wq": the unbound
 * system workqueue is system_dfl_wq, and by 7.2 system_unbound_wq is
 * flagged deprecated (a warning at the first work queued on it).  Debian's
 * 6.12 has system_dfl_wq from the stable series; where a kernel has both,
 * they are the same workqueue.  Needed by 6.1.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 17, 0)
#define system_dfl_wq		system_unbound_wq
#endif

/*
 * 6.9, "bpf: treewide: Annotate BPF kfuncs in BTF": a kfunc set is declared
 * with BTF_KFUNCS_START(), which flags it BTF_SET8_KFUNCS, and
 * register_btf_kfunc_id_set() refuses (-EINVAL) a set without the flag.
 * Needed by 6.1.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 9, 0)
#define BTF_KFUNCS_START(name)	BTF_SET8_START(name)
#define BTF_KFUNCS_END(name)	BTF_SET8_END(name)
#endif

/*
 * 6.7, "bpf: Add __bpf_kfunc_{start,end}_defs macros" and 6.3, "bpf: Add
 * __bpf_kfunc tag for marking kernel functions as kfuncs": a kfunc is
 * tagged (kept, not inlined) and defined between the two macros, which
 * silence -Wmissing-prototypes.  Needed by 6.1.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 7, 0)
#define __bpf_kfunc_start_defs()					\
	__diag_push();							\
	__diag_ignore_all("-Wmissing-prototypes",			\
			  "Global kfuncs as their definitions will be in BTF")
#define __bpf_kfunc_end_defs()	__diag_pop()
#endif
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
#define __bpf_kfunc		__used noinline
#endif

/*
 * "slab: Introduce kmalloc_obj() and family": an allocation named by the
 * object it is for, kzalloc_obj(*p, gfp), which the newest kernel's
 * checkpatch asks for.  Debian's 6.12 has it from the stable series, so
 * it is tested by name, not by version.  Needed by 6.1.
 */
#ifndef kzalloc_obj
#define kzalloc_obj(p, gfp)	kzalloc(sizeof(p), gfp)
#endif

/*
 * 6.6, "sysctl: Add size to register_sysctl": register_sysctl() takes the
 * table's size from ARRAY_SIZE(); since 6.11 ("sysctl: Remove check for
 * sentinel element in ctl_table arrays") an empty last entry is refused
 * ("procname is null").  Before 6.6 a table ends with that entry: a table
 * ends with TW_CTL_TABLE_END.  Needed by 6.1.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 6, 0)
#define TW_CTL_TABLE_END	{ }
#else
#define TW_CTL_TABLE_END
#endif

/*
 * PREEMPT_RT before 6.12 is Debian's out-of-tree RT patch set, whose
 * rt_spin_lock() and rt_spin_unlock() carry no sparse context annotation
 * (mainline's, since RT was merged in 6.12, do): sparse then sees every
 * lock wrapper as unbalanced, unless it is told.  Needed by 6.1-rt.
 */
#if IS_ENABLED(CONFIG_PREEMPT_RT) && LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#define tw_compat_rt_acquire(lock)	__acquire(lock)
#define tw_compat_rt_release(lock)	__release(lock)
#else
#define tw_compat_rt_acquire(lock)	do { } while (0)
#define tw_compat_rt_release(lock)	do { } while (0)
#endif

#endif /* _TWHEEL_COMPAT_H */
