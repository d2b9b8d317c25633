// SPDX-License-Identifier: GPL-2.0
/* The ftrace_regs IP setter as named from 5.11 to 6.2. */
#include <linux/ftrace.h>

void probe(struct ftrace_regs *fregs)
{
	ftrace_instruction_pointer_set(fregs, 0);
}
