// SPDX-License-Identifier: GPL-2.0
/*
 * The architecture's own strlen() (__HAVE_ARCH_STRLEN): arm64's is
 * assembly that reads 16 bytes a step, so a readlink that skips it saves
 * nothing.  Without it (x86-64) strlen() is lib/string.c's, a byte a
 * step, the cost the readlink optimization removes.
 */
#include <linux/string.h>

#ifndef __HAVE_ARCH_STRLEN
#error "strlen() is lib/string.c's"
#endif

size_t probe(const char *s)
{
	return strlen(s);
}
