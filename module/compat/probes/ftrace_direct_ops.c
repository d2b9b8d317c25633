// SPDX-License-Identifier: GPL-2.0
/* Direct calls attached through an ftrace_ops filter (6.5 and later). */
#include <linux/ftrace.h>

int probe(struct ftrace_ops *ops, unsigned long addr)
{
	return register_ftrace_direct(ops, addr) +
	       unregister_ftrace_direct(ops, addr, false) +
	       modify_ftrace_direct(ops, addr);
}
