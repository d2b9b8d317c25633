// SPDX-License-Identifier: GPL-2.0
/*
 * Test only: vfsfast_lp again, as a cumulative livepatch (replace=true),
 * the way a distribution ships the next CVE fix on top of the last one.
 */
#define VFSFAST_LP_REPLACE
#include "vfsfast_lp.c"
