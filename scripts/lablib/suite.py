"""The test suite: host checks and guest tests on each lab kernel.

Prints one KTAP-like line per test as it finishes and ends with the line
"N passed, N failed".
"""

import concurrent.futures
import dataclasses
import json
import os
import re
import shutil
import subprocess

from . import ab, build, deb, debian, guest, opts, rooms, style, userland, util, vm

GUEST_TESTS = ["t_sysfs", "t_load", "t_input", "t_readlink", "t_calls", "t_proc", "t_getname", "t_lookup_exec", "t_lsm", "t_cgroup", "t_close", "t_fsnotify", "t_evdiff", "t_kernfs",
               "t_kernfs_rcu", "t_readdir", "t_fault", "t_conflict", "t_livepatch", "t_backend", "t_bpf", "t_toggle",
               "t_unload", "t_stress", "t_ab"]
# Groups whose subject is what a replacement answers, the same code
# whichever backend carries it, and whose storms are long (t_input's
# sysfs writes, parsed before any hook): they run on every backend where
# the profile's VFSFAST_ALL_GROUPS is 1, on the kernel's first only where
# it is 0 (ci).  Every other group runs on every backend: the hook's own
# (load, unload, toggles under stress, conflicts, livepatch, BPF, faults)
# and the differentials of the other optimizations (t_readlink, t_calls,
# t_proc, t_getname, t_lookup_exec, t_lsm, t_close, t_fsnotify); the
# kernfs and proc_cgroup answers are checked there under the toggle storm
# (the checker's sysfs paths, abloop's /proc/self/cgroup reads).
FIRST_BACKEND_GROUPS = ["t_input", "t_cgroup", "t_evdiff", "t_kernfs", "t_kernfs_rcu"]
# Seconds of each Debian kernel's main guest in the ci profile, from the
# last CI run measured on a quiet machine (Documentation/lab.md, "CI
# time"): only the order in which the suite starts kernels, longest first.
# 6.12 is the longest for t_livepatch's transitions under TCG.  6.1-cloud's
# is its first ci-profile run's, on a busy machine: it runs every group 6.1
# runs, so it must not be left to start last and alone either.
GUEST_SECONDS = {"7.2": 1234, "6.12": 1049, "6.1-cloud": 879, "6.1": 799, "5.10": 758}
# Groups that leave the kernel changed for good (a module that can never be
# unloaded, an oops): each runs once, with the kernel's best backend, in a
# guest of its own.
SOLO_TESTS = ["t_broken", "t_pac"]
# Groups that test what only a kernel built with an option has, skipped
# with a note elsewhere: {group: (option, what a kernel without it lacks)}.
CONFIG_TESTS = {"t_pac": ("CONFIG_ARM64_PTR_AUTH_KERNEL",
                          "no pointer authentication of return addresses (x86 has none)"),
                # BPF trampolines reach a function with an ftrace site
                # through ftrace's direct calls: without them (arm64 before
                # 6.4) fentry and BPF LSM programs fail with ENOTSUPP.
                "t_bpf": ("CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS",
                          "no BPF trampoline can attach to a kernel function")}
# Groups in a guest of their own booted with extra kernel arguments:
# t_slabdebug's slab debugging of names_cache, which getname must see.
CMDLINE_TESTS = {"t_slabdebug": "slub_debug=P,names_cache"}
# Groups with the release's own userland (userland.py's fleet image:
# node_exporter, systemd), in a guest of their own with the kernel's
# default backend; what they send back is checked on the host
# (fleet_checks).
FLEET_TESTS = ["t_fleet"]
# The metrics units as vfsfast-tools installs them (debian/rules).
FLEET_UNITS = {"vfsfast-metrics.service": "debian/vfsfast-tools.vfsfast-metrics.service",
               "vfsfast-metrics.timer": "debian/vfsfast-tools.vfsfast-metrics.timer"}
STATUS_SCHEMA = "Documentation/vfsfast-status.schema.json"


class Lines:
    """One kernel's results, kept until they can be printed in order."""

    def __init__(self):
        self.items = []

    def record(self, ok, name, why=""):
        self.items.append(("result", ok, name, why))

    def note(self, text):
        self.items.append(("note", text))

    def replay(self, tally):
        for item in self.items:
            if item[0] == "note":
                print(f"# {item[1]}")
            else:
                tally.record(*item[1:])


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = 0
        self.failures = []

    def record(self, ok, name, why=""):
        n = self.passed + self.failed + 1
        # The diagnostic carries the run's values; one line, so that the
        # output stays one line per test.
        why = " | ".join(l.strip() for l in str(why or "").splitlines() if l.strip())
        diag = f" # {why}" if why else ""
        if ok:
            self.passed += 1
            print(f"ok {n} - {name}{diag}", flush=True)
        else:
            self.failed += 1
            self.failures.append(name)
            print(f"not ok {n} - {name}{diag}", flush=True)

    def summary(self):
        for name in self.failures:
            print(f"# FAILED: {name}")
        print(f"{self.passed} passed, {self.failed} failed", flush=True)


