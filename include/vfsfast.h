/* SPDX-License-Identifier: GPL-2.0 */
/*
 * vfsfast: fast paths for hot VFS functions, installed at run time by
 * ftrace redirection and switched on and off per optimization in sysfs.
 *
 * An optimization is one file, module/opt_<name>.c: its replacements and
 * a table, in the manner of livepatch's klp_func arrays, generated from
 * the one list of the kernel functions it takes over (VFSFAST_FUNCS()),
 * and a struct vfsfast_opt (VFSFAST_OPTIMIZATION()).
 * The fields above the "engine" comment are the optimization's to fill; the
 * ones below belong to the hook engine and the sysfs code.
 */
#ifndef _VFSFAST_H
#define _VFSFAST_H

#include <linux/build_bug.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fsnotify_backend.h>
#include <linux/ftrace.h>
#include <linux/kernfs.h>
#include <linux/kobject.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/types.h>
#include <linux/uaccess.h>

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
	/*
	 * The target is the body GCC split off the function (<name>.part.0)
	 * where the kernel has one, else the function itself: callers in
	 * the function's own file call the split part directly, past the
	 * head it keeps (see VFSFAST_KIND_split below).
	 */
	bool split;

	/* engine */
	unsigned long entry;		/* the target's text: entry, size */
	unsigned long size;
	unsigned long site;		/* its ftrace site */
	unsigned long direct;		/* what a direct site calls or jumps to */
	struct ftrace_ops ops;		/* ftrace backend */
	struct ftrace_ops dops;		/* direct backends, where named by ops */
	bool filtered;
	bool dfiltered;
	bool gfiltered;			/* in its optimization's observer ops */
	bool attached;
	bool grouped;			/* attached through that ops */
};

/*
 * An optimization file names its targets once, as an X-macro, and
 * everything per target is generated from that one list:
 *
 *	#define VFSFAST_FOO_TARGETS(T) \
 *		(T(name, proto, exported, kind, replacement) ...)
 *
 * (the parentheses keep checkpatch content; VFSFAST_EACH() drops them).
 * @name: the kernel function taken over; @proto: an expression with its
 * function type (the function itself where a header declares it);
 * @exported: its address when the kernel exports it, else 0; @kind:
 * replace, or observe for an observer (struct vfsfast_func), or call for
 * a function the replacements only call, which is never hooked, or split
 * for one whose body GCC may have split off (<name>.part.0), which is
 * then the target: the replacement must be right for callers that ran
 * the head first and for callers that did not, and the optimization's
 * setup checks that the part takes the function's arguments;
 * @replacement: where its callers are sent (call: vfsfast_stock_<name>
 * itself).  Targets attach in list order and detach in reverse.  From the list come the declarations of tramp.S's symbols
 * (VFSFAST_DECLARE_TARGETS(), before the replacements call their stock
 * functions), the table the engine walks (VFSFAST_FUNCS(), after them),
 * the modinfo line (VFSFAST_OPTIMIZATION()), and, through
 * module/gen-targets.sh, which preprocesses every module/opt_*.c with
 * VFSFAST_GEN defined, tramp.S's stubs and the module's list of
 * optimizations: adding one is adding a file.
 */
#define VFSFAST_KIND_replace	false
#define VFSFAST_KIND_observe	true

/*
 * An optimization enable=auto turns on wherever the kernel lacks it
 * upstream (auto); one that changes what users can observe and is only
 * ever turned on by an explicit request (opt_in); or one whose gain per
 * call is smaller than an ftrace trip costs, which enable=auto turns on
 * only where a cheaper backend carries it (auto_unless_ftrace).
 */
#define VFSFAST_POLICY_auto			.opt_in = false
#define VFSFAST_POLICY_opt_in			.opt_in = true
#define VFSFAST_POLICY_auto_unless_ftrace	.unless_ftrace = true
#define VFSFAST_POLICY_INFO_auto		""
#define VFSFAST_POLICY_INFO_opt_in		" opt-in=yes"
#define VFSFAST_POLICY_INFO_auto_unless_ftrace	" auto=unless-ftrace"

