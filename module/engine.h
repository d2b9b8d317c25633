/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hook engine: what enabling and disabling an optimization means,
 * whatever backend carries the redirect.
 *
 * Each target has a word, vfsfast_redirect_<name>, naming where its callers
 * go while the optimization is on (the replacement, or for passthrough
 * straight back to the stock body), and a word, vfsfast_body_<name>, naming its body just past
 * the ftrace site, through which replacements reach the stock code
 * (tramp.S).  A backend (backend_direct.c, backend_ftrace.c) does the
 * sending.  Enabling tries the backends in the order the backend=
 * parameter allows, all targets of an optimization with one backend or
 * none; disabling detaches them, so "off" is the stock kernel exactly.
 *
 * The module's rooms, lowest first.  A room calls only the rooms listed
 * before it: a lower room never calls an upper one, and a query that two
 * rooms need lives in the lower (the state room's inlines below, the
 * livepatch scan under attach).  An upper room reaches down; a lower one
 * reaches up only through a pointer the upper one gave it (->setup,
 * ->arm, a backend's ops, a notifier).  `vfsfast-lab style` checks this
 * table against the calls in module/ (scripts/lablib/rooms.py).
 *
 *   fault     fault.c                 test builds: hold a task by name
 *   state     state.c engine.h        states and their reasons
 *   arch      arch/<arch>/site.c      where a site is, and whether it is live
 *   symbols   symbols.c               lookups of unexported symbols
 *   split     split.c                 the shape of a split part
 *   bounded   bounded.c               filesystems that cannot wait on users
 *   quiesce   quiesce.c               calls that entered unobserved
 *   backend   backend.c backend_direct.c backend_ftrace.c   the redirects
 *   prepare   prepare.c               targets resolved at load
 *   route     route.c                 the redirect words
 *   lpscan    lpscan.c                which livepatch patches a function
 *   attach    attach.c                attach and detach, going live
 *   request   request.c               enable, disable, passthrough
 *   handover  yield.c                 livepatches coming and going
 *   drain     drain.c                 unhook and drain before unload
 *   opts      opt_*.c                 the optimizations
 *   sysfs     sysfs.c                 the knobs
 *   main      main.c                  load and unload
 */
#ifndef _VFSFAST_ENGINE_H
#define _VFSFAST_ENGINE_H

#include "vfsfast.h"

/* state.c */

/* Move @opt to @state, which needs no reason; never out of a final one. */
static inline void vfsfast_set(struct vfsfast_opt *opt,
			       enum vfsfast_state state)
{
	if (vfsfast_final(opt))
		return;
	opt->reason[0] = '\0';
	WRITE_ONCE(opt->state, state);
}

/* The same, for a state that status prints with its reason. */
__printf(3, 4)
void vfsfast_set_why(struct vfsfast_opt *opt, enum vfsfast_state state,
		     const char *fmt, ...);

/* How many targets @opt has (none, for one the kernel cannot have). */
static inline int vfsfast_nfuncs(struct vfsfast_opt *opt)
{
	int n = 0;

	while (opt->funcs[n].old_name)
		n++;
	return n;
}

static inline bool vfsfast_has_observers(struct vfsfast_opt *opt)
{
	struct vfsfast_func *func;

	for (func = opt->funcs; func->old_name; func++)
		if (func->observer)
			return true;
	return false;
}

/* Targets of @opt still attached; *@name, if given, is one of them. */
static inline int vfsfast_nattached(struct vfsfast_opt *opt, const char **name)
{
	struct vfsfast_func *func;
	int n = 0;

	for (func = opt->funcs; func->old_name; func++) {
		if (!func->attached)
			continue;
		if (name)
			*name = func->old_name;
		n++;
	}
	return n;
}

/* route.c */
int vfsfast_route(struct vfsfast_opt *opt, struct vfsfast_func *func, bool on);
int vfsfast_route_all(struct vfsfast_opt *opt, bool observers, bool on);

/* lpscan.c */
void vfsfast_lp_track(const char *name, bool live);
const char *vfsfast_lp_holder(const char *func);

/* attach.c */
/* vfsfast_unhook_all() sets it, vfsfast_break() reads it. */
extern bool vfsfast_exiting;
int vfsfast_go_live(struct vfsfast_opt *opt);
int vfsfast_opt_attach(struct vfsfast_opt *opt, const char **failed);
void vfsfast_unshare(struct vfsfast_opt *opt, bool begin);
void vfsfast_opt_detach(struct vfsfast_opt *opt);

#endif /* _VFSFAST_ENGINE_H */
