// SPDX-License-Identifier: GPL-2.0
/*
 * bpfentry: a BPF fentry program on a kernel function, with raw bpf(2).
 *
 * usage: bpfentry FUNC STOPFILE
 *
 * Finds FUNC in the kernel's BTF (/sys/kernel/btf/vmlinux), loads a
 * BPF_TRACE_FENTRY program that counts its calls in an array map, and
 * attaches it: the kernel builds a BPF trampoline and makes it the
 * function's direct call, as bpftrace and libbpf tools do.  Prints
 * "attached" and waits until STOPFILE exists, then prints "calls=N" and
 * exits 0.  If the kernel refuses the program or the attachment, prints
 * "refused: <step>: <errno name>" and exits 3.  Exits 2 on usage error or
 * when the kernel has no BTF.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpfraw.h"
#include "common.h"

int main(int argc, char **argv)
{
	static char log[65536];
	union bpf_attr a;
	int id, map, prog, link;
	unsigned int key = 0;
	unsigned long long calls = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: bpfentry FUNC STOPFILE\n");
		return 2;
	}
	id = btf_func_id(argv[1]);
	if (id < 0) {
		printf("no BTF id for %s\n", argv[1]);
		return 2;
	}
	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 1;
	map = bpf(BPF_MAP_CREATE, &a);
	if (map < 0) {
		printf("refused: map: %s\n", strerrorname_np(errno));
		return 3;
	}
	{
		/* value = map_lookup_elem(map, &0); if (value) *value += 1 (atomic) */
		struct bpf_insn insns[] = {
			INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, 0),
			INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map),
			INSN(0, 0, 0, 0, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0),
			INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4),
			INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem),
			INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, 2, 0),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1),
			INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD),
			INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
			INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		};

		prog = bpf_load_at(BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, id, insns,
				   ARRAY_SIZE(insns), log, sizeof(log));
		if (prog < 0) {
			printf("refused: load: %s\n", strerrorname_np(errno));
			fprintf(stderr, "%s\n", log);
			return 3;
		}
	}
	link = bpf_attach(prog);
	if (link < 0) {
		printf("refused: attach: %s\n", strerrorname_np(errno));
		return 3;
	}
	printf("attached\n");
	fflush(stdout);
	while (access(argv[2], F_OK))
		usleep(20000);
	memset(&a, 0, sizeof(a));
	a.map_fd = map;
	a.key = (unsigned long)&key;
	a.value = (unsigned long)&calls;
	if (bpf(BPF_MAP_LOOKUP_ELEM, &a)) {
		printf("lookup: %s\n", strerrorname_np(errno));
		return 1;
	}
	printf("calls=%llu\n", calls);
	return 0;
}
