// SPDX-License-Identifier: GPL-2.0
/*
 * lookup_exec: the traversal check of a directory (MAY_EXEC) without
 * the layers of inode_permission(), the gain of 6.19's "fs: speed up
 * path lookup with cheaper handling of MAY_EXEC" (5382107fad9b's series,
 * lookup_inode_permission_may_exec()) for kernels before it.
 *
 * Path lookup asks inode_permission(dir, MAY_EXEC), with MAY_NOT_BLOCK
 * in RCU mode, once for every directory it walks through.  For that
 * mask, stock 5.10, 6.1 and 6.12 (fs/namei.c) run:
 *   sb_permission() and the MAY_WRITE tests: nothing without MAY_WRITE;
 *   do_inode_permission(): the filesystem's ->permission() where it has
 *     one, else (IOP_FASTPERM, set once the inode is known to have none)
 *     generic_permission() -> acl_permission_check(): the owner (through
 *     the mount's id mapping) is judged by the owner bits alone; anyone
 *     else by the access ACL if IS_POSIXACL() and the group bits are not
 *     0 and the ACL exists (an absent one, i_acl NULL, gives -EAGAIN),
 *     else by the group or other bits; only a denial goes on to the
 *     capability checks;
 *   devcgroup_inode_permission(): nothing but for block and character
 *     devices;
 *   security_inode_permission(inode, mask): every LSM's hook.
 *
 * Upstream's shortcut, and the replacement's: when the mask is MAY_EXEC
 * (with or without MAY_NOT_BLOCK), the inode a directory without
 * ->permission() (IOP_FASTPERM), its mode grants execute to owner, group
 * and other alike (0111), and no ACL can have a say, the mode bits grant
 * the search whoever asks, so the answer is security_inode_permission()'s,
 * called with the same inode and mask.  "No ACL can have a say" is
 * upstream's no_acl_inode() (i_acl known absent), or !IS_POSIXACL().
 * Beyond upstream, a caller who owns the directory, on a mount that maps
 * no ids, is judged as acl_permission_check() judges the owner first: by
 * the owner's search bit alone, without the ACL (root walking root's
 * directories on ext4, whose i_acl stays unknown because nothing ever
 * asks for it, or root's 0700 directories).  The shortcut holds for any
 * caller of inode_permission() with that mask on a directory, not only
 * lookup's.
 *
 * Exact under every LSM: each one's inode_permission hook (SELinux,
 * Smack, a BPF LSM program; AppArmor, Landlock, Yama, IMA and the
 * integrity modules have none) runs as before, with the same arguments,
 * and is all that can still refuse.  Capabilities, user namespaces and
 * idmapped mounts only matter once the mode bits or an ACL refuse, which
 * is where the replacement steps aside; a mapped mount only loses the
 * owner test (the ACL or !IS_POSIXACL test must decide there).  The mode,
 * flags and i_acl are read once each, without locks, as stock reads them:
 * a chmod or setfacl racing with the walk gets the answer of one side of
 * it, as with stock.  Every other call (any other mask, a non-directory,
 * a mode without 0111, a known ACL, a filesystem's own ->permission())
 * is stock's, by a tail call.
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/path.h>
#include <linux/security.h>
#include <linux/uidgid.h>

#include "vfsfast.h"
#include "lookup_exec.h"

#define VFSFAST_LOOKUP_EXEC_TARGETS(T)					\
	(T(inode_permission, inode_permission, 0, split,		\
	   vfsfast_inode_permission)					\
	 T(security_inode_permission, security_inode_permission, 0, call, \
	   vfsfast_stock_security_inode_permission))

VFSFAST_STATS(lookup_exec);

#ifdef VFSFAST_LOOKUP_EXEC
VFSFAST_DECLARE_TARGETS(VFSFAST_LOOKUP_EXEC_TARGETS);

#ifdef VFSFAST_FAULT_INJECT
/*
 * fi_lookup_exec_noacl=1 lets the shortcut through whatever the ACL
 * says, the bug t_lookup_exec's differential must catch (a user the ACL
 * refuses walks through).  fi_lookup_exec_idmap=1 takes every mount for
 * one that maps no ids, so the owner is judged by the unmapped i_uid,
 * the bug its idmapped-mount differential must catch.
 * fi_lookup_exec_nolsm=1 grants the shortcut's searches without asking
 * the LSMs, the bug t_lsm's BPF LSM program must catch (it counts fewer
 * checks, and a directory it refuses is walked through).
 */
