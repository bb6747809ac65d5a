// SPDX-License-Identifier: GPL-2.0
/*
 * What operators see of twheel: tracepoints under
 * /sys/kernel/tracing/events/twheel/, module-wide counters in
 * /sys/class/misc/twheel/{ids,fds}, per-user usage in debugfs, module
 * parameters and version in /sys/module/twheel/.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/twheel.h>

/* kselftest_harness.h (6.1) has unused parameters in its own macros */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "twheel_test.h"

#define TRACING "/sys/kernel/tracing"

static char *slurp(const char *path)
{
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap + 1);
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (len < cap && (n = read(fd, buf + len, cap - len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	return buf;
}

TEST(sysfs_counters)
{
	int a, b, i;
	long ids0, fds0;
	__u64 ids[100];

	OPEN_OR_SKIP(a, 0);
	ids0 = read_long("/sys/class/misc/twheel/ids");
	fds0 = read_long("/sys/class/misc/twheel/fds");
	ASSERT_LE(0, ids0);
	ASSERT_LE(1, fds0);
	b = open_wheel(0);
	ASSERT_LE(0, b);
	EXPECT_EQ(fds0 + 1, read_long("/sys/class/misc/twheel/fds"));
	for (i = 0; i < 100; i++)
		ids[i] = 5000 + i;
	ASSERT_EQ((ssize_t)sizeof(ids), write(a, ids, sizeof(ids)));
	ASSERT_EQ((ssize_t)(40 * sizeof(__u64)), write(b, ids, 40 * sizeof(__u64)));
	EXPECT_EQ(ids0 + 140, read_long("/sys/class/misc/twheel/ids"));
	close(b);
	EXPECT_EQ(ids0 + 100, read_long("/sys/class/misc/twheel/ids"));
	EXPECT_EQ(fds0, read_long("/sys/class/misc/twheel/fds"));
	close(a);
	EXPECT_EQ(ids0, read_long("/sys/class/misc/twheel/ids"));
	EXPECT_EQ(fds0 - 1, read_long("/sys/class/misc/twheel/fds"));
}

TEST(debugfs_users)
{
	char line[128], want[64];
	bool found = false;
	__u64 ids[7] = { 1, 2, 3, 4, 5, 6, 7 };
	FILE *f;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ((ssize_t)sizeof(ids), write(fd, ids, sizeof(ids)));
	f = fopen("/sys/kernel/debug/twheel/users", "r");
	if (!f) {
		close(fd);
		SKIP(return, "debugfs not mounted");
	}
	snprintf(want, sizeof(want), "%u ", getuid());
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, want, strlen(want))) {
			found = true;
			EXPECT_LE(7, atol(line + strlen(want)));
		}
	}
	fclose(f);
	EXPECT_TRUE(found);
	close(fd);
}

TEST(module_parameters_and_version)
{
	struct stat st;
	char *v;

	if (stat("/sys/module/twheel", &st))
		SKIP(return, "module not loaded");
	EXPECT_LE(1048576, read_long("/sys/module/twheel/parameters/max_user_ids"));
	EXPECT_LE(1048576, read_long("/sys/module/twheel/parameters/max_ids_total"));
	v = slurp("/sys/module/twheel/version");
	ASSERT_NE(NULL, v);
	EXPECT_NE(0, v[0]);
	if (v)
		TH_LOG("version %s", v);
	free(v);
	/* the device's mode is the dev_mode parameter (default 0666) */
	ASSERT_EQ(0, stat("/dev/twheel", &st));
	EXPECT_EQ(read_long("/sys/module/twheel/parameters/dev_mode"),
		  (long)(st.st_mode & 0777));
	/* the limits' parameters are read-only after load: sysctls instead */
	ASSERT_EQ(0, stat("/sys/module/twheel/parameters/max_user_ids", &st));
	EXPECT_EQ(0444U, st.st_mode & 0777);
	ASSERT_EQ(0, stat("/sys/module/twheel/parameters/max_ids_total", &st));
	EXPECT_EQ(0444U, st.st_mode & 0777);
}

#define SYSCTL_DIR	"/proc/sys/fs/twheel/"

