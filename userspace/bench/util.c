// SPDX-License-Identifier: GPL-2.0
/*
 * twheel_bench helpers: clock resolution, ids, a hash map, CPU and memory
 * probes, percentiles and JSON-lines output (the clocks themselves and
 * splitmix64 are in ../common/util.h).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

FILE *out;
const char *json_tag;

uint64_t clock_res_ns(void)
{
	struct timespec ts;

	if (clock_getres(CLOCK_MONOTONIC, &ts))
		return 0;
	return timespec_ns(&ts);
}

int wait_loop(struct contender *c, uint64_t until, struct sink *s,
	      int (*look)(struct contender *c, uint64_t now, uint64_t until,
			  struct sink *s))
{
	bool once = false;
	int err = 0;

	/* at least one look, even when @until has passed already */
	while (!s->done && !err) {
		uint64_t now = mono_ns();

		if (now >= until && once)
			break;
		once = true;
		err = look(c, now, until, s);
	}
	return err;
}

void die(const char *fmt, ...)
{
	va_list ap;

	fflush(out);
	fprintf(stderr, "twheel_bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(2);
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (!p)
		die("out of memory (%zu x %zu bytes)", n, size);
	return p;
}

/* ---- ids ---------------------------------------------------------------- */

/*
 * id_of() is splitmix64's finalizer, a bijection of 64-bit values; its
 * inverse undoes each step.  Index i maps to a random-looking uid, and an
 * event's id maps back to the index without a table.
 */

static uint64_t inv_mul(uint64_t a)	/* a odd: a * inv_mul(a) == 1 mod 2^64 */
{
	uint64_t x = a;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

static uint64_t unxorshift(uint64_t y, unsigned int s)
{
	uint64_t x = y;
	unsigned int k;

	for (k = s; k < 64; k += s)
		x = y ^ (x >> s);
	return x;
}

uint64_t id_of(uint64_t index)
{
	return splitmix64_mix(index + 0x5eed);
}

uint64_t index_of(uint64_t id)
{
	static uint64_t i1, i2;
	uint64_t z;

	if (!i1) {
		i1 = inv_mul(SPLITMIX64_MUL1);
		i2 = inv_mul(SPLITMIX64_MUL2);
	}
	z = unxorshift(id, 31) * i2;
	z = unxorshift(z, 27) * i1;
	return unxorshift(z, 30) - 0x5eed;
}

uint64_t rng_next(struct rng *r)
{
	return splitmix64_mix(r->s += SPLITMIX64_GAMMA);
}

/* ---- hash map ----------------------------------------------------------- */

static uint64_t hmap_slot(const struct hmap *m, uint64_t key)
{
	/* ids are already mixed; a multiply keeps arbitrary ids spread too */
	return (key * 0x9e3779b97f4a7c15ULL) >> 20 & m->mask;
}

void hmap_init(struct hmap *m, uint64_t expect)
{
	uint64_t size = 64;

	while (size < expect + expect / 2)	/* load factor <= 2/3 */
		size <<= 1;
	m->keys = malloc(size * sizeof(*m->keys));
	m->vals = xcalloc(size, sizeof(*m->vals));
	if (!m->keys)
		die("out of memory (hash map of %" PRIu64 " slots)", size);
	memset(m->keys, 0xff, size * sizeof(*m->keys));
	m->mask = size - 1;
	m->nr = 0;
}

void hmap_free(struct hmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

uint64_t hmap_bytes(const struct hmap *m)
{
	return (m->mask + 1) * (sizeof(*m->keys) + sizeof(*m->vals));
}

uint64_t *hmap_find(const struct hmap *m, uint64_t key)
{
	uint64_t i = hmap_slot(m, key);

	for (;; i = (i + 1) & m->mask) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (m->keys[i] == HMAP_EMPTY)
			return NULL;
	}
}

static void hmap_grow(struct hmap *m)
{
	struct hmap n;
	uint64_t i;

	hmap_init(&n, (m->mask + 1) * 2 / 3 * 2);
	for (i = 0; i <= m->mask; i++) {
		if (m->keys[i] != HMAP_EMPTY) {
			int added;

			*hmap_upsert(&n, m->keys[i], &added) = m->vals[i];
		}
	}
	hmap_free(m);
	*m = n;
}

/* Remove the entry at @i, shifting the rest of its cluster back. */
void hmap_delete_at(struct hmap *m, uint64_t i)
{
	uint64_t j = i;

	for (;;) {
		uint64_t k;

		j = (j + 1) & m->mask;
		if (m->keys[j] == HMAP_EMPTY)
			break;
		k = hmap_slot(m, m->keys[j]);
		/* leave j where it is if its home lies cyclically in (i, j] */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->keys[i] = HMAP_EMPTY;
	m->vals[i] = 0;
	m->nr--;
}

bool hmap_delete(struct hmap *m, uint64_t key)
{
	uint64_t *v = hmap_find(m, key);

	if (!v)
		return false;
	hmap_delete_at(m, (uint64_t)(v - m->vals));
	return true;
}

uint64_t *hmap_upsert(struct hmap *m, uint64_t key, int *added)
{
	uint64_t i;

	if (key == HMAP_EMPTY)
		die("id %#" PRIx64 " is reserved by the hash map", key);
	for (i = hmap_slot(m, key);; i = (i + 1) & m->mask) {
		if (m->keys[i] == key) {
			*added = 0;
			return &m->vals[i];
		}
		if (m->keys[i] == HMAP_EMPTY)
			break;
	}
	if ((m->nr + 1) * 3 > (m->mask + 1) * 2) {
		hmap_grow(m);
		return hmap_upsert(m, key, added);
	}
	m->keys[i] = key;
	m->vals[i] = 0;
	m->nr++;
	*added = 1;
	return &m->vals[i];
}

/* ---- CPU ----------------------------------------------------------------- */

static uint64_t ticks_to_ns(uint64_t ticks)
{
	static long hz;

	if (!hz)
		hz = sysconf(_SC_CLK_TCK);
	return ticks * (NSEC_PER_SEC / (uint64_t)hz);
}

/*
 * Busy time of the whole machine: CPUs x wall time minus idle and iowait.
 * With the tick stopped in idle (NO_HZ) the kernel measures idle time at
 * idle entry and exit, so this is exact where the user/system split of
 * /proc/stat is only sampled per tick.  Compare two readings.
 */
uint64_t cpu_busy_ns(void)
{
	unsigned long long v[5] = { 0 };
	static long ncpu;
	uint64_t wall = mono_ns();
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!ncpu)
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4]);
	fclose(f);
	if (n < 5)
		return 0;
	return wall * (uint64_t)ncpu - ticks_to_ns(v[3] + v[4]);
}

