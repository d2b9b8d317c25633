/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the access_creds optimization needs to know of the kernel: 6.3
 * added cap_isidentical() for faccessat()'s own test of whether the
 * override would change the credentials, and skips the override then.
 */
#ifndef _VFSFAST_COMPAT_ACCESS_CREDS_H
#define _VFSFAST_COMPAT_ACCESS_CREDS_H

#ifdef VFSFAST_HAVE_CAP_ISIDENTICAL
#define VFSFAST_UPSTREAM_ACCESS_CREDS \
	"faccessat skips the credential override when it changes nothing (cap_isidentical)"
#define VFSFAST_UPSTREAM_ACCESS_CREDS_INFO	"cap_isidentical"
#define VFSFAST_NO_ACCESS_CREDS \
	"the kernel has it upstream (cap_isidentical, 6.3): nothing to replace"
#else
#define VFSFAST_ACCESS_CREDS			1
#define VFSFAST_UPSTREAM_ACCESS_CREDS		NULL
#define VFSFAST_UPSTREAM_ACCESS_CREDS_INFO	"none"
#define VFSFAST_NO_ACCESS_CREDS			NULL
#endif

/* do_faccessat() is static in fs/open.c: its type, for the target list. */
typedef long vfsfast_do_faccessat_t(int dfd, const char __user *filename,
				    int mode, int flags);

#endif
