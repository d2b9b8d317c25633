// SPDX-License-Identifier: GPL-2.0
/* struct filename's reference count is an atomic_t (5.19+), not an int. */
#include <linux/fs.h>

int probe(struct filename *name)
{
	return atomic_read(&name->refcnt);
}
