// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libtwheel snapshots: twheel_save(), twheel_restore(),
 * twheel_snapshot_check().
 *
 * File format, version 1 (all integers little-endian):
 *
 *   offset size  field
 *        0    8  magic "TWHEELCK"
 *        8    4  version (1)
 *       12    4  flags (0; any other bit is refused)
 *       16    8  count: number of entries
 *       24    4  clockid of the wheel saved (information only)
 *       28    4  entry_size (24)
 *       32    8  saved_realtime_ns: CLOCK_REALTIME at save time
 *       40    8  tick_ns of the wheel saved (information only)
 *       48    8  timeout_ns of the wheel saved (information only)
 *       56    4  entries_crc: CRC-32 of the count * entry_size entry bytes
 *       60    4  header_crc: CRC-32 of bytes 0..59
 *       64       count entries of { u64 id, u64 deadline_realtime_ns,
 *                u64 data }, sorted by deadline (then id)
 *
 * CRC-32 is the IEEE 802.3 one (reflected polynomial 0xEDB88320, initial
 * value and final xor 0xFFFFFFFF), as computed by zlib's crc32() — which
 * lets the Python module use binascii.crc32().  The file is exactly
 * 64 + count * 24 bytes; anything else is refused.
 *
 * Deadlines are stored against CLOCK_REALTIME so that a snapshot survives a
 * reboot (the wheel's CLOCK_MONOTONIC/CLOCK_BOOTTIME restart at 0): at save
 * time, deadline_rt = deadline - now_wheel + now_realtime (one pair of clock
 * readings for the whole file, saturating at 0 and TWHEEL_DEADLINE_MAX); at
 * restore time, deadline = deadline_rt - now_realtime + now_wheel, and an id
 * whose deadline has passed is armed at now_wheel, so it expires at once.
 * TWHEEL_DEADLINE_MAX ("never", what a conversion saturates to) is kept as
 * TWHEEL_DEADLINE_MAX both ways.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "twheel.h"

#define SNAP_MAGIC	"TWHEELCK"
#define SNAP_HDR_SIZE	64
#define SNAP_ENTRY_SIZE	24
#define ARM_BATCH	256
#define DEADLINE_MAX	((uint64_t)TWHEEL_DEADLINE_MAX)

struct snap_entry {
	uint64_t id;
	uint64_t deadline;	/* CLOCK_REALTIME ns */
	uint64_t data;
};

/* ------------------------------------------------------------ CRC-32 */

struct crc32_table {
	uint32_t t[256];
};

static void crc32_init(struct crc32_table *tab)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0xEDB88320U : c >> 1;
		tab->t[i] = c;
	}
}

