// SPDX-License-Identifier: GPL-2.0
/*
 * readdir_arena: ext4's hashed directory reads without a slab allocation
 * and a kfree() per entry (ahead of upstream; no kernel has it).
 *
 * A read of a dir_index directory fills, one leaf block at a time, an
 * rb-tree of struct fname keyed by (hash, minor hash), one kzalloc() per
 * entry in ext4_htree_store_dirent(), and empties it before each refill
 * and at the last close in free_rb_tree_fname(), one kfree() per entry.
 * Here a tree's names are carved from pages of its own (the arena), and
 * the free gives the pages back in one go.  The tree itself is built
 * exactly as stock builds it (the same comparisons, the same collision
 * chains, rb_link_node() and rb_insert_color()), and everything that
 * reads it (ext4_dx_readdir(), call_filldir(): d_off cookies, seeks, EOF,
 * refills) is stock's, untouched: a read returns stock's bytes because
 * the tree is stock's tree.
 *
 * An arena name is told from stock's by its page: stock's come from the
 * slab allocator (KFENCE's pages are slab pages too), the arena's from
 * the page allocator.  No field is added to ext4's structures: a page
 * starts with a header that leads to the tree's first page, whose header
 * holds the tree's pages and its entry in a registry of live trees.
 *
 * The invariants, and the orders that keep them:
 *
 * 1. No arena name is ever given to kfree().  Stock's free would, so
 *    free_rb_tree_fname() is the optimization's observer: it attaches
 *    before the store and detaches after it (the engine's order for
 *    observers).  Its replacement walks the tree as stock does, kfree()s
 *    the slab names and frees the arena pages, so it is exact for any
 *    tree: stock's, the arena's, or mixed (a store detached while a fill
 *    ran on, or attached while one ran: a store into a tree whose root is
 *    stock's goes to stock, so a tree started by stock stays stock's).
 *    Between an enable and the next time the store is taken away, no
 *    tree can be mixed, and a tree with an arena root is given back
 *    without the walk (vfsfast_arena_mixed).
 *    No quiesce is needed between the two: a tree is only touched by one
 *    getdents64() at a time (the file's f_pos_lock; nfsd reads through a
 *    file of its own) and by its last fput(), so a stock free still
 *    running when the free's hook arrives frees a tree no arena store
 *    can have touched.
 *
 * 2. No arena name outlives the hooks, the module least of all: a
 *    directory left open in the middle of a read keeps its tree, to be
 *    freed by stock once the knob is off or vfsfast gone.  So on every
 *    path that takes the store away (off, passthrough, a yield, unload)
 *    the engine calls ->unshare() once the store no longer runs and
 *    before the free stops: it waits for tasks still inside the store,
 *    then gives every registered tree back in stock's form, each arena
 *    name copied into a kzalloc()'d one of stock's size and put in its
 *    place (rb_replace_node(): the tree's shape, order and chains kept,
 *    the reader's place in it, curr_node and extra_fname, moved to the
 *    copy).  Readers are kept out by the directory's i_rwsem, which
 *    iterate_dir() holds around every ->iterate_shared(); the last
 *    fput() by a reference on the file.
 *
 * ext4 may be a module: its text is held (a reference on the module that
 * registered "ext4") from load to unload, so that rmmod ext4 answers
 * EBUSY while vfsfast is loaded; a vfsfast loaded before ext4 finds no
 * target and says so.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "vfsfast.h"
#include "readdir_arena.h"

#define VFSFAST_READDIR_ARENA_TARGETS(T)				\
	(T(free_rb_tree_fname, *(vfsfast_free_rb_tree_fname_t *)0, 0,	\
	   observe, vfsfast_free_rb_tree_fname)				\
	 T(ext4_htree_store_dirent,					\
	   *(vfsfast_htree_store_dirent_t *)0, 0, replace,		\
	   vfsfast_htree_store_dirent))

VFSFAST_STATS(readdir_arena);

#ifdef VFSFAST_READDIR_ARENA
VFSFAST_DECLARE_TARGETS(VFSFAST_READDIR_ARENA_TARGETS);

/*
 * The header of each page of a tree's arena.  The fields after @used are
 * the tree's, kept in its first page only.
 */
