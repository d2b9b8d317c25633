/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vfsfast: fast paths for hot VFS functions, installed at run time by
 * ftrace redirection and switched on and off per optimization in sysfs.
 *
 * An optimization is a table, in the manner of livepatch's klp_func arrays:
 * for each kernel function it takes over, the symbol and the replacement
 * (VFSFAST_FUNC()).
 * The fields above the "engine" comment are the optimization's to fill; the
 * ones below belong to the hook engine and the sysfs code.
 */
#ifndef _VFSFAST_H
#define _VFSFAST_H

#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fsnotify_backend.h>
#include <linux/ftrace.h>
#include <linux/kernfs.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/types.h>

#include "compat.h"

#define VFSFAST_VERSION "0.1.0"

struct vfsfast_func {
	/* Target symbol; also the name reported in sysfs and dmesg. */
	const char *old_name;
	/* Address of the target when it is exported, else 0. */
	unsigned long old_addr;
	/* Replacement: same prototype as the target. */
	void *new_func;
	/* This target's code in tramp.S and the words it reads (VFSFAST_FUNC). */
	void (*tramp)(void);
	/*
	 * vfsfast_stock_<name>(): also where the "passthrough" knob sends
	 * callers, so that it measures what the redirect alone costs.
	 */
	void *stock;
	unsigned long *redirect;	/* where the hook sends callers */
	unsigned long *body;		/* the target just past its ftrace site */
	/*
	 * An observer calls the stock function and records what it changed,
	 * for the replacements of the same optimization to trust.  Observers
	 * go live first; the replacements only once no call that entered an
	 * observer's target unobserved is left (quiesce.c).
	 */
	bool observer;

	/* engine */
	unsigned long entry;		/* the target's text: entry, size */
	unsigned long size;
	unsigned long site;		/* its ftrace site */
	unsigned long direct;		/* what a direct site calls or jumps to */
	struct ftrace_ops ops;		/* ftrace backend */
	struct ftrace_ops dops;		/* direct backends, where named by ops */
	bool filtered;
	bool dfiltered;
	bool attached;
};

/* Generated per line of vfsfast_targets.h: tramp.S's symbols and words. */
#define VFSFAST_TARGET(name, proto)				\
	extern unsigned long vfsfast_redirect_##name;		\
	extern unsigned long vfsfast_body_##name;		\
	void vfsfast_tramp_##name(void);			\
	extern typeof(proto) vfsfast_stock_##name
#include "vfsfast_targets.h"
#undef VFSFAST_TARGET

/*
 * The fields of a table entry for target @name (a line of
 * vfsfast_targets.h), used as { VFSFAST_FUNC(...) }; @exported is its
 * address when the kernel exports it, else 0.  A replacement whose
 * prototype is not its target's does not build.
 */
