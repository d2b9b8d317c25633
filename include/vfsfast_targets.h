/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every kernel function vfsfast can take over, one VFSFAST_TARGET() line
 * each, included wherever per-target code is generated (no include guard
 * on purpose).  For each target, module/tramp.S emits the direct-call
 * trampoline vfsfast_tramp_<name>() and vfsfast_stock_<name>(), the way
 * back into the stock function's body; hook.c defines the two words they
 * read.
 */
VFSFAST_TARGET(vfs_readlink)
