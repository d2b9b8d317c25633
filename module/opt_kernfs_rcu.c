// SPDX-License-Identifier: GPL-2.0
/*
 * kernfs_rcu: sysfs and cgroupfs path walks that stay in RCU mode, on
 * kernfs with a per-root rwsem and RCU-freed nodes (6.12 and later; not
 * upstream anywhere yet).
 *
 * Stock kernfs answers -ECHILD to every ->d_revalidate() under LOOKUP_RCU
 * and every ->permission() with MAY_NOT_BLOCK, so each sysfs or cgroupfs
 * component drops the walk to ref-walk: a dentry reference (a shared
 * cache line), kernfs_rwsem and kernfs_iattr_rwsem, per component.  The
 * replacements answer the RCU-mode calls without locks where they can
 * prove the stock answer, and return -ECHILD otherwise, which makes the
 * VFS redo the step in ref-walk with the stock code.  In RCU mode they
 * never answer 0 or an error, and never store to the dentry or inode.
 *
 * What is read in RCU mode, field by field, and why it cannot be freed
 * memory (the walk holds rcu_read_lock()):
 *   dentry, its d_parent, d_inode, d_time, d_fsdata: dentries and inodes
 *	are freed after a grace period; the VFS re-checks d_seq after
 *	->d_revalidate(), so a d_move() or a dentry going negative while we
 *	read is caught by the VFS, not by us.
 *   inode->i_private: the node, set once when the inode is made.  The
 *	inode holds a reference on it until eviction, and kernfs_put()
 *	frees a node with call_rcu() on these kernels (kernfs_node.rcu,
 *	probed), so the node outlives the walk.
 *   kn->active, kn->mode, kn->flags, kn->dir.rev, kn->dir.subdirs, kn->iattr:
 *	words of that node, read once each.  kn->iattr is only tested for
 *	NULL: its fields are never read.
 *   the node's parent pointer: compared with the parent dentry's node,
 *	never followed.
 *   kn->name: never read.  On 6.12 a rename frees the old name at once
 *	(kfree_const(), no grace period), so no RCU reader may touch it;
 *	7.2 frees it after a grace period (kfree_rcu_mightsleep()), which
 *	may make a rename wait one while the rename count is raised: RCU
 *	revalidates of positive dentries fall back meanwhile.
 *
 * Negative dentries: valid iff the parent directory's revision equals the
 * dentry's d_time, the stock test, made without kernfs_rwsem.  dir.rev is
 * one word, bumped under that lock by each link and unlink; a single read
 * orders like a locked reader before or after the writer.
 *
 * Positive dentries: the stock test compares the node's name with the
 * dentry's, which cannot be read here.  Instead, when the stock revalidate
 * (ref-walk) finds a dentry valid, the dentry is stamped in d_fsdata
 * (unused by kernfs) with the node's rename generation, read before that
 * stock check; a rename observer raises a count before the stock
 * kernfs_rename_ns() and bumps the node's generation after it.  In RCU
 * mode a positive dentry is valid iff, with no rename in progress before
 * and after the reads (a seqcount-like read), its stamp is the node's
 * current generation (no rename since the stock check saw the name
 * match), the node is active, the node's parent is the parent dentry's
 * node, and the parent is not a namespaced directory (those go to the
 * stock code, which knows the superblock's namespace).  A kernfs dentry's
 * name and parent change only by d_move() after its node was renamed,
 * which moves the generation on.
 *
 * Permission: stock answers -ECHILD in RCU mode (MAY_NOT_BLOCK);
 * otherwise it refreshes the inode from the node (kernfs_refresh_inode())
 * under kernfs_iattr_rwsem, then calls generic_permission().  In either
 * mode the replacement calls generic_permission() (which honours
 * MAY_NOT_BLOCK itself) on the inode as it is when the refresh would
 * change nothing the check reads: the node has no iattr (so owner and
 * times live in the inode), the inode's mode is the node's and, for a
 * directory, its link count is the one the refresh sets; read inside a
 * window that no attribute change overlaps (observers of kernfs_setattr()
 * and kernfs_iop_setattr(), the only writers of a published node's mode,
 * raise a count before and bump a generation after).  kn->iattr has
 * other writers, unobserved: listxattr and the xattr setters allocate it
 * (GLOBAL_ROOT owner, the same mode).  It only ever goes from NULL to
 * set, and is read once: a check that read NULL is the stock answer of
 * a refresh made just before that allocation, whose owner a stock
 * caller reading NULL at the same instant sees too.  dir.subdirs is read
 * once and compared with i_nlink; so is the i_nlink that 7.2's removal
 * clears (kernfs_clear_inode_nlink(), unobserved): 0 is then what stock
 * reports, and a directory whose count differs goes to the stock code.
 * getattr, in ref-walk, does the same for generic_fillattr().  Anything
 * else goes to the stock code, and so does a permission check that an
 * attribute change overlapped, even in RCU mode (where stock answers
 * -ECHILD).  A check whose answer is
 * thrown away may have been audited by a security module's capability
 * hook; the stock retry audits it again (only when a chmod races).
 *
 * Enable order (attach.c, quiesce.c): the observers go live first; then the
 * engine waits until no call that entered an observed function before its
 * observer was attached is left, since such a call changes names or
 * attributes and bumps nothing; then ->arm() starts a new epoch, which
 * every stamp includes, so that no stamp made while no observer ran is
 * trusted; and only then are the replacements routed in.  No observer
 * sleeps or waits for a grace period: kernfs_rename_ns() runs under RTNL
 * (a netdev moving between namespaces) and cgroup locks.
 */
