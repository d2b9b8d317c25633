/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Direct-call trampolines and the way back into stock function bodies, on
 * x86-64.
 *
 * With the direct backend in call mode, a target's ftrace site (the first
 * instruction, after ENDBR on IBT kernels) is patched into
 * "call vfsfast_tramp_<name>".  On entry the stack holds the address of the
 * target's body, then the caller's return address, and every argument is
 * still where the caller put it.  Overwriting the first with the
 * replacement and returning enters the replacement exactly as if the caller
 * had called it: same arguments, same stack (fsnotify()'s seventh argument
 * is there), and it returns straight to the caller.  %r11 is scratch at a
 * call site and is not an argument register, so it is free here.  The
 * replacement is read from vfsfast_redirect_<name> at every call, so the
 * passthrough knob switches it without touching the text.  Nothing here
 * accounts for the call that entered it: like the kernel's own direct
 * trampolines, only calls made from a trampoline are accounted.
 *
 * A replacement that wants the stock behaviour calls vfsfast_stock_<name>()
 * with the target's prototype; the passthrough knob sends callers there
 * directly, so that it measures the redirect alone.  It enters the target's body just past the
 * ftrace site, so the call is never diverted again, whatever backend is in
 * use and whatever else (function_graph, kprobes) has changed the return
 * addresses on the stack.  It is reached by a return, never by an indirect
 * jump: the body has no ENDBR, and an indirect jump to it would fault on
 * IBT hardware.  The call just before it keeps the return stack buffer
 * balanced, as in the kernel's retpolines; the int3 stops speculation
 * that follows the mispredicted return.
 */
#include "compat_asm.h"

.macro VFSFAST_STUBS name
VFSFAST_SYM_ADDRESSED_START vfsfast_tramp_\name
	movq	vfsfast_redirect_\name(%rip), %r11
	movq	%r11, (%rsp)
	RET
SYM_FUNC_END(vfsfast_tramp_\name)

VFSFAST_SYM_ADDRESSED_START vfsfast_stock_\name
	movq	vfsfast_body_\name(%rip), %r11
	CALL_DEPTH_ACCOUNT
	ANNOTATE_INTRA_FUNCTION_CALL
	call	.Lvfsfast_enter_\name
	int3
.Lvfsfast_enter_\name:
	movq	%r11, (%rsp)
	UNWIND_HINT_FUNC
	RET
SYM_FUNC_END(vfsfast_stock_\name)
.endm

/* Every target this kernel builds, as module/gen-targets.sh found them. */
#include "vfsfast_targets.h"
#define VFSFAST_STUBS_FOR(name) VFSFAST_STUBS name;
VFSFAST_TARGETS_ALL(VFSFAST_STUBS_FOR)
