/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86's side of compat_asm.h: the assembler macros tramp.S uses, and the
 * ones older kernels lack, decided by whether the kernel's headers define
 * them.
 */
#ifndef _VFSFAST_ARCH_ASM_H
#define _VFSFAST_ARCH_ASM_H

#include <asm/nospec-branch.h>
#include <asm/unwind_hints.h>

/* Call-depth tracking (retbleed=stuff) arrived in 6.2. */
#ifndef CALL_DEPTH_ACCOUNT
#define CALL_DEPTH_ACCOUNT
#endif

/* IBT (5.18) brought ENDBR; asm/linkage.h includes it where it exists. */
#ifndef ENDBR
#define ENDBR
#endif

/*
 * For code whose address C takes (ftrace is given the trampolines'
 * addresses): it needs an ENDBR on IBT kernels, and SYM_FUNC_START
 * stopped emitting one in 7.0.  objtool checks the result.
 */
#ifdef __ASSEMBLY__
.macro VFSFAST_SYM_ADDRESSED_START name
	SYM_START(\name, SYM_L_GLOBAL, SYM_A_ALIGN)
	ENDBR
.endm
#endif

#endif /* _VFSFAST_ARCH_ASM_H */
