// SPDX-License-Identifier: GPL-2.0
/* Per-superblock watched-object count in fsnotify_sb_info (6.8+). */
#include <linux/fs.h>
#include <linux/fsnotify.h>

bool probe(struct super_block *sb)
{
	return fsnotify_sb_has_watchers(sb);
}
