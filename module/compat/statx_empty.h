/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the statx_empty optimization needs to know of the kernel.  6.11
 * made statx(fd, "", AT_EMPTY_PATH) skip the name walk and added
 * vfs_empty_path(), which is what the probe sees.
 *
 * statx() reports the mount's id (stx_mnt_id), which lives in struct
 * mount, private to fs/mount.h: the module carries its layout as 5.10 and
 * 6.1 have it (the same in both), up to mnt_id, and checks it at load
 * against the kernel's own answer (opt_statx_empty.c).  A kernel with
 * randomized struct layouts cannot have it.
 */
#ifndef _VFSFAST_COMPAT_STATX_EMPTY_H
#define _VFSFAST_COMPAT_STATX_EMPTY_H

#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mount.h>
#include <linux/rcupdate.h>

#ifdef VFSFAST_HAVE_VFS_EMPTY_PATH
#define VFSFAST_UPSTREAM_STATX_EMPTY \
	"fstatat and statx of an empty path skip the walk (vfs_empty_path)"
#define VFSFAST_UPSTREAM_STATX_EMPTY_INFO	"vfs_empty_path"
#define VFSFAST_NO_STATX_EMPTY \
	"the kernel has it upstream (vfs_empty_path, 6.11): nothing to replace"
#elif defined(CONFIG_RANDSTRUCT) || defined(CONFIG_GCC_PLUGIN_RANDSTRUCT)
#define VFSFAST_UPSTREAM_STATX_EMPTY		NULL
#define VFSFAST_UPSTREAM_STATX_EMPTY_INFO	"none"
#define VFSFAST_NO_STATX_EMPTY \
	"struct layouts are randomized (RANDSTRUCT): struct mount unknown"
#else
#define VFSFAST_STATX_EMPTY			1
#define VFSFAST_UPSTREAM_STATX_EMPTY		NULL
#define VFSFAST_UPSTREAM_STATX_EMPTY_INFO	"none"
#define VFSFAST_NO_STATX_EMPTY			NULL
#endif

/* fs/mount.h's struct mount, up to the mount id. */
struct vfsfast_mount {
	struct hlist_node mnt_hash;
	void *mnt_parent;
	struct dentry *mnt_mountpoint;
	struct vfsmount mnt;
	union {
		struct rcu_head mnt_rcu;
		struct llist_node mnt_llist;
	};
#ifdef CONFIG_SMP
	void __percpu *mnt_pcp;
#else
	int mnt_count;
	int mnt_writers;
#endif
	struct list_head mnt_mounts;
	struct list_head mnt_child;
	struct list_head mnt_instance;
	const char *mnt_devname;
	struct list_head mnt_list;
	struct list_head mnt_expire;
	struct list_head mnt_share;
	struct list_head mnt_slave_list;
	struct list_head mnt_slave;
	void *mnt_master;
	void *mnt_ns;
	void *mnt_mp;
	union {
		struct hlist_node mnt_mp_list;
		struct hlist_node mnt_umount;
	};
	struct list_head mnt_umounting;
#ifdef CONFIG_FSNOTIFY
	void __rcu *mnt_fsnotify_marks;
	__u32 mnt_fsnotify_mask;
#endif
	int mnt_id;
};

static inline int vfsfast_mnt_id(const struct vfsmount *mnt)
{
	return container_of(mnt, struct vfsfast_mount, mnt)->mnt_id;
}

/* The x86-64 system call wrappers' type. */
typedef long vfsfast_statx_syscall_t(const struct pt_regs *regs);

#endif
