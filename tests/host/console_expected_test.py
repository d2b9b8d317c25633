#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The console scan's expected reports (scripts/lablib/vm.py): between
# vfsfast_nameuaf.ko's two lines a KASAN use-after-free report is
# expected, between t_pac's the oops of a failed pointer authentication;
# any other report between them, every report outside them, and one after
# a begin line that never ends, still fail a guest.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import sys

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import vm  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check

REPORT = [
    "[   12.3] ==================================================================",
    "[   12.3] BUG: KASAN: use-after-free in nameuaf_touch+0x9a/0xf0 [vfsfast_nameuaf]",
    "[   12.3] Read of size 1 at addr ffff888004a1c020 by task sh/97",
    "[   12.3] Call Trace:",
    "[   12.3]  dump_stack+0x7d/0x9f",
    "[   12.3]  ? lockdep_hardirqs_on_prepare+0x17b/0x410",
    "[   12.3]  nameuaf_touch+0x9d/0xb0 [vfsfast_nameuaf]",
]
DONE = f"{vm.DONE_MARKER} rc=0"


def bad(lines):
    """The bad lines of a completed guest whose console is @lines."""
    return vm.Result("\n".join(lines), DONE, 1.0, False).bad_lines


inside = [f"[   12.2] {vm.EXPECTED_BEGIN}"] + REPORT + [f"[   12.4] {vm.EXPECTED_END}"]
check(bad(inside) == [], "a KASAN use-after-free report between the two lines is expected",
      repr(bad(inside)))
check(len(bad(REPORT)) == 3, "the same report without them fails the guest", repr(bad(REPORT)))
lockdep = inside[:-1] + ["[   12.3] WARNING: possible circular locking dependency detected"] + \
    inside[-1:]
check(any("circular" in line for line in bad(lockdep)),
      "a lockdep report between the two lines still fails the guest", repr(bad(lockdep)))
other = inside[:-1] + ["[   12.3] WARNING: CPU: 0 PID: 97 at fs/namei.c:1 putname+0x1/0x2"] + \
    inside[-1:]
check(any("WARNING:" in line for line in bad(other)),
      "a warning between the two lines still fails the guest", repr(bad(other)))
after = inside + ["[   13.0] BUG: KASAN: use-after-free in putname+0x1/0x2"]
check(any("putname" in line for line in bad(after)),
      "a KASAN report after the end line still fails the guest", repr(bad(after)))
check(len(bad(inside[:-1])) == 3, "a begin line never ended excuses nothing",
      repr(bad(inside[:-1])))

# t_pac's report as 6.12-arm64 printed it under qemu 7.2 (no FEAT_FPAC),
# and the first line of the same on a CPU with FEAT_FPAC.
PAC = [
    "[   11.321048] Unable to handle kernel paging request at virtual address bfff9cc1d805d5f0",
    "[   11.321661]   EC = 0x21: IABT (current EL), IL = 32 bits",
    "[   11.322322] Internal error: Oops: 0000000086000004 [#1] SMP",
    "[   11.324350] pc : 0xbfff9cc1d805d5f0",
    "[   11.328987] Call trace:",
    "[   11.329262]  __arm64_sys_readlinkat+0x28/0x40",
    "[   11.330256] ---[ end trace 0000000000000000 ]---",
]
FPAC = "[   11.322322] Internal error: Oops - FPAC: 0000000072000000 [#1] SMP"
pac = [f"[   11.26] {vm.PAC_BEGIN}"] + PAC + [f"[   11.40] {vm.PAC_END}"]
check(bad(pac) == [], "a pointer authentication oops between t_pac's lines is expected",
      repr(bad(pac)))
fpac = pac[:3] + [FPAC] + pac[4:]
check(bad(fpac) == [], "the same as an FPAC oops is expected", repr(bad(fpac)))
check(len(bad(PAC)) == 1, "the same oops without the lines fails the guest", repr(bad(PAC)))
second = pac[:-1] + [PAC[2].replace("[#1]", "[#2]")] + pac[-1:]
check(any("[#2]" in line for line in bad(second)),
      "a second oops between t_pac's lines still fails the guest", repr(bad(second)))
other = pac[:-1] + ["[   11.35] Internal error: Oops: 0000000096000004 [#1] SMP"] + pac[-1:]
check(len(bad(other)) == 1, "another kind of oops between t_pac's lines still fails the guest",
      repr(bad(other)))
crossed = [f"[   11.26] {vm.PAC_BEGIN}"] + REPORT + [f"[   11.40] {vm.PAC_END}"]
check(len(bad(crossed)) == 3, "a KASAN report between t_pac's lines still fails the guest",
      repr(bad(crossed)))
crossed = [f"[   12.2] {vm.EXPECTED_BEGIN}"] + PAC + [f"[   12.4] {vm.EXPECTED_END}"]
check(len(bad(crossed)) == 1, "a pointer authentication oops between nameuaf's lines still "
      "fails the guest", repr(bad(crossed)))
RESULTS.finish()
