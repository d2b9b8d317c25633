// SPDX-License-Identifier: GPL-2.0
/* kernfs negative dentries validated by a directory revision (5.15+). */
#include <linux/kernfs.h>

unsigned long probe(struct kernfs_node *kn)
{
	return kn->dir.rev;
}