#define VFSFAST_FUNC(name, exported, new)				\
	.old_name = #name,						\
	.old_addr = (unsigned long)(exported),				\
	.new_func = (char *)(new) +					\
		BUILD_BUG_ON_ZERO(!__same_type(&(new), &vfsfast_stock_##name)), \
	.tramp = vfsfast_tramp_##name,					\
	.stock = vfsfast_stock_##name,					\
	.redirect = &vfsfast_redirect_##name,				\
	.body = &vfsfast_body_##name

/* An observer's table entry: VFSFAST_FUNC() that goes live first. */
#define VFSFAST_OBSERVER(name, exported, new)				\
	VFSFAST_FUNC(name, exported, new),				\
	.observer = true

/*
 * What `vfsfast check` reads from a module built for a kernel that is not
 * running (modinfo): for each optimization, its functions and what that
 * kernel already has upstream, as the compat probes decided it.
 */
#define VFSFAST_OPT_INFO(name, functions, upstream) \
	MODULE_INFO(vfsfast_opt_##name, "functions=" functions " upstream=" upstream)

/* A way of sending a target's callers to its replacement. */
struct vfsfast_backend {
	const char *name;
	/* Why the running kernel cannot use it, or NULL. */
	const char *unavailable;
	int (*prepare)(struct vfsfast_func *func);
	void (*release)(struct vfsfast_func *func);
	/* Start sending callers to *func->redirect. */
	int (*attach)(struct vfsfast_func *func);
	/* Stop; on failure the site may still lead to vfsfast. */
	int (*detach)(struct vfsfast_func *func);
	/*
	 * *func->redirect changed while attached: follow it.  NULL when the
	 * hook reads *func->redirect at every call.
	 */
	int (*retarget)(struct vfsfast_func *func);
};

extern const struct vfsfast_backend vfsfast_backend_jmp;
extern const struct vfsfast_backend vfsfast_backend_direct;
extern const struct vfsfast_backend vfsfast_backend_ftrace;

/*
 * Per CPU, per optimization.  A task may enter on one CPU and leave on
 * another, so only sums over all CPUs mean anything: entered - left is the
 * number of tasks in replacement code, left - fallbacks the calls the fast
 * path answered.  Counting a hit this way costs nothing on top of the
 * in-flight count that unloading needs anyway.
 */
struct vfsfast_stats {
	unsigned long entered;
	unsigned long left;
	unsigned long fallbacks;
	/* Fast-path answers counted by vfsfast_hit(), outside entered/left. */
	unsigned long hits;
};

struct vfsfast_opt {
	const char *name;
	/* NULL-terminated (old_name == NULL) array of functions taken over. */
	struct vfsfast_func *funcs;
	/*
	 * What the running kernel already has of this optimization, as the
	 * kernel names it (e.g. "IOP_CACHED_LINK"), or NULL if it has none.
	 * Decided at build time by the compat probes.
	 */
	const char *upstream;
	/* Its counters: &vfsfast_stats_<name>, from VFSFAST_STATS(). */
	struct vfsfast_stats __percpu *stats;
	/*
	 * Why the kernel it was built for cannot have it (the compat layer's
	 * verdict), or NULL; the module loads and says so in status.
	 */
	const char *lacks;
	/*
	 * Never enabled by enable=auto: it changes what users can observe
	 * (documented), so only an explicit request turns it on.
	 */
	bool opt_in;
	/* Run time lookups it needs before it can be enabled; 0 or -errno. */
	int (*setup)(struct vfsfast_opt *opt);
	/*
	 * Called before its replacements go live (enable, re-arm after a
	 * livepatch, passthrough turned off), with its observers live and
	 * every call that entered an observer's target unobserved finished,
	 * so that the replacements forget what they kept while no observer
	 * ran.  Targets are detached in reverse table order.
	 */
	void (*arm)(struct vfsfast_opt *opt);

	/* engine */
	const char *unsupported;	/* reason, or NULL when supported */
	char reason[96];
	/* Why the last enable failed, while another user holds a target. */
	char conflict[160];
	/* Preferred backends the last successful enable could not use. */
	char skipped[160];
	const struct vfsfast_backend *backend;	/* in use while enabled */
	/* The livepatch module it let go of its targets for, or "". */
	char yielded_to[MODULE_NAME_LEN];
	/* The target that livepatch took, once known. */
	const char *yielded_func;
	int last_error;
	/*
	 * "<function>: <why>" once a target could not be unhooked: the
	 * module pins itself, since that site still leads into its text, and
	 * refuses every further enable.
	 */
	char broken[96];
	bool requested;		/* what was asked for: 1 written, enable= */
	bool enabled;		/* in effect: hooks attached */
	bool disabled;		/* off by the disable= parameter */
	bool passthrough;
	struct kobject *kobj;
};

/* Every optimization, NULL-terminated; defined in main.c. */
extern struct vfsfast_opt *vfsfast_opts[];
/* Serializes every state change of every optimization. */
extern struct mutex vfsfast_mutex;

/*
 * Each optimization's counters are a per-CPU variable of its own, so that
 * counting is one instruction with no pointer to load.  Every replacement
 * brackets its work, the call of the stock function included, with
 * vfsfast_enter() and vfsfast_leave(), so unload can wait for the tasks
 * inside it.
 */
#define VFSFAST_STATS(name) \
	static DEFINE_PER_CPU(struct vfsfast_stats, vfsfast_stats_##name)
#define vfsfast_enter(name)	this_cpu_inc(vfsfast_stats_##name.entered)
#define vfsfast_leave(name)	this_cpu_inc(vfsfast_stats_##name.left)
#define vfsfast_fallback(name)	this_cpu_inc(vfsfast_stats_##name.fallbacks)
/*
 * A fast path that cannot sleep and calls nothing needs no in-flight
 * count: the drain's RCU-tasks grace periods wait for a task preempted in
 * it, as they do for one in a trampoline.  One increment instead of two,
 * for replacements whose whole budget is a few dozen instructions.
 */
#define vfsfast_hit(name)	this_cpu_inc(vfsfast_stats_##name.hits)

/*
 * Around a call that may sleep for as long as user space decides (a FUSE
 * daemon's get_link, a userfaultfd handler behind copy_to_user()): the
 * task holds a reference on the module, so rmmod answers EBUSY at once
 * instead of waiting in the drain.  False when the module is already
 * going; the caller must then leave vfsfast's text before it sleeps (hand
 * the whole call to the stock function as a tail call), so that the
 * drain never waits for it.
 */
static __always_inline bool vfsfast_hold(void)
{
	return try_module_get(THIS_MODULE);
}

static __always_inline void vfsfast_unhold(void)
{
	module_put(THIS_MODULE);
}

/* symbols.c */
int vfsfast_symbols_init(void);
unsigned long vfsfast_lookup_name(const char *name, unsigned long *site,
				  unsigned long *size);

/* quiesce.c */
int vfsfast_quiesce(struct vfsfast_opt *opt);

/* hook.c */
int vfsfast_hook_init(const char *backend);
int vfsfast_filter_site(struct ftrace_ops *ops, struct vfsfast_func *func,
			bool *filtered, bool on);
extern const struct vfsfast_backend *vfsfast_backend_order[];
int vfsfast_opt_prepare(struct vfsfast_opt *opt);
void vfsfast_opt_release(struct vfsfast_opt *opt);
int vfsfast_opt_request(struct vfsfast_opt *opt, bool on);
void vfsfast_opt_yield(struct vfsfast_opt *opt, const char *module);
void vfsfast_opt_rearm(struct vfsfast_opt *opt, const char *why,
		       const char *(*holder)(const char *func));
int vfsfast_opt_set_passthrough(struct vfsfast_opt *opt, bool on);
int vfsfast_drain(void);
unsigned long vfsfast_stat_sum(struct vfsfast_opt *opt, size_t offset);

/* yield.c */
int vfsfast_yield_init(void);
void vfsfast_yield_exit(void);

/* sysfs.c */
int vfsfast_sysfs_init(void);
void vfsfast_sysfs_exit(void);

/* One struct vfsfast_opt per optimization file. */
extern struct vfsfast_opt vfsfast_opt_readlink;
extern struct vfsfast_opt vfsfast_opt_fsnotify;
extern struct vfsfast_opt vfsfast_opt_fsnotify_parent;
extern struct vfsfast_opt vfsfast_opt_pseudo_nonotify;
extern struct vfsfast_opt vfsfast_opt_kernfs;

#endif /* _VFSFAST_H */
