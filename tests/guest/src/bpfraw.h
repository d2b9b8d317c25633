/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF by raw bpf(2) and the kernel's own BTF, for the guest programs that
 * load a program without libbpf (bpfentry, aaprobe): the lab's programs
 * are static and run on every lab kernel.
 */
#ifndef VFSFAST_GUEST_BPFRAW_H
#define VFSFAST_GUEST_BPFRAW_H

#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Linux 5.12's name; before it the same opcode was BPF_XADD alone. */
#ifndef BPF_ATOMIC
#define BPF_ATOMIC 0xc0
#endif

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })

static inline long bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

struct btf_blob {
	const char *types, *strs;
	unsigned int type_len;
};

/* /sys/kernel/btf/vmlinux, read once; 0, or -1 without it. */
static inline int btf_vmlinux(struct btf_blob *b)
{
	static char buf[16 << 20];
	static ssize_t len;
	const struct btf_header *h = (const void *)buf;
	ssize_t n;
	int fd;

	if (!len) {
		fd = open("/sys/kernel/btf/vmlinux", O_RDONLY);
		if (fd < 0)
			return -1;
		while ((n = read(fd, buf + len, sizeof(buf) - len)) > 0)
			len += n;
		close(fd);
	}
	if (len < (ssize_t)sizeof(*h) || h->magic != BTF_MAGIC)
		return -1;
	b->types = buf + h->hdr_len + h->type_off;
	b->strs = buf + h->hdr_len + h->str_off;
	b->type_len = h->type_len;
	return 0;
}

/*
 * The type of @kind named @name and its id (the first such), or NULL.  Each
 * kind's size: include/uapi/linux/btf.h.
 */
static inline const struct btf_type *btf_find(unsigned int want, const char *name,
					      int *idp)
{
	struct btf_blob b;
	unsigned int off, id = 1;

	if (btf_vmlinux(&b))
		return NULL;
	for (off = 0; off < b.type_len; id++) {
		const struct btf_type *t = (const void *)(b.types + off);
		unsigned int kind = BTF_INFO_KIND(t->info);
		unsigned int vlen = BTF_INFO_VLEN(t->info);

		if (kind == want && !strcmp(b.strs + t->name_off, name)) {
			if (idp)
				*idp = id;
			return t;
		}
		off += sizeof(*t);
		switch (kind) {
		case BTF_KIND_INT: case BTF_KIND_VAR: case 17 /* DECL_TAG */:
			off += 4;
			break;
		case BTF_KIND_ARRAY:
			off += 12;
			break;
		case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_DATASEC:
		case 19 /* ENUM64 */:
			off += 12 * vlen;
			break;
		case BTF_KIND_ENUM: case BTF_KIND_FUNC_PROTO:
			off += 8 * vlen;
			break;
		default:	/* PTR, FWD, TYPEDEF, qualifiers, FUNC, FLOAT, TYPE_TAG */
			break;
		}
	}
	return NULL;
}

/* The BTF type id of the function @name, or -1. */
static inline int btf_func_id(const char *name)
{
	int id;

	return btf_find(BTF_KIND_FUNC, name, &id) ? id : -1;
}

/* The byte offset of @member in struct @sname, or -1 (or a bit field). */
static inline int btf_member_offset(const char *sname, const char *member)
{
	const struct btf_type *t = btf_find(BTF_KIND_STRUCT, sname, NULL);
	const struct btf_member *m;
	struct btf_blob b;
	unsigned int i, bits;

	if (!t || btf_vmlinux(&b))
		return -1;
	m = (const void *)(t + 1);
	for (i = 0; i < BTF_INFO_VLEN(t->info); i++, m++) {
		if (strcmp(b.strs + m->name_off, member))
			continue;
		bits = BTF_INFO_KFLAG(t->info) ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
		return bits % 8 ? -1 : (int)(bits / 8);
	}
	return -1;
}

/*
 * Load @n instructions as a GPL program of @type, to attach at the kernel
 * function whose BTF id is @id: its fd, or -1 with errno set and the
 * verifier's log in @log.
 */
static inline int bpf_load_at(unsigned int type, unsigned int attach, int id,
			      const struct bpf_insn *insns, unsigned int n,
			      char *log, unsigned int log_size)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.expected_attach_type = attach;
	a.attach_btf_id = id;
	a.insns = (unsigned long)insns;
	a.insn_cnt = n;
	a.license = (unsigned long)"GPL";
	a.log_buf = (unsigned long)log;
	a.log_size = log_size;
	a.log_level = 1;
	return bpf(BPF_PROG_LOAD, &a);
}

/* Attach a program loaded by bpf_load_at(): the link's fd, or -1. */
static inline int bpf_attach(int prog)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.prog_fd = prog;
	return bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
}

#endif
