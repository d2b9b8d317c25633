// SPDX-License-Identifier: GPL-2.0
/*
 * Test only, for KASAN kernels: one read of a name after putname(), which
 * KASAN must report whatever vfsfast's getname knob says.  getname keeps
 * names for reuse: a kept one would be live to KASAN, and this read, a
 * bug in a caller, would go unseen.
 *
 * touch=1 takes a name with getname_kernel(), releases it with putname()
 * and reads its first byte.  The read is the only thing between the two
 * lines printed around it, which the lab's console scan knows: a KASAN
 * report between them is expected, anything else still fails the run.
 * The guests of KASAN kernels boot with kasan_multi_shot, so the report
 * neither panics the guest (panic_on_warn) nor silences later ones.  A
 * name KFENCE sampled is not the one read: KFENCE would report the read
 * instead of KASAN, and panic_on_warn panics on any KFENCE report.
 *
 * 5.10 exports neither function: both are found through a kprobe, as
 * vfsfast finds its targets, and called through a pointer to their entry.
 */
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/string.h>

#include "vfsfast_probes.h"
#ifdef VFSFAST_HAVE_KFENCE
#include <linux/kfence.h>
#else
static inline bool is_kfence_address(const void *p)
{
	return false;
}
#endif

static int touched;
module_param(touched, int, 0444);
MODULE_PARM_DESC(touched, "the byte read after putname(), once touch=1 ran");

/* The entry of @name: a kprobe's address, back over an ENDBR. */
static void *nameuaf_entry(const char *name)
{
	struct kprobe kp = { .symbol_name = name, .flags = KPROBE_FLAG_DISABLED };
	char buf[KSYM_SYMBOL_LEN];
	unsigned long addr, offset, size;
	char *plus;

	if (register_kprobe(&kp) < 0)
		return NULL;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	sprint_symbol(buf, addr);
	plus = strchr(buf, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", &offset, &size) != 2)
		return NULL;
	*plus = '\0';
	return strcmp(buf, name) ? NULL : (void *)(addr - offset);
}

static int nameuaf_touch(const char *val, const struct kernel_param *kp)
{
	struct filename *(*take)(const char *name);
	void (*release)(struct filename *name);
	struct filename *name, *sampled[8];
	unsigned int n = 0;

	take = nameuaf_entry("getname_kernel");
	release = nameuaf_entry("putname");
	if (!take || !release)
		return -ENOENT;
	for (;;) {
		name = take("vfsfast-nameuaf");
		if (IS_ERR(name) || !is_kfence_address(name) ||
		    n == ARRAY_SIZE(sampled))
			break;
		sampled[n++] = name;
	}
	while (n)
		release(sampled[--n]);
	if (IS_ERR(name))
		return PTR_ERR(name);
	if (is_kfence_address(name)) {
		release(name);
		return -EAGAIN;
	}
	release(name);
	pr_err("vfsfast_nameuaf: expected KASAN report begin\n");
	touched = READ_ONCE(name->iname[0]);
	pr_err("vfsfast_nameuaf: expected KASAN report end\n");
	return 0;
}

static const struct kernel_param_ops nameuaf_touch_ops = { .set = nameuaf_touch };
module_param_cb(touch, &nameuaf_touch_ops, NULL, 0200);
MODULE_PARM_DESC(touch, "read a name after putname() (KASAN kernels only)");

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("vfsfast test: a use of a name after putname(), for KASAN to report");
