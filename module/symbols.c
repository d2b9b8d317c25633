// SPDX-License-Identifier: GPL-2.0
/*
 * Symbol resolution for targets that are not exported.
 *
 * kallsyms_lookup_name() has not been exported since 5.7, and calling it
 * through a pointer found by a kprobe is wrong on IBT kernels: the kernel
 * seals functions whose address it never takes (6.12 and 7.2 poison their
 * ENDBR), so any indirect call to one faults on IBT hardware.  So nothing
 * here is called indirectly.  A kprobe, registered disabled so that no text
 * is patched, resolves the name; kprobes report the address past an ENDBR,
 * and sprint_symbol() gives the offset back to the real entry.
 *
 * Every target comes here, exported or not, for its ftrace site; an
 * exported one is probed at the address the linker resolved, and the
 * symbol kallsyms names there must be the target.  Nothing found here is
 * ever called, but for kallsyms_on_each_symbol() on kernels without IBT
 * (the pass below); replacements reach the stock code through tramp.S, by
 * a return.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kallsyms.h>
#include <linux/kprobes.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "vfsfast.h"

/*
 * The symbol that contains @addr: its name in @buf (KSYM_SYMBOL_LEN bytes),
 * its start and its size; false if kallsyms names none.
 */
static bool vfsfast_symbol_at(unsigned long addr, char *buf,
			      unsigned long *start, unsigned long *size)
{
	unsigned long offset;
	char *plus;

	sprint_symbol(buf, addr);
	plus = strchr(buf, '+');
	if (!plus || sscanf(plus, "+%lx/%lx", &offset, size) != 2 || offset > addr)
		return false;
	*plus = '\0';
	*start = addr - offset;
	return true;
}

/* Start of the symbol named @name that contains @addr, or 0; its size. */
static unsigned long vfsfast_symbol_start(const char *name, unsigned long addr,
					  unsigned long *size)
{
	char buf[KSYM_SYMBOL_LEN];
	unsigned long start;

	if (!vfsfast_symbol_at(addr, buf, &start, size) || strcmp(buf, name))
		return 0;
	return start;
}

static bool vfsfast_symbols_ok;

/*
 * unregister_kprobe() waits for an RCU grace period (a kprobe handler may
 * still be running), 10 ms of an idle 1-vCPU guest each, and a load
 * resolves some thirty names: most of its time went there.  So the kprobes
 * of the load's lookups stay registered, disabled (no text patched, no
 * handler ever runs), until vfsfast_symbols_done() unregisters them all
 * with unregister_kprobes(), which waits one grace period for the batch.
 * Only module init looks names up, single-threaded.
 */
#define VFSFAST_KP_CHUNK	64
struct vfsfast_kp_chunk {
	struct vfsfast_kp_chunk *next;
	unsigned int n;
	struct kprobe *ptrs[VFSFAST_KP_CHUNK];
	/* The name each was looked up for (kstrdup_const()). */
	const char *names[VFSFAST_KP_CHUNK];
	struct kprobe kp[VFSFAST_KP_CHUNK];
};
static struct vfsfast_kp_chunk *vfsfast_kp_held;
static bool vfsfast_kp_batching;

/* A zeroed kprobe that the batch keeps, or NULL: use one of the caller's. */
static struct kprobe *vfsfast_kp_slot(void)
{
	struct vfsfast_kp_chunk *c = vfsfast_kp_held;

	if (!vfsfast_kp_batching)
		return NULL;
	if (!c || c->n == VFSFAST_KP_CHUNK) {
		c = kzalloc(sizeof(*c), GFP_KERNEL);
		if (!c)
			return NULL;
		c->next = vfsfast_kp_held;
		vfsfast_kp_held = c;
	}
	memset(&c->kp[c->n], 0, sizeof(c->kp[c->n]));
	return &c->kp[c->n];
}

/*
 * @kp, from vfsfast_kp_slot(), registered for @name: keep it until the
 * batch ends.
 */
static void vfsfast_kp_keep(struct kprobe *kp, const char *name)
{
	struct vfsfast_kp_chunk *c = vfsfast_kp_held;

	c->names[c->n] = name;
	c->ptrs[c->n++] = kp;
}

