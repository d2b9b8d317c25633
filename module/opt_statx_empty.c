// SPDX-License-Identifier: GPL-2.0
/*
 * statx_empty: statx(fd, "", AT_EMPTY_PATH) answered from the descriptor
 * without a name walk, the gain of 6.11's "vfs: support statx(..., NULL,
 * AT_EMPTY_PATH, ...)" (vfs_empty_path()) for kernels before it, as
 * fstatat_empty brings 6.6's for fstatat().  Rust's standard library,
 * systemd and others stat open files this way.  (6.11 also accepts a NULL
 * name; that is new behaviour, not brought back: a NULL name gets stock's
 * -EFAULT.)
 *
 * What stock does for statx(dfd, name, flags, mask, buf) with dfd >= 0,
 * a name whose first byte reads as 0, flags AT_EMPTY_PATH with at most
 * AT_SYMLINK_NOFOLLOW and AT_NO_AUTOMOUNT besides, and no reserved mask
 * bit (fs/stat.c, fs/namei.c of 5.10 and 6.1): do_statx()'s checks pass;
 * the name is copied into a 4 KB buffer and accepted (LOOKUP_EMPTY), with
 * audit_getname(); the walk starts at the descriptor's f_path (fdget_raw:
 * O_PATH files count, -EBADF if there is none), in ref-walk mode, and an
 * empty name crosses no component, no symlink (so AT_SYMLINK_NOFOLLOW
 * changes nothing, even for an O_PATH symlink) and no mount (nor does
 * AT_NO_AUTOMOUNT); complete_walk() calls ->d_weak_revalidate() if the
 * dentry has one; audit_inode(); then vfs_getattr(&path, stat, mask,
 * flags); then vfs_statx() adds the mount's id with STATX_MNT_ID, and
 * STATX_ATTR_MOUNT_ROOT to the attributes (if the dentry is the mount's
 * root) and to the attribute mask, and on 6.1, where STATX_DIOALIGN is
 * asked of a block device, its alignment (bdev_statx_dioalign(), not
 * exported); -ESTALE redoes it once with LOOKUP_REVAL, which for an
 * empty name changes only the second vfs_getattr(); cp_statx() copies.
 *
 * So the replacement answers with fdget_raw() (the kernel's own
 * __fdget_raw(), through its stub: no reference for a caller whose table
 * nobody shares, as stock), the same vfs_getattr() (twice on -ESTALE),
 * the same additions and cp_statx()'s text, and hands to stock every call
 * where anything else could happen: other flags (AT_STATX_FORCE_SYNC and
 * AT_STATX_DONT_SYNC included: they are the filesystem's business, and
 * rare), a reserved mask bit, a negative dfd, a first byte that cannot be
 * read with page faults disabled, a non-empty name, audit collecting for
 * the task, no file at dfd, ->d_weak_revalidate (NFS), STATX_DIOALIGN
 * asked of a block device.  The name's first byte is read once, as stock
 * reads it once.
 *
 * The mount id comes from the module's copy of struct mount's layout
 * (compat/statx_empty.h); setup compares it with what the kernel reports
 * for every open descriptor of the loading thread
 * (/proc/thread-self/fdinfo's mnt_id), and leaves the optimization
 * unsupported if one differs.
 *
 * Nothing of vfsfast stays on the stack of a task that sleeps as long as
 * user space decides, and no call takes a module reference: ->getattr()
 * is called only on the filesystems bounded.c knows cannot wait on user
 * space or the network (others go to stock), and the copy to user space
 * runs with page faults disabled; one that would fault hands the whole
 * call to stock, which answers again from the start and overwrites the
 * prefix the copy had written.
 */
#include <linux/audit.h>
#include <linux/dcache.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kdev_t.h>
#include <linux/mount.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uio.h>
#include <linux/stat.h>
#include <linux/uaccess.h>
#include <linux/uidgid.h>
#include <asm/ptrace.h>

#include "vfsfast.h"
#include "statx_empty.h"

