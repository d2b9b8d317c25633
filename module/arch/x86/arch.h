/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs on x86-64, for the shared code (compat.h includes it):
 * inline helpers and constants named vfsfast_arch_* or as compat.h
 * documents them.  The out-of-line part is site.c, the trampolines
 * tramp.S, the stack walk for quiesce.c arch_unwind.h.
 */
#ifndef _VFSFAST_ARCH_H
#define _VFSFAST_ARCH_H

#include <linux/kprobes.h>
#include <linux/ptrace.h>

/*
 * The registers a kernel function's arguments arrive in, by position, in
 * a probe's pt_regs: regs_get_kernel_argument() only reads them, and the
 * check of a split part's shape (split.c) writes them too.
 */
#define VFSFAST_ARG_REGS	6
static inline unsigned long *vfsfast_arg_reg(struct pt_regs *regs, unsigned int n)
{
	unsigned long *const regs_of[VFSFAST_ARG_REGS] = {
		&regs->di, &regs->si, &regs->dx, &regs->cx, &regs->r8, &regs->r9,
	};

	return regs_of[n];
}

/*
 * A system call's argument @n as the syscall wrapper (__x64_sys_<name>)
 * finds it in the user's pt_regs: the fourth is in r10, as the syscall
 * instruction leaves rcx for the return address.
 */
static inline unsigned long vfsfast_sc_arg(const struct pt_regs *regs,
					   unsigned int n)
{
	const unsigned long *const regs_of[] = {
		&regs->di, &regs->si, &regs->dx, &regs->r10, &regs->r8, &regs->r9,
	};

	return *regs_of[n];
}

/* The entry of system call @name: its wrapper taking the user's pt_regs. */
#define VFSFAST_SYSCALL(name)	__x64_sys_##name

/*
 * Where the ftrace site is of the function a kprobe was placed at the
 * start of, or 0.  The kprobe lands on the site when the function has
 * one, and then says so: KPROBE_FLAG_FTRACE is set only when ftrace has a
 * record at exactly that address.  That is the kernel's own answer, with
 * or without an ENDBR before the site.
 */
static inline unsigned long vfsfast_arch_ftrace_site(const struct kprobe *kp)
{
	return kp->flags & KPROBE_FLAG_FTRACE ? (unsigned long)kp->addr : 0;
}

/* site.c: whether the site calls or jumps somewhere now. */
bool vfsfast_arch_site_live(unsigned long site);

#ifdef VFSFAST_FAULT_INJECT
/* Test builds: no entry is skipped; x86 has no return address signing. */
static inline const char *vfsfast_arch_fi_body(const char *name,
					       unsigned long *body)
{
	return NULL;
}
#endif

/*
 * Why the optimizations with observers cannot be enabled here, or NULL:
 * x86's stack walk of quiesce.c is sound (arch_unwind.h).
 */
#define VFSFAST_ARCH_NO_QUIESCE	((const char *)NULL)

/*
 * Whether every ftrace site reaches every ftrace_ops through the list
 * walk: not on x86-64, where ftrace builds each ops its own trampoline
 * (arch_ftrace_update_trampoline()), which a site with that one ops
 * calls, and which calls the ops' callback directly.  The ftrace backend
 * keeps one ops per target (backend_ftrace.c).
 */
#define VFSFAST_ARCH_FTRACE_LIST_WALK	0

#endif /* _VFSFAST_ARCH_H */
