// SPDX-License-Identifier: GPL-2.0
/* kernfs_node.__parent, an __rcu pointer (6.15+). */
#include <linux/kernfs.h>
#include <linux/rcupdate.h>

bool probe(struct kernfs_node *kn, struct kernfs_node *parent)
{
	return rcu_access_pointer(kn->__parent) == parent;
}
