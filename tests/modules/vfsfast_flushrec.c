// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: a misc device, /dev/vfsfast_flushrec, whose ->flush() keeps
 * the file count it was called with (last_count) and how often it ran
 * (flushes), as a driver that decides by the count would see it (the
 * SCSI tape driver writes its filemark only at a count of 1).  close_sync
 * must give ->flush() stock's count.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

static long last_count = -1;
module_param(last_count, long, 0444);
MODULE_PARM_DESC(last_count, "file_count() at the last ->flush()");
static int flushes;
module_param(flushes, int, 0444);
MODULE_PARM_DESC(flushes, "->flush() calls");

static int vfsfast_flushrec_flush(struct file *file, fl_owner_t id)
{
	WRITE_ONCE(last_count, file_count(file));
	WRITE_ONCE(flushes, flushes + 1);
	return 0;
}

static const struct file_operations vfsfast_flushrec_fops = {
	.owner = THIS_MODULE,
	.flush = vfsfast_flushrec_flush,
};

static struct miscdevice vfsfast_flushrec_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "vfsfast_flushrec",
	.fops = &vfsfast_flushrec_fops,
};

module_misc_device(vfsfast_flushrec_dev);
MODULE_DESCRIPTION("vfsfast test: a ->flush() that records the file count");
MODULE_LICENSE("GPL");
