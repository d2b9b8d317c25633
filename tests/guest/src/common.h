/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the guest test programs. */
#ifndef VFSFAST_GUEST_COMMON_H
#define VFSFAST_GUEST_COMMON_H

#include <stdio.h>

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
