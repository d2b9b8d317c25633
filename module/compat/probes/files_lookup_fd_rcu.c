// SPDX-License-Identifier: GPL-2.0
/* A descriptor's file under RCU is files_lookup_fd_rcu() (5.13; 5.10.y from 5.10.22x), not fcheck_files(). */
#include <linux/fdtable.h>

struct file *probe(struct files_struct *files, unsigned int fd)
{
	return files_lookup_fd_rcu(files, fd);
}
