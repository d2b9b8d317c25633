// SPDX-License-Identifier: GPL-2.0
/* The ftrace_regs IP setter as named since 6.3. */
#include <linux/ftrace.h>

void probe(struct ftrace_regs *fregs)
{
	ftrace_regs_set_instruction_pointer(fregs, 0);
}
