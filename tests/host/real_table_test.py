#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The table of `vfsfast-lab real` (scripts/lablib/real.py) on synthetic
# vfsfast-ab summaries: a loss is never printed as a gain nor rounded to
# zero, a significant mark with an interval across zero is "nothing
# measurable", an A/A row marked significant distrusts its row, and
# --doc replaces a kernel's block between its marks and adds new ones
# before the anchor, leaving the rest of the file alone.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import json
import os
import sys
import tempfile

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import arch, real  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check


def row(delta, lo, hi, mark, p=0.01):
    return {"pairs": 16, "off_median": 0.1, "on_median": 0.1 * (1 + delta / 100),
            "delta_pct": delta, "delta_lo_pct": lo, "delta_hi_pct": hi, "marker": mark, "p": p}


AA = row(0.001, -0.01, 0.012, "~", 0.5)
check(real.verdict(row(-1.2, -1.3, -1.1, "*"), AA) == "gain", "a significant saving is a gain")
check(real.verdict(row(0.004, 0.002, 0.006, "*"), AA) == "LOSS",
      "a significant +0.004% is a LOSS")
check(real.verdict(row(-0.5, -1.0, 0.1, "*"), AA) == "nothing measurable",
      "a * whose interval crosses zero is nothing measurable")
check(real.verdict(row(-3.0, -6.0, -0.5, "~", 0.06), AA) == "nothing measurable",
      "a large but not significant delta is nothing measurable")
check(real.verdict(row(0.0, 0.0, 0.0, "=", None), AA) == "nothing measurable",
      "every pair equal is nothing measurable")
check(real.verdict(row(-1.2, -1.3, -1.1, "*"), row(0.3, 0.1, 0.5, "*")).startswith("unstable"),
      "an A/A row marked * distrusts the row")
check(real.verdict(row(0.3, 0.2, 0.4, "*"), None) == "LOSS", "a run without A/A pairs")
for x, want in ((0.004, "+0.004%"), (-0.004, "-0.004%"), (0.0004, "+0.0004%"), (0.0, "+0.000%"),
                (1.234, "+1.23%"), (-0.15, "-0.15%")):
    check(real._pct(x) == want, f"_pct({x}) is {want}", real._pct(x))


class K:
    release = "trixie"
    kver = "6.12.0-test"
    arch = arch.AMD64

    def __str__(self):
        return "6.12"


summ = {label: {"on/off": row(0.004, 0.002, 0.006, "*"), "aa": AA}
        for label, _, _, _ in real.PROGRAMS}
r = real.Result(K(), summ, ["readlink", "fsnotify"], "direct", 12, {"coreutils": "9.7-3"},
                600, 16, 4)
text = real.table(r)
lines = [l for l in text.splitlines() if l.startswith("| `")]
check(len(lines) == len(real.PROGRAMS), "one row per program", str(len(lines)))
check(all("+0.004% [+0.002%, +0.006%] *" in l and l.endswith("| LOSS |") for l in lines),
      "a small loss stays a loss, with its digits", lines[0])
check("1 vCPU" in text and "icount" in text and "readlink, fsnotify" in text and
      "6.12.0-test" in text and "coreutils 9.7-3" in text and "16 off/on pairs" in text,
      "the block names kernel, vCPUs, icount, knobs, versions and pairs")


class K64(K):
    arch = arch.ARM64


t64 = real.table(real.Result(K64(), summ, ["getname"], "direct", 12, {}, 600, 16, 4))
check("-cpu max,pauth-impdef=on" in t64 and "cost model" not in t64 and
      "cost model" in text,
      "an arm64 kernel's block names its guests' -cpu, not amd64's cost model",
      t64.splitlines()[1][:300])

calls = real.parse_calls("VFSFAST-REAL-CALLS id fstatat_empty:220:0 access_creds:40:20 kernfs:0:0\n"
                         "VFSFAST-REAL-CALLS date\n")
check(calls == {"id": [("fstatat_empty", 220, 0), ("access_creds", 40, 20), ("kernfs", 0, 0)],
                "date": []}, "the guest's call counts are read back per program", str(calls))
rc = real.Result(K(), summ, ["readlink"], "direct", 12, {}, 600, 16, 4, calls=calls)
idrow = [l for l in real.table(rc).splitlines() if l.startswith("| `id`")]
check(len(idrow) == 1 and idrow[0].endswith("| LOSS | fstatat_empty 11, access_creds 2 (1) |"),
      "the calls column: hits per invocation, fallbacks in parentheses, idle knobs left out",
      idrow[0] if idrow else "no id row")
check(real.calls_text([("close_sync", 23800, 0), ("kernfs", 2, 1)], 2) == "close_sync 11,900, kernfs 1 (0.5)",
      "counts of a hundred and more print whole, with thousands separators, never in e-notation",
      real.calls_text([("close_sync", 23800, 0), ("kernfs", 2, 1)], 2))
check("fast-path calls" not in text, "no calls column where the guest counted none")

with tempfile.TemporaryDirectory() as d:
    doc = os.path.join(d, "doc.md")
    with open(doc, "w") as f:
        f.write("head\n\n<!-- vfsfast-lab real: new kernels -->\ntail\n")
    real.update_doc(doc, [(K(), text)])
    first = open(doc).read()
    check(first.startswith("head\n\n" + real.begin_mark(K())) and first.endswith(
        "<!-- vfsfast-lab real: new kernels -->\ntail\n"), "a new kernel goes before the anchor")
    real.update_doc(doc, [(K(), text.replace("LOSS", "XLOSS"))])
    second = open(doc).read()
    check(second.count(real.begin_mark(K())) == 1 and "XLOSS" in second and
          len(second) == len(first) + text.count("LOSS"),
          "a kernel's block is replaced in place")


# run() with the guest faked: the header says "every optimization this
# kernel supports" unless --knobs named them, whatever the guest switched
# (before the fix, the guest's list of switched knobs overwrote the
# --knobs argument, and every --doc table said "named by --knobs").
class FakeKernel:
    name = "6.1"
    kver = "6.1.0-56-amd64"
    release = "bookworm"

    def ensure(self):
        pass

    def __str__(self):
        return self.name


class FakeLand:
    def ensure(self, kernel):
        return "userland.img"

    def versions(self):
        return {"coreutils": "9.1-1"}


class FakeRes:
    seconds = 60


one = [real.PROGRAMS[0]]
summary = {"results": [{"metric": "runtime_s", "compare": "on/off"}],
           "backends_used": "readlink=direct"}
saved = (real.build.guest_module, real.userland.of, real.guest.run_job, real.ab.checked_output)
real.build.guest_module = lambda k: ("vfsfast.ko", "")
real.userland.of = lambda k: FakeLand()
real.guest.run_job = lambda *a, **kw: FakeRes()
real.ab.checked_output = lambda *a: (f"{real.KNOBS_MARK}readlink,fsnotify\nVFSFAST-REAL-UDEV 9\n",
                                     {f"{one[0][0]}.summary.json": json.dumps(summary)})
try:
    every = real.run(FakeKernel(), 2, 1, 1, one, None)
    named = real.run(FakeKernel(), 2, 1, 1, one, "readlink")
finally:
    real.build.guest_module, real.userland.of, real.guest.run_job, real.ab.checked_output = saved
check(every.knobs == ["readlink", "fsnotify"] and not every.chosen,
      "run() without --knobs: the guest's knobs, 'every optimization' in the header",
      f"{every.knobs} chosen={every.chosen}")
check(named.chosen, "run() with --knobs: 'named by --knobs' in the header")

RESULTS.finish()
