// SPDX-License-Identifier: GPL-2.0
/* Direct calls named by ip (up to 6.4). */
#include <linux/ftrace.h>

int probe(unsigned long ip, unsigned long addr)
{
	return register_ftrace_direct(ip, addr) +
	       unregister_ftrace_direct(ip, addr) +
	       modify_ftrace_direct(ip, addr, addr);
}
