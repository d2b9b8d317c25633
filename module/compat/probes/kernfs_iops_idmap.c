// SPDX-License-Identifier: GPL-2.0
/*
 * Inode operations and helpers that take a struct mnt_idmap (6.3+), with
 * generic_fillattr() given the request mask (6.6+).
 */
#include <linux/fs.h>
#include <linux/mnt_idmapping.h>
#include <linux/stat.h>

struct probe_iops {
	int (*permission)(struct mnt_idmap *idmap, struct inode *inode,
			  int mask);
	int (*getattr)(struct mnt_idmap *idmap, const struct path *path,
		       struct kstat *stat, u32 request_mask,
		       unsigned int query_flags);
	int (*setattr)(struct mnt_idmap *idmap, struct dentry *dentry,
		       struct iattr *iattr);
};

int probe(struct probe_iops *p, const struct inode_operations *iops,
	  struct inode *inode, struct kstat *stat)
{
	p->permission = iops->permission;
	p->getattr = iops->getattr;
	p->setattr = iops->setattr;
	generic_fillattr(&nop_mnt_idmap, STATX_BASIC_STATS, inode, stat);
	return generic_permission(&nop_mnt_idmap, inode, MAY_READ);
}
