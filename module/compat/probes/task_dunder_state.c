// SPDX-License-Identifier: GPL-2.0
/* task_struct.state renamed __state, and no longer volatile (5.14+). */
#include <linux/sched.h>

unsigned int probe(struct task_struct *t)
{
	return READ_ONCE(t->__state);
}
