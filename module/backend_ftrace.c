// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace_ops backend: one IPMODIFY ftrace_ops per target.
 *
 * The target's ftrace site calls the kernel's ftrace trampoline, which
 * saves the argument registers and calls vfsfast_ftrace_thunk(); the thunk
 * sets the saved instruction pointer to the replacement, and the
 * trampoline "returns" there with the caller's return address still on
 * the stack.  Works on every kernel with DYNAMIC_FTRACE_WITH_REGS or
 * _ARGS and coexists with other non-IPMODIFY ftrace users, at the price
 * of the trampoline's register save and restore on every call.
 *
 * The observers of an optimization share one such ftrace_ops (the group),
 * whatever backend carries its replacements: a registration is a few
 * passes over every ftrace record of the kernel, about as long for one
 * site as for five, so an enable costs one registration for all the
 * observers instead of one each, and a disable one RCU-tasks wait.
 * Observers sit on rarely called functions (rename, setattr, filesystem
 * registration), where the trampoline's cost does not matter.
 */
#include <linux/ftrace.h>
#include <linux/module.h>

#include "vfsfast.h"

static void notrace vfsfast_ftrace_thunk(unsigned long ip,
					 unsigned long parent_ip,
					 struct ftrace_ops *ops,
					 struct vfsfast_fregs *fregs)
{
	struct vfsfast_func *func = container_of(ops, struct vfsfast_func, ops);

	vfsfast_set_ip(fregs, READ_ONCE(*func->redirect));
}

static int vfsfast_ftrace_prepare(struct vfsfast_func *func)
{
	func->ops.func = vfsfast_ftrace_thunk;
	func->ops.flags = VFSFAST_FTRACE_FLAGS;
	return vfsfast_filter_site(&func->ops, func, &func->filtered, true);
}

static void vfsfast_ftrace_release(struct vfsfast_func *func)
{
	vfsfast_filter_site(&func->ops, func, &func->filtered, false);
}

static int vfsfast_ftrace_attach(struct vfsfast_func *func)
{
	return register_ftrace_function(&func->ops);
}

static int vfsfast_ftrace_detach(struct vfsfast_func *func)
{
	return unregister_ftrace_function(&func->ops);
}

/*
 * The group's callback: the observer whose text holds @ip (the site's
 * address; matched by range, which holds wherever an architecture puts
 * the site in the function's first instructions).  The filter names only
 * observer sites, set before the ops is registered and unchanged while it
 * is, so one always matches.
 */
static void notrace vfsfast_group_thunk(unsigned long ip,
					unsigned long parent_ip,
					struct ftrace_ops *ops,
					struct vfsfast_fregs *fregs)
{
	struct vfsfast_opt *opt = container_of(ops, struct vfsfast_opt,
					       observer_ops);
	struct vfsfast_func *func;

	for (func = opt->funcs; func->old_name; func++) {
		if (func->gfiltered && ip >= func->entry &&
		    ip < func->entry + func->size) {
			vfsfast_set_ip(fregs, READ_ONCE(*func->redirect));
			return;
		}
	}
}

void vfsfast_group_release(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;

	opt->observer_group = false;
	for (func = opt->funcs; func->old_name; func++)
		vfsfast_filter_site(&opt->observer_ops, func, &func->gfiltered,
				    false);
}

/*
 * Put every observer site of @opt in its group's filter.  Only for two
 * observers or more (one gains nothing, and would give up a direct
 * backend), and only where the ftrace backend may be used at all.
 * Without a group the observers attach one by one, as the replacements.
 */
void vfsfast_group_prepare(struct vfsfast_opt *opt)
{
	const struct vfsfast_backend **b;
	struct vfsfast_func *func;
	bool allowed = false;
	int n = 0;

	for (b = vfsfast_backend_order; *b; b++)
		allowed |= *b == &vfsfast_backend_ftrace;
	for (func = opt->funcs; func->old_name; func++)
		n += func->observer;
	if (!allowed || n < 2)
		return;
	opt->observer_ops.func = vfsfast_group_thunk;
	opt->observer_ops.flags = VFSFAST_FTRACE_FLAGS;
	for (func = opt->funcs; func->old_name; func++) {
		if (func->observer &&
		    vfsfast_filter_site(&opt->observer_ops, func,
					&func->gfiltered, true)) {
			vfsfast_group_release(opt);
			return;
		}
	}
	opt->observer_group = true;
}

int vfsfast_group_attach(struct vfsfast_opt *opt)
{
	return register_ftrace_function(&opt->observer_ops);
}

int vfsfast_group_detach(struct vfsfast_opt *opt)
{
	return unregister_ftrace_function(&opt->observer_ops);
}

MODULE_INFO(vfsfast_backend_ftrace, "available");

const struct vfsfast_backend vfsfast_backend_ftrace = {
	.name = "ftrace",
	.prepare = vfsfast_ftrace_prepare,
	.release = vfsfast_ftrace_release,
	.attach = vfsfast_ftrace_attach,
	.detach = vfsfast_ftrace_detach,
};
