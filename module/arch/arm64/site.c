// SPDX-License-Identifier: GPL-2.0
/*
 * A target's ftrace site on arm64, and whether ftrace has made it live.
 *
 * A traceable function starts (after a "bti c" on BTI kernels, which
 * Debian's GCC-built ones are not) with two words the compiler left as
 * NOPs (-fpatchable-function-entry=2): ftrace_init_nop() turns the first
 * into "mov x9, x30" at boot or module load, and the second is the site
 * ftrace records and patches, a NOP or a "bl" to ftrace_caller or to a
 * direct trampoline.  arm64 has no KPROBES_ON_FTRACE, so the kprobe that
 * found the function cannot say where the site is, as on x86: the text
 * says it, and ftrace_set_filter_ip() later refuses a site it has no
 * record of.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/kprobes.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "vfsfast.h"

#define VFSFAST_INSN_BTI_C	0xd503245f
#define VFSFAST_INSN_MOV_X9_X30	0xaa1e03e9
#define VFSFAST_INSN_NOP	0xd503201f
#define VFSFAST_INSN_PACIASP	0xd503233f

static bool vfsfast_insn_is_bl(u32 insn)
{
	return (insn & 0xfc000000) == 0x94000000;
}

unsigned long vfsfast_arch_ftrace_site(const struct kprobe *kp)
{
	unsigned long entry = (unsigned long)kp->addr;
	/* Instructions are little-endian whatever the data are. */
	__le32 text[3];
	unsigned int i = 0;
	u32 site;

	if (copy_from_kernel_nofault(text, (void *)entry, sizeof(text)))
		return 0;
	if (le32_to_cpu(text[0]) == VFSFAST_INSN_BTI_C)
		i = 1;
	if (le32_to_cpu(text[i]) != VFSFAST_INSN_MOV_X9_X30)
		return 0;
	site = le32_to_cpu(text[i + 1]);
	if (site != VFSFAST_INSN_NOP && !vfsfast_insn_is_bl(site))
		return 0;
	return entry + (i + 1) * sizeof(text[0]);
}

/*
 * Whether the ftrace site now calls somewhere.  arm64 patches the one
 * aligned word at once, with no transitional breakpoint to wait out.
 */
bool vfsfast_arch_site_live(unsigned long site)
{
	__le32 insn;

	if (copy_from_kernel_nofault(&insn, (void *)site, sizeof(insn)))
		return false;
	return vfsfast_insn_is_bl(le32_to_cpu(insn));
}

/* A load, store or atomic with a base register (bits 5-9): not a literal load. */
static bool vfsfast_insn_is_access(u32 insn)
{
	return (insn & 0x0a000000) == 0x08000000 && (insn & 0x3b000000) != 0x18000000;
}

/* An access that moves its base register (pre- or post-indexed). */
static bool vfsfast_insn_writes_base(u32 insn)
{
	u32 single = insn & 0x3b200c00, pair = insn & 0x3b800000;

	return single == 0x38000400 || single == 0x38000c00 ||
	       pair == 0x28800000 || pair == 0x29800000;
}

/*
 * A store that writes no register but, perhaps, its base: str, stur, stp
 * and their pre- and post-indexed forms (not the exclusive ones, which
 * write a status register, nor the atomics, which load).
 */
static bool vfsfast_insn_is_store(u32 insn)
{
	if ((insn & 0x3a000000) == 0x28000000)			/* stp/ldp */
		return !(insn & BIT(22));
	if ((insn & 0x3a000000) != 0x38000000)
		return false;
	if (!(insn & BIT(24)) && (insn & BIT(21)) && !(insn & 0xc00))	/* atomics */
		return false;
	return !(insn & 0x00c00000);
}

/*
 * A variable kallsyms cannot name (arm64 5.10 and 6.1 lack
 * CONFIG_KALLSYMS_ALL), read from a function that uses it: with @after
 * false, the first argument of the @nth call (from 1) of @callee, where
 * @func builds it from an adrp and adds or subtracts (5.10-arm64's gcc-10
 * subtracts from an anchor), directly or through a mov
 * ("mutex_lock(&cgroup_mutex)": "adrp x0, ...; add x0, x0, :lo12:...;
 * bl mutex_lock"); with @after true, what comes first after that call:
 * the base of a load, store or atomic through such a register, or such a
 * first argument of another call (the spin_lock_irq(&css_set_lock) that
 * follows it, inlined or, in 6.1-arm64's cgroup.o, its do_raw_spin_lock()
 * a call of its own).  0 if not found.  A
 * straight walk of @size bytes that ignores branches, so code that
 * merges paths can fool it: callers check what it finds against a
 * second function.  An instruction it does not follow forgets the
 * registers it may write (bits 0-4 unless it is a store, bits 10-14
 * of a load pair, bits 16-20 of an exclusive, the base of a pre- or
 * post-indexed access); a call forgets every caller-saved one.
 */