#include <linux/atomic.h>
#include <linux/dcache.h>
#include <linux/fs.h>
#include <linux/hash.h>
#include <linux/kernfs.h>
#include <linux/namei.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/stat.h>

#include "vfsfast.h"

/* The type of an inode or dentry operation. */
#define VFSFAST_KRCU_IOP(op)	(*((const struct inode_operations *)0)->op)
#define VFSFAST_KRCU_DOP(op)	(*((const struct dentry_operations *)0)->op)

/*
 * Observers first: they attach before the replacements that trust them
 * and detach after them.
 */
#define VFSFAST_KERNFS_RCU_TARGETS(T)						\
	(T(kernfs_rename_ns, kernfs_rename_ns, 0, observe, vfsfast_krcu_rename_ns) \
	 T(kernfs_setattr, kernfs_setattr, 0, observe, vfsfast_krcu_setattr)	\
	 T(kernfs_iop_setattr, VFSFAST_KRCU_IOP(setattr), 0, observe,		\
	   vfsfast_krcu_iop_setattr)						\
	 T(kernfs_dop_revalidate, VFSFAST_KRCU_DOP(d_revalidate), 0, replace,	\
	   vfsfast_krcu_dop_revalidate)						\
	 T(kernfs_iop_permission, VFSFAST_KRCU_IOP(permission), 0, replace,	\
	   vfsfast_krcu_iop_permission)						\
	 T(kernfs_iop_getattr, VFSFAST_KRCU_IOP(getattr), 0, replace,		\
	   vfsfast_krcu_iop_getattr))

VFSFAST_STATS(kernfs_rcu);

#ifdef VFSFAST_KERNFS_RCU
VFSFAST_DECLARE_TARGETS(VFSFAST_KERNFS_RCU_TARGETS);

#define VFSFAST_KRCU_GEN_BITS	10

/* Per node (hashed): bumped after each rename of the node. */
static atomic_long_t vfsfast_krcu_gens[1 << VFSFAST_KRCU_GEN_BITS];
/*
 * Part of every stamp: moved on at each arm.  It starts at a random
 * value, so that a dentry stamped by an earlier load of the module is not
 * taken for one of ours.
 */
static atomic_long_t vfsfast_krcu_epoch;
/* Renames and attribute changes in progress; attribute changes done. */
static atomic_t vfsfast_krcu_renaming;
static atomic_t vfsfast_krcu_attr_busy;
static atomic_t vfsfast_krcu_attr_gen;

/*
 * The stamp of a dentry of @kn: odd, so that it is never a pointer or
 * NULL, which is all kernfs ever leaves in d_fsdata.  Only compared; @kn
 * is not dereferenced.
 */
