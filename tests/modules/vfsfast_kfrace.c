// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: park a task inside a kernfs function, before it takes
 * kernfs_mutex (5.10) or the root's kernfs_rwsem (5.15 and later), for as
 * long as the test wants.
 *
 * A kthread creates (add=NAME: /sys/kernel/NAME) or renames
 * (rename=OLD:NEW, the directory made by a previous add=OLD) a kobject.
 * Kprobes on mutex_lock() and down_write() catch that kthread's call from
 * kernfs_add_one() or kernfs_rename_ns() and send it to a park function,
 * which sleeps until release=1 and then takes the lock as the probed
 * function would have.  rename_late=OLD:NEW parks the rename after its
 * work instead: a kprobe on up_write() lets kernfs_rename_ns() release
 * kernfs_rwsem, then parks it before it returns, with the node renamed
 * and whatever an observer does after the stock call not yet done.
 * chmod_late=NAME:MODE does the same to a chmod of the attribute "vfattr"
 * that each add= makes (sysfs_chmod_file(), parked in kernfs_setattr()
 * after kernfs_iattr_rwsem is released: the node has its new mode, the
 * inode not yet).  So the kthread sits inside the stock kernfs function, its work
 * not yet done, while the test turns vfsfast's kernfs knob on: exactly
 * the call that entered a function before its observer existed.
 *
 * state: idle | running | parked | done <errno>.  remove=1 drops every
 * kobject made here.
 *
 * retprobe=1 (at load) also puts a kretprobe on the park functions, as a
 * tracer would on whatever a kernfs function calls: the return address
 * into the kernfs function, the one word of its text on the parked
 * stack, becomes the kretprobe's trampoline.  retprobe_hits counts the
 * parks that returned through it.
 */
#include <linux/delay.h>
#include <linux/kallsyms.h>
#include <linux/kobject.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ptrace.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/wait.h>

#define KFRACE_MAX 16

static DEFINE_MUTEX(kfrace_lock);
static struct kobject *kfrace_objs[KFRACE_MAX];
static struct task_struct *kfrace_task;
static const char *kfrace_in;	/* the function to park in */
static char kfrace_old[64], kfrace_new[64];
static bool kfrace_released, kfrace_passing;
static char kfrace_state[32] = "idle";
static DECLARE_WAIT_QUEUE_HEAD(kfrace_wq);

static void kfrace_set_state(const char *fmt, int err)
{
	snprintf(kfrace_state, sizeof(kfrace_state), fmt, err);
}

/*
 * The lock taken once released, in a frame of its own: /proc/<pid>/stack
 * leaves out the scheduler's functions (the lock's slow path among them),
 * so a test tells the kthread waiting for the lock from one still parked
 * by this frame at the top of its stack.
 */
static noinline void kfrace_lock_mutex(struct mutex *lock)
{
	mutex_lock(lock);
	barrier();	/* a call, not a tail call that would leave no frame */
}

static noinline void kfrace_lock_rwsem(struct rw_semaphore *sem)
{
	down_write(sem);
	barrier();
}

/* Called instead of mutex_lock() by the parked kthread. */
static void kfrace_park(struct mutex *lock)
{
	kfrace_set_state("parked", 0);
	wait_event(kfrace_wq, READ_ONCE(kfrace_released));
	WRITE_ONCE(kfrace_passing, true);
	kfrace_lock_mutex(lock);
	WRITE_ONCE(kfrace_passing, false);
}

/* Called instead of down_write() by the parked kthread. */
static void kfrace_park_rwsem(struct rw_semaphore *sem)
{
	kfrace_set_state("parked", 0);
	wait_event(kfrace_wq, READ_ONCE(kfrace_released));
	WRITE_ONCE(kfrace_passing, true);
	kfrace_lock_rwsem(sem);
	WRITE_ONCE(kfrace_passing, false);
}

/* Called instead of up_write() by the kthread parked late. */
static void kfrace_park_late(struct rw_semaphore *sem)
{
	WRITE_ONCE(kfrace_passing, true);
	up_write(sem);
	kfrace_set_state("parked", 0);
	wait_event(kfrace_wq, READ_ONCE(kfrace_released));
}

static bool retprobe;
module_param(retprobe, bool, 0444);
static int retprobe_hits;
module_param(retprobe_hits, int, 0444);

static int kfrace_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	WRITE_ONCE(retprobe_hits, READ_ONCE(retprobe_hits) + 1);
	return 0;
}

static struct kretprobe kfrace_rp[] = {
	{ .kp.addr = (kprobe_opcode_t *)kfrace_park, .handler = kfrace_ret },
	{ .kp.addr = (kprobe_opcode_t *)kfrace_park_rwsem, .handler = kfrace_ret },
	{ .kp.addr = (kprobe_opcode_t *)kfrace_park_late, .handler = kfrace_ret },
};
static struct kretprobe *kfrace_rps[] = { &kfrace_rp[0], &kfrace_rp[1], &kfrace_rp[2] };