/* Write @val to sysctl @name: 0 or -errno (of the write or the close). */
static int sysctl_write(const char *name, const char *val)
{
	char path[128];
	int fd, err = 0;

	snprintf(path, sizeof(path), SYSCTL_DIR "%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) != (ssize_t)strlen(val))
		err = -errno;
	close(fd);
	return err;
}

/*
 * fs.twheel.max_user_ids and fs.twheel.max_ids_total: the module
 * parameters' values, range-checked on write (0, negative, past LONG_MAX
 * and junk are EINVAL and change nothing), and in force at once: a cap
 * lowered to 16 ids above what the module holds lets 16 new ids in and
 * refuses the 17th with ENOSPC.
 */
TEST(limits_are_sysctls)
{
	static const char *const names[] = { "max_user_ids", "max_ids_total" };
	static const char *const bad[] = {
		"0", "-1", "9223372036854775808", "18446744073709551615", "x",
	};
	uint64_t ids[17];
	char path[128], val[32];
	long old, held;
	ssize_t r;
	unsigned int i, k;
	int fd;

	OPEN_OR_SKIP(fd, 0);
	if (geteuid())
		SKIP(return, "writing sysctls needs root");
	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), SYSCTL_DIR "%s", names[k]);
		old = read_long(path);
		ASSERT_LE(1048576, old) TH_LOG("%s: %ld", path, old);
		snprintf(path, sizeof(path), "/sys/module/twheel/parameters/%s",
			 names[k]);
		EXPECT_EQ(old, read_long(path));
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			EXPECT_EQ(-EINVAL, sysctl_write(names[k], bad[i]))
				TH_LOG("%s <- '%s'", names[k], bad[i]);
			snprintf(path, sizeof(path), SYSCTL_DIR "%s", names[k]);
			EXPECT_EQ(old, read_long(path));
		}
		/* 16 ids above what every fd holds now (this test's user's too) */
		held = sysfs_long("ids");
		ASSERT_LE(0, held);
		snprintf(val, sizeof(val), "%ld", held + 16);
		ASSERT_EQ(0, sysctl_write(names[k], val));
		snprintf(path, sizeof(path), SYSCTL_DIR "%s", names[k]);
		EXPECT_EQ(held + 16, read_long(path));
		for (i = 0; i < 17; i++)
			ids[i] = (uint64_t)k << 32 | i;
		r = write(fd, ids, sizeof(ids));
		EXPECT_EQ(16 * 8, r);
		r = write(fd, &ids[16], 8);
		EXPECT_EQ(-1, r);
		EXPECT_EQ(ENOSPC, errno);
		snprintf(val, sizeof(val), "%ld", old);
		ASSERT_EQ(0, sysctl_write(names[k], val));
		/* room again */
		EXPECT_EQ(8, write(fd, &ids[16], 8));
		ASSERT_EQ(0, cancel_n(fd, ids, 17, NULL));
	}
	close(fd);
}

/* wheel_id of fdinfo, 0 if absent */
static unsigned long long fdinfo_wheel_id(int fd)
{
	unsigned long long id = 0;
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "wheel_id: %llu", &id) == 1)
			break;
	fclose(f);
	return id;
}

TEST(tracepoints)
{
	static const char *const events[] = {
		"twheel_touch", "twheel_arm", "twheel_cancel", "twheel_expire",
		"twheel_tick",
	};
	struct twheel_event ev[4];
	struct twheel_batch b;
	struct twheel_arm e;
	__u64 ids[3] = { 71, 72, 73 }, gone = 72;
	struct stat st;
	unsigned int i;
	char *trace, want[64];
	int fd;

	OPEN_OR_SKIP(fd, 0);
	if (stat(TRACING "/events", &st))
		mount("tracefs", TRACING, "tracefs", 0, NULL);
	if (stat(TRACING "/events/twheel", &st)) {
		close(fd);
		SKIP(return, "no tracefs events/twheel");
	}
	ASSERT_EQ(0, write_str(TRACING "/tracing_on", "0"));
	ASSERT_EQ(0, write_str(TRACING "/trace", ""));
	ASSERT_EQ(0, write_str(TRACING "/events/twheel/enable", "1"));
	ASSERT_EQ(0, write_str(TRACING "/tracing_on", "1"));

	ASSERT_EQ((ssize_t)sizeof(ids), write(fd, ids, sizeof(ids)));
	b = (struct twheel_batch){ .ptr = (__u64)(unsigned long)&gone, .count = 1 };
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_CANCEL, &b));
	ASSERT_EQ(0, arm_past(fd, 99, 4242));
	ASSERT_EQ((ssize_t)sizeof(ev[0]), read(fd, ev, sizeof(ev)));
	/* a wheel expiry, so that the work runs and traces a tick */
	e = (struct twheel_arm){ .id = 100, .timeout_ns = 2000000 };
	b = (struct twheel_batch){ .ptr = (__u64)(unsigned long)&e, .count = 1 };
	ASSERT_EQ(0, ioctl(fd, TWHEEL_IOC_ARM, &b));
	ASSERT_EQ((ssize_t)sizeof(ev[0]), read(fd, ev, sizeof(ev)));
	EXPECT_EQ(100ULL, ev[0].id);

	ASSERT_EQ(0, write_str(TRACING "/tracing_on", "0"));
	ASSERT_EQ(0, write_str(TRACING "/events/twheel/enable", "0"));
	trace = slurp(TRACING "/trace");
	ASSERT_NE(NULL, trace);
	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		EXPECT_NE(NULL, strstr(trace, events[i])) {
			TH_LOG("no %s in trace", events[i]);
		}
	}
	EXPECT_NE(NULL, strstr(trace, "id=71 ")) TH_LOG("touch of 71 not traced");
	EXPECT_NE(NULL, strstr(trace, "id=99 ")) TH_LOG("arm of 99 not traced");
	EXPECT_NE(NULL, strstr(trace, "data=4242")) TH_LOG("data not traced");
	/* the wheel as fdinfo names it, not as a kernel pointer */
	snprintf(want, sizeof(want), "wheel=%llu id=71 ", fdinfo_wheel_id(fd));
	EXPECT_NE(NULL, strstr(trace, want)) TH_LOG("no \"%s\" in trace", want);
	free(trace);
	close(fd);
}

TEST_HARNESS_MAIN
