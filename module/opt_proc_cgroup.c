// SPDX-License-Identifier: GPL-2.0
/*
 * proc_cgroup: /proc/<pid>/cgroup without cgroup_mutex, the gain of 6.7's
 * "cgroup: Eliminate the need for cgroup_mutex in proc_cgroup_show()"
 * (with 6.7's "cgroup: Make operations on the cgroup root_list RCU safe")
 * for kernels before it, where the only hierarchy is the default one.
 *
 * Stock proc_cgroup_show() of 5.10 and 6.1 (kernel/cgroup/cgroup.c) takes
 * cgroup_mutex, the global lock every cgroup mkdir, rmdir, migration and
 * controller change holds (for as long as a migration takes, or a
 * controller's offline work), then css_set_lock, and prints one line per
 * hierarchy on the root list: the hierarchy id, its controllers and name,
 * and the task's cgroup there as cgroup_path_ns_locked() gives it under
 * the reader's cgroup namespace, " (deleted)" after a removed cgroup of the
 * default hierarchy.  systemd, journald, container runtimes and
 * `ps -o cgroup` read it, so every read waits for whatever cgroup work is
 * running, and adds to the lock's traffic.
 *
 * 6.7 walks the root list under RCU instead, which 5.10 cannot: it frees
 * a cgroup root at once (cgroup_free_root(): kfree) and unlinks it with
 * list_del() after its last css_set_lock section.  6.1.y took the RCU
 * root list (struct cgroup_root.rcu) but not the mutex-free reader, and a
 * v1 root's kernfs nodes are freed without a grace period after its
 * links (kernfs_destroy_root() in cgroup_destroy_root()): a reader that
 * finds a root of the init css_set on the list in RCU mode, as 6.7's does
 * (__cset_cgroup_from_root() answers &root->cgrp for it without a link),
 * could read a freed node.  So the replacement prints only the default
 * hierarchy's line, and only when it is the only hierarchy, and asks
 * that of the task's own css_set under css_set_lock:
 *
 *   Every css_set is linked (cgrp_links, under css_set_lock) to one
 *   cgroup of every hierarchy that is set up: cgroup_setup_root() links
 *   every css_set of the table to the new root in one css_set_lock
 *   section, after adding the root to the list; cgroup_destroy_root()
 *   unlinks them all in one section, before taking the root off the list;
 *   and find_css_set() links a new css_set to the hierarchies of the one
 *   it copies.  So under css_set_lock a css_set with a single link (its
 *   default-hierarchy cgroup, which every css_set has) means no other
 *   hierarchy is set up; a root that is on the list without links is one
 *   a stock reader, holding cgroup_mutex, could never see.
 *
 * Why the line is stock's at one instant: while the replacement holds
 * css_set_lock, no task changes css_set (migration rewrites task->cgroups
 * under it) and no hierarchy is set up or torn down (both need it to link
 * or unlink), so the answer "one hierarchy", the task's cgroup
 * (cset->dfl_cgrp) and the namespace's (root_cset->dfl_cgrp, the same
 * cgroup stock's cset_cgroup_from_root() answers for the init css_set,
 * whose dfl_cgrp is the root cgroup) hold for the whole section.
 * kernfs_path_from_node() reads the path under kernfs_rename_lock, as
 * stock's call does, and default-hierarchy cgroups cannot be renamed.
 * Removal clears CSS_ONLINE under cgroup_mutex alone: read once, it is
 * the state at that read, and the rest of the line holds then too.  The
 * default hierarchy is printed only once cgrp_dfl_visible is true, which
 * never goes false again once cgroup2 was mounted: the module reads it
 * where kallsyms finds it (by name, or near css_set_lock in cgroup.c's
 * .bss), or else learns it from the stock answer it asks for at load (a
 * "0:" line; cgroup2 mounted only after that then leaves the fast path
 * unused).  The default hierarchy's id, 0, is no other root's:
 * idr_alloc_cyclic() never gives back an id in use.
 *
 * Memory: the task's css_set, its cgroups and their kernfs nodes live as
 * long as the css_set links them, which css_set_lock keeps; the reader's
 * cgroup namespace holds its root_cset.  What stock does with the
 * kmalloc()ed PATH_MAX buffer, the replacement does: -ENOMEM before
 * anything is printed, and the path's errors as each kernel's own code
 * maps them (5.10 a length of PATH_MAX or more, 6.1 -E2BIG, both
 * -ENAMETOOLONG; neither kernel's kernfs_path_from_node() returns the
 * other's form).
 *
 * With a v1 hierarchy mounted (a named one, or a controller on v1),
 * every read goes to stock, and without paying for the fast path's try
 * first: a look at the task's css_set under RCU alone (a second link)
 * sends it there before css_set_lock or the path buffer; a look that
 * misses a hierarchy being set up is caught by the test under the lock.
 * Stock takes cgroup_mutex, which a cgroup.procs write may hold while it
 * waits for an mmap lock that a FUSE daemon keeps, so stock is always
 * reached by a tail call, with nothing of vfsfast left on the stack for
 * rmmod to wait for.  Whether the kernel's own proc_cgroup_show() takes
 * cgroup_mutex is asked at load: it runs in a worker while setup holds
 * the mutex.
 */
