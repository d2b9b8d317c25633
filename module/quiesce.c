// SPDX-License-Identifier: GPL-2.0
/*
 * Waiting out the calls that ran unobserved.
 *
 * An observer (a target flagged .observer) calls the stock function and
 * records what it changed; the replacements of the same optimization trust
 * that record.  A call that entered the stock function before its observer
 * was attached records nothing, yet may change state after the
 * replacements start trusting the record: a kernfs_add_one() asleep on
 * kernfs_mutex when the hooks went in links its node later, and no stamp
 * moves.  So before an optimization's replacements go live, the engine
 * waits until no task is inside the stock code of any observer target
 * except through vfsfast's own redirect: the consistency check livepatch
 * makes before it switches a task, done here for every task at once and
 * repeated until it passes.
 *
 * Each round looks at every task once:
 *  - running ones are interrupted (an IPI to every CPU) and their stack
 *    is walked from the handler through the interrupted context; a walk
 *    that ends at user mode's entry registers, or an idle task, is
 *    outside the kernel;
 *  - the others are looked at under their pi_lock.  A task's stack is
 *    freed only after its state is TASK_DEAD (release_task_stack() warns
 *    otherwise), and do_task_dead() sets that with set_special_state(),
 *    which takes pi_lock: so under pi_lock a task not yet TASK_DEAD keeps
 *    its stack until we let go, and one that is TASK_DEAD is in its last
 *    schedule(), outside every target, its stack never read.  (Pinning
 *    the stack itself, as stack_trace_save_tsk() does, would mean calling
 *    put_task_stack(), which is not exported; an IBT kernel seals such a
 *    function against indirect calls, see symbols.c.)
 *  - sleeping ones cannot wake while we hold pi_lock, which
 *    try_to_wake_up() takes first, so the unwinder (the architecture's,
 *    module/arch/<arch>/arch_unwind.h; ORC on x86) walks them when
 *    their stack holds a word in a target's text;
 *  - runnable ones that are not running could start at any moment, so
 *    they are not unwound but scanned: every word of their live stack,
 *    read without faulting, is compared with the targets' text.  A stale
 *    word only makes the round fail and be retried.
 * A tracer of return values (function_graph, kretprobes and their rethook)
 * replaces a return address on the stack with its trampoline's: a task
 * asleep in a function called from a target then has no word of the
 * target's text on its stack at all.  So a trampoline's address counts
 * as suspect in the scan, and a walk that meets one (the unwinder did not
 * recover the real address) cannot clear the task.
 * A frame in a target whose caller is vfsfast's own text came through the
 * observer and is harmless.  A task that was running when its CPU was
 * interrupted and has not been switched out since cannot have entered a
 * target unobserved in the meantime: every entry after the attach is
 * observed.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include "vfsfast.h"
#include "arch_unwind.h"

/* How long an enable waits for unobserved calls before it gives up. */
#define VFSFAST_QUIESCE_MS	10000
#define VFSFAST_QUIESCE_ROUND_MS	10
#define VFSFAST_QUIESCE_TRACK	64

enum vfsfast_where { VFSFAST_OUT, VFSFAST_INSIDE, VFSFAST_UNKNOWN };

struct vfsfast_cpu_seen {
	struct task_struct *task;
	unsigned long switches;
	enum vfsfast_where where;
	const char *why;
};

struct vfsfast_quiesce {
	struct vfsfast_opt *opt;
	struct task_struct *self;
	struct vfsfast_cpu_seen *cpus;
	/* The tasks not yet seen outside, when there are few. */
	struct task_struct *tracked[VFSFAST_QUIESCE_TRACK];
	int ntracked;
	bool tracking;
	/* Why the task being looked at is not cleared; one such, for the log. */
	const char *cur_why;
	const char *why;
	/* One task found inside, for the log. */
	const char *func;
	char comm[TASK_COMM_LEN];
	pid_t pid;
};

/* The kernel's return trampolines, those it has (see above). */
static const char *const vfsfast_tramp_names[] = {
	"return_to_handler",		/* function_graph, fprobe */
	"kretprobe_trampoline",		/* kretprobes before 5.15 */
	"__kretprobe_trampoline",
	"arch_rethook_trampoline",	/* kretprobes and fprobe on rethook */
};

static struct {
	unsigned long start, size;
} vfsfast_tramps[ARRAY_SIZE(vfsfast_tramp_names)];