uint64_t cpu_stat_self_ns(void)
{
	char buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	int fd = open("/proc/self/stat", O_RDONLY), i;
	ssize_t len;

	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = 0;
	p = strrchr(buf, ')');		/* comm may hold spaces */
	if (!p)
		return 0;
	/* after ")": state(3) ... utime is field 14, stime 15 */
	for (i = 3; i < 14 && p; i++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu %llu", &ut, &st) != 2)
		return 0;
	return ticks_to_ns(ut + st);
}

/* ---- memory -------------------------------------------------------------- */

static void shrink_caches(void)
{
	DIR *d = opendir("/sys/kernel/slab");
	struct dirent *e;
	char path[320];

	if (!d)
		return;
	while ((e = readdir(d))) {
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", e->d_name);
		fd = open(path, O_WRONLY);
		if (fd >= 0) {
			/* not every cache can shrink: ignore errors */
			ssize_t r = write(fd, "1", 1);

			(void)r;
			close(fd);
		}
	}
	closedir(d);
}

static uint64_t meminfo_kb(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	uint64_t v = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtoull(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v * 1024;
}

static uint64_t rss_bytes(void)
{
	unsigned long size = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

/*
 * Bytes this process holds from malloc(), chunk headers included: unlike
 * the RSS, blind to memory that an earlier contender of the same process
 * freed and a later one got back.
 */
static uint64_t heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();

	return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
}

void mem_snap(struct memsnap *m)
{
	char line[512];
	int cap = 512;
	FILE *f;

	memset(m, 0, sizeof(*m));
	/* before this snapshot's own allocations */
	m->heap_bytes = heap_bytes();
	m->cache = xcalloc((size_t)cap, sizeof(*m->cache));
	shrink_caches();
	f = fopen("/proc/slabinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char name[64];
		unsigned long long active, num, objsize, perslab, pages;
		unsigned long long lim, batch, shared, aslabs, nslabs;
		struct cache_snap *c;

		if (line[0] == '#' || !strncmp(line, "slabinfo", 8))
			continue;
		if (sscanf(line, "%63s %llu %llu %llu %llu %llu : tunables %llu %llu %llu : slabdata %llu %llu",
			   name, &active, &num, &objsize, &perslab, &pages,
			   &lim, &batch, &shared, &aslabs, &nslabs) != 11)
			continue;
		if (m->ncache == cap) {
			cap *= 2;
			m->cache = realloc(m->cache, (size_t)cap * sizeof(*m->cache));
			if (!m->cache)
				die("out of memory");
		}
		c = &m->cache[m->ncache++];
		snprintf(c->name, sizeof(c->name), "%s", name);
		c->bytes = (uint64_t)nslabs * pages * 4096;
		c->objs = active;
		c->objsize = objsize;
		m->slab_bytes += c->bytes;
	}
	if (f)
		fclose(f);
	m->meminfo_slab_bytes = meminfo_kb("Slab");
	m->vmalloc_bytes = meminfo_kb("VmallocUsed");
	m->memfree_bytes = meminfo_kb("MemFree");
	m->rss_bytes = rss_bytes();
	/* the chunk of m->cache: live until mem_snap_free(), after the next */
	m->own_heap_bytes = malloc_usable_size(m->cache) + sizeof(size_t);
}

void mem_snap_free(struct memsnap *m)
{
	free(m->cache);
	m->cache = NULL;
}

static int64_t sdiff(uint64_t b, uint64_t a)
{
	return (int64_t)(b - a);
}

/* This process's cgroup (v2 path, or "/" when none is set up). */
static void cgroup_path(char *buf, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "r");

	snprintf(buf, len, "/");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "0::", 3)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, len, "%.200s", line + 3);
		}
	if (f)
		fclose(f);
}

