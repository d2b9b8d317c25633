/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Direct-call trampolines and the way back into stock function bodies, on
 * arm64.
 *
 * With the direct backend, a target's ftrace site (the second word of the
 * function, after "mov x9, x30") is patched into "bl vfsfast_tramp_<name>",
 * or, where the trampoline is out of a bl's reach, into a call of
 * ftrace_caller, which enters it the same way on its direct path.  On
 * entry x9 holds the caller's return address, x30 the target's body, and
 * x0-x7 and sp are as the caller left them.  Putting x9 back into x30 and
 * branching to the replacement enters it exactly as if the caller had
 * called it, and it returns straight to the caller.  No return address
 * that PAC signed is ever rewritten: the replacement signs the caller's
 * x30 against the caller's sp itself, as on a direct call.  x16 (IP0) is
 * scratch at any call and is not an argument register; a "br x16" is a
 * valid branch to a replacement's "bti c".  SYM_FUNC_START gives each
 * stub its landing pad on BTI kernels: ftrace is given their addresses.
 * The replacement is read from vfsfast_redirect_<name> at every call, so
 * the passthrough knob switches it without touching the text.
 *
 * A replacement that wants the stock behaviour calls vfsfast_stock_<name>()
 * with the target's prototype: it enters the target's body just past the
 * ftrace site, so the call is never diverted again, with x30 the
 * replacement's return address (or its caller's, for a tail call).  The
 * body has no landing pad: on BTI kernels it is reached by "ret x16",
 * which BTI does not check.
 */
#include "compat_asm.h"

.macro VFSFAST_STUBS name
SYM_FUNC_START(vfsfast_tramp_\name)
	ldr_l	x16, vfsfast_redirect_\name
	mov	x30, x9
	br	x16
SYM_FUNC_END(vfsfast_tramp_\name)

SYM_FUNC_START(vfsfast_stock_\name)
	ldr_l	x16, vfsfast_body_\name
#ifdef CONFIG_ARM64_BTI_KERNEL
	ret	x16
#else
	br	x16
#endif
SYM_FUNC_END(vfsfast_stock_\name)
.endm

/* Every target this kernel builds, as module/gen-targets.sh found them. */
#include "vfsfast_targets.h"
#define VFSFAST_STUBS_FOR(name) VFSFAST_STUBS name;
VFSFAST_TARGETS_ALL(VFSFAST_STUBS_FOR)
