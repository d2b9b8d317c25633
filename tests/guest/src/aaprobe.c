// SPDX-License-Identifier: GPL-2.0
/*
 * aaprobe: the path-taking calls that AppArmor and Landlock mediate, and
 * the ones they do not, made once on each PATH, one record per call, so
 * that t_lsm can run it confined with the knobs off, on and off again and
 * compare what the LSM allowed and denied.
 *
 * usage: aaprobe [-b INO] [-U UID] [-w DIR]... [-r DIR]... PATH...
 *
 * With -b, aaprobe first loads a BPF LSM program on inode_permission
 * (raw bpf(2), the kernel's BTF) that counts the hook's calls made by
 * aaprobe and refuses MAY_EXEC on the inode numbered INO (0: none), and
 * each record ends with " h=N", the hook's calls during that call: the
 * LSM hook must see every check it saw with the knobs off.  Exit 3 where
 * the program cannot be loaded or attached: t_lsm tells a kernel without
 * the BPF LSM from a failure by its LSM list.  With -U, aaprobe then
 * becomes UID (its group too, no supplementary groups, no capabilities).
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
 * Output: "PATH CALL RET ERRNO [MODE INODE] [h=N]" per call, the stat
 * fields where the call succeeded, the hook's calls with -b.  Exit 0, 1
 * if the ruleset cannot be made or the user not become, 2 on a usage
 * error, 3 without Landlock (-w, -r) or the BPF LSM (-b).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfraw.h"
#include "common.h"

/* The -b program's map: [0] the hook's calls, [1] the inode refused. */
static int hook_map = -1;
static unsigned long long hook_seen;

/* " h=N", the hook's calls since the last record; nothing without -b. */
static void hook_calls(void)
{
	unsigned long long v[2];
	unsigned int key = 0;
	union bpf_attr a;

	if (hook_map < 0)
		return;
	memset(&a, 0, sizeof(a));
	a.map_fd = hook_map;
	a.key = (unsigned long)&key;
	a.value = (unsigned long)v;
	if (bpf(BPF_MAP_LOOKUP_ELEM, &a)) {
		perror("aaprobe: map lookup");
		exit(1);
	}
	printf(" h=%llu", v[0] - hook_seen);
	hook_seen = v[0];
}

static void rec(const char *path, const char *call, long ret, int err)
{
	put_escaped(stdout, path);
	printf(" %s %ld %d", call, ret, ret < 0 ? err : 0);
	hook_calls();
	putchar('\n');
}

static void rec_stat(const char *path, const char *call, int ret, int err,
		     const struct stat *st)
{
	put_escaped(stdout, path);
	if (ret < 0)
		printf(" %s %d %d", call, ret, err);
	else
		printf(" %s 0 0 %o %lu", call, (unsigned int)st->st_mode,
		       (unsigned long)st->st_ino);
	hook_calls();
	putchar('\n');
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

/*
 * The -b program, on bpf_lsm_inode_permission(inode, mask): for aaprobe's
 * own calls (its tgid), count, then return -EACCES when MAY_EXEC is asked
 * of the inode numbered map[1].
 */
static int bpf_lsm(unsigned long long ino)
{
	static char log[65536];
	unsigned long long v[2] = { 0, ino };
	unsigned int key = 0;
	int id = btf_func_id("bpf_lsm_inode_permission");
	int i_ino = btf_member_offset("inode", "i_ino");
	union bpf_attr a;
	int prog;

	if (id < 0 || i_ino < 0) {
		fprintf(stderr, "aaprobe: no BTF for bpf_lsm_inode_permission or inode.i_ino\n");
		return 3;
	}
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = sizeof(v);
	a.max_entries = 1;
	hook_map = bpf(BPF_MAP_CREATE, &a);
	memset(&a, 0, sizeof(a));
	a.map_fd = hook_map;
	a.key = (unsigned long)&key;
	a.value = (unsigned long)v;
	if (hook_map < 0 || bpf(BPF_MAP_UPDATE_ELEM, &a)) {
		perror("aaprobe: map");
		return 3;
	}
	{
		struct bpf_insn insns[] = {
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_current_pid_tgid),
			INSN(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_0, 0, 0, 32),
			INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_0, 0, 19, getpid()),
			INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
			INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, hook_map),
			INSN(0, 0, 0, 0, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
			INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 12, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
			INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),
			/* refused: map[1] && (mask & MAY_EXEC) && inode->i_ino == map[1] */
			INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_0, 8, 0),
			INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_1, 0, 8, 0),
			INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_2, BPF_REG_6, 8, 0),
			INSN(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 1),
			INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_2, 0, 5, 0),
			INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_3, BPF_REG_6, 0, 0),
			INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_3, BPF_REG_3, i_ino, 0),
			INSN(BPF_JMP | BPF_JNE | BPF_X, BPF_REG_3, BPF_REG_1, 2, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, -EACCES),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};

		prog = bpf_load_at(BPF_PROG_TYPE_LSM, BPF_LSM_MAC, id, insns,
				   ARRAY_SIZE(insns), log, sizeof(log));
		if (prog < 0) {
			fprintf(stderr, "aaprobe: BPF LSM program refused: %s\n%s\n",
				strerror(errno), log);
			return 3;
		}
	}
	if (bpf_attach(prog) < 0) {
		fprintf(stderr, "aaprobe: BPF LSM attach: %s\n", strerror(errno));
		return 3;
	}
	return 0;
}

static int become(const char *uid)
{
	uid_t u = strtoul(uid, NULL, 10);

	if (setgroups(0, NULL) || setresgid(u, u, u) || setresuid(u, u, u)) {
		perror("aaprobe: -U");
		return 1;
	}
	return 0;
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
	for (i = *first; i + 1 < argc && (!strcmp(argv[i], "-w") || !strcmp(argv[i], "-r")); i += 2) {
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
	const char *uid = NULL;

	for (; i + 1 < argc && (!strcmp(argv[i], "-b") || !strcmp(argv[i], "-U")); i += 2) {
		if (argv[i][1] == 'U') {
			uid = argv[i + 1];
			continue;
		}
		r = bpf_lsm(strtoull(argv[i + 1], NULL, 10));
		if (r)
			return r;
	}
	if (uid && become(uid))
		return 1;
	if (i < argc && (!strcmp(argv[i], "-w") || !strcmp(argv[i], "-r"))) {
		r = restrict_self(argc, argv, &i);
		if (r)
			return r;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: aaprobe [-b INO] [-U UID] [-w DIR]... [-r DIR]... PATH...\n");
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
