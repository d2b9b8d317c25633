// SPDX-License-Identifier: GPL-2.0
/*
 * fstatat_empty: fstatat(fd, "", AT_EMPTY_PATH) as fstat(fd), the gain of
 * 6.6's "vfs: mostly undo glibc turning 'fstat()' into
 * 'fstatat(AT_EMPTY_PATH)'" (9013c51c630a) for kernels before it.
 *
 * glibc 2.33 to 2.38 (Debian 12's 2.36) implement fstat() as
 * newfstatat(fd, "", AT_EMPTY_PATH).  Stock 5.10 and 6.1 then allocate a
 * 4 KB name buffer (zeroed: Debian has init_on_alloc), copy the empty
 * name into it and walk it, to arrive at the file the descriptor already
 * names.  The replacement takes over the system call's entry itself,
 * __x64_sys_newfstatat() (arm64: __arm64_sys_newfstatat()): on 5.10
 * vfs_fstatat() is inlined into it, and the kstat it fills is copied
 * out by cp_new_stat(), which is static.
 *
 * What stock does for newfstatat(dfd, name, buf, AT_EMPTY_PATH) with
 * dfd >= 0 and a name whose first byte reads as 0 (fs/stat.c, fs/namei.c
 * of 5.10 and 6.1): the flags pass vfs_statx()'s check; getname_flags()
 * copies "" and accepts it (LOOKUP_EMPTY), calling audit_getname();
 * path_init() finds the descriptor with fdget_raw() (so O_PATH files
 * count; -EBADF if there is none), takes the file's f_path in ref-walk
 * mode (an empty name clears LOOKUP_RCU) and marks the walk jumped;
 * link_path_walk() and lookup_last() do nothing for an empty name, so no
 * permission is checked, no symlink followed and no mount crossed (the
 * fd's own path, even an O_PATH symlink's); complete_walk() calls
 * ->d_weak_revalidate() if the dentry has one; filename_lookup() calls
 * audit_inode(); vfs_getattr() runs with request STATX_BASIC_STATS and
 * query flags AT_EMPTY_PATH | AT_NO_AUTOMOUNT; if it returns -ESTALE the
 * walk is redone with LOOKUP_REVAL, which changes nothing for an empty
 * name but the second vfs_getattr(); cp_new_stat() copies the result.
 * The mount id and mount-root attribute vfs_statx() adds are not copied.
 *
 * So the replacement answers, with fdget_raw() (the kernel's own
 * __fdget_raw(), called through its stub: no reference for a caller
 * whose table nobody shares, as stock), vfs_getattr() with the same
 * arguments (twice on -ESTALE) and cp_new_stat()'s text, exactly when
 * nothing else of that sequence can happen, and hands every other call
 * to the stock function: flags other than exactly AT_EMPTY_PATH; a
 * negative dfd (AT_FDCWD stats the working directory); a first byte that
 * cannot be read with page faults disabled (stock faults it in, or
 * answers -EFAULT); a non-empty name; audit collecting for the task
 * (stock records the name and a PATH item; the task's audit context only
 * changes at its own system call entry, so the test holds for the whole
 * call); no file at dfd (-EBADF either way, from stock); a dentry with
 * ->d_weak_revalidate (NFS).  The name's first byte is read once, as
 * stock reads it once: a concurrent writer sees one of the two orders.
 *
 * Nothing of vfsfast stays on the stack of a task that sleeps as long as
 * user space decides, and no call takes a module reference: ->getattr()
 * is called only on the filesystems bounded.c knows cannot wait on user
 * space or the network (a FUSE or NFS file goes to stock), and the copy
 * to user space runs with page faults disabled; one that would fault (a
 * page not yet touched, a userfaultfd page) hands the whole call to stock,
 * which answers again from the start.  What the copy had written by then
 * is a prefix of the same buffer, which stock's copy overwrites.
 */
#include <linux/audit.h>
#include <linux/cred.h>
#include <linux/dcache.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/highuid.h>
#include <linux/kdev_t.h>
#include <linux/stat.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>
#include <asm/ptrace.h>

#include "vfsfast.h"
#include "fstatat_empty.h"

#define VFSFAST_FSTATAT_EMPTY_TARGETS(T)				\
	(VFSFAST_SYSCALL_TARGET(T, newfstatat, *(vfsfast_syscall_t *)0, 0, \
				replace, vfsfast_sys_newfstatat)	\
	 T(__fdget_raw, __fdget_raw, 0, call, vfsfast_stock___fdget_raw))

VFSFAST_STATS(fstatat_empty);

#ifdef VFSFAST_FSTATAT_EMPTY
VFSFAST_DECLARE_TARGETS(VFSFAST_FSTATAT_EMPTY_TARGETS);

#define vfsfast_fdget_raw(fd)	__to_fd(vfsfast_stock___fdget_raw(fd))

