#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The external suites' comparison (scripts/lablib/extresults.py) on
# synthetic guest output: a test whose result changes when the knobs go
# on is reported as a difference, with its messages; a failure the
# kernel has with every knob off too is listed as the kernel's, and is
# no difference; a test missing from one pass is reported; the same
# class with another sequence of results still differs; the exit-status
# classes follow LTP's bits.  And the runtest filter of external.py
# keeps only what was built.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import sys

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import external, extresults  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check

OUTPUT = """\
boot noise
EXT-KNOBS off
EXT-RES ltp off tmpfs access01 0 PPPP
EXT-RES ltp off tmpfs stat03 1 PPF
EXT-LOG ltp off tmpfs stat03 stat03.c:50: TFAIL: stat(...) succeeded
EXT-RES ltp off tmpfs readlink01 0 PP
EXT-RES ltp off ext4 open01 32 C
EXT-RES ltp off ext4 inotify01 0 PPP
EXT-RES ltp off ext4 gone01 0 P
EXT-RES vfstest off ext4 core 0 -
EXT-TIME off tmpfs ltp 12
EXT-KNOBS on readlink getname kernfs_rcu
EXT-RES ltp on tmpfs access01 0 PPPP
EXT-RES ltp on tmpfs stat03 1 PPF
EXT-LOG ltp on tmpfs stat03 stat03.c:50: TFAIL: stat(...) succeeded
EXT-RES ltp on tmpfs readlink01 1 PF
EXT-LOG ltp on tmpfs readlink01 readlink01.c:70: TFAIL: readlink() returned 4, expected 5
EXT-RES ltp on ext4 open01 32 C
EXT-RES ltp on ext4 inotify01 0 PPPP
EXT-RES vfstest on ext4 core 1 setgid_create
EXT-TIME on tmpfs ltp 13
EXT-DONE
"""

run = extresults.parse(OUTPUT)
check(len(run.results) == 7, "parse: one entry per suite, filesystem and test", len(run.results))
check(run.passes == ["off", "on"], "parse: the passes in the order they ran", run.passes)
check(run.knobs["on"] == "readlink getname kernfs_rcu" and run.knobs["off"] == "",
      "parse: the knobs on in each pass", run.knobs)
check(run.seconds[("off", "tmpfs", "ltp")] == 12, "parse: the time of a pass on a filesystem")
check(run.logs[("ltp", "on", "tmpfs", "readlink01")] ==
      ["readlink01.c:70: TFAIL: readlink() returned 4, expected 5"],
      "parse: a failing test's messages, whole", run.logs)

rep = extresults.compare(run)
diffs = {(k[0], k[1], k[2]): (str(a), str(b)) for k, a, b in rep.differences}
check(("ltp", "tmpfs", "readlink01") in diffs,
      "a test that passes off and fails on is a difference", diffs)
check(("vfstest", "ext4", "core") in diffs, "a vfstest suite that fails only on is a difference")
check(("ltp", "ext4", "inotify01") in diffs,
      "passing in both with another sequence of results is still a difference")
check(("ltp", "tmpfs", "stat03") not in diffs and
      [k for k, _ in rep.kernel_failures] == [("ltp", "tmpfs", "stat03")],
      "a failure identical off and on is the kernel's, listed and not a difference",
      rep.kernel_failures)
check(rep.missing == [(("ltp", "ext4", "gone01"), "on")],
      "a test with no result in one pass is missing from it", rep.missing)
check(("ltp", "ext4", "open01") not in diffs and
      ("ltp", "ext4", "open01") not in [k for k, _ in rep.kernel_failures],
      "a skip identical in both is neither a difference nor a kernel failure")
check(not rep.identical, "a report with differences is not identical")
check(rep.counts["off"]["pass"] == 5 and rep.counts["on"]["fail"] == 3,
      "the classes counted per pass", rep.counts)

text = "\n".join(extresults.format_report(rep, run, "6.12"))
check("DIFFERS: ltp readlink01 on tmpfs: off pass (rc 0, PP); on fail (rc 1, PF)" in text,
      "the report names each difference with both outcomes", text)
check("on: readlink01.c:70: TFAIL: readlink() returned 4, expected 5" in text,
      "the report quotes the differing test's messages")
check("kernel's own (the same with every knob off): ltp stat03 on tmpfs" in text,
      "the report lists the kernel's own failures")
check("MISSING: ltp gone01 on ext4: no result with knobs on" in text,
      "the report names a test missing from a pass")

same = extresults.parse("EXT-RES ltp off tmpfs a 0 PP\nEXT-RES ltp on tmpfs a 0 PP\n"
                        "EXT-RES ltp off tmpfs b 32 C\nEXT-RES ltp on tmpfs b 32 C\n")
srep = extresults.compare(same)
check(srep.identical and srep.tests == 2 and not srep.kernel_failures,
      "identical passes: identical, nothing listed", srep)
check("identical" in extresults.format_report(srep, same, "5.10")[0],
      "an identical report says so on its first line")
aa = extresults.compare(extresults.parse(
    "EXT-RES ltp off tmpfs a 0 PP\nEXT-RES ltp on tmpfs a 0 PP\nEXT-RES ltp off tmpfs a2 1 F\n"
    "EXT-RES ltp on tmpfs a2 0 P\n"), "off", "on")
check(len(aa.differences) == 1 and aa.differences[0][0][2] == "a2",
      "a failure off that passes on is a difference too, not the kernel's")

for rc, want in ((0, "pass"), (32, "skip"), (1, "fail"), (33, "fail"), (2, "broken"),
                 (3, "broken"), (4, "warn"), (124, "timeout"), (137, "timeout"),
                 (139, "broken")):
    check(extresults.klass(rc) == want, f"exit status {rc} is {want}", extresults.klass(rc))

RUNTEST = """\
# comment
access01 access01
stat03 stat03
stat03_64 stat03_64
openat201 openat201
notbuilt01 notbuilt01 -x

fcntl07 fcntl07 -i 2
"""
lines = external.runtest_lines(RUNTEST, {"access01", "stat03", "openat201", "fcntl07"})
check(lines == ["access01 access01", "stat03 stat03", "openat201 openat201", "fcntl07 fcntl07 -i 2"],
      "runtest: only the lines whose program was built, comments and blanks left out", lines)
check(external.runtest_lines(RUNTEST, {"access01", "stat03", "fcntl07"}, ["stat", "fcntl"]) ==
      ["stat03 stat03", "fcntl07 fcntl07 -i 2"], "runtest: --ltp-tests keeps matching tags")

RESULTS.finish()
