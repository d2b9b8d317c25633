// SPDX-License-Identifier: GPL-2.0
/*
 * IOP_FASTPERM_MAY_EXEC, added with path lookup's own MAY_EXEC check of
 * a directory (6.19, "fs: speed up path lookup with cheaper handling of
 * MAY_EXEC").
 */
#include <linux/fs.h>

int probe(void)
{
	return IOP_FASTPERM_MAY_EXEC;
}