/* For the load's one kallsyms pass, before vfsfast_quiesce_init(). */
void vfsfast_quiesce_want(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(vfsfast_tramp_names); i++)
		vfsfast_symbols_want(vfsfast_tramp_names[i], "");
}

/* At load, while its lookups are batched. */
void vfsfast_quiesce_init(void)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(vfsfast_tramp_names); i++)
		vfsfast_tramps[i].start =
			vfsfast_lookup_text(vfsfast_tramp_names[i],
					    &vfsfast_tramps[i].size);
}

static bool vfsfast_in_tramp(unsigned long addr)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(vfsfast_tramps); i++)
		if (vfsfast_tramps[i].start &&
		    addr - vfsfast_tramps[i].start < vfsfast_tramps[i].size)
			return true;
	return false;
}

static void vfsfast_untrack(struct vfsfast_quiesce *q)
{
	while (q->ntracked)
		put_task_struct(q->tracked[--q->ntracked]);
}

static unsigned long vfsfast_switches(struct task_struct *t)
{
	return READ_ONCE(t->nvcsw) + READ_ONCE(t->nivcsw);
}

/* The observer target whose stock text holds @addr, or NULL. */
static struct vfsfast_func *vfsfast_observed_at(struct vfsfast_opt *opt,
						unsigned long addr)
{
	struct vfsfast_func *func;

	for (func = opt->funcs; func->old_name; func++)
		if (func->observer && addr > func->entry &&
		    addr <= func->entry + func->size)
			return func;
	return NULL;
}

/*
 * Walk @t's stack with the unwinder (@t asleep and pinned, or current in
 * an interrupt, whose walk goes on through the interrupted context):
 * VFSFAST_INSIDE if a target frame was called by anything but vfsfast,
 * VFSFAST_UNKNOWN if the walk failed; *@why says which.  An interrupted
 * ip is not a return address, so every address is also tested as one
 * past it.
 */
static enum vfsfast_where vfsfast_walk(struct vfsfast_quiesce *q,
				       struct task_struct *t,
				       const char **why)
{
	struct vfsfast_func *inside = NULL;
	struct vfsfast_unwind state;
	unsigned long addr;

	for (vfsfast_unwind_start(&state, t); !vfsfast_unwind_done(&state);
	     vfsfast_unwind_next(&state)) {
		addr = vfsfast_unwind_ret(&state);
		if (!addr)
			break;
		if (vfsfast_in_tramp(addr)) {
			*why = "a return address replaced by a tracer's trampoline";
			return VFSFAST_UNKNOWN;
		}
		/*
		 * A target's frame is harmless if our observer called it, as
		 * a return address the unwinder is sure of says.
		 */
		if (inside && !(within_module(addr, THIS_MODULE) &&
				vfsfast_unwind_certain(&state)))
			break;
		inside = vfsfast_observed_at(q->opt, addr) ?:
			 vfsfast_observed_at(q->opt, addr + 1);
	}
	if (inside) {
		q->func = inside->old_name;
		*why = "in a target's frame";
		return VFSFAST_INSIDE;
	}
	if (!vfsfast_unwind_failed(&state))
		return VFSFAST_OUT;
	*why = "unwind error";
	return VFSFAST_UNKNOWN;
}

enum vfsfast_scanned { VFSFAST_CLEAN, VFSFAST_SUSPECT, VFSFAST_UNREADABLE };

/*
 * Whether a word of @t's live stack is in a target's text (suspect), with
 * @t's pi_lock held and @t not TASK_DEAD, so that its stack is there.
 */
static enum vfsfast_scanned vfsfast_scan(struct vfsfast_quiesce *q,
					 struct task_struct *t)
{
	unsigned long base = (unsigned long)task_stack_page(t);
	unsigned long sp = vfsfast_task_sp(t);
	unsigned long word;

	q->cur_why = "stack pointer out of its stack";
	if (!base || sp < base || sp >= base + THREAD_SIZE)
		return VFSFAST_UNREADABLE;
	for (sp &= ~(sizeof(long) - 1); sp < base + THREAD_SIZE; sp += sizeof(long)) {
		q->cur_why = "stack unreadable";
		if (copy_from_kernel_nofault(&word, (void *)sp, sizeof(word)))
			return VFSFAST_UNREADABLE;
		word = vfsfast_stack_word(word);
		q->cur_why = "a word of its stack in a target";
		if (vfsfast_observed_at(q->opt, word))
			return VFSFAST_SUSPECT;
		q->cur_why = "a return trampoline's address on its stack";
		if (vfsfast_in_tramp(word))
			return VFSFAST_SUSPECT;
	}
	q->cur_why = "no word of its stack in a target";
	return VFSFAST_CLEAN;
}

