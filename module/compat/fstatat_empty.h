/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the fstatat_empty optimization needs to know of the kernel.  6.6
 * made fstatat(fd, "", AT_EMPTY_PATH) an fstat(); 6.11 did the same for
 * statx() and added vfs_empty_path(), which is what the probe sees (6.6
 * to 6.10 have no header sign of it: there the replacement does what
 * vfs_fstatat() already does, and costs a redirect).
 */
#ifndef _VFSFAST_COMPAT_FSTATAT_EMPTY_H
#define _VFSFAST_COMPAT_FSTATAT_EMPTY_H

#ifdef VFSFAST_HAVE_VFS_EMPTY_PATH
#define VFSFAST_UPSTREAM_FSTATAT_EMPTY \
	"fstatat and statx of an empty path skip the walk (vfs_empty_path)"
#define VFSFAST_UPSTREAM_FSTATAT_EMPTY_INFO	"vfs_empty_path"
#define VFSFAST_NO_FSTATAT_EMPTY \
	"the kernel has it upstream (vfs_empty_path, 6.11): nothing to replace"
#else
#define VFSFAST_FSTATAT_EMPTY			1
#define VFSFAST_UPSTREAM_FSTATAT_EMPTY		NULL
#define VFSFAST_UPSTREAM_FSTATAT_EMPTY_INFO	"none"
#define VFSFAST_NO_FSTATAT_EMPTY		NULL
#endif

/* The x86-64 system call wrappers' type. */
typedef long vfsfast_syscall_t(const struct pt_regs *regs);

#endif
