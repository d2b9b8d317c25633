#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The objdump checks' reading of a disassembly (scripts/lablib/build.py
# disassembly(), with arch.py's rules), on canned objdump -dr text of
# each architecture: a tail call is a jump to its target, a call a call;
# an atomic on a global is named with its symbol, on x86 by its own
# relocation, on arm64 by the adrp+add that built its base register;
# per-CPU atomics (the per-CPU offset added to the address) and an
# address register met again at a branch's landing name none.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import sys
import tempfile

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import arch, build  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check

X86 = """
0000000000000000 <vfsfast_x>:
   0:	lock incl 0x0(%rip)        # 7 <vfsfast_x+0x7>
			2: R_X86_64_PC32	vfsfast_global-0x5
   7:	lock incl (%rdi)
   b:	call   10 <vfsfast_x+0x10>
			c: R_X86_64_PLT32	try_module_get-0x4
  10:	jmp    15 <vfsfast_x+0x15>
			11: R_X86_64_PLT32	vfsfast_stock_y-0x4
"""

ARM64 = """
0000000000000000 <vfsfast_a>:
   0:	adrp	x1, 0 <vfsfast_global>
			0: R_AARCH64_ADR_PREL_PG_HI21	vfsfast_global
   4:	add	x1, x1, #0x0
			4: R_AARCH64_ADD_ABS_LO12_NC	vfsfast_global
   8:	ldaddal	w2, w3, [x1]
   c:	ldxr	w4, [x1]
  10:	add	w4, w4, #0x1
  14:	stxr	w5, w4, [x1]
  18:	cbnz	w5, c <vfsfast_a+0xc>
  1c:	adrp	x0, 0 <vfsfast_pcpu>
			1c: R_AARCH64_ADR_PREL_PG_HI21	vfsfast_pcpu
  20:	add	x0, x0, #0x0
			20: R_AARCH64_ADD_ABS_LO12_NC	vfsfast_pcpu
  24:	mrs	x6, tpidr_el1
  28:	add	x0, x0, x6
  2c:	stadd	w2, [x0]
  30:	bl	0 <vfsfast_helper>
			30: R_AARCH64_CALL26	vfsfast_helper
  34:	b.ne	40 <vfsfast_a+0x40>
  38:	b	0 <vfsfast_stock_y>
			38: R_AARCH64_JUMP26	vfsfast_stock_y

0000000000000040 <vfsfast_b>:
  40:	adrp	x2, 0 <vfsfast_other>
			40: R_AARCH64_ADR_PREL_PG_HI21	vfsfast_other
  44:	add	x2, x2, #0x0
			44: R_AARCH64_ADD_ABS_LO12_NC	vfsfast_other
  48:	b	50 <vfsfast_b+0x10>
  4c:	nop
  50:	ldadd	x6, x1, [x2]
  54:	ldr	x3, [x2]
			54: R_AARCH64_LDST64_ABS_LO12_NC	vfsfast_ptr
  58:	ret
"""


def parse(text, a):
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(text)
        f.flush()
        return build.disassembly(f.name, a, ["cat"])


x86 = parse(X86, arch.AMD64)["vfsfast_x"]
check(x86[0] == ("incl", None, True, "vfsfast_global"),
      "x86: a locked instruction on a global names its symbol (its own relocation)", x86[0])
check(x86[1] == ("incl", None, True, None),
      "x86: a locked instruction on an object a register points to names none", x86[1])
check(x86[2][:2] == ("call", "try_module_get"), "x86: a call, and its target", x86[2])
check(x86[3][:2] == ("jmp", "vfsfast_stock_y"), "x86: a tail call is a jmp to its target",
      x86[3])

code = parse(ARM64, arch.ARM64)
a = code["vfsfast_a"]
check(a[2] == ("ldaddal", None, True, "vfsfast_global"),
      "arm64: an LSE atomic on a global names the symbol adrp+add built its base from", a[2])
check(a[3] == ("ldxr", None, True, "vfsfast_global") and a[5][2],
      "arm64: an exclusive pair (ldxr/stxr) on a global is atomic, named", (a[3], a[5]))
check(a[11] == ("stadd", None, True, None),
      "arm64: a per-CPU atomic (the CPU's offset added to the address) names none", a[11])
check(a[12][:2] == ("bl", "vfsfast_helper") and arch.ARM64.is_call("bl"),
      "arm64: bl is a call, with its target from R_AARCH64_CALL26", a[12])
check(a[13][0] == "b.ne" and not arch.ARM64.is_jump(a[13][0])
      and not arch.ARM64.is_call(a[13][0]),
      "arm64: a conditional branch (b.ne) is neither call nor tail call", a[13])
check(a[14][:2] == ("b", "vfsfast_stock_y") and arch.ARM64.is_jump("b"),
      "arm64: a tail call is b to its target, from R_AARCH64_JUMP26", a[14])
b = code["vfsfast_b"]
check(b[4] == ("ldadd", None, True, None),
      "arm64: at a forward branch's landing, what a register held before is forgotten", b[4])
check(not arch.ARM64.is_atomic("ldr", False) and not arch.ARM64.is_atomic("stp", False),
      "arm64: plain loads and stores are not atomics")
RESULTS.finish()