struct vfsfast_arena {
	struct vfsfast_arena *head;	/* the tree's first page */
	struct vfsfast_arena *next;	/* the tree's other pages, from head */
	unsigned int used;		/* bytes carved, this header included */
	int cpu;			/* whose registry lists the tree */
	struct vfsfast_arena *cur;	/* the page names are carved from */
	struct list_head live;		/* in the registry */
	struct file *file;		/* whose tree it is */
};

#define VFSFAST_ARENA_HDR	ALIGN(sizeof(struct vfsfast_arena), 8)

/*
 * Every tree with an arena, on the list of the CPU that made it: an entry
 * per tree (one per leaf block read, about 49 names), none on a line all
 * CPUs share.
 */
struct vfsfast_arena_registry {
	spinlock_t lock;
	struct list_head trees;
};
static DEFINE_PER_CPU(struct vfsfast_arena_registry, vfsfast_arena_reg);

/* Pages given out and given back, per CPU: their difference is what lives. */
static DEFINE_PER_CPU(unsigned long, vfsfast_arena_pages_in);
static DEFINE_PER_CPU(unsigned long, vfsfast_arena_pages_out);

/*
 * Whether a tree with an arena root may hold slab names: set before the
 * store stops being reached (->unshare(), @begin), when stock's stores
 * may start adding to arena trees, and cleared by ->arm(), before the
 * store is reached again, when no arena tree is left (the last
 * ->unshare() gave them all back).  While it is clear, a tree whose root
 * is the arena's was started by the store's replacement and has had
 * every later name from it: the free hands its pages back without a
 * walk.  The smp_mb() after setting it orders it before the store's
 * detach or reroute: a stock store that saw those, and the free after it
 * (under the file's locks), see it set.
 */
static bool vfsfast_arena_mixed;