unsigned long vfsfast_arch_call_ref(unsigned long func, unsigned long size,
				    unsigned long callee, unsigned int nth,
				    bool after)
{
	unsigned long known[32] = { 0 };
	bool called = false;
	unsigned long pc;
	__le32 raw;
	u32 insn;
	int r;

	for (pc = func; pc + sizeof(raw) <= func + size; pc += sizeof(raw)) {
		if (copy_from_kernel_nofault(&raw, (void *)pc, sizeof(raw)))
			return 0;
		insn = le32_to_cpu(raw);
		if (called && vfsfast_insn_is_access(insn) && known[(insn >> 5) & 0x1f])
			return known[(insn >> 5) & 0x1f];
		if ((insn & 0x9f000000) == 0x90000000) {		/* adrp */
			long imm = ((insn >> 29) & 3) | (((insn >> 5) & 0x7ffff) << 2);

			known[insn & 0x1f] = (pc & ~0xfffUL) +
					     (sign_extend64(imm, 20) << 12);
		} else if ((insn & 0xbf800000) == 0x91000000) {	/* add/sub xd, xn, #imm */
			unsigned long imm = (insn >> 10) & 0xfff;
			unsigned long base = known[(insn >> 5) & 0x1f];

			if (insn & BIT(22))
				imm <<= 12;
			if (insn & BIT(30))
				imm = -imm;
			known[insn & 0x1f] = base ? base + imm : 0;
		} else if ((insn & 0xffe0ffe0) == 0xaa0003e0) {	/* mov xd, xm */
			known[insn & 0x1f] = known[(insn >> 16) & 0x1f];
		} else if (vfsfast_insn_is_bl(insn)) {
			long off = sign_extend64((insn & 0x3ffffff) << 2, 27);

			if (called && known[0])
				return known[0];
			if (!called && pc + off == callee && !--nth) {
				if (!after)
					return known[0];
				called = true;
			}
			for (r = 0; r <= 18; r++)
				known[r] = 0;
			known[30] = 0;
		} else {
			if (vfsfast_insn_writes_base(insn))
				known[(insn >> 5) & 0x1f] = 0;
			/* ldp: the second register too */
			if ((insn & 0x3a400000) == 0x28400000)
				known[(insn >> 10) & 0x1f] = 0;
			/* ldxr/stxr and their kin: the status register too */
			if ((insn & 0x3f000000) == 0x08000000)
				known[(insn >> 16) & 0x1f] = 0;
			if (!vfsfast_insn_is_store(insn))
				known[insn & 0x1f] = 0;
		}
		/* Register 31 is sp or xzr, never a variable's address. */
		known[31] = 0;
	}
	return 0;
}

#ifdef VFSFAST_FAULT_INJECT
/*
 * Test builds only (make VFSFAST_FAULT_INJECT=1): the stock stub of the
 * target named here enters its body one instruction late, past the
 * "paciasp" that signs the return address, so that its "autiasp" checks
 * an unsigned one.  That must fault where the kernel uses pointer
 * authentication: the proof that a test of the right entry (PAC on, the
 * return accepted) tests something.  Armed at load only, and only when
 * the body starts with that "paciasp": skipping anything else would
 * prove nothing and could corrupt the stack.
 */
static char fi_arm64_skip_sign[64];
module_param_string(fi_arm64_skip_sign, fi_arm64_skip_sign,
		    sizeof(fi_arm64_skip_sign), 0444);
MODULE_PARM_DESC(fi_arm64_skip_sign,
		 "test builds: enter this target's body past its paciasp");

const char *vfsfast_arch_fi_body(const char *name, unsigned long *body)
{
	__le32 insn;

	if (!sysfs_streq(name, fi_arm64_skip_sign))
		return NULL;
	if (copy_from_kernel_nofault(&insn, (void *)*body, sizeof(insn)))
		return "fi_arm64_skip_sign: body unreadable";
	if (le32_to_cpu(insn) != VFSFAST_INSN_PACIASP) {
		pr_warn("%s: fi_arm64_skip_sign: body %pS starts with %08x, not paciasp: not armed\n",
			name, (void *)*body, le32_to_cpu(insn));
		return "fi_arm64_skip_sign: the body does not start with paciasp";
	}
	*body += sizeof(insn);
	pr_info("%s: fi_arm64_skip_sign: stock calls enter at %pS, past paciasp\n",
		name, (void *)*body);
	return NULL;
}
#endif
