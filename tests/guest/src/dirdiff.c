// SPDX-License-Identifier: GPL-2.0
/*
 * dirdiff: differential directory-read tester.
 *
 * usage: dirdiff [-k KNOBFILE] [-v] DIR...
 *        dirdiff -c N
 *
 * Pass A makes every call with the knob at 0, pass B repeats exactly the
 * same calls with it at 1 (without -k, both passes run as the kernel is:
 * an A/A run, which shows the records are reproducible at all), and every
 * record must be identical: the return value, errno, and every byte of
 * what getdents64() returned (d_ino, d_off, d_reclen, d_type and the name
 * of each entry, and the padding it left unwritten), or the offset lseek()
 * returned.  The calls, per directory:
 *
 *   read    the whole directory by getdents64() into buffers of 1 byte to
 *           64 KiB (sizes smaller than an entry fail with EINVAL, as
 *           they must in both passes), with the position (lseek(fd, 0,
 *           SEEK_CUR), telldir()'s) after each call;
 *   seek    on one descriptor, a seek to every entry's d_off cookie (at
 *           most SEEK_MAX of them, evenly spread, and the last) and one
 *           getdents64() of 512 bytes from there: each seek away from
 *           where the last read ended frees the filesystem's cached state
 *           and rebuilds it (ext4's hashed readdir tree);
 *   resume  a read of half the directory in 4 KiB calls, a seek back to
 *           the cookie of its first quarter, and the rest in 32 KiB
 *           calls;
 *   bad     seeks to offsets no entry has (0x1, 0x7fffffff, a large and a
 *           negative one, SEEK_END) and a getdents64() after each.
 *
 * The directory must not change between the passes.  Output: one line per
 * differing record,
 *   MISMATCH dir=<escaped> op=<op> n=<index> A:ret=R,errno=E,sum=S B:...
 * then
 *   dirdiff: dirs=D entries=N same_doff=K records=R mismatches=M
 * (entries: of the 32 KiB read of pass A, . and .. included; same_doff:
 * those whose d_off is the entry before's, a hash collision on ext4).
 * Exit 0 iff M == 0, 1 on mismatch or setup error, 2 on usage error.
 *
 * -c N prints N names (or a few more) that come in groups of two or more
 * sharing ext4's legacy directory hash, which has no seed and no minor
 * hash (its minor hash is 0): in a directory made with hash_alg = legacy
 * each group is one node of ext4's readdir tree with the rest chained on
 * it, the collision chains the passes must walk alike.  The names are
 * ASCII, whose hash is the same under the signed and the unsigned variant.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

#define BUF_MAX		65536
#define SEEK_MAX	4000
#define SEEK_READ	512

struct rec {
	const char *op;
	long ret;
	int err;
	uint64_t sum;		/* FNV-1a of the bytes written */
};

static struct rec *recs;
static size_t nrecs, cap, cur;
/* Entries of pass A's 32 KiB reads whose d_off is the one before's. */
static long same_doff;
static int pass, verbose;
static long mismatches;
static const char *cur_dir;
static unsigned char buf[BUF_MAX];

