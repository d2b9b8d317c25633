// SPDX-License-Identifier: GPL-2.0
/*
 * readlink: vfs_readlink() without the byte-at-a-time strlen(), the gain
 * of 6.14's symlink length caching.
 *
 * Upstream 6.14 caches the link length in the inode (IOP_CACHED_LINK and
 * i_linklen).  A module cannot add an inode field, and a length kept on the
 * side, keyed by inode or link address, cannot be proven fresh: inodes and
 * their inline link buffers are reused at the same addresses.  Nor is
 * i_size a proof, since a damaged ext4 fast symlink can have an i_size that
 * disagrees with its NUL-terminated text.  So the replacement computes
 * strlen() itself, 16 bytes at a time (word_strlen.h), which is strlen() by
 * construction for every string and costs about half an instruction per
 * byte instead of more than three.
 *
 * Everything else is vfs_readlink() as the stock kernel has it: inodes that
 * have not yet been through the stock checks (custom ->readlink, not a
 * symlink: IOP_DEFAULT_READLINK still clear) go to the stock function, and
 * ->get_link, the delayed call, truncation at buflen and -EFAULT are the
 * stock sequence.  On kernels with IOP_CACHED_LINK the cached length is
 * used exactly as stock uses it.
 */
#include <linux/types.h>
#include <linux/delayed_call.h>
#include <linux/fs.h>
#include <linux/uaccess.h>
#include <linux/module.h>
#include <linux/bitops.h>
#include <linux/kernel.h>

#include "vfsfast.h"
#include "word_strlen.h"

#define VFSFAST_READLINK_TARGETS(T)					\
	(T(vfs_readlink, vfs_readlink, vfs_readlink, replace, vfsfast_vfs_readlink))

VFSFAST_STATS(readlink);
VFSFAST_DECLARE_TARGETS(VFSFAST_READLINK_TARGETS);

/*
 * The replacement is split so that each path pays only for what it uses:
 * vfsfast_vfs_readlink() decides and tail-calls one of the functions
 * below, which count the call out themselves.  Only links without i_link
 * (page-cache and computed ones) need the delayed call, a local whose
 * address is taken and so costs a stack canary.
 *
 * Unloading never waits for user space, and no call takes a module
 * reference: the copy to user space runs with page faults disabled, and
 * one that would fault (a page not yet touched, a userfaultfd page) hands
 * the whole call to the stock function, which copies again from the
 * start; ->get_link() is called here only on the filesystems bounded.c
 * knows cannot wait on user space or the network (a page-cache link on
 * ext4 or tmpfs), and every other one (a FUSE daemon's) goes to stock,
 * all by tail calls, leaving nothing of vfsfast on the stack.
 */

/* Stock readlink_copy()'s length, with the word-at-a-time strlen(). */
static __always_inline int vfsfast_readlink_len(int buflen, const char *link,
						int len)
{
	if (len < 0)
		len = vfsfast_strlen(link);
	if (unlikely(len > (unsigned int)buflen))
		len = buflen;
	return len;
}

/* Not answered here after all: the stock function, as a tail call. */
static vfsfast_noipa int vfsfast_readlink_stock(struct dentry *dentry,
						char __user *buffer, int buflen)
{
	vfsfast_fallback(readlink);
	vfsfast_leave(readlink);
	return vfsfast_stock_vfs_readlink(dentry, buffer, buflen);
}

/* What no readlink() returns: the call goes to stock. */
#define VFSFAST_RL_TO_STOCK	INT_MIN

/* Stock's copy, with page faults disabled: VFSFAST_RL_TO_STOCK if it would fault. */
static __always_inline int vfsfast_readlink_copy(char __user *buffer,
						 const char *link, int len)
{
	unsigned long left;

	pagefault_disable();
	left = copy_to_user(buffer, link, len);
	pagefault_enable();
	return left ? VFSFAST_RL_TO_STOCK : len;
}

/*
 * @link is i_link; @len is the cached length, or -1.  The arguments keep
 * the replacement's order, so that its tail calls move nothing.
 */
static vfsfast_noipa int vfsfast_readlink_inline(struct dentry *dentry,
					    char __user *buffer, int buflen,
					    const char *link, int len)
{
	len = vfsfast_readlink_copy(buffer, link,
				    vfsfast_readlink_len(buflen, link, len));
	if (unlikely(len == VFSFAST_RL_TO_STOCK))
		return vfsfast_readlink_stock(dentry, buffer, buflen);
	vfsfast_leave(readlink);
	return len;
}

/*
 * A link without i_link, on a filesystem whose ->get_link() cannot wait
 * on user space.  The delayed call's address escapes, so this returns
 * VFSFAST_RL_TO_STOCK for its caller to make the tail call.
 */
static vfsfast_noipa int vfsfast_readlink_get_link(struct dentry *dentry,
						   char __user *buffer,
						   int buflen)
{
	struct inode *inode = d_inode(dentry);
	DEFINE_DELAYED_CALL(done);
	const char *link;
	int res;

	link = inode->i_op->get_link(dentry, inode, &done);
	if (IS_ERR(link))
		return PTR_ERR(link);
	res = vfsfast_readlink_copy(buffer, link,
				    vfsfast_readlink_len(buflen, link, -1));
	do_delayed_call(&done);
	return res;
}

static int vfsfast_vfs_readlink(struct dentry *dentry, char __user *buffer,
				int buflen)
{
	struct inode *inode = d_inode(dentry);
	const char *link;
	int res;

	vfsfast_enter(readlink);
	/* Same order of checks as stock 6.14+, which tests this flag first. */
	res = vfsfast_cached_link_len(inode);
	if (res >= 0)
		return vfsfast_readlink_inline(dentry, buffer, buflen,
					       inode->i_link, res);
	if (unlikely(!(inode->i_opflags & IOP_DEFAULT_READLINK)))
		return vfsfast_readlink_stock(dentry, buffer, buflen);
	link = READ_ONCE(inode->i_link);
	if (link)
		return vfsfast_readlink_inline(dentry, buffer, buflen, link, -1);
	if (unlikely(!vfsfast_bounded_fs(inode->i_sb)))
		return vfsfast_readlink_stock(dentry, buffer, buflen);
	res = vfsfast_readlink_get_link(dentry, buffer, buflen);
	if (unlikely(res == VFSFAST_RL_TO_STOCK))
		return vfsfast_readlink_stock(dentry, buffer, buflen);
	vfsfast_leave(readlink);
	return res;
}

VFSFAST_TAIL_CALL(vfsfast_readlink_stock, vfsfast_stock_vfs_readlink);
VFSFAST_TAIL_CALL(vfsfast_readlink_inline, vfsfast_readlink_stock);
VFSFAST_TAIL_CALL(vfsfast_vfs_readlink, vfsfast_readlink_stock);
VFSFAST_TAIL_CALL(vfsfast_vfs_readlink, vfsfast_readlink_inline);

VFSFAST_FUNCS(readlink, VFSFAST_READLINK_TARGETS);

VFSFAST_OPTIMIZATION(readlink, VFSFAST_READLINK_TARGETS,
		     VFSFAST_UPSTREAM_READLINK_INFO, auto,
	.upstream = VFSFAST_UPSTREAM_READLINK,
	.covers = VFSFAST_COVERS("readlink_copy"),
);
