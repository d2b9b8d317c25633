// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace_ops backend: one IPMODIFY ftrace_ops per target, or, where
 * the kernel calls every ops through the list walk, one for all targets.
 *
 * The target's ftrace site calls the kernel's ftrace trampoline, which
 * saves the argument registers and calls vfsfast_ftrace_thunk(); the thunk
 * sets the saved instruction pointer to the replacement, and the
 * trampoline "returns" there with the caller's return address still on
 * the stack.  Works on every kernel with DYNAMIC_FTRACE_WITH_REGS or
 * _ARGS and coexists with other non-IPMODIFY ftrace users, at the price
 * of the trampoline's register save and restore on every call.
 *
 * The observers of an optimization share one such ftrace_ops (the group),
 * whatever backend carries its replacements: a registration is a few
 * passes over every ftrace record of the kernel, about as long for one
 * site as for five, so an enable costs one registration for all the
 * observers instead of one each, and a disable one RCU-tasks wait.
 * Observers sit on rarely called functions (rename, setattr, filesystem
 * registration), where the trampoline's cost does not matter.
 */
#include <linux/ftrace.h>
#include <linux/hash.h>
#include <linux/module.h>

#include "vfsfast.h"

static void notrace vfsfast_ftrace_thunk(unsigned long ip,
					 unsigned long parent_ip,
					 struct ftrace_ops *ops,
					 struct vfsfast_fregs *fregs)
{
	struct vfsfast_func *func = container_of(ops, struct vfsfast_func, ops);

	vfsfast_set_ip(fregs, READ_ONCE(*func->redirect));
}

/*
 * The shared ops, where the architecture calls every ftrace_ops through
 * ftrace_ops_list_func() (VFSFAST_ARCH_FTRACE_LIST_WALK: arm64 without
 * DYNAMIC_FTRACE_WITH_CALL_OPS).  There every hooked call walks every
 * registered ops and tests its filter, about 40 instructions each: with
 * one ops per target, nine targets made each trip cost some 460
 * instructions instead of 125.  Instead every target the ftrace backend
 * carries is on one IPMODIFY ops, vfsfast_shared_ops, whose filter holds
 * exactly the armed sites (ftrace_set_filter_ip() on the registered ops),
 * and its callback finds the target by the site's address in a small
 * fixed table.  Where each ops has a trampoline of its own (x86-64), or
 * each site calls its one ops directly (CALL_OPS), one ops per target
 * costs nothing per target and needs no lookup: kept there.
 *
 * The table: every target the backend may carry gets a slot at load,
 * keyed by its site, open addressing with linear probing.  A slot is
 * never freed or moved while the module lives, so a lookup never misses
 * a site that is in the filter; the slot's redirect pointer is what arms
 * it.  At most one target of a site is armed (two optimizations that
 * take the same function, kernfs and kernfs_rcu): the second is refused
 * with EBUSY, as ftrace refuses a second IPMODIFY ops.  The callback only
 * reads (no lock, no atomic, no write to shared memory).
 *
 * Everything else is written under vfsfast_mutex, which serializes every
 * attach and detach.
 */
#define VFSFAST_SHARED_BITS	6
#define VFSFAST_SHARED_SLOTS	(1U << VFSFAST_SHARED_BITS)

struct vfsfast_shared_slot {
	unsigned long site;		/* 0: free */
	unsigned long *redirect;	/* the armed target's word, or NULL */
};

static struct vfsfast_shared_slot vfsfast_shared[VFSFAST_SHARED_SLOTS];
static struct ftrace_ops vfsfast_shared_ops;
/* Sites in vfsfast_shared_ops' filter; registered while there are any. */
static unsigned int vfsfast_shared_armed;

static void notrace vfsfast_shared_thunk(unsigned long ip,
					 unsigned long parent_ip,
					 struct ftrace_ops *ops,
					 struct vfsfast_fregs *fregs)
{
	unsigned int i = hash_long(ip, VFSFAST_SHARED_BITS), n;
	unsigned long site, *redirect;

	for (n = 0; n < VFSFAST_SHARED_SLOTS; n++) {
		site = READ_ONCE(vfsfast_shared[i].site);
		if (site == ip) {
			/* NULL: the target is being detached; stock runs. */
			redirect = READ_ONCE(vfsfast_shared[i].redirect);
			if (redirect)
				vfsfast_set_ip(fregs, READ_ONCE(*redirect));
			return;
		}
		if (!site)
			return;
		i = (i + 1) & (VFSFAST_SHARED_SLOTS - 1);
	}
}

