// SPDX-License-Identifier: GPL-2.0
/*
 * close_sync: close(2) finishes the file before it returns, the gain of
 * 6.6's "fs: use __fput_sync in close(2)" (021a160abf62) for kernels
 * before it.
 *
 * Stock close(2) of 5.10 and 6.1 (fs/open.c, fs/file.c, fs/file_table.c):
 * close_fd() takes the file out of the descriptor table (pick_file(),
 * -EBADF if there is none) and calls filp_close(): ->flush(),
 * dnotify_flush() and locks_remove_posix() unless FMODE_PATH, then fput().
 * When that drops the last reference, fput() queues ____fput() as task
 * work (task_work_add(), TWA_RESUME), and __fput() runs on the way back to
 * user space, after the system call's audit record and ptrace's
 * syscall-exit stop.  An -ERESTART* from ->flush() becomes -EINTR.
 *
 * The replacement takes the file out with close_fd_get_file() and a
 * reference of its own, runs the same filp_close(), and drops its
 * reference; if that was the last, it runs ____fput() (static, reached
 * through its stub, which enters it at its first instruction: it is not
 * hooked, so kprobes and BPF programs there see these calls) before
 * returning.  The
 * return value is filp_close()'s, mapped as stock maps it.  What moves, as
 * it moved in 6.6: the final __fput() (fsnotify's close events, flock and
 * lease release, ->release(), the last dput and mntput) runs before the
 * audit record and the ptrace stop instead of after them; user space sees
 * none of it before close() returns either way.  Upstream did this for
 * close(2) only: there the caller is the system call itself, holding no
 * lock and at a shallow stack, where __fput()'s sleeps and its deep
 * release chains (a last dput() that evicts, a last mntput() that
 * unmounts) are safe; an fput() elsewhere may run under a caller's locks
 * or deep in another call, which is what task work protects.  So other
 * final fput()s (exit, munmap, dup2 over a descriptor, io_uring's close)
 * stay task work here too.  32-bit close(2) (__ia32_sys_close) is left
 * stock.
 *
 * Only ->flush() can tell the extra reference from stock's (it may read
 * file_count(), as the SCSI tape driver's does to decide whether to
 * write its filemark), so a file with ->flush() is closed by stock;
 * nothing else filp_close() runs (dnotify_flush(), locks_remove_posix())
 * reads the count.  Because the order against the audit record and the
 * ptrace stop is visible to a tracer, the optimization is opt-in:
 * enable=auto leaves it off.
 *
 * Nothing of vfsfast stays on the stack of a task that sleeps as long as
 * user space decides, and no call takes a module reference: the close is
 * finished here only for a file whose filp_close() and __fput() reach
 * nothing that waits on user space or the network (vfsfast_close_bounded():
 * a regular file or directory on a filesystem bounded.c knows, without
 * ->flush(), ->lock() or ->flock(), not in an epoll set, whose mutex an
 * epoll_wait() holds across its copy to user space, without FASYNC, on a
 * filesystem not frozen), looked at under RCU before anything is done;
 * every other close (a pipe, whose mutex a writer stuck in a userfaultfd
 * page holds; a socket lingering; a FUSE or NFS file) is the stock
 * system call's, by a tail call.  Should another thread put a different
 * file at the descriptor between that look and the removal (dup2()), the
 * replacement has taken that file out already and must close it itself:
 * then, and only then, it holds the module while it does, as stock would
 * (vfsfast_close_raced()).  What the look cannot see: an epoll_ctl()
 * through another descriptor adding the file after it, or a freeze after
 * it; such a close is still stock's to the byte, and only rmmod could then
 * wait for the epoll_wait() or the thaw.
 *
 * The descriptor is taken out as stock's close_fd() takes it: under
 * file_lock, -EBADF where there is none.  5.10's close_fd_get_file()
 * lacks the array_index_nospec() of its pick_file(), so the compat
 * helper clamps the index first.
 */
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <asm/ptrace.h>

#include "vfsfast.h"
#include "close_sync.h"

