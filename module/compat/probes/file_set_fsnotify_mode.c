// SPDX-License-Identifier: GPL-2.0
/* Pseudo files born with FMODE_NONOTIFY, set by file_set_fsnotify_mode() (6.14+). */
#include <linux/fs.h>

void probe(struct file *file)
{
	file_set_fsnotify_mode(file, FMODE_NONOTIFY);
}
