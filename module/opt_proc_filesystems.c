// SPDX-License-Identifier: GPL-2.0
/*
 * proc_filesystems: /proc/filesystems served from a copy of its text,
 * the gain of the 7.x "revamp fs/filesystems.c" series (Debian's 7.2 has
 * it), for kernels that format the list at every read.
 *
 * libselinux reads /proc/filesystems at the start of every program linked
 * with it (on Debian 12: ls, cp, mv, mkdir, id, sed, find, tar, systemd's
 * tools).  Stock filesystems_proc_show() of 5.10, 6.1 and 6.12
 * (fs/filesystems.c) walks the file_systems list under the read side of
 * file_systems_lock and seq_printf()s one line per type: most of what an
 * open, read and close of the file costs.  The list changes only in
 * register_filesystem() and unregister_filesystem(), under the write side
 * of that lock; a type's name and flags do not change while it is
 * registered.
 *
 * Observers of those two raise a count of writers before the stock call
 * (a full barrier before the list can change) and, after it, bump a
 * generation and then drop the count (a full barrier between).  The
 * replacement reads the pair (writers, then the generation) before and
 * after its work, as a sequence count is read; the list was the same
 * throughout iff no writer was counted either time and the generation did
 * not move.  A writer that changed the list before the second read of a
 * reader that saw the change is counted by it, since the change is
 * ordered after the count by the barrier and the reader saw it through
 * the lock.
 *
 * On a miss the replacement calls the stock function, which formats into
 * the seq_file as always; if the pair was stable across that call, the
 * text it wrote is the list at the generation read before it, and is kept
 * with that generation as its tag (the tag must be the generation read
 * before the text was made, never one read after: a filesystem
 * unregistered in between would otherwise be served for good; the fault
 * injection build's fi_late_tag makes exactly that mistake, for the test
 * that proves the guard).  On a hit (the tag is the current generation,
 * no writer counted) the replacement copies the kept text into the
 * seq_file, then checks the pair again and the copy's own sequence count;
 * if anything moved, it takes back what it wrote and calls the stock
 * function.  So the text served is stock's at one instant of the call.
 * The seq_file does the rest as for stock: offsets, partial reads, lseek,
 * pread and a buffer too small (the text is then written again, bigger).
 *
 * The copy is one static page: no allocation, nothing to free at unload.
 * A text longer than a page is never kept.  Its builders serialize on a
 * spinlock, taken with trylock (a reader never waits for another); the
 * copy's sequence count lets readers detect a copy rewritten under them.
 *
 * Observers go live first; ->arm() moves the generation on before any
 * replacement is routed in, so a text kept by an earlier enable, from a
 * time when registrations went unobserved, never matches.
 */
#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/string.h>

#include "vfsfast.h"
#include "proc_filesystems.h"

#define VFSFAST_PROC_FILESYSTEMS_TARGETS(T)				\
	(T(register_filesystem, register_filesystem, register_filesystem,	\
	   observe, vfsfast_register_filesystem)				\
	 T(unregister_filesystem, unregister_filesystem,			\
	   unregister_filesystem, observe, vfsfast_unregister_filesystem)	\
	 T(filesystems_proc_show, *(vfsfast_seq_show_t *)0, 0, replace,	\
	   vfsfast_filesystems_proc_show))

VFSFAST_STATS(proc_filesystems);

#ifdef VFSFAST_PROC_FILESYSTEMS
VFSFAST_DECLARE_TARGETS(VFSFAST_PROC_FILESYSTEMS_TARGETS);

static atomic_t vfsfast_fs_writers = ATOMIC_INIT(0);
static atomic_long_t vfsfast_fs_gen = ATOMIC_LONG_INIT(0);

/* The kept text, its tag and length; written under vfsfast_fs_lock. */
static DEFINE_SPINLOCK(vfsfast_fs_lock);
static seqcount_spinlock_t vfsfast_fs_seq =
	SEQCNT_SPINLOCK_ZERO(vfsfast_fs_seq, &vfsfast_fs_lock);
static char vfsfast_fs_text[PAGE_SIZE];
static size_t vfsfast_fs_len;
static long vfsfast_fs_tag = -1;

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only: a show by a task named fi_park_show holds after the
 * stock function has made its text and before it is checked and kept,
 * until fi_park_show is cleared (30 s at most), so that a test can
 * unregister a filesystem in between; fi_parked says whether it did.
 * fi_late_tag=1 tags the kept text with the generation read after the
 * text was made: the mistake the guard above prevents.
 */
static char fi_park_show[TASK_COMM_LEN];
module_param_string(fi_park_show, fi_park_show, sizeof(fi_park_show), 0644);
MODULE_PARM_DESC(fi_park_show, "test builds: park this task's /proc/filesystems show");
static int fi_parked;
module_param(fi_parked, int, 0444);
MODULE_PARM_DESC(fi_parked, "test builds: shows parked by fi_park_show");
static bool fi_late_tag;
module_param(fi_late_tag, bool, 0644);
MODULE_PARM_DESC(fi_late_tag, "test builds: tag the kept text late (the bug)");

static void vfsfast_fs_fi_park(long *gen)
{
	vfsfast_fi_hold_task(fi_park_show, &fi_parked, 30000, false);
	if (fi_late_tag)
		*gen = atomic_long_read(&vfsfast_fs_gen);
}
#else
static inline void vfsfast_fs_fi_park(long *gen)
{
}
#endif

