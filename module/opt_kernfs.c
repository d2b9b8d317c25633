// SPDX-License-Identifier: GPL-2.0
/*
 * kernfs: negative dentries and lookups without the global kernfs_mutex,
 * for kernfs as it was before Ian Kent's series (seed 004, 5.15).
 *
 * On those kernels every lookup of a missing sysfs or cgroup name allocates
 * a dentry, takes kernfs_mutex, finds nothing and throws the dentry away,
 * and every path component revalidates its dentry and checks permission
 * under that same mutex.  Upstream keeps a hashed negative dentry stamped
 * with its directory's revision, a counter that every link and rename into
 * the directory bumps.  A module cannot add that counter to kernfs_node,
 * so it keeps its own, hashed by directory, bumped by observing the
 * functions that make names appear: kernfs_add_one() (link, and activation
 * on roots that activate at once), kernfs_activate() on roots that create
 * nodes deactivated (cgroups: a whole subtree appears at once, so every
 * stamp is forgotten) and kernfs_rename_ns() (the new parent).  A name
 * removed needs no bump: a negative dentry stays right.
 *
 * The replacement lookup reads the directory's stamp before the stock
 * lookup takes the mutex: a miss then means the name was linked after the
 * read, so its bump comes after it too, and the stamped dentry is stale as
 * soon as the creating call returns.  Revalidate trusts a negative dentry
 * only if vfsfast stamped it (d_fsdata, unused by this kernfs, is the tag)
 * and the stamp is still current.  Every enable starts a new epoch, since
 * nothing was observed while the hooks were off; after disabling, the
 * stock revalidate rejects every negative dentry, so ours are dropped.
 *
 * Positive dentries: revalidate, permission and getattr take the mutex to
 * check that the node is still active, in the same parent, under the same
 * name, and to copy its attributes into the inode.  The fast paths make
 * the same checks without it, and step aside whenever they cannot be sure:
 * a rename in progress (it frees the old name and may drop the old parent,
 * so the rename observer waits out an RCU grace period before letting it
 * run, and the fast path reads names only inside an RCU read section that
 * saw no rename), a namespaced directory, an attribute change in progress,
 * or an inode the stock refresh would change.  This kernfs frees nodes and
 * names without RCU; the positive dentry's inode holds a reference on its
 * node, and the node on its parent, so nothing else read can go away.
 */
#include <linux/atomic.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/kernfs.h>
#include <linux/namei.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/stat.h>

#include "vfsfast.h"

VFSFAST_STATS(kernfs);

#ifdef VFSFAST_KERNFS

#define VFSFAST_KERNFS_STAMP_BITS	10

/* Per directory (hashed): bumped after a name may have appeared in it. */
static atomic_long_t vfsfast_kernfs_stamps[1 << VFSFAST_KERNFS_STAMP_BITS];
/*
 * Added to every stamp: moved on at each arm and when a subtree appears.
 * It starts at a random value, so that a dentry stamped by an earlier
 * load of the module is not taken for one of ours.
 */
static atomic_long_t vfsfast_kernfs_epoch;
/* d_fsdata of the negative dentries vfsfast stamped. */
static const char vfsfast_kernfs_tag = 'V';

/* Renames in progress, and attribute changes in progress and done. */
static atomic_t vfsfast_kernfs_renaming;
static atomic_t vfsfast_kernfs_attr_busy;
static atomic_t vfsfast_kernfs_attr_gen;

/* As this kernfs's private kernfs-internal.h has them. */
static inline struct kernfs_node *vfsfast_kernfs_dentry_node(struct dentry *d)
{
	if (d_really_is_negative(d))
		return NULL;
	return d_inode(d)->i_private;
}

static inline bool vfsfast_kernfs_active(struct kernfs_node *kn)
{
	return atomic_read(&kn->active) >= 0;
}

static unsigned long vfsfast_kernfs_stamp(struct kernfs_node *dir)
{
	return atomic_long_read(&vfsfast_kernfs_epoch) +
	       atomic_long_read(&vfsfast_kernfs_stamps[hash_ptr(dir,
					VFSFAST_KERNFS_STAMP_BITS)]);
}

