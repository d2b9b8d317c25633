// SPDX-License-Identifier: GPL-2.0
/*
 * permdiff: differential tester of the search permission of directories
 * (the lookup_exec optimization): the calls that walk through
 * directories of every mode, owner and ACL, made as every credential
 * state, knob off vs on.
 *
 * usage: permdiff [-I MAPDIR] KNOBFILE DIR [PATH...]
 *
 * As root, DIR gets one directory per case below, each holding a file f
 * (0644), a directory s (0755) and s/f.  The cases: modes that grant the
 * search to all, to some or to none (0755, 0711, 0111, 0777, 01777,
 * 0751, 0705, 0750, 0700, 0070, 0007, 0000), owned by root or by USER or
 * by group USER; and access ACLs (system.posix_acl_access) that refuse
 * USER or group USER what the mode bits would grant, or grant what they
 * would refuse, with a default ACL that s inherits.  Each PATH (an
 * existing tree: the ext4 image, whose ACLs no one has asked for yet) is
 * walked as it is.
 *
 * Then, for each credential state (creds.h: root, user, other, group,
 * userns, capdrop, capdrop-all, fsuid, keepcaps), a child takes it and
 * makes every call three times: pass A with the knob at 0, B at 1, A' at
 * 0.  The calls, for each case directory D: lstat of D/f, D/s and D/s/f,
 * stat of D/s/, access(D/s/f, F_OK and X_OK), faccessat2 with AT_EACCESS,
 * open of D/s/f, open of D with O_DIRECTORY and O_PATH, chdir to D/s and
 * back, mkdir and rmdir of D/s/n, readlink of D/s/f; for each PATH the
 * lstat, stat and access.  A record (return value, errno, and the stat
 * fields: mode, inode, links, owner, size) of B is wrong when it equals
 * neither A's nor A''s.
 *
 * With -I, the calls walk the cases through MAPDIR, an idmapped bind mount
 * of DIR (mount_setattr(MOUNT_ATTR_IDMAP)) that swaps USER and USER + 1
 * and maps every other id to itself: the user's directories are then
 * other's, the ACL entries naming USER name USER + 1, and nobody is the
 * owner by the unmapped ids.  Exit 3 where no idmapped mount can be made:
 * t_lookup_exec tells a kernel without mount_setattr() from a failure by
 * the kernel's symbols.
 *
 * Output: one line per wrong record, then
 *   permdiff: calls=C mismatches=M unsettled=U
 * Exit 0 iff M == 0, 1 on mismatch or setup error, 2 on usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common.h"
#include "creds.h"

#define USER		1000
#define NPASS		3
#define CALLS_MAX	20000

/* POSIX ACL xattr format (linux/posix_acl_xattr.h). */
#define ACL_VERSION	2
#define A_USER_OBJ	0x01
#define A_USER		0x02
#define A_GROUP_OBJ	0x04
#define A_GROUP		0x08
#define A_MASK		0x10
#define A_OTHER		0x20

struct ace {
	uint16_t tag, perm;
	uint32_t id;
};

struct acl {
	int n;
	struct ace e[6];
};

struct kase {
	const char *name;
	mode_t mode;
	unsigned int uid, gid;
	const struct acl *access, *dflt;
};

/* u::rwx u:USER:--- g::r-x m::r-x o::r-x: mode 0755, USER refused. */
static const struct acl deny_user = { 5, {
	{ A_USER_OBJ, 7, 0 }, { A_USER, 0, USER }, { A_GROUP_OBJ, 5, 0 },
	{ A_MASK, 5, 0 }, { A_OTHER, 5, 0 } } };
/* u::rwx g::r-x g:USER:--- m::r-x o::r-x: group USER refused. */
static const struct acl deny_group = { 5, {
	{ A_USER_OBJ, 7, 0 }, { A_GROUP_OBJ, 5, 0 }, { A_GROUP, 0, USER },
	{ A_MASK, 5, 0 }, { A_OTHER, 5, 0 } } };
/* u::rwx u:USER:--x g::--- m::--x o::---: mode 0710, USER let through. */
static const struct acl grant_user = { 5, {
	{ A_USER_OBJ, 7, 0 }, { A_USER, 1, USER }, { A_GROUP_OBJ, 0, 0 },
	{ A_MASK, 1, 0 }, { A_OTHER, 0, 0 } } };