static uint64_t fnv(const unsigned char *p, long n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (n-- > 0) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Pass A keeps the record; pass B compares it with A's at the same index. */
static void record(const char *op, long ret, int err, const unsigned char *p,
		   long n)
{
	struct rec r = { op, ret, ret < 0 ? err : 0, p && n > 0 ? fnv(p, n) : 0 };

	if (pass == 0) {
		if (nrecs == cap) {
			cap = cap ? cap * 2 : 4096;
			recs = realloc(recs, cap * sizeof(*recs));
			if (!recs) {
				perror("dirdiff: realloc");
				exit(1);
			}
		}
		recs[nrecs++] = r;
		return;
	}
	if (cur >= nrecs || strcmp(recs[cur].op, op) || recs[cur].ret != r.ret ||
	    recs[cur].err != r.err || recs[cur].sum != r.sum) {
		struct rec *a = cur < nrecs ? &recs[cur] : &r;

		mismatches++;
		printf("MISMATCH dir=");
		put_escaped(stdout, cur_dir);
		printf(" op=%s n=%zu A:ret=%ld,errno=%d,sum=%016llx B:ret=%ld,errno=%d,sum=%016llx\n",
		       op, cur, a->ret, a->err, (unsigned long long)a->sum, r.ret, r.err,
		       (unsigned long long)r.sum);
	}
	cur++;
}

/*
 * getdents64() into buf filled with one pattern first: the padding after
 * each name is not written by the kernel, so that what it holds is the
 * same in both passes only if it was the same before the call.
 */
static long getdents(int fd, void *p, size_t n)
{
	memset(p, 0xa5, n);
	return syscall(SYS_getdents64, fd, p, n);
}

static long pos(int fd)
{
	return (long)lseek(fd, 0, SEEK_CUR);
}

/* The position after a call, as telldir() would see it. */
static void record_tell(int fd)
{
	long t = pos(fd);

	record("tell", t, errno, NULL, 0);
}

/* One getdents64() of @size bytes, recorded; its return. */
static long read_rec(int fd, size_t size)
{
	long r = getdents(fd, buf, size);

	record("read", r, errno, buf, r);
	record_tell(fd);
	return r;
}

/* How many entries getdents64() put in the first @r bytes of buf. */
static long count(long r)
{
	long off, n = 0;

	for (off = 0; off < r; n++)
		off += *(unsigned short *)(buf + off + 16);
	return n;
}

static int open_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0) {
		fprintf(stderr, "dirdiff: %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	return fd;
}

/* The whole directory in calls of @size bytes; the number of entries. */
static long read_all(const char *dir, size_t size, long **cookies)
{
	long r, n = 0, off, ncap = 0, last = 0;
	int fd = open_dir(dir);

	do {
		r = read_rec(fd, size);
		for (off = 0; r > 0 && off < r; n++) {
			if (cookies) {
				if (n == ncap) {
					ncap = ncap ? ncap * 2 : 1024;
					*cookies = realloc(*cookies, ncap * sizeof(long));
					if (!*cookies)
						exit(1);
				}
				memcpy(&(*cookies)[n], buf + off + 8, sizeof(long));
				if (n && (*cookies)[n] == last && !pass)
					same_doff++;
				last = (*cookies)[n];
			}
			off += *(unsigned short *)(buf + off + 16);
		}
	} while (r > 0);
	close(fd);
	return n;
}

static void seek_read(int fd, const char *op, long where, int whence)
{
	long r = (long)lseek(fd, where, whence);

	record(op, r, errno, NULL, 0);
	read_rec(fd, SEEK_READ);
}

static long one_dir(const char *dir)
{
	static const size_t sizes[] = {
		1, 23, 24, 32, 48, 64, 100, 128, 256, 512, 1024, 4096, 32768, BUF_MAX
	};
	static const long bad[] = { 1, 0x7fffffffL, 0x123456789abL, -2 };
	long *cookies = NULL, n, i, step, r;
	size_t s;
	int fd;

	cur_dir = dir;
	n = read_all(dir, 32768, &cookies);
	for (s = 0; s < ARRAY_SIZE(sizes); s++)
		read_all(dir, sizes[s], NULL);

	fd = open_dir(dir);
	step = n > SEEK_MAX ? n / SEEK_MAX + 1 : 1;
	for (i = 0; i < n; i += step)
		seek_read(fd, "seek", cookies[i], SEEK_SET);
	if (n)
		seek_read(fd, "seek", cookies[n - 1], SEEK_SET);
	seek_read(fd, "seek", 0, SEEK_SET);
	close(fd);

	fd = open_dir(dir);
	for (i = 0; i < n / 2; i += count(r)) {
		r = read_rec(fd, 4096);
		if (r <= 0)
			break;
	}
	if (n >= 4)
		seek_read(fd, "resume", cookies[n / 4], SEEK_SET);
	while (read_rec(fd, 32768) > 0)
		;
	close(fd);

	fd = open_dir(dir);
	for (i = 0; i < (long)ARRAY_SIZE(bad); i++)
		seek_read(fd, "bad", bad[i], SEEK_SET);
	seek_read(fd, "bad", 0, SEEK_END);
	close(fd);
	free(cookies);
	return n;
}

/* ext4's dx_hack_hash(), as ext4fs_dirhash() keeps it: bit 0 clear. */
static uint32_t legacy_hash(const char *name)
{
	uint32_t hash, hash0 = 0x12a3fe2d, hash1 = 0x37abe8f9;
	const unsigned char *p = (const unsigned char *)name;

	while (*p) {
		hash = hash1 + (hash0 ^ (uint32_t)(*p++ * 7152373));
		if (hash & 0x80000000)
			hash -= 0x7fffffff;
		hash1 = hash0;
		hash0 = hash;
	}
	hash = (hash0 << 1) & ~1U;
	/* EXT4_HTREE_EOF_32BIT, the end-of-directory cookie, is moved down. */
	if (hash == (0x7fffffffU << 1))
		hash = (0x7fffffffU - 1) << 1;
	return hash;
}

struct hname {
	uint32_t hash;
	uint32_t i;
};

static int by_hash(const void *a, const void *b)
{
	const struct hname *x = a, *y = b;

	return x->hash < y->hash ? -1 : x->hash > y->hash ? 1 :
	       x->i < y->i ? -1 : x->i > y->i;
}

/* At least @want names of "c%07u" in groups that share a legacy hash. */
static int collide(long want)
{
	uint32_t n = 1U << 20, i, j;
	struct hname *h = malloc(n * sizeof(*h));
	char name[16];
	long out = 0;

	if (!h)
		return 1;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "c%07u", i);
		h[i].hash = legacy_hash(name);
		h[i].i = i;
	}
	qsort(h, n, sizeof(*h), by_hash);
	for (i = 0; i < n && out < want; i = j) {
		for (j = i + 1; j < n && h[j].hash == h[i].hash; j++)
			;
		if (j - i < 2)
			continue;
		for (; i < j; i++, out++)
			printf("c%07u\n", h[i].i);
	}
	free(h);
	return out < want;
}