/*
 * On each CPU, with interrupts off: where is the task it interrupted?  Its
 * stack is walked from the handler's own frame through the interrupt
 * entry (the call-function interrupt does not set irq_regs); a task
 * interrupted in user mode ends the walk at its entry registers.
 */
static void vfsfast_check_cpu(void *data)
{
	struct vfsfast_quiesce *q = data;
	struct vfsfast_cpu_seen *seen = &q->cpus[smp_processor_id()];
	struct task_struct *t = current;

	seen->task = t;
	seen->switches = vfsfast_switches(t);
	seen->why = NULL;
	if (t == q->self || is_idle_task(t))
		seen->where = VFSFAST_OUT;
	else
		seen->where = vfsfast_walk(q, t, &seen->why);
}

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only: park_quiesce=COMM holds every round after the first,
 * once it has found a tracked task named COMM not yet exited, until that
 * task's stack is gone (10 s at most), so that a test can make it exit in
 * between; quiesce_verdict then says what the round made of it.
 */
static char *park_quiesce = "";
module_param(park_quiesce, charp, 0644);
MODULE_PARM_DESC(park_quiesce,
		 "test builds: hold the quiesce while this tracked task exits");
static char quiesce_verdict[64] = "none";
module_param_string(quiesce_verdict, quiesce_verdict, sizeof(quiesce_verdict),
		    0444);
MODULE_PARM_DESC(quiesce_verdict, "test builds: parked, or the verdict after");

static bool vfsfast_fi_stack_freed;

static bool vfsfast_fi_park(struct vfsfast_quiesce *q, struct task_struct *t)
{
	char comm[TASK_COMM_LEN];
	int ms = 0;

	get_task_comm(comm, t);
	if (!q->tracking || !sysfs_streq(comm, park_quiesce))
		return false;
	strscpy(quiesce_verdict, "parked", sizeof(quiesce_verdict));
	while (task_stack_page(t) && ms < 10000) {
		msleep(20);
		ms += 20;
	}
	vfsfast_fi_stack_freed = !task_stack_page(t);
	return true;
}

static void vfsfast_fi_verdict(bool parked, enum vfsfast_where where,
			       const char *why)
{
	static const char *const names[] = {
		[VFSFAST_OUT] = "out", [VFSFAST_INSIDE] = "inside",
		[VFSFAST_UNKNOWN] = "unknown",
	};

	if (parked)
		snprintf(quiesce_verdict, sizeof(quiesce_verdict), "%s: %s, %s",
			 names[where], why ?: "?", vfsfast_fi_stack_freed ?
			 "stack freed" : "stack still there after 10 s");
}
#else
static bool vfsfast_fi_park(struct vfsfast_quiesce *q, struct task_struct *t)
{
	return false;
}

static void vfsfast_fi_verdict(bool parked, enum vfsfast_where where,
			       const char *why)
{
}
#endif

static enum vfsfast_where vfsfast_check_task(struct vfsfast_quiesce *q,
					     struct task_struct *t)
{
	enum vfsfast_where where = VFSFAST_UNKNOWN;
	enum vfsfast_scanned scanned;
	unsigned long flags;
	bool parked;
	int cpu;

	if (t == q->self || READ_ONCE(t->exit_state))
		return VFSFAST_OUT;
	/* From here on @t may exit: only its pi_lock says whether it has. */
	parked = vfsfast_fi_park(q, t);
	if (READ_ONCE(t->on_cpu)) {
		/* Running since its CPU was interrupted, never switched out. */
		q->cur_why = "running: not seen by the interrupt";
		for_each_online_cpu(cpu)
			if (q->cpus[cpu].task == t &&
			    q->cpus[cpu].switches == vfsfast_switches(t)) {
				q->cur_why = q->cpus[cpu].why;
				return q->cpus[cpu].where;
			}
		return VFSFAST_UNKNOWN;
	}
	raw_spin_lock_irqsave(&t->pi_lock, flags);
	if (vfsfast_task_state(t) == TASK_DEAD) {
		/* In its last schedule(); its stack may be gone already. */
		q->cur_why = "exited";
		where = VFSFAST_OUT;
	} else if (!READ_ONCE(t->on_cpu)) {
		scanned = vfsfast_scan(q, t);
		if (scanned == VFSFAST_CLEAN)
			where = VFSFAST_OUT;
		else if (scanned == VFSFAST_SUSPECT && !READ_ONCE(t->on_rq) &&
			 !READ_ONCE(t->on_cpu))
			where = vfsfast_walk(q, t, &q->cur_why);
	}
	raw_spin_unlock_irqrestore(&t->pi_lock, flags);
	vfsfast_fi_verdict(parked, where, q->cur_why);
	return where;
}