static void vfsfast_kernfs_bump(struct kernfs_node *dir)
{
	atomic_long_inc(&vfsfast_kernfs_stamps[hash_ptr(dir,
					VFSFAST_KERNFS_STAMP_BITS)]);
	/* Seen by any lookup that starts after the caller's creation returns. */
	smp_mb__after_atomic();
}

static void vfsfast_kernfs_new_epoch(void)
{
	atomic_long_add(1L << 32, &vfsfast_kernfs_epoch);
	/* As in vfsfast_kernfs_bump(). */
	smp_mb__after_atomic();
}

static void vfsfast_kernfs_arm(struct vfsfast_opt *opt)
{
	vfsfast_kernfs_new_epoch();
}

static int vfsfast_kernfs_setup(struct vfsfast_opt *opt)
{
	atomic_long_set(&vfsfast_kernfs_epoch, get_random_long());
	return 0;
}

/* ---- observers: what makes a name appear ---------------------------- */

static int vfsfast_kernfs_add_one(struct kernfs_node *kn)
{
	struct kernfs_node *parent = kn->parent;
	int ret;

	vfsfast_enter(kernfs);
	vfsfast_fallback(kernfs);
	ret = vfsfast_stock_kernfs_add_one(kn);
	vfsfast_kernfs_bump(parent);
	vfsfast_leave(kernfs);
	return ret;
}

static void vfsfast_kernfs_activate(struct kernfs_node *kn)
{
	struct kernfs_node *dir;
	bool subtree = true;

	vfsfast_enter(kernfs);
	vfsfast_fallback(kernfs);
	vfsfast_stock_kernfs_activate(kn);
	/*
	 * kernfs_add_one() activates its node on roots that do not create
	 * nodes deactivated, and its observer bumps the parent; anything
	 * else may have made a whole subtree visible.
	 */
	rcu_read_lock();
	if (!atomic_read(&vfsfast_kernfs_renaming)) {
		dir = READ_ONCE(kn->parent) ?: kn;
		subtree = dir->dir.root->flags & KERNFS_ROOT_CREATE_DEACTIVATED;
	}
	rcu_read_unlock();
	if (subtree)
		vfsfast_kernfs_new_epoch();
	vfsfast_leave(kernfs);
}

static int vfsfast_kernfs_rename_ns(struct kernfs_node *kn,
				    struct kernfs_node *new_parent,
				    const char *new_name, const void *new_ns)
{
	int ret;

	vfsfast_enter(kernfs);
	vfsfast_fallback(kernfs);
	atomic_inc(&vfsfast_kernfs_renaming);
	/* Fast paths that did not see the count are done with the old name. */
	synchronize_rcu();
	ret = vfsfast_stock_kernfs_rename_ns(kn, new_parent, new_name, new_ns);
	vfsfast_kernfs_bump(new_parent);
	/* Whoever sees no rename in progress sees the new name and parent. */
	smp_mb__before_atomic();
	atomic_dec(&vfsfast_kernfs_renaming);
	vfsfast_leave(kernfs);
	return ret;
}

static void vfsfast_kernfs_attr_begin(void)
{
	atomic_inc(&vfsfast_kernfs_attr_busy);
	/* Published before the stock function changes anything. */
	smp_mb__after_atomic();
}

static void vfsfast_kernfs_attr_end(void)
{
	/* Whatever changed is visible before the change counts as done. */
	smp_mb__before_atomic();
	atomic_inc(&vfsfast_kernfs_attr_gen);
	atomic_dec(&vfsfast_kernfs_attr_busy);
}

static int vfsfast_kernfs_setattr(struct kernfs_node *kn,
				  const struct iattr *iattr)
{
	int ret;

	vfsfast_enter(kernfs);
	vfsfast_fallback(kernfs);
	vfsfast_kernfs_attr_begin();
	ret = vfsfast_stock_kernfs_setattr(kn, iattr);
	vfsfast_kernfs_attr_end();
	vfsfast_leave(kernfs);
	return ret;
}

static int vfsfast_kernfs_iop_setattr(struct dentry *dentry,
				      struct iattr *iattr)
{
	int ret;

