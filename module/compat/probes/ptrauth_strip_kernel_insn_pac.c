// SPDX-License-Identifier: GPL-2.0
/*
 * arm64's ptrauth_strip_kernel_insn_pac() (6.4+, an XPACLRI); before it
 * the one helper was ptrauth_strip_insn_pac(), for user and kernel
 * addresses alike.
 */
#include <linux/compiler.h>
#include <asm/pointer_auth.h>

unsigned long probe(unsigned long lr)
{
	return ptrauth_strip_kernel_insn_pac(lr);
}
