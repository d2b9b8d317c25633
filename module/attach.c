// SPDX-License-Identifier: GPL-2.0
/*
 * The attach room (engine.h): attaching an optimization's targets with
 * the first backend that takes them all, observers before replacements,
 * and detaching them again; a target that will not let go breaks it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "engine.h"

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only (make VFSFAST_FAULT_INJECT=1): a detach of the target
 * named here fails as if ftrace had refused it, and its site stays hooked;
 * fail_detach_times bounds how many more times (-1: every time).  Detaches
 * run under vfsfast_mutex, which serializes the count.
 */
static char *fail_detach = "";
module_param(fail_detach, charp, 0644);
MODULE_PARM_DESC(fail_detach, "test builds: make detaching this target fail");
static int fail_detach_times = -1;
module_param(fail_detach_times, int, 0644);
MODULE_PARM_DESC(fail_detach_times,
		 "test builds: how many more detaches of fail_detach fail (-1: all)");

static bool vfsfast_fi_detach_fails(struct vfsfast_func *func)
{
	if (!sysfs_streq(func->old_name, fail_detach) || !fail_detach_times)
		return false;
	if (fail_detach_times > 0)
		fail_detach_times--;
	return true;
}
#else
static bool vfsfast_fi_detach_fails(struct vfsfast_func *func)
{
	return false;
}
#endif

static int vfsfast_detach_one(const struct vfsfast_backend *b,
			      struct vfsfast_func *func)
{
	if (vfsfast_fi_detach_fails(func))
		return -EIO;
	return b->detach(func);
}

/*
 * Unregister @opt's observer group; on failure *@stuck names the observer
 * the failure is reported for (in test builds, the one fail_detach names).
 */
static int vfsfast_detach_group(struct vfsfast_opt *opt,
				struct vfsfast_func **stuck)
{
	struct vfsfast_func *func;

	*stuck = NULL;
	for (func = opt->funcs; func->old_name; func++) {
		if (!func->grouped)
			continue;
		if (!*stuck)
			*stuck = func;
		if (vfsfast_fi_detach_fails(func)) {
			*stuck = func;
			return -EIO;
		}
	}
	return vfsfast_group_detach(opt);
}

/*
 * @opt's replacements are about to stop being reached (@begin), or no
 * longer are: then what they made goes back to stock form before its
 * observers, which know how to free it, stop (struct vfsfast_opt,
 * ->unshare).  Idempotent: a second call finds nothing left.
 */
void vfsfast_unshare(struct vfsfast_opt *opt, bool begin)
{
	if (opt->unshare)
		opt->unshare(opt, begin);
}

/* Set, under vfsfast_mutex, once the module's text is about to go. */
bool vfsfast_exiting;

/*
 * A target that cannot be unhooked still leads into vfsfast's text: send
 * it to the stock code (its replacement may trust observers that are
 * gone) and refuse every knob write from now on.  At run time the module
 * pins itself, so that rmmod refuses.  A pin cannot hold a module whose
 * exit is already running, nor fail a load: there vfsfast_unhook_all()
 * retries the detach until the site lets go.
 */
static void vfsfast_break(struct vfsfast_opt *opt, struct vfsfast_func *func,
			  int err)
{
	int i;

	/* Replacements first: the observers may free what they made. */
	vfsfast_unshare(opt, true);
	for (i = vfsfast_nfuncs(opt); i-- > 0;)
		if (opt->funcs[i].attached && !opt->funcs[i].observer)
			vfsfast_route(opt, &opt->funcs[i], false);
	vfsfast_unshare(opt, false);
	for (i = vfsfast_nfuncs(opt); i-- > 0;)
		if (opt->funcs[i].attached && opt->funcs[i].observer)
			vfsfast_route(opt, &opt->funcs[i], false);
	if (opt->state == VFSFAST_BROKEN)
		return;
	vfsfast_set_why(opt, VFSFAST_BROKEN, "%s: detach failed (%d)",
			func->old_name, err);
	if (vfsfast_exiting) {
		pr_err("%s: broken: %s; unloading waits until it lets go\n",
		       opt->name, opt->reason);
		return;
	}
	__module_get(THIS_MODULE);
	pr_err("%s: broken: %s; the module stays loaded and the optimization off\n",
	       opt->name, opt->reason);
}

/*
 * In reverse table order: replacements go before the observers they trust.
 * A target that fails to detach stays attached, and breaks @opt.
 */
