// SPDX-License-Identifier: GPL-2.0
/* The superblock of an event's data, as fsnotify() picks it (5.15+, backported). */
#include <linux/fsnotify_backend.h>

struct super_block *probe(const void *data, int data_type)
{
	return fsnotify_data_sb(data, data_type);
}
