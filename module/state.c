// SPDX-License-Identifier: GPL-2.0
/*
 * The state room (engine.h): where each optimization stands, and why.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/mutex.h>

#include "engine.h"

/* The same, for a state that status prints with its reason. */
__printf(3, 4)
void vfsfast_set_why(struct vfsfast_opt *opt, enum vfsfast_state state,
		     const char *fmt, ...)
{
	va_list args;

	if (vfsfast_final(opt))
		return;
	va_start(args, fmt);
	vsnprintf(opt->reason, sizeof(opt->reason), fmt, args);
	va_end(args);
	WRITE_ONCE(opt->state, state);
}

void vfsfast_unsupported(struct vfsfast_opt *opt, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(opt->reason, sizeof(opt->reason), fmt, args);
	va_end(args);
	WRITE_ONCE(opt->state, VFSFAST_UNSUPPORTED);
	pr_info("%s: unsupported: %s\n", opt->name, opt->reason);
}

/* The disable= parameter: kept off for the module's life. */
void vfsfast_opt_disable(struct vfsfast_opt *opt)
{
	lockdep_assert_held(&vfsfast_mutex);
	vfsfast_set_why(opt, VFSFAST_DISABLED, "disable= parameter");
	pr_info("%s: off by the disable= parameter\n", opt->name);
}
