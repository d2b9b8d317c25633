// SPDX-License-Identifier: GPL-2.0
/*
 * The direct backends: the target's ftrace site calls (or, in jmp mode,
 * jumps to) vfsfast's own code instead of the kernel's ftrace trampoline,
 * so a redirect costs a few instructions instead of a register save,
 * a callback and a restore.
 *
 * "direct" patches the site into a call to the target's trampoline in
 * tramp.S, which swaps its return address for the replacement.  "jmp"
 * (DYNAMIC_FTRACE_WITH_JMP, 7.0 and later) patches it into a jump straight
 * to the replacement: the caller's return address is already where the
 * replacement expects it, and calls and returns stay paired, so the
 * return stack buffer is never wrong.  The jump's target is fixed in the
 * site, so passthrough moves it with modify_ftrace_direct().
 *
 * A site has at most one direct user: a BPF trampoline or another direct
 * user there makes registration fail with EBUSY, and so does a livepatch
 * or other IPMODIFY user (the kernel asks a direct user whether it can
 * share with IPMODIFY, and vfsfast cannot: its fallbacks skip the site).
 */
#include <linux/ftrace.h>
#include <linux/module.h>

#include "vfsfast.h"

/* Shared by jmp and direct: the filter is set up once for both. */
static int vfsfast_direct_prepare(struct vfsfast_func *func)
{
	if (!VFSFAST_DIRECT_NEEDS_FILTER)
		return 0;
	return vfsfast_filter_site(&func->dops, func, &func->dfiltered, true);
}

static void vfsfast_direct_release(struct vfsfast_func *func)
{
	vfsfast_filter_site(&func->dops, func, &func->dfiltered, false);
}

static int vfsfast_direct_attach_to(struct vfsfast_func *func,
				    unsigned long addr)
{
	int ret;

	ret = vfsfast_direct_register(&func->dops, func->site, addr);
	if (ret)
		return ret;
	func->direct = addr;
	/*
	 * Flagged after registering: register_ftrace_direct() (6.5+) sets
	 * the flags rather than adding to them.  ftrace_lock is not ours to
	 * take, and not needed: once registered, this ops' flags are written
	 * only by its own register, modify and unregister calls, which
	 * vfsfast_mutex serializes; the ftrace_enabled sysctl reads them
	 * under ftrace_lock and sees the old word or the new one, and a
	 * disable that saw the old one is caught by the site check after
	 * attach.  (The ip-named API of 5.10 and 6.1 uses the kernel's own
	 * PERMANENT direct_ops.)
	 */
	if (VFSFAST_DIRECT_NEEDS_FILTER)
		WRITE_ONCE(func->dops.flags,
			   func->dops.flags | VFSFAST_FL_PERMANENT);
	return 0;
}

static int vfsfast_direct_detach(struct vfsfast_func *func)
{
	return vfsfast_direct_unregister(&func->dops, func->site, func->direct);
}

static int vfsfast_call_attach(struct vfsfast_func *func)
{
	return vfsfast_direct_attach_to(func, (unsigned long)func->tramp);
}

static int vfsfast_jmp_attach(struct vfsfast_func *func)
{
	return vfsfast_direct_attach_to(func,
			vfsfast_jmp_addr(READ_ONCE(*func->redirect)));
}

static int vfsfast_jmp_retarget(struct vfsfast_func *func)
{
	unsigned long addr = vfsfast_jmp_addr(READ_ONCE(*func->redirect));
	int ret;

	if (addr == func->direct)
		return 0;
	ret = vfsfast_direct_modify(&func->dops, func->site, func->direct, addr);
	if (!ret)
		func->direct = addr;
	return ret;
}

/* For `vfsfast check`: "available" or why not, for this kernel. */
MODULE_INFO(vfsfast_backend_jmp, VFSFAST_JMP_INFO);
MODULE_INFO(vfsfast_backend_direct, VFSFAST_DIRECT_INFO);

const struct vfsfast_backend vfsfast_backend_direct = {
	.name = "direct",
	.unavailable = VFSFAST_NO_DIRECT,
	.prepare = vfsfast_direct_prepare,
	.release = vfsfast_direct_release,
	.attach = vfsfast_call_attach,
	.detach = vfsfast_direct_detach,
};

const struct vfsfast_backend vfsfast_backend_jmp = {
	.name = "jmp",
	.unavailable = VFSFAST_NO_JMP,
	.prepare = vfsfast_direct_prepare,
	.release = vfsfast_direct_release,
	.attach = vfsfast_jmp_attach,
	.detach = vfsfast_direct_detach,
	.retarget = vfsfast_jmp_retarget,
};
