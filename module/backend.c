// SPDX-License-Identifier: GPL-2.0
/*
 * The backend room (engine.h): which backends enabling may use, and the
 * ftrace filter their ops share.  backend_direct.c and backend_ftrace.c
 * are the backends, module/arch/<arch>/site.c what a site looks like.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/string.h>

#include "engine.h"

static const struct vfsfast_backend *const vfsfast_backends[] = {
	&vfsfast_backend_jmp, &vfsfast_backend_direct, &vfsfast_backend_ftrace,
};

/* The backends enabling may use, best first; NULL-terminated. */
const struct vfsfast_backend *vfsfast_backend_order[ARRAY_SIZE(vfsfast_backends) + 1];

/* @choice: "auto" (every backend this kernel has, best first) or a name. */
int vfsfast_hook_init(const char *choice)
{
	int i, n = 0;
	bool any = !strcmp(choice, "auto");

	for (i = 0; i < ARRAY_SIZE(vfsfast_backends); i++) {
		const struct vfsfast_backend *b = vfsfast_backends[i];

		if (!any && strcmp(choice, b->name))
			continue;
		if (b->unavailable) {
			pr_info("backend %s: unavailable: %s\n", b->name,
				b->unavailable);
			if (!any)
				return -EOPNOTSUPP;
			continue;
		}
		vfsfast_backend_order[n++] = b;
	}
	if (!n) {
		pr_err("backend=%s: unknown backend\n", choice);
		return -EINVAL;
	}
	return 0;
}

/*
 * Why enable=auto leaves @opt off on this kernel, where neither upstream
 * nor opt-in says so, or NULL.  A lookup_exec check saves about 40
 * instructions; an ftrace trip costs 50 on 6.12-arm64 and 188 on 6.1's
 * arm64, whose ftrace walks a list of ops (Documentation/results.md), so
 * the best backend enabling would use decides.
 */
const char *vfsfast_auto_off(const struct vfsfast_opt *opt)
{
	if (opt->unless_ftrace && vfsfast_backend_order[0] == &vfsfast_backend_ftrace)
		return "an ftrace trip costs more than it saves a call";
	return NULL;
}

/*
 * Add (@on) or remove @func's ftrace site in @ops' filter, once; *@filtered
 * says which it is in.  ftrace_free_filter() is not exported before 6.2.
 */
int vfsfast_filter_site(struct ftrace_ops *ops, struct vfsfast_func *func,
			bool *filtered, bool on)
{
	int ret;

	if (*filtered == on)
		return 0;
	ret = ftrace_set_filter_ip(ops, func->site, !on, 0);
	if (!ret || !on)
		*filtered = on;
	return ret;
}
