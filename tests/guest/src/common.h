/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the guest test programs. */
#ifndef VFSFAST_GUEST_COMMON_H
#define VFSFAST_GUEST_COMMON_H

#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

/*
 * The guests' programs are built with the release's C library and kernel
 * headers; bullseye's (glibc 2.31, Linux 5.10, for 5.10-arm64) predate
 * these.  The numbers are the same in every architecture's table.
 */
#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif
#if defined(__GLIBC__) && !__GLIBC_PREREQ(2, 32)
static inline const char *strerrorname_np(int e)
{
	static __thread char buf[16];

	snprintf(buf, sizeof(buf), "E%d", e);
	return buf;
}
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Space and backslash too, so that a line splits unambiguously on ' '. */
static inline void put_escaped(FILE *f, const char *s)
{
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++) {
		if (*p <= 0x20 || *p >= 0x7f || *p == '\\')
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
}

#endif