#define VFSFAST_UNWRAP(...)		__VA_ARGS__
#define VFSFAST_EXPAND(x)		x
/* @fn(...) for each target of the list @targets, one after the other. */
#define VFSFAST_EACH(targets, fn)	VFSFAST_EXPAND(VFSFAST_UNWRAP targets(fn))

#ifdef VFSFAST_GEN
/* module/gen-targets.sh collects these tokens; nothing is compiled. */
#define VFSFAST_GEN_TARGET(name, ...)	vfsfast_gen_target(name)
/* modinfo's functions= lists what is taken over, not what is only called. */
#define VFSFAST_GEN_FUNCTION(name, proto, exported, kind, new)	\
	VFSFAST_GEN_FUNCTION_##kind(name)
#define VFSFAST_GEN_FUNCTION_replace(name)	vfsfast_gen_function(name)
#define VFSFAST_GEN_FUNCTION_observe(name)	vfsfast_gen_function(name)
#define VFSFAST_GEN_FUNCTION_split(name)	vfsfast_gen_function(name)
#define VFSFAST_GEN_FUNCTION_call(name)		vfsfast_gen_calls(name)
#define VFSFAST_DECLARE_TARGETS(targets)
#define VFSFAST_FUNCS(opt, targets)	VFSFAST_EACH(targets, VFSFAST_GEN_TARGET)
#define VFSFAST_NO_FUNCS(opt)		vfsfast_gen_nofuncs(opt)
#define VFSFAST_OPTIMIZATION(opt, targets, ...) \
	vfsfast_gen_opt(opt, VFSFAST_EACH(targets, VFSFAST_GEN_FUNCTION))
#else
#include "vfsfast_targets.h"

/*
 * Per-target declarations begin with the semicolon that ends the one
 * before, so that a list of them needs none after the last.
 */
#define VFSFAST_DECLARE_ONE(name, proto, exported, kind, new)	\
	; extern unsigned long vfsfast_redirect_##name;		\
	extern unsigned long vfsfast_body_##name;		\
	void vfsfast_tramp_##name(void);			\
	extern typeof(proto) vfsfast_stock_##name
/* tramp.S's symbols for each target, for the replacements to call. */
#define VFSFAST_DECLARE_TARGETS(targets)			\
	extern const int vfsfast_declared			\
	VFSFAST_EACH(targets, VFSFAST_DECLARE_ONE)

/*
 * The fields of a table entry for target @name; @exported is its address
 * when the kernel exports it, else 0.  A replacement whose prototype is
 * not its target's does not build.
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

#define VFSFAST_WORDS_ONE(name, proto, exported, kind, new)		\
	; unsigned long VFSFAST_WORDS_##kind vfsfast_redirect_##name,	\
	vfsfast_body_##name
/*
 * A function that several optimizations call has one stub and one pair of
 * words (module/gen-targets.sh lists it once): each file defines them
 * weak, and the linker keeps one.
 */
#define VFSFAST_WORDS_replace
#define VFSFAST_WORDS_observe
#define VFSFAST_WORDS_split
#define VFSFAST_WORDS_call	__weak
/* Hooked targets go in the engine's table, called ones in their own. */
#define VFSFAST_FUNC_ONE(name, proto, exported, kind, new)		\
	VFSFAST_FUNC_ONE_##kind(name, exported, new)
#define VFSFAST_FUNC_ONE_replace(name, exported, new)			\
	{ VFSFAST_FUNC(name, exported, new), .observer = false },
#define VFSFAST_FUNC_ONE_observe(name, exported, new)			\
	{ VFSFAST_FUNC(name, exported, new), .observer = true },
#define VFSFAST_FUNC_ONE_split(name, exported, new)			\
	{ VFSFAST_FUNC(name, exported, new), .split = true },
