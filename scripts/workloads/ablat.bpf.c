// SPDX-License-Identifier: GPL-2.0
/*
 * ablat.bpf.c: per-syscall latency histograms for vfsfast-ab --latency.
 *
 * raw_tp/sys_enter notes the time and syscall number per thread;
 * raw_tp/sys_exit adds the duration to hist[nr << 12 | bucket].  Only the
 * workload is counted: the task whose tgid is cfg[0], and its children
 * and grandchildren (real_parent, read with CO-RE relocations, so one
 * object runs on every kernel with BTF).  Buckets: 64 per power of two
 * (1.6% wide), bucket = 64 * log2(ns) + the next six bits; below 64 ns
 * every value has its own bucket.
 */
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

struct task_struct {
	int tgid;
	struct task_struct *real_parent;
} __attribute__((preserve_access_index));

struct start {
	__u64 ts;
	__u32 nr;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);
	__type(value, struct start);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u64);
} hist SEC(".maps");

static __always_inline int tracked(void)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	__u32 zero = 0, *root = bpf_map_lookup_elem(&cfg, &zero);
	int i;

	if (!root || !*root)
		return 0;
	for (i = 0; i < 4; i++) {
		if (!t)
			return 0;
		if ((__u32)BPF_CORE_READ(t, tgid) == *root)
			return 1;
		t = BPF_CORE_READ(t, real_parent);
	}
	return 0;
}

static __always_inline __u32 bucket(__u64 d)
{
	__u64 v = d;
	__u32 l = 0;

	if (v >> 32) {
		v >>= 32;
		l += 32;
	}
	if (v >> 16) {
		v >>= 16;
		l += 16;
	}
	if (v >> 8) {
		v >>= 8;
		l += 8;
	}
	if (v >> 4) {
		v >>= 4;
		l += 4;
	}
	if (v >> 2) {
		v >>= 2;
		l += 2;
	}
	if (v >> 1)
		l += 1;
	if (l >= 6)
		return l * 64 + ((__u32)(d >> (l - 6)) & 63);
	return l * 64 + (__u32)(d - (1ULL << l));
}

SEC("raw_tp/sys_enter")
int on_enter(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct start s;

	if (!tracked())
		return 0;
	s.ts = bpf_ktime_get_ns();
	s.nr = (__u32)ctx->args[1];
	bpf_map_update_elem(&starts, &id, &s, BPF_ANY);
	return 0;
}

SEC("raw_tp/sys_exit")
int on_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), one = 1, *c;
	struct start *s = bpf_map_lookup_elem(&starts, &id);
	__u32 key;

	if (!s)
		return 0;
	key = (s->nr & 0xfffff) << 12 | bucket(bpf_ktime_get_ns() - s->ts);
	bpf_map_delete_elem(&starts, &id);
	c = bpf_map_lookup_elem(&hist, &key);
	if (c)
		__sync_fetch_and_add(c, 1);
	else
		bpf_map_update_elem(&hist, &key, &one, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