static unsigned long vfsfast_krcu_stamp(struct kernfs_node *kn)
{
	return ((atomic_long_read(&vfsfast_krcu_epoch) +
		 atomic_long_read(&vfsfast_krcu_gens[hash_ptr(kn,
					VFSFAST_KRCU_GEN_BITS)])) << 1) | 1;
}

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only: where the next arm sets the attribute generation (once;
 * 0: leave it), so that a test crosses its sign change with a few chmods
 * instead of 2^31.  A reader in flight across that jump could meet its
 * old generation again: the tests arm with no reader running.
 */
static int krcu_attr_gen_start;
module_param(krcu_attr_gen_start, int, 0644);
MODULE_PARM_DESC(krcu_attr_gen_start,
		 "test builds: kernfs_rcu's attribute generation at the next arm");

static void vfsfast_krcu_fi_arm(void)
{
	if (krcu_attr_gen_start)
		atomic_set(&vfsfast_krcu_attr_gen, krcu_attr_gen_start);
	krcu_attr_gen_start = 0;
}
#else
static void vfsfast_krcu_fi_arm(void)
{
}
#endif

static void vfsfast_krcu_arm(struct vfsfast_opt *opt)
{
	vfsfast_krcu_fi_arm();
	atomic_long_inc(&vfsfast_krcu_epoch);
	/* Before any replacement is routed in. */
	smp_mb__after_atomic();
}

static int vfsfast_krcu_setup(struct vfsfast_opt *opt)
{
	atomic_long_set(&vfsfast_krcu_epoch, get_random_long());
	return 0;
}

static void vfsfast_krcu_begin(atomic_t *busy)
{
	atomic_inc(busy);
	/* Published before the stock function changes anything. */
	smp_mb__after_atomic();
}

static void vfsfast_krcu_end(atomic_t *busy)
{
	/* The change and its bump are visible before the count drops. */
	smp_mb__before_atomic();
	atomic_dec(busy);
}

/* ---- observers ---------------------------------------------------------- */

static int vfsfast_krcu_rename_ns(struct kernfs_node *kn,
				  struct kernfs_node *new_parent,
				  const char *new_name,
				  typeof(((struct kernfs_node *)0)->ns) new_ns)
{
	int ret;

	vfsfast_enter(kernfs_rcu);
	vfsfast_fallback(kernfs_rcu);
	vfsfast_krcu_begin(&vfsfast_krcu_renaming);
	ret = vfsfast_stock_kernfs_rename_ns(kn, new_parent, new_name, new_ns);
	atomic_long_inc(&vfsfast_krcu_gens[hash_ptr(kn, VFSFAST_KRCU_GEN_BITS)]);
	vfsfast_krcu_end(&vfsfast_krcu_renaming);
	vfsfast_leave(kernfs_rcu);
	return ret;
}

static void vfsfast_krcu_attr_end(void)
{
	/* The change is visible before it counts as done. */
	smp_mb__before_atomic();
	atomic_inc(&vfsfast_krcu_attr_gen);
	atomic_dec(&vfsfast_krcu_attr_busy);
}

static int vfsfast_krcu_setattr(struct kernfs_node *kn,
				const struct iattr *iattr)
{
	int ret;

	vfsfast_enter(kernfs_rcu);
	vfsfast_fallback(kernfs_rcu);
	vfsfast_krcu_begin(&vfsfast_krcu_attr_busy);
	ret = vfsfast_stock_kernfs_setattr(kn, iattr);
	vfsfast_krcu_attr_end();
	vfsfast_leave(kernfs_rcu);
	return ret;
}

static int vfsfast_krcu_iop_setattr(struct mnt_idmap *idmap,
				    struct dentry *dentry, struct iattr *iattr)
{
	int ret;

	vfsfast_enter(kernfs_rcu);
	vfsfast_fallback(kernfs_rcu);
	vfsfast_krcu_begin(&vfsfast_krcu_attr_busy);
	ret = vfsfast_stock_kernfs_iop_setattr(idmap, dentry, iattr);
	vfsfast_krcu_attr_end();
	vfsfast_leave(kernfs_rcu);
	return ret;
}

/* ---- replacements ------------------------------------------------------- */

/* The node of the inode of the dentry @d (RCU mode), or NULL. */
static struct kernfs_node *vfsfast_krcu_node(struct dentry *d)
{
	struct inode *inode = READ_ONCE(d->d_inode);

