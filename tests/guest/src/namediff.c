// SPDX-License-Identifier: GPL-2.0
/*
 * namediff: differential tester of the system calls that take a path
 * name, for the getname optimization.
 *
 * usage: namediff [-u] KNOBFILE DIR
 *        namediff count CACHE
 *
 * Pass A makes every call with the knob at 0 in DIR/A, pass B the same
 * calls with the knob at 1 in DIR/B, each directory holding the same
 * tree made at the start of its pass (a file f, an executable x of no
 * known format, a directory d, a symlink l to f, a FIFO p).  Every
 * record (return value, errno, and what the call wrote: stat fields that
 * do not name the directory, link text, the working directory's name
 * relative to the pass's) must be identical.  With -u the calls run as
 * uid and gid 1000 (the knob is opened first).
 *
 * The names: empty; 1 byte; the room a names_cache object has for a
 * name before 7.0 (4064 bytes) and one either side; 4095 (the longest
 * PATH_MAX allows) and 4096 (ENAMETOOLONG), all of them resolving to f
 * through "./" components; a name whose NUL is the last byte before a
 * PROT_NONE page, short and 4064 bytes long, and one that runs into the
 * page without a NUL (EFAULT); NULL, 1, a kernel address and an unmapped
 * page; and d/../f, l, missing, d/, f/ (ENOTDIR), p.
 * The calls: stat, lstat, newfstatat (0, AT_SYMLINK_NOFOLLOW,
 * AT_EMPTY_PATH), statx (the same), access, faccessat2 (AT_EACCESS),
 * open, openat, openat2 with each RESOLVE_* flag (O_NONBLOCK: the FIFO
 * never blocks), creat, mkdir and rmdir, mknod and unlink, symlink (as
 * target and as link name), link (both ways), rename (both ways, and
 * back), readlink, chdir (and back), truncate, execve; fchownat (to -1,
 * -1), utimensat (both times omitted), execveat and linkat, each without
 * and with AT_EMPTY_PATH.
 *
 * Output: one line per differing record, then
 *   namediff: calls=C mismatches=M
 * Exit 0 iff M == 0, 1 on mismatch or setup error, 2 on usage error.
 *
 * count: the objects of slab cache CACHE in use, exactly: its files are
 * opened first, then /sys/kernel/slab/CACHE/shrink flushes every CPU's
 * slab and /proc/slabinfo is read, with no name taken in between (a
 * name_cache allocation of the reader's own would give it a CPU slab
 * again, whose free objects /proc/slabinfo counts as in use).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common.h"
#include "oldcalls.h"

#define NAMES_MAX	40
#define CALLS_MAX	200000

struct name {
	const char *label;
	const char *ptr;
};

struct rec {
	char what[96];
	long ret;
	int err;
	char out[160];
};

static struct name names[NAMES_MAX];
static int nnames;
static struct rec *recs[2];
static int nrec[2];
static int pass;

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void add_name(const char *label, const char *ptr)
{
	if (nnames == NAMES_MAX) {
		fprintf(stderr, "namediff: too many names\n");
		exit(1);
	}
	names[nnames].label = label;
	names[nnames].ptr = ptr;
	nnames++;
}

/* A name of exactly @len bytes that resolves to f: "./" components. */
static char *long_name(char *buf, size_t len)
{
	size_t i = 0;

	if (len % 2) {
		for (; i + 1 < len; i += 2)
			memcpy(buf + i, "./", 2);
	} else {
		for (; i + 2 < len; i += 2)
			memcpy(buf + i, "./", 2);
		buf[i++] = '/';
	}
	buf[i++] = 'f';
	buf[i] = '\0';
	return buf;
}

