/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the readdir_arena optimization needs to know of ext4, whose
 * structures no header package ships: struct fname (fs/ext4/dir.c), the
 * head of struct dir_private_info and struct ext4_dir_entry_2
 * (fs/ext4/ext4.h), the same in the 5.10, 6.1, 6.12 and 7.x sources.
 * setup checks struct fname and where the tree's root sits against the
 * kernel's own ext4_htree_store_dirent() at load; a kernel with
 * randomized struct layouts cannot have it.
 */
#ifndef _VFSFAST_COMPAT_READDIR_ARENA_H
#define _VFSFAST_COMPAT_READDIR_ARENA_H

#include <linux/fs.h>
#include <linux/fscrypt.h>
#include <linux/mm.h>
#include <linux/rbtree.h>

#if defined(CONFIG_RANDSTRUCT) || defined(CONFIG_GCC_PLUGIN_RANDSTRUCT)
#define VFSFAST_NO_READDIR_ARENA \
	"struct layouts are randomized (RANDSTRUCT): ext4's struct fname unknown"
#elif !IS_ENABLED(CONFIG_EXT4_FS)
#define VFSFAST_NO_READDIR_ARENA	"the kernel has no ext4 (CONFIG_EXT4_FS)"
#else
#define VFSFAST_READDIR_ARENA		1
#define VFSFAST_NO_READDIR_ARENA	NULL
#endif

/* fs/ext4/dir.c: one name of an htree pass, a node of its rb-tree. */
struct vfsfast_fname {
	__u32 hash;
	__u32 minor_hash;
	struct rb_node rb_hash;
	struct vfsfast_fname *next;	/* names with the same hashes */
	__u32 inode;
	__u8 name_len;
	__u8 file_type;
	char name[];
};

/* fs/ext4/ext4.h's struct dir_private_info, up to what the arena uses. */
struct vfsfast_dir_info {
	struct rb_root root;
	struct rb_node *curr_node;
	struct vfsfast_fname *extra_fname;
};

/* fs/ext4/ext4.h's struct ext4_dir_entry_2: the on-disk format. */
struct vfsfast_ext4_dirent {
	__le32 inode;
	__le16 rec_len;
	__u8 name_len;
	__u8 file_type;
	char name[255];
};

typedef int vfsfast_htree_store_dirent_t(struct file *dir_file, __u32 hash,
					 __u32 minor_hash,
					 struct vfsfast_ext4_dirent *dirent,
					 struct fscrypt_str *ent_name);
typedef void vfsfast_free_rb_tree_fname_t(struct rb_root *root);

/* A reference on @file unless its last one is already gone. */
static inline bool vfsfast_file_tryget(struct file *file)
{
#ifdef VFSFAST_HAVE_FILE_REF
	return file_ref_get(&file->f_ref);
#else
	return atomic_long_inc_not_zero(&file->f_count);
#endif
}

#endif
