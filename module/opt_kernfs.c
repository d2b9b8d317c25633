// SPDX-License-Identifier: GPL-2.0
/*
 * kernfs: negative dentries and lookups without the global kernfs_mutex,
 * for kernfs as it was before Ian Kent's series (5.15).
 *
 * On those kernels every lookup of a missing sysfs or cgroup name allocates
 * a dentry, takes kernfs_mutex, finds nothing and throws the dentry away,
 * and every path component revalidates its dentry and checks permission
 * under that same mutex.  Upstream keeps a hashed negative dentry stamped
 * with its directory's revision, a counter that every link and rename into
 * the directory bumps.  A module cannot add that counter to kernfs_node,
 * so it keeps its own, hashed by directory, bumped by observing what makes
 * names appear.  On this kernfs a node is visible (lookup and readdir
 * list it) once it is linked and active, and only two things make it so:
 * kernfs_activate() (called by kernfs_add_one() on roots that activate at
 * once, and by cgroups for whole subtrees) and kernfs_rename_ns().  A name
 * removed needs no bump: a negative dentry stays right.
 *
 * Negative dentries.  The replacement lookup reads the directory's stamp
 * before the stock lookup takes the mutex: a miss then means the name was
 * made visible after the read, so its bump comes after it too.  Revalidate
 * trusts a negative dentry only if vfsfast stamped it (d_fsdata, unused by
 * this kernfs, is the tag), the stamp is still current, and no creation or
 * rename is in progress anywhere: the observers raise a count before the
 * stock call and bump after it, so the window between a node becoming
 * visible and its bump is covered (a readdir that lists the name is never
 * followed by a lookup that misses it).  The activate observer starts a
 * new generation of every negative stamp instead of bumping one
 * directory: it reads nothing of the node, whose parent a concurrent
 * rename may free.  The add_one observer bumps the parent as well, read
 * before the stock call, while the node is not yet linked and cannot be
 * moved; it covers a kernel whose kernfs_add_one() activates inline.
 *
 * Positive dentries.  Revalidate, permission and getattr take the mutex to
 * check that the node is still active, in the same parent, under the same
 * name, and to copy its attributes into the inode.  The fast paths make
 * the same checks without it and never read the node's name, which a
 * rename frees at once on this kernel (kfree_const(), no RCU): instead a
 * dentry the stock revalidate found valid is stamped with its node's
 * rename generation (hashed by node, bumped after each rename, read before
 * the stock check), and later trusted only while that generation and the
 * node's parent are unchanged, the node is active and no rename is in
 * progress (a seqcount-like read: the count before and after).  The parent
 * node is read through the parent dentry's inode, which holds a reference
 * on it, never through kn->parent.  Namespaced directories, attribute
 * changes in progress and inodes the stock refresh would change go to the
 * stock code.
 *
 * Enable order (attach.c, quiesce.c): the observers go live first; then the
 * engine waits until no call that entered an observed function before its
 * observer was attached is left, since such a call changes state and
 * bumps nothing; then ->arm() starts a new epoch, which every stamp
 * includes, so that nothing stamped while no observer ran is trusted; and
 * only then are the replacements routed in.
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

/* The type of an inode or dentry operation, for the ones not declared. */
#define VFSFAST_IOP(op)	(*((const struct inode_operations *)0)->op)
#define VFSFAST_DOP(op)	(*((const struct dentry_operations *)0)->op)

/*
 * Observers first: they attach before the replacements that trust them
 * and detach after them.
 */
