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