#include <linux/cgroup.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kernfs.h>
#include <linux/nsproxy.h>
#include <linux/pid_namespace.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "vfsfast.h"
#include "proc_cgroup.h"

#define VFSFAST_PROC_CGROUP_TARGETS(T)					\
	(T(proc_cgroup_show, proc_cgroup_show, 0, replace,		\
	   vfsfast_proc_cgroup_show))

VFSFAST_STATS(proc_cgroup);

#ifdef VFSFAST_PROC_CGROUP
VFSFAST_DECLARE_TARGETS(VFSFAST_PROC_CGROUP_TARGETS);

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only.  A read by a task named fi_cg_park sleeps until
 * fi_cg_park is cleared (30 s at most), before it looks at its css_set;
 * fi_cg_parked counts the holds.  fi_cg_split=1 parks it after the
 * one-hierarchy test instead, with css_set_lock dropped and taken again:
 * the fast path without the guard that keeps the test and the line in
 * one section.
 */
static char fi_cg_park[TASK_COMM_LEN];
module_param_string(fi_cg_park, fi_cg_park, sizeof(fi_cg_park), 0644);
MODULE_PARM_DESC(fi_cg_park, "test builds: park this task's /proc/<pid>/cgroup read");
static int fi_cg_parked;
module_param(fi_cg_parked, int, 0444);
MODULE_PARM_DESC(fi_cg_parked, "test builds: reads parked by fi_cg_park");
static bool fi_cg_split;
module_param(fi_cg_split, bool, 0644);
MODULE_PARM_DESC(fi_cg_split, "test builds: park between the test and the line (the bug)");

/*
 * Where setup found cgroup_mutex and css_set_lock, "<hex> <hex>": t_cgroup
 * counts their acquisitions on kernels whose kallsyms does not name them.
 */
static char fi_cg_locks[40];
module_param_string(fi_cg_locks, fi_cg_locks, sizeof(fi_cg_locks), 0400);
MODULE_PARM_DESC(fi_cg_locks, "test builds: cgroup_mutex and css_set_lock as found");

#define vfsfast_cg_fi_park() \
	vfsfast_fi_hold_task(fi_cg_park, &fi_cg_parked, 30000, false)
#define vfsfast_cg_fi_split()	READ_ONCE(fi_cg_split)
#define vfsfast_cg_fi_found(m, l) \
	snprintf(fi_cg_locks, sizeof(fi_cg_locks), "%lx %lx", \
		 (unsigned long)(m), (unsigned long)(l))
#else
static inline void vfsfast_cg_fi_park(void) { }
#define vfsfast_cg_fi_split()	false
#define vfsfast_cg_fi_found(m, l)	do { } while (0)
#endif

/* Found at setup (compat/proc_cgroup.h). */
static spinlock_t *vfsfast_css_set_lock;
static struct mutex *vfsfast_cgroup_mutex;

/*
 * The kernel's cgrp_dfl_visible where kallsyms has it; else what the stock
 * answer at load said of it (vfsfast_cg_visible).
 */
static bool *vfsfast_cg_dfl_visible;
static bool vfsfast_cg_visible;

static __always_inline bool vfsfast_cg_is_visible(void)
{
	if (likely(vfsfast_cg_dfl_visible))
		return READ_ONCE(*vfsfast_cg_dfl_visible);
	return READ_ONCE(vfsfast_cg_visible);
}