#define VFSFAST_STATX_EMPTY_TARGETS(T)					\
	(VFSFAST_SYSCALL_TARGET(T, statx, *(vfsfast_statx_syscall_t *)0, 0, \
				replace, vfsfast_sys_statx)		\
	 T(__fdget_raw, __fdget_raw, 0, call, vfsfast_stock___fdget_raw))

VFSFAST_STATS(statx_empty);

#ifdef VFSFAST_STATX_EMPTY
VFSFAST_DECLARE_TARGETS(VFSFAST_STATX_EMPTY_TARGETS);

#define vfsfast_fdget_raw(fd)	__to_fd(vfsfast_stock___fdget_raw(fd))

/* An answer the replacement cannot give: the call goes to stock. */
#define VFSFAST_TO_STOCK	1

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only: fi_statx_gid_from_uid=1 fills stx_gid from the
 * owner's uid, the slip fstatat_empty's fi_stat_gid_from_uid makes in
 * st_gid: invisible wherever a file's uid and gid are equal, so the
 * differential must list files where they are not (t_calls).
 */
static bool fi_statx_gid_from_uid;
module_param(fi_statx_gid_from_uid, bool, 0644);
MODULE_PARM_DESC(fi_statx_gid_from_uid, "test builds: stx_gid from the uid (the bug)");

static gid_t vfsfast_statx_gid(const struct kstat *stat)
{
	if (READ_ONCE(fi_statx_gid_from_uid))
		return from_kuid_munged(current_user_ns(), stat->uid);
	return from_kgid_munged(current_user_ns(), stat->gid);
}
#else
#define vfsfast_statx_gid(stat)	from_kgid_munged(current_user_ns(), (stat)->gid)
#endif

/*
 * cp_statx() of fs/stat.c (6.1 adds the direct I/O alignments), with page
 * faults disabled in the copy: VFSFAST_TO_STOCK where it would fault.
 */
static int vfsfast_cp_statx(const struct kstat *stat,
			    struct statx __user *buffer)
{
	struct statx tmp;
	unsigned long left;

	memset(&tmp, 0, sizeof(tmp));
	tmp.stx_mask = stat->result_mask;
	tmp.stx_blksize = stat->blksize;
	tmp.stx_attributes = stat->attributes;
	tmp.stx_nlink = stat->nlink;
	tmp.stx_uid = from_kuid_munged(current_user_ns(), stat->uid);
	tmp.stx_gid = vfsfast_statx_gid(stat);
	tmp.stx_mode = stat->mode;
	tmp.stx_ino = stat->ino;
	tmp.stx_size = stat->size;
	tmp.stx_blocks = stat->blocks;
	tmp.stx_attributes_mask = stat->attributes_mask;
	tmp.stx_atime.tv_sec = stat->atime.tv_sec;
	tmp.stx_atime.tv_nsec = stat->atime.tv_nsec;
	tmp.stx_btime.tv_sec = stat->btime.tv_sec;
	tmp.stx_btime.tv_nsec = stat->btime.tv_nsec;
	tmp.stx_ctime.tv_sec = stat->ctime.tv_sec;
	tmp.stx_ctime.tv_nsec = stat->ctime.tv_nsec;
	tmp.stx_mtime.tv_sec = stat->mtime.tv_sec;
	tmp.stx_mtime.tv_nsec = stat->mtime.tv_nsec;
	tmp.stx_rdev_major = MAJOR(stat->rdev);
	tmp.stx_rdev_minor = MINOR(stat->rdev);
	tmp.stx_dev_major = MAJOR(stat->dev);
	tmp.stx_dev_minor = MINOR(stat->dev);
	tmp.stx_mnt_id = stat->mnt_id;
#ifdef STATX_DIOALIGN
	tmp.stx_dio_mem_align = stat->dio_mem_align;
	tmp.stx_dio_offset_align = stat->dio_offset_align;
#endif
	pagefault_disable();
	left = copy_to_user(buffer, &tmp, sizeof(tmp));
	pagefault_enable();
	return left ? VFSFAST_TO_STOCK : 0;
}

