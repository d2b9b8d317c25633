// SPDX-License-Identifier: GPL-2.0
/*
 * Symbol resolution for targets that are not exported.
 *
 * kallsyms_lookup_name() has not been exported since 5.7; a kprobe on it
 * still reports where it is.  Exported targets never come here: their
 * address is taken at link time, which is always the real entry.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>

#include "vfsfast.h"

static unsigned long (*vfsfast_kallsyms_lookup_name)(const char *name);

int vfsfast_symbols_init(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	int ret;

	ret = register_kprobe(&kp);
	if (ret < 0) {
		pr_info("kallsyms_lookup_name not found through kprobes (%d): only exported targets are usable\n",
			ret);
		return ret;
	}
	vfsfast_kallsyms_lookup_name = (void *)vfsfast_func_entry((unsigned long)kp.addr);
	unregister_kprobe(&kp);
	return 0;
}

unsigned long vfsfast_lookup_name(const char *name)
{
	if (!vfsfast_kallsyms_lookup_name)
		return 0;
	return vfsfast_kallsyms_lookup_name(name);
}
