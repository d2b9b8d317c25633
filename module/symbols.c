// SPDX-License-Identifier: GPL-2.0
/*
 * Symbol resolution for targets that are not exported.
 *
 * kallsyms_lookup_name() has not been exported since 5.7, and calling it
 * through a pointer found by a kprobe is wrong on IBT kernels: the kernel
 * seals functions whose address it never takes (6.12 and 7.2 poison their
 * ENDBR), so any indirect call to one faults on IBT hardware.  So nothing
 * here is called indirectly.  A kprobe, registered disabled so that no text
 * is patched, resolves the name; kprobes report the address past an ENDBR,
 * and sprint_symbol() gives the offset back to the real entry.
 *
 * Every target comes here, exported or not, for its ftrace site; for an
 * exported one the engine checks the entry against the address the linker
 * resolved.  Nothing found here is ever called: replacements reach the
 * stock code through tramp.S, by a return.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/string.h>

#include "vfsfast.h"

/*
 * The symbol that contains @addr: its name in @buf (KSYM_SYMBOL_LEN bytes),
 * its start and its size; false if kallsyms names none.
 */
static bool vfsfast_symbol_at(unsigned long addr, char *buf,
			      unsigned long *start, unsigned long *size)
{
	unsigned long offset;
	char *plus;

	sprint_symbol(buf, addr);
	plus = strchr(buf, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", &offset, size) != 2 || offset > addr)
		return false;
	*plus = '\0';
	*start = addr - offset;
	return true;
}

/* Start of the symbol named @name that contains @addr, or 0; its size. */
static unsigned long vfsfast_symbol_start(const char *name, unsigned long addr,
					  unsigned long *size)
{
	char buf[KSYM_SYMBOL_LEN];
	unsigned long start;

	if (!vfsfast_symbol_at(addr, buf, &start, size) || strcmp(buf, name))
		return 0;
	return start;
}

static bool vfsfast_symbols_ok;

/*
 * A kprobe at a function's start lands on its ftrace site when it has one,
 * and then says so: KPROBE_FLAG_FTRACE is set only when ftrace has a
 * record at exactly that address.  That is the kernel's own answer to
 * where the site is, with or without an ENDBR before it.
 */
static unsigned long vfsfast_kprobe_lookup(const char *name,
					   unsigned long *site,
					   unsigned long *size)
{
	struct kprobe kp = {
		.symbol_name = name,
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long addr;

	*site = 0;
	if (register_kprobe(&kp) < 0)
		return 0;
	addr = (unsigned long)kp.addr;
	if (kp.flags & KPROBE_FLAG_FTRACE)
		*site = addr;
	unregister_kprobe(&kp);
	return vfsfast_symbol_start(name, addr, size);
}

/*
 * Entry of @name, or 0; its ftrace site in *@site, or 0 if none; its size
 * in *@size.
 */
unsigned long vfsfast_lookup_name(const char *name, unsigned long *site,
				  unsigned long *size)
{
	*site = 0;
	return vfsfast_symbols_ok ? vfsfast_kprobe_lookup(name, site, size) : 0;
}

/*
 * Address of the data symbol @name, found by walking kallsyms from @near,
 * an address the linker resolved in the same object (an exported
 * variable), up to @steps symbols each way; 0 if not found.  kprobes
 * resolve functions only, and kallsyms_lookup_name() is not exported;
 * sprint_symbol() is, and with CONFIG_KALLSYMS_ALL it names static
 * variables too.  Its size is the distance to the next symbol, so one
 * lookup per symbol walks them all.
 */
unsigned long vfsfast_lookup_data(const char *name, unsigned long near,
				  unsigned int steps)
{
	unsigned long addr, start, size;
	char buf[KSYM_SYMBOL_LEN];
	unsigned int i;
	int dir;

	for (dir = 1; dir >= -1; dir -= 2) {
		addr = near;
		for (i = 0; i < steps; i++) {
			if (!vfsfast_symbol_at(addr, buf, &start, &size) || !size)
				break;
			if (!strcmp(buf, name))
				return start;
			addr = dir > 0 ? start + size : start - 1;
		}
	}
	return 0;
}

/*
 * Address of the variable @name, by kallsyms_lookup_name(), which is not
 * exported and not to be called through a pointer: register_kprobe()
 * resolves .symbol_name with it and stores the address in kp.addr before
 * check_kprobe_address_safe() refuses one outside kernel text (-EINVAL),
 * having registered nothing, so there is nothing to unregister and no
 * grace period to wait for (5.10, 6.1, 6.12 and 7.2 alike).  That order
 * is the kernel's, not a promise: the answer counts only where kallsyms
 * names exactly @name there at offset 0 (on IBT kernels the kprobe code
 * steps over what it reads as an ENDBR, which a variable's bytes can
 * look like).  0 if not found, or found in text.
 */
unsigned long vfsfast_lookup_data_name(const char *name)
{
	struct kprobe kp = {
		.symbol_name = name,
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long addr, size;

	if (!register_kprobe(&kp)) {
		unregister_kprobe(&kp);
		return 0;
	}
	addr = (unsigned long)kp.addr;
	if (!addr || vfsfast_symbol_start(name, addr, &size) != addr)
		return 0;
	return addr;
}

/*
 * Check the lookup against an address the linker resolved, once at load:
 * on IBT kernels this proves the step back over the ENDBR is right, and
 * that kprobes find the ftrace site.
 */
int vfsfast_symbols_init(void)
{
	unsigned long site, size;
	unsigned long addr = vfsfast_kprobe_lookup("vfs_readlink", &site, &size);

	if (addr != (unsigned long)vfs_readlink || !site) {
		pr_warn("symbol lookup self-check failed (%pS): non-exported targets unsupported\n",
			(void *)addr);
		return -EINVAL;
	}
	vfsfast_symbols_ok = true;
	pr_info("symbol lookup through kprobes verified\n");
	return 0;
}