static void set_knob(const char *knob, const char *val)
{
	FILE *f;

	if (!knob)
		return;
	f = fopen(knob, "w");
	if (!f || fputs(val, f) < 0 || fclose(f)) {
		fprintf(stderr, "dirdiff: %s: %s\n", knob, strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const char *knob = NULL;
	long entries = 0;
	int c, i;

	while ((c = getopt(argc, argv, "c:k:v")) != -1) {
		switch (c) {
		case 'c':
			return collide(atol(optarg));
		case 'k':
			knob = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			fprintf(stderr, "usage: dirdiff [-k KNOBFILE] [-v] DIR... | -c N\n");
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "usage: dirdiff [-k KNOBFILE] [-v] DIR... | -c N\n");
		return 2;
	}
	for (pass = 0; pass < 2; pass++) {
		set_knob(knob, pass ? "1" : "0");
		cur = 0;
		for (i = optind; i < argc; i++) {
			long n = one_dir(argv[i]);

			if (pass == 0)
				entries += n;
			if (verbose)
				fprintf(stderr, "dirdiff: pass %d %s: %ld entries\n", pass, argv[i], n);
		}
		if (pass == 1 && cur != nrecs) {
			printf("MISMATCH records: A %zu B %zu\n", nrecs, cur);
			mismatches++;
		}
	}
	set_knob(knob, "0");
	printf("dirdiff: dirs=%d entries=%ld same_doff=%ld records=%zu mismatches=%ld\n",
	       argc - optind, entries, same_doff, nrecs, mismatches);
	return mismatches ? 1 : 0;
}
