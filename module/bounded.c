// SPDX-License-Identifier: GPL-2.0
/*
 * Which filesystems a fast path may call into from vfsfast's text.
 *
 * A task asleep in a function called from a replacement keeps vfsfast's
 * text on its stack, and unloading waits for it (drain.c, vfsfast_drain()).
 * For a bounded sleep (a disk read, reclaim, a mutex held for the length
 * of a system call) that is fine; for one that lasts as long as user space
 * or a remote server decides (a FUSE daemon that never answers, an NFS
 * server gone, a pipe's mutex held by a writer stuck in a userfaultfd
 * page) it would be an rmmod that never returns.  So the fast paths call
 * ->getattr(), ->get_link() and the last fput() of a file only on the
 * filesystems named here, whose code reaches nothing of that kind, and
 * hand every other call to the stock function by a tail call.
 *
 * The names are a list, not a property: no flag of struct
 * file_system_type tells a local filesystem from FUSE (fuseblk even has
 * FS_REQUIRES_DEV), and a filesystem not named here only loses the fast
 * path.  overlay is left out because its layers may be anything.
 *
 * Per call the answer is one compare with the last bounded type the CPU
 * met (a per-CPU word), else a scan of vfsfast_bounded_types[]: words of
 * a type's address with its verdict in bit 0, filled on first sight of a
 * type without a lock (cmpxchg into a free word), read without one.  A
 * type is only looked up by a caller that holds one of its superblocks,
 * which pins its module, so a word that matches is that type's.  When a
 * module goes, its types may be freed and their addresses reused by the
 * next one loaded: every word, the per-CPU ones too, is cleared then, and
 * the cache refills.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/string.h>

#include "vfsfast.h"

static const char *const vfsfast_bounded_names[] = {
	/* In memory, or the kernel's own state. */
	"tmpfs", "devtmpfs", "ramfs", "rootfs", "hugetlbfs", "proc", "sysfs",
	"cgroup", "cgroup2", "cpuset", "devpts", "mqueue", "debugfs",
	"tracefs", "securityfs", "bpf", "configfs", "pstore", "efivarfs",
	"binfmt_misc",
	/* Internal mounts that descriptors live on. */
	"pipefs", "sockfs", "anon_inodefs", "nsfs", "pidfs", "bdev", "aio",
	"dmabuf", "secretmem",
	/* On a local block device. */
	"ext4", "ext3", "ext2", "xfs", "btrfs", "vfat", "msdos", "exfat",
	"f2fs", "iso9660", "squashfs", "erofs", "udf",
};

unsigned long vfsfast_bounded_types[16];
DEFINE_PER_CPU(unsigned long, vfsfast_bounded_last);

static bool vfsfast_bounded_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(vfsfast_bounded_names); i++)
		if (!strcmp(name, vfsfast_bounded_names[i]))
			return true;
	return false;
}

/* First sight of @type (or a full cache): decide, and keep it if there is room. */
bool vfsfast_bounded_fs_slow(const struct file_system_type *type)
{
	bool ok = type->name && vfsfast_bounded_name(type->name);
	unsigned long word = (unsigned long)type | ok;
	unsigned int i;

	BUILD_BUG_ON(__alignof__(struct file_system_type) < 2);
	for (i = 0; i < ARRAY_SIZE(vfsfast_bounded_types); i++) {
		unsigned long v = READ_ONCE(vfsfast_bounded_types[i]);

		if ((v & ~1UL) == (unsigned long)type)
			break;
		if (!v && !cmpxchg(&vfsfast_bounded_types[i], 0UL, word))
			break;
	}
	return ok;
}
VFSFAST_RARE_PATH(vfsfast_bounded_fs_slow);

/*
 * @mod is going: its filesystem types with it, perhaps.  Clearing every
 * word is simpler than finding its own and costs a few first sightings.
 */
void vfsfast_bounded_module_going(struct module *mod)
{
	unsigned int i;
	int cpu;

	for (i = 0; i < ARRAY_SIZE(vfsfast_bounded_types); i++)
		WRITE_ONCE(vfsfast_bounded_types[i], 0UL);
	/*
	 * A CPU that writes its word after this holds a superblock of that
	 * type, whose module is then not the one going.
	 */
	for_each_possible_cpu(cpu)
		WRITE_ONCE(per_cpu(vfsfast_bounded_last, cpu), 0UL);
}