/* u::rwx u:USER:rwx g::r-x m::--- o::r-x: mode 0705, the mask refuses. */
static const struct acl masked = { 5, {
	{ A_USER_OBJ, 7, 0 }, { A_USER, 7, USER }, { A_GROUP_OBJ, 5, 0 },
	{ A_MASK, 0, 0 }, { A_OTHER, 5, 0 } } };
/* The mode bits as an ACL: the kernel keeps none. */
static const struct acl plain = { 3, {
	{ A_USER_OBJ, 7, 0 }, { A_GROUP_OBJ, 5, 0 }, { A_OTHER, 5, 0 } } };

static const struct kase cases[] = {
	{ "m755", 0755, 0, 0, NULL, NULL },
	{ "m711", 0711, 0, 0, NULL, NULL },
	{ "m111", 0111, 0, 0, NULL, NULL },
	{ "m777", 0777, 0, 0, NULL, NULL },
	{ "m1777", 01777, 0, 0, NULL, NULL },
	{ "m751", 0751, 0, 0, NULL, NULL },
	{ "m705", 0705, 0, 0, NULL, NULL },
	{ "m750", 0750, 0, 0, NULL, NULL },
	{ "m700", 0700, 0, 0, NULL, NULL },
	{ "m070", 0070, 0, 0, NULL, NULL },
	{ "m007", 0007, 0, 0, NULL, NULL },
	{ "m000", 0000, 0, 0, NULL, NULL },
	{ "u755", 0755, USER, USER, NULL, NULL },
	{ "u700", 0700, USER, USER, NULL, NULL },
	{ "u070", 0070, USER, USER, NULL, NULL },
	{ "u000", 0000, USER, USER, NULL, NULL },
	{ "g750", 0750, 0, USER, NULL, NULL },
	{ "g710", 0710, 0, USER, NULL, NULL },
	{ "g705", 0705, 0, USER, NULL, NULL },
	{ "acl-deny-user", 0755, 0, 0, &deny_user, NULL },
	{ "acl-deny-group", 0755, 0, 0, &deny_group, NULL },
	{ "acl-grant-user", 0700, 0, 0, &grant_user, NULL },
	{ "acl-masked", 0755, 0, 0, &masked, NULL },
	{ "acl-plain", 0755, 0, 0, &plain, NULL },
	{ "acl-owner-deny", 0755, USER, USER, &deny_user, NULL },
	{ "acl-default", 0755, 0, 0, NULL, &deny_user },
};

#ifndef SYS_open_tree
#define SYS_open_tree		428
#define SYS_move_mount		429
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr	442
#endif
#define VF_OPEN_TREE_CLONE	1
#define VF_MOVE_MOUNT_F_EMPTY_PATH 0x4
#define VF_MOUNT_ATTR_IDMAP	0x100000

struct vf_mount_attr {
	uint64_t attr_set, attr_clr, propagation, userns_fd;
};

struct rec {
	char what[96];
	long ret;
	int err;
	char out[96];
};

static struct rec *recs[NPASS];
static int nrec[NPASS], pass;
static char dir[512];

