// SPDX-License-Identifier: GPL-2.0
/*
 * kernfs nodes freed after an RCU grace period (kernfs_node.rcu): what
 * makes a node, its parent and its iattr readable from an RCU path walk.
 */
#include <linux/kernfs.h>

struct rcu_head *probe(struct kernfs_node *kn)
{
	return &kn->rcu;
}
