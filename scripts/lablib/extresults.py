"""The external suites' results: parsed from a guest's output and compared
pass against pass (every knob off, then on).

Pure text in, text out, no lab state: tests/host/extresults_test.py
drives it with synthetic output.

The guest (tests/guest/external.sh) prints one line per test run:

  EXT-RES SUITE PASS FS TEST RC DETAIL

SUITE is ltp or vfstest, PASS off or on, FS the filesystem the test ran
on, TEST the runtest tag or vfstest suite, RC its exit status, DETAIL
what it reported: for LTP the sequence of its result lines' types (P
TPASS, F TFAIL, B TBROK, C TCONF, W TWARN), for vfstest its first
"failure:" line.  EXT-LOG lines of the same shape carry a failing test's
messages; EXT-KNOBS PASS LIST what was on; EXT-TIME PASS FS SUITE SECONDS.

fstests' check reports its tests itself, in its own words: the guest
passes its output on as EXT-FST PASS FS LINE, and EXT-FST-END PASS FS RC
when check has ended (RC 137: the guest's timeout stopped it).  Its
tests become results of the suite "fstests" here (fstests_outcomes), with
the exit status of LTP's bits for their class, so that one comparison
serves all three suites.
"""

import collections
import dataclasses
import re

# LTP's exit status bits (include/tst_res_flags.h): what a test reported.
TFAIL, TBROK, TWARN, TCONF = 1, 2, 4, 32
# What the guest's `timeout` returns when it had to stop a test.
TIMEOUT_RCS = (124, 137, 143)

# A result's class, worst first: what the summary counts.
CLASSES = ["timeout", "broken", "fail", "warn", "skip", "pass"]


def klass(rc):
    """pass, skip (only TCONF), fail, broken, warn or timeout from an exit status."""
    if rc in TIMEOUT_RCS:
        return "timeout"
    if rc == 0:
        return "pass"
    if rc == TCONF:
        return "skip"
    if rc & TBROK or rc > 63:
        return "broken"
    if rc & TFAIL:
        return "fail"
    if rc & TWARN:
        return "warn"
    return "broken"


@dataclasses.dataclass(frozen=True)
class Outcome:
    rc: int
    detail: str

    @property
    def klass(self):
        return klass(self.rc)

    def __str__(self):
        return f"{self.klass} (rc {self.rc}{', ' + self.detail if self.detail != '-' else ''})"


@dataclasses.dataclass
class Run:
    """One guest's results.  results[(suite, fs, test)][pass] = Outcome;
    logs[(suite, pass, fs, test)] = lines; knobs[pass] = what was on;
    seconds[(pass, fs, suite)] = time."""
    results: dict = dataclasses.field(default_factory=lambda: collections.defaultdict(dict))
    logs: dict = dataclasses.field(default_factory=lambda: collections.defaultdict(list))
    knobs: dict = dataclasses.field(default_factory=dict)
    seconds: dict = dataclasses.field(default_factory=dict)
    passes: list = dataclasses.field(default_factory=list)


# An fstests verdict as an exit status of LTP's bits: what klass() makes of it.
FSTESTS_RC = {"pass": 0, "notrun": TCONF, "fail": TFAIL, "broken": TBROK, "timeout": 137}
# A line of check's that starts a test: its name (SECTION-less: one
# configuration), then, on the same line, the verdict.
_FST_TEST = re.compile(r"^([a-z0-9_-]+/\d{3,})(?:\s+(.*))?$")
# check's words for a failure, wherever they are on the test's line.
_FST_FAIL = ("output mismatch", "[failed", "_check_", "[dumped core]", "no qualified output",
             "no such test")


def _fst_detail(text):
    """A test's verdict words without what differs from run to run: the
    previous run's time ("12s ... "), this run's, and "(see FILE)"."""
    text = re.sub(r"^(\d+s(\s+\.\.\.)?\s*)+", "", text.strip())
    text = re.sub(r"\s*\(see [^)]*\)", "", text)
    text = re.sub(r"(^|\s)\d+s$", "", text).strip()
    return text or "-"


def fstests_outcomes(lines, rc=None):
    """{test: (Outcome, [message lines])} from check's output lines (rc:
    check's exit status, None when it never ended).  The summary check
    prints at its end (Ran:, Not run:, Failures:) decides each test's
    class where there is one; without it (check stopped) each test's own
    line does, and a test whose line has no verdict is the one that was
    running: timeout when the guest's timeout stopped check, else broken.
    A failure's detail is check's words for it (output mismatch, exit
    status, an fsck or dmesg check), a notrun's its reason; the indented
    lines after a test (check's diff of its output) are its messages."""
    tests, order, cur = {}, [], None
    summary = {}
    for line in lines:
        m = _FST_TEST.match(line)
        if m and not line.startswith((" ", "\t")):
            cur = m.group(1)
            if cur not in tests:
                order.append(cur)
            tests[cur] = [m.group(2) or "", []]
            continue
        for key in ("Ran:", "Not run:", "Failures:"):
            if line.startswith(key):
                summary[key] = set(line[len(key):].split())
                cur = None
        if line.startswith("Passed all "):
            summary.setdefault("Failures:", set())
            cur = None
        elif cur and line[:1] in (" ", "\t") and line.strip():
            tests[cur][1].append(line.strip())
    out = {}
    for name in order:
        text, logs = tests[name]
        if "[not run]" in text:
            verdict, detail = "notrun", text.split("[not run]", 1)[1].strip() or "-"
        elif any(w in text for w in _FST_FAIL):
            verdict, detail = "fail", _fst_detail(text)
        elif re.search(r"(^|\s)\d+s$", text.strip()):
            verdict, detail = "pass", "-"
        else:
            verdict = "timeout" if rc in TIMEOUT_RCS else "broken"
            detail = "no verdict" + (f" (check's exit status {rc})" if rc is not None
                                     else " (check never ended)")
        if "Ran:" in summary and name in summary["Ran:"]:
            if name in summary.get("Not run:", ()):
                verdict = "notrun"
            elif name in summary.get("Failures:", ()):
                verdict = "fail"
            elif "Failures:" in summary:
                verdict, detail = "pass", "-"
        out[name] = (Outcome(FSTESTS_RC[verdict], detail), logs)
    return out


