// SPDX-License-Identifier: GPL-2.0
/*
 * The hook engine: what enabling and disabling an optimization means,
 * whatever backend carries the redirect.
 *
 * Each target has a word, vfsfast_redirect_<name>, naming where its callers
 * go while the optimization is on (the replacement, or for passthrough
 * straight back to the stock body), and a word, vfsfast_body_<name>, naming its body just past
 * the ftrace site, through which replacements reach the stock code
 * (tramp.S).  A backend (backend_direct.c, backend_ftrace.c) does the
 * sending.  Enabling tries the backends in the order the backend=
 * parameter allows, all targets of an optimization with one backend or
 * none; disabling detaches them, so "off" is the stock kernel exactly.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/moduleparam.h>
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "vfsfast.h"

static const struct vfsfast_backend *const vfsfast_backends[] = {
	&vfsfast_backend_jmp, &vfsfast_backend_direct, &vfsfast_backend_ftrace,
};

/* The backends enabling may use, best first; NULL-terminated. */
const struct vfsfast_backend *vfsfast_backend_order[ARRAY_SIZE(vfsfast_backends) + 1];

/* @choice: "auto" (every backend this kernel has, best first) or a name. */
int vfsfast_hook_init(const char *choice)
{
	int i, n = 0;
	bool any = !strcmp(choice, "auto");

	for (i = 0; i < ARRAY_SIZE(vfsfast_backends); i++) {
		const struct vfsfast_backend *b = vfsfast_backends[i];

		if (!any && strcmp(choice, b->name))
			continue;
		if (b->unavailable) {
			pr_info("backend %s: unavailable: %s\n", b->name,
				b->unavailable);
			if (!any)
				return -EOPNOTSUPP;
			continue;
		}
		vfsfast_backend_order[n++] = b;
	}
	if (!n) {
		pr_err("backend=%s: unknown backend\n", choice);
		return -EINVAL;
	}
	return 0;
}

/* Move @opt to @state, which needs no reason; never out of a final one. */
static void vfsfast_set(struct vfsfast_opt *opt, enum vfsfast_state state)
{
	if (vfsfast_final(opt))
		return;
	opt->reason[0] = '\0';
	WRITE_ONCE(opt->state, state);
}

/* The same, for a state that status prints with its reason. */
static __printf(3, 4)
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

/*
 * Add (@on) or remove @func's ftrace site in @ops' filter, once; *@filtered
 * says which it is in.  ftrace_free_filter() is not exported before 6.2.
 */
int vfsfast_filter_site(struct ftrace_ops *ops, struct vfsfast_func *func,
			bool *filtered, bool on)
{
	int ret;

	if (*filtered == on)
		return 0;
	ret = ftrace_set_filter_ip(ops, func->site, !on, 0);
	if (!ret || !on)
		*filtered = on;
	return ret;
}

static const char *vfsfast_prepare_func(struct vfsfast_func *func)
{
	const struct vfsfast_backend **b;
	char part[64];
	unsigned long entry = 0;

	if (func->split) {
		snprintf(part, sizeof(part), "%s.part.0", func->old_name);
		entry = vfsfast_lookup_name(part, 0, &func->site, &func->size);
		func->split = entry;
	}
	if (!entry)
		entry = vfsfast_lookup_name(func->old_name, func->old_addr,
					    &func->site, &func->size);
	if (!entry)
		return "symbol not found";
	if (func->old_addr && !func->split && entry != func->old_addr)
		return "symbol lookup disagrees with the linker";
	if (!func->site)
		return "no ftrace site";
	func->entry = entry;
	*func->body = func->site + MCOUNT_INSN_SIZE;
	for (b = vfsfast_backend_order; *b; b++)
		if ((*b)->prepare(func))
			return "not traceable";
	return NULL;
}

/*
 * A function the replacements only call: its stub enters it at its first
 * instruction, ftrace site included, so that whoever traces or patches it
 * (a kprobe, a BPF program, a livepatch) sees vfsfast's calls as the
 * kernel's own.  Nothing is hooked.
 */
static const char *vfsfast_prepare_call(struct vfsfast_func *func)
{
	unsigned long entry, site, size;

	entry = vfsfast_lookup_name(func->old_name, func->old_addr, &site,
				    &size);
	if (!entry)
		return "symbol not found";
	if (func->old_addr && entry != func->old_addr)
		return "symbol lookup disagrees with the linker";
	func->entry = entry;
	/* Not hooked: only a check of a split part's shape probes it. */
	func->site = site;
	*func->body = entry;
	return NULL;
}