/*
 * Whether stock would do more for this file than the fast path does, or
 * its ->getattr() may wait on user space or the network.
 */
static bool vfsfast_statx_stock_file(const struct file *file, u32 mask)
{
	if (file->f_path.dentry->d_flags & DCACHE_OP_WEAK_REVALIDATE)
		return true;
	if (!vfsfast_bounded_fs(file_inode(file)->i_sb))
		return true;
#ifdef STATX_DIOALIGN
	if ((mask & STATX_DIOALIGN) && S_ISBLK(file_inode(file)->i_mode))
		return true;
#endif
	return false;
}

/* Not answered here: the stock system call, as a tail call. */
static vfsfast_noipa long vfsfast_statx_stock(const struct pt_regs *regs)
{
	vfsfast_fallback(statx_empty);
	vfsfast_leave(statx_empty);
	return VFSFAST_SYSCALL_STOCK(statx)(regs);
}

/*
 * The answer for @file, on a filesystem that cannot keep ->getattr()
 * asleep for long; its locals' addresses escape, so it returns
 * VFSFAST_TO_STOCK for its caller to make the tail call.
 */
static vfsfast_noipa long vfsfast_statx_fd(const struct pt_regs *regs,
					   struct file *file)
{
	const struct path *path = &file->f_path;
	unsigned int flags = (unsigned int)vfsfast_sc_arg(regs, 2);
	u32 mask = (u32)vfsfast_sc_arg(regs, 3);
	struct kstat stat;
	int error;

	error = vfs_getattr(path, &stat, mask, flags);
	if (unlikely(error == -ESTALE))
		error = vfs_getattr(path, &stat, mask, flags);
	stat.mnt_id = vfsfast_mnt_id(path->mnt);
	stat.result_mask |= STATX_MNT_ID;
	if (path->mnt->mnt_root == path->dentry)
		stat.attributes |= STATX_ATTR_MOUNT_ROOT;
	stat.attributes_mask |= STATX_ATTR_MOUNT_ROOT;
	if (!error)
		error = vfsfast_cp_statx(&stat, (struct statx __user *)
					 vfsfast_sc_arg(regs, 4));
	return error;
}

static long vfsfast_sys_statx(const struct pt_regs *regs)
{
	int dfd = (int)vfsfast_sc_arg(regs, 0);
	unsigned int flags = (unsigned int)vfsfast_sc_arg(regs, 2);
	u32 mask = (u32)vfsfast_sc_arg(regs, 3);
	struct fd f;
	long error;

	vfsfast_enter(statx_empty);
	if (!(flags & AT_EMPTY_PATH) ||
	    (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT)) ||
	    (mask & STATX__RESERVED) || dfd < 0 || !audit_dummy_context() ||
	    !vfsfast_empty_user_name((const char __user *)
				     vfsfast_sc_arg(regs, 1)))
		return vfsfast_statx_stock(regs);
	f = vfsfast_fdget_raw(dfd);
	if (unlikely(!f.file) || unlikely(vfsfast_statx_stock_file(f.file, mask))) {
		fdput(f);
		return vfsfast_statx_stock(regs);
	}
	error = vfsfast_statx_fd(regs, f.file);
	fdput(f);
	if (unlikely(error == VFSFAST_TO_STOCK))
		return vfsfast_statx_stock(regs);
	vfsfast_leave(statx_empty);
	return error;
}

VFSFAST_TAIL_CALL(vfsfast_statx_stock, VFSFAST_SYSCALL_STOCK(statx));
VFSFAST_TAIL_CALL(vfsfast_sys_statx, vfsfast_statx_stock);
VFSFAST_BOUNDED_CALL(vfsfast_sys_statx, vfsfast_stock___fdget_raw);

