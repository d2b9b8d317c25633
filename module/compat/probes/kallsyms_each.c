// SPDX-License-Identifier: GPL-2.0
/* kallsyms_on_each_symbol() without the module argument (6.4 and later). */
#include <linux/kallsyms.h>

static int fn(void *data, const char *name, unsigned long addr)
{
	return 0;
}

typeof(&kallsyms_on_each_symbol) probe_ptr;

int probe(void)
{
	return probe_ptr(fn, NULL);
}
