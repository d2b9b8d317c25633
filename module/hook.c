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
#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "vfsfast.h"

#define VFSFAST_TARGET(name, proto)			\
	unsigned long vfsfast_redirect_##name, vfsfast_body_##name
#include "vfsfast_targets.h"
#undef VFSFAST_TARGET

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

static __printf(2, 3)
void vfsfast_set_reason(struct vfsfast_opt *opt, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	vsnprintf(opt->reason, sizeof(opt->reason), fmt, args);
	va_end(args);
	opt->unsupported = opt->reason;
	pr_info("%s: unsupported: %s\n", opt->name, opt->reason);
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
	unsigned long entry;

	entry = vfsfast_lookup_name(func->old_name, &func->site);
	if (!entry)
		return "symbol not found";
	if (func->old_addr && entry != func->old_addr)
		return "symbol lookup disagrees with the linker";
	if (!func->site)
		return "no ftrace site";
	*func->body = func->site + MCOUNT_INSN_SIZE;
	for (b = vfsfast_backend_order; *b; b++)
		if ((*b)->prepare(func))
			return "not traceable";
	return NULL;
}

/*
 * Resolve every target and its ftrace site, so that a kernel where a
 * function is missing or not traceable marks the optimization unsupported
 * at load instead of failing later.
 */
int vfsfast_opt_prepare(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;
	const char *why;
	int ret;

	if (opt->lacks) {
		vfsfast_set_reason(opt, "%s", opt->lacks);
		return -ENOENT;
	}
	for (func = opt->funcs; func->old_name; func++) {
		why = vfsfast_prepare_func(func);
		if (why) {
			vfsfast_set_reason(opt, "%s: %s", func->old_name, why);
			vfsfast_opt_release(opt);
			return -ENOENT;
		}
	}
	ret = opt->setup ? opt->setup(opt) : 0;
	if (ret) {
		vfsfast_set_reason(opt, "setup failed: %d", ret);
		vfsfast_opt_release(opt);
	}
	return ret;
}

void vfsfast_opt_release(struct vfsfast_opt *opt)
{
	const struct vfsfast_backend **b;
	struct vfsfast_func *func;

	for (func = opt->funcs; func->old_name; func++)
		for (b = vfsfast_backend_order; *b; b++)
			(*b)->release(func);
}

/* @opt's last target, for walking its table backwards. */
static struct vfsfast_func *vfsfast_last_func(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func = opt->funcs;

	while (func->old_name)
		func++;
	return func - 1;
}

/* In reverse table order: replacements go before the observers they trust. */
static void vfsfast_detach_all(struct vfsfast_opt *opt,
			       const struct vfsfast_backend *b)
{
	struct vfsfast_func *func;

	for (func = vfsfast_last_func(opt); func >= opt->funcs; func--) {
		if (func->attached)
			b->detach(func);
		func->attached = false;
	}
}

/*
 * Whether @func's ftrace site now calls or jumps somewhere.  A registration
 * can succeed and change no text: with sysctl kernel.ftrace_enabled=0,
 * ftrace accepts new users but leaves every site a NOP.  status must not
 * say active then.
 */
static bool vfsfast_site_live(struct vfsfast_func *func)
{
	u8 op;

	if (copy_from_kernel_nofault(&op, (void *)func->site, 1))
		return false;
	return op == 0xe8 || op == 0xe9;	/* call, jmp rel32 */
}