#define VFSFAST_CLOSE_SYNC_TARGETS(T)					\
	(VFSFAST_SYSCALL_TARGET(T, close, *(vfsfast_close_syscall_t *)0, 0, \
				replace, vfsfast_sys_close)		\
	 T(____fput, *(vfsfast_task_work_t *)0, 0, call, vfsfast_stock_____fput))

VFSFAST_STATS(close_sync);

#ifdef VFSFAST_CLOSE_SYNC
VFSFAST_DECLARE_TARGETS(VFSFAST_CLOSE_SYNC_TARGETS);

/*
 * Who ends the file: the drop of the replacement's reference decides, in
 * one atomic step.  Another holder (a thread asleep in read() on the
 * descriptor keeps its own reference) may drop its reference at any
 * moment during the close; whichever decrement reaches zero ends the
 * file, so exactly one of the two does.  Deciding from file_count() and
 * dropping afterwards would let both see a count above one: nobody ends
 * the file, and the pipe's reader never goes away.
 */
#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only.  A close(2) by a task named fi_close_park sleeps
 * after filp_close(), before its reference is dropped, until
 * fi_close_park is cleared (30 s at most); fi_close_parked counts the
 * holds.  fi_close_split=1 decides from file_count() before the hold and
 * drops the reference after it: the fast path without the guard.
 */
static char fi_close_park[TASK_COMM_LEN];
module_param_string(fi_close_park, fi_close_park, sizeof(fi_close_park), 0644);
MODULE_PARM_DESC(fi_close_park, "test builds: park this task's close(2) before its last put");
static int fi_close_parked;
module_param(fi_close_parked, int, 0444);
MODULE_PARM_DESC(fi_close_parked, "test builds: closes parked by fi_close_park");
static bool fi_close_split;
module_param(fi_close_split, bool, 0644);
MODULE_PARM_DESC(fi_close_split, "test builds: decide by file_count(), then drop (the bug)");

static bool vfsfast_close_put(struct file *file)
{
	bool last;

	if (!READ_ONCE(fi_close_split)) {
		vfsfast_fi_hold_task(fi_close_park, &fi_close_parked, 30000, false);
		return atomic_long_dec_and_test(&file->f_count);
	}
	last = file_count(file) == 1;
	vfsfast_fi_hold_task(fi_close_park, &fi_close_parked, 30000, false);
	atomic_long_dec(&file->f_count);
	return last;
}
#else
static inline bool vfsfast_close_put(struct file *file)
{
	return atomic_long_dec_and_test(&file->f_count);
}
#endif

static vfsfast_noipa long vfsfast_close_stock(const struct pt_regs *regs)
{
	vfsfast_fallback(close_sync);
	vfsfast_leave(close_sync);
	return VFSFAST_SYSCALL_STOCK(close)(regs);
}

/*
 * What of vfsfast_close_bounded() may change while a file stays the same:
 * an epoll set or FASYNC taken by another holder, a freeze.
 */
static __always_inline bool vfsfast_close_still_bounded(struct file *file)
{
	return !((READ_ONCE(file->f_flags) & FASYNC) && file->f_op->fasync) &&
	       !vfsfast_file_in_epoll(file) &&
	       READ_ONCE(file_inode(file)->i_sb->s_writers.frozen) == SB_UNFROZEN;
}

/*
 * Whether nothing filp_close() and __fput() run for @file can wait on user
 * space or the network; the second part of the comment at the top.
 */
static __always_inline bool vfsfast_close_bounded(struct file *file)
{
	const struct file_operations *fop = file->f_op;
	struct inode *inode = file_inode(file);

	if (fop->flush || fop->lock || fop->flock)
		return false;
	if (!S_ISREG(inode->i_mode) && !S_ISDIR(inode->i_mode))
		return false;
	return vfsfast_bounded_fs(inode->i_sb) && vfsfast_close_still_bounded(file);
}

/*
 * What no close(2) returns, so the call goes to stock: its answer is
 * filp_close()'s int, and a raced file's ->flush() may return any int
 * (-MAX_ERRNO - 1 included), never LONG_MIN.
 */
#define VFSFAST_CLOSE_TO_STOCK	LONG_MIN

