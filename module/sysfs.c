// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/vfsfast/
 *
 *   version                 module version and the kernel it was built for
 *   backends                the backends enabling may use, best first
 *   load_time               when this load began, seconds since the epoch
 *   <opt>/enabled           0644  0 or 1; accepts 0, 1, on, off
 *   <opt>/passthrough       0644  0 or 1; 1 redirects straight back into the
 *                                 stock function (measures the cost of the
 *                                 redirect itself; counts nothing)
 *   <opt>/status            0444  line 1, the state (enum vfsfast_state):
 *                                         off | active | passthrough |
 *                                         yielded: <function> taken by
 *                                         <livepatch module> |
 *                                         conflict: <why> (a target is
 *                                         held by another ftrace user, or
 *                                         the enable could not finish) |
 *                                         broken: <function>: <why> (a
 *                                         target could not be unhooked:
 *                                         the module stays loaded) |
 *                                         unsupported: <why> (this kernel
 *                                         cannot have it: built without
 *                                         it, a target missing or not
 *                                         traceable) | disabled: <why>
 *                                 line 2: upstream: <what the kernel has> | none
 *                                 line 3: requested: on | off
 *                                 line 4 (after a failed enable): error: <errno>
 *   <opt>/functions         0444  the kernel functions the optimization takes over
 *   <opt>/backend           0444  line 1: jmp | direct | ftrace while enabled,
 *                                 else none
 *                                 then (when better ones failed): skipped:
 *                                 <backend> <errno>, ...
 *                                 then (observers on one ftrace_ops):
 *                                 observers: ftrace, shared by <n>
 *   <opt>/stats/hits        0400  calls answered by the fast path
 *   <opt>/stats/fallbacks   0400  calls handed to the stock function
 *                                 (root only: they count every user's
 *                                 calls on the host, which a container
 *                                 that sees the host's /sys would read)
 *
 * Any write that is not a valid value returns -EINVAL and changes nothing;
 * any write to a broken optimization's knobs, -EIO.
 * See Documentation/ABI/testing/sysfs-kernel-vfsfast.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <generated/utsrelease.h>

#include <linux/timekeeping.h>

#include "vfsfast.h"

static struct kobject *vfsfast_root;

static const char *const vfsfast_state_names[] = {
	[VFSFAST_OFF] = "off",
	[VFSFAST_ACTIVE] = "active",
	[VFSFAST_PASSTHROUGH] = "passthrough",
	[VFSFAST_YIELDED] = "yielded",
	[VFSFAST_CONFLICT] = "conflict",
	[VFSFAST_BROKEN] = "broken",
	[VFSFAST_UNSUPPORTED] = "unsupported",
	[VFSFAST_DISABLED] = "disabled",
};

static struct vfsfast_opt *vfsfast_opt_of(struct kobject *kobj)
{
	struct vfsfast_opt **opt;

	for (opt = vfsfast_opts; *opt; opt++)
		if ((*opt)->kobj == kobj)
			return *opt;
	return NULL;
}

/*
 * Strict on purpose: kstrtobool() would take "nonsense" for "n" and
 * "1abc" for "1".  One trailing newline (from echo) is allowed.
 */
static int vfsfast_parse_bool(const char *buf, size_t count, bool *val)
{
	static const struct { const char *word; bool val; } words[] = {
		{ "0", false }, { "1", true }, { "off", false }, { "on", true },
	};
	size_t len = count;
	int i;

	if (len && buf[len - 1] == '\n')
		len--;
	for (i = 0; i < ARRAY_SIZE(words); i++) {
		if (len == strlen(words[i].word) &&
		    !memcmp(buf, words[i].word, len)) {
			*val = words[i].val;
			return 0;
		}
	}
	return -EINVAL;
}

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", vfsfast_hooked(vfsfast_opt_of(kobj)));
}

