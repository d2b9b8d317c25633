// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: two filesystem types that exist to be listed in
 * /proc/filesystems, one with FS_REQUIRES_DEV and one without, registered
 * while the module is loaded.  Neither can be mounted.  Loading and
 * unloading it is what changes the list; names= gives the two names
 * ("<name>" and "<name>blk"), so that tests can tell loads apart.
 */
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/module.h>

static char *name = "vfsfasttestfs";
module_param(name, charp, 0444);
MODULE_PARM_DESC(name, "the types' name (the second gets \"blk\" added)");

static char blkname[64];

static int vfsfast_testfs_init_fs_context(struct fs_context *fc)
{
	return -EOPNOTSUPP;
}

static struct file_system_type vfsfast_testfs_type = {
	.owner = THIS_MODULE,
	.init_fs_context = vfsfast_testfs_init_fs_context,
	.kill_sb = kill_anon_super,
};

static struct file_system_type vfsfast_testfs_blk_type = {
	.owner = THIS_MODULE,
	.fs_flags = FS_REQUIRES_DEV,
	.init_fs_context = vfsfast_testfs_init_fs_context,
	.kill_sb = kill_block_super,
};

static int __init vfsfast_testfs_init(void)
{
	int ret;

	snprintf(blkname, sizeof(blkname), "%sblk", name);
	vfsfast_testfs_type.name = name;
	vfsfast_testfs_blk_type.name = blkname;
	ret = register_filesystem(&vfsfast_testfs_type);
	if (ret)
		return ret;
	ret = register_filesystem(&vfsfast_testfs_blk_type);
	if (ret)
		unregister_filesystem(&vfsfast_testfs_type);
	return ret;
}

static void __exit vfsfast_testfs_exit(void)
{
	unregister_filesystem(&vfsfast_testfs_blk_type);
	unregister_filesystem(&vfsfast_testfs_type);
}

module_init(vfsfast_testfs_init);
module_exit(vfsfast_testfs_exit);
MODULE_DESCRIPTION("vfsfast test: filesystem types for /proc/filesystems");
MODULE_LICENSE("GPL");
