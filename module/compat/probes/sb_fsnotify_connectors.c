// SPDX-License-Identifier: GPL-2.0
/* Per-superblock count of objects with marks, s_fsnotify_connectors (5.15+, backported). */
#include <linux/fs.h>

long probe(struct super_block *sb)
{
	return atomic_long_read(&sb->s_fsnotify_connectors);
}
