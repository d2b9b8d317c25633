// SPDX-License-Identifier: GPL-2.0
/*
 * Whether ftrace has made a target's site live, on x86.
 */
#include <linux/delay.h>
#include <linux/uaccess.h>

#include "vfsfast.h"

/*
 * Whether the ftrace site now calls or jumps somewhere.  An int3 there is
 * another patcher's text_poke_bp() in progress (it puts back a whole
 * instruction within microseconds): look again rather than fail.
 */
bool vfsfast_arch_site_live(unsigned long site)
{
	int tries = 100;
	u8 op;

	do {
		if (copy_from_kernel_nofault(&op, (void *)site, 1))
			return false;
		if (op != 0xcc)
			break;
		usleep_range(100, 200);
	} while (--tries);
	return op == 0xe8 || op == 0xe9;	/* call, jmp rel32 */
}
