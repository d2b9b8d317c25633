/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The credential states the differential testers run as (scdiff,
 * permdiff), set on the calling process:
 *   root, none   unchanged (a setuid-root copy keeps its euid)
 *   nnp          no_new_privs set
 *   fsuid        setfsuid(USER) and setfsgid(USER) only
 *   capdrop      CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH out of the
 *                effective set; capdrop-all: out of the permitted set too
 *   keepcaps     SECBIT_NO_SETUID_FIXUP and SECBIT_KEEP_CAPS, then uid
 *                USER with the capabilities kept (effective restored)
 *   user         uid and gid USER, no supplementary groups
 *   other        uid and gid USER + 1, no supplementary groups
 *   group        uid and gid USER + 1, supplementary group USER
 *   userns       uid USER, then a user namespace mapping root to it
 * Returns 0, -1 for an unknown state, 1 when a step failed (errno set).
 */
#ifndef VFSFAST_GUEST_CREDS_H
#define VFSFAST_GUEST_CREDS_H

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int write_proc_self(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY), ok;

	if (fd < 0)
		return 1;
	ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	return !ok;
}

static inline int set_ids(unsigned int uid, unsigned int gid, const gid_t *groups, int n)
{
	return setgroups(n, groups) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid);
}

static inline int set_cred_state(const char *state, unsigned int user)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	gid_t group = user;
	char map[64];

	if (!strcmp(state, "root") || !strcmp(state, "none"))
		return 0;
	if (!strcmp(state, "nnp"))
		return !!prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if (!strcmp(state, "fsuid")) {
		setfsgid(user);
		setfsuid(user);
		return setfsuid(-1) != (int)user;
	}
	if (!strncmp(state, "capdrop", 7)) {
		if (syscall(SYS_capget, &h, d))
			return 1;
		d[0].effective &= ~(1u << CAP_DAC_OVERRIDE | 1u << CAP_DAC_READ_SEARCH);
		if (!strcmp(state, "capdrop-all"))
			d[0].permitted = d[0].effective;
		return !!syscall(SYS_capset, &h, d);
	}
	if (!strcmp(state, "keepcaps")) {
		if (prctl(PR_SET_SECUREBITS, SECBIT_NO_SETUID_FIXUP | SECBIT_KEEP_CAPS) ||
		    set_ids(user, user, NULL, 0) || syscall(SYS_capget, &h, d))
			return 1;
		d[0].effective = d[0].permitted;
		d[1].effective = d[1].permitted;
		return !!syscall(SYS_capset, &h, d);
	}
	if (!strcmp(state, "other"))
		return set_ids(user + 1, user + 1, NULL, 0);
	if (!strcmp(state, "group"))
		return set_ids(user + 1, user + 1, &group, 1);
	if (strcmp(state, "user") && strcmp(state, "userns"))
		return -1;
	if (set_ids(user, user, NULL, 0))
		return 1;
	if (!strcmp(state, "user"))
		return 0;
	/* The uid change made /proc/self root's; the maps below need it ours. */
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) || unshare(CLONE_NEWUSER) ||
	    write_proc_self("/proc/self/setgroups", "deny"))
		return 1;
	snprintf(map, sizeof(map), "0 %u 1", user);
	return write_proc_self("/proc/self/uid_map", map) ||
	       write_proc_self("/proc/self/gid_map", map);
}

#endif