/* The names vfsfast_opt_prepare() will look up, for the load's one pass. */
void vfsfast_opt_want(const struct vfsfast_opt *opt)
{
	const struct vfsfast_func *func;

	if (opt->lacks)
		return;
	for (func = opt->calls; func->old_name; func++)
		if (!func->old_addr)
			vfsfast_symbols_want(func->old_name, "");
	for (func = opt->funcs; func->old_name; func++) {
		if (func->split)
			vfsfast_symbols_want(func->old_name, ".part.0");
		if (!func->old_addr)
			vfsfast_symbols_want(func->old_name, "");
	}
}

static bool vfsfast_has_observers(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;

	for (func = opt->funcs; func->old_name; func++)
		if (func->observer)
			return true;
	return false;
}

/*
 * Resolve every target and its ftrace site, and every function called
 * through a stub, so that a kernel where a function is missing or not
 * traceable marks the optimization unsupported at load instead of
 * failing later.
 */
int vfsfast_opt_prepare(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;
	const char *why;
	int ret;

	if (opt->lacks) {
		vfsfast_unsupported(opt, "%s", opt->lacks);
		return -ENOENT;
	}
	/*
	 * The replacements of an optimization with observers trust what the
	 * observers recorded only once quiesce.c has seen every task out of
	 * their stock code; where the architecture cannot walk stacks
	 * soundly yet, the optimization stays off.
	 */
	if (VFSFAST_ARCH_NO_QUIESCE && vfsfast_has_observers(opt)) {
		vfsfast_unsupported(opt, "%s", VFSFAST_ARCH_NO_QUIESCE);
		return -ENOENT;
	}
	for (func = opt->calls; func->old_name; func++) {
		why = vfsfast_prepare_call(func);
		if (why) {
			vfsfast_unsupported(opt, "%s: %s", func->old_name, why);
			return -ENOENT;
		}
	}
	for (func = opt->funcs; func->old_name; func++) {
		why = vfsfast_prepare_func(func);
		if (why) {
			vfsfast_unsupported(opt, "%s: %s", func->old_name, why);
			vfsfast_opt_release(opt);
			return -ENOENT;
		}
	}
	ret = opt->setup ? opt->setup(opt) : 0;
	if (!ret)
		vfsfast_group_prepare(opt);
	if (ret) {
		/* A setup that knows why says so itself. */
		if (READ_ONCE(opt->state) != VFSFAST_UNSUPPORTED)
			vfsfast_unsupported(opt, "setup failed: %d", ret);
		vfsfast_opt_release(opt);
	}
	return ret;
}

void vfsfast_opt_release(struct vfsfast_opt *opt)
{
	const struct vfsfast_backend **b;
	struct vfsfast_func *func;

	vfsfast_group_release(opt);
	for (func = opt->funcs; func->old_name; func++)
		for (b = vfsfast_backend_order; *b; b++)
			(*b)->release(func);
}

/* How many targets @opt has (none, for one the kernel cannot have). */
static int vfsfast_nfuncs(struct vfsfast_opt *opt)
{
	int n = 0;

	while (opt->funcs[n].old_name)
		n++;
	return n;
}

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
 * Point @func's callers at its replacement (@on) or at the stock code, and
 * have a backend that fixes the address in the site follow.  The one
 * writer of a redirect word.  A broken optimization's targets stay on the
 * stock code for good: a replacement may trust observers that are gone,
 * and nothing may route one back in (-EIO).
 */
static int vfsfast_route(struct vfsfast_opt *opt, struct vfsfast_func *func,
			 bool on)
{
	if (on && opt->state == VFSFAST_BROKEN)
		return -EIO;
	WRITE_ONCE(*func->redirect,
		   (unsigned long)(on ? func->new_func : func->stock));
	/* The group's callback reads the word at every call. */
	if (!func->attached || func->grouped || !opt->backend ||
	    !opt->backend->retarget)
		return 0;
	return opt->backend->retarget(func);
}

/*
 * Route @opt's observers (@observers) or its replacements: forwards when
 * turning them on, backwards when turning them off, as they attach and
 * detach.
 */
static int vfsfast_route_all(struct vfsfast_opt *opt, bool observers, bool on)
{
	int i, n = vfsfast_nfuncs(opt), ret;

	for (i = 0; i < n; i++) {
		struct vfsfast_func *func = &opt->funcs[on ? i : n - 1 - i];

		if (func->observer != observers)
			continue;
		ret = vfsfast_route(opt, func, on);
		if (ret)
			return ret;
	}
	return 0;
}

