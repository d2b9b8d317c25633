// SPDX-License-Identifier: GPL-2.0
/*
 * The route room (engine.h): where each target's callers go, its redirect
 * word and, for a backend that fixes the address in the site, the site.
 */
#include "engine.h"

/*
 * Point @func's callers at its replacement (@on) or at the stock code, and
 * have a backend that fixes the address in the site follow.  The one
 * writer of a redirect word.  A broken optimization's targets stay on the
 * stock code for good: a replacement may trust observers that are gone,
 * and nothing may route one back in (-EIO).
 */
int vfsfast_route(struct vfsfast_opt *opt, struct vfsfast_func *func, bool on)
{
	if (on && opt->state == VFSFAST_BROKEN)
		return -EIO;
	WRITE_ONCE(*func->redirect,
		   (unsigned long)(on ? func->new_func : func->stock));
	/* The group's callback reads the word at every call. */
	if (!func->attached || func->grouped || !opt->backend ||
	    !opt->backend->retarget)
		return 0;
	return opt->backend->retarget(func);
}

/*
 * Route @opt's observers (@observers) or its replacements: forwards when
 * turning them on, backwards when turning them off, as they attach and
 * detach.
 */
int vfsfast_route_all(struct vfsfast_opt *opt, bool observers, bool on)
{
	int i, n = vfsfast_nfuncs(opt), ret;

	for (i = 0; i < n; i++) {
		struct vfsfast_func *func = &opt->funcs[on ? i : n - 1 - i];

		if (func->observer != observers)
			continue;
		ret = vfsfast_route(opt, func, on);
		if (ret)
			return ret;
	}
	return 0;
}