static void vfsfast_fs_write_begin(void)
{
	atomic_inc(&vfsfast_fs_writers);
	/* Counted before the list can change. */
	smp_mb__after_atomic();
}

static void vfsfast_fs_write_end(void)
{
	atomic_long_inc(&vfsfast_fs_gen);
	/* The generation moves before the count drops. */
	smp_mb__before_atomic();
	atomic_dec(&vfsfast_fs_writers);
}

static int vfsfast_register_filesystem(struct file_system_type *fs)
{
	int ret;

	vfsfast_enter(proc_filesystems);
	vfsfast_fs_write_begin();
	ret = vfsfast_stock_register_filesystem(fs);
	vfsfast_fs_write_end();
	vfsfast_leave(proc_filesystems);
	return ret;
}

static int vfsfast_unregister_filesystem(struct file_system_type *fs)
{
	int ret;

	vfsfast_enter(proc_filesystems);
	vfsfast_fs_write_begin();
	ret = vfsfast_stock_unregister_filesystem(fs);
	vfsfast_fs_write_end();
	vfsfast_leave(proc_filesystems);
	return ret;
}

/* The generation if no writer is counted, else -1; writers first. */
static long vfsfast_fs_stable(void)
{
	if (atomic_read(&vfsfast_fs_writers))
		return -1;
	/* Pairs with vfsfast_fs_write_end(): a dropped count, a moved gen. */
	smp_rmb();
	return atomic_long_read(&vfsfast_fs_gen);
}

/* Whether the list has stayed as it was when @gen was read. */
static bool vfsfast_fs_unchanged(long gen)
{
	/* What was read of the list or the copy, before the pair again. */
	smp_rmb();
	return vfsfast_fs_stable() == gen;
}

static void vfsfast_fs_keep(const char *text, size_t len, long gen)
{
	if (len > sizeof(vfsfast_fs_text) || !spin_trylock(&vfsfast_fs_lock))
		return;
	write_seqcount_begin(&vfsfast_fs_seq);
	memcpy(vfsfast_fs_text, text, len);
	WRITE_ONCE(vfsfast_fs_len, len);
	WRITE_ONCE(vfsfast_fs_tag, gen);
	write_seqcount_end(&vfsfast_fs_seq);
	spin_unlock(&vfsfast_fs_lock);
}

/* The kept text into @m if it is the list's at @gen; false if not. */
static bool vfsfast_fs_serve(struct seq_file *m, long gen)
{
	size_t start = m->count;
	unsigned int seq;

	seq = raw_read_seqcount(&vfsfast_fs_seq);
	if (seq & 1 || READ_ONCE(vfsfast_fs_tag) != gen)
		return false;
	seq_write(m, vfsfast_fs_text, READ_ONCE(vfsfast_fs_len));
	if (!read_seqcount_retry(&vfsfast_fs_seq, seq) &&
	    vfsfast_fs_unchanged(gen))
		return true;
	m->count = start;
	return false;
}

static int vfsfast_filesystems_proc_show(struct seq_file *m, void *v)
{
	size_t start = m->count;
	long gen;
	int ret;

	vfsfast_enter(proc_filesystems);
	gen = vfsfast_fs_stable();
	if (gen >= 0 && vfsfast_fs_serve(m, gen)) {
		vfsfast_leave(proc_filesystems);
		return 0;
	}
	vfsfast_fallback(proc_filesystems);
	ret = vfsfast_stock_filesystems_proc_show(m, v);
	if (gen >= 0 && !ret && !seq_has_overflowed(m)) {
		vfsfast_fs_fi_park(&gen);
		if (vfsfast_fs_unchanged(gen))
			vfsfast_fs_keep(m->buf + start, m->count - start, gen);
	}
	vfsfast_leave(proc_filesystems);
	return ret;
}

static void vfsfast_fs_arm(struct vfsfast_opt *opt)
{
	atomic_long_inc(&vfsfast_fs_gen);
	/* Before any replacement is routed in. */
	smp_mb__after_atomic();
}

/* file_systems_lock and a seq_file buffer: nothing waits on user space. */
VFSFAST_BOUNDED_CALL(vfsfast_register_filesystem, vfsfast_stock_register_filesystem);
VFSFAST_BOUNDED_CALL(vfsfast_unregister_filesystem, vfsfast_stock_unregister_filesystem);
VFSFAST_BOUNDED_CALL(vfsfast_filesystems_proc_show, vfsfast_stock_filesystems_proc_show);

VFSFAST_FUNCS(proc_filesystems, VFSFAST_PROC_FILESYSTEMS_TARGETS);
#else
VFSFAST_NO_FUNCS(proc_filesystems);
#define vfsfast_fs_arm NULL
#endif

VFSFAST_OPTIMIZATION(proc_filesystems, VFSFAST_PROC_FILESYSTEMS_TARGETS,
		     VFSFAST_UPSTREAM_PROC_FILESYSTEMS_INFO, auto,
	.upstream = VFSFAST_UPSTREAM_PROC_FILESYSTEMS,
	.lacks = VFSFAST_NO_PROC_FILESYSTEMS,
	.arm = vfsfast_fs_arm,
);
