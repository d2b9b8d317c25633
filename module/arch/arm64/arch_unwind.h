/* SPDX-License-Identifier: GPL-2.0 */
/*
 * quiesce.c's stack walk on arm64: our own walk of the frame records
 * (x29 chains; every Debian arm64 kernel has frame pointers), bounded by
 * the task's stack, every word read without faulting.  The kernel's own
 * unwinder is no use here: stack_trace_save_tsk() is not exported before
 * 6.12 and hides where a walk stopped short, which quiesce must know.
 *
 * Three things the x86 walk gets from ORC are done here:
 *  - return addresses are signed (PAC, on every Debian arm64 kernel):
 *    each is stripped before it is compared with text, and so is every
 *    word the scan reads;
 *  - an exception taken in the kernel (a page fault in a uaccess, an
 *    interrupt) leaves a pt_regs on the stack, whose frame record is
 *    chained in: the interrupted pc, then its lr (x30), which is the only
 *    copy of the return address into the interrupted function's caller
 *    while that function is a leaf or has not yet stored its record, and
 *    then the interrupted x29.  Before 6.13 that record holds the
 *    interrupted x29 and pc; from 6.13 it is zeroed and typed
 *    FRAME_META_TYPE_PT_REGS, and a naive walk would stop there;
 *  - current, interrupted by quiesce's IPI, is walked from the
 *    interrupted registers (get_irq_regs(): the IRQ entry sets them),
 *    not through the IRQ stack.
 * A walk that leaves the stack, goes backwards or finds an unreadable
 * word fails (the task is not cleared this round); one that reaches the
 * task's final record, or a null fp, is complete.
 */
#ifndef _VFSFAST_ARCH_UNWIND_H
#define _VFSFAST_ARCH_UNWIND_H

#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>
#include <asm/irq_regs.h>
#include <asm/pointer_auth.h>
#include <asm/ptrace.h>
#include "vfsfast_probes.h"

#ifdef VFSFAST_HAVE_ARM64_FRAME_RECORD_META
#include <asm/stacktrace/frame.h>
#endif

/* Deeper than any kernel stack of THREAD_SIZE holds frame records. */
#define VFSFAST_UNWIND_MAX	1024

struct vfsfast_unwind {
	unsigned long low, high;	/* the stack walked */
	unsigned long final;		/* its last frame record */
	unsigned long fp, prev_fp;
	unsigned long next[2];		/* addresses to report before fp's */
	unsigned int head, nnext, steps;
	unsigned long ret;
	bool done, failed;
	bool lr_queued;			/* next[1] is an exception's x30 */
	bool certain;			/* ret is no exception's x30 */
};

static inline unsigned long vfsfast_strip_pac(unsigned long addr)
{
#ifdef VFSFAST_HAVE_PTRAUTH_STRIP_KERNEL_INSN_PAC
	return ptrauth_strip_kernel_insn_pac(addr);
#else
	return ptrauth_strip_insn_pac(addr);
#endif
}

/* Whether @regs, read off a stack, is an exception's from the kernel. */
static inline bool vfsfast_exception_regs(const struct pt_regs *regs)
{
	if (user_mode(regs))
		return false;
#ifdef VFSFAST_HAVE_ARM64_FRAME_RECORD_META
	return !regs->stackframe.record.fp && !regs->stackframe.record.lr &&
	       regs->stackframe.type == FRAME_META_TYPE_PT_REGS;
#else
	/* kernel_entry's "stp x29, x22 (elr), [sp, #S_STACKFRAME]". */
	return regs->stackframe[0] == regs->regs[29] &&
	       regs->stackframe[1] == regs->pc;
#endif
}

static inline void vfsfast_unwind_queue(struct vfsfast_unwind *u,
					unsigned long a, unsigned long b,
					unsigned int n)
{
	u->next[0] = a;
	u->next[1] = b;
	u->head = 0;
	u->nnext = n;
	u->lr_queued = n == 2;
}

/*
 * Read the frame record at fp: queue what it returns to (an exception's:
 * the interrupted pc and lr) and move fp to the caller's.  False at the
 * end of the walk, with failed set unless that end was the stack's own.
 * A record is 8-byte aligned, as the kernel's own unwinder asks, not 16:
 * from 6.13 an exception's, pt_regs' stackframe, is at S_STACKFRAME 296
 * in a 16-byte aligned pt_regs.
 */
