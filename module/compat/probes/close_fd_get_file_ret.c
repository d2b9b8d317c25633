// SPDX-License-Identifier: GPL-2.0
/* close_fd_get_file() returns the file, with the table's reference (5.19 to 6.x). */
#include <linux/fdtable.h>

struct file *probe(unsigned int fd)
{
	return close_fd_get_file(fd);
}
