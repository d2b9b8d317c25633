// SPDX-License-Identifier: GPL-2.0
/*
 * The hook engine: one IPMODIFY ftrace_ops per function taken over.
 *
 * When an optimization is enabled, the fentry call of each of its target
 * functions goes to vfsfast_ftrace_thunk(), which rewrites the return
 * address so that the caller's call continues in the replacement, with the
 * caller's arguments and stack.  A replacement that wants the stock
 * behaviour calls the target, whose fentry comes back here: a call that
 * comes from vfsfast's own text is let through untouched.  Disabling
 * unregisters the ops, so "off" is the stock kernel exactly.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/ftrace.h>
#include <linux/module.h>

#include "vfsfast.h"

DEFINE_PER_CPU(long, vfsfast_inflight);

static unsigned long vfsfast_text_start, vfsfast_text_end;

int vfsfast_hook_init(void)
{
	vfsfast_module_text(&vfsfast_text_start, &vfsfast_text_end);
	return vfsfast_text_end > vfsfast_text_start ? 0 : -EINVAL;
}

/*
 * parent_ip is the return address of the call to the target: inside our
 * text exactly when a replacement falls back to the stock function (the
 * module is built with -fno-optimize-sibling-calls, so such a fallback is
 * never a tail jump that would hide the caller).
 */
static void notrace vfsfast_ftrace_thunk(unsigned long ip,
					 unsigned long parent_ip,
					 struct ftrace_ops *ops,
					 struct vfsfast_fregs *fregs)
{
	struct vfsfast_func *func = container_of(ops, struct vfsfast_func, ops);

	if (parent_ip >= vfsfast_text_start && parent_ip < vfsfast_text_end)
		return;
	vfsfast_set_ip(fregs, READ_ONCE(func->redirect));
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
 * Resolve every target and attach it to its ops' filter, so that a kernel
 * where a function is missing or not traceable marks the optimization
 * unsupported at load instead of failing later.
 */
int vfsfast_opt_prepare(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;
	int ret;

	for (func = opt->funcs; func->old_name; func++) {
		func->target = func->old_addr ? func->old_addr :
			       vfsfast_lookup_name(func->old_name);
		if (!func->target) {
			vfsfast_set_reason(opt, "%s: symbol not found",
					   func->old_name);
			goto fail;
		}
		func->ops.func = vfsfast_ftrace_thunk;
		func->ops.flags = VFSFAST_FTRACE_FLAGS;
		ret = ftrace_set_filter_ip(&func->ops, func->target, 0, 0);
		if (ret) {
			vfsfast_set_reason(opt, "%s: not traceable (%d)",
					   func->old_name, ret);
			goto fail;
		}
		func->filtered = true;
	}
	return 0;
fail:
	vfsfast_opt_release(opt);
	return -ENOENT;
}

void vfsfast_opt_release(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;

	for (func = opt->funcs; func->old_name; func++) {
		if (!func->filtered)
			continue;
		/* ftrace_free_filter() is not exported before 6.2. */
		ftrace_set_filter_ip(&func->ops, func->target, 1, 0);
		func->filtered = false;
	}
}

static void vfsfast_unregister(struct vfsfast_func *func)
{
	int ret;

	if (!func->registered)
		return;
	ret = unregister_ftrace_function(&func->ops);
	WARN_ON_ONCE(ret);
	func->registered = false;
}

/* All or nothing: a failure leaves no function of the optimization hooked. */
int vfsfast_opt_enable(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;
	int ret = 0;

	lockdep_assert_held(&vfsfast_mutex);
	if (opt->unsupported)
		return -EOPNOTSUPP;
	if (opt->enabled)
		return 0;
	for (func = opt->funcs; func->old_name; func++) {
		WRITE_ONCE(func->redirect, (unsigned long)(opt->passthrough ?
				func->passthru_func : func->new_func));
		ret = register_ftrace_function(&func->ops);
		if (ret) {
			snprintf(opt->conflict, sizeof(opt->conflict),
				 ret == -EBUSY ? "%s: held by another IPMODIFY ftrace user" :
				 "%s: cannot be hooked", func->old_name);
			pr_info("%s: %s (%d)\n", opt->name, opt->conflict, ret);
			break;
		}
		func->registered = true;
	}
	if (ret) {
		for (func = opt->funcs; func->old_name; func++)
			vfsfast_unregister(func);
		opt->last_error = ret;
		return ret;
	}
	opt->last_error = 0;
	opt->conflict[0] = '\0';
	opt->enabled = true;
	return 0;
}

void vfsfast_opt_disable(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;

	lockdep_assert_held(&vfsfast_mutex);
	for (func = opt->funcs; func->old_name; func++)
		vfsfast_unregister(func);
	opt->enabled = false;
}

void vfsfast_opt_set_passthrough(struct vfsfast_opt *opt, bool on)
{
	struct vfsfast_func *func;

	lockdep_assert_held(&vfsfast_mutex);
	opt->passthrough = on;
	for (func = opt->funcs; func->old_name; func++)
		WRITE_ONCE(func->redirect, (unsigned long)(on ?
				func->passthru_func : func->new_func));
}

static long vfsfast_inflight_sum(void)
{
	long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(vfsfast_inflight, cpu);
	return sum;
}

/*
 * Called with every hook unregistered, before the module text goes away.
 * The first grace period lets tasks that were sent to a replacement count
 * themselves in; the wait lets sleeping ones (a faulting copy_to_user)
 * finish; the second grace period lets those that have counted themselves
 * out execute their last instructions in our text.
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