/* The module that registered "ext4", held from load to unload. */
static struct file_system_type *vfsfast_arena_fs;

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only.  fi_arena_park names a task whose arena stores hold
 * (30 s at most, asleep) before each name, the first of a tree before
 * the tree exists, so that a test can flip the knob or unload in the
 * middle of a fill; fi_arena_parked counts the holds.  The bugs invariant
 * 2 keeps out: fi_arena_no_unshare=1 makes ->unshare() give nothing back
 * (stock's free then kfree()s arena names); fi_arena_no_drain=1 makes it
 * give back what is registered without waiting for the stores still
 * running, one of which may then start a tree nothing gives back.
 */
static char fi_arena_park[TASK_COMM_LEN];
module_param_string(fi_arena_park, fi_arena_park, sizeof(fi_arena_park), 0644);
MODULE_PARM_DESC(fi_arena_park, "test builds: hold this task's arena stores");
static int fi_arena_parked;
module_param(fi_arena_parked, int, 0444);
MODULE_PARM_DESC(fi_arena_parked, "test builds: arena stores held by fi_arena_park");
static bool fi_arena_no_unshare;
module_param(fi_arena_no_unshare, bool, 0644);
MODULE_PARM_DESC(fi_arena_no_unshare, "test builds: leave arena trees alive at off and unload (the bug)");
static bool fi_arena_no_drain;
module_param(fi_arena_no_drain, bool, 0644);
MODULE_PARM_DESC(fi_arena_no_drain, "test builds: give trees back without waiting for running stores (the bug)");

#define vfsfast_arena_fi_park() \
	vfsfast_fi_hold_task(fi_arena_park, &fi_arena_parked, 30000, false)
#define vfsfast_arena_fi_no_unshare()	READ_ONCE(fi_arena_no_unshare)
#define vfsfast_arena_fi_no_drain()	READ_ONCE(fi_arena_no_drain)
#else
static inline void vfsfast_arena_fi_park(void) { }
#define vfsfast_arena_fi_no_unshare()	false
#define vfsfast_arena_fi_no_drain()	false
#endif

/* Whether a name (or a tree's node) is the arena's rather than the slab's. */
static __always_inline bool vfsfast_arena_name(const void *p)
{
	return !PageSlab(virt_to_page(p));
}

static __always_inline struct vfsfast_arena *vfsfast_arena_of(const void *p)
{
	return (struct vfsfast_arena *)((unsigned long)p & PAGE_MASK);
}

static struct vfsfast_arena *vfsfast_arena_page(struct vfsfast_arena *head)
{
	struct vfsfast_arena *a;

	a = (struct vfsfast_arena *)__get_free_page(GFP_KERNEL);
	if (!a)
		return NULL;
	this_cpu_inc(vfsfast_arena_pages_in);
	a->head = head ?: a;
	a->next = NULL;
	a->used = VFSFAST_ARENA_HDR;
	return a;
}

/* A new tree's first page, in the registry of the CPU that makes it. */
static struct vfsfast_arena *vfsfast_arena_new(struct file *file)
{
	struct vfsfast_arena_registry *reg;
	struct vfsfast_arena *head = vfsfast_arena_page(NULL);

	if (!head)
		return NULL;
	head->cur = head;
	head->file = file;
	head->cpu = raw_smp_processor_id();
	reg = per_cpu_ptr(&vfsfast_arena_reg, head->cpu);
	spin_lock(&reg->lock);
	list_add(&head->live, &reg->trees);
	spin_unlock(&reg->lock);
	return head;
}

/* Out of the registry, and every page of the tree back. */
static void vfsfast_arena_free(struct vfsfast_arena *head)
{
	struct vfsfast_arena_registry *reg;
	struct vfsfast_arena *a, *next;

	reg = per_cpu_ptr(&vfsfast_arena_reg, head->cpu);
	spin_lock(&reg->lock);
	list_del(&head->live);
	spin_unlock(&reg->lock);
	for (a = head->next; a; a = next) {
		next = a->next;
		free_page((unsigned long)a);
		this_cpu_inc(vfsfast_arena_pages_out);
	}
	free_page((unsigned long)head);
	this_cpu_inc(vfsfast_arena_pages_out);
}

/* @size bytes of @head's arena, or NULL where no page could be had. */
static void *vfsfast_arena_carve(struct vfsfast_arena *head, size_t size)
{
	struct vfsfast_arena *a = head->cur;
	void *p;

	size = ALIGN(size, 8);
	if (a->used + size > PAGE_SIZE) {
		a = vfsfast_arena_page(head);
		if (!a)
			return NULL;
		a->next = head->next;
		head->next = a;
		head->cur = a;
	}
	p = (char *)a + a->used;
	a->used += size;
	return p;
}

/*
 * ext4_htree_store_dirent(): the name in the tree as stock puts it there,
 * from the tree's arena.  A tree whose root is stock's was started by
 * stock (before the hook, or while a page could not be had) and stays
 * stock's.  Where the first page cannot be had stock tries its own
 * allocation; where a later one cannot, the store fails with -ENOMEM, as
 * stock's does when its kzalloc() fails.
 */
static int vfsfast_htree_store_dirent(struct file *dir_file, __u32 hash,
				      __u32 minor_hash,
				      struct vfsfast_ext4_dirent *dirent,
				      struct fscrypt_str *ent_name)
{
	struct vfsfast_dir_info *info = dir_file->private_data;
	struct rb_node **p = &info->root.rb_node, *parent = NULL;
	struct vfsfast_fname *fname, *new_fn;
	struct vfsfast_arena *head = NULL;

	if (*p) {
		if (!vfsfast_arena_name(*p))
			return vfsfast_stock_ext4_htree_store_dirent(dir_file,
					hash, minor_hash, dirent, ent_name);
		head = vfsfast_arena_of(*p)->head;
	}
	vfsfast_enter(readdir_arena);
	vfsfast_arena_fi_park();
	if (!head)
		head = vfsfast_arena_new(dir_file);
	new_fn = head ? vfsfast_arena_carve(head, sizeof(*new_fn) +
					    ent_name->len + 1) : NULL;
	if (!new_fn) {
		vfsfast_fallback(readdir_arena);
		vfsfast_leave(readdir_arena);
		if (!head)
			return vfsfast_stock_ext4_htree_store_dirent(dir_file,
					hash, minor_hash, dirent, ent_name);
		return -ENOMEM;
	}
	new_fn->hash = hash;
	new_fn->minor_hash = minor_hash;
	new_fn->next = NULL;
	new_fn->inode = le32_to_cpu(dirent->inode);
	new_fn->name_len = ent_name->len;
	new_fn->file_type = dirent->file_type;
	memcpy(new_fn->name, ent_name->name, ent_name->len);
	new_fn->name[ent_name->len] = '\0';

	while (*p) {
		parent = *p;
		fname = rb_entry(parent, struct vfsfast_fname, rb_hash);
		/* Equal hashes chain behind the node, newest first, as stock. */
		if (new_fn->hash == fname->hash &&
		    new_fn->minor_hash == fname->minor_hash) {
			new_fn->next = fname->next;
			fname->next = new_fn;
			goto out;
		}
		if (new_fn->hash < fname->hash)
			p = &(*p)->rb_left;
		else if (new_fn->hash > fname->hash)
			p = &(*p)->rb_right;
		else if (new_fn->minor_hash < fname->minor_hash)
			p = &(*p)->rb_left;
		else
			p = &(*p)->rb_right;
	}
	rb_link_node(&new_fn->rb_hash, parent, p);
	rb_insert_color(&new_fn->rb_hash, &info->root);
out:
	vfsfast_leave(readdir_arena);
	return 0;
}

VFSFAST_TAIL_CALL(vfsfast_htree_store_dirent,
		  vfsfast_stock_ext4_htree_store_dirent);

/*
 * free_rb_tree_fname(): stock's walk, kfree() for the slab's names, the
 * arena's pages back at the end.  Exact for any tree, mixed ones
 * included (invariant 1).
 */
static void vfsfast_free_rb_tree_fname(struct rb_root *root)
{
	struct vfsfast_fname *fname, *next, *old;
	struct vfsfast_arena *head = NULL;

	if (!root->rb_node) {
		vfsfast_hit(readdir_arena);
		return;
	}
	vfsfast_enter(readdir_arena);
	if (!READ_ONCE(vfsfast_arena_mixed) &&
	    vfsfast_arena_name(root->rb_node)) {
		vfsfast_arena_free(vfsfast_arena_of(root->rb_node)->head);
		*root = RB_ROOT;
		vfsfast_leave(readdir_arena);
		return;
	}
	rbtree_postorder_for_each_entry_safe(fname, next, root, rb_hash) {
		while (fname) {
			old = fname;
			fname = fname->next;
			if (vfsfast_arena_name(old))
				head = vfsfast_arena_of(old)->head;
			else
				kfree(old);
		}
	}
	if (head)
		vfsfast_arena_free(head);
	*root = RB_ROOT;
	vfsfast_leave(readdir_arena);
}

/* A reader's place in the tree follows its name to the copy. */
static void vfsfast_arena_moved(struct vfsfast_dir_info *info,
				struct vfsfast_fname *from,
				struct vfsfast_fname *to)
{
	if (info->curr_node == &from->rb_hash)
		info->curr_node = &to->rb_hash;
	if (info->extra_fname == from)
		info->extra_fname = to;
}

/* Stock's allocation for @fname, with its bytes. */
static struct vfsfast_fname *vfsfast_arena_copy(const struct vfsfast_fname *fname)
{
	size_t len = sizeof(*fname) + fname->name_len + 1;
	struct vfsfast_fname *copy;

	copy = kzalloc(len, GFP_KERNEL | __GFP_NOFAIL);
	memcpy(copy, fname, len);
	return copy;
}

/*
 * The tree of @info in stock's form, under the directory's i_rwsem: every
 * arena name replaced by a copy in place, the arena freed.
 */
static void vfsfast_arena_convert(struct vfsfast_dir_info *info)
{
	struct vfsfast_fname *fname, *copy, **link;
	struct vfsfast_arena *head = NULL;
	struct rb_node *node;

	for (node = rb_first(&info->root); node; node = rb_next(node)) {
		fname = rb_entry(node, struct vfsfast_fname, rb_hash);
		if (vfsfast_arena_name(fname)) {
			head = vfsfast_arena_of(fname)->head;
			copy = vfsfast_arena_copy(fname);
			rb_replace_node(node, &copy->rb_hash, &info->root);
			vfsfast_arena_moved(info, fname, copy);
			fname = copy;
			node = &copy->rb_hash;
		}
		for (link = &fname->next; *link; link = &(*link)->next) {
			if (!vfsfast_arena_name(*link))
				continue;
			head = vfsfast_arena_of(*link)->head;
			copy = vfsfast_arena_copy(*link);
			vfsfast_arena_moved(info, *link, copy);
			*link = copy;
		}
	}
	if (head)
		vfsfast_arena_free(head);
}

/* How long a conversion tries for a directory's lock before it queues. */
#define VFSFAST_ARENA_TRY_MS	1000

/*
 * The first tree @reg lists, in stock's form, or false if it lists none.
 * A file whose last reference is gone is being released, and its tree
 * freed through the free's hook, still attached: wait for that.  A reader
 * asleep inside a read holds the directory's i_rwsem: wait for it.
 */
static bool vfsfast_arena_unshare_one(struct vfsfast_arena_registry *reg)
{
	struct vfsfast_arena *head;
	struct inode *inode;
	struct file *file;
	unsigned int ms = 0;

	spin_lock(&reg->lock);
	head = list_first_entry_or_null(&reg->trees, struct vfsfast_arena, live);
	file = head ? head->file : NULL;
	if (file && !vfsfast_file_tryget(file))
		file = ERR_PTR(-ENOENT);
	spin_unlock(&reg->lock);
	if (!head)
		return false;
	if (IS_ERR(file)) {
		schedule_timeout_idle(1);
		return true;
	}
	inode = file_inode(file);
	while (!inode_trylock(inode)) {
		/*
		 * Readers coming and going may keep a trylock from ever
		 * winning: after a second, queue as a writer does.  A reader
		 * that holds the lock for as long as user space decides
		 * keeps this waiting as long: said first.
		 */
		if (ms >= VFSFAST_ARENA_TRY_MS) {
			pr_info("readdir_arena: waiting for the readers of directory %llu on %s to give back its tree\n",
				(unsigned long long)inode->i_ino,
				inode->i_sb->s_id);
			inode_lock(inode);
			break;
		}
		schedule_timeout_idle(msecs_to_jiffies(10));
		ms += 10;
	}
	/* Whatever tree the file has now: the one listed may be gone. */
	vfsfast_arena_convert(file->private_data);
	inode_unlock(inode);
	fput(file);
	return true;
}

VFSFAST_RARE_PATH(vfsfast_arena_unshare_one);

static void vfsfast_arena_unshare(struct vfsfast_opt *opt, bool begin)
{
	int cpu;

	if (begin) {
		WRITE_ONCE(vfsfast_arena_mixed, true);
		/* Seen before the store's detach: vfsfast_arena_mixed. */
		smp_mb();
		return;
	}
	if (vfsfast_arena_fi_no_unshare())
		return;
	/* No store adds to a tree, or starts one, from here on. */
	if (!vfsfast_arena_fi_no_drain())
		vfsfast_drain_opt(opt);
	for_each_possible_cpu(cpu)
		while (vfsfast_arena_unshare_one(per_cpu_ptr(&vfsfast_arena_reg,
							     cpu)))
			;
}

/* Before the store is reached again: every arena tree was given back. */
static void vfsfast_arena_arm(struct vfsfast_opt *opt)
{
	WRITE_ONCE(vfsfast_arena_mixed, false);
}

/* Arena pages alive now, for the tests. */
static long vfsfast_arena_live(void)
{
	long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += per_cpu(vfsfast_arena_pages_in, cpu) -
		     per_cpu(vfsfast_arena_pages_out, cpu);
	return n;
}

static int vfsfast_arena_pages_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", vfsfast_arena_live());
}

