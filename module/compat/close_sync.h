/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the close_sync optimization needs to know of the kernel: how to
 * take a file out of the descriptor table with a reference of its own.
 * 6.6 made close(2) finish the file itself ("fs: use __fput_sync in
 * close(2)"), and the kernels after it keep close_fd_get_file() inside
 * fs/; where no header declares it, the kernel is taken to have it (a
 * kernel between 6.6 and the move would run the replacement, which does
 * what its own close(2) does, for the cost of a redirect).
 */
#ifndef _VFSFAST_COMPAT_CLOSE_SYNC_H
#define _VFSFAST_COMPAT_CLOSE_SYNC_H

#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/nospec.h>
#include <linux/rcupdate.h>

#if defined(VFSFAST_HAVE_CLOSE_FD_GET_FILE_RES) || defined(VFSFAST_HAVE_CLOSE_FD_GET_FILE_RET)
#define VFSFAST_CLOSE_SYNC			1
#define VFSFAST_UPSTREAM_CLOSE_SYNC		NULL
#define VFSFAST_UPSTREAM_CLOSE_SYNC_INFO	"none"
#define VFSFAST_NO_CLOSE_SYNC			NULL

/* The head fput() queues a file's task work by. */
#ifdef VFSFAST_HAVE_FILE_F_RCUHEAD
#define vfsfast_file_work(file)	(&(file)->f_rcuhead)
#else
#define vfsfast_file_work(file)	(&(file)->f_u.fu_rcuhead)
#endif

/* The file at a descriptor, under RCU. */
#ifdef VFSFAST_HAVE_FILES_LOOKUP_FD_RCU
#define vfsfast_files_lookup_fd_rcu(files, fd)	files_lookup_fd_rcu(files, fd)
#else
#define vfsfast_files_lookup_fd_rcu(files, fd)	fcheck_files(files, fd)
#endif

/* Whether @file is in an epoll set, whose mutex its last fput() takes. */
#ifdef VFSFAST_HAVE_FILE_F_EP
#define vfsfast_file_in_epoll(file)	(READ_ONCE((file)->f_ep) != NULL)
#else
#define vfsfast_file_in_epoll(file)	(!list_empty_careful(&(file)->f_ep_links))
#endif

/* The file at @fd, out of the table, with a reference for the caller. */
static inline struct file *vfsfast_close_fd_get_file(unsigned int fd)
{
	struct file *file;

#ifdef VFSFAST_HAVE_CLOSE_FD_GET_FILE_RES
	/*
	 * This close_fd_get_file() indexes the table without the
	 * array_index_nospec() that close(2)'s pick_file() has (the
	 * Spectre-v1 fix of 5.10.y), so the index is clamped here first.
	 * A table only grows, so a descriptor below the bound read here is
	 * below the one it checks under file_lock.
	 */
	unsigned int max;

	rcu_read_lock();
	max = files_fdtable(current->files)->max_fds;
	rcu_read_unlock();
	if (fd >= max)
		return NULL;
	fd = array_index_nospec(fd, max);
	if (close_fd_get_file(fd, &file))
		return NULL;
#else
	file = close_fd_get_file(fd);
	if (file)
		get_file(file);
#endif
	return file;
}
#else
#define VFSFAST_UPSTREAM_CLOSE_SYNC \
	"close(2) finishes the file itself (close_fd_get_file private to fs/)"
#define VFSFAST_UPSTREAM_CLOSE_SYNC_INFO	"close_fd_get_file-private"
#define VFSFAST_NO_CLOSE_SYNC \
	"the kernel has it upstream (close(2) with __fput_sync, 6.6): nothing to replace"
#endif

/* The system call wrapper's type, and the task work that ends a file. */
typedef long vfsfast_close_syscall_t(const struct pt_regs *regs);
typedef void vfsfast_task_work_t(struct callback_head *work);

#endif
