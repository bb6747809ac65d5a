// SPDX-License-Identifier: GPL-2.0
/*
 * twheel: a hierarchical timing wheel behind /dev/twheel.  The module: its
 * misc device, the module-wide counters in sysfs, and load and unload.
 * What each file of the driver does, and the locking rules: twheel.h.
 */
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "twheel.h"

#define CREATE_TRACE_POINTS
#include "twheel_trace.h"

#ifndef TWHEEL_VERSION
#define TWHEEL_VERSION "0.1.0"
#endif

static_assert(TWHEEL_DEADLINE_MAX == KTIME_MAX);
static_assert(TWHEEL_DEADLINE_MAX / TWHEEL_TICK_MIN_NS + 1 < TW_TICKS_MAX);
static_assert(sizeof(struct tw_node) == 2 * sizeof(void *) + 16);
static_assert(sizeof(struct twheel_config) == 64);
static_assert(sizeof(struct twheel_arm) == 32);
static_assert(sizeof(struct twheel_batch) == 40);
static_assert(sizeof(struct twheel_query) == 32);
static_assert(sizeof(struct twheel_stats) == 160);
static_assert(sizeof(struct twheel_dump) == 48);
static_assert(sizeof(struct twheel_event) == 32);
/* the index takes every id a cap allows (64 bits: memory ends it on 32) */
static_assert(BITS_PER_LONG == 32 ||
	      (u64)TW_IDX_MAX * 9 >= TWHEEL_MAX_IDS_LIMIT * 10);

static ushort dev_mode = 0666;
module_param(dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode,
		 "Mode of /dev/twheel (default 0666: each fd is private and its memory is charged to the caller's memory cgroup and per-user cap)");

/* The open twheel fds: /sys/class/misc/twheel/fds */
atomic_t tw_fds = ATOMIC_INIT(0);

/* Module-wide counters: /sys/class/misc/twheel/{ids,fds}. */
static ssize_t ids_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%ld\n", atomic_long_read(&tw_total_ids));
}
static DEVICE_ATTR_RO(ids);

static ssize_t fds_show(struct device *dev, struct device_attribute *attr,
			char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&tw_fds));
}
static DEVICE_ATTR_RO(fds);

static struct attribute *tw_attrs[] = {
	&dev_attr_ids.attr,
	&dev_attr_fds.attr,
	NULL,
};
ATTRIBUTE_GROUPS(tw);

static struct miscdevice tw_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "twheel",
	.fops	= &tw_fops,
	.groups	= tw_groups,
};

static int __init tw_init(void)
{
	int err;

	tw_node_cache = kmem_cache_create("twheel_node", sizeof(struct tw_node),
					  0, SLAB_ACCOUNT, NULL);
	if (!tw_node_cache)
		return -ENOMEM;
	err = tw_limits_init();
	if (err)
		goto out_cache;
	tw_misc.mode = dev_mode;
	err = misc_register(&tw_misc);
	if (err)
		goto out_limits;
	tw_bpf_init();
	return 0;
out_limits:
	tw_limits_exit();
out_cache:
	kmem_cache_destroy(tw_node_cache);
	return err;
}

static void __exit tw_exit(void)
{
	misc_deregister(&tw_misc);
	tw_limits_exit();
	kmem_cache_destroy(tw_node_cache);
}

module_init(tw_init);
module_exit(tw_exit);
MODULE_LICENSE("GPL");
MODULE_AUTHOR("The twheel authors");
MODULE_DESCRIPTION("Hierarchical timing wheel for millions of timeouts behind /dev/twheel");
MODULE_VERSION(TWHEEL_VERSION);
