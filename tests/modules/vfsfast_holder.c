// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: another user of vfs_readlink()'s ftrace site (or, with
 * func=NAME in ipmodify mode, of NAME's), so the suite can check how
 * vfsfast behaves next to it.
 *
 * mode=ipmodify (default): an IPMODIFY ftrace_ops that changes nothing,
 * the way a livepatch holds a function.
 * mode=kprobe_post: a kprobe with pre and post handlers, which kprobes
 * may put on the ftrace site with an IPMODIFY ops of their own.
 * /sys/module/vfsfast_holder/parameters/hits counts the calls it saw.
 */
#include <linux/fs.h>
#include <linux/ftrace.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/string.h>

#include "compat.h"

static char *mode = "ipmodify";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "ipmodify or kprobe_post");

static char *func = "vfs_readlink";
module_param(func, charp, 0444);
MODULE_PARM_DESC(func, "ipmodify: the function whose site is held");

static unsigned long hits;
module_param(hits, ulong, 0444);
MODULE_PARM_DESC(hits, "calls of vfs_readlink seen");

static void notrace holder_cb(unsigned long ip, unsigned long parent_ip,
			      struct ftrace_ops *op, struct vfsfast_fregs *fregs)
{
	WRITE_ONCE(hits, READ_ONCE(hits) + 1);
}

static struct ftrace_ops holder_ops = {
	.func = holder_cb,
	.flags = VFSFAST_FTRACE_FLAGS,
};

static int holder_pre(struct kprobe *p, struct pt_regs *regs)
{
	WRITE_ONCE(hits, READ_ONCE(hits) + 1);
	return 0;
}

static void holder_post(struct kprobe *p, struct pt_regs *regs,
			unsigned long flags)
{
}

static struct kprobe holder_kp = {
	.symbol_name = "vfs_readlink",
	.pre_handler = holder_pre,
	.post_handler = holder_post,
};

static bool holder_kprobe;

static int __init holder_init(void)
{
	int ret;

	holder_kprobe = !strcmp(mode, "kprobe_post");
	if (holder_kprobe)
		return register_kprobe(&holder_kp);
	if (strcmp(mode, "ipmodify"))
		return -EINVAL;
	/* By name: a function vfsfast observes may be static. */
	ret = ftrace_set_filter(&holder_ops, func, strlen(func), 1);
	if (ret)
		return ret;
	ret = register_ftrace_function(&holder_ops);
	if (ret)
		ftrace_set_filter(&holder_ops, NULL, 0, 1);
	return ret;
}

static void __exit holder_exit(void)
{
	if (holder_kprobe) {
		unregister_kprobe(&holder_kp);
		return;
	}
	unregister_ftrace_function(&holder_ops);
	ftrace_set_filter(&holder_ops, NULL, 0, 1);
}

module_init(holder_init);
module_exit(holder_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vfsfast test: another user of vfs_readlink's ftrace site");
