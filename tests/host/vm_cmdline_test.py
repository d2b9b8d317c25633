#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The guests' kernel command line (scripts/lablib/vm.py): wall-clock
# guests boot with the TSC's clocksource watchdog off (a false "frequency
# skew" under TCG marks the TSC unstable in the middle of a test on 6.12
# and 7.2: Documentation/lab.md, "Lab caveats"); icount guests keep it,
# so the benchmarks' guests boot as before; warnings still panic.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import sys

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import arch, vm  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check

wall = vm.kernel_cmdline(False, "vfsfast.x=1").split()
icount = vm.kernel_cmdline(True, "vfsfast.x=1").split()
check("tsc=nowatchdog" in wall, "a wall-clock guest boots with tsc=nowatchdog", " ".join(wall))
check(not any(a.startswith("tsc=") for a in icount), "an icount guest keeps the TSC watchdog",
      " ".join(icount))
for args, what in ((wall, "a wall-clock"), (icount, "an icount")):
    check("panic_on_warn=1" in args and "oops=panic" in args,
          f"{what} guest still panics on warnings and oopses")
    check(args[-1] == "vfsfast.x=1", f"{what} guest gets the caller's arguments last")
check(vm.kernel_cmdline(True) == vm.CMDLINE, "no extra arguments: nothing appended, no spaces",
      repr(vm.kernel_cmdline(True)))
# arm64 guests: the PL011's console, no x86 TSC argument, their own qemu
# with the job's output on a virtio console (virt has one UART).
arm = vm.kernel_cmdline(False, "vfsfast.x=1", arch.ARM64).split()
check(arm[0] == "console=ttyAMA0" and not any(a.startswith("tsc=") for a in arm)
      and "panic_on_warn=1" in arm and arm[-1] == "vfsfast.x=1",
      "an arm64 guest: console=ttyAMA0, no tsc=, warnings still panic", " ".join(arm))
cmd = vm.qemu_command("Image", "initrd", 1024, 1, True, False, "", "c.log", "o.log",
                      arch=arch.ARM64)
check(cmd[0] == "qemu-system-aarch64" and cmd[cmd.index("-machine") + 1] == "virt"
      and cmd[cmd.index("-cpu") + 1].startswith("max") and "file:c.log" in cmd
      and "virtconsole,chardev=job" in cmd and "file,id=job,path=o.log" in cmd
      and "shift=0,sleep=off" in cmd,
      "an arm64 icount guest: qemu-system-aarch64 -machine virt -cpu max, console in a "
      "file, the job's output through a virtio console", " ".join(cmd))
RESULTS.finish()