	vfsfast_enter(kernfs);
	vfsfast_fallback(kernfs);
	vfsfast_kernfs_attr_begin();
	ret = vfsfast_stock_kernfs_iop_setattr(dentry, iattr);
	vfsfast_kernfs_attr_end();
	vfsfast_leave(kernfs);
	return ret;
}

/* ---- replacements ------------------------------------------------------ */

static struct dentry *vfsfast_kernfs_iop_lookup(struct inode *dir,
						struct dentry *dentry,
						unsigned int flags)
{
	unsigned long stamp;
	struct dentry *ret;

	vfsfast_enter(kernfs);
	vfsfast_fallback(kernfs);
	stamp = vfsfast_kernfs_stamp(dir->i_private);
	/* Read before the stock lookup looks for the name. */
	smp_rmb();
	ret = vfsfast_stock_kernfs_iop_lookup(dir, dentry, flags);
	if (!ret && d_really_is_negative(dentry) && d_unhashed(dentry)) {
		/* What upstream's d_splice_alias(NULL, dentry) does. */
		dentry->d_fsdata = (void *)&vfsfast_kernfs_tag;
		dentry->d_time = stamp;
		d_add(dentry, NULL);
	}
	vfsfast_leave(kernfs);
	return ret;
}

/* Whether a negative dentry is one we stamped and nothing has appeared since. */
static bool vfsfast_kernfs_negative_valid(struct dentry *dentry)
{
	struct kernfs_node *parent;
	bool valid = false;

	if (READ_ONCE(dentry->d_fsdata) != &vfsfast_kernfs_tag)
		return false;
	spin_lock(&dentry->d_lock);
	parent = vfsfast_kernfs_dentry_node(dentry->d_parent);
	if (parent)
		valid = dentry->d_time == vfsfast_kernfs_stamp(parent);
	spin_unlock(&dentry->d_lock);
	return valid;
}

/* The stock checks of a positive dentry, without kernfs_mutex, or false. */
static bool vfsfast_kernfs_positive_valid(struct dentry *dentry)
{
	struct kernfs_node *kn = vfsfast_kernfs_dentry_node(dentry);
	struct kernfs_node *parent;
	bool valid = false;

	rcu_read_lock();
	if (atomic_read(&vfsfast_kernfs_renaming))
		goto out;
	/* Pairs with the barrier before the rename count drops. */
	smp_rmb();
	if (!vfsfast_kernfs_active(kn))
		goto out;
	parent = READ_ONCE(kn->parent);
	if (vfsfast_kernfs_dentry_node(dentry->d_parent) != parent)
		goto out;
	/* Which namespace the dentry sees is kernfs's private business. */
	if (parent && kernfs_ns_enabled(parent))
		goto out;
	valid = !strcmp(dentry->d_name.name, READ_ONCE(kn->name));
out:
	rcu_read_unlock();
	return valid;
}

static int vfsfast_kernfs_dop_revalidate(struct dentry *dentry,
					 unsigned int flags)
{
	int ret;

	vfsfast_enter(kernfs);
	if (!(flags & LOOKUP_RCU) &&
	    (d_really_is_negative(dentry) ?
	     vfsfast_kernfs_negative_valid(dentry) :
	     vfsfast_kernfs_positive_valid(dentry))) {
		vfsfast_leave(kernfs);
		return 1;
	}
	vfsfast_fallback(kernfs);
	ret = vfsfast_stock_kernfs_dop_revalidate(dentry, flags);
	vfsfast_leave(kernfs);
	return ret;
}

/*
 * Whether the stock kernfs_refresh_inode() would leave @inode as it is:
 * no attributes of its own (mode, owner and times then live in the inode),
 * the same mode, and for a directory the link count of its subdirectories;
 * read while no attribute change is in progress.
 */