#define VFSFAST_FUNC_ONE_call(name, exported, new)
#define VFSFAST_CALL_ONE(name, proto, exported, kind, new)		\
	VFSFAST_CALL_ONE_##kind(name, exported, new)
#define VFSFAST_CALL_ONE_replace(name, exported, new)
#define VFSFAST_CALL_ONE_observe(name, exported, new)
#define VFSFAST_CALL_ONE_split(name, exported, new)
#define VFSFAST_CALL_ONE_call(name, exported, new)			\
	{ VFSFAST_FUNC(name, exported, new) },
/*
 * The words tramp.S reads, the table of @opt's targets and that of the
 * functions it only calls.
 */
#define VFSFAST_FUNCS(opt, targets)					\
	extern const int vfsfast_words_##opt				\
	VFSFAST_EACH(targets, VFSFAST_WORDS_ONE);			\
	static struct vfsfast_func vfsfast_funcs_##opt[] = {		\
		VFSFAST_EACH(targets, VFSFAST_FUNC_ONE)			\
		{ }							\
	};								\
	static struct vfsfast_func vfsfast_calls_##opt[] = {		\
		VFSFAST_EACH(targets, VFSFAST_CALL_ONE)			\
		{ }							\
	}
/* For a kernel that cannot have @opt: no target, nothing to hook. */
#define VFSFAST_NO_FUNCS(opt)						\
	static struct vfsfast_func vfsfast_funcs_##opt[] = { { } };	\
	static struct vfsfast_func vfsfast_calls_##opt[] = { { } }

/*
 * struct vfsfast_opt vfsfast_opt_<opt>, with its table, counters and
 * @policy (auto, opt_in, auto_unless_ftrace), the remaining fields given after it; and what
 * `vfsfast check` reads from a module built for a kernel that is not
 * running (modinfo): the functions, which include those a kernel that
 * cannot have the optimization lacks, @upstream_tag, what that kernel
 * already has upstream as the compat probes decided it, or "none", and
 * " built=no" where the compat layer left it without targets.
 */
#define VFSFAST_OPTIMIZATION(opt, targets, upstream_tag, policy, ...)	\
	MODULE_INFO(vfsfast_opt_##opt, "functions=" VFSFAST_FUNCTIONS_##opt \
		    " upstream=" upstream_tag VFSFAST_POLICY_INFO_##policy \
		    VFSFAST_BUILT_INFO_##opt);					\
	extern struct vfsfast_opt vfsfast_opt_##opt;			\
	struct vfsfast_opt vfsfast_opt_##opt = {			\
		.name = #opt,						\
		.funcs = vfsfast_funcs_##opt,				\
		.calls = vfsfast_calls_##opt,				\
		.stats = &vfsfast_stats_##opt,				\
		VFSFAST_POLICY_##policy,				\
		__VA_ARGS__						\
	}
#endif /* VFSFAST_GEN */

/*
 * @caller reaches @callee by a jump, never a call: on paths where the
 * stock code may sleep for as long as user space decides (a fanotify
 * permission event, a FUSE daemon), nothing of vfsfast may stay on the
 * stack, so that unloading never waits for it.  Both must be declared;
 * the lab checks each such pair in the compiled object
 * (scripts/lablib/build.py, tail_call_problems()).
 */