	return inode ? inode->i_private : NULL;
}

/* kernfs_dir_changed() of the parent, without kernfs_rwsem. */
static bool vfsfast_krcu_negative_valid(struct dentry *dentry)
{
	struct kernfs_node *parent;

	parent = vfsfast_krcu_node(READ_ONCE(dentry->d_parent));
	return parent &&
	       READ_ONCE(parent->dir.rev) == READ_ONCE(dentry->d_time);
}

/* The stock checks of a positive dentry, from its stamp; see the header. */
static bool vfsfast_krcu_positive_valid(struct dentry *dentry,
					struct kernfs_node *kn)
{
	unsigned long stamp = (unsigned long)READ_ONCE(dentry->d_fsdata);
	struct kernfs_node *parent;

	if (!(stamp & 1) || atomic_read(&vfsfast_krcu_renaming))
		return false;
	/* Pairs with vfsfast_krcu_end(): no count, so the bump is seen. */
	smp_rmb();
	if (vfsfast_krcu_stamp(kn) != stamp || atomic_read(&kn->active) < 0)
		return false;
	parent = vfsfast_krcu_node(READ_ONCE(dentry->d_parent));
	if (!parent || vfsfast_kernfs_parent(kn) != parent ||
	    (READ_ONCE(parent->flags) & KERNFS_NS))
		return false;
	/* The node's fields before the re-check, as a seqcount reader. */
	smp_rmb();
	return !atomic_read(&vfsfast_krcu_renaming) &&
	       vfsfast_krcu_stamp(kn) == stamp;
}

static int vfsfast_krcu_dop_revalidate
	VFSFAST_DIR_NAME_OR((struct inode *dir, const struct qstr *name,
			     struct dentry *dentry, unsigned int flags),
			    (struct dentry *dentry, unsigned int flags))
{
	struct kernfs_node *kn;
	unsigned long stamp;
	int ret;

	if (flags & LOOKUP_RCU) {
		kn = vfsfast_krcu_node(dentry);
		if (kn ? vfsfast_krcu_positive_valid(dentry, kn) :
			 vfsfast_krcu_negative_valid(dentry)) {
			vfsfast_hit(kernfs_rcu);
			return 1;
		}
		vfsfast_enter(kernfs_rcu);
		vfsfast_fallback(kernfs_rcu);
		vfsfast_leave(kernfs_rcu);
		return -ECHILD;
	}
	vfsfast_enter(kernfs_rcu);
	vfsfast_fallback(kernfs_rcu);
	/* Ref-walk: the dentry is pinned and so is its inode, if any. */
	kn = d_really_is_negative(dentry) ? NULL : d_inode(dentry)->i_private;
	stamp = kn ? vfsfast_krcu_stamp(kn) : 0;
	/* The generation before the stock checks read the name. */
	smp_rmb();
	ret = vfsfast_stock_kernfs_dop_revalidate
		VFSFAST_DIR_NAME_OR((dir, name, dentry, flags), (dentry, flags));
	if (ret > 0 && kn)
		WRITE_ONCE(dentry->d_fsdata, (void *)stamp);
	vfsfast_leave(kernfs_rcu);
	return ret;
}

/*
 * Whether kernfs_refresh_inode() would leave what generic_permission()
 * and generic_fillattr() read of @inode as it is: see the header.
 */
static bool vfsfast_krcu_inode_fresh(struct inode *inode)
{
	struct kernfs_node *kn = inode->i_private;

	return !READ_ONCE(kn->iattr) && inode->i_mode == READ_ONCE(kn->mode) &&
	       (kernfs_type(kn) != KERNFS_DIR ||
		inode->i_nlink == READ_ONCE(kn->dir.subdirs) + 2);
}

/*
 * The window's start: false while a change is in progress, else the
 * generation in *@gen.  Any value of it is a generation, negative ones
 * too: it wraps after 2^32 changes, and only equality is ever asked.
 */
static bool vfsfast_krcu_attr_read_begin(int *gen)
{
	*gen = atomic_read(&vfsfast_krcu_attr_gen);
	/* Pairs with vfsfast_krcu_begin() and _attr_end(), as a seqcount. */
	smp_rmb();
	return !atomic_read(&vfsfast_krcu_attr_busy);
}

