// SPDX-License-Identifier: GPL-2.0
/* Out-of-line __fsnotify_parent(dentry, mask, data, data_type): 5.8+. */
#include <linux/fsnotify_backend.h>

int (*probe)(struct dentry *, __u32, const void *, int) = __fsnotify_parent;
