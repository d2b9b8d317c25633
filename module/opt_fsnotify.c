// SPDX-License-Identifier: GPL-2.0
/*
 * fsnotify and fsnotify_parent: return at once when nothing can see the
 * event: 5.8's fsnotify fast path when nobody watches (Mel Gorman), and
 * the inline superblock checks that followed it in 5.15.
 *
 * Every inode, superblock and mount mark counts on the superblock it is
 * on, so a superblock with a zero count has no mark that could receive
 * the event: the stock functions would find none and return 0 after
 * working out masks, parents and names.  Kernels whose <linux/fsnotify.h>
 * helpers already test the count inline seldom call these functions for
 * an unwatched superblock, so there the hooks cost a redirect and save
 * next to nothing; status says so and enable=auto leaves them off.  On
 * kernels without those checks (pre-5.8 code, or the lab's legacy kernel)
 * every write, read, open and close of every file makes the calls.
 *
 * Anything the fast path cannot decide in a few loads goes to the stock
 * function: a watched superblock, data on another superblock than the
 * inode it is reported on, data that names no superblock (errors, mount
 * namespace events), a parent that asked for its children's events, and
 * any call while the kernel's fsnotify tracepoint is on, since the stock
 * function would have reported it there.
 */
#include <linux/fs.h>
#include <linux/fsnotify.h>
#include <linux/fsnotify_backend.h>
#include <linux/jump_label.h>
#include <linux/tracepoint.h>

#include "vfsfast.h"

#define VFSFAST_FSNOTIFY_TARGETS(T)					\
	(T(fsnotify, fsnotify, fsnotify, replace, vfsfast_fsnotify))
#define VFSFAST_FSNOTIFY_PARENT_TARGETS(T)					\
	(T(__fsnotify_parent, __fsnotify_parent, __fsnotify_parent, replace,	\
	   vfsfast___fsnotify_parent))

VFSFAST_STATS(fsnotify);
VFSFAST_STATS(fsnotify_parent);

/*
 * The kernel's fsnotify tracepoint (7.0+), or NULL.  The key says whether
 * there is one, so that kernels without it test nothing per call.
 */
static struct tracepoint *vfsfast_fsnotify_tp;
static DEFINE_STATIC_KEY_FALSE(vfsfast_fsnotify_has_tp);

static void vfsfast_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "fsnotify"))
		vfsfast_fsnotify_tp = tp;
}

static int vfsfast_fsnotify_setup(struct vfsfast_opt *opt)
{
	for_each_kernel_tracepoint(vfsfast_find_tp, NULL);
	if (vfsfast_fsnotify_tp)
		static_branch_enable(&vfsfast_fsnotify_has_tp);
	return 0;
}

static __always_inline bool vfsfast_fsnotify_traced(void)
{
	return static_branch_unlikely(&vfsfast_fsnotify_has_tp) &&
	       vfsfast_tracepoint_on(vfsfast_fsnotify_tp);
}

/*
 * Whether nothing on @sb can see an event on @inode (NULL for a dirent
 * event, which is reported on @dir) and @dir: every mark that could see it
 * counts on @sb, if both inodes are on it.
 */
static __always_inline bool vfsfast_sb_unseen(struct super_block *sb,
					      struct inode *inode,
					      struct inode *dir)
{
	if (vfsfast_sb_watched(sb))
		return false;
	if (unlikely(dir)) {
		if (dir->i_sb != sb)
			return false;
	} else if (!inode) {
		return false;
	}
	if (inode && inode->i_sb != sb)
		return false;
	return !vfsfast_fsnotify_traced();
}

/*
 * The same for the superblock of an event's data; data without one goes
 * to the stock function.  File events, by far the most frequent, carry a
 * path, whose dentry always has a superblock: that case comes first and
 * tests no pointer.
 */
static __always_inline bool vfsfast_fsnotify_unseen(const void *data,
						    int data_type,
						    struct inode *inode,
						    struct inode *dir)
{
	struct super_block *sb;

	if (likely(data_type == FSNOTIFY_EVENT_PATH))
		return vfsfast_sb_unseen(((const struct path *)data)->dentry->d_sb,
					 inode, dir);
	sb = vfsfast_fsnotify_data_sb(data, data_type);
	return sb && vfsfast_sb_unseen(sb, inode, dir);
}

