// SPDX-License-Identifier: GPL-2.0
/* getname_flags() reports an empty name through a third argument (before 6.8). */
#include <linux/fs.h>

struct filename *probe(const char __user *name, int *empty)
{
	return getname_flags(name, 0, empty);
}
