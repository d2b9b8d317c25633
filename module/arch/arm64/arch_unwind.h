/* SPDX-License-Identifier: GPL-2.0 */
/*
 * quiesce.c's stack walk on arm64: none yet.  The optimizations that need
 * it are refused before quiesce.c could run (VFSFAST_ARCH_NO_QUIESCE), and
 * should it run all the same, every walk fails and no stack is readable,
 * so that a round never passes: an enable times out rather than trusting
 * a task it could not see.
 */
#ifndef _VFSFAST_ARCH_UNWIND_H
#define _VFSFAST_ARCH_UNWIND_H

#include <linux/sched.h>

struct vfsfast_unwind {
	bool done;
};

static inline void vfsfast_unwind_start(struct vfsfast_unwind *u,
					struct task_struct *t)
{
	u->done = true;
}

static inline bool vfsfast_unwind_done(struct vfsfast_unwind *u)
{
	return u->done;
}

static inline void vfsfast_unwind_next(struct vfsfast_unwind *u)
{
	u->done = true;
}

static inline unsigned long vfsfast_unwind_ret(struct vfsfast_unwind *u)
{
	return 0;
}

static inline bool vfsfast_unwind_failed(struct vfsfast_unwind *u)
{
	return true;
}

/* 0: "out of its stack", so the scan never clears a task. */
static inline unsigned long vfsfast_task_sp(struct task_struct *t)
{
	return 0;
}

static inline unsigned long vfsfast_stack_word(unsigned long word)
{
	return word;
}

#endif /* _VFSFAST_ARCH_UNWIND_H */
