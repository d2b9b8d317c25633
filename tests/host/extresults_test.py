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
# keeps only what was built.  fstests' check output becomes the same
# outcomes (pass, not run, failure, a test check was stopped in), and the
# generic tests are chosen from fstests' group list.  The builds
# (extbuild.py) of an arm64 kernel are cross builds, cached apart from
# the same release's amd64 builds.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import sys

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import extbuild, external, extresults, kernels  # noqa: E402

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

# fstests' check, as the guest passes it on: its header, a line per test
# (the previous run's time and this one's on a pass; [not run] and the
# reason; a failure's words, then its indented diff), its summary.
FSTESTS = """\
EXT-KNOBS off
EXT-FST off ext4 FSTYP         -- ext4
EXT-FST off ext4 PLATFORM      -- Linux/x86_64 (none) 6.12.117+deb13-amd64
EXT-FST off ext4 
EXT-FST off ext4 generic/002        4s
EXT-FST off ext4 generic/023       [not run] renameat2 not supported in /mnt/test
EXT-FST off ext4 generic/026 12s ...  11s
EXT-FST off ext4 generic/087 3s ... - output mismatch (see /root/fstests/results//generic/087.out.bad)
EXT-FST off ext4     --- tests/generic/087.out	2026-01-01 00:00:00
EXT-FST off ext4     +++ /root/fstests/results//generic/087.out.bad	2026-11-28 23:40:00
EXT-FST off ext4     @@ -1,3 +1,4 @@
EXT-FST off ext4 generic/099        5s _check_dmesg: something found (see /root/fstests/results//generic/099.dmesg)
EXT-FST off ext4 Ran: generic/002 generic/023 generic/026 generic/087 generic/099
EXT-FST off ext4 Not run: generic/023
EXT-FST off ext4 Failures: generic/087 generic/099
EXT-FST off ext4 Failed 2 of 5 tests
EXT-FST-END off ext4 1
EXT-TIME off ext4 fstests 300
EXT-KNOBS on readlink getname
EXT-FST on ext4 generic/002 4s ...  5s
EXT-FST on ext4 generic/023 1s ... [not run] renameat2 not supported in /mnt/test
EXT-FST on ext4 generic/026 11s ... - output mismatch (see /root/fstests/results//generic/026.out.bad)
EXT-FST on ext4     --- tests/generic/026.out
EXT-FST on ext4     -user:fsgqa:rwx
EXT-FST on ext4 generic/087 3s ...  3s
EXT-FST on ext4 generic/099 5s ...  6s _check_dmesg: something found (see /root/fstests/results//generic/099.dmesg)
EXT-FST on ext4 Ran: generic/002 generic/023 generic/026 generic/087 generic/099
EXT-FST on ext4 Not run: generic/023
EXT-FST on ext4 Failures: generic/026 generic/099
EXT-FST on ext4 Failed 2 of 5 tests
EXT-FST-END on ext4 1
EXT-DONE
"""
frun = extresults.parse(FSTESTS)
res = {k[2]: {p: str(o) for p, o in per.items()} for k, per in frun.results.items()}
check(set(res) == {"generic/002", "generic/023", "generic/026", "generic/087", "generic/099"} and
      all(k[:2] == ("fstests", "ext4") for k in frun.results),
      "fstests: one result per test check ran, suite fstests, on its filesystem", res)
check(res["generic/002"] == {"off": "pass (rc 0)", "on": "pass (rc 0)"},
      "fstests: a test in Ran and neither Not run nor Failures passes, whatever its times", res)
check(res["generic/023"]["off"] == "skip (rc 32, renameat2 not supported in /mnt/test)" and
      res["generic/023"]["on"] == res["generic/023"]["off"],
      "fstests: a test not run is a skip with check's reason, the same with another time", res)
check(res["generic/087"]["off"] == "fail (rc 1, - output mismatch)",
      "fstests: an output mismatch is a failure, its file name and times left out", res)
