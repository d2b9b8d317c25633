// SPDX-License-Identifier: GPL-2.0
/* The ftrace_regs IP setter as named from 5.11 to 6.2. */
#include <linux/ftrace.h>

/*
 * Without DYNAMIC_FTRACE_WITH_ARGS (Debian's arm64 5.10 and 6.1, which
 * have only DYNAMIC_FTRACE_WITH_REGS) linux/ftrace.h defines it as a
 * no-op: it would compile and never move the IP.
 */
#ifndef CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS
#error "a no-op without DYNAMIC_FTRACE_WITH_ARGS"
#endif

void probe(struct ftrace_regs *fregs)
{
	ftrace_instruction_pointer_set(fregs, 0);
}