/* stock's mapping of filp_close()'s answer, in close(2). */
static __always_inline long vfsfast_close_ret(long retval)
{
	if (unlikely(retval == -ERESTARTSYS || retval == -ERESTARTNOINTR ||
		     retval == -ERESTARTNOHAND || retval == -ERESTART_RESTARTBLOCK))
		retval = -EINTR;
	return retval;
}

/*
 * Lost a race: @file, now out of the table with a reference of ours, is
 * not one the look found, and not one to close here.  Close it as stock
 * does, its last put deferred, holding the module across filp_close()
 * (->flush() may wait on a FUSE daemon) so that rmmod answers EBUSY
 * meanwhile.  Rare, so the hold's shared line is no per-call cost.
 */
static noinline long vfsfast_close_raced(struct file *file)
{
	bool held = vfsfast_hold();
	long retval;

	fput(file);
	retval = filp_close(file, current->files);
	vfsfast_fallback(close_sync);
	if (held)
		vfsfast_unhold();
	vfsfast_leave(close_sync);
	return vfsfast_close_ret(retval);
}
VFSFAST_RARE_PATH(vfsfast_close_raced);

/*
 * The close itself, if the file at @fd is one to close here; else
 * VFSFAST_CLOSE_TO_STOCK, with nothing done.  Out of line: its locals
 * (5.10's close_fd_get_file() takes the address of one) may give it a
 * stack frame to unwind, KASAN's redzones for one, and the stock path in
 * vfsfast_sys_close() must stay a jump.
 *
 * The look and the removal are in one RCU read-side section, so the file
 * the look found cannot be freed and another allocated at its address
 * before the removal: the same pointer is the same file, whose
 * operations, type and filesystem stay as they were; what another holder
 * may have changed since is asked again.
 */
static noinline long vfsfast_close_own(unsigned int fd)
{
	struct file *looked, *file;
	long retval;

	rcu_read_lock();
	looked = vfsfast_files_lookup_fd_rcu(current->files, fd);
	if (!looked || !vfsfast_close_bounded(looked)) {
		rcu_read_unlock();
		return VFSFAST_CLOSE_TO_STOCK;
	}
	file = vfsfast_close_fd_get_file(fd);
	rcu_read_unlock();
	if (!file) {
		/* Closed by another thread meanwhile: stock's answer too. */
		vfsfast_leave(close_sync);
		return -EBADF;
	}
	if (unlikely(file != looked ? !vfsfast_close_bounded(file) :
				      !vfsfast_close_still_bounded(file)))
		return vfsfast_close_raced(file);
	/* Nothing in filp_close() but ->flush() reads the count. */
	retval = filp_close(file, current->files);
	if (vfsfast_close_put(file)) {
		vfsfast_hit(close_sync);
		vfsfast_stock_____fput(vfsfast_file_work(file));
	}
	vfsfast_leave(close_sync);
	return vfsfast_close_ret(retval);
}

static long vfsfast_sys_close(const struct pt_regs *regs)
{
	long ret;

	vfsfast_enter(close_sync);
	ret = vfsfast_close_own((unsigned int)vfsfast_sc_arg(regs, 0));
	if (ret == VFSFAST_CLOSE_TO_STOCK)
		return vfsfast_close_stock(regs);
	return ret;
}

VFSFAST_TAIL_CALL(vfsfast_close_stock, VFSFAST_SYSCALL_STOCK(close));
VFSFAST_TAIL_CALL(vfsfast_sys_close, vfsfast_close_stock);
/* Only for a file vfsfast_close_bounded() accepted: see the top. */
VFSFAST_BOUNDED_CALL(vfsfast_close_own, vfsfast_stock_____fput);

VFSFAST_FUNCS(close_sync, VFSFAST_CLOSE_SYNC_TARGETS);
#else
VFSFAST_NO_FUNCS(close_sync);
#endif

VFSFAST_OPTIMIZATION(close_sync, VFSFAST_CLOSE_SYNC_TARGETS,
		     VFSFAST_UPSTREAM_CLOSE_SYNC_INFO, opt_in,
	.upstream = VFSFAST_UPSTREAM_CLOSE_SYNC,
	.lacks = VFSFAST_NO_CLOSE_SYNC,
	.covers = VFSFAST_COVERS("close_fd", "pick_file"),
);
