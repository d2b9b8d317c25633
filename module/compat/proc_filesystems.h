/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the proc_filesystems optimization needs to know of the kernel.  The
 * 7.x "revamp fs/filesystems.c" series keeps the registered types on an
 * hlist (file_system_type.list, what the probe sees) and the text of
 * /proc/filesystems ready; before it, the types are a singly linked list
 * (->next) formatted at every read.
 */
#ifndef _VFSFAST_COMPAT_PROC_FILESYSTEMS_H
#define _VFSFAST_COMPAT_PROC_FILESYSTEMS_H

#ifdef VFSFAST_HAVE_FS_TYPE_HLIST
#define VFSFAST_UPSTREAM_PROC_FILESYSTEMS \
	"/proc/filesystems kept as text (file_system_type.list)"
#define VFSFAST_UPSTREAM_PROC_FILESYSTEMS_INFO	"file_system_type.list"
#define VFSFAST_NO_PROC_FILESYSTEMS \
	"the kernel has it upstream (file_system_type.list, 7.x): nothing to replace"
#else
#define VFSFAST_PROC_FILESYSTEMS		1
#define VFSFAST_UPSTREAM_PROC_FILESYSTEMS	NULL
#define VFSFAST_UPSTREAM_PROC_FILESYSTEMS_INFO	"none"
#define VFSFAST_NO_PROC_FILESYSTEMS		NULL
#endif

struct seq_file;
/* filesystems_proc_show() is static in fs/filesystems.c: its type. */
typedef int vfsfast_seq_show_t(struct seq_file *m, void *v);

#endif
