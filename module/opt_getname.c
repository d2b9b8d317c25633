// SPDX-License-Identifier: GPL-2.0
/*
 * getname: a path name taken without clearing 4 KB first, the gain of
 * 7.0's struct filename with the name embedded (a 192-byte object, long
 * names allocated apart) for kernels before it.
 *
 * Every system call that takes a path (stat, open, access, mkdir, execve,
 * ...) copies it with getname_flags() into a names_cache object of 4 KB.
 * Debian builds every kernel with CONFIG_INIT_ON_ALLOC_DEFAULT_ON, so
 * that allocation clears all 4 KB before a name of a few bytes is copied
 * in, and putname() frees it again.  On the lab's CPU model (no fast
 * strings) the clear is about 730 instructions per name; with ERMS it is
 * a few hundred cycles.
 *
 * Here each CPU keeps a few names_cache objects that are already clean,
 * in the state init_on_alloc leaves a new one in: every byte zero.
 * getname_flags() takes one and copies the name in; putname() zeroes the
 * header and the words the name used (the name ends with its NUL inside
 * the last of them, and every word after it is still zero) and keeps the
 * object for the next name, or frees it when the CPU's cache is full.
 * So no name can read what a previous one left (init_on_alloc's promise),
 * and nothing is cleared that was never written.
 *
 * The objects are the kernel's own names_cache objects throughout: a name
 * taken by the fast path and released with the knob off goes back to the
 * slab as stock's own do, and a name stock took and the fast path
 * releases is kept like any other (it came from init_on_alloc clean, and
 * only its name was written).  Nothing depends on which side took a name,
 * so enabling and disabling need no care for names in flight, io_uring's
 * deferred opens or audit's references included.  The kept objects
 * themselves are freed at unload, after the drain (->teardown): no task
 * is then inside putname()'s replacement, about to keep one more.
 *
 * What stock does in getname_flags() (fs/namei.c of 5.10, 6.1 and 6.12):
 * with an audit context that is not a dummy, reuse a name the system call
 * already took (audit_reusename()) and record the new one
 * (audit_getname()): such calls go to stock.  Then allocate, copy at most
 * EMBEDDED_NAME_MAX bytes with strncpy_from_user(); a fault is -EFAULT,
 * an empty name -ENOENT unless LOOKUP_EMPTY (5.10 and 6.1 also report it
 * through *empty), and a name that fills the room is copied again into a
 * buffer of its own.  The fast path copies with page faults disabled, so
 * that it never sleeps; a copy that faults, or a name that long, frees the
 * object and hands the whole call to stock, which copies again from the
 * start.  The empty name is answered here, as stock answers it.
 *
 * GCC splits getname_flags() (6.12's has the audit test as a head, the
 * rest in getname_flags.part.0, which getname(), getname_uflags(),
 * user_path_at() and the *at() system calls of fs/namei.c call
 * directly): the target is then the split part (kind split), and the
 * replacement, which steps aside for a live audit context, is right both
 * behind the head and without it.  Setup checks that the part takes the
 * function's arguments, by comparing its answers with getname()'s.
 *
 * Neither replacement sleeps or calls anything that may (the copy runs
 * with page faults disabled; kmem_cache_free() does not sleep): a task is
 * never inside one for long, and they count hits only.  putname() is
 * called from task context only, for names; interrupts are not trusted
 * with the per-CPU cache, so calls from any other context go to stock.
 */
#include <linux/audit.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernfs.h>
#include <linux/kobject.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/namei.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "vfsfast.h"
#include "getname.h"

#define VFSFAST_GETNAME_TARGETS(T)					\
	(T(getname_flags, getname_flags, 0, split, vfsfast_getname_flags) \
	 T(putname, putname, 0, replace, vfsfast_putname)		\
	 T(getname, getname, 0, call, vfsfast_stock_getname))

VFSFAST_STATS(getname);

#ifdef VFSFAST_GETNAME
VFSFAST_DECLARE_TARGETS(VFSFAST_GETNAME_TARGETS);

/*
 * Clean names_cache objects kept per CPU: two cover a rename, the rest
 * the calls that hold a name while another is taken (io_uring, a path
 * inside a mount's options).  Used with preemption off, in task context.
 */
#define VFSFAST_NAMES_KEPT	4

struct vfsfast_names {
	unsigned int count;
	struct filename *kept[VFSFAST_NAMES_KEPT];
};

static DEFINE_PER_CPU(struct vfsfast_names, vfsfast_names);

static __always_inline struct filename *vfsfast_name_take(void)
{
	struct vfsfast_names *names;
	struct filename *name = NULL;

	preempt_disable();
	names = this_cpu_ptr(&vfsfast_names);
	if (likely(names->count))
		name = names->kept[--names->count];
	preempt_enable();
	return name;
}

