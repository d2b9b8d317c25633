/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the proc_cgroup optimization needs to know of the kernel.
 *
 * Whether proc_cgroup_show() still takes cgroup_mutex (before 6.7's
 * "cgroup: Eliminate the need for cgroup_mutex in proc_cgroup_show()")
 * shows in no header: 6.1.y took the other half of that series (struct
 * cgroup_root's rcu head) without it.  The module asks the kernel's own
 * function at load (opt_proc_cgroup.c).  Everything the replacement reads
 * is in public headers: struct css_set, struct cgroup, struct cgroup_root
 * and struct cgroup_namespace; cgrp_dfl_root and kernfs_path_from_node()
 * are exported.  css_set_lock and cgroup_mutex are exported only by
 * kernels with CONFIG_PROVE_RCU (Debian's are not): the module finds them
 * by name in kallsyms (CONFIG_KALLSYMS_ALL: Debian's amd64 kernels and
 * arm64 6.12 on, arm64 5.10 and 6.1 not, see below), first
 * with kallsyms_lookup_name() as register_kprobe() calls it
 * (vfsfast_lookup_data_name()), then, should a kernel stop storing the
 * address before refusing a data address, walking from an exported
 * neighbour, up to 256 symbols each way: dma_spin_lock (kernel/dma.c's
 * .bss, which the linker places a few objects before kernel/cgroup/'s:
 * css_set_lock about 25 symbols after it on 5.10, 6.1 and 7.2, and 7.2's
 * zero-initialized cgroup_mutex), then cgrp_dfl_root (cgroup_mutex in
 * .data on 5.10 and 6.1, 29 symbols after it).  .bss has no other
 * exported neighbour of the cgroup code in the cloud flavour, which lacks
 * dma_spin_lock.  Not found, the optimization is unsupported, saying
 * which variable and what was tried.
 */
#ifndef _VFSFAST_COMPAT_PROC_CGROUP_H
#define _VFSFAST_COMPAT_PROC_CGROUP_H

#include <linux/cgroup.h>

/*
 * Without KALLSYMS_ALL (Debian's arm64 5.10 and 6.1) kallsyms names no
 * variable, so neither the walks nor kallsyms_lookup_name() can find
 * cgroup_mutex and css_set_lock.  Where the architecture can read them
 * from the code that takes them (VFSFAST_ARCH_CALL_REF: arm64's adrp and
 * add) the module does that, checked against a second function; else
 * there is nothing to build.
 */
#if defined(CONFIG_KALLSYMS_ALL) || defined(VFSFAST_ARCH_CALL_REF)
#define VFSFAST_PROC_CGROUP		1
#define VFSFAST_NO_PROC_CGROUP		NULL
#else
#define VFSFAST_NO_PROC_CGROUP \
	"kallsyms names no variables (CONFIG_KALLSYMS_ALL is off): cgroup_mutex and css_set_lock cannot be found"
#endif

#if !defined(CONFIG_KALLSYMS_ALL) && defined(VFSFAST_ARCH_CALL_REF)
#define VFSFAST_CG_FROM_CODE		1
#endif

/*
 * The kernel's answer, when it has it: set at load, since no header
 * says; "load-time" is what modinfo can say before.
 */
#define VFSFAST_UPSTREAM_PROC_CGROUP \
	"proc_cgroup_show runs without cgroup_mutex"
#define VFSFAST_UPSTREAM_PROC_CGROUP_INFO	"load-time"

/*
 * kernel/cgroup/cgroup-internal.h's cgroup_is_dead(), the same from 5.10
 * to 7.x: a cgroup is dead once rmdir cleared CSS_ONLINE.
 */
static inline bool vfsfast_cgroup_is_dead(const struct cgroup *cgrp)
{
	return !(READ_ONCE(cgrp->self.flags) & CSS_ONLINE);
}

/*
 * Where the walk for css_set_lock starts: kernel/dma.c's exported
 * dma_spin_lock, which exists with CONFIG_ISA_DMA_API (Debian's generic
 * x86 kernels; not its cloud ones, where the walk starts at cgrp_dfl_root
 * only, and may not find it).
 */
#ifdef CONFIG_ISA_DMA_API
#include <asm/dma.h>
#define vfsfast_cg_bss_anchor()	((unsigned long)&dma_spin_lock)
#define VFSFAST_CG_BSS_ANCHOR_NOTE	" or dma_spin_lock"
#else
#define vfsfast_cg_bss_anchor()	0UL
#define VFSFAST_CG_BSS_ANCHOR_NOTE	" (no dma_spin_lock: CONFIG_ISA_DMA_API is off)"
#endif

/* kernel/locking/mutex.c's MUTEX_FLAG_WAITERS: someone sleeps on it. */
#define VFSFAST_MUTEX_FLAG_WAITERS	0x01UL

#endif
