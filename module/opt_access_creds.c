// SPDX-License-Identifier: GPL-2.0
/*
 * access_creds: access() and faccessat() without a copy of the caller's
 * credentials when the copy would be identical, the gain of 6.3's "vfs:
 * avoid duplicating creds in faccessat if possible" (981ee95cc1f5, with
 * a4eecbae0927's cap_isidentical()) for kernels before it.
 *
 * Stock do_faccessat() of 5.10 and 6.1 (fs/open.c), unless AT_EACCESS is
 * given, checks the mode and flags (-EINVAL), then runs the whole lookup
 * and permission check under access_override_creds(): prepare_creds()
 * copies the task's subjective credentials (an allocation, references on
 * the user, user namespace, groups, keyrings and ucounts, the LSMs'
 * cred_prepare hooks), sets fsuid = uid and fsgid = gid and, unless
 * SECURE_NO_SETUID_FIXUP is set, clears the effective capabilities for a
 * non-root uid or sets them to the permitted ones for root (root as the
 * credentials' own user namespace maps uid 0); override_creds() installs
 * the copy, revert_creds() and put_cred() drop it afterwards.  AT_EACCESS
 * is the only flag that changes nothing but that: with it, the same body
 * runs under the task's own credentials.
 *
 * The replacement applies upstream's test to the task's own credentials
 * and, when the copy would equal them in every field the override writes
 * (fsuid and uid, fsgid and gid, and the capability rule just described,
 * with the same securebits and user namespace), passes AT_EACCESS to the
 * stock function; otherwise the call is the stock one unchanged.  The
 * mode and flag checks come first in the stock body either way, and
 * AT_EACCESS is itself a valid flag, so every -EINVAL, -EFAULT and
 * -ENAMETOOLONG is stock's.  The fields the override does not write are
 * copies: the same uids, gids, securebits, user namespace, groups,
 * keyrings and, through cred_prepare, the same LSM state: SELinux copies
 * its task security struct; AppArmor stores the newest version of the
 * task's label, while the task's own credentials may still hold a
 * replaced one, but every AppArmor hook a lookup or permission check can
 * reach (ptrace_access_check, for /proc/<pid>) resolves the newest
 * version of the current label itself, so the decision is the same (with
 * the task's own credentials, AppArmor may then also install the newest
 * label in them, as any of its hooks may at any time); Landlock and Yama
 * do not look at the lookup, and no LSM of these kernels compares
 * credential pointers there.  What the copy alone changes, its reference
 * counts, its non_rcu flag and the allocation that may fail with
 * -ENOMEM, is not visible in the result; nor are the calls the copy makes
 * (prepare_creds() and the LSMs' cred_prepare hooks), except to a tracer
 * of them, or to a BPF LSM program on cred_prepare, which could fail the
 * stock call with -ENOMEM.  Upstream accepted the same.  A setuid
 * program has fsuid != uid, a process in a user namespace is judged by
 * that namespace's root, no_new_privs is not a credential, and
 * capabilities dropped with capset() make the effective set differ from
 * the permitted one: each of these keeps the override.
 *
 * The credentials cannot change under the test: only the task itself
 * replaces its subjective credentials, and it is here.  The replacement
 * tail-calls the stock function and keeps no count of tasks inside: a
 * lookup may sleep as long as a FUSE daemon likes, and with no frame of
 * vfsfast's on the stack, unloading never waits for it.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/fcntl.h>
#include <linux/securebits.h>
#include <linux/uidgid.h>

#include "vfsfast.h"
#include "access_creds.h"

#define VFSFAST_ACCESS_CREDS_TARGETS(T)					\
	(T(do_faccessat, *(vfsfast_do_faccessat_t *)0, 0, replace,	\
	   vfsfast_do_faccessat))

VFSFAST_STATS(access_creds);

#ifdef VFSFAST_ACCESS_CREDS
VFSFAST_DECLARE_TARGETS(VFSFAST_ACCESS_CREDS_TARGETS);

/* Whether access_override_creds() would install credentials that differ. */
static __always_inline bool vfsfast_access_override_differs(void)
{
	const struct cred *cred = current_cred();

	if (!uid_eq(cred->fsuid, cred->uid) || !gid_eq(cred->fsgid, cred->gid))
		return true;
	if (issecure(SECURE_NO_SETUID_FIXUP))
		return false;
	if (!uid_eq(cred->uid, make_kuid(cred->user_ns, 0)))
		return !cap_isclear(cred->cap_effective);
	return !cap_issubset(cred->cap_effective, cred->cap_permitted) ||
	       !cap_issubset(cred->cap_permitted, cred->cap_effective);
}

static long vfsfast_do_faccessat(int dfd, const char __user *filename,
				 int mode, int flags)
{
	if (!(flags & AT_EACCESS)) {
		if (vfsfast_access_override_differs()) {
			vfsfast_fallback(access_creds);
		} else {
			vfsfast_hit(access_creds);
			flags |= AT_EACCESS;
		}
	}
	return vfsfast_stock_do_faccessat(dfd, filename, mode, flags);
}

VFSFAST_TAIL_CALL(vfsfast_do_faccessat, vfsfast_stock_do_faccessat);

VFSFAST_FUNCS(access_creds, VFSFAST_ACCESS_CREDS_TARGETS);
#else
VFSFAST_NO_FUNCS(access_creds);
#endif

VFSFAST_OPTIMIZATION(access_creds, VFSFAST_ACCESS_CREDS_TARGETS,
		     VFSFAST_UPSTREAM_ACCESS_CREDS_INFO, auto,
	.upstream = VFSFAST_UPSTREAM_ACCESS_CREDS,
	.lacks = VFSFAST_NO_ACCESS_CREDS,
	/* The decision stands in for the override's own test. */
	.covers = VFSFAST_COVERS("access_override_creds"),
);
