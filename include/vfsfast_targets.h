/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel function vfsfast can take over, one line each:
 * VFSFAST_TARGET(name, proto), where @proto is an expression with the
 * target's function type (the target itself where a header declares it).
 * Included wherever per-target code is generated; no include guard on
 * purpose.  For each target, module/tramp.S emits the direct-call
 * trampoline vfsfast_tramp_<name>() and vfsfast_stock_<name>(), the way
 * back into the stock function's body, which replacements call with the
 * target's prototype (a replacement must never call its target by name:
 * that would come back to the replacement); hook.c defines the two words
 * they read.  A target some kernels lack is guarded by the compat probe
 * that finds it (VFSFAST_HAVE_*, from vfsfast_probes.h).
 */
VFSFAST_TARGET(vfs_readlink, vfs_readlink);
VFSFAST_TARGET(fsnotify, fsnotify);
#ifdef VFSFAST_HAVE_FSNOTIFY_PARENT_DENTRY
VFSFAST_TARGET(__fsnotify_parent, __fsnotify_parent);
#endif
VFSFAST_TARGET(alloc_file_pseudo, alloc_file_pseudo);
#ifdef VFSFAST_KERNFS
/* In attach order: the observers before the replacements that trust them. */
VFSFAST_TARGET(kernfs_add_one, kernfs_add_one);
VFSFAST_TARGET(kernfs_activate, kernfs_activate);
VFSFAST_TARGET(kernfs_rename_ns, kernfs_rename_ns);
VFSFAST_TARGET(kernfs_setattr, kernfs_setattr);
VFSFAST_TARGET(kernfs_iop_setattr, *((const struct inode_operations *)0)->setattr);
VFSFAST_TARGET(kernfs_iop_lookup, *((const struct inode_operations *)0)->lookup);
VFSFAST_TARGET(kernfs_dop_revalidate, *((const struct dentry_operations *)0)->d_revalidate);
VFSFAST_TARGET(kernfs_iop_permission, *((const struct inode_operations *)0)->permission);
VFSFAST_TARGET(kernfs_iop_getattr, *((const struct inode_operations *)0)->getattr);
#endif
