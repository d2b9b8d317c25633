// SPDX-License-Identifier: GPL-2.0
/*
 * Builds only if the inline helpers of <linux/fsnotify.h> (fsnotify_parent(),
 * fsnotify_name(), fsnotify_inode()) do not read the superblock's watch
 * count: with the names poisoned, any such read fails to compile.  Kernels
 * that have the check skip the calls to fsnotify() and __fsnotify_parent()
 * inline when nothing on the superblock is watched, which leaves vfsfast's
 * fast paths nothing to save.
 */
#include <linux/fs.h>
#include <linux/fsnotify_backend.h>

#ifdef _LINUX_FS_NOTIFY_H
#error <linux/fsnotify.h> already included: cannot tell
#endif
#define s_fsnotify_connectors vfsfast_probe_poison
#define fsnotify_sb_info vfsfast_probe_poison
#define s_fsnotify_info vfsfast_probe_poison
#include <linux/fsnotify.h>

int probe(struct file *file)
{
	return fsnotify_file(file, FS_MODIFY);
}
