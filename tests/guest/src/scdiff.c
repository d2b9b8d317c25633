// SPDX-License-Identifier: GPL-2.0
/*
 * scdiff: differential tester of the stat and access system calls.
 *
 * usage: scdiff [-k KNOBFILE] [-s STATE] stat|access PATHLIST
 *
 * Pass A makes every call with the knob at 0, pass B makes exactly the
 * same calls with the knob at 1, pass A' again at 0, and every record of
 * B (return value, errno, and for stat the whole result buffer with
 * guard bytes) must be identical to A's or to A''s.  Everything that could change between the passes (files
 * opened, descriptors closed, pages mapped) is set up before pass A.
 *
 * The knob is opened first; then the credentials are set to STATE, so
 * that the passes run as it while the knob stays writable:
 *   root           unchanged (the default)
 *   user           uid and gid 1000, no supplementary groups
 *   fsuid          setfsuid(1000) and setfsgid(1000) only
 *   userns         uid 1000, then a user namespace mapping root to it
 *   capdrop        CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH out of the
 *                  effective set only
 *   capdrop-all    ... out of the effective and permitted sets
 *   keepcaps       SECBIT_NO_SETUID_FIXUP and SECBIT_KEEP_CAPS, then uid
 *                  1000 with the capabilities kept (effective restored)
 *   nnp            no_new_privs set
 *   none           as started (a setuid-root copy keeps its euid)
 *
 * stat: for each descriptor (each PATHLIST entry opened read-only, or
 * O_PATH where that fails, O_PATH | O_NOFOLLOW of each entry, a pipe, a
 * socket, an eventfd, a deleted file, a closed descriptor, -1, AT_FDCWD
 * and 100000), each name ("", ".", "missing", NULL, an unmapped page),
 * each flag set and each buffer (good, NULL, unmapped): newfstatat,
 * statx with five masks, and the fstat system call.
 * access: for each PATHLIST entry and the special names, every mode
 * (0-7, 8, -1): access, faccessat, and faccessat2 with each flag set,
 * relative to AT_FDCWD, and with "" relative to each entry's descriptor.
 *
 * Output: one line per differing record, then
 *   scdiff: state=S calls=C mismatches=M unsettled=U
 * (U: records where A and A' differ, values that moved on their own)
 * Exit 0 iff M == 0, 1 on mismatch or setup error, 2 on usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common.h"
#include "oldcalls.h"
#include "creds.h"

#define DEFAULT_KNOB	"/sys/kernel/vfsfast/fstatat_empty/enabled"
#define MAX_FDS		512
#define GUARD		64
#define BUFSZ		(sizeof(struct statx) + GUARD)
#define FILL		0xA5
#define USER		1000

struct rec {
	long ret;
	int err;
	unsigned char buf[BUFSZ];
};

/*
 * Pass A (knob 0), pass B (knob 1), pass A' (knob 0 again).  A record of
 * B is wrong when it equals neither A's nor A''s: a value the system
 * changed on its own between the passes (the link count of /proc is the
 * number of processes, and a kworker may come or go) then shows as A and
 * A' differing, never as a mismatch, while a fast path that answers
 * differently from stock still differs from both.
 */
#define NPASS	3
static const char *prog = "scdiff";
static struct rec *recs[NPASS];
static char (*whats)[96];
static size_t nrecs, caprecs, cur;
static int pass, mismatches, unsettled;
static char *none_page;

static void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr, "%s: %s [-k KNOBFILE] [-s STATE] stat|access PATHLIST\n",
		__func__, prog);
	exit(2);
}

static void *grow(void *p, size_t size)
{
	p = realloc(p, caprecs * size);
	if (!p)
		die("realloc");
	return p;
}

/* Records the call just made, in this pass's array. */
static void record(const char *what, long ret, const void *buf)
{
	struct rec *r;
	int i;

	if (pass == 0 && nrecs == caprecs) {
		caprecs = caprecs ? caprecs * 2 : 4096;
		for (i = 0; i < NPASS; i++)
			recs[i] = grow(recs[i], sizeof(struct rec));
		whats = grow(whats, sizeof(*whats));
	}
	if (pass == 0) {
		snprintf(whats[nrecs], sizeof(whats[0]), "%s", what);
		nrecs++;
	}
	if (cur >= nrecs) {
		printf("MISMATCH %s: a call pass A did not make\n", what);
		mismatches++;
		return;
	}
	r = &recs[pass][cur++];
	memset(r, 0, sizeof(*r));
	r->ret = ret;
	r->err = ret < 0 ? errno : 0;
	if (buf)
		memcpy(r->buf, buf, BUFSZ);
}

