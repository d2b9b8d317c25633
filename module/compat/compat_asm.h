/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The assembler side of compat.h: macros that the architecture's tramp.S
 * uses and that older kernels do not define (module/arch/<arch>/
 * arch_asm.h); and the probe verdicts that decide which targets exist,
 * which compat.h shares.
 */
#ifndef _VFSFAST_COMPAT_ASM_H
#define _VFSFAST_COMPAT_ASM_H

#include <linux/linkage.h>
#include <linux/objtool.h>

/* The architecture's own macros (module/arch/<arch>/arch_asm.h). */
#include "arch_asm.h"
#include "vfsfast_probes.h"

/*
 * kernfs as it was before 5.15 (the global kernfs_mutex, no directory
 * revision) with the inode operations of before 5.12: the kernfs
 * optimization's targets exist.
 */
#if !defined(VFSFAST_HAVE_KERNFS_DIR_REV) && defined(VFSFAST_HAVE_KERNFS_IOPS_UNMAPPED)
#define VFSFAST_KERNFS 1
#endif

#endif /* _VFSFAST_COMPAT_ASM_H */