/*
 * The fast paths below are leaves: the stock call lives in a function of
 * its own, reached by a tail call, so that the common case saves no
 * registers and counts once (vfsfast_hit()).  On a kernel without the
 * inline checks every event pays for this path, and what it costs is what
 * the module cannot win back from upstream's inline test.  The slow path
 * tail-calls the stock function in turn and keeps no count of tasks
 * inside: a fanotify permission event may sleep there until user space
 * answers, and with no frame of vfsfast's on the stack, unloading never
 * waits for it.
 */
#ifdef VFSFAST_HAVE_FSNOTIFY_MASK_FIRST
VFSFAST_DECLARE_TARGETS(VFSFAST_FSNOTIFY_TARGETS);

static vfsfast_noipa int vfsfast_fsnotify_slow(__u32 mask, const void *data,
					       int data_type, struct inode *dir,
					       const struct qstr *file_name,
					       struct inode *inode, u32 cookie)
{
	vfsfast_fallback(fsnotify);
	return vfsfast_stock_fsnotify(mask, data, data_type, dir, file_name,
				      inode, cookie);
}

static int vfsfast_fsnotify(__u32 mask, const void *data, int data_type,
			    struct inode *dir, const struct qstr *file_name,
			    struct inode *inode, u32 cookie)
{
	if (likely(vfsfast_fsnotify_unseen(data, data_type, inode, dir))) {
		vfsfast_hit(fsnotify);
		return 0;
	}
	return vfsfast_fsnotify_slow(mask, data, data_type, dir, file_name,
				     inode, cookie);
}

VFSFAST_TAIL_CALL(vfsfast_fsnotify_slow, vfsfast_stock_fsnotify);
VFSFAST_TAIL_CALL(vfsfast_fsnotify, vfsfast_fsnotify_slow);

VFSFAST_FUNCS(fsnotify, VFSFAST_FSNOTIFY_TARGETS);
#else
VFSFAST_NO_FUNCS(fsnotify);
#endif

#ifdef VFSFAST_HAVE_FSNOTIFY_PARENT_DENTRY
VFSFAST_DECLARE_TARGETS(VFSFAST_FSNOTIFY_PARENT_TARGETS);

static vfsfast_noipa int vfsfast___fsnotify_parent_slow(struct dentry *dentry,
							__u32 mask,
							const void *data,
							int data_type)
{
	vfsfast_fallback(fsnotify_parent);
	return vfsfast_stock___fsnotify_parent(dentry, mask, data, data_type);
}

static int vfsfast___fsnotify_parent(struct dentry *dentry, __u32 mask,
				     const void *data, int data_type)
{
	struct super_block *sb = dentry->d_sb;

	if (likely(!(READ_ONCE(dentry->d_flags) & DCACHE_FSNOTIFY_PARENT_WATCHED) &&
		   !vfsfast_sb_watched(sb) &&
		   vfsfast_fsnotify_data_sb(data, data_type) == sb &&
		   !vfsfast_fsnotify_traced())) {
		vfsfast_hit(fsnotify_parent);
		return 0;
	}
	return vfsfast___fsnotify_parent_slow(dentry, mask, data, data_type);
}


VFSFAST_TAIL_CALL(vfsfast___fsnotify_parent_slow, vfsfast_stock___fsnotify_parent);
VFSFAST_TAIL_CALL(vfsfast___fsnotify_parent, vfsfast___fsnotify_parent_slow);

VFSFAST_FUNCS(fsnotify_parent, VFSFAST_FSNOTIFY_PARENT_TARGETS);
#else
VFSFAST_NO_FUNCS(fsnotify_parent);
#endif

VFSFAST_OPTIMIZATION(fsnotify, VFSFAST_FSNOTIFY_TARGETS,
		     VFSFAST_UPSTREAM_FSNOTIFY_INFO, auto,
	.upstream = VFSFAST_UPSTREAM_FSNOTIFY,
	.lacks = VFSFAST_NO_FSNOTIFY ?: VFSFAST_NO_SB_WATCH_COUNT,
	.setup = vfsfast_fsnotify_setup,
);

VFSFAST_OPTIMIZATION(fsnotify_parent, VFSFAST_FSNOTIFY_PARENT_TARGETS,
		     VFSFAST_UPSTREAM_FSNOTIFY_INFO, auto,
	.upstream = VFSFAST_UPSTREAM_FSNOTIFY,
	.lacks = VFSFAST_NO_FSNOTIFY_PARENT ?: VFSFAST_NO_SB_WATCH_COUNT,
	.setup = vfsfast_fsnotify_setup,
);