/* @func's slot, made at its first prepare; NULL once the table is full. */
static struct vfsfast_shared_slot *vfsfast_shared_slot(struct vfsfast_func *func,
						       bool make)
{
	unsigned int i = hash_long(func->site, VFSFAST_SHARED_BITS), n;

	for (n = 0; n < VFSFAST_SHARED_SLOTS; n++) {
		if (vfsfast_shared[i].site == func->site)
			return &vfsfast_shared[i];
		if (!vfsfast_shared[i].site) {
			if (!make)
				return NULL;
			/* Unarmed: a callback that finds it now does nothing. */
			WRITE_ONCE(vfsfast_shared[i].site, func->site);
			return &vfsfast_shared[i];
		}
		i = (i + 1) & (VFSFAST_SHARED_SLOTS - 1);
	}
	return NULL;
}

/* At load, every target's, before any attach (main.c): ops not registered. */
static int vfsfast_shared_prepare(struct vfsfast_func *func)
{
	vfsfast_shared_ops.func = vfsfast_shared_thunk;
	vfsfast_shared_ops.flags = VFSFAST_FTRACE_FLAGS;
	return vfsfast_shared_slot(func, true) ? 0 : -ENOSPC;
}

/*
 * Arm @func's slot, then put its site in the filter: the first site
 * registers the ops (never registered with an empty filter, which would
 * trace every function), the others are added to the registered ops.
 * Another IPMODIFY user of the site makes either fail with EBUSY and
 * leaves the ops' filter, and the other targets on it, as they were.
 */
static int vfsfast_shared_attach(struct vfsfast_func *func)
{
	struct vfsfast_shared_slot *slot = vfsfast_shared_slot(func, false);
	int ret;

	if (!slot)
		return -ENOENT;
	if (slot->redirect)
		return -EBUSY;
	WRITE_ONCE(slot->redirect, func->redirect);
	ret = ftrace_set_filter_ip(&vfsfast_shared_ops, func->site, 0, 0);
	if (!ret && !vfsfast_shared_armed) {
		ret = register_ftrace_function(&vfsfast_shared_ops);
		if (ret)
			ftrace_set_filter_ip(&vfsfast_shared_ops, func->site,
					     1, 0);
	}
	if (ret) {
		/* The site never led here: nothing to wait for. */
		WRITE_ONCE(slot->redirect, NULL);
		return ret;
	}
	vfsfast_shared_armed++;
	return 0;
}

/*
 * Disarm @func's slot, then take its site out of the filter; the last
 * site unregisters the ops instead (an empty filter would trace every
 * function), and is taken out of the unregistered ops' filter after.
 *
 * "Off" is the stock kernel exactly: once this returns, no call may
 * enter the replacement through a callback that ran before.  A call past
 * the callback may be preempted (on a preemptible kernel) in the
 * trampoline's restore, its saved instruction pointer already the
 * replacement's.  unregister_ftrace_function() waits for those itself;
 * a filter change does not, so the same wait follows it here: a tasks-RCU
 * grace period (vfsfast_sync_tasks()), which ends only once every task
 * has passed a voluntary switch, so every callback that ran before has
 * returned and every call it redirected has entered the replacement.
 * Clearing the slot first makes a callback that still finds the site
 * (an old filter hash, read before the change) leave the call to the
 * stock code.  That wait stands where unregister_ftrace_function() stood,
 * under the same locks (vfsfast_mutex; in yield.c the module notifier
 * chain's, as before), and waits less: unregister waits under ftrace_lock
 * with a second, "rude", grace period on top.  It adds no sleeping wait
 * under a foreign lock.
 *
 * On failure the site stays in the filter and armed, as an ops whose
 * unregister failed stays registered: the caller routes it to the stock
 * code (vfsfast_break()) and retries.
 */
static int vfsfast_shared_detach(struct vfsfast_func *func)
{
	struct vfsfast_shared_slot *slot = vfsfast_shared_slot(func, false);
	int ret;

	if (!slot || slot->redirect != func->redirect)
		return -ENOENT;
	WRITE_ONCE(slot->redirect, NULL);
	if (vfsfast_shared_armed == 1) {
		ret = unregister_ftrace_function(&vfsfast_shared_ops);
		if (!ret)
			ftrace_set_filter_ip(&vfsfast_shared_ops, func->site,
					     1, 0);
	} else {
		ret = ftrace_set_filter_ip(&vfsfast_shared_ops, func->site,
					   1, 0);
		if (!ret)
			vfsfast_sync_tasks();
	}
	if (ret) {
		WRITE_ONCE(slot->redirect, func->redirect);
		return ret;
	}
	vfsfast_shared_armed--;
	return 0;
}