/* All targets of @opt with backend @b, or none. */
static int vfsfast_attach_all(struct vfsfast_opt *opt,
			      const struct vfsfast_backend *b,
			      const char **failed)
{
	struct vfsfast_func *func;
	int ret;

	for (func = opt->funcs; func->old_name; func++) {
		ret = b->attach(func);
		if (!ret && !vfsfast_site_live(func)) {
			b->detach(func);
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

/* Stock first for the replacements, last for the observers, as detaching. */
static void vfsfast_set_redirects(struct vfsfast_opt *opt, bool passthrough)
{
	struct vfsfast_func *func;

	if (passthrough) {
		for (func = vfsfast_last_func(opt); func >= opt->funcs; func--)
			WRITE_ONCE(*func->redirect, (unsigned long)func->stock);
		return;
	}
	for (func = opt->funcs; func->old_name; func++)
		WRITE_ONCE(*func->redirect, (unsigned long)func->new_func);
}

/*
 * Attach every target of @opt with the first backend that takes them all.
 * On failure *@failed names the target that could not be had.
 */
static int vfsfast_opt_attach(struct vfsfast_opt *opt, const char **failed)
{
	const struct vfsfast_backend **b;
	char tried[80] = "";
	int ret = -ENODEV;

	if (opt->arm && !opt->passthrough)
		opt->arm(opt);
	vfsfast_set_redirects(opt, opt->passthrough);
	for (b = vfsfast_backend_order; *b; b++) {
		ret = vfsfast_attach_all(opt, *b, failed);
		if (!ret)
			break;
		vfsfast_append(tried, sizeof(tried), (*b)->name, ret);
	}
	if (ret) {
		/* EBUSY: a livepatch, BPF trampoline or IPMODIFY ops has it. */
		snprintf(opt->conflict, sizeof(opt->conflict), "%s: %s (%s)",
			 *failed, ret == -EBUSY ?
			 "held by another ftrace user, or ftrace_enabled is 0" :
			 "cannot be hooked", tried);
		opt->last_error = ret;
		return ret;
	}
	strscpy(opt->skipped, tried, sizeof(opt->skipped));
	opt->backend = *b;
	opt->last_error = 0;
	opt->conflict[0] = '\0';
	opt->yielded_to[0] = '\0';
	opt->enabled = true;
	return 0;
}

static void vfsfast_opt_detach(struct vfsfast_opt *opt)
{
	if (opt->backend)
		vfsfast_detach_all(opt, opt->backend);
	opt->backend = NULL;
	opt->enabled = false;
}

/*
 * What sysfs and the enable= parameter ask for; logs the outcome in one
 * line.  Asking again for what is already in effect changes nothing.
 */
int vfsfast_opt_request(struct vfsfast_opt *opt, bool on)
{
	const char *failed = "";
	int ret;

	lockdep_assert_held(&vfsfast_mutex);
	if (!on) {
		bool was = opt->enabled || opt->requested;

		opt->requested = false;
		opt->yielded_to[0] = '\0';
		vfsfast_opt_detach(opt);
		if (was)
			pr_info("%s: disabled\n", opt->name);
		return 0;
	}
	if (opt->unsupported) {
		pr_info("%s: enable refused: unsupported: %s\n", opt->name,
			opt->unsupported);
		return -EOPNOTSUPP;
	}
	if (opt->disabled) {
		pr_info("%s: enable refused: off by the disable= parameter\n",
			opt->name);
		return -EPERM;
	}
	if (opt->enabled)
		return 0;
	opt->requested = true;
	ret = vfsfast_opt_attach(opt, &failed);
	if (ret) {
		pr_info("%s: enable refused: %s\n", opt->name, opt->conflict);
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
	if (!opt->enabled)
		return;
	vfsfast_opt_detach(opt);
	strscpy(opt->yielded_to, module, sizeof(opt->yielded_to));
	opt->yielded_func = NULL;
	pr_info("%s: yielding to livepatch %s while it loads\n", opt->name,
		module);
}

/*
 * Take back what was requested and is not in effect, now that livepatch
 * @module is live (it may have patched none of our targets) or gone.
 */
void vfsfast_opt_rearm(struct vfsfast_opt *opt, const char *module, bool gone)
{
	const char *failed = "";
	int ret;

	lockdep_assert_held(&vfsfast_mutex);
	if (!opt->requested || opt->enabled || opt->unsupported)
		return;
	ret = vfsfast_opt_attach(opt, &failed);
	if (!ret) {
		pr_info("%s: re-armed (%s) %s livepatch %s\n", opt->name,
			opt->backend->name, gone ? "after" : "beside", module);
		return;
	}
	if (ret == -EBUSY && !gone) {
		strscpy(opt->yielded_to, module, sizeof(opt->yielded_to));
		opt->yielded_func = failed;
		pr_info("%s: yielded: %s taken by %s\n", opt->name, failed,
			module);
	} else {
		pr_info("%s: not re-armed after livepatch %s: %s\n", opt->name,
			module, opt->conflict);
	}
}

/* Backends that fix the address in the site itself are asked to follow. */
int vfsfast_opt_set_passthrough(struct vfsfast_opt *opt, bool on)
{
	struct vfsfast_func *func;
	int ret = 0;

	lockdep_assert_held(&vfsfast_mutex);
	if (opt->arm && opt->passthrough && !on)
		opt->arm(opt);
	vfsfast_set_redirects(opt, on);
	if (!opt->backend || !opt->backend->retarget)
		goto out;
	/* In the order vfsfast_set_redirects() follows. */
	for (func = on ? vfsfast_last_func(opt) : opt->funcs;
	     func >= opt->funcs && func->old_name; func += on ? -1 : 1) {
		ret = opt->backend->retarget(func);
		if (ret)
			break;
	}
	if (ret) {
		/* Put back what every target was following. */
		vfsfast_set_redirects(opt, opt->passthrough);
		for (func = opt->funcs; func->old_name; func++)
			opt->backend->retarget(func);
		return ret;
	}
out:
	opt->passthrough = on;
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

/* Tasks in the replacement code of any optimization. */
static long vfsfast_inflight_sum(void)
{
	struct vfsfast_opt **opt;
	long sum = 0;

	for (opt = vfsfast_opts; *opt; opt++)
		sum += vfsfast_stat_sum(*opt, offsetof(struct vfsfast_stats, entered)) -
		       vfsfast_stat_sum(*opt, offsetof(struct vfsfast_stats, left));
	return sum;
}

/*
 * Called with every hook detached, before the module text goes away.  The
 * first grace period lets tasks that were sent to a replacement count
 * themselves in (or leave a trampoline they were preempted in); the wait
 * lets sleeping ones (a faulting copy_to_user) finish; the second grace
 * period lets those that have counted themselves out execute their last
 * instructions in our text.
 */
void vfsfast_drain(void)
{
	unsigned int waited = 0;

	vfsfast_sync_tasks();
	while (vfsfast_inflight_sum() > 0) {
		if (++waited % 500 == 0)
			pr_info("waiting for %ld task(s) in replacement code\n",
				vfsfast_inflight_sum());
		msleep(20);
	}
	vfsfast_sync_tasks();
}
