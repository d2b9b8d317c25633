#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The digest of a failed guest console (scripts/lablib/suite.py): a CI log
# keeps one line per check, so a hung-task panic, which prints every
# blocked task's stack before it panics, must come out as each task's
# header and the functions it waits in.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import sys

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import suite  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check

HUNG = """[  600.000001] vfsfast: readlink: re-armed (jmp) after livepatch vfsfast_lp2
[  605.096676] INFO: task kworker/0:3:4668 blocked for more than 120 seconds.
[  605.100000]       Not tainted 7.2.13+deb14-amd64 #1
[  605.100889] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
[  605.102454] Call Trace:
[  605.102454]  <TASK>
[  605.102460]  __schedule+0x3c4/0xb00
[  605.102461]  schedule+0x27/0xf0
[  605.102462]  ? wait_for_completion+0x10/0x40
[  605.102463]  klp_free_patch_finish+0x1a/0x80
[  605.102464]  </TASK>
[  605.200000] INFO: task rmmod:912 blocked for more than 120 seconds.
[  605.200001] Call Trace:
[  605.200002]  synchronize_rcu_tasks_generic+0x3c4/0xb00 [vfsfast]
[  606.000000] Kernel panic - not syncing: hung_task: blocked tasks
"""

d = suite.console_digest(HUNG)
parts = d.split(" || ")
check(len(parts) == 3, "one part per report: two blocked tasks and the panic", d)
check(parts[0] == "INFO: task kworker/0:3:4668 blocked for more than 120 seconds.: "
      "__schedule < schedule < wait_for_completion < klp_free_patch_finish",
      "a blocked task's header and its frames, innermost first, timestamps dropped", parts[0])
check(parts[1].endswith(": synchronize_rcu_tasks_generic"),
      "a module's frame named without its module", parts[1])
check(parts[2].endswith(": no trace"), "a report without a trace says so", parts[2])
check("re-armed" not in d, "lines that report nothing stay out", d)
many = "\n".join(f"[ 1.0] WARNING: CPU: 0 PID: {i} at x.c:1 f+0x1/0x2\n[ 1.0]  f+0x1/0x2"
                 for i in range(20))
check(len(suite.console_digest(many).split(" || ")) == 6, "at most six reports",
      suite.console_digest(many)[:200])
deep = "[ 1.0] BUG: x\n" + "\n".join(f"[ 1.0]  g{i}+0x1/0x2" for i in range(40))
check(len(suite.console_digest(deep).split(" < ")) == 14, "at most 14 frames a report",
      suite.console_digest(deep)[-80:])
check(suite.console_digest("[ 1.0] all well\n") == "", "a clean console: nothing")
RESULTS.finish()
