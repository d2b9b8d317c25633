// SPDX-License-Identifier: GPL-2.0
/*
 * ablat: run a command with per-syscall latency histograms (libbpf).
 *
 * usage: ablat BPF_OBJECT OUTFILE COMMAND [ARG...]
 *
 * Loads BPF_OBJECT (ablat.bpf.o: raw_tp/sys_enter and sys_exit), counts
 * the syscalls of COMMAND and its descendants, and after COMMAND exits
 * writes one line per histogram bucket to OUTFILE: "<nr> <bucket>
 * <count>", bucket = 64 * log2(ns) + the next six bits (below 64 ns,
 * 64 * log2(ns) + ns - 2^log2(ns)).  Exits with the
 * command's status (128 + signal if killed), or 3 when the BPF part
 * cannot be set up (message on stderr: no BTF, no permission, ...), in
 * which case the command is not run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

int main(int argc, char **argv)
{
	struct bpf_object *obj;
	struct bpf_program *prog;
	struct bpf_map *cfg, *hist;
	int go[2], status, fd, err;
	__u32 key, next, zero = 0, root;
	__u64 count;
	char c = 1;
	FILE *out;
	pid_t pid;

	if (argc < 4) {
		fprintf(stderr, "usage: ablat BPF_OBJECT OUTFILE COMMAND [ARG...]\n");
		return 2;
	}
	libbpf_set_print(quiet);
	if (pipe(go))
		return perror("ablat: pipe"), 3;
	pid = fork();
	if (pid < 0)
		return perror("ablat: fork"), 3;
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(3);	/* the parent could not set up: run nothing */
		close(go[0]);
		execvp(argv[3], argv + 3);
		fprintf(stderr, "ablat: %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj) {
		fprintf(stderr, "ablat: cannot open %s: %s\n", argv[1], strerror(errno));
		goto fail;
	}
	err = bpf_object__load(obj);
	if (err) {
		fprintf(stderr, "ablat: cannot load %s: %s (kernel BTF: %s)\n", argv[1],
			strerror(-err), access("/sys/kernel/btf/vmlinux", R_OK) ? "missing" : "present");
		goto fail;
	}
	cfg = bpf_object__find_map_by_name(obj, "cfg");
	hist = bpf_object__find_map_by_name(obj, "hist");
	if (!cfg || !hist) {
		fprintf(stderr, "ablat: %s lacks the cfg or hist map\n", argv[1]);
		goto fail;
	}
	root = (__u32)pid;
	if (bpf_map_update_elem(bpf_map__fd(cfg), &zero, &root, BPF_ANY)) {
		perror("ablat: cfg");
		goto fail;
	}
	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__attach(prog)) {
			fprintf(stderr, "ablat: cannot attach %s: %s\n", bpf_program__name(prog),
				strerror(errno));
			goto fail;
		}
	}
	if (write(go[1], &c, 1) != 1)
		goto fail;
	close(go[1]);
	if (waitpid(pid, &status, 0) < 0)
		return perror("ablat: waitpid"), 3;
	out = fopen(argv[2], "w");
	if (!out)
		return perror(argv[2]), 3;
	fd = bpf_map__fd(hist);
	for (err = bpf_map_get_next_key(fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		if (!bpf_map_lookup_elem(fd, &next, &count))
			fprintf(out, "%u %u %llu\n", next >> 12, next & 0xfff,
				(unsigned long long)count);
		key = next;
	}
	if (fclose(out))
		return perror(argv[2]), 3;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
fail:
	close(go[1]);	/* the child sees EOF and exits 3 */
	waitpid(pid, &status, 0);
	return 3;
}
