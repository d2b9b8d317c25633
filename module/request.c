// SPDX-License-Identifier: GPL-2.0
/*
 * The request room (engine.h): what sysfs and the enable= parameter ask
 * of an optimization, on, off or passthrough.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/string.h>

#include "engine.h"

/*
 * What sysfs and the enable= parameter ask for; logs the outcome in one
 * line.  Asking again for what is already in effect changes nothing.
 */
int vfsfast_opt_request(struct vfsfast_opt *opt, bool on)
{
	char was[sizeof(opt->reason)];
	const char *failed = "";
	bool was_yielded;
	int ret;

	lockdep_assert_held(&vfsfast_mutex);
	if (!on) {
		bool was = vfsfast_hooked(opt) || opt->requested;

		opt->requested = false;
		opt->holder[0] = '\0';
		vfsfast_opt_detach(opt);
		if (was)
			pr_info("%s: disabled\n", opt->name);
		return 0;
	}
	switch (opt->state) {
	case VFSFAST_UNSUPPORTED:
		pr_info("%s: enable refused: unsupported: %s\n", opt->name,
			opt->reason);
		return -EOPNOTSUPP;
	case VFSFAST_BROKEN:
		pr_info("%s: enable refused: broken: %s\n", opt->name,
			opt->reason);
		return -EIO;
	case VFSFAST_DISABLED:
		pr_info("%s: enable refused: off by the disable= parameter\n",
			opt->name);
		return -EPERM;
	case VFSFAST_ACTIVE:
	case VFSFAST_PASSTHROUGH:
		return 0;
	default:
		break;
	}
	was_yielded = opt->state == VFSFAST_YIELDED;
	strscpy(was, opt->reason, sizeof(was));
	opt->requested = true;
	ret = vfsfast_opt_attach(opt, &failed);
	if (ret) {
		pr_info("%s: enable refused: %s\n", opt->name, opt->reason);
		/* The livepatch it yielded to still holds it: still yielded. */
		if (was_yielded && ret == -EBUSY)
			vfsfast_set_why(opt, VFSFAST_YIELDED, "%s", was);
		return ret;
	}
	pr_info("%s: enabled (%s%s%s)\n", opt->name, opt->backend->name,
		opt->skipped[0] ? "; failed: " : "", opt->skipped);
	return 0;
}

/*
 * Passthrough on: every target straight to the stock code, replacements
 * first, then what they made given back (->unshare()), then the
 * observers.  Off: the observers back first, then the replacements once the
 * observers can be trusted, as on enable.
 */
int vfsfast_opt_set_passthrough(struct vfsfast_opt *opt, bool on)
{
	int ret;

	lockdep_assert_held(&vfsfast_mutex);
	if (on == opt->passthrough)
		return 0;
	if (on) {
		if (vfsfast_hooked(opt))
			vfsfast_unshare(opt, true);
		ret = vfsfast_route_all(opt, false, false);
		if (!ret && vfsfast_hooked(opt))
			vfsfast_unshare(opt, false);
		if (!ret)
			ret = vfsfast_route_all(opt, true, false);
	} else {
		ret = vfsfast_route_all(opt, true, true);
		if (!ret)
			ret = vfsfast_hooked(opt) ? vfsfast_go_live(opt) :
			      vfsfast_route_all(opt, false, true);
	}
	if (ret) {
		/* Put back what every target was following. */
		vfsfast_route_all(opt, true, !opt->passthrough);
		vfsfast_route_all(opt, false, !opt->passthrough);
		return ret;
	}
	opt->passthrough = on;
	if (vfsfast_hooked(opt))
		vfsfast_set(opt, on ? VFSFAST_PASSTHROUGH : VFSFAST_ACTIVE);
	return 0;
}
