// SPDX-License-Identifier: GPL-2.0
/*
 * readlink: vfs_readlink() without the byte-at-a-time strlen() (seed 001).
 *
 * Upstream 6.14 caches the link length in the inode (IOP_CACHED_LINK and
 * i_linklen).  A module cannot add an inode field, and a length kept on the
 * side, keyed by inode or link address, cannot be proven fresh: inodes and
 * their inline link buffers are reused at the same addresses.  Nor is
 * i_size a proof, since a damaged ext4 fast symlink can have an i_size that
 * disagrees with its NUL-terminated text.  So the replacement computes
 * strlen() itself, a word at a time, which is strlen() by construction for
 * every string and costs about one instruction per byte instead of nearly
 * four.
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
#include <linux/bitops.h>
#include <asm/word-at-a-time.h>

#include "vfsfast.h"

/*
 * strlen() reading aligned words.  An aligned word never straddles a page,
 * so reading the whole word that holds the terminating NUL cannot fault
 * even when the string ends just before an unmapped page;
 * read_word_at_a_time() tells KASAN this over-read is intended.
 *
 * has_zero() leaves 0x80 in the place of each zero byte, and of some bytes
 * after the first zero one (a borrow runs upwards), never below it: on
 * little-endian x86 the lowest set bit is exactly the first NUL, so
 * __ffs() finds it in one instruction where create_zero_mask() and
 * find_zero() take seven.
 */
static __always_inline size_t vfsfast_strlen(const char *s)
{
	const struct word_at_a_time constants = WORD_AT_A_TIME_CONSTANTS;
	unsigned long offset = (unsigned long)s & (sizeof(unsigned long) - 1);
	const unsigned long *p = (const unsigned long *)(s - offset);
	unsigned long val, bits;

	val = read_word_at_a_time(p);
	/* Bytes before an unaligned string are forced non-zero. */
	if (offset)
		val |= (1UL << (offset * 8)) - 1;
	while (!has_zero(val, &bits, &constants))
		val = read_word_at_a_time(++p);
	return (const char *)p - s + (__ffs(bits) >> 3);
}

static int vfsfast_vfs_readlink(struct dentry *dentry, char __user *buffer,
				int buflen)
{
	struct inode *inode = d_inode(dentry);
	DEFINE_DELAYED_CALL(done);
	const char *link;
	int res;

	vfsfast_enter();
	/* Same order of checks as stock 6.14+, which tests this flag first. */
	res = vfsfast_cached_link_len(inode);
	if (res >= 0) {
		vfsfast_hit(&vfsfast_opt_readlink);
		link = inode->i_link;
		goto copy;
	}
	if (unlikely(!(inode->i_opflags & IOP_DEFAULT_READLINK))) {
		vfsfast_fallback(&vfsfast_opt_readlink);
		res = vfsfast_stock_vfs_readlink(dentry, buffer, buflen);
		goto out;
	}
	vfsfast_hit(&vfsfast_opt_readlink);
	link = READ_ONCE(inode->i_link);
	if (!link) {
		link = inode->i_op->get_link(dentry, inode, &done);
		if (IS_ERR(link)) {
			res = PTR_ERR(link);
			goto out;
		}
	}
	res = vfsfast_strlen(link);
copy:
	if (unlikely(res > (unsigned int)buflen))
		res = buflen;
	if (copy_to_user(buffer, link, res))
		res = -EFAULT;
	do_delayed_call(&done);
out:
	vfsfast_leave();
	return res;
}

static struct vfsfast_func vfsfast_readlink_funcs[] = {
	{ VFSFAST_FUNC(vfs_readlink, vfs_readlink, vfsfast_vfs_readlink) },
	{ }
};

struct vfsfast_opt vfsfast_opt_readlink = {
	.name = "readlink",
	.funcs = vfsfast_readlink_funcs,
	.upstream = VFSFAST_UPSTREAM_READLINK,
};
