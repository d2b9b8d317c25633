/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The path system calls that predate their *at forms, by their old
 * numbers where the architecture has them (x86_64).  The generic system
 * call table (arm64) has only the *at forms: there each is its *at call
 * relative to the working directory, which is what the kernel's old
 * entries are too (access() is do_faccessat(AT_FDCWD, ...)), so that a
 * differential still sends every name through the same lookups.
 */
#ifndef VFSFAST_OLDCALLS_H
#define VFSFAST_OLDCALLS_H

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef AT_REMOVEDIR
#define AT_REMOVEDIR 0x200
#endif

static inline long sc_access(const char *p, int mode)
{
#ifdef SYS_access
	return syscall(SYS_access, p, mode);
#else
	return syscall(SYS_faccessat, AT_FDCWD, p, mode);
#endif
}

static inline long sc_stat(const char *p, void *st)
{
#ifdef SYS_stat
	return syscall(SYS_stat, p, st);
#else
	return syscall(SYS_newfstatat, AT_FDCWD, p, st, 0);
#endif
}

static inline long sc_lstat(const char *p, void *st)
{
#ifdef SYS_lstat
	return syscall(SYS_lstat, p, st);
#else
	return syscall(SYS_newfstatat, AT_FDCWD, p, st, AT_SYMLINK_NOFOLLOW);
#endif
}

static inline long sc_open(const char *p, int flags)
{
#ifdef SYS_open
	return syscall(SYS_open, p, flags);
#else
	return syscall(SYS_openat, AT_FDCWD, p, flags);
#endif
}

static inline long sc_readlink(const char *p, char *buf, size_t len)
{
#ifdef SYS_readlink
	return syscall(SYS_readlink, p, buf, len);
#else
	return syscall(SYS_readlinkat, AT_FDCWD, p, buf, len);
#endif
}

static inline long sc_unlink(const char *p)
{
#ifdef SYS_unlink
	return syscall(SYS_unlink, p);
#else
	return syscall(SYS_unlinkat, AT_FDCWD, p, 0);
#endif
}

static inline long sc_mkdir(const char *p, int mode)
{
#ifdef SYS_mkdir
	return syscall(SYS_mkdir, p, mode);
#else
	return syscall(SYS_mkdirat, AT_FDCWD, p, mode);
#endif
}

static inline long sc_rmdir(const char *p)
{
#ifdef SYS_rmdir
	return syscall(SYS_rmdir, p);
#else
	return syscall(SYS_unlinkat, AT_FDCWD, p, AT_REMOVEDIR);
#endif
}

static inline long sc_mknod(const char *p, int mode, unsigned int dev)
{
#ifdef SYS_mknod
	return syscall(SYS_mknod, p, mode, dev);
#else
	return syscall(SYS_mknodat, AT_FDCWD, p, mode, dev);
#endif
}

static inline long sc_symlink(const char *target, const char *p)
{
#ifdef SYS_symlink
	return syscall(SYS_symlink, target, p);
#else
	return syscall(SYS_symlinkat, target, AT_FDCWD, p);
#endif
}

static inline long sc_link(const char *old, const char *p)
{
#ifdef SYS_link
	return syscall(SYS_link, old, p);
#else
	return syscall(SYS_linkat, AT_FDCWD, old, AT_FDCWD, p, 0);
#endif
}

static inline long sc_rename(const char *old, const char *p)
{
#ifdef SYS_rename
	return syscall(SYS_rename, old, p);
#else
	return syscall(SYS_renameat2, AT_FDCWD, old, AT_FDCWD, p, 0);
#endif
}

#endif /* VFSFAST_OLDCALLS_H */
