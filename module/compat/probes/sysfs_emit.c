// SPDX-License-Identifier: GPL-2.0
#include <linux/sysfs.h>

int probe(char *buf)
{
	return sysfs_emit(buf, "%d\n", 1);
}
