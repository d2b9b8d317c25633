/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs on arm64, for the shared code (compat.h includes it):
 * inline helpers and constants named vfsfast_arch_* or as compat.h
 * documents them.  The out-of-line part is site.c, the trampolines
 * tramp.S, the stack walk for quiesce.c arch_unwind.h.
 */
#ifndef _VFSFAST_ARCH_H
#define _VFSFAST_ARCH_H

#include <linux/kprobes.h>
#include <linux/ptrace.h>

/* A kernel function's arguments arrive in x0-x7. */
#define VFSFAST_ARG_REGS	8
static inline unsigned long *vfsfast_arg_reg(struct pt_regs *regs, unsigned int n)
{
	return (unsigned long *)&regs->regs[n];
}

/* A system call's argument @n, as __arm64_sys_<name> finds it. */
static inline unsigned long vfsfast_sc_arg(const struct pt_regs *regs,
					   unsigned int n)
{
	return regs->regs[n];
}

/* The entry of system call @name: its wrapper taking the user's pt_regs. */
#define VFSFAST_SYSCALL(name)	__arm64_sys_##name

/* site.c */
unsigned long vfsfast_arch_ftrace_site(const struct kprobe *kp);
bool vfsfast_arch_site_live(unsigned long site);
/* A variable read from code around a call (site.c): kallsyms may not name it. */
#define VFSFAST_ARCH_CALL_REF	1
unsigned long vfsfast_arch_call_ref(unsigned long func, unsigned long size,
				    unsigned long callee, unsigned int nth,
				    bool after);
#ifdef VFSFAST_FAULT_INJECT
const char *vfsfast_arch_fi_body(const char *name, unsigned long *body);
#endif

/*
 * Why the optimizations with observers cannot be enabled here, or NULL:
 * quiesce.c's walk here (arch_unwind.h) follows the frame records and
 * strips the PAC signature from every return address and scanned word.
 */
#define VFSFAST_ARCH_NO_QUIESCE	((const char *)NULL)

/*
 * Whether every ftrace site reaches every ftrace_ops through the list
 * walk: arm64 builds no trampoline per ops, and only
 * DYNAMIC_FTRACE_WITH_CALL_OPS (6.2 and later) lets a site call the one
 * ops it has directly.  Without it ftrace_caller calls
 * ftrace_ops_list_func(), which tests every registered ops' filter at
 * every hooked call, so the ftrace backend carries all its targets on
 * one ops (backend_ftrace.c).
 */
#define VFSFAST_ARCH_FTRACE_LIST_WALK \
	(!IS_ENABLED(CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS))

#endif /* _VFSFAST_ARCH_H */
