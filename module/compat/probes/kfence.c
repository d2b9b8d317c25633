// SPDX-License-Identifier: GPL-2.0
/* KFENCE's sampled objects can be told from the slab's own (5.12+). */
#include <linux/kfence.h>

int probe(const void *p)
{
	return is_kfence_address(p);
}
