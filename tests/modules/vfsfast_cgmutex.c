// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: holds cgroup_mutex, as a cgroup.procs write does while
 * cpuset's attach waits for an mmap lock that a FUSE daemon keeps, until
 * /sys/module/vfsfast_cgmutex/parameters/release is written (60 s at
 * most).  A read of /proc/<pid>/cgroup that stock answers then sleeps on
 * the mutex for as long as the test decides, which is what t_cgroup needs
 * to see whether any of vfsfast's text stays on that reader's stack.
 * held says the mutex is taken.
 */
#include <linux/delay.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>

static bool release;
module_param(release, bool, 0644);
MODULE_PARM_DESC(release, "write 1 to let cgroup_mutex go");
static bool held;
module_param(held, bool, 0444);
MODULE_PARM_DESC(held, "cgroup_mutex is held");

static unsigned long addr;
module_param(addr, ulong, 0444);
MODULE_PARM_DESC(addr, "cgroup_mutex's address, where kallsyms does not name it");

static struct task_struct *holder;

static int cgmutex_hold(void *data)
{
	struct mutex *m = data;
	int ms;

	mutex_lock(m);
	WRITE_ONCE(held, true);
	for (ms = 0; ms < 60000 && !READ_ONCE(release) && !kthread_should_stop(); ms += 20)
		msleep(20);
	WRITE_ONCE(held, false);
	mutex_unlock(m);
	while (!kthread_should_stop())
		msleep(20);
	return 0;
}

/* kallsyms_lookup_name() is not exported: a kprobe finds it. */
static unsigned long cgmutex_lookup(const char *name)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long (*lookup)(const char *name);

	if (register_kprobe(&kp) < 0)
		return 0;
	lookup = (void *)kp.addr;
	unregister_kprobe(&kp);
	return lookup(name);
}

static int __init cgmutex_init(void)
{
	struct mutex *m = (struct mutex *)(addr ?: cgmutex_lookup("cgroup_mutex"));

	if (!m)
		return -ENOENT;
	holder = kthread_run(cgmutex_hold, m, "vfcgmutex");
	return PTR_ERR_OR_ZERO(holder);
}

static void __exit cgmutex_exit(void)
{
	WRITE_ONCE(release, true);
	kthread_stop(holder);
}

module_init(cgmutex_init);
module_exit(cgmutex_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vfsfast test: hold cgroup_mutex until told");