/* Set, under vfsfast_mutex, once the module's text is about to go. */
static bool vfsfast_exiting;

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

	for (i = vfsfast_nfuncs(opt); i-- > 0;)
		if (opt->funcs[i].attached)
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
	bool group = false;
	int i, ret;

	for (i = vfsfast_nfuncs(opt); i-- > 0;) {
		func = &opt->funcs[i];
		group |= func->grouped;
		if (!func->attached || func->grouped)
			continue;
		ret = vfsfast_detach_one(b, func);
		if (ret) {
			vfsfast_break(opt, func, ret);
			continue;
		}
		func->attached = false;
	}
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
static int vfsfast_go_live(struct vfsfast_opt *opt)
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
static int vfsfast_opt_attach(struct vfsfast_opt *opt, const char **failed)
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

/* Targets of @opt still attached; *@name, if given, is one of them. */
static int vfsfast_nattached(struct vfsfast_opt *opt, const char **name)
{
	struct vfsfast_func *func;
	int n = 0;

	for (func = opt->funcs; func->old_name; func++) {
		if (!func->attached)
			continue;
		if (name)
			*name = func->old_name;
		n++;
	}
	return n;
}

/*
 * Unhook @opt; off, unless a target would not let go (broken).  The
 * backend stays with a target still attached, for vfsfast_unhook_all() to
 * retry its detach.
 */
static void vfsfast_opt_detach(struct vfsfast_opt *opt)
{
	if (opt->backend)
		vfsfast_detach_all(opt, opt->backend);
	if (!vfsfast_nattached(opt, NULL))
		opt->backend = NULL;
	vfsfast_set(opt, VFSFAST_OFF);
}

/*
 * What sysfs and the enable= parameter ask for; logs the outcome in one
 * line.  Asking again for what is already in effect changes nothing.
 */
int vfsfast_opt_request(struct vfsfast_opt *opt, bool on)
{
	char was[sizeof(opt->reason)];
	const char *failed = "";
	bool was_yielded;
	int ret;

	lockdep_assert_held(&vfsfast_mutex);
	if (!on) {
		bool was = vfsfast_hooked(opt) || opt->requested;

		opt->requested = false;
		opt->holder[0] = '\0';
		vfsfast_opt_detach(opt);
		if (was)
			pr_info("%s: disabled\n", opt->name);
		return 0;
	}
	switch (opt->state) {
	case VFSFAST_UNSUPPORTED:
		pr_info("%s: enable refused: unsupported: %s\n", opt->name,
			opt->reason);
		return -EOPNOTSUPP;
	case VFSFAST_BROKEN:
		pr_info("%s: enable refused: broken: %s\n", opt->name,
			opt->reason);
		return -EIO;
	case VFSFAST_DISABLED:
		pr_info("%s: enable refused: off by the disable= parameter\n",
			opt->name);
		return -EPERM;
	case VFSFAST_ACTIVE:
	case VFSFAST_PASSTHROUGH:
		return 0;
	default:
		break;
	}
	was_yielded = opt->state == VFSFAST_YIELDED;
	strscpy(was, opt->reason, sizeof(was));
	opt->requested = true;
	ret = vfsfast_opt_attach(opt, &failed);
	if (ret) {
		pr_info("%s: enable refused: %s\n", opt->name, opt->reason);
		/* The livepatch it yielded to still holds it: still yielded. */
		if (was_yielded && ret == -EBUSY)
			vfsfast_set_why(opt, VFSFAST_YIELDED, "%s", was);
		return ret;
	}
	pr_info("%s: enabled (%s%s%s)\n", opt->name, opt->backend->name,
		opt->skipped[0] ? "; failed: " : "", opt->skipped);
	return 0;
}