static void compare(void)
{
	size_t n, i;

	for (n = 0; n < nrecs; n++) {
		struct rec *a = &recs[0][n], *b = &recs[1][n], *a2 = &recs[2][n];

		if (memcmp(a, a2, sizeof(*a)))
			unsettled++;
		if (!memcmp(a, b, sizeof(*a)) || !memcmp(a2, b, sizeof(*a)))
			continue;
		for (i = 0; i < BUFSZ && a->buf[i] == b->buf[i]; i++)
			;
		printf("MISMATCH %s A:ret=%ld,errno=%d B:ret=%ld,errno=%d first_diff=%zu\n",
		       whats[n], a->ret, a->err, b->ret, b->err, i);
		mismatches++;
	}
}

static char **names;
static int nnames;
static int fds[MAX_FDS];
/* Printed with %.95s: gcc 14 takes the whole array for one entry and warns. */
static char fdwhat[MAX_FDS][96];
static int nfds;

static void add_fd(int fd, const char *what)
{
	if (nfds == MAX_FDS)
		return;
	fds[nfds] = fd;
	snprintf(fdwhat[nfds], sizeof(fdwhat[nfds]), "%s", what);
	nfds++;
}

static void read_list(const char *file)
{
	char line[4096];
	FILE *f = fopen(file, "r");

	if (!f)
		die(file);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!*line)
			continue;
		names = realloc(names, (nnames + 1) * sizeof(*names));
		if (!names)
			die("realloc");
		names[nnames++] = strdup(line);
	}
	fclose(f);
}

static void setup_fds(void)
{
	char what[96];
	int i, p[2], fd;

	for (i = 0; i < nnames; i++) {
		fd = open(names[i], O_RDONLY | O_NONBLOCK | O_NOCTTY);
		if (fd < 0)
			fd = open(names[i], O_PATH);
		snprintf(what, sizeof(what), "fd:%.80s", names[i]);
		if (fd >= 0)
			add_fd(fd, what);
		fd = open(names[i], O_PATH | O_NOFOLLOW);
		snprintf(what, sizeof(what), "opath-nofollow:%.70s", names[i]);
		if (fd >= 0)
			add_fd(fd, what);
	}
	if (pipe(p))
		die("pipe");
	add_fd(p[0], "pipe-read");
	add_fd(p[1], "pipe-write");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, p))
		die("socketpair");
	add_fd(p[0], "socket");
	fd = eventfd(0, 0);
	if (fd < 0)
		die("eventfd");
	add_fd(fd, "eventfd");
	fd = open("/tmp/scdiff.deleted", O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || unlink("/tmp/scdiff.deleted"))
		die("/tmp/scdiff.deleted");
	add_fd(fd, "deleted");
	fd = dup(0);
	close(fd);
	add_fd(fd, "closed");
	add_fd(-1, "minus-one");
	add_fd(AT_FDCWD, "AT_FDCWD");
	add_fd(100000, "100000");
}

/* Credentials as STATE says, after the knob is open. */
static void set_state(const char *state)
{
	int r = set_cred_state(state, USER);

	if (r < 0)
		usage();
	if (r > 0)
		die(state);
}

static void stat_calls(void)
{
	static const int flags[] = {
		0, AT_EMPTY_PATH, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW,
		AT_EMPTY_PATH | AT_NO_AUTOMOUNT, AT_SYMLINK_NOFOLLOW,
		AT_EMPTY_PATH | AT_STATX_FORCE_SYNC, AT_EMPTY_PATH | AT_STATX_DONT_SYNC,
		AT_EMPTY_PATH | AT_STATX_SYNC_TYPE, AT_EMPTY_PATH | 0x1, 0x10000,
	};
	/* Beyond the basic stats: all of 5.10's, none, 6.1's DIOALIGN, reserved. */
	static const unsigned int smasks[] = { 0xfff, 0, 0x27ff, 0x80000000u };
	static unsigned char good[BUFSZ];
	const char * const pnames[] = { "", ".", "missing", NULL, none_page };
	void *bufs[] = { good, NULL, none_page };
	char what[256];
	int i, n, f, b;
	long r;

	for (i = 0; i < nfds; i++) {
		for (b = 0; b < 3; b++) {
			memset(good, FILL, sizeof(good));
			r = syscall(SYS_fstat, fds[i], bufs[b]);
			snprintf(what, sizeof(what), "fstat %.95s buf=%d", fdwhat[i], b);
			record(what, r, b ? NULL : good);
		}
		for (n = 0; n < 5; n++) {
			for (f = 0; f < (int)ARRAY_SIZE(flags); f++) {
				for (b = 0; b < 3; b++) {
					memset(good, FILL, sizeof(good));
					r = syscall(SYS_newfstatat, fds[i], pnames[n],
						    bufs[b], flags[f]);
					snprintf(what, sizeof(what),
						 "newfstatat %.95s name=%d flags=%#x buf=%d",
						 fdwhat[i], n, flags[f], b);
					record(what, r, b ? NULL : good);
				}
				for (b = 0; b < 7; b++) {
					memset(good, FILL, sizeof(good));
					r = syscall(SYS_statx, fds[i], pnames[n], flags[f],
						    b < 3 ? STATX_BASIC_STATS : smasks[b - 3],
						    b < 3 ? bufs[b] : (void *)good);
					snprintf(what, sizeof(what),
						 "statx %.95s name=%d flags=%#x buf=%d",
						 fdwhat[i], n, flags[f], b);
					record(what, r, b == 1 || b == 2 ? NULL : good);
				}
			}
		}
	}
}

