// SPDX-License-Identifier: GPL-2.0
/* struct filename is a small object with the name embedded (7.0+). */
#include <linux/fs.h>

int probe(void)
{
	return EMBEDDED_NAME_MAX;
}