def warnings_in(log):
    return [l for l in log.splitlines() if re.search(r"\bwarning:", l)]


def _last_words(res, n=6):
    """Where a guest that timed out was: its last output line and the last
    lines of its console (a CI log has nothing else of it; init's
    watchdog, which fired first, said where its tasks waited)."""
    out = [l for l in res.output.splitlines()
           if l.strip() and not l.startswith("# watchdog:")][-1:]
    con = [l.strip() for l in res.console.splitlines() if l.strip()][-n:]
    return f"last output: {' | '.join(out) or 'none'}; console: {' | '.join(con) or 'none'}"


# A console line's timestamp, and a stack frame as the kernel prints it:
# " func+0x1a/0x40 [mod]".
_STAMP = r"^\s*(?:\[[\s\d.]+\]\s*)?"
_FRAME = re.compile(_STAMP + r"(?:\? )?([A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+")


def console_digest(console, reports=6, frames=14):
    """Each report on a failed console in one line: its header and the
    functions of its call trace, innermost first.  A CI log keeps only
    this of a guest; a hung-task panic prints every blocked task before
    it panics, and which locks they wait on is the whole story."""
    out, cur = [], None
    for line in console.splitlines():
        m = _FRAME.match(line)
        if cur is not None and m:
            if len(cur) < frames + 1:
                cur.append(m.group(1))
            continue
        if vm.REPORT_START.search(line):
            if len(out) >= reports:
                break
            cur = [re.sub(_STAMP, "", line).strip()]
            out.append(cur)
    return " || ".join(f"{c[0]}: {' < '.join(c[1:]) or 'no trace'}" for c in out)


def record_guest(tally, kernel, res, what):
    """Fold a guest run's output and console into the tally."""
    if res.early_failure:
        tally.note(f"[{kernel}] {what}: the first boot died before user space, "
                   f"with nothing of vfsfast loaded, and was booted again: "
                   f"{res.early_failure}")
    for line in res.output.splitlines():
        m = re.match(r"(not ok|ok) - (.*?)(?: # (.*))?$", line)
        if m:
            tally.record(m.group(1) == "ok", f"[{kernel}] {m.group(2)}", m.group(3) or "")
        elif line.startswith("# "):
            tally.note(f"[{kernel}] {line[2:]}")
        elif line.startswith("init:"):
            tally.record(False, f"[{kernel}] guest setup", line)
    tally.record(res.completed and not res.timed_out, f"[{kernel}] {what}: guest ran to completion",
                 f"timed out; {_last_words(res)}" if res.timed_out else
                 f"no completion marker (crash or panic?); {_last_words(res)}"
                 if not res.completed else "")
    tally.record(not res.bad_lines, f"[{kernel}] {what}: console free of warnings",
                 "; ".join(res.bad_lines[:3]) +
                 (f"; reports: {console_digest(res.console)}" if res.bad_lines else ""))


# The smoke group with the module DKMS built from the .deb, and the
# srcversion the guest sees, which run_job takes from that module.
DEB_SMOKE_JOB = """. /lab/t_load.sh
insmod /lab/vfsfast.ko enable=none
v=$(cat /sys/module/vfsfast/srcversion 2>&1)
t_eq "the package's module is the one loaded (srcversion)" "$VFSFAST_SRCVERSION" "$v"
rmmod vfsfast
"""


class Prefixed:
    """A kernel's tally whose names say which guest run they come from."""

    def __init__(self, tally, kernel, prefix):
        self.tally, self.tag, self.prefix = tally, f"[{kernel}] ", prefix

    def _name(self, name):
        return name.replace(self.tag, self.tag + self.prefix, 1)

    def record(self, ok, name, why=""):
        self.tally.record(ok, self._name(name), why)

    def note(self, text):
        self.tally.note(self._name(text))


def deb_smoke(tally, kernel, ko, env):
    """Boot the kernel with the module built from the package: t_load."""
    res = guest.run_job(kernel, DEB_SMOKE_JOB, ko, env=env, timeout=600,
                        keep_dir=os.path.join(kernel.log_dir, "deb"))
    util.log(f"{kernel}: package smoke guest finished in {res.seconds:.0f}s")
    record_guest(Prefixed(tally, kernel, "deb: "), kernel, res, "t_load with the package's module")


def example_checks(tally, kernel):
    """Adding an optimization is adding a file: tests/build/opt_example.c
    in a copy of module/, nothing else edited, must be built in and
    listed; with a replacement whose prototype is not its target's, the
    build must fail."""
    ok, log, info, syms = build.make_example(kernel)
    w = warnings_in(log)
    missing = [what for what, found in (
        ("modinfo line", "vfsfast_opt_example:" in info and
         "functions=vfs_fsync upstream=none opt-in=yes" in info),
        ("enable= lists it", re.search(r"parm:\s+enable:.*\bexample\b", info)),
        ("tramp.S stubs", re.search(r" vfsfast_tramp_vfs_fsync$", syms, re.M) and
         re.search(r" vfsfast_stock_vfs_fsync$", syms, re.M)),
        ("registered", re.search(r" vfsfast_opt_example$", syms, re.M))) if not found]
    tally.record(ok and not w and not missing,
                 f"[{kernel}] a new optimization is one file: module/opt_example.c "
                 "alone is built in, listed in modinfo and enable=, with its stubs",
                 log[-300:] if not ok else "; ".join(w[:3] + missing))
    ok, log, _, _ = build.make_example(kernel, wrong_proto=True)
    tally.record(not ok and "BUILD_BUG_ON" in log or not ok and "negative width" in log,
                 f"[{kernel}] a replacement whose prototype is not its target's "
                 "does not build", "it built" if ok else "")


