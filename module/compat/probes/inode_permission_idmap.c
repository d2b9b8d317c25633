// SPDX-License-Identifier: GPL-2.0
/* inode_permission() takes the mount's struct mnt_idmap (6.3+). */
#include <linux/fs.h>

int probe(struct mnt_idmap *idmap, struct inode *inode)
{
	return inode_permission(idmap, inode, MAY_EXEC);
}
