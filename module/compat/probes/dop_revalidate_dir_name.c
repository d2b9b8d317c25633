// SPDX-License-Identifier: GPL-2.0
/* ->d_revalidate given the walk's parent inode and name (6.14+). */
#include <linux/dcache.h>
#include <linux/fs.h>

int probe(const struct dentry_operations *dops, struct inode *dir,
	  const struct qstr *name, struct dentry *dentry)
{
	return dops->d_revalidate(dir, name, dentry, 0);
}