class Expectations:
    """What the suite expects of a kernel, read from its base kernel's
    configuration and headers (build.expected_backends(), opts.OPTS),
    independently of the module's compile probes, so that the module's
    answers are tested rather than repeated."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.backends = build.expected_backends(kernel)

    def check_lines(self, found):
        """`vfsfast check`'s lines for the backends and each optimization
        (modinfo's functions= and upstream= tags, opts.Opt.check_line())."""
        return ([f"backends: {' '.join(self.backends)}"] +
                opts.check_lines(self.kernel, found))


def build_checks(tally, kernel):
    """The W=1 and sparse build, its tail calls, and the builds of a
    throwaway optimization.  Returns whether the W=1 build (which also
    builds the test modules) succeeded."""
    ok, log = build.make_w1(kernel, "C=2")
    w = warnings_in(log)
    tally.record(ok and not w, f"[{kernel}] W=1 build, sparse (C=2): no warnings",
                 "; ".join(w[:3]) if w else ("" if ok else log[-300:]))
    bad = build.tail_call_problems(kernel) if ok else ["no build"]
    tally.record(not bad, f"[{kernel}] the paths that may sleep in stock code reach it by "
                 "tail calls (objdump): nothing of vfsfast on the stack there",
                 "; ".join(bad[:4]))
    bad = build.stock_call_problems(kernel) if ok else ["no build"]
    tally.record(not bad, f"[{kernel}] every call of a stock function from a replacement is a "
                 "tail call or declared bounded (objdump)",
                 "; ".join(bad[:4]))
    bad = build.global_atomic_problems(kernel) if ok else ["no build"]
    tally.record(not bad, f"[{kernel}] no locked operation on a shared line, no module "
                 "reference, per call in any replacement (objdump)",
                 "; ".join(bad[:4]))
    example_checks(tally, kernel)
    return ok


# Headers whose build fails, as a new kernel vfsfast does not support would.
BROKEN_HEADERS = "/tmp/broken-headers"
BROKEN_HEADERS_MAKEFILE = "modules:\n\t@echo 'error: this kernel breaks vfsfast'; false\n"


def broken_headers(kernel):
    """Write BROKEN_HEADERS (a Makefile that fails) into the kernel's
    chroot; returns its path there."""
    d = os.path.join(kernel.chroot_dir, BROKEN_HEADERS.lstrip("/"))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write(BROKEN_HEADERS_MAKEFILE)
    return BROKEN_HEADERS


def check_command_checks(tally, kernel, expect):
    """`vfsfast check` on the kernel's headers, on none, on broken ones."""
    kver = kernel.kver
    # Debian's System.map is a placeholder: the check must say so, not
    # guess.  The legacy kernel's, from its own build, is real: the check
    # must find the function there.
    smap = build.system_map(kernel)
    found = "present" if build.system_map_has_symbols(kernel) else "unchecked"
    rc, out = build.vfsfast_check(kernel, f"--kernel {kver}" +
                                  (f" --system-map {smap}" if smap else ""))
    missing = [w for w in expect.check_lines(found) if w not in out.splitlines()]
    tally.record(rc == 0 and not missing,
                 f"[{kernel}] vfsfast check --kernel {kver}: builds, backends and "
                 "optimizations as the kernel's config and headers say",
                 f"rc={rc}; missing {missing}; got: " + out.replace("\n", " | ")[-300:])
    rc, out = build.vfsfast_check(kernel, "--kernel no-such-kernel")
    tally.record(rc == 2 and "no kernel headers for no-such-kernel" in out,
                 f"[{kernel}] vfsfast check: a kernel without headers is exit 2, named",
                 f"rc={rc}: {out[-200:]}")
    # Exit 1, said plainly, with the build log's end.
    rc, out = build.vfsfast_check(kernel, f"--kernel 99.0-new --kdir {broken_headers(kernel)}")
    tally.record(rc == 1 and "does NOT build for 99.0-new" in out and
                 "error: this kernel breaks vfsfast" in out,
                 f"[{kernel}] vfsfast check: headers that fail to build are exit 1, "
                 "with the reason", f"rc={rc}: {out[-300:]}")


def install_checks(tally, kernel):
    """`make install` and `make dkms-install`; returns the DKMS-installed
    module (host path) the guests load, or None."""
    inst, log = build.make_install(kernel)
    tally.record(inst, f"[{kernel}] make install puts vfsfast.ko in updates/, vfsfast and vfsfast-ab in "
                 "/usr/local/sbin, vfsfast-ab's statistics and C workloads in /usr/local",
                 "" if inst else log[-300:].replace("\n", " | "))
    ko, log = build.dkms_install(kernel)
    tally.record(ko is not None, f"[{kernel}] make dkms-install (dkms add/build/install)",
                 "" if ko else log[-400:].replace("\n", " | "))
    with open(os.path.join(kernel.log_dir, "dkms.log"), "w") as f:
        f.write(log)
    return ko


def generic_twin(kernel, names):
    """The name of a cloud kernel's generic twin (6.1 for 6.1-cloud) when
    names has it, else None."""
    suffix = debian.FLAVOURS.get(kernel.flavour)
    if suffix and kernel.name.endswith(suffix) and kernel.name[:-len(suffix)] in names:
        return kernel.name[:-len(suffix)]
    return None


# The groups a kernel of another architecture runs where the profile
# says so, beside the amd64 kernel of its ABI (CI's arm64 group): what is
# the architecture's own (the hook engine's trampolines and pointer
# authentication, quiesce's frame-record walk and its forced
# interleavings, the word-at-a-time and register-argument paths of the
# differentials, unload under load); the amd64 twin runs every other
# group on the same source, and `make check-arm64` runs them all.
CROSS_TWIN_GROUPS = ["t_load", "t_sysfs", "t_kernfs_rcu", "t_getname", "t_readlink",
                     "t_unload", "t_pac"]


def amd64_twin(kernel, names):
    """The name of a kernel of another architecture's amd64 kernel of the
    same ABI (6.12 for 6.12-arm64) when names has it, else None."""
    base = debian.CROSS_KERNELS.get(kernel.name, {}).get("base")
    return base if base in names else None


def package_checks(tally, kernel, ko, env, names=()):
    """The .debs as a fleet installs them, in an overlay of the chroot,
    then a guest with the module DKMS built from them.  Where the profile
    says, a cloud kernel whose generic twin is among names leaves the steps
    after its own module's build to the twin: they differ only by the
    flavour of the second headers."""
    lab_srcversion = build.modinfo(ko, "srcversion") if ko else None
    twin = generic_twin(kernel, names) if env.get("VFSFAST_TWIN_PACKAGES") == "0" else None
    deb_ko = deb.package_tests(tally, kernel, lab_srcversion, twin)
    if deb_ko:
        deb_smoke(tally, kernel, deb_ko, env)


def suite_job(tests, sig_enforce):
    """The main guest's job: every test group once per backend the kernel
    offers ($VFSFAST_BACKENDS_EXPECT, each forced), timed, those of
    FIRST_BACKEND_GROUPS on the first only where the profile says; then
    sig_enforce.sh, last: enforcement can be switched on at run time but
    never off."""
    job = ". /lab/lib.sh\nfor VFSFAST_BACKEND in $VFSFAST_BACKENDS_EXPECT; do\n" + "".join(
        ("  per_backend VFSFAST_ALL_GROUPS && " if t in FIRST_BACKEND_GROUPS else "  ") +
        f'{{ t0=$(date +%s); . /lab/{t}.sh; note "$VFSFAST_BACKEND: {t}: $(($(date +%s) - t0))s"; }}\n'
        for t in tests) + "done\n"
    if sig_enforce:
        job += "VFSFAST_BACKEND=\n. /lab/sig_enforce.sh\n"
    return job


@dataclasses.dataclass
class GuestRun:
    """One guest boot of the suite: the job it runs and how.

    what: the name its results carry ("[K] what: guest ran to completion");
    keep: the subdirectory of the kernel's log directory its console goes
    to ("" for the directory itself); with_files: the disk, the test
    modules and stress-ng come with it (the icount guest has none);
    label: what the progress log calls it; append: kernel arguments it
    boots with."""
    what: str
    job: str
    timeout: int
    keep: str = ""
    smp: int = 2
    icount: bool = False
    with_files: bool = True
    label: str = "guest"
    append: str = ""


def guest_runs(tests, only, backends, env, solo=SOLO_TESTS):
    """The suite's guest boots for the selected test groups, in order;
    solo: the SOLO_TESTS the kernel can run."""
    # 20 minutes per backend, and the storm's own time on top: a flip
    # under load takes 0.1-0.5 s in TCG (0.3 s for 5.10's five knobs on a
    # shared host), so the full storm alone can outlast the rest.
    storm = int(env.get("VFSFAST_TOGGLES", "0")) if "t_toggle" in tests else 0
    runs = []
    if tests or not only or "sig_enforce" in only:
        runs.append(GuestRun("tests", suite_job(tests, not only or "sig_enforce" in only),
                             1200 * len(backends) + storm // 2))
    # Groups that leave the kernel changed for good: the best backend, a
    # guest of their own each.
    runs += [GuestRun(t, f"VFSFAST_BACKEND={backends[0]}\n. /lab/{t}.sh\n", 600, keep=t,
                      label=f"{t} guest")
             for t in solo if not only or t in only]
    runs += [GuestRun(t, f"VFSFAST_BACKEND={backends[0]}\n. /lab/{t}.sh\n", 300, keep=t,
                      label=f"{t} guest", append=args)
             for t, args in CMDLINE_TESTS.items() if not only or t in only]
    if "t_ab" in tests:
        # vfsfast-ab's verdicts need icount: TCG wall time is too noisy.
        runs.append(GuestRun("vfsfast-ab icount", "VFSFAST_AB_ICOUNT=1\n. /lab/t_ab.sh\n",
                             900, keep="ab-icount", smp=1, icount=True, with_files=False,
                             label="vfsfast-ab icount guest"))
    return runs


def guest_checks(tally, kernel, ko, disk, env, only, backends, test_modules):
    """Boot the kernel's guests (guest_runs()) and record their results.
    test_modules: the W=1 build made tests/modules' modules."""
    tests = [t for t in GUEST_TESTS if not only or t in only]
    lacking = [t for t, (opt, _) in CONFIG_TESTS.items()
               if build.config_option(kernel.base, opt) != "y"]
    for t in lacking:
        if not only or t in only:
            opt, why = CONFIG_TESTS[t]
            tally.note(f"[{kernel}] {t}: not run: {why}: no {opt}")
    tests = [t for t in tests if t not in lacking]
    solo = [t for t in SOLO_TESTS if t not in lacking]
    if tests:
        util.log(f"{kernel}: booting guest for {len(tests)} test groups x "
                 f"backends {' '.join(backends)}")
    extra = build.test_modules(kernel) if test_modules else {}
    # Only where a group runs it: a cross kernel's stress-ng is some 100
    # packages of its architecture to fetch (CI's arm64 group has none).
    if {"t_stress", "t_toggle"} & set(tests):
        extra.update(debian.chroot_programs(kernel, ["/usr/bin/stress-ng"]))
    if "t_lsm" in tests:
        extra.update(debian.package_programs(kernel, "apparmor", ["/usr/sbin/apparmor_parser"]))
    for run in guest_runs(tests, only, backends, env, solo):
        files = dict(disk=disk, extra_files=extra) if run.with_files else {}
        res = guest.run_job(kernel, run.job, ko, smp=run.smp, icount=run.icount, env=env,
                            keep_dir=os.path.join(kernel.log_dir, run.keep),
                            timeout=run.timeout, append=run.append, **files)
        util.log(f"{kernel}: {run.label} finished in {res.seconds:.0f}s")
        record_guest(tally, kernel, res, run.what)
    for t in FLEET_TESTS:
        if not only or t in only:
            fleet_checks(tally, kernel, ko, t)


def promtool_check(text):
    """(ok, what promtool check metrics said) of a metrics file's text."""
    if not shutil.which("promtool"):
        return False, "promtool not found (Debian's prometheus; scripts/lab-packages lists it)"
    p = subprocess.run(["promtool", "check", "metrics"], input=text, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return p.returncode == 0, p.stdout.strip()


# Debian's python3 with python3-jsonschema (scripts/lab-packages), whatever
# python3 runs the lab.
SCHEMA_CHECK = """import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(sys.stdin)))
for e in errors:
    print("/".join(map(str, e.absolute_path)) or "(top)", e.message)
sys.exit(1 if errors else 0)
"""


def schema_check(text):
    """(ok, why) of `vfsfast status --json`'s text against its schema."""
    p = subprocess.run(["/usr/bin/python3", "-c", SCHEMA_CHECK,
                        os.path.join(util.repo_dir(), STATUS_SCHEMA)],
                       input=text, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode == 0, "; ".join(p.stdout.strip().splitlines()[-3:])


def fleet_checks(tally, kernel, ko, test):
    """The fleet group's guest (tests/guest/<test>.sh) with the release's
    fleet image, then on the host: promtool check metrics of the metrics
    file as the service wrote it, module loaded and not, and the JSON of
    `vfsfast status --json` against its schema, naming every
    optimization the lab knows."""
    image = userland.of(kernel, "fleet").ensure(kernel)
    files = {"/lab/fleet.img": image}
    files.update({f"/lab/fleet/{n}": os.path.join(util.repo_dir(), p)
                  for n, p in FLEET_UNITS.items()})
    util.log(f"{kernel}: booting the {test} guest ({kernel.release}'s userland)")
    res = guest.run_job(kernel, f"VFSFAST_BACKEND=\n. /lab/{test}.sh\n", ko, smp=2,
                        env={"VFSFAST_FILE_MARK": ab.FILE_MARK, "VFSFAST_END_MARK": ab.END_MARK},
                        keep_dir=os.path.join(kernel.log_dir, test), timeout=kernel.timeout(600),
                        extra_files=files, memory_mb=max(kernel.memory_mb, 1536))
    util.log(f"{kernel}: {test} guest finished in {res.seconds:.0f}s")
    report, sent, _ = ab.split_output(res.output)
    record_guest(tally, kernel, _with_output(res, report), test)
    for name, what in (("loaded.prom", "module loaded"), ("unloaded.prom", "module unloaded")):
        ok, why = promtool_check(sent[name]) if name in sent else (False, "not sent")
        tally.record(ok, f"[{kernel}] {test}: promtool check metrics accepts the service's "
                     f"file, {what}", why)
    text = sent.get("status.json")
    ok, why = schema_check(text) if text else (False, "not sent")
    names = []
    if ok:
        doc = json.loads(text)
        names = sorted(o["name"] for o in doc["optimizations"])
        want = sorted(o.name for o in opts.OPTS)
        ok = doc["loaded"] and names == want
        why = "" if ok else f"loaded {doc['loaded']}; names {names} vs {want}"
    tally.record(ok, f"[{kernel}] {test}: vfsfast status --json matches {STATUS_SCHEMA}, "
                 "loaded, one entry per optimization", why)


def _with_output(res, output):
    """A guest result with its output replaced (the file blocks taken out)."""
    copy = object.__new__(type(res))
    copy.__dict__.update(res.__dict__, output=output)
    return copy


def cross_install_checks(tally, kernel):
    """A kernel of another architecture: what is installed on amd64 is
    built there by the user's machine, which the lab's chroots cannot be
    for it yet; the module its guests load is the W=1 cross build."""
    tally.note(f"[{kernel}] vfsfast check, make install, make dkms-install and the "
               f"packages: not run: they build on the machine they install on, an "
               f"{kernel.arch} one (Documentation/arm64-plan.md, Next)")
    ko, log = build.guest_module(kernel)
    tally.record(ko is not None, f"[{kernel}] the module its guests load: the W=1 cross "
                 f"build ({kernel.make_vars})", "" if ko else log[-400:].replace("\n", " | "))
    return ko


def run_kernel(tally, kernel, disk, env, only=None, names=()):
    """Everything the suite checks on one kernel (a kernel.Kernel), in
    order: builds, `vfsfast check`, installs, the packages, the guests.
    names: the kernels of the run."""
    kernel.ensure()
    twin = amd64_twin(kernel, names) if env.get("VFSFAST_CROSS_GROUPS") == "0" else None
    if twin and not only:
        only = CROSS_TWIN_GROUPS
        tally.note(f"[{kernel}] groups other than {' '.join(only)}: not run beside {twin} "
                   f"in this profile (make check-arm64 runs them all)")
    w1_ok = build_checks(tally, kernel)
    expect = Expectations(kernel)
    if kernel.cross:
        ko = cross_install_checks(tally, kernel)
    else:
        check_command_checks(tally, kernel, expect)
        ko = install_checks(tally, kernel)
        if not only or "deb" in only:
            package_checks(tally, kernel, ko, env, names)
    if not ko:
        return
    guest_checks(tally, kernel, ko, disk, env, only, expect.backends, w1_ok)


def word_strlen_test():
    """The readlink fast path's strlen() in user space, next to a guard page."""
    src = os.path.join(util.repo_dir(), "tests/host/word_strlen_test.c")
    exe = os.path.join(util.cache_dir(), "word_strlen_test")
    p = subprocess.run(["gcc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", exe, src],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode:
        return False, p.stdout[-300:]
    p = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace")
    last = (p.stdout.strip().splitlines() or ["no output (crashed?)"])[-1]
    m = re.match(r"(\d+) passed, (\d+) failed$", last)
    ok = p.returncode == 0 and m is not None and int(m.group(1)) > 0 and m.group(2) == "0"
    return ok, last if ok else f"rc={p.returncode}: {p.stdout[-300:]}"


def host_sh_test(name):
    """A tests/host/ test (*.sh by sh, *.py by python3) ending in "N passed,
    N failed"."""
    interp = "python3" if name.endswith(".py") else "sh"
    p = subprocess.run([interp, os.path.join(util.repo_dir(), "tests/host", name)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace")
    last = (p.stdout.strip().splitlines() or ["no output"])[-1]
    m = re.match(r"(\d+) passed, (\d+) failed$", last)
    ok = p.returncode == 0 and m is not None and int(m.group(1)) > 0 and m.group(2) == "0"
    bad = [l for l in p.stdout.splitlines() if l.startswith("not ok")]
    return ok, last if ok else f"rc={p.returncode}: {'; '.join(bad[:3]) or p.stdout[-300:]}"


def lab_setup_check():
    """Run by a user who is not root with a package missing, the lab prints
    the one sudo apt-get line naming it and exits 2."""
    import tempfile
    tmp = tempfile.mkdtemp(prefix="vfsfast-labhost-")
    try:
        repo = util.repo_dir()
        os.makedirs(os.path.join(tmp, "scripts"))
        shutil.copy2(os.path.join(repo, "scripts/vfsfast-lab"), os.path.join(tmp, "scripts"))
        shutil.copytree(os.path.join(repo, "scripts/lablib"), os.path.join(tmp, "scripts/lablib"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        with open(os.path.join(tmp, "scripts/lab-packages"), "w") as f:
            f.write("# test\ncpio\nvfsfast-no-such-package\n")
        subprocess.run(["chmod", "-R", "a+rX", tmp])
        p = subprocess.run(["su", "nobody", "-s", "/bin/sh", "-c",
                            f"{tmp}/scripts/vfsfast-lab setup --kernels 5.10"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        ok = (p.returncode == 2 and
              "  sudo apt-get install vfsfast-no-such-package\n" in p.stdout and
              "cpio" not in p.stdout.split("sudo apt-get install", 1)[-1])
        return ok, f"rc={p.returncode}: {p.stdout[-300:]}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# The user-space tests of tests/host/ that end in "N passed, N failed",
# and what each proves.
HOST_TESTS = [
    ("ab_stats_test.sh", "vfsfast-ab statistics on synthetic data: no effect, known effect, "
     "drift, icount equal/deterministic, exact and normal Wilcoxon"),
    ("ab_script_test.sh", "vfsfast-ab under dash and busybox sh: bad input exits 2 and "
     "changes nothing, an enable without effect exits 1 with knobs put back"),
    ("evdiff_test.sh", "evdiff: command line; the same seed twice is byte-identical, with "
     "events of every kind the host allows; another seed or one event left out differs"),
    ("bench_recovery_test.py", "bench: the share of upstream's saving recovered on legacy, "
     "on synthetic rounds: medians, the 0.5% floor, savings within the rounds' spread, "
     "losses kept negative; compare's side-by-side rows of two tables"),
    ("real_table_test.py", "vfsfast-lab real's table on synthetic summaries: losses stay "
     "losses, with their digits; a * across zero or without A/A agreement is no gain; "
     "--doc replaces a kernel's block in place; 'named by --knobs' only when it was"),
    ("lablib_imports_test.py", "the lab's modules import without a cycle, each on its own"),
    ("rooms_test.py", "the rooms check on synthetic module trees: calls down pass; a call up, "
     "a cycle (hook.c and yield.c's), a file in no room, a room naming no file fail; "
     "comments, strings and declarations are no calls, a function's address handed on is; "
     "the tree's own module/ passes"),
    ("vm_cmdline_test.py", "the guests' kernel command line: wall-clock guests boot with "
     "tsc=nowatchdog, icount guests without it; warnings still panic"),
    ("console_digest_test.py", "a failed guest console's digest for the CI log: each "
     "report's header and the functions of its call trace, every blocked task of a "
     "hung-task panic"),
    ("console_expected_test.py", "the console scan's expected reports: a KASAN "
     "use-after-free between vfsfast_nameuaf's two lines, t_pac's pointer authentication "
     "oops between its own; any other report there, every report outside them and one "
     "after a begin line never ended still fail the guest"),
    ("vm_cpu_model_test.py", "the icount guests' CPU model (the cost model): offered no "
     "fast-string feature qemu knows (ERMS, FSRM), else refused; the old model only by "
     "name; wall-time guests keep -cpu max"),
    ("debian_pin_test.py", "the pinned stock kernel: 6.1 is bookworm-security's, named by "
     "ABI and version; its chroot lists the suite and installs those headers; the others "
     "follow their release"),
    ("debian_flavour_test.py", "Debian's cloud flavour: each stock kernel's N-cloud shares its "
     "release's chroot and compiler; the chroot installs every flavour's headers (a pin's "
     "at its ABI and version); each kernel finds exactly its own flavour's headers tree and "
     "its ABI's -common sources"),
    ("docs_test.py", "README.md and Documentation/ match the tree: links and #anchors "
     "resolve; make targets, vfsfast-lab subcommands and options, and paths written in "
     "code exist; README under 260 lines, its first 100 holding Quick start, the lab's two "
     "commands and a gains row with its command per optimization"),
    ("evdiff_image_test.py", "the guests' evdiff image, asked for by two kernels' threads "
     "at once with their gzips forced to overlap: neither fails, both get the same image"),
    ("ktap_diff_test.sh", "ktap-diff: two runs that differ only in values and notes are "
     "the same; changed results, names gone or added are shown"),
    ("userland_listed_test.py", "the userland images' file lists in a chroot with a foreign "
     "architecture: no arch-qualified name in the closure; a package of both architectures "
     "listed as the chroot's own, nothing of the foreign one, no ambiguous name to dpkg -L"),
    ("extresults_test.py", "vfsfast-lab external's comparison on synthetic guest output: a "
     "result that changes with the knobs on is a difference, quoted; a failure the same "
     "with them off is the kernel's, listed; a test missing from a pass is reported; "
     "LTP's exit-status classes; the runtest lines kept are those built"),
    ("disasm_test.py", "the objdump checks' reading of x86 and arm64 disassembly: tail calls "
     "are jumps, calls calls; an atomic on a global named by its relocation (x86) or by the "
     "adrp+add of its base register (arm64); per-CPU atomics and registers met again at a "
     "branch's landing name none"),
    ("fleet_test.sh", "vfsfast status and metrics under dash and busybox sh on a stand-in "
     "sysfs: the table, the JSON against its schema, promtool-clean metrics with the tree's "
     "values and load time, a plain user naming the 0400 counters it cannot read, "
     "--output's rename and its failure, the module not loaded"),
    ("deb_arches_test.py", "the packages' architectures without a build: vfsfast-tools for "
     "each of the lab's, clang:native, rules' CC reaching the workloads' compile and "
     "LATENCY=no leaving ablat out, BUILD_EXCLUSIVE_ARCH taking each uname -m and no other, "
     "make deb-arm64, and the ELF check telling this machine's programs from arm64's"),
    ("ab_syscalls_test.py", "vfsfast-ab --latency's syscall names: each table entry (x86-64's, "
     "arm64's generic one) has its number in the uapi headers, and openat's number on each "
     "machine is reported as openat"),
]


def host_checks(tally):
    tally.record(build.version() == build.header_version(),
                 "dkms.conf PACKAGE_VERSION matches VFSFAST_VERSION",
                 f"{build.version()} vs {build.header_version()}")
    cl = deb.changelog_version()
    tally.record(deb.upstream_version(cl) == build.version(),
                 "debian/changelog's upstream version is dkms.conf's PACKAGE_VERSION",
                 f"{cl!r} vs {build.version()}")
    ok, summary = word_strlen_test()
    tally.record(ok, "word_strlen.h equals strlen() at every alignment and length "
                 "(tests/host/word_strlen_test.c)", summary)
    for test, name in HOST_TESTS:
        ok, summary = host_sh_test(test)
        tally.record(ok, f"{name} (tests/host/{test})", summary)
    ok, why = lab_setup_check()
    tally.record(ok, "vfsfast-lab run by a user who is not root, a package missing: "
                 "one sudo apt-get install line naming only it, exit 2", "" if ok else why)
    ok, problems, n = style.style()
    tally.record(ok, "checkpatch.pl --no-tree clean on every module source",
                 "; ".join(problems[:3]) if problems else f"{n} files")
    ok, problems, summary = rooms.rooms_check()
    tally.record(ok, "module/'s rooms call only the rooms below them, as module/engine.h "
                 "lists them: no call up, no cycle (scripts/lablib/rooms.py)",
                 "; ".join(problems[:3]) if problems else summary)


def _set_up(kernel):
    """Whether the kernel, and the stock kernel a debug build is judged
    by, could be set up."""
    try:
        for k in dict.fromkeys((kernel.base, kernel)):
            k.ensure()
    except SystemExit:
        return False
    return True


def _run_one(kernel, disk, env, only, names):
    lines = Lines()
    try:
        run_kernel(lines, kernel, disk, env, only, names)
    except SystemExit as e:  # util.die() inside a worker
        lines.record(False, f"[{kernel}] lab setup", f"lab error ({e.code})")
    return lines


def main(kernels, env, jobs=None, only=None):
    tally = Tally()
    print("TAP version 13")
    host_checks(tally)
    disk = guest.ext4_image()
    # Each round-robin TCG guest uses one host core: run that many kernels
    # at once.  Results are printed kernel by kernel, in the order given.
    jobs = jobs or max(1, min(len(kernels), os.cpu_count() or 1))
    # The order below reads each kernel's configuration and headers, which
    # a fresh machine has yet to fetch: set every kernel up first, as many
    # at once as there are jobs.  A kernel that cannot be set up fails
    # again, and is recorded, in run_kernel().
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        ready = {k: pool.submit(_set_up, k) for k in kernels}
    ready = {k: f.result() for k, f in ready.items()}
    # The packages are built once, in a release chroot set up above,
    # beside the kernels' own builds (the package build is mostly one CPU
    # for minutes): a kernel's package tests wait for them
    # (deb.suite_debs() holds its lock while it builds).  Their results
    # come first, as before.
    debs_lines, debs_pool, debs = Lines(), None, None
    if any(not k.built and not k.cross for k in kernels) and (not only or "deb" in only):
        debs_pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
        debs = debs_pool.submit(deb.suite_debs, debs_lines)
    # Longest first, so that the slowest kernel never starts last and
    # alone: the wall time is then close to the sum of the work divided by
    # the jobs.  The Debian kernels' main guests as CI last measured them
    # (GUEST_SECONDS) come first, longest first; any other kernel after
    # them, by its work: its backends (every group runs on each) and the
    # optimizations built for it (each adds its stress and churn).
    order = sorted(kernels, key=lambda k: (-GUEST_SECONDS.get(k.name, 0),
                                           -len(build.expected_backends(k)),
                                           -sum(o.built(k) for o in opts.OPTS))
                   if ready[k] else (0, 0, 0))
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        names = {k.name for k in kernels}
        futures = {k: pool.submit(_run_one, k, disk, env, only, names) for k in order}
        if debs:
            debs.result()
            debs_pool.shutdown()
            debs_lines.replay(tally)
        for k in kernels:
            futures[k].result().replay(tally)
    tally.summary()
    return 0 if tally.failed == 0 else 1