check(res["generic/099"]["off"] == "fail (rc 1, _check_dmesg: something found)" and
      res["generic/099"]["on"] == res["generic/099"]["off"],
      "fstests: a dmesg check's failure after a pass is a failure, the same in both", res)
check(frun.logs[("fstests", "on", "ext4", "generic/026")] ==
      ["--- tests/generic/026.out", "-user:fsgqa:rwx"],
      "fstests: a failing test's diff lines are its messages", frun.logs)
frep = extresults.compare(frun)
fdiffs = {k[2] for k, _, _ in frep.differences}
check(fdiffs == {"generic/026", "generic/087"},
      "fstests: a test that passes in one pass and fails in the other differs, either way", fdiffs)
check([k[2] for k, _ in frep.kernel_failures] == ["generic/099"] and not frep.missing,
      "fstests: a failure the same off and on is the kernel's", frep.kernel_failures)
ftext = "\n".join(extresults.format_report(frep, frun, "6.12"))
check("DIFFERS: fstests generic/026 on ext4: off pass (rc 0); on fail (rc 1, - output mismatch)"
      in ftext and "on: -user:fsgqa:rwx" in ftext,
      "fstests: the report names the difference and quotes check's diff", ftext)
check(frep.counts["off"]["skip"] == 1 and frep.counts["on"]["fail"] == 2,
      "fstests: the classes counted per pass", frep.counts)

# check stopped by the guest's timeout: no summary; the tests before have
# their own lines' verdicts, the running one is a timeout, the rest have
# no result (missing from the pass).
killed = extresults.parse(
    "EXT-FST off ext4 generic/002        4s\n"
    "EXT-FST off ext4 generic/023       [not run] no renameat2\n"
    "EXT-FST off ext4 generic/026       - output mismatch (see /x/026.out.bad)\n"
    "EXT-FST off ext4 generic/087       \n"
    "EXT-FST-END off ext4 137\n")
kres = {k[2]: str(per["off"]) for k, per in killed.results.items()}
check(kres == {"generic/002": "pass (rc 0)", "generic/023": "skip (rc 32, no renameat2)",
               "generic/026": "fail (rc 1, - output mismatch)",
               "generic/087": "timeout (rc 137, no verdict (check's exit status 137))"},
      "fstests: without a summary each line decides; the test check was in is a timeout", kres)
never = extresults.parse("EXT-FST off ext4 generic/002\n")
check(str(never.results[("fstests", "ext4", "generic/002")]["off"]) ==
      "broken (rc 2, no verdict (check never ended))",
      "fstests: a test with no verdict and no end of check is broken")
check(not extresults.parse("EXT-FST off ext4 common/config: Error: $TEST_DEV is not a block "
                           "device\nEXT-FST-END off ext4 1\n").results,
      "fstests: check that ran no test gives no result (the run counts them)")

GROUPS = """\
# QA groups control file, automatically generated.
001 rw dir udf auto quick
002 metadata udf auto quick
003 atime auto quick
026 acl quick auto
099 acl auto quick perms
100 auto acl
200 auto quick perms dangerous
423 auto quick
"""
gt = external.generic_tests(GROUPS)
check(gt == ["generic/001", "generic/002", "generic/026", "generic/099", "generic/423"],
      "generic tests: quick ones of the chosen groups and the named, never dangerous ones", gt)
check(external.generic_tests(GROUPS, ["026", "423"]) == ["generic/026", "generic/423"],
      "generic tests: --fstests-tests keeps matching names")

# lab.md's marks: a run of every suite under the kernel's own marks, a run
# of some suites under marks naming them, so that an fstests run alone
# never overwrites the LTP figures of the same kernel.
SUM = {"kernel": "6.12", "kver": "6.12.0", "passes": ["off", "on"], "knobs": {"on": "a b"},
       "ltp_tests": 3, "vfstest_suites": ["base"], "fstests_tests": ["generic/001"],
       "fstests_filesystems": ["ext4"], "filesystems": ["tmpfs"], "guest_s": 60, "build_s": 1,
       "console_clean": True, "counts": {"off": {"pass": 1}, "on": {"pass": 1}},
       "differences": 0, "missing": 0, "kernel_failures": []}