static void setup_names(void)
{
	static const size_t lens[] = { 4063, 4064, 4065, 4095, 4096 };
	static char labels[ARRAY_SIZE(lens)][16];
	long page = sysconf(_SC_PAGESIZE);
	char *area, *edge, *unmapped;
	size_t i;

	add_name("empty", "");
	add_name("1-byte", "f");
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		char *buf = malloc(lens[i] + 1);

		if (!buf)
			die("malloc");
		snprintf(labels[i], sizeof(labels[i]), "len-%zu", lens[i]);
		add_name(labels[i], long_name(buf, lens[i]));
	}
	/* Names that end at a PROT_NONE page: two pages, then that page. */
	area = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || mprotect(area + 2 * page, page, PROT_NONE))
		die("mmap");
	edge = area + 2 * page;
	long_name(edge - 4064, 4063);
	add_name("4063-nul-at-edge", edge - 4064);
	add_name("nul-at-edge", edge - 2);
	area = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED || mprotect(area + 2 * page, page, PROT_NONE))
		die("mmap");
	edge = area + 2 * page;
	memset(edge - 5, 'f', 5);
	add_name("no-nul-into-prot-none", edge - 5);
	unmapped = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (unmapped == MAP_FAILED || munmap(unmapped, page))
		die("munmap");
	add_name("null", NULL);
	add_name("one", (const char *)1);
	add_name("kernel", (const char *)0xffffffff81000000UL);
	add_name("unmapped", unmapped);
	add_name("dotdot", "d/../f");
	add_name("symlink", "l");
	add_name("missing", "missing");
	add_name("dir-slash", "d/");
	add_name("file-slash", "f/");
	add_name("fifo", "p");
	add_name("dir", "d");
}

static void record(const char *op, const char *label, long ret, const char *out)
{
	struct rec *r;

	if (nrec[pass] == CALLS_MAX) {
		fprintf(stderr, "namediff: too many calls\n");
		exit(1);
	}
	r = &recs[pass][nrec[pass]++];
	snprintf(r->what, sizeof(r->what), "%s(%s)", op, label);
	r->ret = ret;
	r->err = ret < 0 ? errno : 0;
	snprintf(r->out, sizeof(r->out), "%s", out ? out : "");
}

static void stat_out(char *out, size_t size, long ret, const struct stat *st)
{
	if (ret)
		out[0] = '\0';
	else
		snprintf(out, size, "mode=%o nlink=%lu size=%lld uid=%u gid=%u",
			 st->st_mode, (unsigned long)st->st_nlink,
			 (long long)st->st_size, st->st_uid, st->st_gid);
}

static void statx_out(char *out, size_t size, long ret, const struct statx *stx)
{
	if (ret)
		out[0] = '\0';
	else
		snprintf(out, size, "mask=%x mode=%o nlink=%u size=%llu uid=%u attr=%llx",
			 stx->stx_mask, stx->stx_mode, stx->stx_nlink,
			 (unsigned long long)stx->stx_size, stx->stx_uid,
			 (unsigned long long)stx->stx_attributes);
}

static void make_tree(const char *dir)
{
	int fd;

	if (mkdir(dir, 0755) || chdir(dir))
		die(dir);
	fd = open("f", O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || write(fd, "data\n", 5) != 5 || close(fd))
		die("f");
	fd = open("x", O_CREAT | O_WRONLY, 0755);
	if (fd < 0 || write(fd, "\x7fXXX", 4) != 4 || close(fd))
		die("x");
	if (mkdir("d", 0755) || symlink("f", "l") || mkfifo("p", 0644))
		die("tree");
}

/* f and x as made, if a rename or truncate changed them. */
static void restore_tree(void)
{
	int fd;

	unlink("f");
	fd = open("f", O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || write(fd, "data\n", 5) != 5 || close(fd))
		die("f");
	unlink("x");
	fd = open("x", O_CREAT | O_WRONLY, 0755);
	if (fd < 0 || write(fd, "\x7fXXX", 4) != 4 || close(fd))
		die("x");
}