static inline bool vfsfast_unwind_record(struct vfsfast_unwind *u)
{
	unsigned long rec[2], fp = u->fp, at;
	struct pt_regs regs;

	if (!fp || fp == u->final)
		return false;
	u->failed = true;
	if (++u->steps > VFSFAST_UNWIND_MAX || (fp & 0x7) || fp < u->low ||
	    fp > u->high - sizeof(rec) || fp <= u->prev_fp ||
	    copy_from_kernel_nofault(rec, (void *)fp, sizeof(rec)))
		return false;
	at = fp - offsetof(struct pt_regs, stackframe);
	if (at >= u->low && at <= u->high - sizeof(regs) &&
	    !copy_from_kernel_nofault(&regs, (void *)at, sizeof(regs)) &&
	    vfsfast_exception_regs(&regs)) {
		vfsfast_unwind_queue(u, regs.pc, regs.regs[30], 2);
		u->fp = regs.regs[29];
	} else if (rec[1]) {
		vfsfast_unwind_queue(u, rec[1], 0, 1);
		u->fp = rec[0];
	} else {
		return false;
	}
	u->prev_fp = fp;
	u->failed = false;
	return true;
}

static inline void vfsfast_unwind_next(struct vfsfast_unwind *u)
{
	if (u->done)
		return;
	/* An exception's lr may be 0: the walk goes on to its caller. */
	do {
		if (!u->nnext && !vfsfast_unwind_record(u)) {
			u->done = true;
			return;
		}
		u->certain = !(u->lr_queued && u->head == 1);
		u->ret = vfsfast_strip_pac(u->next[u->head++]);
		u->nnext--;
	} while (!u->ret);
}

/* From @t's saved context (@t asleep), or, for current, its interrupted one. */
static inline void vfsfast_unwind_start(struct vfsfast_unwind *u,
					struct task_struct *t)
{
	struct pt_regs *regs;

	memset(u, 0, sizeof(*u));
	u->low = (unsigned long)task_stack_page(t);
	u->high = u->low + THREAD_SIZE;
	u->final = (unsigned long)&task_pt_regs(t)->stackframe;
	if (t != current) {
		vfsfast_unwind_queue(u, t->thread.cpu_context.pc, 0, 1);
		u->fp = t->thread.cpu_context.fp;
	} else {
		regs = get_irq_regs();
		if (!regs) {
			u->done = u->failed = true;
			return;
		}
		if (user_mode(regs)) {
			u->done = true;
			return;
		}
		vfsfast_unwind_queue(u, regs->pc, regs->regs[30], 2);
		u->fp = regs->regs[29];
	}
	vfsfast_unwind_next(u);
}

static inline bool vfsfast_unwind_done(struct vfsfast_unwind *u)
{
	return u->done;
}

/* The current frame's return address (or interrupted pc), 0 if none. */
static inline unsigned long vfsfast_unwind_ret(struct vfsfast_unwind *u)
{
	return u->done ? 0 : u->ret;
}

static inline bool vfsfast_unwind_failed(struct vfsfast_unwind *u)
{
	return u->failed;
}

/*
 * Whether the current address is certainly the return address of the
 * frame before it.  An exception's x30 is not: it is the interrupted
 * function's return address only until that function's first call, and
 * after its prologue GCC may use x30 as a scratch register, so it can hold
 * any text address, vfsfast's own included.  It may still show a frame
 * inside a target (a leaf, or a function interrupted in its prologue, has
 * no other copy of its return address), but it must never stand as the
 * observer's call of the frame before it.  Treating it so can only make
 * quiesce wait for a task it could have cleared, never clear one.
 */
static inline bool vfsfast_unwind_certain(struct vfsfast_unwind *u)
{
	return u->certain;
}

/* The stack pointer @t (not running) was switched out with. */
static inline unsigned long vfsfast_task_sp(struct task_struct *t)
{
	return READ_ONCE(t->thread.cpu_context.sp);
}

/* A word read off a stack, as a text address if it is a signed one. */
static inline unsigned long vfsfast_stack_word(unsigned long word)
{
	return vfsfast_strip_pac(word);
}

#endif /* _VFSFAST_ARCH_UNWIND_H */