/* An answer the replacement cannot give: the call goes to stock. */
#define VFSFAST_TO_STOCK	1

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only: fi_stat_gid_from_uid=1 makes the fast path's copy
 * fill st_gid from the owner's uid, a copy-and-paste slip in one field
 * that is right wherever a file's uid and gid are equal, for the test
 * that the differential (and LTP's fchown05) sees a file where they are
 * not.
 */
static bool fi_stat_gid_from_uid;
module_param(fi_stat_gid_from_uid, bool, 0644);
MODULE_PARM_DESC(fi_stat_gid_from_uid, "test builds: st_gid from the uid (the bug)");

static gid_t vfsfast_stat_gid(const struct kstat *stat)
{
	if (READ_ONCE(fi_stat_gid_from_uid))
		return from_kuid_munged(current_user_ns(), stat->uid);
	return from_kgid_munged(current_user_ns(), stat->gid);
}
#else
#define vfsfast_stat_gid(stat)	from_kgid_munged(current_user_ns(), (stat)->gid)
#endif

/*
 * cp_new_stat() of fs/stat.c, the same in 5.10 and 6.1, with page faults
 * disabled in the copy: VFSFAST_TO_STOCK where it would fault.
 */
static int vfsfast_cp_new_stat(struct kstat *stat, struct stat __user *statbuf)
{
	struct stat tmp;
	unsigned long left;

	if (sizeof(tmp.st_dev) < 4 && !old_valid_dev(stat->dev))
		return -EOVERFLOW;
	if (sizeof(tmp.st_rdev) < 4 && !old_valid_dev(stat->rdev))
		return -EOVERFLOW;
	/* Stock's padding initializer, where the architecture has none. */
	memset(&tmp, 0, sizeof(tmp));
	tmp.st_dev = new_encode_dev(stat->dev);
	tmp.st_ino = stat->ino;
	if (sizeof(tmp.st_ino) < sizeof(stat->ino) && tmp.st_ino != stat->ino)
		return -EOVERFLOW;
	tmp.st_mode = stat->mode;
	tmp.st_nlink = stat->nlink;
	if (tmp.st_nlink != stat->nlink)
		return -EOVERFLOW;
	SET_UID(tmp.st_uid, from_kuid_munged(current_user_ns(), stat->uid));
	SET_GID(tmp.st_gid, vfsfast_stat_gid(stat));
	tmp.st_rdev = new_encode_dev(stat->rdev);
	tmp.st_size = stat->size;
	tmp.st_atime = stat->atime.tv_sec;
	tmp.st_mtime = stat->mtime.tv_sec;
	tmp.st_ctime = stat->ctime.tv_sec;
	tmp.st_atime_nsec = stat->atime.tv_nsec;
	tmp.st_mtime_nsec = stat->mtime.tv_nsec;
	tmp.st_ctime_nsec = stat->ctime.tv_nsec;
	tmp.st_blocks = stat->blocks;
	tmp.st_blksize = stat->blksize;
	pagefault_disable();
	left = copy_to_user(statbuf, &tmp, sizeof(tmp));
	pagefault_enable();
	return left ? VFSFAST_TO_STOCK : 0;
}

/* Not answered here: the stock system call, as a tail call. */
static vfsfast_noipa long vfsfast_newfstatat_stock(const struct pt_regs *regs)
{
	vfsfast_fallback(fstatat_empty);
	vfsfast_leave(fstatat_empty);
	return VFSFAST_SYSCALL_STOCK(newfstatat)(regs);
}

/*
 * The answer for @file, on a filesystem that cannot keep ->getattr()
 * asleep for long; its locals' addresses escape, so it returns
 * VFSFAST_TO_STOCK for its caller to make the tail call.
 */
static vfsfast_noipa long vfsfast_newfstatat_fd(const struct pt_regs *regs,
						struct file *file)
{
	const unsigned int query = AT_EMPTY_PATH | AT_NO_AUTOMOUNT;
	struct kstat stat;
	int error;

	error = vfs_getattr(&file->f_path, &stat, STATX_BASIC_STATS, query);
	if (unlikely(error == -ESTALE))
		error = vfs_getattr(&file->f_path, &stat, STATX_BASIC_STATS,
				    query);
	if (!error)
		error = vfsfast_cp_new_stat(&stat, (struct stat __user *)
					    vfsfast_sc_arg(regs, 2));
	return error;
}

static long vfsfast_sys_newfstatat(const struct pt_regs *regs)
{
	int dfd = (int)vfsfast_sc_arg(regs, 0);
	struct fd f;
	long error;

	vfsfast_enter(fstatat_empty);
	if ((int)vfsfast_sc_arg(regs, 3) != AT_EMPTY_PATH || dfd < 0 ||
	    !audit_dummy_context() ||
	    !vfsfast_empty_user_name((const char __user *)
				     vfsfast_sc_arg(regs, 1)))
		return vfsfast_newfstatat_stock(regs);
	f = vfsfast_fdget_raw(dfd);
	if (unlikely(!f.file) ||
	    unlikely(f.file->f_path.dentry->d_flags & DCACHE_OP_WEAK_REVALIDATE) ||
	    unlikely(!vfsfast_bounded_fs(file_inode(f.file)->i_sb))) {
		fdput(f);
		return vfsfast_newfstatat_stock(regs);
	}
	error = vfsfast_newfstatat_fd(regs, f.file);
	fdput(f);
	if (unlikely(error == VFSFAST_TO_STOCK))
		return vfsfast_newfstatat_stock(regs);
	vfsfast_leave(fstatat_empty);
	return error;
}

VFSFAST_TAIL_CALL(vfsfast_newfstatat_stock, VFSFAST_SYSCALL_STOCK(newfstatat));
VFSFAST_TAIL_CALL(vfsfast_sys_newfstatat, vfsfast_newfstatat_stock);
VFSFAST_BOUNDED_CALL(vfsfast_sys_newfstatat, vfsfast_stock___fdget_raw);

VFSFAST_FUNCS(fstatat_empty, VFSFAST_FSTATAT_EMPTY_TARGETS);
#else
VFSFAST_NO_FUNCS(fstatat_empty);
#endif

VFSFAST_OPTIMIZATION(fstatat_empty, VFSFAST_FSTATAT_EMPTY_TARGETS,
		     VFSFAST_UPSTREAM_FSTATAT_EMPTY_INFO, auto,
	.upstream = VFSFAST_UPSTREAM_FSTATAT_EMPTY,
	.lacks = VFSFAST_NO_FSTATAT_EMPTY,
	.covers = VFSFAST_COVERS("vfs_fstatat", "vfs_statx", "cp_new_stat",
				 "filename_lookup"),
);
