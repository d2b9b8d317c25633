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
 * reference; if that was the last, it runs ____fput()'s body (reached
 * through the trampoline, as ____fput is static) before returning.  The
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
 * write its filemark), so a file with ->flush() is closed as stock
 * closes it, with stock's count and its final put deferred; nothing else
 * filp_close() runs (dnotify_flush(), locks_remove_posix()) reads the
 * count.  Because the order against the audit record and the ptrace stop
 * is visible to a tracer, the optimization is opt-in: enable=auto leaves
 * it off.
 *
 * The descriptor is taken out as stock's close_fd() takes it: under
 * file_lock, -EBADF where there is none.  5.10's close_fd_get_file()
 * lacks the array_index_nospec() of its pick_file(), so the compat
 * helper clamps the index first.
 *
 * __fput() may sleep as long as a FUSE daemon or NFS decides, so the
 * replacement holds the module meanwhile (vfsfast_hold()), and rmmod says
 * EBUSY.  If the module is going, the call is stock's.
 */
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <asm/ptrace.h>

#include "vfsfast.h"
#include "close_sync.h"

#define VFSFAST_CLOSE_SYNC_TARGETS(T)					\
	(T(__x64_sys_close, *(vfsfast_close_syscall_t *)0, 0, replace,	\
	   vfsfast_sys_close)						\
	 T(____fput, *(vfsfast_task_work_t *)0, 0, replace, vfsfast_fput_work))

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

static void vfsfast_fput_work(struct callback_head *work)
{
	vfsfast_stock_____fput(work);
}

static vfsfast_noipa long vfsfast_close_stock(const struct pt_regs *regs)
{
	vfsfast_fallback(close_sync);
	vfsfast_leave(close_sync);
	return vfsfast_stock___x64_sys_close(regs);
}

/*
 * The close itself, once the module is held.  Out of line: its locals
 * (5.10's close_fd_get_file() takes the address of one) may give it a
 * stack frame to unwind, KASAN's redzones for one, and the going-module
 * path in vfsfast_sys_close() must stay a jump.
 */
static noinline long vfsfast_close_held(unsigned int fd)
{
	struct file *file;
	long retval;

	file = vfsfast_close_fd_get_file(fd);
	if (!file) {
		retval = -EBADF;
	} else if (unlikely(file->f_op->flush)) {
		/*
		 * ->flush() may read the file's count (the SCSI tape driver
		 * writes its filemark only when it is 1), so it must see
		 * stock's: drop this reference first (the descriptor
		 * table's, now ours, keeps the file) and close as stock,
		 * final put deferred to task work.
		 */
		fput(file);
		retval = filp_close(file, current->files);
		vfsfast_fallback(close_sync);
	} else {
		/* Nothing in filp_close() but ->flush() reads the count. */
		retval = filp_close(file, current->files);
		if (vfsfast_close_put(file)) {
			vfsfast_hit(close_sync);
			vfsfast_stock_____fput(vfsfast_file_work(file));
		}
	}
	vfsfast_unhold();
	vfsfast_leave(close_sync);
	if (unlikely(retval == -ERESTARTSYS || retval == -ERESTARTNOINTR ||
		     retval == -ERESTARTNOHAND || retval == -ERESTART_RESTARTBLOCK))
		retval = -EINTR;
	return retval;
}

static long vfsfast_sys_close(const struct pt_regs *regs)
{
	vfsfast_enter(close_sync);
	if (unlikely(!vfsfast_hold()))
		return vfsfast_close_stock(regs);
	return vfsfast_close_held((unsigned int)regs->di);
}

VFSFAST_TAIL_CALL(vfsfast_fput_work, vfsfast_stock_____fput);
VFSFAST_TAIL_CALL(vfsfast_close_stock, vfsfast_stock___x64_sys_close);
VFSFAST_TAIL_CALL(vfsfast_sys_close, vfsfast_close_stock);

VFSFAST_FUNCS(close_sync, VFSFAST_CLOSE_SYNC_TARGETS);
#else
VFSFAST_NO_FUNCS(close_sync);
#endif

VFSFAST_OPTIMIZATION(close_sync, VFSFAST_CLOSE_SYNC_TARGETS,
		     VFSFAST_UPSTREAM_CLOSE_SYNC_INFO, opt_in,
	.upstream = VFSFAST_UPSTREAM_CLOSE_SYNC,
	.lacks = VFSFAST_NO_CLOSE_SYNC,
);
