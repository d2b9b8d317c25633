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
#include <linux/kprobes.h>
#include <linux/uaccess.h>

#include "vfsfast.h"

#define VFSFAST_INSN_BTI_C	0xd503245f
#define VFSFAST_INSN_MOV_X9_X30	0xaa1e03e9
#define VFSFAST_INSN_NOP	0xd503201f

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