/* Continue a CRC: start with crc = 0, feed the previous result back. */
static uint32_t crc32_update(const struct crc32_table *tab, uint32_t crc,
			     const void *buf, size_t len)
{
	const unsigned char *p = buf;

	crc = ~crc;
	while (len--)
		crc = tab->t[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* ---------------------------------------------------- little-endian */

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* ------------------------------------------------------------ clocks */

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

/*
 * One reading of the wheel's clock and of CLOCK_REALTIME taken together:
 * the wheel's clock is read on both sides of the realtime reading and the
 * midpoint is used.
 */
static int clock_pair(clockid_t wclk, uint64_t *now_wheel, uint64_t *now_rt)
{
	struct timespec a, r, b;
	uint64_t wa, wb;

	if (clock_gettime(wclk, &a) < 0 || clock_gettime(CLOCK_REALTIME, &r) < 0 ||
	    clock_gettime(wclk, &b) < 0)
		return errno > 0 ? -errno : -EINVAL;
	wa = ts_ns(&a);
	wb = ts_ns(&b);
	*now_wheel = wa + (wb - wa) / 2;
	*now_rt = ts_ns(&r);
	return 0;
}

/*
 * deadline on clock A -> the same instant on clock B, given nowA/nowB.
 * TWHEEL_DEADLINE_MAX means "never" on every clock and is kept as is (and
 * what saturates becomes "never").
 */
static uint64_t convert(uint64_t deadline, uint64_t now_a, uint64_t now_b)
{
	if (deadline >= DEADLINE_MAX)
		return DEADLINE_MAX;
	if (deadline >= now_a) {
		uint64_t rem = deadline - now_a;

		return rem > DEADLINE_MAX - now_b ? DEADLINE_MAX : now_b + rem;
	}
	return now_a - deadline > now_b ? 0 : now_b - (now_a - deadline);
}

/* ------------------------------------------------------------- save */

struct collect {
	struct twheel_arm *v;
	size_t n, cap;
};

static int collect_cb(const struct twheel_arm *e, size_t n, void *arg)
{
	struct collect *c = arg;

	if (n > c->cap - c->n) {
		size_t cap = c->cap ? c->cap : 1024;
		struct twheel_arm *v;

		while (cap - c->n < n) {
			if (cap > SIZE_MAX / 2 / sizeof(*v))
				return -ENOMEM;
			cap *= 2;
		}
		v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	memcpy(c->v + c->n, e, n * sizeof(*e));
	c->n += n;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct snap_entry *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int cmp_deadline(const void *a, const void *b)
{
	const struct snap_entry *x = a, *y = b;

	if (x->deadline != y->deadline)
		return (x->deadline > y->deadline) - (x->deadline < y->deadline);
	return cmp_id(a, b);
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t r = write(fd, p, len);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		p += r;
		len -= (size_t)r;
	}
	return 0;
}

/* Write @buf to @path atomically: temp file, fsync, rename, fsync dir. */
static int write_atomic(const char *path, const unsigned char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dlen = slash ? (size_t)(slash - path) : 0;
	char *tmp, *dir;
	int fd, dfd, err, saved;

	if (!*base)
		return -EISDIR;
	tmp = malloc(strlen(path) + 16);
	dir = malloc(dlen + 2);
	if (!tmp || !dir) {
		free(tmp);
		free(dir);
		return -ENOMEM;
	}
	if (slash) {
		memcpy(dir, path, dlen);
		dir[dlen] = 0;
		if (!dlen)
			strcpy(dir, "/");
	} else {
		strcpy(dir, ".");
	}
	/* "<dir>/.<base>.XXXXXX" in the target's directory */
	memcpy(tmp, path, (size_t)(base - path));
	tmp[base - path] = 0;
	strcat(tmp, ".");
	strcat(tmp, base);
	strcat(tmp, ".XXXXXX");

	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	err = write_all(fd, buf, len);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		saved = errno;
		unlink(tmp);
		errno = saved;
		goto out;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		err = -errno;
		goto out;
	}
	/* Some filesystems cannot fsync a directory: that is not an error. */
	if (fsync(dfd) < 0 && errno != EINVAL && errno != EROFS &&
	    errno != ENOTSUP)
		err = -errno;
	close(dfd);
out:
	free(tmp);
	free(dir);
	return err;
}

int twheel_save(int fd, const char *path)
{
	struct collect c = { 0 };
	struct twheel_config cfg;
	struct crc32_table tab;
	struct snap_entry *e = NULL;
	unsigned char *buf = NULL, *p;
	uint64_t now_w, now_rt;
	size_t n = 0, i, len;
	uint32_t crc;
	int err;

	if (!path || !*path)
		return -EINVAL;
	err = twheel_get_config(fd, &cfg);
	if (err)
		return err;
	err = twheel_dump(fd, collect_cb, &c);
	if (err)
		goto out;
	err = clock_pair((clockid_t)cfg.clockid, &now_w, &now_rt);
	if (err)
		goto out;

	e = malloc((c.n ? c.n : 1) * sizeof(*e));
	if (!e) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < c.n; i++) {
		e[i].id = c.v[i].id;
		e[i].data = c.v[i].data;
		e[i].deadline = convert(c.v[i].timeout_ns, now_w, now_rt);
	}
	/* An id re-added during the dump may show up twice: keep one. */
	qsort(e, c.n, sizeof(*e), cmp_id);
	for (i = 0; i < c.n; i++) {
		if (n && e[n - 1].id == e[i].id)
			e[n - 1] = e[i];
		else
			e[n++] = e[i];
	}
	qsort(e, n, sizeof(*e), cmp_deadline);

	len = SNAP_HDR_SIZE + n * SNAP_ENTRY_SIZE;
	buf = malloc(len);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	p = buf + SNAP_HDR_SIZE;
	for (i = 0; i < n; i++, p += SNAP_ENTRY_SIZE) {
		put64(p, e[i].id);
		put64(p + 8, e[i].deadline);
		put64(p + 16, e[i].data);
	}
	crc32_init(&tab);
	memcpy(buf, SNAP_MAGIC, 8);
	put32(buf + 8, TWHEEL_SNAPSHOT_VERSION);
	put32(buf + 12, 0);
	put64(buf + 16, n);
	put32(buf + 24, cfg.clockid);
	put32(buf + 28, SNAP_ENTRY_SIZE);
	put64(buf + 32, now_rt);
	put64(buf + 40, cfg.tick_ns);
	put64(buf + 48, cfg.timeout_ns);
	put32(buf + 56, crc32_update(&tab, 0, buf + SNAP_HDR_SIZE,
				     n * SNAP_ENTRY_SIZE));
	crc = crc32_update(&tab, 0, buf, SNAP_HDR_SIZE - 4);
	put32(buf + 60, crc);
	err = write_atomic(path, buf, len);
out:
	free(buf);
	free(e);
	free(c.v);
	return err;
}

/* ---------------------------------------------------- load and check */

struct snap {
	unsigned char *buf;
	size_t len;
	struct twheel_snapshot_info info;
};

static int bad(struct snap *s, const char *why)
{
	s->info.problem = why;
	return -EBADMSG;
}

/* Read the whole file and validate it; s->buf holds it on success. */
static int snap_load(const char *path, struct snap *s)
{
	struct crc32_table tab;
	struct stat st;
	const unsigned char *h, *p;
	size_t got = 0;
	uint64_t count, i;
	int fd, err = 0;

	memset(s, 0, sizeof(*s));
	if (!path || !*path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : bad(s, "not a regular file");
		goto fail;
	}
	if (st.st_size < SNAP_HDR_SIZE) {
		err = bad(s, st.st_size ? "truncated header" : "empty file");
		goto fail;
	}
	if ((uint64_t)st.st_size > SNAP_HDR_SIZE + TWHEEL_MAX_IDS_LIMIT * SNAP_ENTRY_SIZE ||
	    (uint64_t)st.st_size > SIZE_MAX) {
		err = bad(s, "file too large");
		goto fail;
	}
	s->len = (size_t)st.st_size;
	s->buf = malloc(s->len);
	if (!s->buf) {
		err = -ENOMEM;
		goto fail;
	}
	while (got < s->len) {
		ssize_t r = read(fd, s->buf + got, s->len - got);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto fail;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	fd = -1;
	if (got < SNAP_HDR_SIZE)
		return bad(s, "truncated header");
	s->len = got;	/* shrunk while we read it: checked below */

	h = s->buf;
	crc32_init(&tab);
	s->info.version = get32(h + 8);
	s->info.flags = get32(h + 12);
	s->info.count = count = get64(h + 16);
	s->info.clockid = get32(h + 24);
	s->info.entry_size = get32(h + 28);
	s->info.saved_realtime_ns = get64(h + 32);
	s->info.tick_ns = get64(h + 40);
	s->info.timeout_ns = get64(h + 48);
	s->info.entries_crc = get32(h + 56);
	s->info.header_crc = get32(h + 60);
	if (memcmp(h, SNAP_MAGIC, 8))
		return bad(s, "bad magic (not a twheel snapshot)");
	if (s->info.version != TWHEEL_SNAPSHOT_VERSION)
		return bad(s, "unsupported format version");
	if (crc32_update(&tab, 0, h, SNAP_HDR_SIZE - 4) != s->info.header_crc)
		return bad(s, "header checksum mismatch");
	if (s->info.flags)
		return bad(s, "unknown flags");
	if (s->info.entry_size != SNAP_ENTRY_SIZE)
		return bad(s, "unsupported entry size");
	if (count > TWHEEL_MAX_IDS_LIMIT)
		return bad(s, "entry count out of range");
	if (s->len < SNAP_HDR_SIZE + count * SNAP_ENTRY_SIZE)
		return bad(s, "truncated entries");
	if (s->len > SNAP_HDR_SIZE + count * SNAP_ENTRY_SIZE)
		return bad(s, "trailing data after the entries");
	if (crc32_update(&tab, 0, h + SNAP_HDR_SIZE, count * SNAP_ENTRY_SIZE) !=
	    s->info.entries_crc)
		return bad(s, "entries checksum mismatch");
	for (i = 0, p = h + SNAP_HDR_SIZE; i < count; i++, p += SNAP_ENTRY_SIZE) {
		uint64_t d = get64(p + 8);

		if (d > DEADLINE_MAX)
			return bad(s, "deadline out of range");
		if (!i || d < s->info.min_deadline_ns)
			s->info.min_deadline_ns = d;
		if (!i || d > s->info.max_deadline_ns)
			s->info.max_deadline_ns = d;
	}
	return 0;
fail:
	if (fd >= 0) {
		int saved = errno;

		close(fd);
		errno = saved;
	}
	return err;
}

int twheel_snapshot_check(const char *path, struct twheel_snapshot_info *info)
{
	struct snap s;
	int err = snap_load(path, &s);

	if (info)
		*info = s.info;
	free(s.buf);
	return err;
}

int twheel_restore(int fd, const char *path, size_t *restored)
{
	struct twheel_arm batch[ARM_BATCH];
	struct twheel_config cfg;
	uint64_t now_w, now_rt, i;
	const unsigned char *p;
	size_t total = 0;
	struct snap s;
	int err;

	if (restored)
		*restored = 0;
	/* Everything is validated before anything is armed. */
	err = twheel_get_config(fd, &cfg);
	if (err)
		return err;
	err = snap_load(path, &s);
	if (err)
		goto out;
	err = clock_pair((clockid_t)cfg.clockid, &now_w, &now_rt);
	if (err)
		goto out;

	memset(batch, 0, sizeof(batch));
	p = s.buf + SNAP_HDR_SIZE;
	for (i = 0; i < s.info.count;) {
		size_t n = 0, done = 0;

		while (n < ARM_BATCH && i < s.info.count) {
			uint64_t d = convert(get64(p + 8), now_rt, now_w);

			batch[n].id = get64(p);
			/* Already due: arm at now, it expires at once. */
			batch[n].timeout_ns = d < now_w ? now_w : d;
			batch[n].data = get64(p + 16);
			batch[n].flags = TWHEEL_ARM_ABSTIME;
			n++;
			i++;
			p += SNAP_ENTRY_SIZE;
		}
		err = twheel_arm(fd, batch, n, &done);
		total += done;
		if (err)
			break;
	}
	if (restored)
		*restored = total;
out:
	free(s.buf);
	return err;
}