/* A bool knob: parse strictly, then apply under the state mutex. */
static ssize_t vfsfast_store_bool(struct kobject *kobj, const char *buf,
				  size_t count,
				  int (*set)(struct vfsfast_opt *opt, bool on))
{
	struct vfsfast_opt *opt = vfsfast_opt_of(kobj);
	bool on;
	int ret;

	ret = vfsfast_parse_bool(buf, count, &on);
	if (ret)
		return ret;
	mutex_lock(&vfsfast_mutex);
	/*
	 * Broken: a site still leads into vfsfast, routed to the stock
	 * code for good; no knob may move it, or say it did.
	 */
	ret = opt->state == VFSFAST_BROKEN ? -EIO : set(opt, on);
	mutex_unlock(&vfsfast_mutex);
	return ret ? ret : count;
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	return vfsfast_store_bool(kobj, buf, count, vfsfast_opt_request);
}

static ssize_t passthrough_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(vfsfast_opt_of(kobj)->passthrough));
}

static ssize_t passthrough_store(struct kobject *kobj,
				 struct kobj_attribute *attr,
				 const char *buf, size_t count)
{
	return vfsfast_store_bool(kobj, buf, count, vfsfast_opt_set_passthrough);
}

static ssize_t status_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	struct vfsfast_opt *opt = vfsfast_opt_of(kobj);
	ssize_t len;

	mutex_lock(&vfsfast_mutex);
	if (opt->state > VFSFAST_PASSTHROUGH)
		len = sysfs_emit(buf, "%s: %s\n", vfsfast_state_names[opt->state],
				 opt->reason);
	else
		len = sysfs_emit(buf, "%s\n", vfsfast_state_names[opt->state]);
	len += sysfs_emit_at(buf, len, "upstream: %s\n",
			     opt->upstream ? opt->upstream : "none");
	len += sysfs_emit_at(buf, len, "requested: %s\n",
			     opt->requested ? "on" : "off");
	if (opt->last_error)
		len += sysfs_emit_at(buf, len, "error: %d\n", opt->last_error);
	if (!opt->upstream && opt->state != VFSFAST_UNSUPPORTED && vfsfast_auto_off(opt))
		len += sysfs_emit_at(buf, len, "auto: off: %s\n", vfsfast_auto_off(opt));
	mutex_unlock(&vfsfast_mutex);
	return len;
}

static ssize_t functions_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	struct vfsfast_func *func;
	ssize_t len = 0;

	for (func = vfsfast_opt_of(kobj)->funcs; func->old_name; func++)
		len += sysfs_emit_at(buf, len, "%s\n", func->old_name);
	return len;
}

static ssize_t backend_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	struct vfsfast_opt *opt = vfsfast_opt_of(kobj);
	struct vfsfast_func *func;
	int grouped = 0;
	ssize_t len;

	mutex_lock(&vfsfast_mutex);
	len = sysfs_emit(buf, "%s\n", opt->backend ? opt->backend->name : "none");
	if (opt->backend && opt->skipped[0])
		len += sysfs_emit_at(buf, len, "skipped: %s\n", opt->skipped);
	for (func = opt->funcs; func->old_name; func++)
		grouped += func->grouped;
	if (grouped)
		len += sysfs_emit_at(buf, len, "observers: ftrace, shared by %d\n",
				     grouped);
	mutex_unlock(&vfsfast_mutex);
	return len;
}

static ssize_t hits_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	struct vfsfast_opt *opt = vfsfast_opt_of(kobj);
	long hits;

	/* A fallback still in flight is in one count and not yet the other. */
	hits = vfsfast_stat_sum(opt, offsetof(struct vfsfast_stats, left)) -
	       vfsfast_stat_sum(opt, offsetof(struct vfsfast_stats, fallbacks));
	return sysfs_emit(buf, "%ld\n", max(hits, 0L) +
			  (long)vfsfast_stat_sum(opt, offsetof(struct vfsfast_stats, hits)));
}

static ssize_t fallbacks_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%lu\n", vfsfast_stat_sum(vfsfast_opt_of(kobj),
			  offsetof(struct vfsfast_stats, fallbacks)));
}

