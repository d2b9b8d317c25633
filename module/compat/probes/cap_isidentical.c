// SPDX-License-Identifier: GPL-2.0
/*
 * cap_isidentical(), added for faccessat()'s test of whether overriding
 * the credentials would change them (6.3+, "vfs: avoid duplicating creds
 * in faccessat if possible").
 */
#include <linux/capability.h>

bool probe(const kernel_cap_t a, const kernel_cap_t b)
{
	return cap_isidentical(a, b);
}