keys = [external.doc_key(SUM),
        external.doc_key(dict(SUM, fstests_tests=[])),
        external.doc_key(dict(SUM, ltp_tests=0, vfstest_suites=[]))]
check(keys == ["6.12", "6.12 --suites ltp,vfstest", "6.12 --suites fstests"],
      "lab.md: each set of suites run has its own marks", keys)
blk = external.doc_block(dict(SUM, ltp_tests=0, vfstest_suites=[]))
check(blk.startswith("<!-- vfsfast-lab external --kernels 6.12 --suites fstests: begin -->")
      and blk.endswith("<!-- vfsfast-lab external --kernels 6.12 --suites fstests: end -->"),
      "lab.md: an fstests run's block is between its own marks", blk.splitlines()[0])

# --fault: NAME=VALUE with NAME a switch the fault-injection build has;
# anything else stops before a guest boots, saying why.
SW = external.fault_switches()
check({"fi_stat_gid_from_uid", "fi_statx_gid_from_uid"} <= SW,
      "--fault: the switches are read from module/*.c", " ".join(sorted(SW)))


def refused(arg):
    try:
        external.check_fault([arg], SW)
    except SystemExit:
        return True
    return False


for why, bad in [("no value", "fi_stat_gid_from_uid"), ("not a switch", "stat_gid=1"),
                 ("unknown switch", "fi_no_such_switch=1"),
                 ("trailing words", "fi_stat_gid_from_uid=1 x"),
                 ("shell in the value", "fi_stat_gid_from_uid=$(reboot)")]:
    check(refused(bad), f"--fault: refused: {why}", bad)
check(not refused("fi_stat_gid_from_uid=1") and not refused("fi_statx_gid_from_uid=0"),
      "--fault: a known switch with a value is taken")

# The builds of one release for two architectures: each its own cache
# directory, the cross one by the chroot's cross tools with configure told
# the host, the native one as before.
K64, KARM = kernels.get("6.12"), kernels.get("6.12-arm64")
C = "0123456789abcdef0123"
check(K64.release == KARM.release and extbuild._cached("ltp", K64, C) !=
      extbuild._cached("ltp", KARM, C) and extbuild._cached("ltp", KARM, C).endswith(
          "/external/ltp-trixie-arm64-0123456789ab"),
      "extbuild: one release's amd64 and arm64 builds are cached apart",
      extbuild._cached("ltp", KARM, C))
T64, TARM = extbuild._toolchain(K64), extbuild._toolchain(KARM)
check(T64 == {"cc": "gcc", "strip": "strip", "configure": ""} and
      TARM["cc"] == "aarch64-linux-gnu-gcc" and TARM["strip"] == "aarch64-linux-gnu-strip" and
      "--host=aarch64-linux-gnu" in TARM["configure"] and
      "CC=aarch64-linux-gnu-gcc" in TARM["configure"],
      "extbuild: arm64's builds use the cross compiler, amd64's the chroot's gcc",
      f"{T64} {TARM}")
check(extbuild.cross_libraries(K64) == [] and
      extbuild.cross_libraries(KARM) == [p + ":arm64" for p in extbuild.CROSS_LIBRARIES],
      "extbuild: the optional libraries of arm64 as PKG:arm64 for the cross kernel only")
for name, script in (("ltp", extbuild.LTP_SCRIPT), ("vfstest", extbuild.VFSTEST_SCRIPT)):
    text = script.format(src="/s", dest="/d", jobs=2, dirs="access", **TARM)
    check(not any("{%s}" % f in text for f in ("cc", "strip", "configure", "src", "dest")) and
          "aarch64-linux-gnu-" in text and "\ngcc " not in text,
          f"extbuild: {name}'s script formats for arm64, with the cross tools")

RESULTS.finish()
