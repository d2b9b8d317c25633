// SPDX-License-Identifier: GPL-2.0
/*
 * rldiff: differential readlink() tester.
 *
 * usage: rldiff [-k KNOBFILE] [-n] [-g] [-v] PATHLIST
 *
 * Pass A runs every call with the knob at 0 (stock vfs_readlink), pass B
 * repeats exactly the same calls with the knob at 1 (vfsfast), and every
 * record (return value, errno, whole buffer including 64 guard bytes) must
 * be identical.  Both passes run in one process so that /proc/self/...
 * links (fd, exe, map_files, ns) resolve to the same targets; for the same
 * reason everything that could add a file descriptor or a file mapping is
 * set up before pass A and nothing is opened or mapped between the passes.
 *
 * -g leaves out the bad-buffer calls, which the replacement hands to
 * stock: the calls then stay on the fast path wherever it answers.
 *
 * Output: one line per differing record,
 *   MISMATCH path=<escaped> buflen=N A:ret=R,errno=E B:ret=R,errno=E
 * followed by " case=fault_none|fault_edge" for the bad-buffer calls and
 * " first_diff=OFF A:0xNN B:0xNN" when the bytes differ; then
 *   rldiff: paths=P calls=C mismatches=M
 * where C counts the recorded calls of one pass (length probes excluded).
 * Exit 0 iff M == 0, 1 on mismatch or setup error, 2 on usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

#define DEFAULT_KNOB	"/sys/kernel/vfsfast/readlink/enabled"
#define PROBE_LEN	8192
#define SMALL_LIMIT	300
#define GUARD		64
#define FILL		0xA5
#define FAULT_LEN	64
#define EDGE_BYTES	5
#define EDGE_LEN	4096
#define MAX_LENS	(SMALL_LIMIT + 8)

enum rec_kind { REC_NORMAL, REC_FAULT_NONE, REC_FAULT_EDGE };

static const char * const kind_name[] = {
	[REC_NORMAL] = "normal",
	[REC_FAULT_NONE] = "fault_none",
	[REC_FAULT_EDGE] = "fault_edge",
};

struct rec {
	int kind;
	int buflen;
	long ret;
	int err;
	unsigned char *data;	/* pass A bytes */
	size_t datalen;
};

struct path {
	const char *name;
	int len;		/* L: probe result, 0 if the probe failed */
	int probe_err;
	struct rec *recs;
	int nrecs;
};

static const char *prog = "rldiff";
static long page_size;
static unsigned char *none_page;	/* PROT_NONE */
static unsigned char *edge_pages;	/* RW page + PROT_NONE page */
static unsigned char *scratch;
static size_t scratch_len;

static void print_usage(void)
{
	fprintf(stderr, "usage: %s [-k KNOBFILE] [-n] [-g] [-v] PATHLIST\n", prog);
	exit(2);
}

static int read_file(const char *file, char **bufp, size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap + 1);
	ssize_t n;
	int fd;

	if (!buf)
		return -ENOMEM;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	for (;;) {
		if (len == cap) {
			char *nbuf = realloc(buf, cap * 2 + 1);

			if (!nbuf) {
				close(fd);
				free(buf);
				return -ENOMEM;
			}
			buf = nbuf;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			free(buf);
			return n;
		}
		if (!n)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	*bufp = buf;
	*lenp = len;
	return 0;
}

static struct path *read_pathlist(const char *file, int *np)
{
	struct path *paths = NULL;
	size_t len = 0, i, start;
	int n = 0, cap = 0;
	char *buf = NULL;
	int ret;

	ret = read_file(file, &buf, &len);
	if (ret) {
		fprintf(stderr, "%s: %s: %s\n", prog, file, strerror(-ret));
		return NULL;
	}
	if (memchr(buf, '\0', len)) {
		fprintf(stderr, "%s: %s: contains a NUL byte\n", prog, file);
		return NULL;
	}
	for (start = 0, i = 0; i <= len; i++) {
		if (i < len && buf[i] != '\n')
			continue;
		buf[i] = '\0';
		if (i > start) {
			if (n == cap) {
				cap = cap ? cap * 2 : 64;
				paths = realloc(paths, cap * sizeof(*paths));
				if (!paths) {
					fprintf(stderr, "%s: out of memory\n",
						prog);
					return NULL;
				}
			}
			memset(&paths[n], 0, sizeof(paths[n]));
			paths[n++].name = buf + start;
		}
		start = i + 1;
	}
	*np = n;
	/* An empty list would "pass" without testing anything. */
	if (!n) {
		fprintf(stderr, "%s: %s: no paths\n", prog, file);
		return NULL;
	}
	return paths;
}