static const struct kernel_param_ops vfsfast_arena_pages_ops = {
	.get = vfsfast_arena_pages_get,
};
module_param_cb(readdir_arena_pages, &vfsfast_arena_pages_ops, NULL, 0444);
MODULE_PARM_DESC(readdir_arena_pages, "readdir_arena: arena pages alive");

/*
 * struct fname and the root's place in struct dir_private_info as
 * compat/readdir_arena.h has them, asked of ext4's own store: three names
 * stored in a tree of a file made for the question (two with equal
 * hashes, chained; one greater, the root's right child), read back
 * through the mirror, and freed by ext4's own free.
 */
static const char *vfsfast_arena_check(void)
{
	static const char *const names[] = { "vfsfast", "vf", "vfsfast-arena" };
	static const __u32 hashes[] = { 0x2468ace0, 0x2468ace0, 0x7fff0002 };
	struct vfsfast_ext4_dirent de = { };
	struct vfsfast_dir_info info = { };
	struct vfsfast_fname *root, *chained, *right;
	struct fscrypt_str name;
	const char *why = NULL;
	struct file *file;
	int i;

	file = kzalloc(sizeof(*file), GFP_KERNEL);
	if (!file)
		return "no memory for the layout check";
	file->private_data = &info;
	for (i = 0; i < ARRAY_SIZE(names); i++) {
		de.inode = cpu_to_le32(0x01020300 + i);
		de.file_type = 2 + i;
		name.name = (unsigned char *)names[i];
		name.len = strlen(names[i]);
		if (vfsfast_stock_ext4_htree_store_dirent(file, hashes[i],
							  0x13579bd, &de,
							  &name)) {
			why = "ext4_htree_store_dirent() failed";
			break;
		}
	}
	kfree(file);
	if (why || !info.root.rb_node)
		return why ?: "struct dir_private_info: no tree at its root";
	root = rb_entry(info.root.rb_node, struct vfsfast_fname, rb_hash);
	chained = root->next;
	right = info.root.rb_node->rb_right ?
		rb_entry(info.root.rb_node->rb_right, struct vfsfast_fname,
			 rb_hash) : NULL;
	if (!PageSlab(virt_to_page(root)) || root->hash != hashes[0] ||
	    root->minor_hash != 0x13579bd || root->inode != 0x01020300 ||
	    root->name_len != 7 || root->file_type != 2 ||
	    memcmp(root->name, "vfsfast", 8) || !chained ||
	    chained->inode != 0x01020301 || chained->name_len != 2 ||
	    chained->next || memcmp(chained->name, "vf", 3) || !right ||
	    right->hash != hashes[2] || right->name_len != 13 ||
	    right->file_type != 4 || right->next ||
	    memcmp(right->name, "vfsfast-arena", 14) ||
	    info.root.rb_node->rb_left)
		/* Left as it is: what the free would read is unknown. */
		return "struct fname is not as expected (ext4's own store)";
	vfsfast_stock_free_rb_tree_fname(&info.root);
	if (info.root.rb_node)
		return "free_rb_tree_fname() left a tree";
	return NULL;
}

