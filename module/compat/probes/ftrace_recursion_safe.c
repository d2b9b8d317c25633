// SPDX-License-Identifier: GPL-2.0
/*
 * Up to 5.10, ftrace wraps a callback in a recursion guard unless it is
 * flagged RECURSION_SAFE; later kernels invert the flag.
 */
#include <linux/ftrace.h>

unsigned long probe = FTRACE_OPS_FL_RECURSION_SAFE;