static bool vfsfast_kernfs_inode_fresh(struct inode *inode)
{
	struct kernfs_node *kn = inode->i_private;
	bool fresh;
	int gen;

	gen = atomic_read(&vfsfast_kernfs_attr_gen);
	/* Pairs with vfsfast_kernfs_attr_begin() and _end(), as a seqcount. */
	smp_rmb();
	if (atomic_read(&vfsfast_kernfs_attr_busy))
		return false;
	fresh = !READ_ONCE(kn->iattr) && inode->i_mode == READ_ONCE(kn->mode) &&
		(kernfs_type(kn) != KERNFS_DIR ||
		 inode->i_nlink == READ_ONCE(kn->dir.subdirs) + 2);
	/* The fields before the re-check, as a seqcount reader. */
	smp_rmb();
	return fresh && !atomic_read(&vfsfast_kernfs_attr_busy) &&
	       atomic_read(&vfsfast_kernfs_attr_gen) == gen;
}

static int vfsfast_kernfs_iop_permission(struct inode *inode, int mask)
{
	int ret;

	vfsfast_enter(kernfs);
	if (!(mask & MAY_NOT_BLOCK) && vfsfast_kernfs_inode_fresh(inode)) {
		ret = generic_permission(inode, mask);
		vfsfast_leave(kernfs);
		return ret;
	}
	vfsfast_fallback(kernfs);
	ret = vfsfast_stock_kernfs_iop_permission(inode, mask);
	vfsfast_leave(kernfs);
	return ret;
}

static int vfsfast_kernfs_iop_getattr(const struct path *path,
				      struct kstat *stat, u32 request_mask,
				      unsigned int query_flags)
{
	struct inode *inode = d_inode(path->dentry);
	int ret;

	vfsfast_enter(kernfs);
	if (vfsfast_kernfs_inode_fresh(inode)) {
		generic_fillattr(inode, stat);
		vfsfast_leave(kernfs);
		return 0;
	}
	vfsfast_fallback(kernfs);
	ret = vfsfast_stock_kernfs_iop_getattr(path, stat, request_mask,
					       query_flags);
	vfsfast_leave(kernfs);
	return ret;
}

/* Attached in this order, detached in reverse: observers first. */
static struct vfsfast_func vfsfast_kernfs_funcs[] = {
	{ VFSFAST_FUNC(kernfs_add_one, 0, vfsfast_kernfs_add_one) },
	{ VFSFAST_FUNC(kernfs_activate, 0, vfsfast_kernfs_activate) },
	{ VFSFAST_FUNC(kernfs_rename_ns, 0, vfsfast_kernfs_rename_ns) },
	{ VFSFAST_FUNC(kernfs_setattr, 0, vfsfast_kernfs_setattr) },
	{ VFSFAST_FUNC(kernfs_iop_setattr, 0, vfsfast_kernfs_iop_setattr) },
	{ VFSFAST_FUNC(kernfs_iop_lookup, 0, vfsfast_kernfs_iop_lookup) },
	{ VFSFAST_FUNC(kernfs_dop_revalidate, 0, vfsfast_kernfs_dop_revalidate) },
	{ VFSFAST_FUNC(kernfs_iop_permission, 0, vfsfast_kernfs_iop_permission) },
	{ VFSFAST_FUNC(kernfs_iop_getattr, 0, vfsfast_kernfs_iop_getattr) },
	{ }
};
#else
static struct vfsfast_func vfsfast_kernfs_funcs[] = { { } };
#define vfsfast_kernfs_setup NULL
#define vfsfast_kernfs_arm NULL
#endif

VFSFAST_OPT_INFO(kernfs, "kernfs_add_one,kernfs_activate,kernfs_rename_ns,kernfs_setattr,kernfs_iop_setattr,kernfs_iop_lookup,kernfs_dop_revalidate,kernfs_iop_permission,kernfs_iop_getattr",
		 VFSFAST_UPSTREAM_KERNFS_INFO);

struct vfsfast_opt vfsfast_opt_kernfs = {
	.name = "kernfs",
	.funcs = vfsfast_kernfs_funcs,
	.upstream = VFSFAST_UPSTREAM_KERNFS,
	.stats = &vfsfast_stats_kernfs,
	.lacks = VFSFAST_NO_KERNFS,
	.setup = vfsfast_kernfs_setup,
	.arm = vfsfast_kernfs_arm,
};