/* At load, on a tree of the check's own: allocations, nothing waits. */
VFSFAST_BOUNDED_CALL(vfsfast_arena_check, vfsfast_stock_ext4_htree_store_dirent);
VFSFAST_BOUNDED_CALL(vfsfast_arena_check, vfsfast_stock_free_rb_tree_fname);

static int vfsfast_arena_setup(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;
	struct file_system_type *fs;
	const char *why;
	int cpu;

	/* ext4 is loaded: its targets were found, so nothing is requested. */
	fs = get_fs_type("ext4");
	if (!fs) {
		vfsfast_unsupported(opt, "ext4 is not registered");
		return -ENOENT;
	}
	for (func = opt->funcs; func->old_name; func++) {
		if (fs->owner && !within_module(func->entry, fs->owner)) {
			module_put(fs->owner);
			vfsfast_unsupported(opt, "%s is not ext4's", func->old_name);
			return -ENOENT;
		}
	}
	why = vfsfast_arena_check();
	if (why) {
		module_put(fs->owner);
		vfsfast_unsupported(opt, "%s", why);
		return -EINVAL;
	}
	for_each_possible_cpu(cpu) {
		struct vfsfast_arena_registry *reg =
			per_cpu_ptr(&vfsfast_arena_reg, cpu);

		spin_lock_init(&reg->lock);
		INIT_LIST_HEAD(&reg->trees);
	}
	vfsfast_arena_fs = fs;
	return 0;
}

