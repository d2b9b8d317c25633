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

MODULE_INFO(vfsfast_backend_ftrace, "available");

const struct vfsfast_backend vfsfast_backend_ftrace = {
	.name = "ftrace",
	.prepare = vfsfast_ftrace_prepare,
	.release = vfsfast_ftrace_release,
	.attach = vfsfast_ftrace_attach,
	.detach = vfsfast_ftrace_detach,
};