static struct kprobe kfrace_kp, kfrace_kp_late;
static bool kfrace_late;

/*
 * The return address of a function stopped at its first instruction: in
 * the link register where the architecture has one (arm64's x30, which
 * the callee has not signed yet), else on top of the stack (x86's call).
 */
#ifdef procedure_link_pointer
#define kfrace_entry_ret(regs)	procedure_link_pointer(regs)
#else
#define kfrace_entry_ret(regs)	(*(unsigned long *)(regs)->sp)
#endif

static int kfrace_pre(struct kprobe *p, struct pt_regs *regs)
{
	char buf[KSYM_SYMBOL_LEN];
	size_t len;

	if (current != READ_ONCE(kfrace_task) || READ_ONCE(kfrace_passing) ||
	    READ_ONCE(kfrace_late) != (p == &kfrace_kp_late))
		return 0;
	/* mutex_lock()'s return address: which kernfs function called it. */
	sprint_symbol(buf, kfrace_entry_ret(regs));
	len = strlen(kfrace_in);
	if (strncmp(buf, kfrace_in, len) || buf[len] != '+')
		return 0;
	if (p == &kfrace_kp)
		instruction_pointer_set(regs, (unsigned long)kfrace_park);
	else if (p == &kfrace_kp_late)
		instruction_pointer_set(regs, (unsigned long)kfrace_park_late);
	else
		instruction_pointer_set(regs, (unsigned long)kfrace_park_rwsem);
	return 1;
}

static struct kprobe kfrace_kp = {
	.symbol_name = "mutex_lock",
	.pre_handler = kfrace_pre,
};

static struct kprobe kfrace_kp_rwsem = {
	.symbol_name = "down_write",
	.pre_handler = kfrace_pre,
};
static struct kprobe kfrace_kp_late = {
	.symbol_name = "up_write",
	.pre_handler = kfrace_pre,
};
static bool kfrace_rwsem_registered, kfrace_late_registered;

static int kfrace_slot(const char *name)
{
	int i;

	for (i = 0; i < KFRACE_MAX; i++)
		if (kfrace_objs[i] && !strcmp(kobject_name(kfrace_objs[i]), name))
			return i;
	return -1;
}

enum kfrace_op { KFRACE_ADD, KFRACE_RENAME, KFRACE_CHMOD };

static ssize_t kfrace_attr_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sprintf(buf, "vfattr\n");
}

static struct kobj_attribute kfrace_attr = __ATTR(vfattr, 0444,
						  kfrace_attr_show, NULL);

static int kfrace_thread(void *data)
{
	enum kfrace_op op = (unsigned long)data;
	struct kobject *kobj;
	umode_t mode;
	int i, err = 0;

	if (op == KFRACE_ADD) {
		for (i = 0; i < KFRACE_MAX && kfrace_objs[i]; i++)
			;
		if (i == KFRACE_MAX)
			err = -ENOSPC;
		else
			kfrace_objs[i] = kobject_create_and_add(kfrace_new, kernel_kobj);
		if (!err && !kfrace_objs[i])
			err = -ENOMEM;
		if (!err)
			err = sysfs_create_file(kfrace_objs[i], &kfrace_attr.attr);
	} else {
		i = kfrace_slot(kfrace_old);
		kobj = i < 0 ? NULL : kfrace_objs[i];
		if (!kobj)
			err = -ENOENT;
		else if (op == KFRACE_RENAME)
			err = kobject_rename(kobj, kfrace_new);
		else if (kstrtou16(kfrace_new, 8, &mode))
			err = -EINVAL;
		else
			err = sysfs_chmod_file(kobj, &kfrace_attr.attr, mode);
	}
	WRITE_ONCE(kfrace_task, NULL);
	kfrace_set_state("done %d", err);
	return 0;
}

static int kfrace_start(const char *val, enum kfrace_op op, bool late)
{
	static const char * const in[] = {
		[KFRACE_ADD] = "kernfs_add_one",
		[KFRACE_RENAME] = "kernfs_rename_ns",
		[KFRACE_CHMOD] = "kernfs_setattr",
	};
	char buf[130], *sep;
	struct task_struct *t;

	strscpy(buf, val, sizeof(buf));
	strim(buf);
	mutex_lock(&kfrace_lock);
	if (READ_ONCE(kfrace_task)) {
		mutex_unlock(&kfrace_lock);
		return -EBUSY;
	}
	if (op == KFRACE_ADD) {
		strscpy(kfrace_new, buf, sizeof(kfrace_new));
	} else {
		sep = strchr(buf, ':');
		if (!sep) {
			mutex_unlock(&kfrace_lock);
			return -EINVAL;
		}
		*sep = '\0';
		strscpy(kfrace_old, buf, sizeof(kfrace_old));
		strscpy(kfrace_new, sep + 1, sizeof(kfrace_new));
	}
	if (late && !kfrace_late_registered) {
		mutex_unlock(&kfrace_lock);
		return -EOPNOTSUPP;
	}
	kfrace_in = in[op];
	WRITE_ONCE(kfrace_late, late);
	WRITE_ONCE(kfrace_passing, false);
	WRITE_ONCE(kfrace_released, false);
	kfrace_set_state("running", 0);
	t = kthread_create(kfrace_thread, (void *)(unsigned long)op, "kfrace");
	if (IS_ERR(t)) {
		mutex_unlock(&kfrace_lock);
		return PTR_ERR(t);
	}
	WRITE_ONCE(kfrace_task, t);
	wake_up_process(t);
	mutex_unlock(&kfrace_lock);
	return 0;
}

