// SPDX-License-Identifier: GPL-2.0
/*
 * twheel under io_uring (Debian's liburing): IORING_OP_READ and
 * IORING_OP_WRITE on a blocking fd complete inline or through io_uring's
 * poll, never in an io-wq worker thread (counted in /proc/self/task), with
 * and without SQPOLL; every event once and none early.  Built for 64-bit
 * only: Debian has no i386 liburing without a foreign architecture.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <liburing.h>

#include <linux/twheel.h>

/* kselftest_harness.h (6.1) has unused parameters in its own macros. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#include "twheel_test.h"

/* Threads of this process named iou-wrk-*: io_uring's io-wq workers. */
static int iou_workers(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char path[300], comm[32] = "";
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strncmp(comm, "iou-wrk", 7))
			n++;
		fclose(f);
	}
	closedir(d);
	return n;
}

#define URING_BATCH	1024	/* ids per IORING_OP_WRITE */
#define URING_WRITES	64	/* 64K new ids: the index grows past inline */
#define URING_READS	16
#define URING_READ_TAG	(1ULL << 40)	/* user_data of reads: tag + buffer */

static void prep_read(struct io_uring *ring, int fd, struct twheel_event *ev,
		      unsigned int i)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_read(sqe, fd, ev + (size_t)i * URING_BATCH,
			   URING_BATCH * sizeof(*ev), 0);
	io_uring_sqe_set_data64(sqe, URING_READ_TAG + i);
}

/* Write @off.. of batch @w of @ids; user_data: w | off << 16. */
static void prep_write(struct io_uring *ring, int fd, const uint64_t *ids,
		       unsigned int w, unsigned int off)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	io_uring_prep_write(sqe, fd, ids + (size_t)w * URING_BATCH + off,
			    (URING_BATCH - off) * sizeof(*ids), 0);
	io_uring_sqe_set_data64(sqe, w | (uint64_t)off << 16);
}

/*
 * Reads waiting on an empty wheel, then 64 writes of 1024 new ids each on
 * a blocking fd (several SQEs per submit): every write completes whole and
 * inline (the index grows through the work while io_uring waits in poll),
 * every read through io_uring's poll, every event once and none early, and
 * no io-wq worker ever runs.
 */
static void uring_roundtrip(struct __test_metadata *_metadata, unsigned int flags)
{
	size_t n = (size_t)URING_BATCH * URING_WRITES;
	uint64_t *ids = seq_ids(n);
	struct twheel_event *ev = calloc(URING_READS * URING_BATCH, sizeof(*ev));
	unsigned char *seen = calloc(n + 1, 1);
	struct io_uring_params p = { .flags = flags, .sq_thread_idle = 2000 };
	unsigned int i, writes = 0, shorts = 0;
	struct io_uring ring;
	size_t got = 0;
	int fd, r;

	ASSERT_NE(NULL, ids);
	ASSERT_NE(NULL, ev);
	ASSERT_NE(NULL, seen);
	OPEN_OR_SKIP(fd, 0);
	ASSERT_EQ(0, set_timeout(fd, 300 * MS));
	ASSERT_EQ(0, set_max_ids(fd, n));
	r = io_uring_queue_init_params(128, &ring, &p);
	if (r == -EPERM || r == -ENOSYS)
		SKIP(return, "io_uring not available: %s", strerror(-r));
	ASSERT_EQ(0, r);

	/* reads first: they wait in io_uring's poll, not in a worker */
	for (i = 0; i < URING_READS; i++)
		prep_read(&ring, fd, ev, i);
	ASSERT_EQ(URING_READS, io_uring_submit(&ring));
	usleep(100000);
	EXPECT_EQ(0, iou_workers());

	for (i = 0; i < URING_WRITES; i++) {
		prep_write(&ring, fd, ids, i, 0);
		if (i % 8 == 7)
			ASSERT_LT(0, io_uring_submit(&ring));
	}

	/* the writes' results, and the events 300 ms later, as they come */
	while (writes < URING_WRITES || got < n) {
		struct io_uring_cqe *cqe;
		struct twheel_event *e;
		uint64_t tag;
		size_t k;

		ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
		tag = io_uring_cqe_get_data64(cqe);
		if (tag < URING_READ_TAG) {
			unsigned int w = tag & 0xffff, off = tag >> 16;
			int res = cqe->res;

			io_uring_cqe_seen(&ring, cqe);
			/* whole ids; a short count is legal: send the rest */
			ASSERT_LT(0, res) TH_LOG("write %u: %s", w, strerror(-res));
			ASSERT_EQ(0, res % (int)sizeof(*ids));
			off += res / sizeof(*ids);
			if (off < URING_BATCH) {
				shorts++;
				prep_write(&ring, fd, ids, w, off);
				ASSERT_LT(0, io_uring_submit(&ring));
			} else {
				writes++;
			}
			continue;
		}
		ASSERT_LT(0, cqe->res) TH_LOG("read: %s", strerror(-cqe->res));
		ASSERT_EQ(0, cqe->res % (int)sizeof(*ev));
		i = tag - URING_READ_TAG;
		ASSERT_GT(URING_READS, (int)i);
		e = ev + (size_t)i * URING_BATCH;
		for (k = 0; k < cqe->res / sizeof(*ev); k++) {
			ASSERT_LE(1U, e[k].id);
			ASSERT_GE(n, e[k].id);
			ASSERT_EQ(0, seen[e[k].id]);
			seen[e[k].id] = 1;
			ASSERT_LE(e[k].deadline_ns, e[k].expired_ns);
		}
		got += cqe->res / sizeof(*ev);
		io_uring_cqe_seen(&ring, cqe);
		if (got < n) {
			prep_read(&ring, fd, ev, i);
			ASSERT_LE(1, io_uring_submit(&ring));
		}
	}
	EXPECT_EQ(0, iou_workers());
	TH_LOG("%u short writes resubmitted", shorts);
	io_uring_queue_exit(&ring);
	close(fd);
	free(seen);
	free(ev);
	free(ids);
}

TEST(uring_no_workers)
{
	uring_roundtrip(_metadata, 0);
}

TEST(uring_sqpoll_no_workers)
{
	uring_roundtrip(_metadata, IORING_SETUP_SQPOLL);
}

TEST_HARNESS_MAIN