/* Keep @name, every byte of it zero, or free it if this CPU has enough. */
static __always_inline void vfsfast_name_keep(struct filename *name)
{
	struct vfsfast_names *names;

	preempt_disable();
	names = this_cpu_ptr(&vfsfast_names);
	if (likely(names->count < VFSFAST_NAMES_KEPT)) {
		names->kept[names->count++] = name;
		name = NULL;
	}
	preempt_enable();
	if (unlikely(name))
		kmem_cache_free(names_cachep, name);
}

/*
 * Back to what init_on_alloc gives: the header, and the name's words up
 * to the first that is zero.  strncpy_from_user() writes the word that
 * holds the NUL with zeroes after it, getname_kernel() copies up to the
 * NUL, and the object was all zero before, so every word after that one
 * still is.
 */
static __always_inline void vfsfast_name_scrub(struct filename *name)
{
	unsigned long *word = (unsigned long *)name->iname;
	unsigned long *end = (unsigned long *)((char *)name + PATH_MAX);

	while (word < end && *word)
		*word++ = 0;
	memset(name, 0, offsetof(struct filename, iname));
}

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only: a putname() by the task named here is held between
 * its scrub and keeping the object, counted as inside the module, so
 * that a test can unload the module while it is there (fi_teardown_first
 * in main.c).
 */
static char fi_putname_park[TASK_COMM_LEN];
module_param_string(fi_putname_park, fi_putname_park, sizeof(fi_putname_park), 0644);
MODULE_PARM_DESC(fi_putname_park, "test builds: hold this task's putname() before it keeps the name");
static int fi_putname_parked;
module_param(fi_putname_parked, int, 0444);

static void vfsfast_fi_putname_park(void)
{
	vfsfast_enter(getname);
	vfsfast_fi_hold_task(fi_putname_park, &fi_putname_parked, 30000, false);
	vfsfast_leave(getname);
}

/*
 * fi_getname_check=1 counts in fi_getname_dirty every object taken from
 * the cache that is not all zero; fi_getname_noscrub=1 keeps names
 * without scrubbing them, which that count must catch; and
 * fi_getname_noempty=1 answers the empty name with -ENOENT even under
 * LOOKUP_EMPTY, which t_getname's differential must catch.
 */
static bool fi_getname_check;
module_param(fi_getname_check, bool, 0644);
static int fi_getname_dirty;
module_param(fi_getname_dirty, int, 0444);
static bool fi_getname_noscrub;
module_param(fi_getname_noscrub, bool, 0644);
static bool fi_getname_noempty;
module_param(fi_getname_noempty, bool, 0644);

static void vfsfast_fi_check_taken(const struct filename *name)
{
	if (READ_ONCE(fi_getname_check) && memchr_inv(name, 0, PATH_MAX))
		fi_getname_dirty++;
}

#define vfsfast_fi_noscrub()	READ_ONCE(fi_getname_noscrub)
#define vfsfast_fi_noempty()	READ_ONCE(fi_getname_noempty)
#else
static inline void vfsfast_fi_putname_park(void) { }
static inline void vfsfast_fi_check_taken(const struct filename *name) { }
#define vfsfast_fi_noscrub()	false
#define vfsfast_fi_noempty()	false
#endif

static vfsfast_noipa struct filename *
vfsfast_getname_stock VFSFAST_GETNAME_PARAMS
{
	vfsfast_fallback(getname);
	return vfsfast_stock_getname_flags VFSFAST_GETNAME_ARGS;
}

static struct filename *vfsfast_getname_flags VFSFAST_GETNAME_PARAMS
{
	struct filename *result;
	long len;

	if (unlikely(!in_task() || !audit_dummy_context()))
		return vfsfast_getname_stock VFSFAST_GETNAME_ARGS;
	result = vfsfast_name_take();
	if (unlikely(!result))
		return vfsfast_getname_stock VFSFAST_GETNAME_ARGS;
	vfsfast_fi_check_taken(result);
	pagefault_disable();
	len = strncpy_from_user((char *)result->iname, filename,
				VFSFAST_EMBEDDED_NAME_MAX);
	pagefault_enable();
	if (unlikely(len <= 0 || len == VFSFAST_EMBEDDED_NAME_MAX)) {
		/*
		 * A fault (perhaps one stock would take and wait for) or a
		 * name too long for the object: stock copies again from
		 * the start.
		 */
		if (len) {
			kmem_cache_free(names_cachep, result);
			return vfsfast_getname_stock VFSFAST_GETNAME_ARGS;
		}
		vfsfast_getname_report_empty();
		if (!(flags & LOOKUP_EMPTY) || vfsfast_fi_noempty()) {
			/* The copy wrote the NUL alone: still all zero. */
			vfsfast_name_keep(result);
			vfsfast_hit(getname);
			return ERR_PTR(-ENOENT);
		}
	}
	result->name = result->iname;
	vfsfast_name_set_refs(result, 1);
	result->uptr = filename;
	result->aname = NULL;
	vfsfast_hit(getname);
	return result;
}

