// SPDX-License-Identifier: GPL-2.0
/*
 * The livepatch scan (engine.h): which livepatch patches a function now,
 * the query that attaching (a livepatch of a function an optimization
 * covers) and the hand-over (yield.c) both need.
 *
 * The holder is looked up at each event rather than remembered, because
 * cumulative livepatches hand functions over: P2 (replace) takes P1's
 * functions, P1's module is removed while P2 still patches them, and only
 * when P2 is gone too can vfsfast have them back.  The holder is the
 * newest livepatch still loaded whose sysfs directory lists the function
 * and that is enabled (Documentation/ABI/testing/sysfs-kernel-livepatch).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fcntl.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/kernfs.h>
#include <linux/kobject.h>
#include <linux/livepatch.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>

#include "engine.h"

/* Livepatch modules live now, oldest first; under vfsfast_mutex. */
#define VFSFAST_MAX_LIVEPATCHES	32
static char vfsfast_livepatches[VFSFAST_MAX_LIVEPATCHES][MODULE_NAME_LEN];
static int vfsfast_nr_livepatches;

void vfsfast_lp_track(const char *name, bool live)
{
	int i;

	for (i = 0; i < vfsfast_nr_livepatches; i++)
		if (!strcmp(vfsfast_livepatches[i], name))
			break;
	if (i < vfsfast_nr_livepatches) {
		if (live)
			return;
		memmove(vfsfast_livepatches[i], vfsfast_livepatches[i + 1],
			(--vfsfast_nr_livepatches - i) * MODULE_NAME_LEN);
	} else if (live && i < VFSFAST_MAX_LIVEPATCHES) {
		strscpy(vfsfast_livepatches[i], name, MODULE_NAME_LEN);
		vfsfast_nr_livepatches++;
	}
}

/*
 * Whether livepatch @patch is enabled and patches vmlinux's @func: its
 * /sys/kernel/livepatch/<patch>/vmlinux/<func>,<sympos> directory exists.
 * Every vfsfast target is in vmlinux; sympos is 0 (unique) or 1 there.
 */
#ifdef CONFIG_LIVEPATCH
static bool vfsfast_lp_patches(const char *patch, const char *func)
{
	struct kernfs_node *dir, *kn;
	struct kobject *kobj;
	char name[KSYM_NAME_LEN + 8];
	bool found = false;

	dir = kernfs_find_and_get(kernel_kobj->sd, "livepatch");
	if (!dir)
		return false;
	kn = kernfs_find_and_get(dir, patch);
	kernfs_put(dir);
	if (!kn)
		return false;
	/* A livepatch directory's kernfs node carries its kobject. */
	kobj = kn->priv;
	if (kobj && container_of(kobj, struct klp_patch, kobj)->enabled) {
		dir = kernfs_find_and_get(kn, "vmlinux");
		if (dir) {
			struct kernfs_node *f;
			int pos;

			for (pos = 0; pos <= 1 && !found; pos++) {
				snprintf(name, sizeof(name), "%s,%d", func, pos);
				f = kernfs_find_and_get(dir, name);
				found = f;
				kernfs_put(f);
			}
			kernfs_put(dir);
		}
	}
	kernfs_put(kn);
	return found;
}
#else
/*
 * A kernel without livepatch (Debian's arm64 6.12) has no struct klp_patch
 * and no /sys/kernel/livepatch: nothing can patch @func.
 */
static bool vfsfast_lp_patches(const char *patch, const char *func)
{
	return false;
}
#endif

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only: hold the task named here in the scan's actor, where
 * kernfs_fop_readdir() holds sysfs's kernfs_rwsem on kernels that keep it
 * across dir_emit(), so that a test can queue a sysfs writer behind it.
 */
static char fi_park_lp_scan[TASK_COMM_LEN];
module_param_string(fi_park_lp_scan, fi_park_lp_scan, sizeof(fi_park_lp_scan),
		    0644);
MODULE_PARM_DESC(fi_park_lp_scan,
		 "test builds: park this task in the livepatch scan's actor");
static int fi_lp_scan_parked;
module_param(fi_lp_scan_parked, int, 0444);
MODULE_PARM_DESC(fi_lp_scan_parked, "test builds: holds by fi_park_lp_scan");
#define vfsfast_lp_fi_park() \
	vfsfast_fi_hold_task(fi_park_lp_scan, &fi_lp_scan_parked, 30000, false)
#else
#define vfsfast_lp_fi_park() do { } while (0)
#endif

/*
 * The names in /sys/kernel/livepatch, a batch at a time.  The actor only
 * copies them: since upstream 6.15 (7.2 here; any stable kernel that took
 * the change) kernfs_fop_readdir() holds sysfs's kernfs_rwsem across
 * dir_emit(), so a kernfs lookup from the actor would be a second
 * down_read() of it, which waits behind any writer queued since the first
 * (a livepatch's kworker freeing its sysfs files), a writer that waits for
 * the first: deadlock.  The lookups run once iterate_dir() has returned.
 */
#define VFSFAST_LP_BATCH	16
struct vfsfast_lp_scan {
	struct dir_context ctx;
	int n;
	char names[VFSFAST_LP_BATCH][MODULE_NAME_LEN];
};

static VFSFAST_FILLDIR_RET vfsfast_lp_scan_one(struct dir_context *ctx,
					       const char *name, int len,
					       loff_t pos, u64 ino,
					       unsigned int type)
{
	struct vfsfast_lp_scan *scan = container_of(ctx, struct vfsfast_lp_scan, ctx);

	if (len <= 0 || len >= MODULE_NAME_LEN || name[0] == '.')
		return VFSFAST_FILLDIR_GO_ON;
	vfsfast_lp_fi_park();
	/* Refused, this entry is the next iterate_dir()'s first. */
	if (scan->n == VFSFAST_LP_BATCH)
		return VFSFAST_FILLDIR_STOP;
	memcpy(scan->names[scan->n], name, len);
	scan->names[scan->n++][len] = '\0';
	return VFSFAST_FILLDIR_GO_ON;
}

/*
 * The newest loaded livepatch that patches @func, or NULL.  Those that
 * went live while vfsfast was loaded are known in order; one loaded
 * before it is found in /sys/kernel/livepatch (in the caller's mount
 * namespace: where sysfs is not mounted there, only the first kind).
 */
const char *vfsfast_lp_holder(const char *func)
{
	/* Under vfsfast_mutex, as is the name returned: too big for the stack. */
	static struct vfsfast_lp_scan scan = {
		.ctx.actor = vfsfast_lp_scan_one,
	};
	const char *who = NULL;
	struct file *dir;
	int i;

	lockdep_assert_held(&vfsfast_mutex);
	for (i = vfsfast_nr_livepatches; i-- > 0;)
		if (vfsfast_lp_patches(vfsfast_livepatches[i], func))
			return vfsfast_livepatches[i];
	dir = filp_open("/sys/kernel/livepatch", O_RDONLY | O_DIRECTORY, 0);
	if (IS_ERR(dir))
		return NULL;
	do {
		scan.n = 0;
		if (iterate_dir(dir, &scan.ctx))
			break;
		for (i = 0; i < scan.n && !who; i++)
			if (vfsfast_lp_patches(scan.names[i], func))
				who = scan.names[i];
	} while (!who && scan.n == VFSFAST_LP_BATCH);
	filp_close(dir, NULL);
	return who;
}
