// SPDX-License-Identifier: GPL-2.0
/*
 * kallsyms_on_each_match_symbol(), added with the sorted name index that
 * makes kallsyms_lookup_name() a binary search ("kallsyms: Improve the
 * performance of kallsyms_lookup_name()", 6.2; Debian's 6.1 has both).
 */
#include <linux/kallsyms.h>

static int fn(void *data, unsigned long addr)
{
	return 0;
}

typeof(&kallsyms_on_each_match_symbol) probe_ptr;

int probe(void)
{
	return probe_ptr(fn, "probe", NULL);
}
