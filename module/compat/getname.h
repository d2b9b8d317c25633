/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the getname optimization needs to know of the kernel.  7.0 made
 * struct filename a 192-byte object with the name embedded
 * (EMBEDDED_NAME_MAX in linux/fs.h, long names allocated apart), so a
 * name no longer costs a 4 KB names_cache object cleared by
 * init_on_alloc; that is what the probe sees.
 *
 * Before it, getname_flags() reported an empty name through a third
 * argument until 6.8, and the reference count was a plain int until 5.19.
 */
#ifndef _VFSFAST_COMPAT_GETNAME_H
#define _VFSFAST_COMPAT_GETNAME_H

#include <linux/fs.h>

#ifdef VFSFAST_HAVE_FILENAME_EMBEDDED
#define VFSFAST_UPSTREAM_GETNAME \
	"names are small objects with the name embedded (EMBEDDED_NAME_MAX)"
#define VFSFAST_UPSTREAM_GETNAME_INFO	"filename_embedded"
#define VFSFAST_NO_GETNAME \
	"the kernel has it upstream (struct filename with the name embedded, 7.0): nothing to replace"
#elif defined(CONFIG_KASAN)
/*
 * A kept object is live to KASAN: a use after putname(), or a second
 * putname() once the object went to the next name, would be silent
 * corruption where KASAN reports it.  A kernel built to find those is
 * worth more than the clear.
 */
#define VFSFAST_UPSTREAM_GETNAME		NULL
#define VFSFAST_UPSTREAM_GETNAME_INFO	"none"
#define VFSFAST_NO_GETNAME \
	"KASAN is on: names kept for reuse would hide a use after putname() from it"
#else
#define VFSFAST_GETNAME			1
#define VFSFAST_UPSTREAM_GETNAME		NULL
#define VFSFAST_UPSTREAM_GETNAME_INFO	"none"
#define VFSFAST_NO_GETNAME		NULL
/* fs/namei.c's: the room for a name inside the names_cache object. */
#define VFSFAST_EMBEDDED_NAME_MAX	(PATH_MAX - offsetof(struct filename, iname))
#endif

/*
 * getname_flags()'s parameter list and the arguments that pass it on,
 * parentheses included: "fn VFSFAST_GETNAME_PARAMS" declares, and
 * "fn VFSFAST_GETNAME_ARGS" calls.
 */
#ifdef VFSFAST_HAVE_GETNAME_FLAGS_EMPTY
#define VFSFAST_GETNAME_PARAMS	(const char __user *filename, int flags, int *empty)
#define VFSFAST_GETNAME_ARGS	(filename, flags, empty)
#define VFSFAST_GETNAME_ARGS_OF(name, flags, empty)	(name, flags, empty)
#define VFSFAST_GETNAME_NARGS	3
#define vfsfast_getname_report_empty()	\
	do {				\
		if (empty)		\
			*empty = 1;	\
	} while (0)
#else
#define VFSFAST_GETNAME_PARAMS	(const char __user *filename, int flags)
#define VFSFAST_GETNAME_ARGS	(filename, flags)
#define VFSFAST_GETNAME_ARGS_OF(name, flags, empty)	(name, flags)
#define VFSFAST_GETNAME_NARGS	2
#define vfsfast_getname_report_empty()	do { } while (0)
#endif

/*
 * An object KFENCE sampled is never kept: it goes back through
 * kmem_cache_free(), so that KFENCE still sees a use after putname().
 */
#ifdef VFSFAST_HAVE_KFENCE
#include <linux/kfence.h>
#define vfsfast_name_sampled(name)	is_kfence_address(name)
#else
#define vfsfast_name_sampled(name)	false
#endif

#ifdef VFSFAST_HAVE_FILENAME_REFCNT_ATOMIC
#define vfsfast_name_refs(name)		atomic_read(&(name)->refcnt)
#define vfsfast_name_set_refs(name, n)	atomic_set(&(name)->refcnt, n)
#else
#define vfsfast_name_refs(name)		READ_ONCE((name)->refcnt)
#define vfsfast_name_set_refs(name, n)	((name)->refcnt = (n))
#endif

#endif
