// SPDX-License-Identifier: GPL-2.0
/* Upstream symlink length caching (6.14+): IOP_CACHED_LINK and i_linklen. */
#include <linux/fs.h>

int probe(struct inode *inode)
{
	return (inode->i_opflags & IOP_CACHED_LINK) ? inode->i_linklen : -1;
}
