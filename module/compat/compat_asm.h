/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The assembler side of compat.h: macros that module/tramp.S uses and that
 * older kernels do not define, decided by whether the kernel's own headers
 * define them; and the probe verdicts that decide which targets exist,
 * which compat.h shares.
 */
#ifndef _VFSFAST_COMPAT_ASM_H
#define _VFSFAST_COMPAT_ASM_H

#include <linux/linkage.h>
#include <linux/objtool.h>
#ifdef CONFIG_X86
#include <asm/nospec-branch.h>
#include <asm/unwind_hints.h>
#endif

#include "vfsfast_probes.h"

/*
 * kernfs as it was before 5.15 (the global kernfs_mutex, no directory
 * revision) with the inode operations of before 5.12: the kernfs
 * optimization's targets exist.
 */
#if !defined(VFSFAST_HAVE_KERNFS_DIR_REV) && defined(VFSFAST_HAVE_KERNFS_IOPS_UNMAPPED)
#define VFSFAST_KERNFS 1
#endif

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

#endif /* _VFSFAST_COMPAT_ASM_H */
