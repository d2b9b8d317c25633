// SPDX-License-Identifier: GPL-2.0
/* ftrace callbacks take struct ftrace_regs (5.11+), not struct pt_regs. */
#include <linux/ftrace.h>

static void probe_cb(unsigned long ip, unsigned long parent_ip,
		     struct ftrace_ops *op, struct ftrace_regs *fregs)
{
}

struct ftrace_ops probe_ops = { .func = probe_cb };
