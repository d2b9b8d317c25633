/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the proc_pid_rcu optimization needs to know of the kernel.
 *
 * Whether pid_revalidate() already answers in RCU mode (5.14) shows in no
 * header: the module asks the kernel's own function at load
 * (opt_proc_pid_rcu.c).  What it needs at build time is the layout of
 * struct proc_inode, private to fs/proc/internal.h, which no header
 * package ships: the same from 5.10 to 7.x, and checked at load against
 * the kernel (an inode of /proc/self must name the loading task's pid).
 * A kernel with randomized struct layouts cannot have it.
 */
#ifndef _VFSFAST_COMPAT_PROC_PID_RCU_H
#define _VFSFAST_COMPAT_PROC_PID_RCU_H

#include <linux/fs.h>
#include <linux/list.h>

#if defined(CONFIG_RANDSTRUCT) || defined(CONFIG_GCC_PLUGIN_RANDSTRUCT)
#define VFSFAST_NO_PROC_PID_RCU \
	"struct layouts are randomized (RANDSTRUCT): struct proc_inode unknown"
#else
#define VFSFAST_PROC_PID_RCU		1
#define VFSFAST_NO_PROC_PID_RCU		NULL
#endif

/*
 * The kernel's answer, when it has it: set at load, since no header
 * says; "load-time" is what modinfo can say before.
 */
#define VFSFAST_UPSTREAM_PROC_PID_RCU \
	"pid_revalidate answers in RCU mode"
#define VFSFAST_UPSTREAM_PROC_PID_RCU_INFO	"load-time"

/* fs/proc/internal.h's struct proc_inode, up to the inode it embeds. */
struct vfsfast_proc_inode {
	struct pid *pid;
	unsigned int fd;
	void *op;	/* union proc_op: pointers only */
	void *pde;
	void *sysctl;
	void *sysctl_entry;
	struct hlist_node sibling_inodes;
	const void *ns_ops;
	struct inode vfs_inode;
};

static inline struct pid *vfsfast_proc_pid(struct inode *inode)
{
	return container_of(inode, struct vfsfast_proc_inode, vfs_inode)->pid;
}

/* pid_revalidate() and pid_update_inode() are fs/proc's own. */
#ifdef VFSFAST_HAVE_DOP_REVALIDATE_DIR_NAME
typedef int vfsfast_pid_revalidate_t(struct inode *dir, const struct qstr *name,
				     struct dentry *dentry, unsigned int flags);
#else
typedef int vfsfast_pid_revalidate_t(struct dentry *dentry, unsigned int flags);
#endif
typedef void vfsfast_pid_update_inode_t(struct task_struct *task,
					struct inode *inode);

#endif
