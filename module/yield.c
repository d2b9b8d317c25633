// SPDX-License-Identifier: GPL-2.0
/*
 * A livepatch always wins.
 *
 * A livepatch registers an IPMODIFY ftrace_ops on each function it patches,
 * from its module's init.  On a function vfsfast holds, every backend makes
 * that registration fail with EBUSY, and the livepatch (a CVE fix, say)
 * would not load.  So when a livepatch module is coming, before its init
 * runs, every optimization lets go of its targets.  Whenever a livepatch
 * module goes live or goes away, every optimization that is wanted and
 * not in effect tries to take its targets back: one whose functions no
 * livepatch patches is re-armed at once; one that finds a target taken
 * stays off, "yielded", naming the livepatch that patches it now.
 *
 * That holder is looked up at each event rather than remembered
 * (lpscan.c, vfsfast_lp_holder()).
 *
 * Only livepatch modules are recognised before they register; any other
 * IPMODIFY or direct-call user gets EBUSY from ftrace, as the kernel
 * documents.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/string.h>

#include "engine.h"

/* A livepatch module is coming: let go of everything before it patches. */
static void vfsfast_opt_yield(struct vfsfast_opt *opt, const char *module)
{
	lockdep_assert_held(&vfsfast_mutex);
	if (!vfsfast_hooked(opt))
		return;
	vfsfast_opt_detach(opt);
	/* Which target it takes is known once it is live (re-arm). */
	opt->holder[0] = '\0';
	vfsfast_set_why(opt, VFSFAST_YIELDED, "%s taken by %s",
			opt->funcs[0].old_name, module);
	pr_info("%s: yielding to livepatch %s while it loads\n", opt->name,
		module);
}

/*
 * Take back what was requested and is not in effect.  @holder names the
 * livepatch that now patches a target, found by the caller when the
 * attach fails with EBUSY (or NULL); @why says what happened, for the log.
 */
static void vfsfast_opt_rearm(struct vfsfast_opt *opt, const char *why,
			      const char *(*holder)(const char *func))
{
	char was[sizeof(opt->reason)];
	const char *failed = "";
	bool was_yielded;
	const char *who;
	int ret;

	lockdep_assert_held(&vfsfast_mutex);
	if (!opt->requested || vfsfast_hooked(opt) || vfsfast_final(opt))
		return;
	was_yielded = opt->state == VFSFAST_YIELDED;
	strscpy(was, opt->reason, sizeof(was));
	ret = vfsfast_opt_attach(opt, &failed);
	if (!ret) {
		pr_info("%s: re-armed (%s) %s\n", opt->name,
			opt->backend->name, why);
		return;
	}
	who = ret == -EBUSY ? holder(failed) : NULL;
	if (who) {
		vfsfast_set_why(opt, VFSFAST_YIELDED, "%s taken by %s", failed,
				who);
		if (!was_yielded || strcmp(was, opt->reason) ||
		    strcmp(opt->holder, who))
			pr_info("%s: yielded: %s\n", opt->name, opt->reason);
		strscpy(opt->holder, who, sizeof(opt->holder));
	} else {
		opt->holder[0] = '\0';
		pr_info("%s: not re-armed %s: %s\n", opt->name, why,
			opt->reason);
	}
}

static int vfsfast_module_event(struct notifier_block *nb,
				unsigned long state, void *data)
{
	struct module *mod = data;
	struct vfsfast_opt **opt;
	char why[MODULE_NAME_LEN + 32];

	if (state == MODULE_STATE_GOING)
		vfsfast_bounded_module_going(mod);
	if (!is_livepatch_module(mod))
		return NOTIFY_DONE;
	mutex_lock(&vfsfast_mutex);
	switch (state) {
	case MODULE_STATE_COMING:
		for (opt = vfsfast_opts; *opt; opt++)
			vfsfast_opt_yield(*opt, mod->name);
		break;
	case MODULE_STATE_LIVE:
	case MODULE_STATE_GOING:
		vfsfast_lp_track(mod->name, state == MODULE_STATE_LIVE);
		snprintf(why, sizeof(why), "%s livepatch %s",
			 state == MODULE_STATE_LIVE ? "beside" : "after", mod->name);
		/* Also what a livepatch loaded before vfsfast held. */
		for (opt = vfsfast_opts; *opt; opt++)
			vfsfast_opt_rearm(*opt, why, vfsfast_lp_holder);
		break;
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
