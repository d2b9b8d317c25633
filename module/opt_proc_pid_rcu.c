// SPDX-License-Identifier: GPL-2.0
/*
 * proc_pid_rcu: walks through /proc/<pid> that stay in RCU mode, the gain
 * of 5.14's "proc: Allow pid_revalidate() during LOOKUP_RCU"
 * (da4d6b9cf80a) for kernels before it.
 *
 * Stock pid_revalidate() of 5.10 (fs/proc/base.c), the ->d_revalidate of
 * every /proc/<pid> and /proc/<pid>/task/<tid> directory and of the
 * entries in them (pid_dentry_operations; the fd/, map_files/ and ns/
 * entries have their own), answers -ECHILD in RCU mode.  lookup_fast()
 * then leaves RCU mode (try_to_unlazy_next(): a reference on every dentry
 * and mount the walk holds, lockref cache lines shared with every other
 * walker) and asks again in ref-walk mode, where pid_revalidate() takes
 * the task of the inode's pid (get_proc_task()), and if there is one
 * calls pid_update_inode() (the owner from the task's credentials and
 * dumpable state, the setuid and setgid bits cleared, the LSMs'
 * task_to_inode hook) and answers 1, else 0.  So every stat() or open()
 * of /proc/<pid>/... leaves RCU mode at its first pid component.
 *
 * The replacement answers in RCU mode exactly as 5.14 does, under
 * rcu_read_lock(): the inode as the walk sees it (d_inode_rcu()), the
 * task of its pid (pid_task()), and if there is one, the same
 * pid_update_inode() call and 1.  Where there is no inode or no task it
 * answers -ECHILD, never 0, and stock decides in ref-walk mode (0, for a
 * pid whose task is gone).  Outside RCU mode the call is stock's, by a
 * tail call.
 *
 * Why that is stock's answer: stock's ref-walk call runs the same test on
 * the same inode a moment later; a task that exits in between makes
 * either order possible, and 5.10's own ref-walk call has the same window
 * between get_proc_task() and its caller's use of the answer.  The
 * updates pid_update_inode() makes are the ones stock's call makes, to
 * the same inode, with no more locking than stock's (none).
 *
 * Why nothing here may sleep, which RCU mode forbids: task_dump_owner()
 * takes rcu_read_lock() and task_lock() (a spinlock); of the LSMs in
 * Debian's kernels (lockdown, yama, loadpin, safesetid, integrity,
 * apparmor, selinux, smack, tomoyo, and bpf when named in lsm=) only
 * SELinux (a spinlock around three stores) and Smack (two stores) have a
 * task_to_inode hook, and BPF LSM programs on it run non-sleepable.
 *
 * Why the memory is there: the walk holds rcu_read_lock(); proc inodes
 * are freed after a grace period (proc_free_inode() from i_callback), and
 * a task_struct found by pid_task() is freed after one
 * (delayed_put_task_struct()).  The struct pid an inode names is not:
 * eviction puts it (proc_pid_evict_inode()), and a last put frees it at
 * once.  The inode's reference is the last only once the pid hash's own
 * (dropped by delayed_put_pid() a grace period after free_pid()) is gone,
 * and release_task() invalidates the task's /proc dentries
 * (proc_flush_pid()) just after free_pid(): a walker can read freed
 * memory only if it found a dentry before that flush, and started after
 * free_pid(), and a whole grace period passed between free_pid() and the
 * flush while it read.  5.14 to 7.x have the same window, in this
 * function and in proc_pid_permission() in RCU mode; the answer itself is
 * never used then (the dentry's d_seq has moved, and the walk restarts).
 *
 * What then runs in RCU mode that 5.10 ran only in ref-walk mode after a
 * pid component: the next directories' ->permission() with MAY_NOT_BLOCK
 * (proc_pid_permission(), whose ptrace_may_access() runs under
 * task_lock(); proc_fd_permission(); generic_permission()), which 5.10
 * already runs in RCU mode for a walk that starts at a /proc/<pid>
 * descriptor (openat(dirfd, "status")); ->get_link() with no dentry,
 * where proc_pid_get_link() and proc_ns_get_link() answer -ECHILD; and
 * the other ->d_revalidate()s: tid_fd_revalidate(),
 * map_files_d_revalidate() and proc_misc_d_revalidate() answer -ECHILD,
 * proc_net_d_revalidate() 0, which lookup_fast() handles in RCU mode by
 * leaving it and looking the name up again.
 *
 * proc_pid() reads struct proc_inode, private to fs/proc: its layout is
 * in compat/proc_pid_rcu.h, and setup checks it against the kernel before
 * the optimization can be enabled.  pid_update_inode() is static: its
 * stub enters it at its first instruction, and it is not hooked, so that
 * kprobes and BPF programs there see every call.
 */
#include <linux/magic.h>
#include <linux/namei.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>

#include "vfsfast.h"
#include "proc_pid_rcu.h"

#define VFSFAST_PROC_PID_RCU_TARGETS(T)					\
	(T(pid_revalidate, *(vfsfast_pid_revalidate_t *)0, 0, replace,	\
	   vfsfast_pid_revalidate)					\
	 T(pid_update_inode, *(vfsfast_pid_update_inode_t *)0, 0, call,	\
	   vfsfast_stock_pid_update_inode))

VFSFAST_STATS(proc_pid_rcu);

#ifdef VFSFAST_PROC_PID_RCU
VFSFAST_DECLARE_TARGETS(VFSFAST_PROC_PID_RCU_TARGETS);

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only.  A revalidation in RCU mode by a task named
 * fi_park_pid holds between finding the task and updating the inode,
 * until fi_park_pid is cleared (2 s at most: it spins, inside the walk's
 * RCU read-side section), so that a test can make the task exit and be
 * reaped in between; fi_pid_parked counts the holds.  fi_pid_no_update=1
 * answers 1 without pid_update_inode(): the shortcut that would leave an
 * inode's owner as it was when the task changed its credentials.
 */