static vfsfast_noipa void vfsfast_putname_stock(struct filename *name)
{
	vfsfast_fallback(getname);
	vfsfast_stock_putname(name);
}

/*
 * The last reference to an embedded name: scrubbed and kept.  With one
 * reference left no one else can take another, so the count need not
 * drop to 0 first.  Anything else (an error pointer, a long name in a
 * buffer of its own, a name audit still holds) is stock's.
 */
static void vfsfast_putname(struct filename *name)
{
	if (IS_ERR_OR_NULL(name) ||
	    unlikely(name->name != name->iname ||
		     vfsfast_name_refs(name) != 1 || !in_task() ||
		     vfsfast_name_sampled(name))) {
		vfsfast_putname_stock(name);
		return;
	}
	if (!vfsfast_fi_noscrub())
		vfsfast_name_scrub(name);
	vfsfast_fi_putname_park();
	vfsfast_name_keep(name);
	vfsfast_hit(getname);
}

VFSFAST_TAIL_CALL(vfsfast_getname_stock, vfsfast_stock_getname_flags);
VFSFAST_TAIL_CALL(vfsfast_getname_flags, vfsfast_getname_stock);
VFSFAST_TAIL_CALL(vfsfast_putname_stock, vfsfast_stock_putname);
VFSFAST_TAIL_CALL(vfsfast_putname, vfsfast_putname_stock);

/*
 * Whether the target takes getname_flags()'s arguments, where it is the
 * part GCC split off.  First its shape, watched (split.c): getname(),
 * which is getname_flags(name, 0, NULL) on every kernel, must enter it
 * with exactly those arguments and no further one; a part split
 * otherwise is never called.  Then its answers for a name, the empty
 * name and the empty name with LOOKUP_EMPTY, against getname()'s and
 * stock's rules, for a name in a page of the loading task.  Nothing is
 * hooked yet.
 */
static const char *vfsfast_getname_shape(struct vfsfast_opt *opt, char __user *page)
{
	const unsigned long args[] = { (unsigned long)page, 0, 0 };
	struct vfsfast_func *via = opt->calls;
	struct vfsfast_split_watch w;
	struct filename *name;
	const char *why;

	while (via->old_name && strcmp(via->old_name, "getname"))
		via++;
	if (!via->old_name ||
	    vfsfast_split_watch(&w, via->site, 1, opt->funcs[0].site))
		return "cannot be probed";
	name = vfsfast_stock_getname(page);
	why = vfsfast_split_seen(&w, args, VFSFAST_GETNAME_NARGS, BIT(1));
	vfsfast_split_unwatch(&w);
	if (!IS_ERR(name))
		vfsfast_stock_putname(name);
	return why;
}

static noinline const char *vfsfast_getname_check(struct vfsfast_opt *opt,
						  char __user *page)
{
	int __maybe_unused empty = 0;
	struct filename *a, *b;
	const char *why = NULL;

	if (copy_to_user(page, "vfsfast", sizeof("vfsfast")))
		return "cannot write the test name";
	why = vfsfast_getname_shape(opt, page);
	if (why)
		return why;
	a = vfsfast_stock_getname_flags VFSFAST_GETNAME_ARGS_OF(page, 0, NULL);
	b = vfsfast_stock_getname(page);
	if (IS_ERR(a) || IS_ERR(b) || strcmp(a->name, "vfsfast") ||
	    strcmp(b->name, "vfsfast"))
		why = "a name";
	if (!IS_ERR(a))
		vfsfast_stock_putname(a);
	if (!IS_ERR(b))
		vfsfast_stock_putname(b);
	if (why)
		return why;
	a = vfsfast_stock_getname_flags VFSFAST_GETNAME_ARGS_OF(page + 64, 0, NULL);
	if (PTR_ERR(a) != -ENOENT) {
		if (!IS_ERR(a))
			vfsfast_stock_putname(a);
		return "the empty name";
	}
	a = vfsfast_stock_getname_flags VFSFAST_GETNAME_ARGS_OF(page + 64,
								LOOKUP_EMPTY,
								&empty);
	if (IS_ERR(a))
		return "the empty name with LOOKUP_EMPTY";
	if (a->name[0])
		why = "the empty name with LOOKUP_EMPTY";
	vfsfast_stock_putname(a);
#ifdef VFSFAST_HAVE_GETNAME_FLAGS_EMPTY
	if (!empty)
		why = "the empty name's report";
#endif
	return why;
}