static int kfrace_add_set(const char *val, const struct kernel_param *kp)
{
	return kfrace_start(val, KFRACE_ADD, false);
}

static int kfrace_rename_set(const char *val, const struct kernel_param *kp)
{
	return kfrace_start(val, KFRACE_RENAME, false);
}

static int kfrace_rename_late_set(const char *val,
				  const struct kernel_param *kp)
{
	return kfrace_start(val, KFRACE_RENAME, true);
}

static int kfrace_chmod_late_set(const char *val,
				 const struct kernel_param *kp)
{
	return kfrace_start(val, KFRACE_CHMOD, true);
}

static int kfrace_release_set(const char *val, const struct kernel_param *kp)
{
	WRITE_ONCE(kfrace_released, true);
	wake_up(&kfrace_wq);
	return 0;
}

static void kfrace_remove_all(void)
{
	int i;

	for (i = 0; i < KFRACE_MAX; i++) {
		kobject_put(kfrace_objs[i]);
		kfrace_objs[i] = NULL;
	}
}

static int kfrace_remove_set(const char *val, const struct kernel_param *kp)
{
	mutex_lock(&kfrace_lock);
	if (READ_ONCE(kfrace_task)) {
		mutex_unlock(&kfrace_lock);
		return -EBUSY;
	}
	kfrace_remove_all();
	mutex_unlock(&kfrace_lock);
	return 0;
}

static int kfrace_state_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%s\n", kfrace_state);
}

static const struct kernel_param_ops kfrace_add_ops = { .set = kfrace_add_set };
static const struct kernel_param_ops kfrace_rename_ops = { .set = kfrace_rename_set };
static const struct kernel_param_ops kfrace_rename_late_ops = {
	.set = kfrace_rename_late_set
};
static const struct kernel_param_ops kfrace_chmod_late_ops = {
	.set = kfrace_chmod_late_set
};
static const struct kernel_param_ops kfrace_release_ops = { .set = kfrace_release_set };
static const struct kernel_param_ops kfrace_remove_ops = { .set = kfrace_remove_set };
static const struct kernel_param_ops kfrace_state_ops = { .get = kfrace_state_get };

module_param_cb(add, &kfrace_add_ops, NULL, 0200);
module_param_cb(rename, &kfrace_rename_ops, NULL, 0200);
module_param_cb(rename_late, &kfrace_rename_late_ops, NULL, 0200);
module_param_cb(chmod_late, &kfrace_chmod_late_ops, NULL, 0200);
module_param_cb(release, &kfrace_release_ops, NULL, 0200);
module_param_cb(remove, &kfrace_remove_ops, NULL, 0200);
module_param_cb(state, &kfrace_state_ops, NULL, 0444);

static void kfrace_exit_probes(void)
{
	unregister_kprobe(&kfrace_kp);
	if (kfrace_rwsem_registered)
		unregister_kprobe(&kfrace_kp_rwsem);
	if (kfrace_late_registered)
		unregister_kprobe(&kfrace_kp_late);
}

static int __init kfrace_init(void)
{
	int ret = register_kprobe(&kfrace_kp);

	/* With lock debugging, mutex_lock() is mutex_lock_nested(lock, 0). */
	if (ret) {
		kfrace_kp.symbol_name = "mutex_lock_nested";
		kfrace_kp.addr = NULL;
		ret = register_kprobe(&kfrace_kp);
	}
	if (ret)
		return ret;
	kfrace_rwsem_registered = !register_kprobe(&kfrace_kp_rwsem);
	kfrace_late_registered = !register_kprobe(&kfrace_kp_late);
	if (retprobe) {
		ret = register_kretprobes(kfrace_rps, ARRAY_SIZE(kfrace_rps));
		if (ret) {
			retprobe = false;
			kfrace_exit_probes();
			return ret;
		}
	}
	return 0;
}

static void __exit kfrace_exit(void)
{
	kfrace_exit_probes();
	kfrace_release_set(NULL, NULL);
	while (READ_ONCE(kfrace_task))
		msleep(20);
	if (retprobe)
		unregister_kretprobes(kfrace_rps, ARRAY_SIZE(kfrace_rps));
	kfrace_remove_all();
}

module_init(kfrace_init);
module_exit(kfrace_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vfsfast test: park a task inside kernfs_add_one() or kernfs_rename_ns()");
