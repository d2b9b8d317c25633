/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64's side of compat_asm.h: the assembler macros tramp.S uses
 * (ldr_l).  C includes this too, where there is nothing to add.
 */
#ifndef _VFSFAST_ARCH_ASM_H
#define _VFSFAST_ARCH_ASM_H

#ifdef __ASSEMBLY__
#include <asm/assembler.h>
#endif

#endif /* _VFSFAST_ARCH_ASM_H */
