// SPDX-License-Identifier: GPL-2.0
/*
 * arm64's metadata frame records (6.13+, "arm64: stacktrace: unwind
 * exception boundaries"): an exception from the kernel leaves a zeroed
 * frame record in its pt_regs, typed FRAME_META_TYPE_PT_REGS, where
 * earlier kernels store the interrupted fp and pc in it.
 */
#include <linux/ptrace.h>
#include <asm/stacktrace/frame.h>

bool probe(const struct pt_regs *regs)
{
	return regs->stackframe.type == FRAME_META_TYPE_PT_REGS &&
	       !regs->stackframe.record.fp;
}
