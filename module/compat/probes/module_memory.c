// SPDX-License-Identifier: GPL-2.0
/* Module text described by mem[MOD_TEXT] (6.4+) rather than core_layout. */
#include <linux/module.h>

unsigned long probe(struct module *mod)
{
	return (unsigned long)mod->mem[MOD_TEXT].base + mod->mem[MOD_TEXT].size;
}