static char fi_park_pid[TASK_COMM_LEN];
module_param_string(fi_park_pid, fi_park_pid, sizeof(fi_park_pid), 0644);
MODULE_PARM_DESC(fi_park_pid, "test builds: park this task's RCU-mode pid_revalidate");
static int fi_pid_parked;
module_param(fi_pid_parked, int, 0444);
MODULE_PARM_DESC(fi_pid_parked, "test builds: revalidations parked by fi_park_pid");
static bool fi_pid_no_update;
module_param(fi_pid_no_update, bool, 0644);
MODULE_PARM_DESC(fi_pid_no_update, "test builds: answer without updating the inode (the bug)");

#define vfsfast_pid_fi_park()	vfsfast_fi_hold_task(fi_park_pid, &fi_pid_parked, 2000, true)
#define vfsfast_pid_fi_no_update()	READ_ONCE(fi_pid_no_update)
#else
static inline void vfsfast_pid_fi_park(void) { }
#define vfsfast_pid_fi_no_update()	false
#endif

/* The answer in RCU mode: 1 as stock's ref-walk call would, or -ECHILD. */
static vfsfast_noipa int vfsfast_pid_revalidate_rcu(struct dentry *dentry)
{
	struct task_struct *task;
	struct inode *inode;

	rcu_read_lock();
	inode = d_inode_rcu(dentry);
	task = inode ? pid_task(vfsfast_proc_pid(inode), PIDTYPE_PID) : NULL;
	if (unlikely(!task)) {
		rcu_read_unlock();
		vfsfast_enter(proc_pid_rcu);
		vfsfast_fallback(proc_pid_rcu);
		vfsfast_leave(proc_pid_rcu);
		return -ECHILD;
	}
	vfsfast_pid_fi_park();
	if (!vfsfast_pid_fi_no_update())
		vfsfast_stock_pid_update_inode(task, inode);
	rcu_read_unlock();
	vfsfast_hit(proc_pid_rcu);
	return 1;
}

static int vfsfast_pid_revalidate
	VFSFAST_DIR_NAME_OR((struct inode *dir, const struct qstr *name,
			     struct dentry *dentry, unsigned int flags),
			    (struct dentry *dentry, unsigned int flags))
{
	if (flags & LOOKUP_RCU)
		return vfsfast_pid_revalidate_rcu(dentry);
	return vfsfast_stock_pid_revalidate
		VFSFAST_DIR_NAME_OR((dir, name, dentry, flags), (dentry, flags));
}

VFSFAST_TAIL_CALL(vfsfast_pid_revalidate, vfsfast_stock_pid_revalidate);
/* pid_update_inode() takes only the inode's i_lock and the task's creds. */
VFSFAST_BOUNDED_CALL(vfsfast_pid_revalidate_rcu, vfsfast_stock_pid_update_inode);

/* A dentry with no inode, for asking the kernel's pid_revalidate(). */
static struct dentry vfsfast_pid_no_inode;

static int vfsfast_pid_setup(struct vfsfast_opt *opt)
{
	struct inode *inode;
	struct path path;
	bool ok;
	int ret;

	/*
	 * Before 5.14, pid_revalidate() refuses RCU mode before it reads
	 * anything; 5.14 and later read the inode and, finding none, answer
	 * 0.  The dir and name arguments of 6.14+ are never read first.
	 */
	ret = vfsfast_stock_pid_revalidate
		VFSFAST_DIR_NAME_OR((NULL, NULL, &vfsfast_pid_no_inode, LOOKUP_RCU),
				    (&vfsfast_pid_no_inode, LOOKUP_RCU));
	if (ret != -ECHILD) {
		opt->upstream = VFSFAST_UPSTREAM_PROC_PID_RCU;
		vfsfast_unsupported(opt, "the kernel has it upstream (%s, 5.14): nothing to replace",
				    opt->upstream);
		return -EEXIST;
	}
	/* struct proc_inode as compat/proc_pid_rcu.h has it, or nothing. */
	ret = kern_path("/proc/self", LOOKUP_FOLLOW, &path);
	if (ret) {
		vfsfast_unsupported(opt, "struct proc_inode unchecked: /proc/self: %d", ret);
		return ret;
	}
	inode = d_inode(path.dentry);
	ok = inode->i_sb->s_magic == PROC_SUPER_MAGIC &&
	     vfsfast_proc_pid(inode) == task_tgid(current);
	path_put(&path);
	if (!ok) {
		vfsfast_unsupported(opt, "struct proc_inode is not as expected (/proc/self's pid)");
		return -EINVAL;
	}
	return 0;
}

/* At load, with a dentry that has no inode: stock answers at once. */
VFSFAST_BOUNDED_CALL(vfsfast_pid_setup, vfsfast_stock_pid_revalidate);

VFSFAST_FUNCS(proc_pid_rcu, VFSFAST_PROC_PID_RCU_TARGETS);
#else
VFSFAST_NO_FUNCS(proc_pid_rcu);
#define vfsfast_pid_setup NULL
#endif

VFSFAST_OPTIMIZATION(proc_pid_rcu, VFSFAST_PROC_PID_RCU_TARGETS,
		     VFSFAST_UPSTREAM_PROC_PID_RCU_INFO, auto,
	.lacks = VFSFAST_NO_PROC_PID_RCU,
	.setup = vfsfast_pid_setup,
);