static void die(const char *what)
{
	fprintf(stderr, "permdiff: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void record(const char *what, const char *path, long ret, const struct stat *st)
{
	struct rec *r;

	if (nrec[pass] == CALLS_MAX) {
		fprintf(stderr, "permdiff: more than %d calls\n", CALLS_MAX);
		exit(1);
	}
	r = &recs[pass][nrec[pass]++];
	snprintf(r->what, sizeof(r->what), "%s %s", what, path);
	r->ret = ret;
	r->err = ret < 0 ? errno : 0;
	if (!ret && st)
		snprintf(r->out, sizeof(r->out), "mode=%o ino=%lu nlink=%lu uid=%u gid=%u size=%lld",
			 st->st_mode, (unsigned long)st->st_ino, (unsigned long)st->st_nlink,
			 st->st_uid, st->st_gid, (long long)st->st_size);
}

static void set_acl(const char *path, const char *name, const struct acl *acl)
{
	char buf[4 + sizeof(acl->e)];
	uint32_t version = ACL_VERSION;
	int i;

	memcpy(buf, &version, 4);
	for (i = 0; i < acl->n; i++)
		memcpy(buf + 4 + i * 8, &acl->e[i], 8);
	if (setxattr(path, name, buf, 4 + acl->n * 8, 0))
		die(path);
}

static void make_case(const struct kase *k)
{
	char p[1024];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, k->name);
	if (mkdir(p, 0700))
		die(p);
	if (k->dflt)
		set_acl(p, "system.posix_acl_default", k->dflt);
	snprintf(p, sizeof(p), "%s/%s/f", dir, k->name);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1)
		die(p);
	close(fd);
	snprintf(p, sizeof(p), "%s/%s/s", dir, k->name);
	if (mkdir(p, 0755) || chmod(p, 0755))
		die(p);
	snprintf(p, sizeof(p), "%s/%s/s/f", dir, k->name);
	fd = open(p, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		die(p);
	close(fd);
	snprintf(p, sizeof(p), "%s/%s", dir, k->name);
	if (chown(p, k->uid, k->gid) || chmod(p, k->mode))
		die(p);
	if (k->access)
		set_acl(p, "system.posix_acl_access", k->access);
}

/*
 * An idmapped bind mount of dir at mapdir, by the mapping of a user
 * namespace that a child holds while its maps are written.
 */
static int map_mount(const char *mapdir)
{
	static const char map[] = "0 0 1000\n1000 1001 1\n1001 1000 1\n1002 1002 100000\n";
	struct vf_mount_attr attr = { .attr_set = VF_MOUNT_ATTR_IDMAP };
	int sync[2], tree, ns, i;
	char p[64], c;
	pid_t pid;

	if (pipe(sync))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(sync[1]);
		if (unshare(CLONE_NEWUSER))
			_exit(1);
		(void)!read(sync[0], &c, 1);
		_exit(0);
	}
	close(sync[0]);
	snprintf(p, sizeof(p), "/proc/%d/ns/user", pid);
	for (i = 0; i < 1000; i++) {	/* until the child has unshared */
		struct stat a, b;

		if (!stat(p, &a) && !stat("/proc/self/ns/user", &b) && a.st_ino != b.st_ino)
			break;
		usleep(1000);
	}
	for (i = 0; i < 2; i++) {
		int fd;

		snprintf(p, sizeof(p), "/proc/%d/%s", pid, i ? "gid_map" : "uid_map");
		fd = open(p, O_WRONLY);
		if (fd < 0 || write(fd, map, sizeof(map) - 1) != sizeof(map) - 1)
			die(p);
		close(fd);
	}
	snprintf(p, sizeof(p), "/proc/%d/ns/user", pid);
	ns = open(p, O_RDONLY);
	if (ns < 0)
		die(p);
	close(sync[1]);
	waitpid(pid, NULL, 0);
	attr.userns_fd = ns;
	tree = syscall(SYS_open_tree, AT_FDCWD, dir, VF_OPEN_TREE_CLONE | O_CLOEXEC);
	if (tree < 0 || syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof(attr))) {
		printf("permdiff: no idmapped mount of %s here: %s\n", dir, strerror(errno));
		return 3;
	}
	if (syscall(SYS_move_mount, tree, "", AT_FDCWD, mapdir, VF_MOVE_MOUNT_F_EMPTY_PATH))
		die(mapdir);
	close(tree);
	close(ns);
	return 0;
}

static void stat_call(const char *what, const char *path, int follow)
{
	struct stat st;
	long r;

	memset(&st, 0, sizeof(st));
	r = follow ? stat(path, &st) : lstat(path, &st);
	record(what, path, r, &st);
}

static void case_calls(const char *name, int here)
{
	char d[1024], p[1100];
	long r;

	snprintf(d, sizeof(d), "%s/%s", dir, name);
	snprintf(p, sizeof(p), "%s/f", d);
	stat_call("lstat", p, 0);
	snprintf(p, sizeof(p), "%s/s", d);
	stat_call("lstat", p, 0);
	snprintf(p, sizeof(p), "%s/s/", d);
	stat_call("stat", p, 1);
	snprintf(p, sizeof(p), "%s/s/f", d);
	stat_call("lstat", p, 0);
	record("access/F", p, access(p, F_OK), NULL);
	record("access/X", p, access(p, X_OK), NULL);
	record("faccessat2/R/EACCESS", p,
	       syscall(SYS_faccessat2, AT_FDCWD, p, R_OK, AT_EACCESS), NULL);
	r = open(p, O_RDONLY);
	record("open", p, r < 0 ? r : 0, NULL);
	if (r >= 0)
		close(r);
	r = open(d, O_RDONLY | O_DIRECTORY);
	record("open/DIRECTORY", d, r < 0 ? r : 0, NULL);
	if (r >= 0)
		close(r);
	r = open(d, O_PATH);
	record("open/PATH", d, r < 0 ? r : 0, NULL);
	if (r >= 0)
		close(r);
	snprintf(p, sizeof(p), "%s/s", d);
	r = chdir(p);
	record("chdir", p, r, NULL);
	if (!r && fchdir(here))
		die("fchdir");
	snprintf(p, sizeof(p), "%s/s/n", d);
	r = mkdir(p, 0755);
	record("mkdir", p, r, NULL);
	if (!r)
		record("rmdir", p, rmdir(p), NULL);
	snprintf(p, sizeof(p), "%s/s/f", d);
	record("readlink", p, readlink(p, d, sizeof(d)), NULL);
}