def parse(output):
    """A Run from a guest's output (lines other than EXT-* are ignored)."""
    run = Run()
    fst = collections.defaultdict(list)
    fst_rc = {}
    for line in output.splitlines():
        if line.startswith("EXT-FST "):
            f = line.split(" ", 3)
            if len(f) >= 3:
                fst[(f[1], f[2])].append(f[3] if len(f) > 3 else "")
            continue
        if line.startswith("EXT-FST-END "):
            f = line.split()
            if len(f) == 4 and f[3].isdigit():
                fst_rc[(f[1], f[2])] = int(f[3])
            fst.setdefault((f[1], f[2]), [])
            continue
        f = line.split(" ", 6)
        if f[0] == "EXT-RES" and len(f) >= 6:
            suite, pas, fs, test, rc = f[1:6]
            try:
                rc = int(rc)
            except ValueError:
                continue
            run.results[(suite, fs, test)][pas] = Outcome(rc, f[6] if len(f) > 6 else "-")
            if pas not in run.passes:
                run.passes.append(pas)
        elif f[0] == "EXT-LOG" and len(f) >= 6:
            run.logs[(f[1], f[2], f[3], f[4])].append(" ".join(f[5:]))
        elif f[0] == "EXT-KNOBS" and len(f) >= 2:
            run.knobs[f[1]] = " ".join(f[2:])
        elif f[0] == "EXT-TIME" and len(f) == 5:
            try:
                run.seconds[(f[1], f[2], f[3])] = int(f[4])
            except ValueError:
                pass
    for (pas, fs), lines in fst.items():
        for test, (outcome, logs) in fstests_outcomes(lines, fst_rc.get((pas, fs))).items():
            run.results[("fstests", fs, test)][pas] = outcome
            run.logs[("fstests", pas, fs, test)] = logs
        if pas not in run.passes:
            run.passes.append(pas)
    return run


@dataclasses.dataclass
class Report:
    """base vs other: tests seen, classes counted in each pass, and what
    the reader must look at."""
    base: str
    other: str
    tests: int = 0
    counts: dict = dataclasses.field(default_factory=dict)  # pass -> {class: n}
    # (key, base Outcome, other Outcome): results that differ.
    differences: list = dataclasses.field(default_factory=list)
    # (key, Outcome): the same failure in both passes, the kernel's own.
    kernel_failures: list = dataclasses.field(default_factory=list)
    # (key, pass it is missing from): a test that ran in one pass only.
    missing: list = dataclasses.field(default_factory=list)

    @property
    def identical(self):
        return not self.differences and not self.missing


def compare(run, base="off", other="on"):
    """Each test's outcome in base against other.  An outcome is its exit
    status and its sequence of results (or vfstest's failure): a test that
    passes in both but reports another sequence of results is a
    difference too.  A failure identical in both is the kernel's, listed,
    never hidden among the passes."""
    rep = Report(base, other)
    rep.counts = {p: collections.Counter() for p in (base, other)}
    for key in sorted(run.results):
        per = run.results[key]
        rep.tests += 1
        for p in (base, other):
            if p in per:
                rep.counts[p][per[p].klass] += 1
            else:
                rep.missing.append((key, p))
        if base not in per or other not in per:
            continue
        a, b = per[base], per[other]
        if a != b:
            rep.differences.append((key, a, b))
        elif a.klass not in ("pass", "skip"):
            rep.kernel_failures.append((key, a))
    return rep


def _name(key):
    suite, fs, test = key
    return f"{suite} {test} on {fs}"


def format_report(rep, run, kernel, limit_logs=3):
    """The report as text lines: counts per pass, then every difference
    (with its messages in each pass), every test missing from a pass and
    every failure of the kernel's own."""
    out = [f"[{kernel}] {rep.tests} tests, {rep.base} vs {rep.other}: "
           + ("identical" if rep.identical else
              f"{len(rep.differences)} differ, {len(rep.missing)} missing from a pass")]
    for p in (rep.base, rep.other):
        c = rep.counts[p]
        out.append(f"[{kernel}]   {p:>4} (knobs on: {run.knobs.get(p, '?') or 'none'}): "
                   + ", ".join(f"{c[k]} {k}" for k in CLASSES if c[k]))
    for key, a, b in rep.differences:
        out.append(f"[{kernel}] DIFFERS: {_name(key)}: {rep.base} {a}; {rep.other} {b}")
        for p in (rep.base, rep.other):
            for line in run.logs.get((key[0], p, key[1], key[2]), [])[:limit_logs]:
                out.append(f"[{kernel}]   {p}: {line}")
    for key, p in rep.missing:
        out.append(f"[{kernel}] MISSING: {_name(key)}: no result with knobs {p}")
    for key, a in rep.kernel_failures:
        out.append(f"[{kernel}] kernel's own (the same with every knob off): {_name(key)}: {a}")
    return out