static void vfsfast_detach_all(struct vfsfast_opt *opt,
			       const struct vfsfast_backend *b)
{
	struct vfsfast_func *func;
	bool group = false, unshared = false;
	int i, ret;

	vfsfast_unshare(opt, true);
	for (i = vfsfast_nfuncs(opt); i-- > 0;) {
		func = &opt->funcs[i];
		group |= func->grouped;
		/* Observers come first in the table: the replacements are gone. */
		if (func->observer && !unshared) {
			vfsfast_unshare(opt, false);
			unshared = true;
		}
		if (!func->attached || func->grouped)
			continue;
		ret = vfsfast_detach_one(b, func);
		if (ret) {
			vfsfast_break(opt, func, ret);
			continue;
		}
		func->attached = false;
	}
	if (!unshared)
		vfsfast_unshare(opt, false);
	/* Observers come first in the table: the group goes last. */
	if (!group)
		return;
	ret = vfsfast_detach_group(opt, &func);
	if (ret) {
		vfsfast_break(opt, func, ret);
		return;
	}
	for (func = opt->funcs; func->old_name; func++) {
		if (func->grouped)
			func->attached = func->grouped = false;
	}
}

/*
 * Whether @func's ftrace site now calls or jumps somewhere.  A registration
 * can succeed and change no text: with sysctl kernel.ftrace_enabled=0,
 * ftrace accepts new users but leaves every site a NOP.  status must not
 * say active then.  What a live site looks like is the architecture's
 * (module/arch/<arch>/site.c).
 */
static bool vfsfast_site_live(struct vfsfast_func *func)
{
	return vfsfast_arch_site_live(func->site);
}

/* Which of an optimization's targets vfsfast_attach_all() attaches. */
#define VFSFAST_OBSERVERS	1
#define VFSFAST_REPLACEMENTS	2

/*
 * The targets of @opt that @which names, with backend @b; on failure
 * every target of @opt is detached again, those attached before included.
 */
static int vfsfast_attach_all(struct vfsfast_opt *opt,
			      const struct vfsfast_backend *b,
			      const char **failed, int which)
{
	struct vfsfast_func *func;
	int ret;

	if ((which & VFSFAST_OBSERVERS) && opt->observer_group &&
	    !vfsfast_group_attach(opt)) {
		which &= ~VFSFAST_OBSERVERS;
		for (func = opt->funcs; func->old_name; func++) {
			if (func->gfiltered)
				func->attached = func->grouped = true;
		}
		for (func = opt->funcs; func->old_name; func++) {
			if (func->grouped && !vfsfast_site_live(func)) {
				*failed = func->old_name;
				vfsfast_detach_all(opt, b);
				return -EBUSY;
			}
		}
	}
	/*
	 * Without a group, or where it was refused (another IPMODIFY user of
	 * one of its sites), one by one: the refusal then names the target.
	 */
	for (func = opt->funcs; func->old_name; func++) {
		if (!(which & (func->observer ? VFSFAST_OBSERVERS :
					      VFSFAST_REPLACEMENTS)))
			continue;
		ret = b->attach(func);
		if (!ret && !vfsfast_site_live(func)) {
			/* Registered, so detached below with the others. */
			func->attached = true;
			ret = -EBUSY;
		}
		if (ret) {
			*failed = func->old_name;
			vfsfast_detach_all(opt, b);
			return ret;
		}
		func->attached = true;
	}
	return 0;
}

static void vfsfast_append(char *buf, size_t size, const char *name, int err)
{
	size_t len = strlen(buf);

	snprintf(buf + len, size - len, "%s%s %d", len ? ", " : "", name, err);
}

/*
 * Make @opt's replacements go live, its observers being live.  The
 * invariant every optimization with observers relies on: a replacement
 * never trusts what the observers record before every call that entered
 * an observer's target unobserved has left it (quiesce.c); then ->arm()
 * forgets whatever was kept before.  Only after that are the replacements
 * routed in.
 */
int vfsfast_go_live(struct vfsfast_opt *opt)
{
	int ret;

	if (vfsfast_has_observers(opt)) {
		ret = vfsfast_quiesce(opt);
		if (ret)
			return ret;
	}
	if (opt->arm)
		opt->arm(opt);
	return vfsfast_route_all(opt, false, true);
}

/*
 * An optimization with observers, its observers attached with @b: wait
 * for the calls that entered them unobserved, forget what was kept
 * meanwhile (vfsfast_go_live()), and only then attach the replacements,
 * routed in from their first call.  Attaching them earlier, routed to the
 * stock code, and routing them in afterwards kept the same order, but the
 * jmp backend fixes the address in the site: each routing was a second
 * ftrace update per replacement.  *@live says whether the wait failed
 * (false: every target detached again).
 */
