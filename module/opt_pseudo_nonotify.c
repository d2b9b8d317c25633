// SPDX-License-Identifier: GPL-2.0
/*
 * pseudo_nonotify: files with no lookup path never go through fsnotify
 * (5.8's "no fsnotify for pseudo files", reverted in 5.8 and redone in 6.14
 * for sockets and anonymous inodes), with the semantics 6.14 settled on.
 *
 * 5.8's version gave every alloc_file_pseudo() file FMODE_NONOTIFY and was
 * reverted: people watch pipes through /proc/<pid>/fd/<n>.  6.14 (Debian's
 * 7.2) sets FMODE_NONOTIFY there again but gives pipes and sockets their
 * normal events back (FMODE_NONOTIFY_PERM: only permission events are
 * off).  So this keeps pipes and sockets untouched, and their permission
 * events too, for which older kernels have no flag, and silences the
 * rest: anonymous inodes (eventfd, timerfd, signalfd, epoll, io_uring,
 * userfaultfd, ...), shmem files behind memfd, SysV shm and shared
 * anonymous mappings, hugetlb, secretmem, aio and dma-buf files.  The one
 * visible difference from a stock 5.10-6.12 kernel: a watch placed on such
 * a file through /proc/<pid>/fd sees no events from the files opened
 * while the knob is on, for as long as they stay open.  So enable=auto
 * never turns it on.
 *
 * The mode is set before alloc_file_pseudo() returns, while the caller
 * alone holds the file, as 6.14 does it.  Where the kernel already does
 * this, the hook only calls the stock function, and costs what the
 * redirect costs.
 */
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <linux/mount.h>

#include "vfsfast.h"

#define VFSFAST_PSEUDO_TARGETS(T)					\
	(T(alloc_file_pseudo, alloc_file_pseudo, alloc_file_pseudo, replace,	\
	  vfsfast_alloc_file_pseudo))

VFSFAST_STATS(pseudo_nonotify);
VFSFAST_DECLARE_TARGETS(VFSFAST_PSEUDO_TARGETS);

static struct file *vfsfast_alloc_file_pseudo(struct inode *inode,
					      struct vfsmount *mnt,
					      const char *name, int flags,
					      const struct file_operations *fops)
{
	unsigned long magic = mnt->mnt_sb->s_magic;
	struct file *file;

	vfsfast_enter(pseudo_nonotify);
	file = vfsfast_stock_alloc_file_pseudo(inode, mnt, name, flags, fops);
	if (!VFSFAST_UPSTREAM_PSEUDO && !IS_ERR(file) &&
	    magic != PIPEFS_MAGIC && magic != SOCKFS_MAGIC)
		file->f_mode |= FMODE_NONOTIFY;
	else
		vfsfast_fallback(pseudo_nonotify);
	vfsfast_leave(pseudo_nonotify);
	return file;
}

/* An allocation and a dentry of an internal mount: nothing waits on user space. */
VFSFAST_BOUNDED_CALL(vfsfast_alloc_file_pseudo, vfsfast_stock_alloc_file_pseudo);

VFSFAST_FUNCS(pseudo_nonotify, VFSFAST_PSEUDO_TARGETS);

VFSFAST_OPTIMIZATION(pseudo_nonotify, VFSFAST_PSEUDO_TARGETS,
		     VFSFAST_UPSTREAM_PSEUDO_INFO, opt_in,
	.upstream = VFSFAST_UPSTREAM_PSEUDO,
);
