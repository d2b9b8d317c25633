// SPDX-License-Identifier: GPL-2.0
/* A tracepoint's key is a static_key_false (6.10+), not a static_key. */
#include <linux/tracepoint-defs.h>

struct static_key_false *probe(struct tracepoint *tp)
{
	return &tp->key;
}
