// SPDX-License-Identifier: GPL-2.0
/*
 * 5.5 and later: an ops flagged PERMANENT makes writing 0 to the sysctl
 * kernel.ftrace_enabled fail with EBUSY instead of silently turning the
 * hook off.
 */
#include <linux/ftrace.h>

unsigned long probe = FTRACE_OPS_FL_PERMANENT;