static int vfsfast_attach_staged(struct vfsfast_opt *opt,
				 const struct vfsfast_backend *b,
				 const char **failed, bool *live)
{
	int ret;

	*live = false;
	ret = vfsfast_go_live(opt);
	if (ret) {
		*failed = opt->funcs[0].old_name;
		vfsfast_detach_all(opt, b);
		return ret;
	}
	*live = true;
	return vfsfast_attach_all(opt, b, failed, VFSFAST_REPLACEMENTS);
}

/*
 * Attach every target of @opt with the first backend that takes them all.
 * On failure *@failed names the target that could not be had.  Where
 * there are observers they are attached first, and the replacements only
 * once the observers can be trusted (vfsfast_attach_staged()); in
 * passthrough, where no replacement runs, all at once.
 */
int vfsfast_opt_attach(struct vfsfast_opt *opt, const char **failed)
{
	const struct vfsfast_backend **b;
	bool staged = vfsfast_has_observers(opt) && !opt->passthrough;
	bool live = true;
	char tried[80] = "";
	const char *const *cover;
	const char *who;
	int ret = -ENODEV;

	/*
	 * A livepatch of a function the fast path stands in for would be
	 * stepped around by every call the fast path answers: yield to it,
	 * as ftrace makes every backend yield to one of a target.
	 */
	for (cover = opt->covers; cover && *cover; cover++) {
		who = vfsfast_lp_holder(*cover);
		if (who) {
			*failed = *cover;
			vfsfast_set_why(opt, VFSFAST_YIELDED, "%s taken by %s",
					*cover, who);
			strscpy(opt->holder, who, sizeof(opt->holder));
			opt->last_error = -EBUSY;
			return -EBUSY;
		}
	}
	vfsfast_route_all(opt, true, !opt->passthrough);
	vfsfast_route_all(opt, false, false);
	for (b = vfsfast_backend_order; *b; b++) {
		vfsfast_route_all(opt, false, !opt->passthrough && !staged);
		ret = vfsfast_attach_all(opt, *b, failed, staged ?
					 VFSFAST_OBSERVERS :
					 VFSFAST_OBSERVERS | VFSFAST_REPLACEMENTS);
		if (!ret && staged)
			ret = vfsfast_attach_staged(opt, *b, failed, &live);
		if (!ret || !live)
			break;
		vfsfast_append(tried, sizeof(tried), (*b)->name, ret);
		/* Its rollback could not unhook a target: try nothing else. */
		if (opt->state == VFSFAST_BROKEN)
			break;
	}
	if (ret && live) {
		/* EBUSY: a livepatch, BPF trampoline or IPMODIFY ops has it. */
		vfsfast_set_why(opt, VFSFAST_CONFLICT, "%s: %s (%s)", *failed,
				ret == -EBUSY ?
				"held by another ftrace user, or ftrace_enabled is 0" :
				"cannot be hooked", tried);
		opt->last_error = ret;
		return ret;
	}
	if (!ret) {
		opt->backend = *b;
		/* Without observers, ->arm() runs with the replacements in. */
		if (!staged && opt->arm && !opt->passthrough)
			ret = vfsfast_go_live(opt);
		if (ret) {
			*failed = opt->funcs[0].old_name;
			vfsfast_detach_all(opt, opt->backend);
		}
	}
	if (ret) {
		opt->backend = NULL;
		vfsfast_set_why(opt, VFSFAST_CONFLICT,
				"calls entered before the hooks did not finish (%d)",
				ret);
		opt->last_error = ret;
		return ret;
	}
	strscpy(opt->skipped, tried, sizeof(opt->skipped));
	opt->last_error = 0;
	opt->holder[0] = '\0';
	vfsfast_set(opt, opt->passthrough ? VFSFAST_PASSTHROUGH : VFSFAST_ACTIVE);
	return 0;
}

/*
 * Unhook @opt; off, unless a target would not let go (broken).  The
 * backend stays with a target still attached, for vfsfast_unhook_all() to
 * retry its detach.
 */
void vfsfast_opt_detach(struct vfsfast_opt *opt)
{
	if (opt->backend)
		vfsfast_detach_all(opt, opt->backend);
	if (!vfsfast_nattached(opt, NULL))
		opt->backend = NULL;
	vfsfast_set(opt, VFSFAST_OFF);
}
