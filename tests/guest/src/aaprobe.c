// SPDX-License-Identifier: GPL-2.0
/*
 * aaprobe: the path-taking calls an AppArmor profile mediates, and the
 * ones it does not, made once on each PATH, one record per call, so that
 * t_apparmor can run it confined with the knobs off, on and off again and
 * compare what the profile allowed and denied.
 *
 * usage: aaprobe PATH...
 *
 * For each PATH: lstat, stat, access(F_OK), access(X_OK), open
 * O_RDONLY, open O_WRONLY, open O_RDONLY|O_DIRECTORY, open O_PATH,
 * readlink, chdir (and back), mkdir and rmdir of PATH/n, create and
 * unlink of PATH/c, rename of PATH/c to PATH/r and back.
 *
 * Output: "PATH CALL RET ERRNO [MODE INODE]" per call, the stat fields
 * where the call succeeded.  Exit 0, or 2 on a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common.h"

static void rec(const char *path, const char *call, long ret, int err)
{
	put_escaped(stdout, path);
	printf(" %s %ld %d\n", call, ret, ret < 0 ? err : 0);
}

static void rec_stat(const char *path, const char *call, int ret, int err,
		     const struct stat *st)
{
	put_escaped(stdout, path);
	if (ret < 0)
		printf(" %s %d %d\n", call, ret, err);
	else
		printf(" %s 0 0 %o %lu\n", call, (unsigned int)st->st_mode,
		       (unsigned long)st->st_ino);
}

/* Each call's errno is read after it: an argument's order is unspecified. */
#define REC(name, expr) do {						\
	long _r = (expr);						\
	rec(p, name, _r, errno);					\
} while (0)
#define REC_FD(name, expr) do {						\
	int _fd = (expr);						\
	rec(p, name, _fd < 0 ? _fd : 0, errno);				\
	if (_fd >= 0)							\
		close(_fd);						\
} while (0)
#define REC_STAT(name, fn) do {						\
	struct stat _st;						\
	int _r = fn(p, &_st);						\
	rec_stat(p, name, _r, errno, &_st);				\
} while (0)

static void probe(const char *p, int cwd)
{
	char sub[PATH_MAX], to[PATH_MAX], buf[PATH_MAX];
	int ret;

	REC_STAT("lstat", lstat);
	REC_STAT("stat", stat);
	REC("access-f", access(p, F_OK));
	REC("access-x", access(p, X_OK));
	REC_FD("open-r", open(p, O_RDONLY));
	REC_FD("open-w", open(p, O_WRONLY));
	REC_FD("open-dir", open(p, O_RDONLY | O_DIRECTORY));
	REC_FD("open-path", open(p, O_PATH));
	REC("readlink", readlink(p, buf, sizeof(buf)));
	ret = chdir(p);
	rec(p, "chdir", ret, errno);
	if (ret == 0 && fchdir(cwd) < 0)
		exit(1);

	snprintf(sub, sizeof(sub), "%s/n", p);
	ret = mkdir(sub, 0755);
	rec(p, "mkdir", ret, errno);
	if (ret == 0)
		REC("rmdir", rmdir(sub));

	snprintf(sub, sizeof(sub), "%s/c", p);
	snprintf(to, sizeof(to), "%s/r", p);
	REC_FD("create", open(sub, O_WRONLY | O_CREAT | O_EXCL, 0644));
	ret = rename(sub, to);
	rec(p, "rename", ret, errno);
	if (ret == 0)
		REC("rename-back", rename(to, sub));
	REC("unlink", unlink(sub));
}

int main(int argc, char **argv)
{
	int cwd, i;

	if (argc < 2) {
		fprintf(stderr, "usage: aaprobe PATH...\n");
		return 2;
	}
	cwd = open(".", O_PATH | O_DIRECTORY);
	if (cwd < 0) {
		perror("aaprobe: .");
		return 2;
	}
	for (i = 1; i < argc; i++)
		probe(argv[i], cwd);
	return 0;
}