/* A kprobe the batch holds for @name, if an earlier lookup made one. */
static struct kprobe *vfsfast_kp_find(const char *name)
{
	struct vfsfast_kp_chunk *c;
	unsigned int i;

	for (c = vfsfast_kp_held; c; c = c->next)
		for (i = 0; i < c->n; i++)
			if (!strcmp(c->names[i], name))
				return c->ptrs[i];
	return NULL;
}

/*
 * Before 6.2 kallsyms_lookup_name() reads every symbol until it meets the
 * name, 5 to 6 ms of a 5.10 guest's time for one in fs/, and a load looks
 * up some thirty; 6.2's sorted name index (in Debian's 6.1 too) made it a
 * binary search.  So where the kernel lacks the index and compat.h allows
 * the call (VFSFAST_KALLSYMS_PASS: no IBT; Debian's 5.10), one pass of
 * kallsyms_on_each_symbol() over the core kernel's text finds every name
 * the load is about to ask for, and vfsfast_kprobe_lookup() probes the
 * address found instead of the name.  The pass only shortens the search:
 * its answer counts, as every lookup's does, only where kallsyms names
 * exactly that symbol at the kprobe's address.  As in
 * kallsyms_lookup_name(), the first symbol of a name wins.
 */
struct vfsfast_want {
	const char *name;	/* kasprintf()ed */
	unsigned long addr;
	size_t len;
};

#define VFSFAST_WANT_MAX	64
static struct vfsfast_want vfsfast_want[VFSFAST_WANT_MAX];
static unsigned int vfsfast_nwant, vfsfast_nfound;
/* Which (length, first, last character) hashes a wanted name has. */
static DECLARE_BITMAP(vfsfast_want_hash, 256);

static unsigned int vfsfast_want_hashof(const char *name, size_t len)
{
	return (len * 31 + name[0] + name[len - 1] * 7) & 255;
}

/* @name@suffix will be looked up: find it in the pass. */
void vfsfast_symbols_want(const char *name, const char *suffix)
{
	struct vfsfast_want *w = &vfsfast_want[vfsfast_nwant];
	unsigned int i;

	if (vfsfast_nwant == VFSFAST_WANT_MAX)
		return;
	w->name = kasprintf(GFP_KERNEL, "%s%s", name, suffix);
	if (!w->name)
		return;
	w->len = strlen(w->name);
	for (i = 0; i < vfsfast_nwant; i++) {
		if (!strcmp(vfsfast_want[i].name, w->name)) {
			kfree(w->name);
			return;
		}
	}
	__set_bit(vfsfast_want_hashof(w->name, w->len), vfsfast_want_hash);
	vfsfast_nwant++;
}

static struct vfsfast_want *vfsfast_want_find(const char *name)
{
	unsigned int i;

	for (i = 0; i < vfsfast_nwant; i++)
		if (!strcmp(vfsfast_want[i].name, name))
			return &vfsfast_want[i];
	return NULL;
}

/* Where the pass found @name, or 0. */
static unsigned long vfsfast_wanted(const char *name)
{
	struct vfsfast_want *w = vfsfast_want_find(name);

	return w ? w->addr : 0;
}

/*
 * The load's pass read every core kernel symbol: a wanted name it did not
 * find is not there.  Only until the load's lookups are over.
 */
static bool vfsfast_pass_ran;

static void vfsfast_want_free(void)
{
	while (vfsfast_nwant)
		kfree(vfsfast_want[--vfsfast_nwant].name);
	vfsfast_nfound = 0;
	vfsfast_pass_ran = false;
	bitmap_zero(vfsfast_want_hash, 256);
}

#ifdef VFSFAST_KALLSYMS_PASS
static unsigned long vfsfast_kprobe_lookup(const char *name,
					   unsigned long exported,
					   unsigned long *site,
					   unsigned long *size);

/*
 * kallsyms lists symbols in address order, and every function a load
 * wants is core kernel text, which comes before .data (init_task's).
 * Stopping there also keeps the walk out of the modules' symbols.
 */
