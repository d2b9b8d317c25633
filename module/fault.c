// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection shared by the rooms above it (engine.h): nothing in a
 * shipped module, which is built without VFSFAST_FAULT_INJECT.
 */
#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "vfsfast.h"

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only: while the module parameter @name names the current
 * task, hold it (@max_ms at most, in steps of 20 ms asleep, or of 1 ms
 * spinning where the caller may not sleep), so that a test can change
 * what the caller is about to use; *@parked counts the holds.
 */
void vfsfast_fi_hold_task(const char *name, int *parked, unsigned int max_ms,
			  bool spin)
{
	unsigned int ms, step = spin ? 1 : 20;
	char comm[TASK_COMM_LEN];

	get_task_comm(comm, current);
	if (!READ_ONCE(name[0]) || !sysfs_streq(comm, name))
		return;
	(*parked)++;
	/* "echo >param" clears it: a newline alone ends the hold too. */
	for (ms = 0; ms < max_ms && READ_ONCE(name[0]) > ' '; ms += step) {
		if (spin)
			mdelay(step);
		else
			msleep(step);
	}
}
#endif