/* Whether no attribute change overlapped the window begun with @gen. */
static bool vfsfast_krcu_attr_read_ok(int gen)
{
	/* The fields before the re-check, as a seqcount reader. */
	smp_rmb();
	return !atomic_read(&vfsfast_krcu_attr_busy) &&
	       atomic_read(&vfsfast_krcu_attr_gen) == gen;
}

static int vfsfast_krcu_iop_permission(struct mnt_idmap *idmap,
				       struct inode *inode, int mask)
{
	int gen, ret;

	vfsfast_enter(kernfs_rcu);
	if (vfsfast_krcu_attr_read_begin(&gen) &&
	    vfsfast_krcu_inode_fresh(inode)) {
		/* As stock: kernfs is never idmapped. */
		ret = generic_permission(&nop_mnt_idmap, inode, mask);
		if (vfsfast_krcu_attr_read_ok(gen)) {
			vfsfast_leave(kernfs_rcu);
			return ret;
		}
	}
	vfsfast_fallback(kernfs_rcu);
	/* Stock answers -ECHILD in RCU mode, as we do here. */
	ret = vfsfast_stock_kernfs_iop_permission(idmap, inode, mask);
	vfsfast_leave(kernfs_rcu);
	return ret;
}

static int vfsfast_krcu_iop_getattr(struct mnt_idmap *idmap,
				    const struct path *path, struct kstat *stat,
				    u32 request_mask, unsigned int query_flags)
{
	struct inode *inode = d_inode(path->dentry);
	int gen, ret;

	vfsfast_enter(kernfs_rcu);
	if (vfsfast_krcu_attr_read_begin(&gen) &&
	    vfsfast_krcu_inode_fresh(inode)) {
		generic_fillattr(&nop_mnt_idmap, request_mask, inode, stat);
		if (vfsfast_krcu_attr_read_ok(gen)) {
			vfsfast_leave(kernfs_rcu);
			return 0;
		}
	}
	vfsfast_fallback(kernfs_rcu);
	ret = vfsfast_stock_kernfs_iop_getattr(idmap, path, stat, request_mask,
					       query_flags);
	vfsfast_leave(kernfs_rcu);
	return ret;
}

/*
 * kernfs's own operations: they take kernfs_rwsem and the iattr rwsem,
 * which no holder keeps across anything that waits on user space (a
 * node's removal drops the rwsem before it drains active references).
 */
VFSFAST_BOUNDED_CALL(vfsfast_krcu_rename_ns, vfsfast_stock_kernfs_rename_ns);
VFSFAST_BOUNDED_CALL(vfsfast_krcu_setattr, vfsfast_stock_kernfs_setattr);
VFSFAST_BOUNDED_CALL(vfsfast_krcu_iop_setattr, vfsfast_stock_kernfs_iop_setattr);
VFSFAST_BOUNDED_CALL(vfsfast_krcu_positive_valid, vfsfast_stock_kernfs_dop_revalidate);
VFSFAST_BOUNDED_CALL(vfsfast_krcu_dop_revalidate, vfsfast_stock_kernfs_dop_revalidate);
VFSFAST_BOUNDED_CALL(vfsfast_krcu_iop_permission, vfsfast_stock_kernfs_iop_permission);
VFSFAST_BOUNDED_CALL(vfsfast_krcu_iop_getattr, vfsfast_stock_kernfs_iop_getattr);

VFSFAST_FUNCS(kernfs_rcu, VFSFAST_KERNFS_RCU_TARGETS);
#else
VFSFAST_NO_FUNCS(kernfs_rcu);
#define vfsfast_krcu_setup NULL
#define vfsfast_krcu_arm NULL
#endif

VFSFAST_OPTIMIZATION(kernfs_rcu, VFSFAST_KERNFS_RCU_TARGETS,
		     VFSFAST_UPSTREAM_KERNFS_RCU_INFO, auto,
	.upstream = VFSFAST_UPSTREAM_KERNFS_RCU,
	.lacks = VFSFAST_NO_KERNFS_RCU,
	.setup = vfsfast_krcu_setup,
	.arm = vfsfast_krcu_arm,
);