static bool fi_lookup_exec_noacl, fi_lookup_exec_idmap, fi_lookup_exec_nolsm;
module_param(fi_lookup_exec_noacl, bool, 0644);
module_param(fi_lookup_exec_idmap, bool, 0644);
module_param(fi_lookup_exec_nolsm, bool, 0644);
/*
 * fi_lookup_exec_anyowner=1 takes a caller whose fsuid maps to no one
 * for the owner of a directory that nobody owns, the bug t_lookup_exec's
 * unmapped-id check must catch where stock judges such a caller as other.
 */
static bool fi_lookup_exec_anyowner;
module_param(fi_lookup_exec_anyowner, bool, 0644);
#define vfsfast_fi_noacl()	READ_ONCE(fi_lookup_exec_noacl)
#define vfsfast_fi_idmap()	READ_ONCE(fi_lookup_exec_idmap)
#define vfsfast_fi_nolsm()	READ_ONCE(fi_lookup_exec_nolsm)
#define vfsfast_fi_anyowner()	READ_ONCE(fi_lookup_exec_anyowner)
#else
#define vfsfast_fi_noacl()	false
#define vfsfast_fi_idmap()	false
#define vfsfast_fi_nolsm()	false
#define vfsfast_fi_anyowner()	false
#endif

static vfsfast_noipa int vfsfast_inode_permission_stock VFSFAST_INODE_PERMISSION_PARAMS
{
	vfsfast_fallback(lookup_exec);
	return vfsfast_stock_inode_permission VFSFAST_INODE_PERMISSION_ARGS;
}

/*
 * Whether stock would grant the search by the mode bits alone: the owner
 * (on a mount that maps no ids) by the owner's search bit, before any
 * ACL is looked at; anyone else when all three search bits are set and
 * no ACL can say otherwise.  mode is the caller's one read of i_mode.
 *
 * An owner that maps to no one (INVALID_UID: an ext4 inode owned by
 * 4294967295, a ksmbd user mapped there) is nobody's where
 * acl_permission_check() asks vfsuid_eq_kuid(), which is false for an
 * invalid id (6.12); where it asks uid_eq() (5.10, Debian's 6.1), a
 * caller of that fsuid is its owner.  Such a directory never takes the
 * owner test here: all three search bits grant alike on both, anything
 * else goes to stock.
 */
static __always_inline bool vfsfast_mode_grants(struct inode *inode, umode_t mode,
						bool unmapped)
{
	kuid_t owner = inode->i_uid;

	if (unmapped && (uid_valid(owner) || vfsfast_fi_anyowner()) &&
	    uid_eq(current_fsuid(), owner))
		return mode & 0100;
	return (mode & 0111) == 0111 &&
	       (!IS_POSIXACL(inode) || vfsfast_acl_known_absent(inode) ||
		vfsfast_fi_noacl());
}

static int vfsfast_inode_permission VFSFAST_INODE_PERMISSION_PARAMS
{
	umode_t mode;

	/* The other masks (opens, writes) pay no load of i_mode here. */
	if (unlikely((mask & ~MAY_NOT_BLOCK) != MAY_EXEC))
		return vfsfast_inode_permission_stock VFSFAST_INODE_PERMISSION_ARGS;
	mode = READ_ONCE(inode->i_mode);
	if (likely(S_ISDIR(mode) && (READ_ONCE(inode->i_opflags) & IOP_FASTPERM)) &&
	    vfsfast_mode_grants(inode, mode,
				vfsfast_mount_maps_nothing() || vfsfast_fi_idmap())) {
		vfsfast_hit(lookup_exec);
		if (vfsfast_fi_nolsm())
			return 0;
		return vfsfast_stock_security_inode_permission(inode, mask);
	}
	return vfsfast_inode_permission_stock VFSFAST_INODE_PERMISSION_ARGS;
}

VFSFAST_TAIL_CALL(vfsfast_inode_permission_stock, vfsfast_stock_inode_permission);
VFSFAST_TAIL_CALL(vfsfast_inode_permission, vfsfast_stock_security_inode_permission);
VFSFAST_TAIL_CALL(vfsfast_inode_permission, vfsfast_inode_permission_stock);

/*
 * Where GCC split inode_permission() (5.10: its head returns -EROFS for
 * MAY_WRITE on a read-only filesystem and jumps to
 * inode_permission.part.0 with its arguments unchanged, and the walk
 * calls the part directly), the target is the part.  Its shape is
 * watched first (split.c): entered from inode_permission() with exactly
 * its arguments, with and without MAY_NOT_BLOCK, and no further one.
 * Only then is the part called, to answer as inode_permission() does for
 * the loading task's root directory.  MAY_NOT_BLOCK is asked under
 * rcu_read_lock(), as path lookup asks it.  Nothing is hooked yet.
 */
