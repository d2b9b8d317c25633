/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every difference between the kernels vfsfast supports lives here.  The
 * VFSFAST_HAVE_* flags come from compile probes (probe.sh, run by Kbuild
 * against the target's headers); the rest of the module uses only the
 * helpers below and never compares version numbers.
 */
#ifndef _VFSFAST_COMPAT_H
#define _VFSFAST_COMPAT_H

#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sysfs.h>

#include "vfsfast_probes.h"
#include "compat_asm.h"

/* ---- compiler --------------------------------------------------------- */

/*
 * noinline, and no clone with a different calling convention either: a
 * function tail-called with its caller's arguments in place must keep
 * them where they are.
 */
#if __has_attribute(__noipa__)
#define vfsfast_noipa	__attribute__((__noipa__))
#else
#define vfsfast_noipa	noinline
#endif

/* ---- architecture ------------------------------------------------------ */

/*
 * What differs between architectures, module/arch/<arch>/arch.h: the
 * argument registers of a function and of a system call
 * (vfsfast_arg_reg(), vfsfast_sc_arg()), the name of a system call's
 * entry (VFSFAST_SYSCALL()), and whether quiesce.c can walk stacks there
 * (VFSFAST_ARCH_NO_QUIESCE).
 */
#include "arch.h"

/*
 * A target list's entry for system call @name (include/vfsfast.h): the
 * entry's name is expanded here, before the list's consumers paste it
 * into the names of its stub and words.
 */
#define VFSFAST_SYSCALL_TARGET(T, name, ...)				\
	VFSFAST_SYSCALL_TARGET_(T, VFSFAST_SYSCALL(name), __VA_ARGS__)
#define VFSFAST_SYSCALL_TARGET_(T, entry, ...)	T(entry, __VA_ARGS__)
/*
 * The stock stub of system call @name's entry, and the same spelled as
 * the lab reads it in VFSFAST_TAIL_CALL() (scripts/lablib/build.py).
 */
#define VFSFAST_SYSCALL_STOCK(name)					\
	VFSFAST_SYSCALL_STOCK_(VFSFAST_SYSCALL(name))
#define VFSFAST_SYSCALL_STOCK_(entry)	VFSFAST_SYSCALL_STOCK__(entry)
#define VFSFAST_SYSCALL_STOCK__(entry)	vfsfast_stock_##entry

/* ---- symbols ------------------------------------------------------------ */

/*
 * One kallsyms pass for every name a load asks for (symbols.c), through
 * kallsyms_on_each_symbol(): not exported, so called through the address
 * a kprobe found, which only a kernel without IBT (it seals the functions
 * whose address the kernel never takes) and without clang's CFI allows.
 * The pass stops at the first symbol of .data, which kallsyms names only
 * with KALLSYMS_ALL: without it, 5.10's walk would run on into the
 * modules' symbols, which it reads only under module_mutex.  The callback
 * lost its module argument in 6.4.  Only kernels without the sorted name
 * index need the pass: with it (kallsyms_on_each_match_symbol() came in
 * the same series) a lookup is a binary search, and the pass would cost
 * more than all of them.
 */
#if defined(CONFIG_KALLSYMS_ALL) && !defined(CONFIG_X86_KERNEL_IBT) && \
	!defined(CONFIG_CFI_CLANG) && !defined(VFSFAST_HAVE_KALLSYMS_MATCH_SYMBOL)
#if defined(VFSFAST_HAVE_KALLSYMS_EACH_MOD)
#define VFSFAST_KALLSYMS_PASS 1
#define VFSFAST_KALLSYMS_EACH_FN(fn)					\
	int fn(void *data, const char *name, struct module *mod,	\
	       unsigned long addr)
#elif defined(VFSFAST_HAVE_KALLSYMS_EACH)
#define VFSFAST_KALLSYMS_PASS 1
#define VFSFAST_KALLSYMS_EACH_FN(fn)					\
	int fn(void *data, const char *name, unsigned long addr)
#endif
#endif

/* ---- ftrace callbacks -------------------------------------------------- */

/* The callback's register argument: struct vfsfast_fregs *. */
#ifdef VFSFAST_HAVE_FTRACE_REGS
#define vfsfast_fregs ftrace_regs
#else
#define vfsfast_fregs pt_regs
#endif

/*
 * Kernels with DYNAMIC_FTRACE_WITH_ARGS let a callback change the return
 * address without saving every register; without it (5.10) IPMODIFY needs
 * the full pt_regs frame.
 */
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_ARGS
#define VFSFAST_FL_SAVE_REGS	0
#else
#define VFSFAST_FL_SAVE_REGS	FTRACE_OPS_FL_SAVE_REGS
#endif

/*
 * The callback never calls anything traceable, so it needs no recursion
 * guard; on 5.10 that has to be said explicitly or ftrace adds a slow
 * wrapper around it.
 */
#ifdef VFSFAST_HAVE_FTRACE_RECURSION_SAFE
#define VFSFAST_FL_RECURSION	FTRACE_OPS_FL_RECURSION_SAFE
#else
#define VFSFAST_FL_RECURSION	0
#endif

/*
 * Where the kernel has it, a hook is kept through sysctl
 * kernel.ftrace_enabled=0 (the write fails with EBUSY) instead of being
 * dropped behind the back of status.
 */
#ifdef VFSFAST_HAVE_FTRACE_OPS_FL_PERMANENT
#define VFSFAST_FL_PERMANENT	FTRACE_OPS_FL_PERMANENT
#else
#define VFSFAST_FL_PERMANENT	0
#endif

#define VFSFAST_FTRACE_FLAGS \
	(FTRACE_OPS_FL_IPMODIFY | VFSFAST_FL_SAVE_REGS | VFSFAST_FL_RECURSION | \
	 VFSFAST_FL_PERMANENT)

static __always_inline void vfsfast_set_ip(struct vfsfast_fregs *fregs,
					   unsigned long ip)
{
#if defined(VFSFAST_HAVE_FTRACE_REGS_SET_INSTRUCTION_POINTER)
	ftrace_regs_set_instruction_pointer(fregs, ip);
#elif defined(VFSFAST_HAVE_FTRACE_INSTRUCTION_POINTER_SET)
	ftrace_instruction_pointer_set(fregs, ip);
#elif defined(VFSFAST_HAVE_FTRACE_REGS)
	/* The full pt_regs frame (FTRACE_OPS_FL_SAVE_REGS): x86 ip, arm64 pc. */
	instruction_pointer_set(ftrace_get_regs(fregs), ip);
#else
	instruction_pointer_set(fregs, ip);
#endif
}

/* ---- direct calls ---------------------------------------------------- */

/*
 * ftrace direct calls: up to 6.4 a site is named by its ip; from 6.5 it is
 * named by an ftrace_ops filter, which the caller sets up beforehand with
 * ftrace_set_filter_ip() (not needed by the ip flavour).  Kernels built without
 * DYNAMIC_FTRACE_WITH_DIRECT_CALLS get VFSFAST_NO_DIRECT as the reason.
 */
#if !defined(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS)
#define VFSFAST_NO_DIRECT "kernel built without DYNAMIC_FTRACE_WITH_DIRECT_CALLS"
#define VFSFAST_DIRECT_INFO VFSFAST_NO_DIRECT
#elif !defined(VFSFAST_HAVE_FTRACE_DIRECT_OPS) && !defined(VFSFAST_HAVE_FTRACE_DIRECT_IP)
#define VFSFAST_NO_DIRECT "unknown ftrace direct-call API"
#define VFSFAST_DIRECT_INFO VFSFAST_NO_DIRECT
#else
#define VFSFAST_NO_DIRECT NULL
#define VFSFAST_DIRECT_INFO "available"
#endif

#ifdef VFSFAST_HAVE_FTRACE_DIRECT_OPS
#define VFSFAST_DIRECT_NEEDS_FILTER true
static inline int vfsfast_direct_register(struct ftrace_ops *ops,
					  unsigned long ip, unsigned long addr)
{
	return register_ftrace_direct(ops, addr);
}

static inline int vfsfast_direct_unregister(struct ftrace_ops *ops,
					    unsigned long ip, unsigned long addr)
{
	return unregister_ftrace_direct(ops, addr, false);
}

static inline int vfsfast_direct_modify(struct ftrace_ops *ops, unsigned long ip,
					unsigned long old, unsigned long addr)
{
	return modify_ftrace_direct(ops, addr);
}
#elif defined(VFSFAST_HAVE_FTRACE_DIRECT_IP)
#define VFSFAST_DIRECT_NEEDS_FILTER false
static inline int vfsfast_direct_register(struct ftrace_ops *ops,
					  unsigned long ip, unsigned long addr)
{
	return register_ftrace_direct(ip, addr);
}

static inline int vfsfast_direct_unregister(struct ftrace_ops *ops,
					    unsigned long ip, unsigned long addr)
{
	return unregister_ftrace_direct(ip, addr);
}

static inline int vfsfast_direct_modify(struct ftrace_ops *ops, unsigned long ip,
					unsigned long old, unsigned long addr)
{
	return modify_ftrace_direct(ip, old, addr);
}
#else
#define VFSFAST_DIRECT_NEEDS_FILTER false
static inline int vfsfast_direct_register(struct ftrace_ops *ops,
					  unsigned long ip, unsigned long addr)
{
	return -ENODEV;
}

static inline int vfsfast_direct_unregister(struct ftrace_ops *ops,
					    unsigned long ip, unsigned long addr)
{
	return -ENODEV;
}

static inline int vfsfast_direct_modify(struct ftrace_ops *ops, unsigned long ip,
					unsigned long old, unsigned long addr)
{
	return -ENODEV;
}
#endif

/*
 * 7.0's jmp mode: the site becomes "jmp addr" instead of "call addr", so
 * the replacement can be entered directly with the caller's own return
 * address on the stack.  Requested by setting bit 0 of the address.
 */
#if defined(VFSFAST_HAVE_FTRACE_JMP_SET) && defined(CONFIG_DYNAMIC_FTRACE_WITH_JMP)
#define VFSFAST_NO_JMP VFSFAST_NO_DIRECT
#define VFSFAST_JMP_INFO VFSFAST_DIRECT_INFO
#define vfsfast_jmp_addr(addr) ftrace_jmp_set(addr)
#else
#define VFSFAST_NO_JMP "kernel has no DYNAMIC_FTRACE_WITH_JMP"
#define VFSFAST_JMP_INFO VFSFAST_NO_JMP
#define vfsfast_jmp_addr(addr) (addr)
#endif

/* ---- waiting for tasks to leave module text --------------------------- */

/*
 * On preemptible kernels a task can be preempted anywhere, including just
 * before it counts itself in or just after it counts itself out; only a
 * tasks-RCU grace period waits for it to move on.
 */
static inline void vfsfast_sync_tasks(void)
{
#ifdef CONFIG_TASKS_RCU
	synchronize_rcu_tasks();
#else
	synchronize_rcu();
#endif
}

/* ---- tasks -------------------------------------------------------------- */

/* A task's run state, as set_special_state() writes it under pi_lock. */
#ifdef VFSFAST_HAVE_TASK_DUNDER_STATE
#define vfsfast_task_state(t)	READ_ONCE((t)->__state)
#else
#define vfsfast_task_state(t)	READ_ONCE((t)->state)
#endif

/* ---- sysfs ------------------------------------------------------------ */

#ifndef VFSFAST_HAVE_SYSFS_EMIT
#define sysfs_emit(buf, fmt, ...) scnprintf(buf, PAGE_SIZE, fmt, ##__VA_ARGS__)
#endif

/* ---- directories -------------------------------------------------------- */

/* What a directory actor returns to go on, or to stop (6.1: a bool). */
#ifdef VFSFAST_HAVE_FILLDIR_BOOL
#define VFSFAST_FILLDIR_RET	bool
#define VFSFAST_FILLDIR_GO_ON	true
#define VFSFAST_FILLDIR_STOP	false
#else
#define VFSFAST_FILLDIR_RET	int
#define VFSFAST_FILLDIR_GO_ON	0
#define VFSFAST_FILLDIR_STOP	(-ECANCELED)
#endif

/* ---- symlinks --------------------------------------------------------- */

#ifdef VFSFAST_HAVE_IOP_CACHED_LINK
#define VFSFAST_UPSTREAM_READLINK	"IOP_CACHED_LINK"
#define VFSFAST_UPSTREAM_READLINK_INFO	VFSFAST_UPSTREAM_READLINK
/* Upstream cached the length at inode creation: use it as stock does. */
static inline int vfsfast_cached_link_len(const struct inode *inode)
{
	return (inode->i_opflags & IOP_CACHED_LINK) ? (int)inode->i_linklen : -1;
}
#else
/*
 * Where the architecture's strlen() is already fast (arm64's reads 16
 * bytes a step), the replacement's strlen saves nothing and the redirect
 * costs: enable=auto leaves readlink off, and status says why.
 */
#ifdef VFSFAST_HAVE_ARCH_STRLEN
#define VFSFAST_UPSTREAM_READLINK \
	"the architecture's own strlen(), not byte at a time (__HAVE_ARCH_STRLEN)"
#define VFSFAST_UPSTREAM_READLINK_INFO	"arch-strlen"
#else
#define VFSFAST_UPSTREAM_READLINK	NULL
#define VFSFAST_UPSTREAM_READLINK_INFO	"none"
#endif
static inline int vfsfast_cached_link_len(const struct inode *inode)
{
	return -1;
}
#endif

/* ---- fsnotify --------------------------------------------------------- */

/*
 * Whether anything on @sb is watched: inode, superblock or mount marks all
 * count on the superblock they are on (a mount's is its mnt_sb).  Kernels
 * without a count (before 5.15, unless backported) cannot answer cheaply:
 * the fsnotify fast paths are unsupported there.
 */
#if defined(VFSFAST_HAVE_FSNOTIFY_SB_HAS_WATCHERS)
#define VFSFAST_NO_SB_WATCH_COUNT NULL
#define vfsfast_sb_watched(sb)	fsnotify_sb_has_watchers(sb)
#elif defined(VFSFAST_HAVE_SB_FSNOTIFY_CONNECTORS)
#define VFSFAST_NO_SB_WATCH_COUNT NULL
#define vfsfast_sb_watched(sb)	(atomic_long_read(&(sb)->s_fsnotify_connectors) != 0)
#else
#define VFSFAST_NO_SB_WATCH_COUNT \
	"kernel keeps no per-superblock watch count (s_fsnotify_connectors)"
#define vfsfast_sb_watched(sb)	true
#endif

/*
 * Whether a tracepoint is on, without a call: static_key_enabled() is an
 * out-of-line static_key_count() on some kernels (6.1), and a call makes a
 * fast path save registers.  A nonzero count is what it tests; -1 (first
 * enable in progress) counts as on, which is the safe answer.
 */
#ifdef VFSFAST_HAVE_TRACEPOINT_KEY_FALSE
#define vfsfast_tracepoint_on(tp)	(atomic_read(&(tp)->key.key.enabled) != 0)
#else
#define vfsfast_tracepoint_on(tp)	(atomic_read(&(tp)->key.enabled) != 0)
#endif

/*
 * What the kernel already has: callers that check the superblock inline
 * never call fsnotify() or __fsnotify_parent() for an unwatched one.
 */
#ifdef VFSFAST_HAVE_FSNOTIFY_UNGUARDED
#define VFSFAST_UPSTREAM_FSNOTIFY	NULL
#define VFSFAST_UPSTREAM_FSNOTIFY_INFO	"none"
#else
#define VFSFAST_UPSTREAM_FSNOTIFY \
	"fsnotify.h helpers skip unwatched superblocks inline"
#define VFSFAST_UPSTREAM_FSNOTIFY_INFO	"inline-superblock-check"
#endif

/*
 * fsnotify()'s signature since 5.9: the mask first, the inode an event is
 * on an argument of its own.  Kernels before that pass the inode to tell
 * first, and have no per-superblock watch count either (5.15), so the
 * fast path could not be had there with any signature.
 */
#ifdef VFSFAST_HAVE_FSNOTIFY_MASK_FIRST
#define VFSFAST_NO_FSNOTIFY NULL
#else
#define VFSFAST_NO_FSNOTIFY "unknown fsnotify() signature (before 5.9?)"
#endif

/* The superblock of an event's data where it names one simply, else NULL. */
#ifdef VFSFAST_HAVE_FSNOTIFY_DATA_SB
#define vfsfast_fsnotify_data_sb(data, data_type) fsnotify_data_sb(data, data_type)
#else
static inline struct super_block *vfsfast_fsnotify_data_sb(const void *data,
							   int data_type)
{
	if (data_type == FSNOTIFY_EVENT_PATH)
		return ((const struct path *)data)->dentry->d_sb;
	if (data_type == FSNOTIFY_EVENT_INODE)
		return ((const struct inode *)data)->i_sb;
	return NULL;
}
#endif

#ifdef VFSFAST_HAVE_FSNOTIFY_PARENT_DENTRY
#define VFSFAST_NO_FSNOTIFY_PARENT NULL
#else
#define VFSFAST_NO_FSNOTIFY_PARENT \
	"no out-of-line __fsnotify_parent(dentry, mask, data, data_type) (5.8+)"
#endif

/*
 * 6.14 gives pseudo files FMODE_NONOTIFY at birth (pipes and sockets get
 * FMODE_NONOTIFY_PERM back, keeping their other events).
 */
#ifdef VFSFAST_HAVE_FILE_SET_FSNOTIFY_MODE
#define VFSFAST_UPSTREAM_PSEUDO		"FMODE_NONOTIFY for pseudo files (file_set_fsnotify_mode)"
#define VFSFAST_UPSTREAM_PSEUDO_INFO	"file_set_fsnotify_mode"
#else
#define VFSFAST_UPSTREAM_PSEUDO		NULL
#define VFSFAST_UPSTREAM_PSEUDO_INFO	"none"
#endif

/* ---- kernfs ------------------------------------------------------------ */

/*
 * Ian Kent's series (5.15) keeps negative dentries, validated by a
 * per-directory revision (kernfs_elem_dir.rev), and replaced the global
 * kernfs_mutex by a per-root rwsem.  vfsfast's replacements are written
 * for the kernfs before it, the one with the global mutex, whose inode
 * operations take no idmap or user namespace (up to 5.11): VFSFAST_KERNFS.
 */
#if defined(VFSFAST_HAVE_KERNFS_DIR_REV)
#define VFSFAST_UPSTREAM_KERNFS \
	"negative dentries and per-root rwsem (kernfs_elem_dir.rev)"
#define VFSFAST_UPSTREAM_KERNFS_INFO	"kernfs_elem_dir.rev"
#define VFSFAST_NO_KERNFS \
	"the kernel has it upstream (kernfs_elem_dir.rev, 5.15): nothing to replace"
#elif defined(VFSFAST_KERNFS)
#define VFSFAST_UPSTREAM_KERNFS		NULL
#define VFSFAST_UPSTREAM_KERNFS_INFO	"none"
#define VFSFAST_NO_KERNFS		NULL
/* Not in the kernel's public headers. */
struct kernfs_node;
int kernfs_add_one(struct kernfs_node *kn);
#else
#define VFSFAST_UPSTREAM_KERNFS		NULL
#define VFSFAST_UPSTREAM_KERNFS_INFO	"none"
#define VFSFAST_NO_KERNFS \
	"kernfs without kernfs_elem_dir.rev but with unknown inode operations"
#endif


/* ---- kernfs path walks in RCU mode -------------------------------------- */

/*
 * The fast paths read a kernfs node, its parent and its iattr pointer
 * from an RCU path walk, which is sound only where kernfs frees nodes
 * after a grace period (kernfs_node.rcu).  They are written for the inode
 * operations that take a struct mnt_idmap and for the per-directory
 * revision; 5.10's kernfs is served by the kernfs optimization instead,
 * and the two never build together (they take over the same functions).
 * No kernel walks kernfs in RCU mode by itself yet: when one does, its
 * probe goes here and sets VFSFAST_UPSTREAM_KERNFS_RCU.
 */
#define VFSFAST_UPSTREAM_KERNFS_RCU		NULL
#define VFSFAST_UPSTREAM_KERNFS_RCU_INFO	"none"
#if !defined(VFSFAST_HAVE_KERNFS_NODE_RCU)
#define VFSFAST_NO_KERNFS_RCU \
	"kernfs frees nodes without an RCU grace period (no kernfs_node.rcu): an RCU walk could read freed memory"
#elif !defined(VFSFAST_HAVE_KERNFS_DIR_REV) || \
	!defined(VFSFAST_HAVE_KERNFS_IOPS_IDMAP) || defined(VFSFAST_KERNFS)
#define VFSFAST_NO_KERNFS_RCU \
	"kernfs inode operations of a form this build does not know"
#else
#define VFSFAST_KERNFS_RCU 1
#define VFSFAST_NO_KERNFS_RCU			NULL

/*
 * The node's parent: compared with the parent dentry's node, never
 * followed, so no dereference and no lock either way.
 */
#ifdef VFSFAST_HAVE_KERNFS_RCU_PARENT
#define vfsfast_kernfs_parent(kn)	rcu_access_pointer((kn)->__parent)
#else
#define vfsfast_kernfs_parent(kn)	READ_ONCE((kn)->parent)
#endif

#endif

/*
 * Of two parenthesized parameter or argument lists of ->d_revalidate(),
 * the first where it is given the walk's parent inode and name, else the
 * second.
 */
#ifdef VFSFAST_HAVE_DOP_REVALIDATE_DIR_NAME
#define VFSFAST_DIR_NAME_OR(with, without)	with
#else
#define VFSFAST_DIR_NAME_OR(with, without)	without
#endif

#endif /* _VFSFAST_COMPAT_H */