/* Every call with every name, in the current directory. */
static void run_calls(int here)
{
	static const struct { const char *label; unsigned long long resolve; } res[] = {
		{ "0", 0 }, { "BENEATH", RESOLVE_BENEATH },
		{ "IN_ROOT", RESOLVE_IN_ROOT }, { "NO_SYMLINKS", RESOLVE_NO_SYMLINKS },
		{ "NO_MAGICLINKS", RESOLVE_NO_MAGICLINKS }, { "NO_XDEV", RESOLVE_NO_XDEV },
		{ "CACHED", 0x20 },
	};
	static const int atflags[] = { 0, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH };
	char out[160], op[64], buf[PATH_MAX + 8];
	struct statx stx;
	struct stat st;
	long r;
	int i, j;

	for (i = 0; i < nnames; i++) {
		const char *n = names[i].ptr, *l = names[i].label;

		memset(&st, 0, sizeof(st));
		r = sc_stat(n, &st);
		stat_out(out, sizeof(out), r, &st);
		record("stat", l, r, out);
		r = sc_lstat(n, &st);
		stat_out(out, sizeof(out), r, &st);
		record("lstat", l, r, out);
		for (j = 0; j < (int)ARRAY_SIZE(atflags); j++) {
			snprintf(op, sizeof(op), "newfstatat/%x", atflags[j]);
			r = syscall(SYS_newfstatat, here, n, &st, atflags[j]);
			stat_out(out, sizeof(out), r, &st);
			record(op, l, r, out);
			snprintf(op, sizeof(op), "statx/%x", atflags[j]);
			memset(&stx, 0, sizeof(stx));
			r = syscall(SYS_statx, here, n, atflags[j], STATX_BASIC_STATS, &stx);
			statx_out(out, sizeof(out), r, &stx);
			record(op, l, r, out);
		}
		record("access/X", l, sc_access(n, X_OK), NULL);
		record("access/R", l, sc_access(n, R_OK), NULL);
		record("faccessat2/EACCESS", l,
		       syscall(SYS_faccessat2, AT_FDCWD, n, W_OK, AT_EACCESS), NULL);
		r = sc_open(n, O_RDONLY | O_NONBLOCK);
		record("open", l, r < 0 ? r : 0, NULL);
		if (r >= 0)
			close(r);
		r = syscall(SYS_openat, here, n, O_RDONLY | O_NONBLOCK | O_DIRECTORY);
		record("openat/DIRECTORY", l, r < 0 ? r : 0, NULL);
		if (r >= 0)
			close(r);
		for (j = 0; j < (int)ARRAY_SIZE(res); j++) {
			struct open_how how = {
				.flags = O_RDONLY | O_NONBLOCK, .resolve = res[j].resolve,
			};

			snprintf(op, sizeof(op), "openat2/%s", res[j].label);
			r = syscall(SYS_openat2, here, n, &how, sizeof(how));
			record(op, l, r < 0 ? r : 0, NULL);
			if (r >= 0)
				close(r);
		}
		r = sc_readlink(n, buf, sizeof(buf));
		if (r > 0)
			snprintf(out, sizeof(out), "%.*s", (int)r, buf);
		record("readlink", l, r, r > 0 ? out : NULL);
		r = syscall(SYS_chdir, n);
		out[0] = '\0';
		if (!r) {
			if (!getcwd(buf, sizeof(buf)))
				die("getcwd");
			/* Relative to the pass's directory, which differs. */
			snprintf(out, sizeof(out), "%s", strrchr(buf, '/'));
			if (fchdir(here))
				die("fchdir");
		}
		record("chdir", l, r, out);
		record("truncate", l, syscall(SYS_truncate, n, 5), NULL);
		/*
		 * The calls that still hand "" to getname_flags() with
		 * LOOKUP_EMPTY on every kernel (6.11 answers fstatat and
		 * statx of "" before a name is taken).
		 */
		for (j = 0; j < 2; j++) {
			int fl = j ? AT_EMPTY_PATH : 0;
			struct timespec omit[2] = {
				{ .tv_nsec = UTIME_OMIT }, { .tv_nsec = UTIME_OMIT },
			};

			snprintf(op, sizeof(op), "fchownat/%x", fl);
			record(op, l, syscall(SYS_fchownat, here, n, -1, -1, fl), NULL);
			snprintf(op, sizeof(op), "utimensat/%x", fl);
			record(op, l, syscall(SYS_utimensat, here, n, omit, fl), NULL);
			snprintf(op, sizeof(op), "execveat/%x", fl);
			record(op, l, syscall(SYS_execveat, here, n, (char *[]){ NULL },
					      (char *[]){ NULL }, fl), NULL);
			snprintf(op, sizeof(op), "linkat/%x", fl);
			r = syscall(SYS_linkat, here, n, AT_FDCWD, "hard", fl);
			record(op, l, r, NULL);
			if (!r)
				record("unlink/hard", l, sc_unlink("hard"), NULL);
		}
		record("execve", l, syscall(SYS_execve, n, (char *[]){ NULL },
					   (char *[]){ NULL }), NULL);
		r = sc_mkdir(n, 0755);
		record("mkdir", l, r, NULL);
		if (!r)
			record("rmdir", l, sc_rmdir(n), NULL);
		r = sc_mknod(n, S_IFREG | 0644, 0);
		record("mknod", l, r, NULL);
		if (!r)
			record("unlink", l, sc_unlink(n), NULL);
		r = sc_symlink(n, "sym");
		record("symlink/target", l, r, NULL);
		if (!r)
			record("unlink/sym", l, sc_unlink("sym"), NULL);
		r = sc_symlink("f", n);
		record("symlink/name", l, r, NULL);
		r = sc_link(n, "hard");
		record("link/from", l, r, NULL);
		if (!r)
			record("unlink/hard", l, sc_unlink("hard"), NULL);
		r = sc_link("f", n);
		record("link/to", l, r, NULL);
		r = sc_rename(n, "moved");
		record("rename/from", l, r, NULL);
		if (!r)
			record("rename/back", l, sc_rename("moved", n), NULL);
		r = sc_rename("x", n);
		record("rename/to", l, r, NULL);
		if (!r)
			record("rename/to-back", l, sc_rename(n, "x"), NULL);
		restore_tree();
	}
}