/* Once, at load: the reference on ext4 is taken here. */
VFSFAST_RARE_PATH(vfsfast_arena_setup);

/* At unload, every hook gone and every tree given back (->unshare()). */
static void vfsfast_arena_teardown(struct vfsfast_opt *opt)
{
	long live = vfsfast_arena_live();

	if (live)
		pr_err("readdir_arena: %ld arena page(s) alive at unload: left allocated\n",
		       live);
	if (vfsfast_arena_fs)
		module_put(vfsfast_arena_fs->owner);
	vfsfast_arena_fs = NULL;
}

VFSFAST_RARE_PATH(vfsfast_arena_teardown);

VFSFAST_FUNCS(readdir_arena, VFSFAST_READDIR_ARENA_TARGETS);
#else
VFSFAST_NO_FUNCS(readdir_arena);
#define vfsfast_arena_setup	NULL
#define vfsfast_arena_teardown	NULL
#define vfsfast_arena_unshare	NULL
#define vfsfast_arena_arm	NULL
#endif

VFSFAST_OPTIMIZATION(readdir_arena, VFSFAST_READDIR_ARENA_TARGETS, "none",
		     auto,
	.lacks = VFSFAST_NO_READDIR_ARENA,
	.setup = vfsfast_arena_setup,
	.teardown = vfsfast_arena_teardown,
	.unshare = vfsfast_arena_unshare,
	.arm = vfsfast_arena_arm,
);