/* Reads the first line of a knob into val (without the newline). */
static int knob_read(const char *knob, char *val, size_t size)
{
	ssize_t n;
	char *nl;
	int fd;

	fd = open(knob, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, val, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	val[n] = '\0';
	nl = strchr(val, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

/*
 * Writes val and reads it back: a store that returns success but leaves
 * the optimization in another state would make the passes meaningless.
 */
static int knob_write(const char *knob, const char *val)
{
	size_t len = strlen(val);
	char back[64];
	ssize_t n;
	int fd, ret;

	fd = open(knob, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: open: %s\n", prog, knob,
			strerror(errno));
		return -1;
	}
	n = write(fd, val, len);
	if (n != (ssize_t)len) {
		fprintf(stderr, "%s: %s: write \"%s\": %s\n", prog, knob, val,
			n < 0 ? strerror(errno) : "short write");
		close(fd);
		return -1;
	}
	if (close(fd)) {
		fprintf(stderr, "%s: %s: close after write \"%s\": %s\n",
			prog, knob, val, strerror(errno));
		return -1;
	}
	ret = knob_read(knob, back, sizeof(back));
	if (ret) {
		fprintf(stderr, "%s: %s: read back: %s\n", prog, knob,
			strerror(-ret));
		return -1;
	}
	if (strcmp(back, val)) {
		fprintf(stderr, "%s: %s: wrote \"%s\" but reads \"%s\"\n",
			prog, knob, val, back);
		return -1;
	}
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int build_lens(int L, int *lens)
{
	static const int fixed[] = {
		1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65,
		4095, 4096, 4097, 8192,
	};
	int n = 0, i, j;

	if (L <= SMALL_LIMIT) {
		for (i = 1; i <= L + 3; i++)
			lens[n++] = i;
	} else {
		for (i = 0; i < (int)ARRAY_SIZE(fixed); i++)
			lens[n++] = fixed[i];
		for (i = L - 2; i <= L + 2; i++)
			lens[n++] = i;
	}
	lens[n++] = 4096;
	qsort(lens, n, sizeof(*lens), cmp_int);
	for (i = 0, j = 0; i < n; i++) {
		if (lens[i] < 1 || (j && lens[j - 1] == lens[i]))
			continue;
		lens[j++] = lens[i];
	}
	return j;
}

/*
 * Probes every path and lays out all pass A records in one allocation,
 * so that pass A itself allocates nothing.
 */
static int plan(struct path *paths, int np, int verbose, int good_only,
		long *ncalls)
{
	int lens[MAX_LENS];
	size_t total = 0, max_len = PROBE_LEN;
	unsigned char *data;
	struct rec *recs;
	long nrecs = 0;
	int i, j, n;
	ssize_t r;

	for (i = 0; i < np; i++) {
		r = readlink(paths[i].name, (char *)scratch, PROBE_LEN);
		paths[i].len = r < 0 ? 0 : (int)r;
		paths[i].probe_err = r < 0 ? errno : 0;
		if (verbose) {
			fputs("path=", stdout);
			put_escaped(stdout, paths[i].name);
			printf(" len=%d", paths[i].len);
			if (r < 0)
				printf(" errno=%d", paths[i].probe_err);
			putchar('\n');
		}
		n = build_lens(paths[i].len, lens);
		for (j = 0; j < n; j++) {
			total += lens[j] + GUARD;
			if ((size_t)lens[j] > max_len)
				max_len = lens[j];
		}
		total += EDGE_BYTES;
		nrecs += n + (good_only ? 0 : 2);
	}
	if (max_len + GUARD > scratch_len) {
		/* Cannot happen with an 8192 probe; keep it an error. */
		fprintf(stderr, "%s: buffer length %zu too large\n", prog,
			max_len);
		return -1;
	}

	recs = calloc(nrecs, sizeof(*recs));
	data = malloc(total);
	if (!recs || !data) {
		fprintf(stderr, "%s: out of memory (%zu bytes of records)\n",
			prog, total);
		return -1;
	}
	for (i = 0; i < np; i++) {
		struct rec *rec;

		n = build_lens(paths[i].len, lens);
		paths[i].recs = recs;
		paths[i].nrecs = n + (good_only ? 0 : 2);
		for (j = 0; j < n; j++) {
			rec = recs++;
			rec->kind = REC_NORMAL;
			rec->buflen = lens[j];
			rec->data = data;
			rec->datalen = lens[j] + GUARD;
			data += rec->datalen;
		}
		if (good_only)
			continue;
		rec = recs++;
		rec->kind = REC_FAULT_NONE;
		rec->buflen = FAULT_LEN;
		rec = recs++;
		rec->kind = REC_FAULT_EDGE;
		rec->buflen = EDGE_LEN;
		rec->data = data;
		rec->datalen = EDGE_BYTES;
		data += EDGE_BYTES;
	}
	*ncalls = nrecs;
	return 0;
}

/*
 * One call as described by tmpl; the observed bytes are left in *bytes
 * (tmpl->datalen of them).
 */
static void do_call(const char *path, const struct rec *tmpl, long *ret,
		    int *err, const unsigned char **bytes)
{
	unsigned char *buf;
	ssize_t r;

	switch (tmpl->kind) {
	case REC_NORMAL:
		buf = scratch;
		memset(buf, FILL, tmpl->datalen);
		*bytes = buf;
		break;
	case REC_FAULT_NONE:
		/* Not at the page start: a bad pointer that isn't "aligned". */
		buf = none_page + 128;
		*bytes = NULL;
		break;
	default:
		buf = edge_pages + page_size - EDGE_BYTES;
		memset(buf, FILL, EDGE_BYTES);
		*bytes = buf;
		break;
	}
	errno = 0;
	r = readlink(path, (char *)buf, tmpl->buflen);
	*ret = r;
	*err = r < 0 ? errno : 0;
}

static void pass_a(struct path *paths, int np)
{
	const unsigned char *bytes;
	int i, j;

	for (i = 0; i < np; i++) {
		for (j = 0; j < paths[i].nrecs; j++) {
			struct rec *rec = &paths[i].recs[j];

			do_call(paths[i].name, rec, &rec->ret, &rec->err,
				&bytes);
			if (rec->datalen)
				memcpy(rec->data, bytes, rec->datalen);
		}
	}
}

static long pass_b(struct path *paths, int np)
{
	const unsigned char *bytes;
	long mismatches = 0;
	size_t k;
	long ret;
	int i, j, err;

	for (i = 0; i < np; i++) {
		for (j = 0; j < paths[i].nrecs; j++) {
			const struct rec *rec = &paths[i].recs[j];
			long diff = -1;

			do_call(paths[i].name, rec, &ret, &err, &bytes);
			for (k = 0; k < rec->datalen; k++) {
				if (rec->data[k] != bytes[k]) {
					diff = k;
					break;
				}
			}
			if (ret == rec->ret && err == rec->err && diff < 0)
				continue;
			mismatches++;
			fputs("MISMATCH path=", stdout);
			put_escaped(stdout, paths[i].name);
			printf(" buflen=%d A:ret=%ld,errno=%d B:ret=%ld,errno=%d",
			       rec->buflen, rec->ret, rec->err, ret, err);
			if (rec->kind != REC_NORMAL)
				printf(" case=%s", kind_name[rec->kind]);
			if (diff >= 0)
				printf(" first_diff=%ld A:0x%02x B:0x%02x",
				       diff, rec->data[diff], bytes[diff]);
			putchar('\n');
		}
	}
	return mismatches;
}

static int setup_pages(void)
{
	page_size = sysconf(_SC_PAGESIZE);
	none_page = mmap(NULL, page_size, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	edge_pages = mmap(NULL, 2 * page_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none_page == MAP_FAILED || edge_pages == MAP_FAILED) {
		fprintf(stderr, "%s: mmap: %s\n", prog, strerror(errno));
		return -1;
	}
	if (mprotect(edge_pages + page_size, page_size, PROT_NONE)) {
		fprintf(stderr, "%s: mprotect: %s\n", prog, strerror(errno));
		return -1;
	}
	/* Largest buflen is max(8192, L + 3) with L <= 8192. */
	scratch_len = PROBE_LEN + 3 + GUARD;
	scratch = malloc(scratch_len);
	if (!scratch) {
		fprintf(stderr, "%s: out of memory\n", prog);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char outbuf[BUFSIZ];
	const char *knob = DEFAULT_KNOB;
	int no_knob = 0, good_only = 0, verbose = 0, np, opt, status = 0;
	char orig[64];
	struct path *paths;
	long ncalls, mismatches;
	int ret;

	/* A static stdio buffer: no allocation happens between the passes. */
	setvbuf(stdout, outbuf, _IOLBF, sizeof(outbuf));

	while ((opt = getopt(argc, argv, "k:ngv")) != -1) {
		switch (opt) {
		case 'k':
			knob = optarg;
			break;
		case 'n':
			no_knob = 1;
			break;
		case 'g':
			good_only = 1;
			break;
		case 'v':
			verbose = 1;
			break;
		default:
			print_usage();
		}
	}
	if (optind != argc - 1)
		print_usage();

	paths = read_pathlist(argv[optind], &np);
	if (!paths)
		return 1;
	if (setup_pages())
		return 1;

	if (!no_knob) {
		ret = knob_read(knob, orig, sizeof(orig));
		if (ret) {
			fprintf(stderr, "%s: %s: %s\n", prog, knob,
				strerror(-ret));
			return 1;
		}
		if (knob_write(knob, "0"))
			goto restore_fail;
	}
	if (plan(paths, np, verbose, good_only, &ncalls))
		goto restore_fail;
	pass_a(paths, np);
	if (!no_knob && knob_write(knob, "1"))
		goto restore_fail;
	mismatches = pass_b(paths, np);

	if (!no_knob && knob_write(knob, orig)) {
		fprintf(stderr, "%s: could not restore %s to \"%s\"\n", prog,
			knob, orig);
		status = 1;
	}
	printf("rldiff: paths=%d calls=%ld mismatches=%ld\n", np, ncalls,
	       mismatches);
	fflush(stdout);
	return (mismatches || status) ? 1 : 0;

restore_fail:
	if (!no_knob && knob_write(knob, orig))
		fprintf(stderr, "%s: could not restore %s to \"%s\"\n", prog,
			knob, orig);
	return 1;
}