static void access_one(const char *what0, int dfd, const char *path)
{
	static const int flags[] = {
		0, AT_EACCESS, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH,
		AT_EACCESS | AT_SYMLINK_NOFOLLOW, AT_EACCESS | AT_EMPTY_PATH, 0x1, 0x200,
	};
	static const int modes[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, -1 };
	char what[256];
	size_t m, f;
	long r;

	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		if (dfd == AT_FDCWD) {
			r = sc_access(path, modes[m]);
			snprintf(what, sizeof(what), "access %s mode=%d", what0, modes[m]);
			record(what, r, NULL);
		}
		r = syscall(SYS_faccessat, dfd, path, modes[m]);
		snprintf(what, sizeof(what), "faccessat %s mode=%d", what0, modes[m]);
		record(what, r, NULL);
		for (f = 0; f < ARRAY_SIZE(flags); f++) {
			r = syscall(SYS_faccessat2, dfd, path, modes[m], flags[f]);
			snprintf(what, sizeof(what), "faccessat2 %s mode=%d flags=%#x",
				 what0, modes[m], flags[f]);
			record(what, r, NULL);
		}
	}
}

static void access_calls(void)
{
	static char longname[8192];
	char what[256];
	int i;

	memset(longname, 'x', sizeof(longname) - 1);
	for (i = 0; i < nnames; i++) {
		snprintf(what, sizeof(what), "path:%.200s", names[i]);
		access_one(what, AT_FDCWD, names[i]);
	}
	for (i = 0; i < nfds; i++) {
		snprintf(what, sizeof(what), "empty:%.95s", fdwhat[i]);
		access_one(what, fds[i], "");
	}
	access_one("missing", AT_FDCWD, "/nonexistent/vfsfast");
	access_one("NULL", AT_FDCWD, NULL);
	access_one("unmapped", AT_FDCWD, none_page);
	access_one("toolong", AT_FDCWD, longname);
}

static void set_knob(int fd, const char *v)
{
	if (pwrite(fd, v, 1, 0) != 1)
		die("knob write");
}

int main(int argc, char **argv)
{
	const char *knob = DEFAULT_KNOB, *state = "root";
	int opt, kfd, stat_mode;

	while ((opt = getopt(argc, argv, "k:s:")) != -1) {
		if (opt == 'k')
			knob = optarg;
		else if (opt == 's')
			state = optarg;
		else
			usage();
	}
	if (argc - optind != 2)
		usage();
	stat_mode = !strcmp(argv[optind], "stat");
	if (!stat_mode && strcmp(argv[optind], "access"))
		usage();
	read_list(argv[optind + 1]);
	kfd = open(knob, O_WRONLY);
	if (kfd < 0)
		die(knob);
	none_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none_page == MAP_FAILED)
		die("mmap");
	setup_fds();
	set_state(state);
	for (pass = 0; pass < NPASS; pass++) {
		set_knob(kfd, pass == 1 ? "1" : "0");
		cur = 0;
		if (stat_mode)
			stat_calls();
		else
			access_calls();
		if (cur != nrecs) {
			printf("MISMATCH pass %d made %zu calls, pass A %zu\n", pass, cur, nrecs);
			mismatches++;
		}
	}
	compare();
	printf("scdiff: state=%s calls=%zu mismatches=%d unsettled=%d\n", state, nrecs,
	       mismatches, unsettled);
	return mismatches ? 1 : 0;
}
