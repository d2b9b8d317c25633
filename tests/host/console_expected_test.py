#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The console scan's one expected report (scripts/lablib/vm.py): between
# vfsfast_nameuaf.ko's two lines a KASAN use-after-free report is
# expected; any other report between them, every report outside them,
# and one after a begin line that never ends, still fail a guest.
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
RESULTS.finish()
