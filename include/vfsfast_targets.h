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
 * they read.
 */
VFSFAST_TARGET(vfs_readlink, vfs_readlink);
