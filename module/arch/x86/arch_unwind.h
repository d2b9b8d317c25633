/* SPDX-License-Identifier: GPL-2.0 */
/*
 * quiesce.c's stack walk on x86: the kernel's own unwinder (ORC on
 * Debian's kernels), which goes on through an interrupt's entry
 * registers into the interrupted context; and where a task that is not
 * running keeps its stack pointer.
 */
#ifndef _VFSFAST_ARCH_UNWIND_H
#define _VFSFAST_ARCH_UNWIND_H

#include <linux/sched.h>
#include <asm/unwind.h>

struct vfsfast_unwind {
	struct unwind_state state;
};

/* From @t's saved context (@t asleep), or from here for current. */
static inline void vfsfast_unwind_start(struct vfsfast_unwind *u,
					struct task_struct *t)
{
	unwind_start(&u->state, t, NULL, NULL);
}

static inline bool vfsfast_unwind_done(struct vfsfast_unwind *u)
{
	return unwind_done(&u->state);
}

static inline void vfsfast_unwind_next(struct vfsfast_unwind *u)
{
	unwind_next_frame(&u->state);
}

/* The current frame's return address, 0 if there is none. */
static inline unsigned long vfsfast_unwind_ret(struct vfsfast_unwind *u)
{
	return unwind_get_return_address(&u->state);
}

static inline bool vfsfast_unwind_failed(struct vfsfast_unwind *u)
{
	return unwind_error(&u->state);
}

/*
 * Whether the current address is certainly the return address of the
 * frame before it, so that it may tell who called that frame: ORC knows
 * where each return address is saved at every ip, interrupted or not.
 */
static inline bool vfsfast_unwind_certain(struct vfsfast_unwind *u)
{
	return true;
}

/* The stack pointer @t (not running) was switched out with. */
static inline unsigned long vfsfast_task_sp(struct task_struct *t)
{
	return READ_ONCE(t->thread.sp);
}

/* A word read off a stack, as a text address if it is one. */
static inline unsigned long vfsfast_stack_word(unsigned long word)
{
	return word;
}

#endif /* _VFSFAST_ARCH_UNWIND_H */