static VFSFAST_KALLSYMS_EACH_FN(vfsfast_want_one)
{
	size_t len;
	unsigned int i;

	if (addr >= (unsigned long)&init_task)
		return 1;
	len = strlen(name);
	if (!len || !test_bit(vfsfast_want_hashof(name, len), vfsfast_want_hash))
		return 0;
	for (i = 0; i < vfsfast_nwant; i++) {
		struct vfsfast_want *w = &vfsfast_want[i];

		if (!w->addr && w->len == len && !memcmp(w->name, name, len)) {
			w->addr = addr;
			return ++vfsfast_nfound == vfsfast_nwant;
		}
	}
	return 0;
}

static void vfsfast_want_pass(void)
{
	typeof(&kallsyms_on_each_symbol) each;
	unsigned long site, size;

	if (!vfsfast_nwant)
		return;
	each = (void *)vfsfast_kprobe_lookup("kallsyms_on_each_symbol", 0,
					     &site, &size);
	if (each) {
		each(vfsfast_want_one, NULL);
		vfsfast_pass_ran = true;
	}
}
#else
static inline void vfsfast_want_pass(void)
{
}
#endif

/*
 * A kprobe at a function's start, registered disabled, finds it, and the
 * architecture tells from it where the function's ftrace site is
 * (module/arch/<arch>/site.c: on x86 the kprobe lands on the site and
 * says so, on arm64 the site is read from the text).  The probe is
 * placed by @name, or at @exported, the address the linker resolved, where
 * the kernel exports it, or where the load's one kallsyms pass found it:
 * kernels without the sorted name index (5.10) find a name by a linear
 * scan of every symbol, several ms of a load per name.  Either way the symbol found there must be @name.  A name the
 * batch has already resolved is not looked up again.
 */
static unsigned long vfsfast_kprobe_lookup(const char *name,
					   unsigned long exported,
					   unsigned long *site,
					   unsigned long *size)
{
	struct kprobe own = { }, *kp = vfsfast_kp_find(name);
	const char *kept = NULL;
	unsigned long addr;

	*site = 0;
	if (!kp) {
		kp = vfsfast_kp_slot() ?: &own;
		if (!exported)
			exported = vfsfast_wanted(name);
		if (exported)
			kp->addr = (kprobe_opcode_t *)exported;
		else
			kp->symbol_name = name;
		kp->flags = KPROBE_FLAG_DISABLED;
		if (register_kprobe(kp) < 0)
			return 0;
		/* @name may be the caller's buffer (a split part's name). */
		if (kp != &own)
			kept = kstrdup_const(name, GFP_KERNEL);
		if (kept)
			vfsfast_kp_keep(kp, kept);
	}
	addr = (unsigned long)kp->addr;
	*site = vfsfast_arch_ftrace_site(kp);
	if (kp != vfsfast_kp_find(name))
		unregister_kprobe(kp);
	return vfsfast_symbol_start(name, addr, size);
}

/*
 * The load's lookups are over: unregister their kprobes, one grace period
 * for each chunk of VFSFAST_KP_CHUNK (one, for the lookups a load makes).
 * Lookups after this unregister their kprobe at once.
 */
void vfsfast_symbols_done(void)
{
	struct vfsfast_kp_chunk *c;

	vfsfast_kp_batching = false;
	vfsfast_want_free();
	while ((c = vfsfast_kp_held)) {
		vfsfast_kp_held = c->next;
		if (c->n)
			unregister_kprobes(c->ptrs, c->n);
		while (c->n)
			kfree_const(c->names[--c->n]);
		kfree(c);
	}
}

/*
 * Entry of @name, or 0; its ftrace site in *@site, or 0 if none; its size
 * in *@size.  @exported: its address as the linker resolved it, or 0.
 */
unsigned long vfsfast_lookup_name(const char *name, unsigned long exported,
				  unsigned long *site, unsigned long *size)
{
	*site = 0;
	return vfsfast_symbols_ok ?
	       vfsfast_kprobe_lookup(name, exported, site, size) : 0;
}

/*
 * Address of the data symbol @name, found by walking kallsyms from @near,
 * an address the linker resolved in the same object (an exported
 * variable), up to @steps symbols each way; 0 if not found.  kprobes
 * resolve functions only, and kallsyms_lookup_name() is not exported;
 * sprint_symbol() is, and with CONFIG_KALLSYMS_ALL it names static
 * variables too.  Its size is the distance to the next symbol, so one
 * lookup per symbol walks them all.
 */
