// SPDX-License-Identifier: GPL-2.0
/*
 * vfsfast module entry: the load-time choice of which optimizations to
 * enable, and the order in which everything is set up and torn down.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <generated/utsrelease.h>

#include "vfsfast.h"

/* Each module/opt_*.c defines one or more, found by gen-targets.sh. */
struct vfsfast_opt *vfsfast_opts[] = { VFSFAST_OPT_LIST, NULL };

DEFINE_MUTEX(vfsfast_mutex);

static char *enable = "auto";
module_param(enable, charp, 0444);
MODULE_PARM_DESC(enable,
		 "Optimizations to enable at load: auto (default: those the running kernel lacks upstream, except opt-in ones and, where ftrace carries them, those that save less than its trip), all, none, or a comma-separated list of names (" VFSFAST_OPT_NAMES ")");

static char *disable = "";
module_param(disable, charp, 0444);
MODULE_PARM_DESC(disable,
		 "Optimizations kept off from load whatever enable= or sysfs asks, for the kernel command line (vfsfast.disable=) or modprobe.d: all, or a comma-separated list of names");

static char *backend = "auto";
module_param(backend, charp, 0444);
MODULE_PARM_DESC(backend,
		 "How targets are redirected: auto (default: the cheapest that works, per optimization), jmp, direct or ftrace");

static struct vfsfast_opt *vfsfast_find(const char *name, size_t len)
{
	struct vfsfast_opt **opt;

	for (opt = vfsfast_opts; *opt; opt++)
		if (strlen((*opt)->name) == len && !strncmp((*opt)->name, name, len))
			return *opt;
	return NULL;
}

/*
 * @list: "all", "" or a comma-separated list of names, for @param; sets
 * want[i] for each optimization named.
 */
static int vfsfast_parse_list(const char *param, const char *list, bool *want)
{
	const char *p = list;
	int i;

	if (!strcmp(p, "all")) {
		for (i = 0; vfsfast_opts[i]; i++)
			want[i] = true;
		return 0;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		struct vfsfast_opt *opt = vfsfast_find(p, len);

		if (!opt) {
			pr_err("%s=%s: unknown optimization '%.*s'\n",
			       param, list, (int)len, p);
			return -EINVAL;
		}
		for (i = 0; vfsfast_opts[i]; i++)
			if (vfsfast_opts[i] == opt)
				want[i] = true;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/*
 * Decide which optimizations to enable, and which disable= keeps off,
 * before touching anything, so that a bad parameter fails the load
 * cleanly.
 */
static int vfsfast_parse_params(bool *want, bool *off)
{
	int i;

	for (i = 0; vfsfast_opts[i]; i++) {
		want[i] = !strcmp(enable, "auto") && !vfsfast_opts[i]->upstream &&
			  !vfsfast_opts[i]->opt_in &&
			  !vfsfast_auto_off(vfsfast_opts[i]);
		off[i] = false;
	}
	if (strcmp(enable, "auto") && strcmp(enable, "none") &&
	    vfsfast_parse_list("enable", enable, want))
		return -EINVAL;
	return vfsfast_parse_list("disable", disable, off);
}

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only: fi_teardown_first=1 at load runs the optimizations'
 * ->teardown() before the drain instead of after it, the order the drain
 * is there to prevent: a task still inside a replacement then adds to
 * what was already freed (t_getname shows the name that leaks).
 */
static bool vfsfast_fi_teardown_first;
module_param_named(fi_teardown_first, vfsfast_fi_teardown_first, bool, 0444);
MODULE_PARM_DESC(fi_teardown_first, "test builds: teardown before the drain");

static void vfsfast_teardown_early(void)
{
	struct vfsfast_opt **opt;

	for (opt = vfsfast_opts; *opt && vfsfast_fi_teardown_first; opt++)
		if ((*opt)->teardown)
			(*opt)->teardown(*opt);
}
#else
#define vfsfast_fi_teardown_first	false
static inline void vfsfast_teardown_early(void) { }
#endif

static void vfsfast_teardown(void)
{
	struct vfsfast_opt **opt;

	/* Returns only once no site leads into our text. */
	vfsfast_unhook_all();
	vfsfast_teardown_early();
	vfsfast_drain();
	for (opt = vfsfast_opts; *opt; opt++) {
		/* No task is inside a replacement: what they keep can go. */
		if ((*opt)->teardown && !vfsfast_fi_teardown_first)
			(*opt)->teardown(*opt);
		vfsfast_opt_release(*opt);
	}
}

static int __init vfsfast_init(void)
{
	bool want[ARRAY_SIZE(vfsfast_opts)], off[ARRAY_SIZE(vfsfast_opts)];
	struct vfsfast_opt **opt;
	int ret, i;

	/* The backends first: what enable=auto turns on depends on them. */
	ret = vfsfast_hook_init(backend);
	if (ret)
		return ret;
	ret = vfsfast_parse_params(want, off);
	if (ret)
		return ret;
	for (opt = vfsfast_opts; *opt; opt++)
		vfsfast_opt_want(*opt);
	vfsfast_quiesce_want();
	/* Without it only exported targets resolve; readlink needs none. */
	vfsfast_symbols_init();
	vfsfast_quiesce_init();

	for (opt = vfsfast_opts; *opt; opt++)
		vfsfast_opt_prepare(*opt);
	/* One grace period for every lookup's kprobe, before any hook. */
	vfsfast_symbols_done();
	ret = vfsfast_sysfs_init();
	if (ret)
		goto fail;
	/* Before any hook exists, so that no livepatch can find one unasked. */
	ret = vfsfast_yield_init();
	if (ret)
		goto fail;

	mutex_lock(&vfsfast_mutex);
	for (i = 0; vfsfast_opts[i]; i++) {
		if (off[i])
			vfsfast_opt_disable(vfsfast_opts[i]);
		else if (want[i] && !vfsfast_final(vfsfast_opts[i]))
			vfsfast_opt_request(vfsfast_opts[i], true);
	}
	mutex_unlock(&vfsfast_mutex);

	pr_info("version %s loaded for %s\n", VFSFAST_VERSION, UTS_RELEASE);
	return 0;
fail:
	vfsfast_sysfs_exit();
	vfsfast_teardown();
	return ret;
}

static void __exit vfsfast_exit(void)
{
	/*
	 * No sysfs writer or module event can race with the teardown once
	 * the files and the notifier are gone.
	 */
	vfsfast_sysfs_exit();
	vfsfast_yield_exit();
	vfsfast_teardown();
	pr_info("unloaded\n");
}

module_init(vfsfast_init);
module_exit(vfsfast_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Switchable fast paths for hot VFS functions");
MODULE_VERSION(VFSFAST_VERSION);