#define VFSFAST_KERNFS_TARGETS(T)						\
	(T(kernfs_add_one, kernfs_add_one, 0, observe, vfsfast_kernfs_add_one)	\
	 T(kernfs_activate, kernfs_activate, 0, observe, vfsfast_kernfs_activate) \
	 T(kernfs_rename_ns, kernfs_rename_ns, 0, observe, vfsfast_kernfs_rename_ns) \
	 T(kernfs_setattr, kernfs_setattr, 0, observe, vfsfast_kernfs_setattr)	\
	 T(kernfs_iop_setattr, VFSFAST_IOP(setattr), 0, observe, vfsfast_kernfs_iop_setattr) \
	 T(kernfs_iop_lookup, VFSFAST_IOP(lookup), 0, replace, vfsfast_kernfs_iop_lookup) \
	 T(kernfs_dop_revalidate, VFSFAST_DOP(d_revalidate), 0, replace,	\
	   vfsfast_kernfs_dop_revalidate)					\
	 T(kernfs_iop_permission, VFSFAST_IOP(permission), 0, replace,		\
	   vfsfast_kernfs_iop_permission)					\
	 T(kernfs_iop_getattr, VFSFAST_IOP(getattr), 0, replace, vfsfast_kernfs_iop_getattr))

VFSFAST_STATS(kernfs);

#ifdef VFSFAST_KERNFS
VFSFAST_DECLARE_TARGETS(VFSFAST_KERNFS_TARGETS);

#define VFSFAST_KERNFS_STAMP_BITS	10

/* Per directory (hashed): bumped after a name may have appeared in it. */
static atomic_long_t vfsfast_kernfs_stamps[1 << VFSFAST_KERNFS_STAMP_BITS];
/* Per node (hashed): bumped after a rename of the node. */
static atomic_long_t vfsfast_kernfs_gens[1 << VFSFAST_KERNFS_STAMP_BITS];
/*
 * Added to every stamp: moved on at each arm.  It starts at a random
 * value, so that a dentry stamped by an earlier load of the module is not
 * taken for one of ours.
 */
static atomic_long_t vfsfast_kernfs_epoch;
/* Added to every negative stamp: moved on by each activation. */
static atomic_long_t vfsfast_kernfs_activations;
/* d_fsdata of the negative and positive dentries vfsfast stamped. */
static const char vfsfast_kernfs_neg = 'N';
static const char vfsfast_kernfs_pos = 'P';

/*
 * Creations (add_one, activate) and renames in progress, and attribute
 * changes in progress and done.
 */
static atomic_t vfsfast_kernfs_creating;
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
	       atomic_long_read(&vfsfast_kernfs_activations) +
	       atomic_long_read(&vfsfast_kernfs_stamps[hash_ptr(dir,
					VFSFAST_KERNFS_STAMP_BITS)]);
}

/* Only compared, never dereferenced: @kn may be gone. */
static unsigned long vfsfast_kernfs_gen(struct kernfs_node *kn)
{
	return atomic_long_read(&vfsfast_kernfs_epoch) +
	       atomic_long_read(&vfsfast_kernfs_gens[hash_ptr(kn,
					VFSFAST_KERNFS_STAMP_BITS)]);
}

/*
 * A change observed: @busy is raised before the stock call, so that
 * nothing is trusted while it runs, and dropped after the bump.
 */
static void vfsfast_kernfs_begin(atomic_t *busy)
{
	atomic_inc(busy);
	/* Published before the stock function changes anything. */
	smp_mb__after_atomic();
}

static void vfsfast_kernfs_end(atomic_t *busy)
{
	/* The change and its bump are visible before the count drops. */
	smp_mb__before_atomic();
	atomic_dec(busy);
}

static void vfsfast_kernfs_bump(atomic_long_t *table, void *key)
{
	atomic_long_inc(&table[hash_ptr(key, VFSFAST_KERNFS_STAMP_BITS)]);
}

static void vfsfast_kernfs_arm(struct vfsfast_opt *opt)
{
	atomic_long_add(1L << 32, &vfsfast_kernfs_epoch);
	/* Before any replacement is routed in. */
	smp_mb__after_atomic();
}

static int vfsfast_kernfs_setup(struct vfsfast_opt *opt)
{
	atomic_long_set(&vfsfast_kernfs_epoch, get_random_long());
	return 0;
}

/* ---- observers: what makes a name appear or change ------------------- */

