// SPDX-License-Identifier: GPL-2.0
/*
 * The limits across fds: the ids one user may hold across all its twheel
 * fds (max_user_ids), and the ids all fds hold together (max_ids_total).
 * They are sysctls, fs.twheel.max_user_ids and fs.twheel.max_ids_total
 * (/proc/sys/fs/twheel/), as epoll's and inotify's are: written at run
 * time, range-checked (tw_limit_min to tw_limit_max: 0 is no longer a
 * value, it meant "the default" at load but "no id" when written later).
 * The module parameters of the same names only set them at load (0 or
 * absent: the default); after it they are read-only and show the value in
 * force.  A wheel's own cap is its max_ids (TWHEEL_IOC_SET_CONFIG).
 */
#include <linux/atomic.h>
#include <linux/cred.h>
#include <linux/debugfs.h>
#include <linux/hashtable.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sysctl.h>

#include "twheel.h"

static unsigned long max_user_ids;
module_param(max_user_ids, ulong, 0444);
MODULE_PARM_DESC(max_user_ids,
		 "Most ids one user may hold across all its twheel fds, at load (default: 10% of RAM at 64 B per id, at least 1048576); then sysctl fs.twheel.max_user_ids");

static unsigned long max_ids_total;
module_param(max_ids_total, ulong, 0444);
MODULE_PARM_DESC(max_ids_total,
		 "Most ids held by all twheel fds together, at load (default: 25% of RAM at 64 B per id, at least 1048576); then sysctl fs.twheel.max_ids_total");

static unsigned long tw_limit_min = 1;
static unsigned long tw_limit_max = LONG_MAX;	/* the counts are atomic_long_t */

static struct ctl_table tw_sysctls[] = {
	{
		.procname	= "max_user_ids",
		.data		= &max_user_ids,
		.maxlen		= sizeof(max_user_ids),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &tw_limit_min,
		.extra2		= &tw_limit_max,
	},
	{
		.procname	= "max_ids_total",
		.data		= &max_ids_total,
		.maxlen		= sizeof(max_ids_total),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &tw_limit_min,
		.extra2		= &tw_limit_max,
	},
	TW_CTL_TABLE_END
};

static struct ctl_table_header *tw_sysctl_header;

/* The ids all wheels hold: /sys/class/misc/twheel/ids */
atomic_long_t tw_total_ids = ATOMIC_LONG_INIT(0);

/* Per-user id counts, for max_user_ids. */
struct tw_user {
	struct hlist_node node;
	kuid_t uid;
	refcount_t ref;
	atomic_long_t ids;
};

static DEFINE_HASHTABLE(tw_users, 6);
static DEFINE_SPINLOCK(tw_users_lock);

/**
 * tw_user_get() - the id count of a user, for a new wheel
 * @uid: the user
 *
 * Return: the user's entry, with a reference, or NULL for want of memory.
 */
struct tw_user *tw_user_get(kuid_t uid)
{
	struct tw_user *u, *new = NULL;

again:
	spin_lock(&tw_users_lock);
	hash_for_each_possible(tw_users, u, node, __kuid_val(uid)) {
		if (uid_eq(u->uid, uid)) {
			refcount_inc(&u->ref);
			spin_unlock(&tw_users_lock);
			kfree(new);
			return u;
		}
	}
	if (new) {
		hash_add(tw_users, &new->node, __kuid_val(uid));
		spin_unlock(&tw_users_lock);
		return new;
	}
	spin_unlock(&tw_users_lock);
	new = kzalloc_obj(*new, GFP_KERNEL_ACCOUNT);
	if (!new)
		return NULL;
	new->uid = uid;
	refcount_set(&new->ref, 1);
	atomic_long_set(&new->ids, 0);
	goto again;
}

/**
 * tw_user_put() - a wheel lets go of its user's entry
 * @u: the entry, freed with its last reference
 */
void tw_user_put(struct tw_user *u)
{
	bool last;

	spin_lock(&tw_users_lock);
	last = refcount_dec_and_test(&u->ref);
	if (last)
		hash_del(&u->node);
	spin_unlock(&tw_users_lock);
	if (last)
		kfree(u);
}

/**
 * tw_charge() - count a new id against its user's cap and the global one
 * @wh: the wheel
 *
 * Return: 0, or -ENOSPC (nothing counted) if either cap is reached.
 */
int tw_charge(struct twheel *wh)
{
	if (atomic_long_inc_return(&wh->user->ids) > READ_ONCE(max_user_ids)) {
		atomic_long_dec(&wh->user->ids);
		return -ENOSPC;
	}
	if (atomic_long_inc_return(&tw_total_ids) > READ_ONCE(max_ids_total)) {
		tw_uncharge(wh, 1);
		return -ENOSPC;
	}
	return 0;
}

/**
 * tw_uncharge() - ids of a wheel are gone
 * @wh: the wheel
 * @n: how many
 */
void tw_uncharge(struct twheel *wh, long n)
{
	atomic_long_sub(n, &wh->user->ids);
	atomic_long_sub(n, &tw_total_ids);
}

/* Per-user usage against the cap: /sys/kernel/debug/twheel/users. */
static int tw_users_show(struct seq_file *m, void *v)
{
	struct tw_user *u;
	int bkt;

	seq_printf(m, "# uid ids max_user_ids=%lu\n", READ_ONCE(max_user_ids));
	spin_lock(&tw_users_lock);
	hash_for_each(tw_users, bkt, u, node)
		seq_printf(m, "%u %ld\n", from_kuid(&init_user_ns, u->uid),
			   atomic_long_read(&u->ids));
	spin_unlock(&tw_users_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(tw_users);

static struct dentry *tw_debugfs;

/**
 * tw_limits_init() - the caps at load, their sysctls and debugfs file
 *
 * Return: 0, or -ENOMEM.
 */
int tw_limits_init(void)
{
	unsigned long ram_ids = (totalram_pages() << PAGE_SHIFT) / 64;

	if (!max_user_ids)
		max_user_ids = max(ram_ids / 10, 1UL << 20);
	if (!max_ids_total)
		max_ids_total = max(ram_ids / 4, 1UL << 20);
	max_user_ids = min(max_user_ids, tw_limit_max);
	max_ids_total = min(max_ids_total, tw_limit_max);
	tw_sysctl_header = register_sysctl("fs/twheel", tw_sysctls);
	if (!tw_sysctl_header)
		return -ENOMEM;
	tw_debugfs = debugfs_create_dir("twheel", NULL);
	debugfs_create_file("users", 0400, tw_debugfs, NULL, &tw_users_fops);
	return 0;
}

/**
 * tw_limits_exit() - undo tw_limits_init()
 */
void tw_limits_exit(void)
{
	debugfs_remove_recursive(tw_debugfs);
	unregister_sysctl_table(tw_sysctl_header);
}
