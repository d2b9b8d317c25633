// SPDX-License-Identifier: GPL-2.0
/* fsnotify(to_tell, mask, data, data_type, name, cookie): 4.20-5.8. */
#include <linux/fsnotify_backend.h>

int (*probe)(struct inode *, __u32, const void *, int, const struct qstr *,
	     u32) = fsnotify;