static int vfsfast_kernfs_add_one(struct kernfs_node *kn)
{
	/* Not linked yet, so not movable; the caller's reference pins it. */
	struct kernfs_node *parent = kn->parent;
	int ret;

	vfsfast_enter(kernfs);
	vfsfast_fallback(kernfs);
	vfsfast_kernfs_begin(&vfsfast_kernfs_creating);
	ret = vfsfast_stock_kernfs_add_one(kn);
	vfsfast_kernfs_bump(vfsfast_kernfs_stamps, parent);
	vfsfast_kernfs_end(&vfsfast_kernfs_creating);
	vfsfast_leave(kernfs);
	return ret;
}

static void vfsfast_kernfs_activate(struct kernfs_node *kn)
{
	vfsfast_enter(kernfs);
	vfsfast_fallback(kernfs);
	vfsfast_kernfs_begin(&vfsfast_kernfs_creating);
	vfsfast_stock_kernfs_activate(kn);
	/* A whole subtree may have appeared: every negative stamp moves. */
	atomic_long_inc(&vfsfast_kernfs_activations);
	vfsfast_kernfs_end(&vfsfast_kernfs_creating);
	vfsfast_leave(kernfs);
}

/*
 * No grace period here: this runs under RTNL when a netdev changes
 * namespace, and under cgroup_mutex for a cgroup rename.  The fast paths
 * never read the name a rename frees.
 */
static int vfsfast_kernfs_rename_ns(struct kernfs_node *kn,
				    struct kernfs_node *new_parent,
				    const char *new_name, const void *new_ns)
{
	int ret;

	vfsfast_enter(kernfs);
	vfsfast_fallback(kernfs);
	vfsfast_kernfs_begin(&vfsfast_kernfs_renaming);
	ret = vfsfast_stock_kernfs_rename_ns(kn, new_parent, new_name, new_ns);
	vfsfast_kernfs_bump(vfsfast_kernfs_stamps, new_parent);
	vfsfast_kernfs_bump(vfsfast_kernfs_gens, kn);
	vfsfast_kernfs_end(&vfsfast_kernfs_renaming);
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
		dentry->d_fsdata = (void *)&vfsfast_kernfs_neg;
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

	if (READ_ONCE(dentry->d_fsdata) != &vfsfast_kernfs_neg)
		return false;
	if (atomic_read(&vfsfast_kernfs_creating) ||
	    atomic_read(&vfsfast_kernfs_renaming))
		return false;
	/* Pairs with vfsfast_kernfs_end(): no count, so the bump is seen. */
	smp_rmb();
	spin_lock(&dentry->d_lock);
	parent = vfsfast_kernfs_dentry_node(dentry->d_parent);
	if (parent)
		valid = dentry->d_time == vfsfast_kernfs_stamp(parent);
	spin_unlock(&dentry->d_lock);
	return valid;
}

/*
 * The stock checks of a positive dentry, without kernfs_mutex, or false.
 * Reads the rename count before and after, like a seqcount reader.
 */
static bool vfsfast_kernfs_positive_valid(struct dentry *dentry)
{
	struct kernfs_node *kn = vfsfast_kernfs_dentry_node(dentry);
	struct kernfs_node *parent;
	unsigned long stamp;

	if (READ_ONCE(dentry->d_fsdata) != &vfsfast_kernfs_pos)
		return false;
	/* d_time is written before the tag. */
	smp_rmb();
	stamp = READ_ONCE(dentry->d_time);
	if (atomic_read(&vfsfast_kernfs_renaming))
		return false;
	/* Pairs with vfsfast_kernfs_end(). */
	smp_rmb();
	if (vfsfast_kernfs_gen(kn) != stamp || !vfsfast_kernfs_active(kn))
		return false;
	/*
	 * The parent dentry's inode holds a reference on its node, so it
	 * can be read even while a rename moves @kn away from it.
	 */
	parent = vfsfast_kernfs_dentry_node(READ_ONCE(dentry->d_parent));
	if (READ_ONCE(kn->parent) != parent)
		return false;
	/* Which namespace the dentry sees is kernfs's private business. */
	if (parent && kernfs_ns_enabled(parent))
		return false;
	/* The node's fields before the re-check, as a seqcount reader. */
	smp_rmb();
	return !atomic_read(&vfsfast_kernfs_renaming) &&
	       vfsfast_kernfs_gen(kn) == stamp;
}

