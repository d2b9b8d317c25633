// SPDX-License-Identifier: GPL-2.0
/*
 * example: a throwaway optimization the lab drops into a copy of module/
 * to show that adding one is adding a file: the build must pick it up
 * with no other edit (its stubs, its modinfo line, its place in the
 * module's list and in the enable= parameter's description).  Built with
 * VFSFAST_EXAMPLE_WRONG_PROTO, its replacement does not match its
 * target's prototype, and the build must fail.  Never loaded.
 */
#include "vfsfast.h"

#define VFSFAST_EXAMPLE_TARGETS(T)					\
	(T(vfs_fsync, vfs_fsync, vfs_fsync, replace, vfsfast_vfs_fsync))

VFSFAST_STATS(example);
VFSFAST_DECLARE_TARGETS(VFSFAST_EXAMPLE_TARGETS);

#ifdef VFSFAST_EXAMPLE_WRONG_PROTO
static int vfsfast_vfs_fsync(struct file *file, long datasync)
#else
static int vfsfast_vfs_fsync(struct file *file, int datasync)
#endif
{
	int ret;

	vfsfast_enter(example);
	ret = vfsfast_stock_vfs_fsync(file, datasync);
	vfsfast_leave(example);
	return ret;
}

VFSFAST_FUNCS(example, VFSFAST_EXAMPLE_TARGETS);

VFSFAST_OPTIMIZATION(example, VFSFAST_EXAMPLE_TARGETS, "none", opt_in);
