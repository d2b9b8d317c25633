// SPDX-License-Identifier: GPL-2.0
/* Direct calls that patch the ftrace site into a jmp (7.0 and later). */
#include <linux/ftrace.h>

unsigned long probe(unsigned long addr)
{
	return ftrace_jmp_set(addr);
}
