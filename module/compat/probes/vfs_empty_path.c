// SPDX-License-Identifier: GPL-2.0
/* fstatat() and statx() of an empty path skip the walk (vfs_empty_path(), 6.11+). */
#include <linux/fs.h>

bool probe(int dfd, const char __user *path)
{
	return vfs_empty_path(dfd, path);
}