/*
 * A positive dentry the stock checks found valid: its node's rename
 * generation, read before those checks, is its stamp from now on.
 */
static void vfsfast_kernfs_stamp_positive(struct dentry *dentry,
					  unsigned long stamp)
{
	WRITE_ONCE(dentry->d_time, stamp);
	/* Pairs with the read in vfsfast_kernfs_positive_valid(). */
	smp_wmb();
	WRITE_ONCE(dentry->d_fsdata, (void *)&vfsfast_kernfs_pos);
}

static int vfsfast_kernfs_dop_revalidate(struct dentry *dentry,
					 unsigned int flags)
{
	unsigned long stamp = 0;
	bool stamp_it = false;
	int ret;

	vfsfast_enter(kernfs);
	if (flags & LOOKUP_RCU)
		goto stock;
	if (d_really_is_negative(dentry)) {
		if (vfsfast_kernfs_negative_valid(dentry))
			goto valid;
		goto stock;
	}
	if (vfsfast_kernfs_positive_valid(dentry))
		goto valid;
	stamp = vfsfast_kernfs_gen(vfsfast_kernfs_dentry_node(dentry));
	stamp_it = true;
	/* Read before the stock checks. */
	smp_rmb();
stock:
	vfsfast_fallback(kernfs);
	ret = vfsfast_stock_kernfs_dop_revalidate(dentry, flags);
	if (ret > 0 && stamp_it)
		vfsfast_kernfs_stamp_positive(dentry, stamp);
	vfsfast_leave(kernfs);
	return ret;
valid:
	vfsfast_leave(kernfs);
	return 1;
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

/*
 * kernfs's own operations: they take kernfs_mutex and iattr locks, which
 * no holder keeps across anything that waits on user space (a node's
 * removal drops the mutex before it drains active references).
 */
VFSFAST_BOUNDED_CALL(vfsfast_kernfs_add_one, vfsfast_stock_kernfs_add_one);
VFSFAST_BOUNDED_CALL(vfsfast_kernfs_activate, vfsfast_stock_kernfs_activate);
VFSFAST_BOUNDED_CALL(vfsfast_kernfs_rename_ns, vfsfast_stock_kernfs_rename_ns);
VFSFAST_BOUNDED_CALL(vfsfast_kernfs_setattr, vfsfast_stock_kernfs_setattr);
VFSFAST_BOUNDED_CALL(vfsfast_kernfs_iop_setattr, vfsfast_stock_kernfs_iop_setattr);
VFSFAST_BOUNDED_CALL(vfsfast_kernfs_iop_lookup, vfsfast_stock_kernfs_iop_lookup);
VFSFAST_BOUNDED_CALL(vfsfast_kernfs_dop_revalidate, vfsfast_stock_kernfs_dop_revalidate);
VFSFAST_BOUNDED_CALL(vfsfast_kernfs_iop_permission, vfsfast_stock_kernfs_iop_permission);
VFSFAST_BOUNDED_CALL(vfsfast_kernfs_iop_getattr, vfsfast_stock_kernfs_iop_getattr);

VFSFAST_FUNCS(kernfs, VFSFAST_KERNFS_TARGETS);
#else
VFSFAST_NO_FUNCS(kernfs);
#define vfsfast_kernfs_setup NULL
#define vfsfast_kernfs_arm NULL
#endif

VFSFAST_OPTIMIZATION(kernfs, VFSFAST_KERNFS_TARGETS,
		     VFSFAST_UPSTREAM_KERNFS_INFO, auto,
	.upstream = VFSFAST_UPSTREAM_KERNFS,
	.lacks = VFSFAST_NO_KERNFS,
	.setup = vfsfast_kernfs_setup,
	.arm = vfsfast_kernfs_arm,
);
