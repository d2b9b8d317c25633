/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the lookup_exec optimization needs to know of the kernel.  6.19
 * gave path lookup its own MAY_EXEC check of a directory
 * (lookup_inode_permission_may_exec()), with IOP_FASTPERM_MAY_EXEC for
 * filesystems that have a ->permission(): that flag is what the probe
 * sees.
 *
 * inode_permission() took the mount's user namespace from 5.12 and its
 * struct mnt_idmap from 6.3.  Where the mount maps no ids (the identity:
 * init_user_ns, nop_mnt_idmap, or a kernel before idmapped mounts),
 * acl_permission_check()'s owner test is uid_eq(current_fsuid(),
 * inode->i_uid).
 */
#ifndef _VFSFAST_COMPAT_LOOKUP_EXEC_H
#define _VFSFAST_COMPAT_LOOKUP_EXEC_H

#include <linux/fs.h>
#include <linux/user_namespace.h>

#ifdef VFSFAST_HAVE_IOP_FASTPERM_MAY_EXEC
#define VFSFAST_UPSTREAM_LOOKUP_EXEC \
	"path lookup checks MAY_EXEC on a directory itself (IOP_FASTPERM_MAY_EXEC)"
#define VFSFAST_UPSTREAM_LOOKUP_EXEC_INFO	"IOP_FASTPERM_MAY_EXEC"
#define VFSFAST_NO_LOOKUP_EXEC \
	"the kernel has it upstream (lookup_inode_permission_may_exec, 6.19): nothing to replace"
#else
#define VFSFAST_LOOKUP_EXEC			1
#define VFSFAST_UPSTREAM_LOOKUP_EXEC		NULL
#define VFSFAST_UPSTREAM_LOOKUP_EXEC_INFO	"none"
#define VFSFAST_NO_LOOKUP_EXEC			NULL
#endif

/*
 * inode_permission()'s parameter list and the arguments that pass it
 * on: "fn VFSFAST_INODE_PERMISSION_PARAMS" declares, "fn
 * VFSFAST_INODE_PERMISSION_ARGS" calls, "fn
 * VFSFAST_INODE_PERMISSION_ARGS_OF(mnt, inode, mask)" calls for an inode
 * seen through a vfsmount; vfsfast_mount_maps_nothing()
 * says, inside such a function, whether the mount's mapping is the
 * identity.
 */
#if defined(VFSFAST_HAVE_INODE_PERMISSION_IDMAP)
#define VFSFAST_INODE_PERMISSION_PARAMS	\
	(struct mnt_idmap *idmap, struct inode *inode, int mask)
#define VFSFAST_INODE_PERMISSION_ARGS	(idmap, inode, mask)
#define VFSFAST_INODE_PERMISSION_ARGS_OF(mnt, inode, mask) \
	(mnt_idmap(mnt), inode, mask)
#define vfsfast_mount_maps_nothing()	(idmap == &nop_mnt_idmap)
#define VFSFAST_INODE_PERMISSION_NARGS	3
#define vfsfast_lookup_exec_args(args, mnt, inode, mask)		\
	vfsfast_args3(args, (unsigned long)mnt_idmap(mnt),		\
		      (unsigned long)(inode), (unsigned int)(mask))
#elif defined(VFSFAST_HAVE_INODE_PERMISSION_USERNS)
#define VFSFAST_INODE_PERMISSION_PARAMS	\
	(struct user_namespace *mnt_userns, struct inode *inode, int mask)
#define VFSFAST_INODE_PERMISSION_ARGS	(mnt_userns, inode, mask)
#define VFSFAST_INODE_PERMISSION_ARGS_OF(mnt, inode, mask) \
	(mnt_user_ns(mnt), inode, mask)
#define vfsfast_mount_maps_nothing()	(mnt_userns == &init_user_ns)
#define VFSFAST_INODE_PERMISSION_NARGS	3
#define vfsfast_lookup_exec_args(args, mnt, inode, mask)		\
	vfsfast_args3(args, (unsigned long)mnt_user_ns(mnt),		\
		      (unsigned long)(inode), (unsigned int)(mask))
#else
#define VFSFAST_INODE_PERMISSION_PARAMS	(struct inode *inode, int mask)
#define VFSFAST_INODE_PERMISSION_ARGS	(inode, mask)
#define VFSFAST_INODE_PERMISSION_ARGS_OF(mnt, inode, mask)	(inode, mask)
#define vfsfast_mount_maps_nothing()	true
#define VFSFAST_INODE_PERMISSION_NARGS	2
#define vfsfast_lookup_exec_args(args, mnt, inode, mask)		\
	vfsfast_args2(args, (unsigned long)(inode), (unsigned int)(mask))
#endif

/*
 * The arguments of one inode_permission() call as registers hold them,
 * for the check of the split part's shape; returns how many.
 */
static inline unsigned int vfsfast_args2(unsigned long *args, unsigned long a,
					 unsigned long b)
{
	args[0] = a;
	args[1] = b;
	return 2;
}

static inline unsigned int vfsfast_args3(unsigned long *args, unsigned long a,
					 unsigned long b, unsigned long c)
{
	args[2] = c;
	return vfsfast_args2(args, a, b) + 1;
}

/*
 * Whether the inode's access ACL is known to be absent: i_acl is NULL
 * once a lookup found none (or the filesystem said so at creation, as
 * tmpfs does), ACL_NOT_CACHED before anyone asked.
 */
#ifdef CONFIG_FS_POSIX_ACL
#define vfsfast_acl_known_absent(inode)	(!READ_ONCE((inode)->i_acl))
#else
#define vfsfast_acl_known_absent(inode)	true
#endif

#endif