/*
 * Whether @tsk's css_set has one link, looked at under RCU only: no is
 * final for this read (stock answers it); yes is asked again under
 * css_set_lock.
 */
static bool vfsfast_cg_maybe_only(struct task_struct *tsk)
{
	const struct list_head *head, *next;
	bool only;

	rcu_read_lock();
	head = &task_css_set(tsk)->cgrp_links;
	next = READ_ONCE(head->next);
	only = next != head && next == READ_ONCE(head->prev);
	rcu_read_unlock();
	return only;
}

/* Whether stock printed a line of hierarchy 0 after @from. */
static void vfsfast_cg_note_visible(struct seq_file *m, size_t from)
{
	size_t i;

	if (seq_has_overflowed(m))
		return;
	for (i = from; i + 1 < m->count; i++)
		if ((i == from || m->buf[i - 1] == '\n') &&
		    m->buf[i] == '0' && m->buf[i + 1] == ':') {
			WRITE_ONCE(vfsfast_cg_visible, true);
			return;
		}
}

/*
 * @tsk's line of the default hierarchy, as stock prints it, when that is
 * the only hierarchy; -EAGAIN, with nothing printed, when it is not.
 */
static int vfsfast_cg_show_dfl(struct seq_file *m, struct task_struct *tsk)
{
	struct cgroup_namespace *cgns = current->nsproxy->cgroup_ns;
	struct cgroup *cgrp, *top;
	bool only;
	char *buf;
	int ret;

	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	spin_lock_irq(vfsfast_css_set_lock);
	only = list_is_singular(&task_css_set(tsk)->cgrp_links);
	if (only && vfsfast_cg_fi_split()) {
		spin_unlock_irq(vfsfast_css_set_lock);
		vfsfast_cg_fi_park();
		spin_lock_irq(vfsfast_css_set_lock);
	}
	if (!only) {
		ret = -EAGAIN;
		goto out;
	}
	cgrp = task_css_set(tsk)->dfl_cgrp;
	top = cgns->root_cset->dfl_cgrp;
	seq_printf(m, "%d:", cgrp_dfl_root.hierarchy_id);
	if (cgrp_dfl_root.name[0])
		seq_printf(m, "name=%s", cgrp_dfl_root.name);
	seq_putc(m, ':');
	ret = kernfs_path_from_node(cgrp->kn, top->kn, buf, PATH_MAX);
	if (ret >= PATH_MAX || ret == -E2BIG)
		ret = -ENAMETOOLONG;
	if (ret < 0)
		goto out;
	seq_puts(m, buf);
	seq_puts(m, vfsfast_cgroup_is_dead(cgrp) ? " (deleted)\n" : "\n");
	ret = 0;
out:
	spin_unlock_irq(vfsfast_css_set_lock);
	kfree(buf);
	return ret;
}

/* Not answered here: the stock function, as a tail call. */
static vfsfast_noipa int vfsfast_cg_stock(struct seq_file *m,
					  struct pid_namespace *ns,
					  struct pid *pid,
					  struct task_struct *tsk)
{
	vfsfast_fallback(proc_cgroup);
	vfsfast_leave(proc_cgroup);
	return vfsfast_stock_proc_cgroup_show(m, ns, pid, tsk);
}

static int vfsfast_proc_cgroup_show(struct seq_file *m,
				    struct pid_namespace *ns, struct pid *pid,
				    struct task_struct *tsk)
{
	int ret;

	vfsfast_enter(proc_cgroup);
	if (!vfsfast_cg_fi_split())
		vfsfast_cg_fi_park();
	if (unlikely(!vfsfast_cg_is_visible()) || !vfsfast_cg_maybe_only(tsk))
		return vfsfast_cg_stock(m, ns, pid, tsk);
	ret = vfsfast_cg_show_dfl(m, tsk);
	if (ret == -EAGAIN)
		return vfsfast_cg_stock(m, ns, pid, tsk);
	vfsfast_leave(proc_cgroup);
	return ret;
}

VFSFAST_TAIL_CALL(vfsfast_cg_stock, vfsfast_stock_proc_cgroup_show);
VFSFAST_TAIL_CALL(vfsfast_proc_cgroup_show, vfsfast_cg_stock);

/* The kernel's proc_cgroup_show() of the loading task, in a worker. */
struct vfsfast_cg_ask {
	struct work_struct work;
	struct completion done;
	struct seq_file seq;
	struct task_struct *tsk;
	struct task_struct *worker;
	int ret;
};

