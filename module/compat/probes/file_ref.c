// SPDX-License-Identifier: GPL-2.0
/* struct file counted by a file_ref_t (6.13+), not an atomic_long_t. */
#include <linux/fs.h>

bool probe(struct file *f)
{
	return file_ref_get(&f->f_ref);
}
