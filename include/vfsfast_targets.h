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
