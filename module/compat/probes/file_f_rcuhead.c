// SPDX-License-Identifier: GPL-2.0
/* struct file's task-work head outside the f_u union (6.0+). */
#include <linux/fs.h>

struct callback_head *probe(struct file *f)
{
	return &f->f_rcuhead;
}
