// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: a livepatch of close_fd(), which close_sync's replacement of
 * close(2) stands in for without hooking it, the way a distribution would
 * ship a fix to the descriptor table's close.  Its close_fd() does what
 * the kernel's does and counts its calls in
 * /sys/module/vfsfast_lp_close/parameters/calls, so the suite can tell
 * whether a close(2) went through the fix.  On a kernel where close_sync
 * cannot be built (close_fd_get_file() private), it refuses to load.
 */
#include <linux/file.h>
#include <linux/livepatch.h>
#include <linux/module.h>

#include "compat.h"
#include "close_sync.h"

static unsigned long calls;
module_param(calls, ulong, 0444);
MODULE_PARM_DESC(calls, "close_fd() calls the livepatch served");

#ifdef VFSFAST_CLOSE_SYNC
static int lp_close_fd(unsigned int fd)
{
	struct file *file;

	WRITE_ONCE(calls, READ_ONCE(calls) + 1);
	file = vfsfast_close_fd_get_file(fd);
	if (!file)
		return -EBADF;
	/* The table's reference is now the caller's: filp_close() drops it. */
	fput(file);
	return filp_close(file, current->files);
}

static struct klp_func lp_funcs[] = {
	{ .old_name = "close_fd", .new_func = lp_close_fd },
	{ }
};

static struct klp_object lp_objs[] = {
	{ .funcs = lp_funcs },	/* name NULL: vmlinux */
	{ }
};

static struct klp_patch lp_patch = {
	.mod = THIS_MODULE,
	.objs = lp_objs,
};

static int __init lp_init(void)
{
	return klp_enable_patch(&lp_patch);
}
#else
static int __init lp_init(void)
{
	return -ENODEV;
}
#endif

static void __exit lp_exit(void)
{
}

module_init(lp_init);
module_exit(lp_exit);
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
MODULE_DESCRIPTION("vfsfast test: a livepatch of close_fd()");
