// SPDX-License-Identifier: GPL-2.0
/* epoll's links of a file are one pointer, f_ep (5.16+), not f_ep_links. */
#include <linux/fs.h>

bool probe(struct file *file)
{
	return READ_ONCE(file->f_ep);
}