/* Note one task that may still be inside, for the log. */
static void vfsfast_note(struct vfsfast_quiesce *q, struct task_struct *t,
			 enum vfsfast_where where, int pending)
{
	if (!pending || where == VFSFAST_INSIDE) {
		get_task_comm(q->comm, t);
		q->pid = task_pid_nr(t);
		q->why = q->cur_why;
	}
}

/*
 * One round: the number of tasks that may still be inside.  A task once
 * seen outside stays cleared: it can only enter a target observed from
 * now on.  So the first round looks at every task and keeps the ones it
 * could not clear (up to VFSFAST_QUIESCE_TRACK, holding a reference on
 * each); later rounds look at those alone, until none is left.  With
 * more than that, every round looks at every task.
 */
static int vfsfast_quiesce_round(struct vfsfast_quiesce *q)
{
	struct task_struct *g, *t;
	enum vfsfast_where where;
	int i, pending = 0;

	memset(q->cpus, 0, nr_cpu_ids * sizeof(*q->cpus));
	on_each_cpu(vfsfast_check_cpu, q, 1);
	if (q->tracking) {
		for (i = 0; i < q->ntracked; i++) {
			t = q->tracked[i];
			where = vfsfast_check_task(q, t);
			if (where == VFSFAST_OUT) {
				put_task_struct(t);
				q->tracked[i--] = q->tracked[--q->ntracked];
				continue;
			}
			vfsfast_note(q, t, where, pending++);
		}
		return pending;
	}
	rcu_read_lock();
	for_each_process_thread(g, t) {
		where = vfsfast_check_task(q, t);
		if (where == VFSFAST_OUT)
			continue;
		vfsfast_note(q, t, where, pending);
		if (pending++ < VFSFAST_QUIESCE_TRACK) {
			get_task_struct(t);
			q->tracked[q->ntracked++] = t;
		}
	}
	rcu_read_unlock();
	if (pending > VFSFAST_QUIESCE_TRACK)
		vfsfast_untrack(q);
	else
		q->tracking = true;
	return pending;
}

/*
 * Wait until no task is in the stock code of @opt's observer targets
 * unless it came through the observer; -EBUSY after VFSFAST_QUIESCE_MS.
 * Called with the observers attached, so that no new unobserved call can
 * start.  May sleep.
 */
int vfsfast_quiesce(struct vfsfast_opt *opt)
{
	/* Not on the stack (64 task pointers): vfsfast_mutex serializes it. */
	static struct vfsfast_quiesce q;
	unsigned int waited = 0;
	int pending;

	lockdep_assert_held(&vfsfast_mutex);
	memset(&q, 0, sizeof(q));
	q.opt = opt;
	q.self = current;

	q.cpus = kcalloc(nr_cpu_ids, sizeof(*q.cpus), GFP_KERNEL);
	if (!q.cpus)
		return -ENOMEM;
	while ((pending = vfsfast_quiesce_round(&q))) {
		if (waited >= VFSFAST_QUIESCE_MS || fatal_signal_pending(current))
			break;
		if (waited && waited % 1000 == 0)
			pr_info("%s: waiting for %d task(s) that may be inside %s unobserved (%s/%d: %s)\n",
				opt->name, pending, q.func ?: "a target",
				q.comm, q.pid, q.why ?: "?");
		msleep(VFSFAST_QUIESCE_ROUND_MS);
		waited += VFSFAST_QUIESCE_ROUND_MS;
	}
	vfsfast_untrack(&q);
	kfree(q.cpus);
	if (!pending)
		return 0;
	pr_info("%s: gave up: %d task(s) may still be inside %s, entered before the hooks (%s/%d: %s)\n",
		opt->name, pending, q.func ?: "a target", q.comm, q.pid,
		q.why ?: "?");
	return -EAGAIN;
}
