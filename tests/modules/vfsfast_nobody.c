// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: path walks by a caller whose fsuid maps to no one
 * (INVALID_UID), through directories that nobody owns.  User space can
 * make neither: to setfsuid() and chown() an id of 4294967295 means
 * "unchanged".  An ext4 inode owned by 4294967295, or a ksmbd user mapped
 * there, is such an owner.
 *
 * disown=PATH gives the directory PATH the owner INVALID_UID, in place,
 * not through ->setattr() (which refuses an id with no mapping): for
 * tmpfs directories that a test made.  walk=PATH looks PATH up as the
 * writer with the fsuid INVALID_UID; result then holds 0 or the lookup's
 * negative errno.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/namei.h>
#include <linux/path.h>
#include <linux/string.h>
#include <linux/uidgid.h>

static int result;
module_param(result, int, 0444);
MODULE_PARM_DESC(result, "the last walk's answer: 0 or a negative errno");

/* PATH as written to a parameter, without echo's newline. */
static int nobody_path(const char *val, char *buf, size_t size)
{
	if (strscpy(buf, val, size) < 0)
		return -ENAMETOOLONG;
	strim(buf);
	return 0;
}

static int nobody_disown(const char *val, const struct kernel_param *kp)
{
	char buf[256];
	struct path path;
	struct inode *inode;
	int ret;

	ret = nobody_path(val, buf, sizeof(buf));
	if (!ret)
		ret = kern_path(buf, LOOKUP_DIRECTORY, &path);
	if (ret)
		return ret;
	inode = d_inode(path.dentry);
	inode_lock(inode);
	inode->i_uid = INVALID_UID;
	inode_unlock(inode);
	path_put(&path);
	return 0;
}

static int nobody_walk(const char *val, const struct kernel_param *kp)
{
	const struct cred *old;
	struct cred *cred;
	struct path path;
	char buf[256];
	int ret;

	ret = nobody_path(val, buf, sizeof(buf));
	if (ret)
		return ret;
	cred = prepare_creds();
	if (!cred)
		return -ENOMEM;
	cred->fsuid = INVALID_UID;
	old = override_creds(cred);
	ret = kern_path(buf, 0, &path);
	revert_creds(old);
	put_cred(cred);
	if (!ret)
		path_put(&path);
	result = ret;
	return 0;
}

static const struct kernel_param_ops nobody_disown_ops = { .set = nobody_disown };
static const struct kernel_param_ops nobody_walk_ops = { .set = nobody_walk };
module_param_cb(disown, &nobody_disown_ops, NULL, 0200);
MODULE_PARM_DESC(disown, "a directory to give the owner INVALID_UID");
module_param_cb(walk, &nobody_walk_ops, NULL, 0200);
MODULE_PARM_DESC(walk, "a path to look up with the fsuid INVALID_UID");

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vfsfast test: walks by and through ids that map to no one");
