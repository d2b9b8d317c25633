#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The icount guests' CPU model, the lab's cost model
# (Documentation/ab-methodology.md, "The cost model"): the qemu command
# of an icount guest must offer none of the fast-string features this
# qemu knows (ERMS, FSRM; FSRS, FZRM, FSRC where it knows them), or the
# kernels copy and clear by rep movsb/stosb and icount charges each byte.
# (qemu 7.2's TCG offers ERMS under -cpu max and cannot offer FSRM; the
# checker counts every flag qemu knows as offered by max, the safe side.)
# The old model is started only when asked for by name; wall-time guests
# keep -cpu max.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import re
import sys

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import vm  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check


def command(icount):
    return vm.qemu_command("bzImage", "initrd", 1024, 1, icount, False, "", "c.log", "o.log")


def cpu_of(cmd):
    return cmd[cmd.index("-cpu") + 1]


known = sorted(set(vm.FAST_STRING_FEATURES) & vm.qemu_cpu_features())
check({"erms", "fsrm"} <= set(known), "this qemu knows the flags ERMS and FSRM",
      f"known: {known}")
# Any flag qemu knows whose name says fast string ops must be in the list.
fastish = sorted(f for f in vm.qemu_cpu_features() if re.fullmatch(r"erms|f[sz]r[a-z]", f))
check(set(fastish) <= set(vm.FAST_STRING_FEATURES),
      "every fast-string flag this qemu knows is one the model takes away", f"{fastish}")

vm.set_cost_model(vm.DEFAULT_COST_MODEL)
icount = command(True)
check("-icount" in icount, "an icount guest's command has -icount")
check(vm.fast_strings_offered(cpu_of(icount)) == [],
      "an icount guest is offered no fast-string feature", cpu_of(icount))
check(all(f"-{f}" in cpu_of(icount).split(",") for f in known),
      "the default model takes away each that qemu knows", cpu_of(icount))
check(cpu_of(icount) in vm.cost_model_label(), "the tables' label names the -cpu used",
      vm.cost_model_label())
check(cpu_of(command(False)) == "max", "a wall-time guest keeps -cpu max", cpu_of(command(False)))

# The checker itself, on what a slip would look like.
for cpu, want in (("max", known), ("max,-erms", [f for f in known if f != "erms"]),
                  ("max,-fsrm", [f for f in known if f != "fsrm"]),
                  ("max,-erms,-fsrm,+erms", ["erms"]), ("max,-erms,fsrm=on", ["fsrm"]),
                  ("qemu64", []), ("qemu64,+erms", ["erms"])):
    got = vm.fast_strings_offered(cpu)
    check(got == sorted(want), f"-cpu {cpu}: offers {', '.join(want) or 'nothing'}", f"{got}")

# A model that offers them is refused for icount unless named as the old one.
saved = vm.COST_MODELS[vm.DEFAULT_COST_MODEL]
vm.COST_MODELS[vm.DEFAULT_COST_MODEL] = ("fsrm",)
try:
    command(True)
    refused = False
except ValueError:
    refused = True
finally:
    vm.COST_MODELS[vm.DEFAULT_COST_MODEL] = saved
check(refused, "an icount guest whose model leaves ERMS on is refused")
vm.set_cost_model("max")
check(vm.fast_strings_offered(cpu_of(command(True))) == known,
      "the old model, asked for by name, still boots with ERMS/FSRM (comparisons)",
      cpu_of(command(True)))
check("cost model max" in vm.cost_model_label(), "and its tables say so", vm.cost_model_label())
vm.set_cost_model(vm.DEFAULT_COST_MODEL)
try:
    vm.set_cost_model("fast")
    bad = False
except ValueError:
    bad = True
check(bad, "an unknown model name is refused")
RESULTS.finish()