static void path_calls(const char *path)
{
	stat_call("lstat", path, 0);
	stat_call("stat", path, 1);
	record("access/R", path, access(path, R_OK), NULL);
}

static void set_knob(int fd, const char *v)
{
	if (pwrite(fd, v, 1, 0) != 1)
		die("knob");
}

/* One credential state: the three passes and the comparison. */
static int run_state(const char *state, int knob, int npaths, char **paths)
{
	int i, n, here, mismatches = 0, unsettled = 0;
	int r = set_cred_state(state, USER);

	if (r)
		die(state);
	here = open(".", O_RDONLY | O_DIRECTORY);
	if (here < 0)
		die(".");
	for (pass = 0; pass < NPASS; pass++) {
		set_knob(knob, pass == 1 ? "1" : "0");
		nrec[pass] = 0;
		for (i = 0; i < (int)ARRAY_SIZE(cases); i++)
			case_calls(cases[i].name, here);
		for (i = 0; i < npaths; i++)
			path_calls(paths[i]);
	}
	set_knob(knob, "0");
	n = nrec[0];
	if (nrec[1] != n || nrec[2] != n) {
		printf("permdiff %s: %d, %d and %d calls in the passes\n", state, n, nrec[1], nrec[2]);
		return 1;
	}
	for (i = 0; i < n; i++) {
		struct rec *a = &recs[0][i], *b = &recs[1][i], *a2 = &recs[2][i];

		if (memcmp(a, a2, sizeof(*a)))
			unsettled++;
		if (!memcmp(a, b, sizeof(*a)) || !memcmp(a2, b, sizeof(*a)))
			continue;
		printf("%s %s: off %ld/%d [%s], on %ld/%d [%s]\n", state, a->what, a->ret,
		       a->err, a->out, b->ret, b->err, b->out);
		mismatches++;
	}
	printf("permdiff %s: calls=%d mismatches=%d unsettled=%d\n", state, n, mismatches,
	       unsettled);
	fflush(stdout);
	return mismatches ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const char *const states[] = {
		"root", "user", "other", "group", "userns", "capdrop", "capdrop-all",
		"fsuid", "keepcaps",
	};
	const char *mapdir = NULL;
	int knob, i, total = 0, bad = 0, status;

	if (argc > 2 && !strcmp(argv[1], "-I")) {
		mapdir = argv[2];
		argc -= 2;
		argv += 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: permdiff [-I MAPDIR] KNOBFILE DIR [PATH...]\n");
		return 2;
	}
	knob = open(argv[1], O_WRONLY);
	if (knob < 0)
		die(argv[1]);
	snprintf(dir, sizeof(dir), "%s", argv[2]);
	if (chmod(dir, 0755))
		die(dir);
	for (i = 0; i < (int)ARRAY_SIZE(cases); i++)
		make_case(&cases[i]);
	if (mapdir) {
		i = map_mount(mapdir);
		if (i)
			return i;
		snprintf(dir, sizeof(dir), "%s", mapdir);
	}
	for (i = 0; i < NPASS; i++) {
		recs[i] = calloc(CALLS_MAX, sizeof(struct rec));
		if (!recs[i])
			die("calloc");
	}
	for (i = 0; i < (int)ARRAY_SIZE(states); i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork");
		if (!pid)
			_exit(run_state(states[i], knob, argc - 3, argv + 3));
		if (waitpid(pid, &status, 0) != pid)
			die("waitpid");
		total++;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	printf("permdiff: states=%d failed=%d\n", total, bad);
	return bad ? 1 : 0;
}