unsigned long vfsfast_lookup_data(const char *name, unsigned long near,
				  unsigned int steps)
{
	unsigned long addr, start, size;
	char buf[KSYM_SYMBOL_LEN];
	unsigned int i;
	int dir;

	for (dir = 1; dir >= -1; dir -= 2) {
		addr = near;
		for (i = 0; i < steps; i++) {
			if (!vfsfast_symbol_at(addr, buf, &start, &size) || !size)
				break;
			if (!strcmp(buf, name))
				return start;
			addr = dir > 0 ? start + size : start - 1;
		}
	}
	return 0;
}

/*
 * Address of the variable @name, by kallsyms_lookup_name(), which is not
 * exported and not to be called through a pointer: register_kprobe()
 * resolves .symbol_name with it and stores the address in kp.addr before
 * check_kprobe_address_safe() refuses one outside kernel text (-EINVAL),
 * having registered nothing, so there is nothing to unregister and no
 * grace period to wait for (5.10, 6.1, 6.12 and 7.2 alike).  That order
 * is the kernel's, not a promise: the answer counts only where kallsyms
 * names exactly @name there at offset 0 (on IBT kernels the kprobe code
 * steps over what it reads as an ENDBR, which a variable's bytes can
 * look like).  0 if not found, or found in text.
 */
unsigned long vfsfast_lookup_data_name(const char *name)
{
	struct kprobe kp = {
		.symbol_name = name,
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long addr, size;

	if (!register_kprobe(&kp)) {
		unregister_kprobe(&kp);
		return 0;
	}
	addr = (unsigned long)kp.addr;
	if (!addr || vfsfast_symbol_start(name, addr, &size) != addr)
		return 0;
	return addr;
}

/*
 * Start of the text symbol @name, or 0; its size in *@size.  Unlike
 * vfsfast_lookup_name() it also finds what kprobes refuse to probe (entry
 * code, trampolines): register_kprobe() stores the address in kp.addr
 * before check_kprobe_address_safe() says no, as vfsfast_lookup_data_name()
 * relies on, and kallsyms must name exactly @name there.  A name the
 * load's kallsyms pass looked for and did not find is not in the kernel.
 */
unsigned long vfsfast_lookup_text(const char *name, unsigned long *size)
{
	struct kprobe own = { }, *kp = vfsfast_kp_find(name);
	const char *kept = NULL;
	unsigned long addr;

	if (!kp) {
		addr = vfsfast_wanted(name);
		if (!addr && vfsfast_pass_ran && vfsfast_want_find(name))
			return 0;
		kp = vfsfast_kp_slot() ?: &own;
		if (addr)
			kp->addr = (kprobe_opcode_t *)addr;
		else
			kp->symbol_name = name;
		kp->flags = KPROBE_FLAG_DISABLED;
		if (!register_kprobe(kp)) {
			if (kp != &own)
				kept = kstrdup_const(name, GFP_KERNEL);
			if (kept)
				vfsfast_kp_keep(kp, kept);
			else
				unregister_kprobe(kp);
		}
	}
	addr = (unsigned long)kp->addr;
	return addr ? vfsfast_symbol_start(name, addr, size) : 0;
}

/*
 * Check the lookup against an address the linker resolved, once at load:
 * on IBT kernels this proves the step back over the ENDBR is right, and
 * that kprobes find the ftrace site; where the kallsyms pass ran, that its
 * answer is the linker's.  The names the load will ask for were given to
 * vfsfast_symbols_want() before.
 */
int vfsfast_symbols_init(void)
{
	unsigned long site, size, addr;

	vfsfast_kp_batching = true;
	vfsfast_symbols_want("vfs_readlink", "");
	vfsfast_want_pass();
	addr = vfsfast_kprobe_lookup("vfs_readlink", 0, &site, &size);

	if (addr != (unsigned long)vfs_readlink || !site) {
		pr_warn("symbol lookup self-check failed (%pS): non-exported targets unsupported\n",
			(void *)addr);
		return -EINVAL;
	}
	vfsfast_symbols_ok = true;
	pr_info("symbol lookup through kprobes verified\n");
	return 0;
}