/* A livepatch module is coming: let go of everything before it patches. */
void vfsfast_opt_yield(struct vfsfast_opt *opt, const char *module)
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
void vfsfast_opt_rearm(struct vfsfast_opt *opt, const char *why,
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

/*
 * Passthrough on: every target straight to the stock code, replacements
 * first.  Off: the observers back first, then the replacements once the
 * observers can be trusted, as on enable.
 */
int vfsfast_opt_set_passthrough(struct vfsfast_opt *opt, bool on)
{
	int ret;

	lockdep_assert_held(&vfsfast_mutex);
	if (on == opt->passthrough)
		return 0;
	if (on) {
		ret = vfsfast_route_all(opt, false, false);
		if (!ret)
			ret = vfsfast_route_all(opt, true, false);
	} else {
		ret = vfsfast_route_all(opt, true, true);
		if (!ret)
			ret = vfsfast_hooked(opt) ? vfsfast_go_live(opt) :
			      vfsfast_route_all(opt, false, true);
	}
	if (ret) {
		/* Put back what every target was following. */
		vfsfast_route_all(opt, true, !opt->passthrough);
		vfsfast_route_all(opt, false, !opt->passthrough);
		return ret;
	}
	opt->passthrough = on;
	if (vfsfast_hooked(opt))
		vfsfast_set(opt, on ? VFSFAST_PASSTHROUGH : VFSFAST_ACTIVE);
	return 0;
}

/* One of @opt's counters (at @offset in struct vfsfast_stats), all CPUs. */
unsigned long vfsfast_stat_sum(struct vfsfast_opt *opt, size_t offset)
{
	unsigned long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += *(unsigned long *)((char *)per_cpu_ptr(opt->stats, cpu) + offset);
	return sum;
}

/* Tasks in @opt's replacement code. */
static long vfsfast_inflight(struct vfsfast_opt *opt)
{
	return vfsfast_stat_sum(opt, offsetof(struct vfsfast_stats, entered)) -
	       vfsfast_stat_sum(opt, offsetof(struct vfsfast_stats, left));
}

/* Tasks in the replacement code of any optimization. */
static long vfsfast_inflight_sum(void)
{
	struct vfsfast_opt **opt;
	long sum = 0;

	for (opt = vfsfast_opts; *opt; opt++)
		sum += vfsfast_inflight(*opt);
	return sum;
}

/*
 * Sleep @ms without counting as load or as a hung task, and without
 * spinning when rmmod has a signal pending (msleep_interruptible() would
 * return at once, every time).
 */
static void vfsfast_idle_ms(unsigned int ms)
{
	schedule_timeout_idle(msecs_to_jiffies(ms));
}

/* How often a stuck target's detach is retried at exit, and said so. */
#define VFSFAST_UNHOOK_RETRY_MS	100
#define VFSFAST_UNHOOK_LOG_MS	10000

/*
 * Module exit, or a failed load: unhook every target, and return only once
 * no site leads into vfsfast's text, since the loader frees it next and
 * neither module_exit nor a failed init can refuse.  A target whose
 * detach fails here is routed to the stock code (vfsfast_break()) and its
 * detach retried, without bound: returning would leave a call site, or
 * ftrace's list of ops, pointing at freed memory.  Said in the log at
 * once and every VFSFAST_UNHOOK_LOG_MS.
 */
void vfsfast_unhook_all(void)
{
	unsigned int waited = 0;
	struct vfsfast_opt **opt;
	const char *stuck = NULL;
	int left;

	for (;;) {
		left = 0;
		mutex_lock(&vfsfast_mutex);
		vfsfast_exiting = true;
		for (opt = vfsfast_opts; *opt; opt++) {
			vfsfast_opt_request(*opt, false);
			left += vfsfast_nattached(*opt, &stuck);
		}
		mutex_unlock(&vfsfast_mutex);
		if (!left)
			break;
		if (waited % VFSFAST_UNHOOK_LOG_MS == 0)
			pr_err("%d target(s) still hooked (%s) after %u ms: retrying every %d ms; the module cannot go before they let go\n",
			       left, stuck, waited, VFSFAST_UNHOOK_RETRY_MS);
		vfsfast_idle_ms(VFSFAST_UNHOOK_RETRY_MS);
		waited += VFSFAST_UNHOOK_RETRY_MS;
	}
	if (waited)
		pr_info("every target unhooked after %u ms of retries\n", waited);
}

/* How long the drain waits before it names who is still inside. */
#define VFSFAST_DRAIN_MS	10000

/*
 * Called with every hook detached, before the module text goes away.  The
 * first grace period lets tasks that were sent to a replacement count
 * themselves in (or leave a trampoline they were preempted in); the wait
 * lets the ones still inside finish; the second grace period lets those
 * that have counted themselves out execute their last instructions in
 * our text.  Nothing inside can wait for long: a replacement holds a
 * module reference across any call that may sleep for as long as user
 * space decides (vfsfast_hold()), so that rmmod answers EBUSY instead of
 * coming here.  A task still inside is named in the log every
 * VFSFAST_DRAIN_MS and waited for in idle sleeps, which the hung-task
 * detector does not see (the log is all there is), without bound, since
 * the text it will return to cannot be freed: -EBUSY says so.
 */
int vfsfast_drain(void)
{
	unsigned int waited = 0;
	struct vfsfast_opt **opt;
	long inside;

	vfsfast_sync_tasks();
	while (vfsfast_inflight_sum() > 0) {
		if (waited && waited % VFSFAST_DRAIN_MS == 0) {
			for (opt = vfsfast_opts; *opt; opt++) {
				inside = vfsfast_inflight(*opt);
				if (inside > 0)
					pr_warn("%s: %ld task(s) still inside after %u ms\n",
						(*opt)->name, inside, waited);
			}
		}
		vfsfast_idle_ms(20);
		waited += 20;
	}
	vfsfast_sync_tasks();
	return waited > VFSFAST_DRAIN_MS ? -EBUSY : 0;
}