static void vfsfast_cg_ask_fn(struct work_struct *work)
{
	struct vfsfast_cg_ask *a = container_of(work, struct vfsfast_cg_ask, work);

	get_task_struct(current);
	WRITE_ONCE(a->worker, current);
	a->ret = vfsfast_stock_proc_cgroup_show(&a->seq, task_active_pid_ns(a->tsk),
						task_pid(a->tsk), a->tsk);
	complete(&a->done);
}

/*
 * Whether the worker sleeps on cgroup_mutex, which the caller holds: it
 * sleeps uninterruptibly, the mutex has a waiter, and it has not finished.
 * A worker asleep elsewhere (reclaim) while another task waits on the
 * mutex would read as stock's: the replacement then runs where the kernel
 * did not need it, and answers as the kernel does.
 */
static bool vfsfast_cg_ask_blocked(struct vfsfast_cg_ask *a)
{
	struct task_struct *w = READ_ONCE(a->worker);

	return w && (vfsfast_task_state(w) & TASK_UNINTERRUPTIBLE) &&
	       (atomic_long_read(&vfsfast_cgroup_mutex->owner) & VFSFAST_MUTEX_FLAG_WAITERS) &&
	       !completion_done(&a->done);
}

#ifdef VFSFAST_CG_FROM_CODE
/*
 * Without KALLSYMS_ALL: read from the code of the two functions that take
 * both locks the same way, proc_cgroup_show() (the target) and
 * task_cgroup_path(), "mutex_lock(&cgroup_mutex); spin_lock_irq(
 * &css_set_lock);": cgroup_mutex is the first mutex_lock()'s argument,
 * css_set_lock what the spin_lock_irq() after it locks, inlined or not
 * (vfsfast_arch_call_ref()).  The two must agree, and a mutex must look
 * like one, an empty or well linked wait list, before setup locks it.
 */
static unsigned long vfsfast_cg_from_code(bool spinlock)
{
	static const char *const users[] = { "proc_cgroup_show", "task_cgroup_path" };
	unsigned long func, size, got, addr = 0;
	struct list_head head, *next_prev;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(users); i++) {
		func = vfsfast_lookup_text(users[i], &size);
		got = func ? vfsfast_arch_call_ref(func, size, (unsigned long)&mutex_lock,
						   1, spinlock) : 0;
		if (!got || (addr && got != addr))
			return 0;
		addr = got;
	}
	if (spinlock)
		return addr;
	if (copy_from_kernel_nofault(&head, &((struct mutex *)addr)->wait_list, sizeof(head)) ||
	    copy_from_kernel_nofault(&next_prev, &head.next->prev, sizeof(next_prev)) ||
	    next_prev != &((struct mutex *)addr)->wait_list)
		return 0;
	return addr;
}
#define VFSFAST_CG_CODE_NOTE \
	", nor the code of proc_cgroup_show() and task_cgroup_path() (the lock calls' adrp and add)"
#else
#define vfsfast_cg_from_code(spinlock)	0UL
#define VFSFAST_CG_CODE_NOTE	""
#endif

/*
 * A variable of kernel/cgroup/cgroup.c by name: by walking from an
 * exported neighbour, near dma_spin_lock in .bss (css_set_lock;
 * cgroup_mutex too where it is zero-initialized, 7.x) or near
 * cgrp_dfl_root in .data (cgroup_mutex on 5.10 and 6.1), else by
 * kallsyms' own lookup (symbols.c), where the cloud kernels, without
 * dma_spin_lock (compat/proc_cgroup.h), find css_set_lock.  Walks first:
 * before 6.2 that lookup reads every symbol up to the variable's, some
 * 40 ms of a 5.10 guest's load for one in .bss; a walk is a few hundred
 * sprint_symbol() calls at most.
 */
static unsigned long vfsfast_cg_find(const char *name)
{
	unsigned long anchor = vfsfast_cg_bss_anchor();
	unsigned long addr = 0;

	if (anchor)
		addr = vfsfast_lookup_data(name, anchor, 256);
	if (!addr)
		addr = vfsfast_lookup_data(name, (unsigned long)&cgrp_dfl_root, 256);
	return addr ?: vfsfast_lookup_data_name(name);
}

