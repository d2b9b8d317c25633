// SPDX-License-Identifier: GPL-2.0
/*
 * kallsyms_on_each_symbol() with the symbol's module in its callback,
 * until 6.4 ("kallsyms: Delete an unused parameter related to
 * {module_}kallsyms_on_each_symbol()").
 */
#include <linux/kallsyms.h>

static int fn(void *data, const char *name, struct module *mod,
	      unsigned long addr)
{
	return 0;
}

typeof(&kallsyms_on_each_symbol) probe_ptr;

int probe(void)
{
	return probe_ptr(fn, NULL);
}
