// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: a livepatch of vfs_readlink(), the way a distribution ships a
 * CVE fix.  Its replacement gives the stock result and counts its calls
 * in /sys/module/vfsfast_lp/parameters/calls, so the suite can tell who
 * served a readlink(): the livepatch, vfsfast or the stock kernel.
 * vfsfast_lp2.c builds it again as a cumulative (replace) livepatch.
 */
#include <linux/fs.h>
#include <linux/delayed_call.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/uaccess.h>

static unsigned long calls;
module_param(calls, ulong, 0444);
MODULE_PARM_DESC(calls, "vfs_readlink() calls the livepatch served");

static int lp_vfs_readlink(struct dentry *dentry, char __user *buffer,
			   int buflen)
{
	struct inode *inode = d_inode(dentry);
	DEFINE_DELAYED_CALL(done);
	const char *link;
	int res;

	WRITE_ONCE(calls, READ_ONCE(calls) + 1);
	if (unlikely(!(inode->i_opflags & IOP_DEFAULT_READLINK))) {
		if (unlikely(inode->i_op->readlink))
			return inode->i_op->readlink(dentry, buffer, buflen);
		if (!d_is_symlink(dentry))
			return -EINVAL;
		spin_lock(&inode->i_lock);
		inode->i_opflags |= IOP_DEFAULT_READLINK;
		spin_unlock(&inode->i_lock);
	}
	link = READ_ONCE(inode->i_link);
	if (!link) {
		link = inode->i_op->get_link(dentry, inode, &done);
		if (IS_ERR(link))
			return PTR_ERR(link);
	}
	res = strlen(link);
	if (res > (unsigned int)buflen)
		res = buflen;
	if (copy_to_user(buffer, link, res))
		res = -EFAULT;
	do_delayed_call(&done);
	return res;
}

static struct klp_func lp_funcs[] = {
	{ .old_name = "vfs_readlink", .new_func = lp_vfs_readlink },
	{ }
};

static struct klp_object lp_objs[] = {
	{ .funcs = lp_funcs },	/* name NULL: vmlinux */
	{ }
};

static struct klp_patch lp_patch = {
	.mod = THIS_MODULE,
	.objs = lp_objs,
#ifdef VFSFAST_LP_REPLACE
	/* A cumulative livepatch: takes over every function P1 patched. */
	.replace = true,
#endif
};

static int __init lp_init(void)
{
	return klp_enable_patch(&lp_patch);
}

static void __exit lp_exit(void)
{
}

module_init(lp_init);
module_exit(lp_exit);
MODULE_LICENSE("GPL");
MODULE_INFO(livepatch, "Y");
MODULE_DESCRIPTION("vfsfast test: a livepatch of vfs_readlink");