/* One ops per target, unless the kernel walks a list of them (above). */
static const bool vfsfast_ftrace_shared = VFSFAST_ARCH_FTRACE_LIST_WALK;

static int vfsfast_ftrace_prepare(struct vfsfast_func *func)
{
	if (vfsfast_ftrace_shared)
		return vfsfast_shared_prepare(func);
	func->ops.func = vfsfast_ftrace_thunk;
	func->ops.flags = VFSFAST_FTRACE_FLAGS;
	return vfsfast_filter_site(&func->ops, func, &func->filtered, true);
}

static void vfsfast_ftrace_release(struct vfsfast_func *func)
{
	/* A slot stays for the module's life (see above). */
	if (vfsfast_ftrace_shared)
		return;
	vfsfast_filter_site(&func->ops, func, &func->filtered, false);
}

static int vfsfast_ftrace_attach(struct vfsfast_func *func)
{
	if (vfsfast_ftrace_shared)
		return vfsfast_shared_attach(func);
	return register_ftrace_function(&func->ops);
}

static int vfsfast_ftrace_detach(struct vfsfast_func *func)
{
	if (vfsfast_ftrace_shared)
		return vfsfast_shared_detach(func);
	return unregister_ftrace_function(&func->ops);
}

/*
 * The group's callback: the observer whose text holds @ip (the site's
 * address; matched by range, which holds wherever an architecture puts
 * the site in the function's first instructions).  The filter names only
 * observer sites, set before the ops is registered and unchanged while it
 * is, so one always matches.
 */
static void notrace vfsfast_group_thunk(unsigned long ip,
					unsigned long parent_ip,
					struct ftrace_ops *ops,
					struct vfsfast_fregs *fregs)
{
	struct vfsfast_opt *opt = container_of(ops, struct vfsfast_opt,
					       observer_ops);
	struct vfsfast_func *func;

	for (func = opt->funcs; func->old_name; func++) {
		if (func->gfiltered && ip >= func->entry &&
		    ip < func->entry + func->size) {
			vfsfast_set_ip(fregs, READ_ONCE(*func->redirect));
			return;
		}
	}
}

void vfsfast_group_release(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;

	opt->observer_group = false;
	for (func = opt->funcs; func->old_name; func++)
		vfsfast_filter_site(&opt->observer_ops, func, &func->gfiltered,
				    false);
}

/*
 * Put every observer site of @opt in its group's filter.  Only for two
 * observers or more (one gains nothing, and would give up a direct
 * backend), and only where the ftrace backend may be used at all.
 * Without a group the observers attach one by one, as the replacements.
 * Not where the ftrace backend shares one ops among all its targets:
 * there a second registered ops is a second filter test in every hooked
 * call's list walk (about 40 instructions on 6.1-arm64), so the
 * observers go on the shared ops one by one instead, at the price of an
 * ftrace update per observer on enable and a grace period per observer
 * on disable.
 */
void vfsfast_group_prepare(struct vfsfast_opt *opt)
{
	const struct vfsfast_backend **b;
	struct vfsfast_func *func;
	bool allowed = false;
	int n = 0;

	for (b = vfsfast_backend_order; *b; b++)
		allowed |= *b == &vfsfast_backend_ftrace;
	for (func = opt->funcs; func->old_name; func++)
		n += func->observer;
	if (!allowed || n < 2 || vfsfast_ftrace_shared)
		return;
	opt->observer_ops.func = vfsfast_group_thunk;
	opt->observer_ops.flags = VFSFAST_FTRACE_FLAGS;
	for (func = opt->funcs; func->old_name; func++) {
		if (func->observer &&
		    vfsfast_filter_site(&opt->observer_ops, func,
					&func->gfiltered, true)) {
			vfsfast_group_release(opt);
			return;
		}
	}
	opt->observer_group = true;
}

int vfsfast_group_attach(struct vfsfast_opt *opt)
{
	return register_ftrace_function(&opt->observer_ops);
}

int vfsfast_group_detach(struct vfsfast_opt *opt)
{
	return unregister_ftrace_function(&opt->observer_ops);
}

MODULE_INFO(vfsfast_backend_ftrace, "available");

const struct vfsfast_backend vfsfast_backend_ftrace = {
	.name = "ftrace",
	.prepare = vfsfast_ftrace_prepare,
	.release = vfsfast_ftrace_release,
	.attach = vfsfast_ftrace_attach,
	.detach = vfsfast_ftrace_detach,
};