/* What the lookups tried, for the status of a variable they missed. */
#define VFSFAST_CG_FIND_TRIED						\
	"neither 256 symbols each way from cgrp_dfl_root"			\
	VFSFAST_CG_BSS_ANCHOR_NOTE " nor kallsyms_lookup_name() (through a "	\
	"kprobe) name it" VFSFAST_CG_CODE_NOTE

static int vfsfast_cg_setup(struct vfsfast_opt *opt)
{
	struct vfsfast_cg_ask *a;
	bool upstream = false;
	unsigned int ms;
	int ret = 0;

	vfsfast_cgroup_mutex = (struct mutex *)(vfsfast_cg_find("cgroup_mutex") ?:
						vfsfast_cg_from_code(false));
	if (!vfsfast_cgroup_mutex) {
		vfsfast_unsupported(opt, "cgroup_mutex not found in kallsyms: "
				    VFSFAST_CG_FIND_TRIED);
		return -ENOENT;
	}
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	a->seq.buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!a->seq.buf) {
		kfree(a);
		return -ENOMEM;
	}
	a->seq.size = PAGE_SIZE;
	a->tsk = current;
	init_completion(&a->done);
	INIT_WORK(&a->work, vfsfast_cg_ask_fn);

	mutex_lock(vfsfast_cgroup_mutex);
	queue_work(system_unbound_wq, &a->work);
	for (ms = 0; ms < 10000; ms += 2) {
		if (completion_done(&a->done)) {
			upstream = true;
			break;
		}
		if (vfsfast_cg_ask_blocked(a))
			break;
		usleep_range(2000, 3000);
	}
	mutex_unlock(vfsfast_cgroup_mutex);
	wait_for_completion(&a->done);
	put_task_struct(a->worker);

	if (upstream) {
		opt->upstream = VFSFAST_UPSTREAM_PROC_CGROUP;
		vfsfast_unsupported(opt, "the kernel has it upstream (%s, 6.7): nothing to replace",
				    opt->upstream);
		ret = -EEXIST;
	} else if (ms >= 10000) {
		vfsfast_unsupported(opt, "proc_cgroup_show() neither finished nor waited on cgroup_mutex in 10 s");
		ret = -ETIMEDOUT;
	} else {
		vfsfast_css_set_lock = (spinlock_t *)(vfsfast_cg_find("css_set_lock") ?:
						      vfsfast_cg_from_code(true));
		if (!vfsfast_css_set_lock) {
			vfsfast_unsupported(opt, "css_set_lock not found in kallsyms: "
					    VFSFAST_CG_FIND_TRIED);
			ret = -ENOENT;
		} else {
			vfsfast_cg_dfl_visible =
				(bool *)vfsfast_lookup_data("cgrp_dfl_visible",
							    (unsigned long)vfsfast_css_set_lock,
							    256);
			if (!vfsfast_cg_dfl_visible)
				vfsfast_cg_dfl_visible =
					(bool *)vfsfast_lookup_data_name("cgrp_dfl_visible");
			if (!vfsfast_cg_dfl_visible && !a->ret)
				vfsfast_cg_note_visible(&a->seq, 0);
		}
	}
	if (!ret)
		vfsfast_cg_fi_found(vfsfast_cgroup_mutex, vfsfast_css_set_lock);
	kfree(a->seq.buf);
	kfree(a);
	return ret;
}

/* At load, in a worker: not a replacement, and rmmod refuses a module still loading. */
VFSFAST_BOUNDED_CALL(vfsfast_cg_ask_fn, vfsfast_stock_proc_cgroup_show);

VFSFAST_FUNCS(proc_cgroup, VFSFAST_PROC_CGROUP_TARGETS);
#else
VFSFAST_NO_FUNCS(proc_cgroup);
#define vfsfast_cg_setup NULL
#endif

VFSFAST_OPTIMIZATION(proc_cgroup, VFSFAST_PROC_CGROUP_TARGETS,
		     VFSFAST_UPSTREAM_PROC_CGROUP_INFO, auto,
	.lacks = VFSFAST_NO_PROC_CGROUP,
	.setup = vfsfast_cg_setup,
	/* The default hierarchy's line, printed without stock's helpers. */
	.covers = VFSFAST_COVERS("cgroup_path_ns_locked", "cset_cgroup_from_root"),
);
