// SPDX-License-Identifier: GPL-2.0
/*
 * The prepare room (engine.h): every target resolved once, at load, with
 * its ftrace site and each backend's share of it, and released at unload.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/kernel.h>

#include "engine.h"

static const char *vfsfast_prepare_func(struct vfsfast_func *func)
{
	const struct vfsfast_backend **b;
	char part[64];
	unsigned long entry = 0;

	if (func->split) {
		snprintf(part, sizeof(part), "%s.part.0", func->old_name);
		entry = vfsfast_lookup_name(part, 0, &func->site, &func->size);
		func->split = entry;
	}
	if (!entry)
		entry = vfsfast_lookup_name(func->old_name, func->old_addr,
					    &func->site, &func->size);
	if (!entry)
		return "symbol not found";
	if (func->old_addr && !func->split && entry != func->old_addr)
		return "symbol lookup disagrees with the linker";
	if (!func->site)
		return "no ftrace site";
	func->entry = entry;
	*func->body = func->site + MCOUNT_INSN_SIZE;
#ifdef VFSFAST_FAULT_INJECT
	{
		const char *why = vfsfast_arch_fi_body(func->old_name, func->body);

		if (why)
			return why;
	}
#endif
	for (b = vfsfast_backend_order; *b; b++)
		if ((*b)->prepare(func))
			return "not traceable";
	return NULL;
}

/*
 * A function the replacements only call: its stub enters it at its first
 * instruction, ftrace site included, so that whoever traces or patches it
 * (a kprobe, a BPF program, a livepatch) sees vfsfast's calls as the
 * kernel's own.  Nothing is hooked.
 */
static const char *vfsfast_prepare_call(struct vfsfast_func *func)
{
	unsigned long entry, site, size;

	entry = vfsfast_lookup_name(func->old_name, func->old_addr, &site,
				    &size);
	if (!entry)
		return "symbol not found";
	if (func->old_addr && entry != func->old_addr)
		return "symbol lookup disagrees with the linker";
	func->entry = entry;
	/* Not hooked: only a check of a split part's shape probes it. */
	func->site = site;
	*func->body = entry;
	return NULL;
}

/* The names vfsfast_opt_prepare() will look up, for the load's one pass. */
void vfsfast_opt_want(const struct vfsfast_opt *opt)
{
	const struct vfsfast_func *func;

	if (opt->lacks)
		return;
	for (func = opt->calls; func->old_name; func++)
		if (!func->old_addr)
			vfsfast_symbols_want(func->old_name, "");
	for (func = opt->funcs; func->old_name; func++) {
		if (func->split)
			vfsfast_symbols_want(func->old_name, ".part.0");
		if (!func->old_addr)
			vfsfast_symbols_want(func->old_name, "");
	}
}

/*
 * Resolve every target and its ftrace site, and every function called
 * through a stub, so that a kernel where a function is missing or not
 * traceable marks the optimization unsupported at load instead of
 * failing later.
 */
int vfsfast_opt_prepare(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;
	const char *why;
	int ret;

	if (opt->lacks) {
		vfsfast_unsupported(opt, "%s", opt->lacks);
		return -ENOENT;
	}
	/*
	 * The replacements of an optimization with observers trust what the
	 * observers recorded only once quiesce.c has seen every task out of
	 * their stock code; where the architecture cannot walk stacks
	 * soundly yet, the optimization stays off.
	 */
	if (VFSFAST_ARCH_NO_QUIESCE && vfsfast_has_observers(opt)) {
		vfsfast_unsupported(opt, "%s", VFSFAST_ARCH_NO_QUIESCE);
		return -ENOENT;
	}
	for (func = opt->calls; func->old_name; func++) {
		why = vfsfast_prepare_call(func);
		if (why) {
			vfsfast_unsupported(opt, "%s: %s", func->old_name, why);
			return -ENOENT;
		}
	}
	for (func = opt->funcs; func->old_name; func++) {
		why = vfsfast_prepare_func(func);
		if (why) {
			vfsfast_unsupported(opt, "%s: %s", func->old_name, why);
			vfsfast_opt_release(opt);
			return -ENOENT;
		}
	}
	ret = opt->setup ? opt->setup(opt) : 0;
	if (!ret)
		vfsfast_group_prepare(opt);
	if (ret) {
		/* A setup that knows why says so itself. */
		if (READ_ONCE(opt->state) != VFSFAST_UNSUPPORTED)
			vfsfast_unsupported(opt, "setup failed: %d", ret);
		vfsfast_opt_release(opt);
	}
	return ret;
}

void vfsfast_opt_release(struct vfsfast_opt *opt)
{
	const struct vfsfast_backend **b;
	struct vfsfast_func *func;

	vfsfast_group_release(opt);
	for (func = opt->funcs; func->old_name; func++)
		for (b = vfsfast_backend_order; *b; b++)
			(*b)->release(func);
}