/*
 * Whether slab debugging watches names_cache: a kept object is live to
 * the allocator, so a use after putname() would go unseen by poisoning,
 * red zones and the checks of a free.  SLUB (CONFIG_SLUB_DEBUG, turned
 * on by slub_debug= or CONFIG_SLUB_DEBUG_ON) says so per cache in sysfs,
 * asked here through kernfs rather than a path, so that the loading
 * task's mounts do not matter.  True, with the optimization unsupported
 * saying why, where it does or cannot be told.
 */
static bool vfsfast_getname_debugged(struct vfsfast_opt *opt, char *page)
{
	static const char *const flags[] = {
		"sanity_checks", "red_zone", "poison", "store_user",
	};
	struct kernfs_node *slab, *cache = NULL, *attr;
	const char *on = NULL, *unknown = NULL;
	struct kobject *kobj;
	unsigned int i;

	if (IS_ENABLED(CONFIG_DEBUG_SLAB))
		on = "CONFIG_DEBUG_SLAB";
	if (on || !IS_ENABLED(CONFIG_SLUB_DEBUG))
		goto out;
	slab = kernfs_find_and_get(kernel_kobj->sd, "slab");
	if (slab)
		cache = kernfs_find_and_get(slab, "names_cache");
	kernfs_put(slab);
	if (!cache) {
		unknown = "no /sys/kernel/slab/names_cache";
		goto out;
	}
	kobj = cache->priv;
	for (i = 0; i < ARRAY_SIZE(flags) && !on && !unknown; i++) {
		attr = kernfs_find_and_get(cache, flags[i]);
		if (!attr || kobj->ktype->sysfs_ops->show(kobj, attr->priv, page) <= 0)
			unknown = flags[i];
		else if (page[0] != '0')
			on = flags[i];
		kernfs_put(attr);
	}
	kernfs_put(cache);
out:
	if (on)
		vfsfast_unsupported(opt, "slab debugging watches names_cache (%s): names kept for reuse would hide a use after putname() from it",
				    on);
	else if (unknown)
		vfsfast_unsupported(opt, "cannot tell whether slab debugging watches names_cache (%s would not read)",
				    unknown);
	return on || unknown;
}

static int vfsfast_getname_setup(struct vfsfast_opt *opt)
{
	unsigned long addr, page;
	const char *why;
	bool debugged;

	page = get_zeroed_page(GFP_KERNEL);
	if (!page)
		return -ENOMEM;
	debugged = vfsfast_getname_debugged(opt, (char *)page);
	free_page(page);
	if (debugged)
		return -EINVAL;
	if (!opt->funcs[0].split)
		return 0;
	if (!current->mm) {
		vfsfast_unsupported(opt, "getname_flags.part.0 unchecked: no user memory at load");
		return -EINVAL;
	}
	addr = vm_mmap(NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, 0);
	if (IS_ERR_VALUE(addr)) {
		vfsfast_unsupported(opt, "getname_flags.part.0 unchecked: mmap: %ld",
				    (long)addr);
		return (int)addr;
	}
	why = vfsfast_getname_check(opt, (char __user *)addr);
	vm_munmap(addr, PAGE_SIZE);
	if (why) {
		vfsfast_unsupported(opt, "getname_flags.part.0 does not take getname_flags()'s arguments: %s",
				    why);
		return -EINVAL;
	}
	return 0;
}

VFSFAST_BOUNDED_CALL(vfsfast_getname_shape, vfsfast_stock_getname);
VFSFAST_BOUNDED_CALL(vfsfast_getname_shape, vfsfast_stock_putname);
VFSFAST_BOUNDED_CALL(vfsfast_getname_check, vfsfast_stock_getname_flags);
VFSFAST_BOUNDED_CALL(vfsfast_getname_check, vfsfast_stock_getname);
VFSFAST_BOUNDED_CALL(vfsfast_getname_check, vfsfast_stock_putname);

/* At unload, after the drain: no task is about to keep one more. */
static void vfsfast_getname_teardown(struct vfsfast_opt *opt)
{
	struct vfsfast_names *names;
	int cpu;

	for_each_possible_cpu(cpu) {
		names = per_cpu_ptr(&vfsfast_names, cpu);
		while (names->count)
			kmem_cache_free(names_cachep,
					names->kept[--names->count]);
	}
}

VFSFAST_FUNCS(getname, VFSFAST_GETNAME_TARGETS);
#else
VFSFAST_NO_FUNCS(getname);
#define vfsfast_getname_setup		NULL
#define vfsfast_getname_teardown	NULL
#endif

VFSFAST_OPTIMIZATION(getname, VFSFAST_GETNAME_TARGETS,
		     VFSFAST_UPSTREAM_GETNAME_INFO, auto,
	.upstream = VFSFAST_UPSTREAM_GETNAME,
	.lacks = VFSFAST_NO_GETNAME,
	.setup = vfsfast_getname_setup,
	.teardown = vfsfast_getname_teardown,
	.covers = VFSFAST_COVERS("getname_flags"),
);
