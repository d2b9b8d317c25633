// SPDX-License-Identifier: GPL-2.0
/* inode_permission() takes the mount's user namespace (5.12 to 6.2). */
#include <linux/fs.h>

int probe(struct user_namespace *mnt_userns, struct inode *inode)
{
	return inode_permission(mnt_userns, inode, MAY_EXEC);
}
