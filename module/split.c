// SPDX-License-Identifier: GPL-2.0
/*
 * Whether the part GCC split off a function takes the function's own
 * arguments, found out before anything of vfsfast calls it.
 *
 * GCC's partial inlining leaves a head in the function's symbol and moves
 * the rest to <name>.part.0, which the head, and callers in the same file,
 * enter with whatever arguments the rest needs, in an order of GCC's
 * choosing.  A replacement of the part (kind split), and a setup check
 * that calls the part, assume the function's arguments in the function's
 * order.  Another GCC, or another Debian rebuild, may split differently:
 * a part that also takes the inode's superblock, or takes the arguments
 * in another order, called with the function's arguments could oops
 * insmod, and replaced, would answer for the wrong call.  Comparing one
 * answer of the part's with the function's proves little (the owner of
 * the loading task's root directory is granted either way), and calling
 * the part to get it is already the danger.
 *
 * So the shape is watched, not assumed.  Two kprobes: one on a function
 * that reaches the part with known arguments (the head itself, or a
 * caller such as getname()), one on the part.  On the way in, the first
 * fills every argument register its own function does not take with a
 * marker; the second records the registers the part is entered with.  The
 * part takes exactly the function's arguments when it is entered with
 * them, in order, and with every marker still in place: a head that
 * computed a further argument (or used the registers some other way)
 * would have overwritten one.  Only the loading task's calls are looked
 * at, before anything of vfsfast is attached.  Two break points set and
 * cleared, and one grace period when both probes go, are the whole cost.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/string.h>

#include "vfsfast.h"

/* Not an address on either architecture: no code can have computed it. */
#define VFSFAST_SPLIT_MARK	0x5646530000000000UL

#ifdef VFSFAST_FAULT_INJECT
/*
 * fi_split_extra=1, at load, shows every part as entered with one more
 * argument than its function takes, as a part split otherwise would be:
 * t_fault checks that each optimization whose target is such a part is
 * unsupported, saying why, before anything called the part, and that the
 * module loads.
 */
static bool fi_split_extra;
module_param(fi_split_extra, bool, 0444);
#define vfsfast_fi_split_extra()	READ_ONCE(fi_split_extra)
#else
#define vfsfast_fi_split_extra()	false
#endif

static int vfsfast_split_via_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct vfsfast_split_watch *w =
		container_of(p, struct vfsfast_split_watch, via);
	unsigned int i;

	if (current != w->task)
		return 0;
	for (i = w->via_args; i < VFSFAST_ARG_REGS; i++)
		*vfsfast_arg_reg(regs, i) = VFSFAST_SPLIT_MARK + i;
	return 0;
}

static int vfsfast_split_part_pre(struct kprobe *p, struct pt_regs *regs)
{
	struct vfsfast_split_watch *w =
		container_of(p, struct vfsfast_split_watch, part);
	unsigned int i;

	if (current != w->task)
		return 0;
	for (i = 0; i < VFSFAST_ARG_REGS; i++)
		w->seen[i] = *vfsfast_arg_reg(regs, i);
	w->hits++;
	return 0;
}

/*
 * Never called, but there: the kernel does not optimize a kprobe with a
 * post handler into a jump.  The watch lives across a call that may wait
 * (5 jiffies is enough), and an optimized probe costs RCU-tasks grace
 * periods to make and to unmake: 100 ms of a 6.1 load, for two checks.
 */
static void vfsfast_split_post(struct kprobe *p, struct pt_regs *regs,
			       unsigned long flags)
{
}

/*
 * Watch the part GCC split off (ftrace site @part) as entered through
 * @via, the ftrace site of a function of @via_args arguments that reaches
 * it, from the calling task: sites the load resolved already.  Each probe
 * goes on the first instruction after the site, where the registers are
 * still the entry's (the site's call saves and restores them): a break
 * point there patches one instruction, where a probe on the site itself
 * would have ftrace pass over its every record to arm it and again to
 * disarm it (8 ms of guest time each, 160 ms of a 5.10 load for the two
 * checks).  0, or the error of registering the probes.
 */
int vfsfast_split_watch(struct vfsfast_split_watch *w, unsigned long via,
			unsigned int via_args, unsigned long part)
{
	struct kprobe *kps[] = { &w->via, &w->part };

	memset(w, 0, sizeof(*w));
	if (!via || !part)
		return -ENOENT;
	w->task = current;
	w->via_args = min_t(unsigned int, via_args, VFSFAST_ARG_REGS);
	w->via.addr = (kprobe_opcode_t *)(via + MCOUNT_INSN_SIZE);
	w->via.pre_handler = vfsfast_split_via_pre;
	w->via.post_handler = vfsfast_split_post;
	w->part.addr = (kprobe_opcode_t *)(part + MCOUNT_INSN_SIZE);
	w->part.pre_handler = vfsfast_split_part_pre;
	w->part.post_handler = vfsfast_split_post;
	return register_kprobes(kps, ARRAY_SIZE(kps));
}

/*
 * After one call through the function watched: NULL if the part was
 * entered with @args, @nargs of them, and the markers after them; else
 * what was seen instead.  Bit i of @ints marks args[i] as an int, whose
 * register's upper half the callee may not read.
 */
const char *vfsfast_split_seen(struct vfsfast_split_watch *w,
			       const unsigned long *args, unsigned int nargs,
			       unsigned int ints)
{
	unsigned int hits = w->hits, i;
	unsigned long seen;

	w->hits = 0;
	if (vfsfast_fi_split_extra() && nargs < VFSFAST_ARG_REGS)
		w->seen[nargs] = 0;
	if (hits != 1)
		return hits ? "entered more than once by one call" :
			      "not entered by the function's call";
	for (i = 0; i < VFSFAST_ARG_REGS; i++) {
		seen = w->seen[i];
		if (i >= nargs) {
			if (seen != VFSFAST_SPLIT_MARK + i)
				return "entered with more arguments than the function takes";
			continue;
		}
		if (ints & BIT(i))
			seen = (u32)seen;
		if (seen != args[i])
			return "entered with other arguments than the function's";
	}
	return NULL;
}

void vfsfast_split_unwatch(struct vfsfast_split_watch *w)
{
	struct kprobe *kps[] = { &w->via, &w->part };

	unregister_kprobes(kps, ARRAY_SIZE(kps));
}
