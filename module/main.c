// SPDX-License-Identifier: GPL-2.0
/*
 * vfsfast module entry: the list of optimizations, the load-time choice of
 * which to enable, and the order in which everything is set up and torn
 * down.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <generated/utsrelease.h>

#include "vfsfast.h"

struct vfsfast_opt *vfsfast_opts[] = {
	&vfsfast_opt_readlink,
	NULL
};

DEFINE_MUTEX(vfsfast_mutex);

static char *enable = "auto";
module_param(enable, charp, 0444);
MODULE_PARM_DESC(enable,
		 "Optimizations to enable at load: auto (default: those the running kernel lacks upstream), all, none, or a comma-separated list of names (readlink)");

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
 * Decide which optimizations to enable before touching anything, so that
 * a bad parameter fails the load cleanly.
 */
static int vfsfast_parse_enable(bool *want)
{
	const char *p = enable;
	int i;

	for (i = 0; vfsfast_opts[i]; i++)
		want[i] = false;
	if (!strcmp(p, "none") || !*p)
		return 0;
	if (!strcmp(p, "auto") || !strcmp(p, "all")) {
		for (i = 0; vfsfast_opts[i]; i++)
			want[i] = !strcmp(p, "all") || !vfsfast_opts[i]->upstream;
		return 0;
	}
	while (*p) {
		size_t len = strcspn(p, ",");
		struct vfsfast_opt *opt = vfsfast_find(p, len);

		if (!opt) {
			pr_err("enable=%s: unknown optimization '%.*s'\n",
			       enable, (int)len, p);
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

static void vfsfast_teardown(void)
{
	struct vfsfast_opt **opt;

	mutex_lock(&vfsfast_mutex);
	for (opt = vfsfast_opts; *opt; opt++)
		vfsfast_opt_disable(*opt);
	mutex_unlock(&vfsfast_mutex);
	vfsfast_drain();
	for (opt = vfsfast_opts; *opt; opt++)
		vfsfast_opt_release(*opt);
}

static int __init vfsfast_init(void)
{
	bool want[ARRAY_SIZE(vfsfast_opts)];
	struct vfsfast_opt **opt;
	int ret, i;

	ret = vfsfast_parse_enable(want);
	if (ret)
		return ret;
	ret = vfsfast_hook_init(backend);
	if (ret)
		return ret;
	/* Without it only exported targets resolve; readlink needs none. */
	vfsfast_symbols_init();

	for (opt = vfsfast_opts; *opt; opt++)
		vfsfast_opt_prepare(*opt);
	ret = vfsfast_sysfs_init();
	if (ret)
		goto fail;

	mutex_lock(&vfsfast_mutex);
	for (i = 0; vfsfast_opts[i]; i++) {
		if (!want[i] || vfsfast_opts[i]->unsupported)
			continue;
		ret = vfsfast_opt_enable(vfsfast_opts[i]);
		if (ret)
			pr_info("%s: not enabled at load (%d)\n",
				vfsfast_opts[i]->name, ret);
	}
	mutex_unlock(&vfsfast_mutex);

	pr_info("version %s loaded for %s\n", VFSFAST_VERSION, UTS_RELEASE);
	return 0;
fail:
	vfsfast_teardown();
	return ret;
}

static void __exit vfsfast_exit(void)
{
	/* No sysfs writer can race with the teardown once the files are gone. */
	vfsfast_sysfs_exit();
	vfsfast_teardown();
	pr_info("unloaded\n");
}

module_init(vfsfast_init);
module_exit(vfsfast_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Switchable fast paths for hot VFS functions");
MODULE_VERSION(VFSFAST_VERSION);
