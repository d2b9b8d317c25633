// SPDX-License-Identifier: GPL-2.0
/*
 * A livepatch always wins.
 *
 * A livepatch registers an IPMODIFY ftrace_ops on each function it patches,
 * from its module's init.  On a function vfsfast holds, every backend makes
 * that registration fail with EBUSY, and the livepatch (a CVE fix, say)
 * would not load.  So when a livepatch module is coming, before its init
 * runs, every optimization lets go of its targets.  Once the livepatch is
 * live each one tries to take them back: one whose functions the livepatch
 * did not touch is re-armed at once; one that finds a target taken stays
 * off, "yielded", until that livepatch module is gone.
 *
 * Only livepatch modules are recognised before they register; any other
 * IPMODIFY or direct-call user gets EBUSY from ftrace, as the kernel
 * documents.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>

#include "vfsfast.h"

static int vfsfast_module_event(struct notifier_block *nb,
				unsigned long state, void *data)
{
	struct module *mod = data;
	struct vfsfast_opt **opt;

	if (!is_livepatch_module(mod))
		return NOTIFY_DONE;
	mutex_lock(&vfsfast_mutex);
	for (opt = vfsfast_opts; *opt; opt++) {
		bool mine = !strcmp((*opt)->yielded_to, mod->name);

		switch (state) {
		case MODULE_STATE_COMING:
			vfsfast_opt_yield(*opt, mod->name);
			break;
		case MODULE_STATE_LIVE:
			if (mine)
				vfsfast_opt_rearm(*opt, mod->name, false);
			break;
		case MODULE_STATE_GOING:
			/* Also what a livepatch loaded before vfsfast held. */
			if (mine || !(*opt)->yielded_to[0])
				vfsfast_opt_rearm(*opt, mod->name, true);
			break;
		}
	}
	mutex_unlock(&vfsfast_mutex);
	return NOTIFY_OK;
}

static struct notifier_block vfsfast_module_nb = {
	.notifier_call = vfsfast_module_event,
};

int vfsfast_yield_init(void)
{
	return register_module_notifier(&vfsfast_module_nb);
}

void vfsfast_yield_exit(void)
{
	unregister_module_notifier(&vfsfast_module_nb);
}