#define VFSFAST_TAIL_CALL(caller, callee)				\
	static_assert(__same_type(&(caller), &(caller)) &&		\
		      __same_type(&(callee), &(callee)), #callee)

/* The value of struct vfsfast_opt's covers: function names. */
#define VFSFAST_COVERS(...)	((const char *const []){ __VA_ARGS__, NULL })

/*
 * @caller calls @callee, stock code that does not sleep for as long as
 * user space decides, for the reason the declaration's comment gives
 * (the filesystem check of bounded.c, say).  Every other call of a
 * vfsfast_stock_<name>() must be a tail call: the lab checks both in the
 * compiled object (scripts/lablib/build.py, stock_call_problems()).
 */
#define VFSFAST_BOUNDED_CALL(caller, callee)				\
	static_assert(__same_type(&(caller), &(caller)) &&		\
		      __same_type(&(callee), &(callee)), #callee)

/*
 * @fn runs on a rare path only (a race lost, a first sighting), never
 * once per call, so it may take locks or atomics on lines that every CPU
 * shares: the lab's check for those (global_atomic_problems()) lets it.
 */
#define VFSFAST_RARE_PATH(fn)						\
	static_assert(__same_type(&(fn), &(fn)), #fn)

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

/* backend_ftrace.c: the observers of an optimization on one ftrace_ops. */
struct vfsfast_opt;
void vfsfast_group_prepare(struct vfsfast_opt *opt);
void vfsfast_group_release(struct vfsfast_opt *opt);
int vfsfast_group_attach(struct vfsfast_opt *opt);
int vfsfast_group_detach(struct vfsfast_opt *opt);

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

/*
 * Where an optimization stands; status prints it, with the reason for
 * every state after VFSFAST_PASSTHROUGH.  The last three are for good.
 */
enum vfsfast_state {
	VFSFAST_OFF,		/* the stock kernel: no target hooked */
	VFSFAST_ACTIVE,		/* hooked, callers sent to the replacements */
	VFSFAST_PASSTHROUGH,	/* hooked, callers sent back to stock code */
	VFSFAST_YIELDED,	/* requested, let go for a livepatch */
	VFSFAST_CONFLICT,	/* requested, a target could not be hooked */
	VFSFAST_BROKEN,		/* a target could not be unhooked */
	VFSFAST_UNSUPPORTED,	/* this kernel cannot have it */
	VFSFAST_DISABLED,	/* kept off by the disable= parameter */
};

struct vfsfast_opt {
	const char *name;
	/* Array of the functions taken over, ending with old_name == NULL. */
	struct vfsfast_func *funcs;
	/*
	 * The functions its replacements call by vfsfast_stock_<name>()
	 * without taking them over (static ones, or unexported): resolved
	 * at load, entered at their first instruction, so that tracers,
	 * kprobes and BPF programs there see these calls too.
	 */
	struct vfsfast_func *calls;
	/*
	 * The kernel functions whose code the fast path stands in for
	 * without hooking them (NULL-terminated, or NULL): a livepatch of
	 * one would be stepped around, so the optimization yields to it as
	 * to a livepatch of a target.  VFSFAST_COVERS().
	 */
	const char *const *covers;
	/*
	 * What the running kernel already has of this optimization, in
	 * words, or NULL if it has none.  Decided at build time by the
	 * compat probes.
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
	/*
	 * enable=auto leaves it off where ftrace would carry it
	 * (vfsfast_auto_off()): each call gains less than a trip there costs.
	 */
	bool unless_ftrace;
	/*
	 * Run time lookups and checks it needs before it can be enabled; 0
	 * or -errno.  One that finds the kernel has it, or cannot have it,
	 * marks it unsupported with the reason (and ->upstream) itself.
	 */
	int (*setup)(struct vfsfast_opt *opt);
	/*
	 * Called before its replacements go live (enable, re-arm after a
	 * livepatch, passthrough turned off), with its observers live and
	 * every call that entered an observer's target unobserved finished,
	 * so that the replacements forget what they kept while no observer
	 * ran.
	 */
	void (*arm)(struct vfsfast_opt *opt);
	/*
	 * Called at unload once no site leads into vfsfast and no task is
	 * inside a replacement (vfsfast_drain()), to free what the
	 * replacements keep from one call to the next.
	 */
	void (*teardown)(struct vfsfast_opt *opt);
	/*
	 * For replacements that make objects only the observers can free
	 * (an arena's, which stock's kfree() must never see): called on
	 * every path that takes the replacements away (off, passthrough, a
	 * yield, a target that will not let go, unload), with @begin true
	 * before the first of them stops being reached, then with @begin
	 * false once none is and before the observers stop, to give back
	 * to stock form whatever they made that is still alive.  It may
	 * sleep, and does not fail.
	 */
	void (*unshare)(struct vfsfast_opt *opt, bool begin);

	/* engine: written under vfsfast_mutex */
	enum vfsfast_state state;
	/*
	 * Yielded: "<function> taken by <livepatch module>"; conflict,
	 * broken ("<function>: detach failed (<errno>)": the module pins
	 * itself, since that site still leads into its text, and refuses
	 * every knob write), unsupported:
	 * why; disabled: which parameter.
	 */
	char reason[160];
	/* The livepatch module it yielded to, for the log to say changes. */
	char holder[MODULE_NAME_LEN];
	/* Preferred backends the last successful enable could not use. */
	char skipped[160];
	const struct vfsfast_backend *backend;	/* in use while hooked */
	/*
	 * Its observers' one ftrace_ops (backend_ftrace.c), usable when
	 * every observer's site is in its filter (observer_group).
	 */
	struct ftrace_ops observer_ops;
	bool observer_group;
	int last_error;
	bool requested;		/* what was asked for: 1 written, enable= */
	bool passthrough;	/* the knob; in effect while hooked */
	struct kobject *kobj;
};

/* Whether @opt's targets are hooked (active or passthrough). */
static inline bool vfsfast_hooked(const struct vfsfast_opt *opt)
{
	enum vfsfast_state state = READ_ONCE(opt->state);

	return state == VFSFAST_ACTIVE || state == VFSFAST_PASSTHROUGH;
}

/* Whether @opt can never be enabled again in this module's life. */
static inline bool vfsfast_final(const struct vfsfast_opt *opt)
{
	return opt->state >= VFSFAST_BROKEN;
}

/*
 * Every optimization, NULL-terminated, in the order module/gen-targets.sh
 * found them; defined in main.c.
 */
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
 * Nothing of vfsfast may stay on the stack of a task that sleeps for as
 * long as user space decides (a FUSE daemon, a userfaultfd handler, a
 * socket's linger time), so that rmmod never waits for it.  The fast
 * paths keep that without a module reference per call (try_module_get()
 * is a locked operation on one line that every CPU shares): they copy to
 * user space with page faults disabled and hand the whole call to stock
 * when the copy would fault, call into filesystem code only on the
 * filesystems bounded.c knows cannot wait on user space or the network,
 * and reach everything else by a tail call.  On a rare path that must
 * finish a call itself where that cannot be known (a race lost), the
 * task holds the module, so that rmmod answers EBUSY at once instead of
 * waiting in the drain.  False when the module is already going.
 */
static __always_inline bool vfsfast_hold(void)
{
	return try_module_get(THIS_MODULE);
}

static __always_inline void vfsfast_unhold(void)
{
	module_put(THIS_MODULE);
}

/*
 * Whether a user-space name's first byte reads as 0 without a page fault:
 * the test of the empty-path fast paths, which hand anything else (a
 * fault stock would take, or report as -EFAULT) to the stock call.
 */
static __always_inline bool vfsfast_empty_user_name(const char __user *name)
{
	char c;
	int err;

	pagefault_disable();
	err = get_user(c, name);
	pagefault_enable();
	return !err && !c;
}

/*
 * bounded.c: whether a filesystem's code, reached from a fast path
 * (->getattr(), ->get_link(), the last fput() of a regular file), cannot
 * wait on user space or the network: by its file_system_type, decided
 * once per type by name and cached without a lock.
 */
bool vfsfast_bounded_fs_slow(const struct file_system_type *type);
extern unsigned long vfsfast_bounded_types[16];
/* The last bounded type this CPU met: one compare for a repeat. */
DECLARE_PER_CPU(unsigned long, vfsfast_bounded_last);

static __always_inline bool vfsfast_bounded_fs(const struct super_block *sb)
{
	const struct file_system_type *type = sb->s_type;
	unsigned int i;

	if (likely(this_cpu_read(vfsfast_bounded_last) == (unsigned long)type))
		return true;
	for (i = 0; i < ARRAY_SIZE(vfsfast_bounded_types); i++) {
		unsigned long v = READ_ONCE(vfsfast_bounded_types[i]);

		if ((v & ~1UL) == (unsigned long)type) {
			if (v & 1)
				this_cpu_write(vfsfast_bounded_last, v & ~1UL);
			return v & 1;
		}
		if (!v)
			break;
	}
	return vfsfast_bounded_fs_slow(type);
}
void vfsfast_bounded_module_going(struct module *mod);

/* symbols.c */
void vfsfast_symbols_want(const char *name, const char *suffix);
int vfsfast_symbols_init(void);
void vfsfast_symbols_done(void);
unsigned long vfsfast_lookup_name(const char *name, unsigned long exported,
				  unsigned long *site, unsigned long *size);
unsigned long vfsfast_lookup_data(const char *name, unsigned long near,
				  unsigned int steps);
unsigned long vfsfast_lookup_data_name(const char *name);
unsigned long vfsfast_lookup_text(const char *name, unsigned long *size);

/* split.c: the shape of a part GCC split off (VFSFAST_KIND_split). */
struct vfsfast_split_watch {
	struct kprobe via, part;
	struct task_struct *task;
	unsigned int via_args;
	unsigned int hits;
	unsigned long seen[VFSFAST_ARG_REGS];
};

int vfsfast_split_watch(struct vfsfast_split_watch *w, unsigned long via,
			unsigned int via_args, unsigned long part);
const char *vfsfast_split_seen(struct vfsfast_split_watch *w,
			       const unsigned long *args, unsigned int nargs,
			       unsigned int ints);
void vfsfast_split_unwatch(struct vfsfast_split_watch *w);

/* quiesce.c */
void vfsfast_quiesce_want(void);
void vfsfast_quiesce_init(void);
int vfsfast_quiesce(struct vfsfast_opt *opt);

/* The engine's rooms (module/engine.h), as the rest of the module sees them. */

/* fault.c */
#ifdef VFSFAST_FAULT_INJECT
void vfsfast_fi_hold_task(const char *name, int *parked, unsigned int max_ms,
			  bool spin);
#endif

/* state.c */
__printf(2, 3)
void vfsfast_unsupported(struct vfsfast_opt *opt, const char *fmt, ...);
void vfsfast_opt_disable(struct vfsfast_opt *opt);

/* backend.c */
int vfsfast_hook_init(const char *backend);
int vfsfast_filter_site(struct ftrace_ops *ops, struct vfsfast_func *func,
			bool *filtered, bool on);
extern const struct vfsfast_backend *vfsfast_backend_order[];
const char *vfsfast_auto_off(const struct vfsfast_opt *opt);

/* prepare.c */
void vfsfast_opt_want(const struct vfsfast_opt *opt);
int vfsfast_opt_prepare(struct vfsfast_opt *opt);
void vfsfast_opt_release(struct vfsfast_opt *opt);

/* request.c */
int vfsfast_opt_request(struct vfsfast_opt *opt, bool on);
int vfsfast_opt_set_passthrough(struct vfsfast_opt *opt, bool on);

/* yield.c */
int vfsfast_yield_init(void);
void vfsfast_yield_exit(void);

/* drain.c */
void vfsfast_unhook_all(void);
int vfsfast_drain(void);
void vfsfast_drain_opt(struct vfsfast_opt *opt);
unsigned long vfsfast_stat_sum(struct vfsfast_opt *opt, size_t offset);

/* sysfs.c */
int vfsfast_sysfs_init(void);
void vfsfast_sysfs_exit(void);

#endif /* _VFSFAST_H */
