// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF export (TWHEEL_IOC_BPF_HANDLE, bpf_twheel_touch()).  An exported
 * wheel is in tw_exports under its handle, which a counter hands out: not
 * zero, unique for the boot, never reused.  The kfunc finds the wheel
 * under RCU and touches it under its lock, like one id of a write(); the
 * export ends in release(), which takes the wheel out of tw_exports and
 * waits for an RCU grace period before anything is freed.  The kfuncs are
 * registered only if the module was built with BTF that the running
 * kernel accepted; otherwise the ioctl fails with EOPNOTSUPP.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/rcupdate.h>
#include <linux/uaccess.h>
#include <linux/xarray.h>

#include "twheel.h"
#include "twheel_bpf.h"
#include "twheel_trace.h"

static DEFINE_XARRAY(tw_exports);
static atomic64_t tw_handles = ATOMIC64_INIT(0);
static bool tw_bpf_ready;

/*
 * One touch from BPF: write()'s, for an id the wheel has.  A touch that
 * only moves an armed id's deadline later (TW_SET_LAZY: a heartbeat's)
 * changes no slot and queues no event: the hrtimer stays as it is and
 * nobody is woken, so the lock is dropped without tw_leave()'s re-arm.
 */
static int tw_bpf_touch(struct twheel *wh, u64 id)
{
	struct tw_ent *e;
	unsigned int did;
	u64 now, deadline;
	int ret = 0;

	tw_lock(wh);
	if (wh->closing) {
		ret = -ESRCH;
		goto out;
	}
	e = tw_index_find(&wh->idx, id);
	if (!e) {
		wh->bpf_absent++;
		ret = -ENOENT;
		goto out;
	}
	now = tw_now(wh);
	tw_wheel_catch_up(&wh->w, now);
	deadline = tw_deadline(now, wh->cfg.timeout_ns);
	did = tw_wheel_set(&wh->w, e, deadline, now);
	tw_count_placed(wh, e, did, deadline, now);
	wh->bpf_touches++;
	if (trace_twheel_touch_enabled())
		trace_twheel_touch(wh->wid, id, deadline, e->node->data);
	if (!(did & TW_SET_LAZY)) {
		tw_leave(wh);
		return 0;
	}
out:
	tw_unlock(wh);
	return ret;
}

__bpf_kfunc_start_defs();

/**
 * bpf_twheel_touch() - touch an id of an exported wheel, from XDP or TC
 * @handle: the wheel's handle, from TWHEEL_IOC_BPF_HANDLE
 * @id: the id
 *
 * write()'s touch for an ARMED or EXPIRED id: its deadline moves to now
 * plus the wheel's timeout, and an expired id's queued event is
 * discarded.  It never sleeps and never allocates; an absent id is not
 * created (the program passes its packet up, and the service arms it).
 *
 * Return: 0; -ENOENT if the wheel has no such id; -ESRCH if no exported
 * wheel has @handle (any more).
 */
__bpf_kfunc int bpf_twheel_touch(u64 handle, u64 id)
{
	struct twheel *wh;
	int ret = -ESRCH;

	if (handle > ULONG_MAX)
		return -ESRCH;
	rcu_read_lock();
	wh = xa_load(&tw_exports, (unsigned long)handle);
	if (wh)
		ret = tw_bpf_touch(wh, id);
	rcu_read_unlock();
	return ret;
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(tw_kfunc_ids)
BTF_ID_FLAGS(func, bpf_twheel_touch)
BTF_KFUNCS_END(tw_kfunc_ids)

static const struct btf_kfunc_id_set tw_kfunc_set = {
	.owner	= THIS_MODULE,
	.set	= &tw_kfunc_ids,
};

/**
 * tw_bpf_init() - register the kfunc for XDP and TC programs
 *
 * The module's BTF is needed: without it (a build without BTF, or BTF the
 * running kernel refused, as one built against another kernel is),
 * register_btf_kfunc_id_set() only warns, so the module checks first that
 * its BTF was loaded: the kernel then shows it as /sys/kernel/btf/twheel.
 */
void tw_bpf_init(void)
{
	struct path path;
	int err;

	if (!IS_ENABLED(CONFIG_DEBUG_INFO_BTF_MODULES) || BITS_PER_LONG < 64 ||
	    kern_path("/sys/kernel/btf/" KBUILD_MODNAME, 0, &path)) {
		pr_info("no module BTF: the BPF touch is unavailable (TWHEEL_IOC_BPF_HANDLE fails with EOPNOTSUPP)\n");
		return;
	}
	path_put(&path);
	err = register_btf_kfunc_id_set(BPF_PROG_TYPE_XDP, &tw_kfunc_set);
	if (!err)
		err = register_btf_kfunc_id_set(BPF_PROG_TYPE_SCHED_CLS,
						&tw_kfunc_set);
	if (err) {
		pr_warn("registering bpf_twheel_touch failed (%d): the BPF touch is unavailable\n",
			err);
		return;
	}
	tw_bpf_ready = true;
}

/**
 * tw_ioc_bpf_handle() - TWHEEL_IOC_BPF_HANDLE: export a wheel
 * @wh: the wheel, exported once: every call returns the same handle
 * @arg: where the handle goes, in user memory
 *
 * Return: 0; -EOPNOTSUPP without the kfunc (tw_bpf_init()), -ENOMEM,
 * -EFAULT.
 */
int tw_ioc_bpf_handle(struct twheel *wh, u64 __user *arg)
{
	u64 h = READ_ONCE(wh->handle);
	int err;

	if (!tw_bpf_ready)
		return -EOPNOTSUPP;
	if (!h) {
		h = atomic64_inc_return(&tw_handles);
		err = xa_insert(&tw_exports, (unsigned long)h, wh,
				GFP_KERNEL_ACCOUNT);
		if (err)
			return err;
		/* another thread exported it first: keep its handle */
		if (cmpxchg(&wh->handle, 0, h)) {
			xa_erase(&tw_exports, (unsigned long)h);
			h = READ_ONCE(wh->handle);
		}
	}
	return put_user(h, arg);
}

/**
 * tw_bpf_unexport() - end a wheel's export, if it has one
 * @wh: the wheel, closing
 *
 * No kfunc can reach the wheel once this returns.
 */
void tw_bpf_unexport(struct twheel *wh)
{
	if (!wh->handle)
		return;
	xa_erase(&tw_exports, (unsigned long)wh->handle);
	synchronize_rcu();
}
