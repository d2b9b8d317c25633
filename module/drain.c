// SPDX-License-Identifier: GPL-2.0
/*
 * The drain room (engine.h): at unload, every target unhooked, then every
 * task out of vfsfast's text; and the counters that say who is inside.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>

#include "engine.h"

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

/*
 * At run time, with @opt's replacements no longer reached: return once no
 * task is inside one of them, for an ->unshare() that must know that no
 * replacement is still making what it gives back.  The first grace
 * period lets a task sent there before count itself in; a replacement
 * that may sleep for as long as user space decides holds the module
 * instead of counting (vfsfast_hold()), so this waits only for bounded
 * work.
 */
void vfsfast_drain_opt(struct vfsfast_opt *opt)
{
	vfsfast_sync_tasks();
	while (vfsfast_inflight(opt) > 0)
		vfsfast_idle_ms(1);
	vfsfast_sync_tasks();
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
