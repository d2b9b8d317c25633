// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: holds vfs_readlink() with an IPMODIFY ftrace_ops that changes
 * nothing, the way a livepatch holds a function, so the suite can check
 * how vfsfast behaves when its target is taken.
 */
#include <linux/fs.h>
#include <linux/ftrace.h>
#include <linux/module.h>

#include "compat.h"

static void notrace holder_cb(unsigned long ip, unsigned long parent_ip,
			      struct ftrace_ops *op, struct vfsfast_fregs *fregs)
{
}

static struct ftrace_ops holder_ops = {
	.func = holder_cb,
	.flags = VFSFAST_FTRACE_FLAGS,
};

static int __init holder_init(void)
{
	int ret;

	ret = ftrace_set_filter_ip(&holder_ops, (unsigned long)vfs_readlink, 0, 0);
	if (ret)
		return ret;
	ret = register_ftrace_function(&holder_ops);
	if (ret)
		ftrace_set_filter_ip(&holder_ops, (unsigned long)vfs_readlink, 1, 0);
	return ret;
}

static void __exit holder_exit(void)
{
	unregister_ftrace_function(&holder_ops);
	ftrace_set_filter_ip(&holder_ops, (unsigned long)vfs_readlink, 1, 0);
}

module_init(holder_init);
module_exit(holder_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vfsfast test: an IPMODIFY user of vfs_readlink");
