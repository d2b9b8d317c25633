// SPDX-License-Identifier: GPL-2.0
/*
 * The inode operations as kernfs had them before idmapped mounts (5.12)
 * gave them a user namespace argument.
 */
#include <linux/fs.h>
#include <linux/kernfs.h>

struct probe_iops {
	int (*permission)(struct inode *inode, int mask);
	int (*getattr)(const struct path *path, struct kstat *stat,
		       u32 request_mask, unsigned int query_flags);
	int (*setattr)(struct dentry *dentry, struct iattr *iattr);
};

void probe(struct probe_iops *p, const struct inode_operations *iops)
{
	p->permission = iops->permission;
	p->getattr = iops->getattr;
	p->setattr = iops->setattr;
}