static struct kobj_attribute enabled_attr = __ATTR_RW(enabled);
static struct kobj_attribute passthrough_attr = __ATTR_RW(passthrough);
static struct kobj_attribute status_attr = __ATTR_RO(status);
static struct kobj_attribute functions_attr = __ATTR_RO(functions);
static struct kobj_attribute backend_attr = __ATTR_RO(backend);
static struct kobj_attribute hits_attr = __ATTR_RO_MODE(hits, 0400);
static struct kobj_attribute fallbacks_attr = __ATTR_RO_MODE(fallbacks, 0400);

static struct attribute *vfsfast_opt_attrs[] = {
	&enabled_attr.attr,
	&passthrough_attr.attr,
	&status_attr.attr,
	&functions_attr.attr,
	&backend_attr.attr,
	NULL
};

static const struct attribute_group vfsfast_opt_group = {
	.attrs = vfsfast_opt_attrs,
};

static struct attribute *vfsfast_stats_attrs[] = {
	&hits_attr.attr,
	&fallbacks_attr.attr,
	NULL
};

static const struct attribute_group vfsfast_stats_group = {
	.name = "stats",
	.attrs = vfsfast_stats_attrs,
};

static const struct attribute_group *vfsfast_opt_groups[] = {
	&vfsfast_opt_group,
	&vfsfast_stats_group,
	NULL
};

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%s %s\n", VFSFAST_VERSION, UTS_RELEASE);
}

static ssize_t backends_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	const struct vfsfast_backend **b;
	ssize_t len = 0;

	for (b = vfsfast_backend_order; *b; b++)
		len += sysfs_emit_at(buf, len, "%s%s", len ? " " : "", (*b)->name);
	return len + sysfs_emit_at(buf, len, "\n");
}

/*
 * When this load began, in seconds since the epoch, for a fleet's
 * counters to be read against (vfsfast metrics): the kernel keeps no
 * load time of a module, and its log may have dropped the line.
 */
static time64_t vfsfast_load_time;

static ssize_t load_time_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "%lld\n", (long long)vfsfast_load_time);
}

static struct kobj_attribute version_attr = __ATTR_RO(version);
static struct kobj_attribute backends_attr = __ATTR_RO(backends);
static struct kobj_attribute load_time_attr = __ATTR_RO(load_time);

static struct attribute *vfsfast_root_attrs[] = {
	&version_attr.attr,
	&backends_attr.attr,
	&load_time_attr.attr,
	NULL
};

static const struct attribute_group vfsfast_root_group = {
	.attrs = vfsfast_root_attrs,
};

void vfsfast_sysfs_exit(void)
{
	struct vfsfast_opt **opt;

	if (!vfsfast_root)
		return;
	for (opt = vfsfast_opts; *opt; opt++) {
		if (!(*opt)->kobj)
			continue;
		sysfs_remove_groups((*opt)->kobj, vfsfast_opt_groups);
		kobject_put((*opt)->kobj);
		(*opt)->kobj = NULL;
	}
	sysfs_remove_group(vfsfast_root, &vfsfast_root_group);
	kobject_put(vfsfast_root);
	vfsfast_root = NULL;
}

int vfsfast_sysfs_init(void)
{
	struct vfsfast_opt **opt;
	int ret;

	vfsfast_load_time = ktime_get_real_seconds();
	vfsfast_root = kobject_create_and_add("vfsfast", kernel_kobj);
	if (!vfsfast_root)
		return -ENOMEM;
	ret = sysfs_create_group(vfsfast_root, &vfsfast_root_group);
	if (ret)
		goto fail;
	for (opt = vfsfast_opts; *opt; opt++) {
		struct kobject *kobj;

		kobj = kobject_create_and_add((*opt)->name, vfsfast_root);
		if (!kobj) {
			ret = -ENOMEM;
			goto fail;
		}
		ret = sysfs_create_groups(kobj, vfsfast_opt_groups);
		if (ret) {
			kobject_put(kobj);
			goto fail;
		}
		(*opt)->kobj = kobj;
	}
	return 0;
fail:
	vfsfast_sysfs_exit();
	return ret;
}
