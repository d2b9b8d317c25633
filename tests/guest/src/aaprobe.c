// SPDX-License-Identifier: GPL-2.0
/*
 * aaprobe: the path-taking calls that AppArmor and Landlock mediate, and
 * the ones they do not, made once on each PATH, one record per call, so
 * that t_lsm can run it confined with the knobs off, on and off again and
 * compare what the LSM allowed and denied.
 *
 * usage: aaprobe [-w DIR]... [-r DIR]... PATH...
 *
 * With -w or -r, aaprobe first restricts itself with a Landlock ruleset
 * (ABI 1's file-system rights, all handled): every right beneath each -w
 * DIR, reading, listing and executing beneath each -r DIR, nothing
 * elsewhere.  Exit 3 where no ruleset can be made: t_lsm tells a kernel
 * without Landlock from a failure by the kernel's symbols.
 *
 * For each PATH: lstat, stat, access(F_OK), access(X_OK), open
 * O_RDONLY, open O_WRONLY, open O_RDONLY|O_DIRECTORY, open O_PATH,
 * readlink, chdir (and back), mkdir and rmdir of PATH/n, create and
 * unlink of PATH/c, rename of PATH/c to PATH/r and back.
 *
 * Output: "PATH CALL RET ERRNO [MODE INODE]" per call, the stat fields
 * where the call succeeded.  Exit 0, 1 if the ruleset cannot be made, 2
 * on a usage error, 3 without Landlock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

/* Landlock's ABI 1 (linux/landlock.h), which the host's headers may lack. */
#define LL_CREATE_RULESET	444
#define LL_ADD_RULE		445
#define LL_RESTRICT_SELF	446
#define LL_RULE_PATH_BENEATH	1
#define LL_ACCESS_ALL		0x1fffULL	/* EXECUTE .. MAKE_SYM */
#define LL_ACCESS_READ		0xdULL		/* EXECUTE, READ_FILE, READ_DIR */

/*
 * The kernel's struct is packed (12 bytes) and copies that many: these
 * fields lie at the same offsets, only the padding after them differs.
 */
struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
};

static int restrict_self(int argc, char **argv, int *first)
{
	uint64_t handled = LL_ACCESS_ALL;
	int ruleset, i;

	ruleset = syscall(LL_CREATE_RULESET, &handled, sizeof(handled), 0);
	if (ruleset < 0) {
		fprintf(stderr, "aaprobe: landlock_create_ruleset: %s\n", strerror(errno));
		return 3;
	}
	for (i = 1; i + 1 < argc && (!strcmp(argv[i], "-w") || !strcmp(argv[i], "-r")); i += 2) {
		struct ll_path_beneath rule = {
			.allowed_access = argv[i][1] == 'w' ? LL_ACCESS_ALL : LL_ACCESS_READ,
			.parent_fd = open(argv[i + 1], O_PATH | O_DIRECTORY),
		};

		if (rule.parent_fd < 0 ||
		    syscall(LL_ADD_RULE, ruleset, LL_RULE_PATH_BENEATH, &rule, 0)) {
			fprintf(stderr, "aaprobe: %s: %s\n", argv[i + 1], strerror(errno));
			return 1;
		}
		close(rule.parent_fd);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || syscall(LL_RESTRICT_SELF, ruleset, 0)) {
		fprintf(stderr, "aaprobe: landlock_restrict_self: %s\n", strerror(errno));
		return 1;
	}
	close(ruleset);
	*first = i;
	return 0;
}

int main(int argc, char **argv)
{
	int cwd, i = 1, r;

	if (argc > 1 && (!strcmp(argv[1], "-w") || !strcmp(argv[1], "-r"))) {
		r = restrict_self(argc, argv, &i);
		if (r)
			return r;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: aaprobe [-w DIR]... [-r DIR]... PATH...\n");
		return 2;
	}
	cwd = open(".", O_PATH | O_DIRECTORY);
	if (cwd < 0) {
		perror("aaprobe: .");
		return 2;
	}
	for (; i < argc; i++)
		probe(argv[i], cwd);
	return 0;
}