void mem_delta_json(FILE *f, const struct memsnap *a, const struct memsnap *b,
		    uint64_t n)
{
	char cg[256];
	struct top { const char *name; int64_t bytes; int64_t objs; uint64_t objsize; } top[6];
	int ntop = 0, i, j, k;
	double dn = n ? (double)n : 1;

	cgroup_path(cg, sizeof(cg));
	fprintf(f, ",\"cgroup\":\"%s\"", cg);
	fprintf(f, ",\"kernel_bytes_per_id\":%.2f,\"meminfo_slab_bytes_per_id\":%.2f,"
		"\"slab_bytes_per_id\":%.2f,\"vmalloc_bytes_per_id\":%.2f,"
		"\"memfree_bytes_per_id\":%.2f,\"rss_bytes_per_id\":%.2f,"
		"\"heap_bytes_per_id\":%.2f",
		(sdiff(b->meminfo_slab_bytes, a->meminfo_slab_bytes) +
		 sdiff(b->vmalloc_bytes, a->vmalloc_bytes)) / dn,
		sdiff(b->meminfo_slab_bytes, a->meminfo_slab_bytes) / dn,
		sdiff(b->slab_bytes, a->slab_bytes) / dn,
		sdiff(b->vmalloc_bytes, a->vmalloc_bytes) / dn,
		sdiff(a->memfree_bytes, b->memfree_bytes) / dn,
		sdiff(b->rss_bytes, a->rss_bytes) / dn,
		sdiff(b->heap_bytes, a->heap_bytes + a->own_heap_bytes) / dn);
	/* the caches that grew most (same order of caches in both snapshots) */
	for (i = 0; i < b->ncache; i++) {
		int64_t d = (int64_t)b->cache[i].bytes, o = (int64_t)b->cache[i].objs;

		for (j = 0; j < a->ncache; j++)
			if (!strcmp(a->cache[j].name, b->cache[i].name)) {
				d -= (int64_t)a->cache[j].bytes;
				o -= (int64_t)a->cache[j].objs;
				break;
			}
		if (d <= 0 || (ntop == 6 && d <= top[5].bytes))
			continue;
		for (k = ntop < 6 ? ntop++ : 5; k > 0 && top[k - 1].bytes < d; k--)
			top[k] = top[k - 1];
		top[k] = (struct top){ b->cache[i].name, d, o, b->cache[i].objsize };
	}
	fprintf(f, ",\"slab_top\":[");
	for (i = 0; i < ntop; i++)
		fprintf(f, "%s{\"cache\":\"%s\",\"bytes_per_id\":%.2f,\"objs_per_id\":%.3f,\"objsize\":%" PRIu64 "}",
			i ? "," : "", top[i].name, top[i].bytes / dn,
			top[i].objs / dn, top[i].objsize);
	fprintf(f, "]");
}

/* ---- lateness ------------------------------------------------------------ */

void lat_add(struct lat *l, int64_t x)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 4096;
		l->v = realloc(l->v, l->cap * sizeof(*l->v));
		if (!l->v)
			die("out of memory");
	}
	l->v[l->n++] = x;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

void lat_summary(struct lat *l, int64_t *p50, int64_t *p99, int64_t *max)
{
	*p50 = *p99 = *max = 0;
	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(*l->v), cmp_i64);
	*p50 = l->v[(l->n - 1) / 2];
	*p99 = l->v[(l->n - 1) * 99 / 100];
	*max = l->v[l->n - 1];
}

void lat_free(struct lat *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---- JSON lines ---------------------------------------------------------- */

void json_begin(const char *workload, const char *contender, uint64_t n, uint64_t rep)
{
	fprintf(out, "{\"workload\":\"%s\",\"contender\":\"%s\",\"n\":%" PRIu64
		",\"rep\":%" PRIu64, workload, contender, n, rep);
	if (json_tag)
		fprintf(out, ",\"tag\":\"%s\"", json_tag);
}

void json_u(const char *key, uint64_t v)
{
	fprintf(out, ",\"%s\":%" PRIu64, key, v);
}

void json_i(const char *key, int64_t v)
{
	fprintf(out, ",\"%s\":%" PRId64, key, v);
}

void json_f(const char *key, double v)
{
	fprintf(out, ",\"%s\":%.4g", key, v);
}

void json_s(const char *key, const char *v)
{
	fprintf(out, ",\"%s\":\"%s\"", key, v);
}

void json_raw(const char *key, const char *v)
{
	fprintf(out, ",\"%s\":%s", key, v);
}

void json_end(void)
{
	fprintf(out, "}\n");
	fflush(out);
}
