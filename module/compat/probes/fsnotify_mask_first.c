// SPDX-License-Identifier: GPL-2.0
/* fsnotify(mask, data, data_type, dir, name, inode, cookie): 5.9+. */
#include <linux/fsnotify_backend.h>

int (*probe)(__u32, const void *, int, struct inode *, const struct qstr *,
	     struct inode *, u32) = fsnotify;