/* The kernel's mount id for @fd of the loading task, from its fdinfo. */
static int vfsfast_fdinfo_mnt_id(unsigned int fd, int *id)
{
	char name[40], *buf, *p;
	struct file *info;
	ssize_t n;
	int ret = -EINVAL;

	/* thread-self: the table fget_raw() read is this thread's. */
	snprintf(name, sizeof(name), "/proc/thread-self/fdinfo/%u", fd);
	info = filp_open(name, O_RDONLY, 0);
	if (IS_ERR(info))
		return PTR_ERR(info);
	buf = kzalloc(256, GFP_KERNEL);
	if (!buf) {
		filp_close(info, NULL);
		return -ENOMEM;
	}
	/*
	 * fdinfo is a seq_file; 5.10's kernel_read() refuses files without
	 * ->read_iter, which its fdinfo lacks, so seq_read_iter() directly.
	 */
	if (info->f_op->read == seq_read || info->f_op->read_iter == seq_read_iter) {
		struct kvec kv = { .iov_base = buf, .iov_len = 255 };
		struct iov_iter iter;
		struct kiocb kiocb;

		init_sync_kiocb(&kiocb, info);
		kiocb.ki_pos = 0;
		iov_iter_kvec(&iter, READ, &kv, 1, 255);
		n = seq_read_iter(&kiocb, &iter);
	} else {
		n = -EINVAL;
	}
	filp_close(info, NULL);
	p = n > 0 ? strstr(buf, "mnt_id:") : NULL;
	if (p && sscanf(p, "mnt_id: %d", id) == 1)
		ret = 0;
	kfree(buf);
	return ret;
}

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only: fi_mnt_id_skew=N at load reads the mount id N ints
 * past where the copy of struct mount puts it, for the setup check only:
 * the check must then find the copy wrong.
 */
static int fi_mnt_id_skew;
module_param(fi_mnt_id_skew, int, 0444);
MODULE_PARM_DESC(fi_mnt_id_skew, "test builds: misplace the mount id for the load check");

static int vfsfast_setup_mnt_id(const struct vfsmount *mnt)
{
	return (&container_of(mnt, struct vfsfast_mount, mnt)->mnt_id)[fi_mnt_id_skew];
}
#else
#define vfsfast_setup_mnt_id vfsfast_mnt_id
#endif

static int vfsfast_statx_setup(struct vfsfast_opt *opt)
{
	unsigned int fd, checked = 0;
	int ours, theirs, ret;
	struct file *file;

	/* struct mount as compat/statx_empty.h has it, or nothing. */
	for (fd = 0; fd < 64; fd++) {
		file = fget_raw(fd);
		if (!file)
			continue;
		ours = vfsfast_setup_mnt_id(file->f_path.mnt);
		fput(file);
		ret = vfsfast_fdinfo_mnt_id(fd, &theirs);
		if (ret == -ENOENT)	/* closed meanwhile by another thread */
			continue;
		if (ret) {
			vfsfast_unsupported(opt, "struct mount unchecked: /proc/thread-self/fdinfo/%u: %d",
					    fd, ret);
			return ret;
		}
		if (ours != theirs) {
			vfsfast_unsupported(opt, "struct mount is not as expected (descriptor %u: mount id %d, the kernel says %d)",
					    fd, ours, theirs);
			return -EINVAL;
		}
		checked++;
	}
	if (!checked) {
		vfsfast_unsupported(opt, "struct mount unchecked: the loading task has no open descriptor");
		return -ENOENT;
	}
	return 0;
}

VFSFAST_FUNCS(statx_empty, VFSFAST_STATX_EMPTY_TARGETS);
#else
VFSFAST_NO_FUNCS(statx_empty);
#define vfsfast_statx_setup NULL
#endif

VFSFAST_OPTIMIZATION(statx_empty, VFSFAST_STATX_EMPTY_TARGETS,
		     VFSFAST_UPSTREAM_STATX_EMPTY_INFO, auto,
	.upstream = VFSFAST_UPSTREAM_STATX_EMPTY,
	.lacks = VFSFAST_NO_STATX_EMPTY,
	.setup = vfsfast_statx_setup,
	.covers = VFSFAST_COVERS("do_statx", "vfs_statx", "cp_statx",
				 "filename_lookup"),
);