static const int vfsfast_lookup_exec_masks[] = { MAY_EXEC, MAY_EXEC | MAY_NOT_BLOCK };

static noinline int vfsfast_lookup_exec_ask(struct path *root, int mask, bool part)
{
	struct inode *inode = d_inode(root->dentry);

	if (part)
		return vfsfast_stock_inode_permission
			VFSFAST_INODE_PERMISSION_ARGS_OF(root->mnt, inode, mask);
	return inode_permission
		VFSFAST_INODE_PERMISSION_ARGS_OF(root->mnt, inode, mask);
}

static int vfsfast_lookup_exec_ask_rcu(struct path *root, int mask, bool part)
{
	int ret;

	if (!(mask & MAY_NOT_BLOCK))
		return vfsfast_lookup_exec_ask(root, mask, part);
	rcu_read_lock();
	ret = vfsfast_lookup_exec_ask(root, mask, part);
	rcu_read_unlock();
	return ret;
}

static const char *vfsfast_lookup_exec_shape(struct vfsfast_opt *opt, struct path *root)
{
	struct vfsfast_split_watch w;
	unsigned long args[3], site, size;
	const char *why = NULL;
	unsigned int n, i;
	int ret;

	/* The head's site, by the linker's address: no name to scan for. */
	vfsfast_lookup_name("inode_permission", (unsigned long)inode_permission,
			    &site, &size);
	ret = vfsfast_split_watch(&w, site, VFSFAST_INODE_PERMISSION_NARGS,
				  opt->funcs[0].site);
	if (ret)
		return "cannot be probed";
	for (i = 0; i < ARRAY_SIZE(vfsfast_lookup_exec_masks) && !why; i++) {
		n = vfsfast_lookup_exec_args(args, root->mnt, d_inode(root->dentry),
					     vfsfast_lookup_exec_masks[i]);
		vfsfast_lookup_exec_ask_rcu(root, vfsfast_lookup_exec_masks[i], false);
		why = vfsfast_split_seen(&w, args, n, BIT(n - 1));
	}
	vfsfast_split_unwatch(&w);
	return why;
}

static int vfsfast_lookup_exec_setup(struct vfsfast_opt *opt)
{
	int i, mask, part = 0, whole = 0;
	const char *why;
	struct path root;

	if (!opt->funcs[0].split)
		return 0;
	get_fs_root(current->fs, &root);
	why = vfsfast_lookup_exec_shape(opt, &root);
	if (why) {
		path_put(&root);
		vfsfast_unsupported(opt, "inode_permission.part.0 %s", why);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(vfsfast_lookup_exec_masks); i++) {
		mask = vfsfast_lookup_exec_masks[i];
		part = vfsfast_lookup_exec_ask_rcu(&root, mask, true);
		whole = vfsfast_lookup_exec_ask_rcu(&root, mask, false);
		if (part != whole)
			break;
	}
	path_put(&root);
	if (i < ARRAY_SIZE(vfsfast_lookup_exec_masks)) {
		vfsfast_unsupported(opt, "inode_permission.part.0 answers %d where inode_permission() answers %d",
				    part, whole);
		return -EINVAL;
	}
	return 0;
}

/*
 * At load, in the loading task, before anything is hooked: no unload can
 * wait for it (the module is not live yet), whatever the root's
 * filesystem makes a ->permission() wait for.
 */
VFSFAST_BOUNDED_CALL(vfsfast_lookup_exec_ask, vfsfast_stock_inode_permission);

VFSFAST_FUNCS(lookup_exec, VFSFAST_LOOKUP_EXEC_TARGETS);
#else
VFSFAST_NO_FUNCS(lookup_exec);
#define vfsfast_lookup_exec_setup	NULL
#endif

VFSFAST_OPTIMIZATION(lookup_exec, VFSFAST_LOOKUP_EXEC_TARGETS,
		     VFSFAST_UPSTREAM_LOOKUP_EXEC_INFO, auto_unless_ftrace,
	.upstream = VFSFAST_UPSTREAM_LOOKUP_EXEC,
	.lacks = VFSFAST_NO_LOOKUP_EXEC,
	.setup = vfsfast_lookup_exec_setup,
	/*
	 * The shortcut stands in for these checks of stock's, wherever a
	 * kernel has them out of line: the owner's id through the mount
	 * (make_vfsuid(), 6.3 on) and the absent ACL's lookup.
	 */
	.covers = VFSFAST_COVERS("generic_permission", "acl_permission_check",
				 "make_vfsuid", "check_acl", "get_inode_acl",
				 "get_acl", "get_cached_acl_rcu"),
);