static void set_knob(int fd, const char *v)
{
	if (pwrite(fd, v, 1, 0) != 1)
		die("knob");
}

static int count_objects(const char *cache)
{
	static char buf[1 << 16];
	char path[256], *line;
	int shrink, info;
	ssize_t n, len = 0;

	snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink", cache);
	shrink = open(path, O_WRONLY);
	info = open("/proc/slabinfo", O_RDONLY);
	if (shrink < 0 || info < 0)
		die(shrink < 0 ? path : "/proc/slabinfo");
	if (write(shrink, "1", 1) != 1)
		die(path);
	while ((n = read(info, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	buf[len] = '\0';
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char name[64];
		long active;

		if (sscanf(line, "%63s %ld", name, &active) == 2 && !strcmp(name, cache)) {
			printf("%ld\n", active);
			return 0;
		}
	}
	fprintf(stderr, "namediff: no %s in /proc/slabinfo\n", cache);
	return 1;
}

int main(int argc, char **argv)
{
	int user = 0, knob, here, i, mismatches = 0;
	char path[PATH_MAX];
	const char *dir;

	if (argc == 3 && !strcmp(argv[1], "count"))
		return count_objects(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "-u")) {
		user = 1;
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: namediff [-u] KNOBFILE DIR\n");
		return 2;
	}
	knob = open(argv[1], O_WRONLY);
	if (knob < 0)
		die(argv[1]);
	dir = argv[2];
	if (user && (setgroups(0, NULL) || setresgid(1000, 1000, 1000) ||
		     setresuid(1000, 1000, 1000)))
		die("credentials");
	recs[0] = calloc(CALLS_MAX, sizeof(struct rec));
	recs[1] = calloc(CALLS_MAX, sizeof(struct rec));
	if (!recs[0] || !recs[1])
		die("calloc");
	setup_names();
	for (pass = 0; pass < 2; pass++) {
		set_knob(knob, pass ? "1" : "0");
		snprintf(path, sizeof(path), "%s/%c", dir, pass ? 'B' : 'A');
		make_tree(path);
		here = open(".", O_RDONLY | O_DIRECTORY);
		if (here < 0)
			die(".");
		run_calls(here);
		close(here);
	}
	set_knob(knob, "0");
	if (nrec[0] != nrec[1]) {
		printf("namediff: %d calls in pass A, %d in pass B\n", nrec[0], nrec[1]);
		mismatches++;
	}
	for (i = 0; i < nrec[0] && i < nrec[1]; i++) {
		struct rec *a = &recs[0][i], *b = &recs[1][i];

		if (strcmp(a->what, b->what) || a->ret != b->ret || a->err != b->err ||
		    strcmp(a->out, b->out)) {
			printf("%s: off %ld/%d [%s], on %s %ld/%d [%s]\n", a->what, a->ret,
			       a->err, a->out, b->what, b->ret, b->err, b->out);
			mismatches++;
		}
	}
	printf("namediff: calls=%d mismatches=%d\n", nrec[0], mismatches);
	return mismatches ? 1 : 0;
}
