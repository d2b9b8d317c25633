"""Booting a stock kernel under qemu (TCG) with a busybox initramfs.

The guest's PID 1 is tests/guest/init.  It runs /lab/job.sh with its output
on the second serial port and writes a completion marker there only after
the job has returned, so a guest that crashes, panics or hangs can never
look like a pass.  The console (first serial port) is scanned for kernel
warnings; any hit fails the run.
"""

import glob
import lzma
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from . import arch as arch_mod
from . import debian, util

DONE_MARKER = "VFSFAST-JOB-DONE"

# Kernel messages that fail a run wherever they appear on the console.
# The debug kernels' reports start "BUG: KASAN:", "BUG: KFENCE:", "BUG:
# sleeping function called from invalid context", "WARNING: possible
# circular locking dependency detected", "WARNING: inconsistent lock
# state", "WARNING: suspicious RCU usage"; their titles are named too, so
# that a report whose first line another CPU's output split still counts.
BAD_CONSOLE = re.compile(
    r"WARNING:|BUG:|Oops|general protection|RCU stall|detected stalls?|"
    r"hung_task|INFO: task|lockdep|Kernel panic|Call Trace|UBSAN:|KFENCE:|KASAN:|"
    r"circular locking dependency|inconsistent lock state|suspicious RCU usage|"
    r"called from invalid context|possible recursive locking|"
    r"lock held when returning to user space")
# The first line of one report (a blocked task, a warning, an oops, a
# panic): where suite.console_digest() starts a new one.  "Call Trace"
# and hung_task's hint line belong to the report above them.
REPORT_START = re.compile(
    r"INFO: task |WARNING:|BUG:|Oops|general protection|RCU stall|detected stalls?|"
    r"Kernel panic|KASAN:|circular locking dependency")
# Boot banners of those kernels that match the above but report nothing.
BENIGN_CONSOLE = re.compile(r"RCU lockdep checking is enabled")
# Reports a test provokes on purpose, each printed between two lines of
# its own; between them the report's lines are expected, any other report
# still fails the run.  (begin line, end line, the report's lines.)
# vfsfast_nameuaf.ko reads a name after putname(), which KASAN must still
# report whatever vfsfast does: its header, "Call Trace:" and the frames
# (a frame of lockdep's own functions is no lockdep report).
EXPECTED_BEGIN = "vfsfast_nameuaf: expected KASAN report begin"
EXPECTED_END = "vfsfast_nameuaf: expected KASAN report end"
EXPECTED_REPORT = re.compile(r"BUG: KASAN: [a-z-]*use-after-free in |Call Trace:|"
                             r"^(\[[ \d.]+\] )?\s+(\? )?[\w.]+\+0x[0-9a-f]+/0x[0-9a-f]+"
                             r"( \[\w+\])?$")
# t_pac's one stock readlink() entered past its target's paciasp: the
# first oops of the boot, a pointer authentication failure (FPAC) or,
# on a CPU without FEAT_FPAC, the instruction abort at the corrupted
# return address (ESR 0x86000004, IABT at EL1, level 0 translation
# fault).  The rest of an arm64 oops matches nothing the scan looks for.
PAC_BEGIN = "vfsfast_pac: expected pointer authentication report begin"
PAC_END = "vfsfast_pac: expected pointer authentication report end"
PAC_REPORT = re.compile(r"Internal error: Oops(: 0000000086000004| - FPAC: [0-9a-f]+) \[#1\] ")
EXPECTED_REPORTS = [(EXPECTED_BEGIN, EXPECTED_END, EXPECTED_REPORT),
                    (PAC_BEGIN, PAC_END, PAC_REPORT)]
# KASAN kernels report every bug (kasan_multi_shot), not just the first:
# the expected report above neither panics the guest (panic_on_warn) nor
# silences a later one, which the console scan must see.
KASAN_CMDLINE = "kasan_multi_shot"

# Modules the guest needs from the kernel package, loaded in this order
# (their dependencies first).  Built-in ones are skipped.
GUEST_MODULES = ["virtio_pci", "virtio_blk", "loop", "crc32c_generic",
                 "crc32c_intel", "crc32c_cryptoapi", "ext4"]
# Packed into /lab/modules but loaded only by the tests that need them
# (t_kernfs: dummy network devices appear and vanish in sysfs; t_calls:
# overlayfs files in the differential lists).
ONDEMAND_MODULES = ["dummy", "overlay"]

# The first serial port's console=, which the lab scans, is the
# architecture's (arch.Arch.console); CMDLINE is amd64's.
COMMON_CMDLINE = ("panic=-1 oops=panic panic_on_warn=1 "
                  "softlockup_panic=1 hung_task_panic=1 rdinit=/init "
                  "printk.devkmsg=on")
CMDLINE = f"console={arch_mod.AMD64.console} {COMMON_CMDLINE}"
# Wall-clock guests only.  Under TCG both the TSC and the HPET follow the
# host's clock, so the TSC is as stable as the host's; but 7.2's rewritten
# clocksource watchdog compares two samples only 60 us apart against a
# 500 ppm slack plus the current readout window, not the previous one, so
# a vCPU descheduled by the host between two reads reads as "frequency
# skew" (seen once: 61,890 ns vs 60,650 ns).  The TSC is then marked
# unstable at run time, which flips the sched_clock_stable static key and
# switches clocksource under stop_machine() in the middle of a test; 5.10
# and 6.1 mark the TSC unstable at boot under TCG and never get there.
# Documentation/lab.md, "Lab caveats".  The icount guests keep the
# watchdog: their clocks count instructions and cannot skew.
WALLCLOCK_CMDLINE = arch_mod.AMD64.wallclock_cmdline


# The cost model of every instruction count the lab reports: the CPU model
# its icount guests boot with.  TCG runs a rep-prefixed string instruction
# one iteration at a time and icount charges each iteration, so a guest
# offered ERMS (as -cpu max is; qemu 7.2's TCG cannot offer FSRM) patches
# memset, memcpy, clear_page, memmove and the user copies to rep stosb /
# rep movsb and pays one instruction per byte: 4,096 for the 4 KB name
# buffer every path lookup zeroes (init_on_alloc), where a CPU spends
# about a hundred cycles.  Without ERMS the kernels take their rep
# stosq/movsq routines (max reports an AMD family 15 CPU, which the
# kernel marks REP_GOOD) or unrolled loops: 8 bytes or more per counted
# instruction.  The argument, and the same benchmarks under both models:
# Documentation/ab-methodology.md, "The cost model".
FAST_STRING_FEATURES = ("erms", "fsrm", "fsrs", "fzrm", "fsrc")
COST_MODELS = {
    # name: what the model takes away from -cpu max
    "no-fast-strings": FAST_STRING_FEATURES,
    # The lab's model before no-fast-strings; for comparisons only.
    "max": (),
}
DEFAULT_COST_MODEL = "no-fast-strings"
_cost_model = DEFAULT_COST_MODEL
_known = None


def qemu_cpu_features():
    """The CPUID flags this qemu knows (qemu-system-x86_64 -cpu help)."""
    global _known
    if _known is None:
        try:
            out = subprocess.run(["qemu-system-x86_64", "-cpu", "help"], capture_output=True,
                                 text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError):
            out = ""
        flags = out.split("Recognized CPUID flags:", 1)[-1] if "Recognized" in out else ""
        _known = frozenset(flags.split())
    return _known


def set_cost_model(name):
    """The icount guests' model from now on (vfsfast-lab --cost-model)."""
    global _cost_model
    if name not in COST_MODELS:
        raise ValueError(f"unknown cost model {name!r}, not one of {', '.join(COST_MODELS)}")
    _cost_model = name


def icount_cpu():
    """qemu's -cpu of the model in use: max, less the model's features
    that this qemu knows (7.2 knows ERMS and FSRM; one that knows FSRS,
    FZRM or FSRC gets those taken away too: max offers what it knows)."""
    off = [f for f in COST_MODELS[_cost_model] if f in qemu_cpu_features()]
    return ",".join(["max"] + [f"-{f}" for f in off])


def cost_model_label():
    """What a table header says of the count: 'cost model NAME (-cpu ...)'."""
    return f"cost model {_cost_model} (-cpu {icount_cpu()})"


def arch_cpu_label(arches):
    """What a table of kernels of @arches says of its guests' CPU: the
    cost model's label for amd64, the fixed -cpu of any other."""
    return "; ".join(cost_model_label() if not a.cpu else f"{a}: -cpu {a.cpu}"
                     for a in dict.fromkeys(arches))


def fast_strings_offered(cpu):
    """The fast-string features a qemu -cpu argument offers: of those this
    qemu knows, every one max has (all it knows) and the argument does
    not take away, and any it adds."""
    model, *props = cpu.split(",")
    known = set(FAST_STRING_FEATURES) & qemu_cpu_features()
    on = set(known) if model in ("max", "host") else set()
    for p in props:
        name, _, val = p.lstrip("+-").partition("=")
        if name not in FAST_STRING_FEATURES:
            continue
        if p.startswith("-") or val in ("off", "false"):
            on.discard(name)
        else:
            on.add(name)
    return sorted(on)


def cpu_arg(icount, arch=arch_mod.AMD64):
    """qemu's -cpu for a guest: the cost model's for icount guests, max
    otherwise (wall time is not counted per instruction).  An icount guest
    offered fast strings is refused unless the old model was named.  An
    architecture with a -cpu of its own (arch.Arch.cpu) has no cost model:
    it has no string instructions that TCG counts by the byte."""
    if arch.cpu:
        return arch.cpu
    if not icount:
        return "max"
    cpu = icount_cpu()
    offered = fast_strings_offered(cpu)
    if offered and _cost_model != "max":
        raise ValueError(f"icount guest with -cpu {cpu}: offers {', '.join(offered)}")
    return cpu


def kernel_cmdline(icount, append="", arch=arch_mod.AMD64):
    """The guest kernel's command line: the architecture's console,
    COMMON_CMDLINE, its WALLCLOCK_CMDLINE unless the guest counts
    instructions, then append."""
    return " ".join(filter(None, [f"console={arch.console}", COMMON_CMDLINE,
                                  None if icount else arch.wallclock_cmdline, append]))


def _module_index(kernel):
    """Map module name -> file in the unpacked kernel package."""
    index = {}
    mdir = kernel.modules_dir
    for path in glob.glob(os.path.join(mdir, "kernel", "**", "*.ko*"), recursive=True):
        name = os.path.basename(path).split(".ko")[0].replace("-", "_")
        index[name] = path
    return index


def _module_deps(path):
    out = util.run(["modinfo", "-F", "depends", path], capture=True).strip()
    return [d.replace("-", "_") for d in out.split(",") if d]


def guest_modules(kernel, names=None):
    """The .ko files (with dependencies, in load order) for the guest."""
    index = _module_index(kernel)
    order = []

    def visit(name):
        if name in order or name not in index:
            return  # built in, or already queued
        for dep in _module_deps(index[name]):
            visit(dep)
        order.append(name)

    for name in names or list(kernel.arch.job_modules) + GUEST_MODULES:
        visit(name)
    return [(name, index[name]) for name in order]


def _copy_module(src, dst):
    """Copy a kernel module, uncompressed, so busybox insmod can load it."""
    if src.endswith(".xz"):
        with lzma.open(src) as f, open(dst, "wb") as out:
            shutil.copyfileobj(f, out)
    elif src.endswith(".zst"):
        with open(dst, "wb") as out:
            subprocess.run(["zstd", "-dc", src], stdout=out, check=True)
    else:
        shutil.copyfile(src, dst)


def build_initramfs(kernel, out, files, env):
    """Write an uncompressed cpio archive for one guest run.

    files: {guest path: host path}; env: facts the guest tests read.
    """
    repo = util.repo_dir()
    stage = tempfile.mkdtemp(prefix="vfsfast-initrd-")
    # mkdtemp's 0700 would become the guest's /: unprivileged tests need
    # to reach /bin and /lab.
    os.chmod(stage, 0o755)
    try:
        for d in ("bin", "sbin", "proc", "sys", "dev", "tmp", "mnt/ext4",
                  "lab/bin", "lab/modules", "run", "root", "etc"):
            os.makedirs(os.path.join(stage, d), exist_ok=True)
        shutil.copy2(kernel.busybox, os.path.join(stage, "bin/busybox"))
        shutil.copy2(os.path.join(repo, "tests/guest/init"), os.path.join(stage, "init"))
        for path in glob.glob(os.path.join(repo, "tests/guest/*.sh")):
            shutil.copy2(path, os.path.join(stage, "lab"))
        order = []
        for name, path in guest_modules(kernel):
            _copy_module(path, os.path.join(stage, "lab/modules", name + ".ko"))
            order.append(name + ".ko")
        with open(os.path.join(stage, "lab/modules/order"), "w") as f:
            f.write("\n".join(order) + "\n")
        for name, path in guest_modules(kernel, ONDEMAND_MODULES):
            if name + ".ko" not in order:
                _copy_module(path, os.path.join(stage, "lab/modules", name + ".ko"))
        for gpath, hpath in files.items():
            dst = os.path.join(stage, gpath.lstrip("/"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(hpath, dst)
        # init reads where the job's output goes, and the libraries of
        # the release's programs, from here; the tests' kprobe events
        # where a function's return address is.
        env = dict(env, VFSFAST_JOB_OUT=kernel.arch.job_out,
                   VFSFAST_MULTIARCH=kernel.arch.multiarch,
                   VFSFAST_KPROBE_ENTRY_RET=kernel.arch.entry_ret)
        with open(os.path.join(stage, "lab/env.sh"), "w") as f:
            # Single-quoted, a quote in a value closed, escaped, reopened.
            for k, v in sorted(env.items()):
                v = str(v).replace("'", "'\\''")
                f.write(f"{k}='{v}'\n")
        files_list = subprocess.run(["find", "."], cwd=stage, check=True,
                                    stdout=subprocess.PIPE).stdout
        with open(out, "wb") as f:
            subprocess.run(["cpio", "--quiet", "-o", "-H", "newc"], cwd=stage,
                           input=files_list, stdout=f, check=True)
    finally:
        shutil.rmtree(stage)


def _unexpected(lines):
    """The console's lines, less those of an expected report between its
    begin and end lines (EXPECTED_REPORTS); a begin line never ended
    excuses nothing."""
    held = expect = None
    for line in lines:
        begin = next((e for e in EXPECTED_REPORTS if e[0] in line), None)
        if begin:
            yield from held or []
            held, expect = [], begin
        elif held is not None and expect[1] in line:
            yield from (l for l in held if not expect[2].search(l))
            held = expect = None
        elif held is not None:
            held.append(line)
        else:
            yield line
    yield from held or []


class Result:
    def __init__(self, console, output, seconds, timed_out):
        self.console = console
        self.output = output
        self.seconds = seconds
        self.timed_out = timed_out
        # What killed a first boot before user space, when it was retried.
        self.early_failure = None
        m = re.search(DONE_MARKER + r" rc=(\d+)", output)
        self.completed = m is not None
        self.rc = int(m.group(1)) if m else None
        # The command line names hung_task_panic: not a report.
        self.bad_lines = [l for l in _unexpected(console.splitlines())
                          if BAD_CONSOLE.search(l) and "command line:" not in l.lower()
                          and not BENIGN_CONSOLE.search(l)]

    @property
    def clean(self):
        return self.completed and not self.bad_lines and not self.timed_out


# What the kernel prints as it starts user space: before it, nothing of
# vfsfast has run (the guest's init loads the modules).
USERSPACE_MARKER = "Run /init as init process"


def boot(kernel, initrd, disk=None, smp=1, icount=False, timeout=600,
         append="", keep_dir=None, mttcg=False, on_output=None, memory_mb=None):
    """Boot the kernel; always reaps qemu, whatever happens.

    A guest whose kernel died before starting user space is booted once
    more: no code of vfsfast's had run, so the failure is the kernel's
    own (the KASAN kernel, under TCG, can take an interrupt in early CPU
    setup and report a wild access).  The failed console is kept as
    console-early.log in keep_dir, and the result says so (early_failure),
    for the suite to note.

    on_output: called with each new chunk of the job's output while the
    guest runs (progress of long jobs).  memory_mb: the guest's memory,
    if it needs more than the kernel's (kernel.Kernel.memory_mb)."""
    if kernel.config().get("CONFIG_KASAN") == "y":
        append = " ".join(filter(None, [KASAN_CMDLINE, append]))
    res = _boot(kernel, initrd, disk, smp, icount, timeout, append, keep_dir,
                mttcg, on_output, memory_mb)
    if res.completed or res.timed_out or USERSPACE_MARKER in res.console:
        return res
    first = res
    if keep_dir:
        os.makedirs(keep_dir, exist_ok=True)
        with open(os.path.join(keep_dir, "console-early.log"), "w") as f:
            f.write(first.console)
    res = _boot(kernel, initrd, disk, smp, icount, timeout, append, keep_dir,
                mttcg, on_output, memory_mb)
    res.early_failure = (first.bad_lines or ["no report"])[0].strip()
    return res


def qemu_command(image, initrd, memory_mb, smp, icount, mttcg, append, console, output,
                 disk=None, arch=arch_mod.AMD64, qemu=None):
    """The qemu command line of a guest (tests/host/vm_cpu_model_test.py
    reads it): the architecture's qemu (or the argv @qemu, a release's:
    guest_qemu()), machine and CPU, its console on the first serial port
    and the job's channel (arch.Arch.job_out)."""
    cmd = (qemu or [arch.qemu]) + ["-nodefaults", "-no-reboot", "-display", "none",
           "-monitor", "none", "-machine", arch.machine, "-cpu", cpu_arg(icount, arch),
           "-m", str(memory_mb), "-smp", str(smp), "-kernel", image, "-initrd", initrd,
           "-append", kernel_cmdline(icount, append, arch),
           "-serial", f"file:{console}"] + arch.job_out_args(output)
    if icount:
        # Guest nanoseconds become executed instructions: reproducible.
        cmd += ["-accel", "tcg,thread=single", "-icount", "shift=0,sleep=off"]
    elif mttcg:
        # One host thread per vCPU: real parallelism, for contention
        # figures.  Cross-vCPU code patching (ftrace enable/disable while
        # another vCPU runs the patched function) can livelock here on a
        # stale translated int3; see Documentation/lab.md "Lab caveats".
        cmd += ["-accel", "tcg,thread=multi"]
    else:
        # vCPUs interleaved on one host thread: concurrent from the
        # guest's point of view, with code patching always coherent.
        cmd += ["-accel", "tcg,thread=single"]
    if disk:
        cmd += ["-drive", f"file={disk},if=virtio,format=raw,snapshot=on"]
    return cmd


# The guests' qemu from a Debian release's chroot instead of the host's
# (make check-fpac: trixie's qemu 10 offers FEAT_FPAC in -cpu max, the
# host's 7.2 does not); empty: the host's.
QEMU_RELEASE_ENV = "VFSFAST_QEMU_RELEASE"


def guest_qemu(arch):
    """The argv that starts the guests' qemu: None for the host's, else
    the release's (debian.release_qemu())."""
    release = os.environ.get(QEMU_RELEASE_ENV)
    if not release:
        return None
    return debian.release_qemu(release, arch)


def _boot(kernel, initrd, disk, smp, icount, timeout, append, keep_dir, mttcg,
          on_output, memory_mb=None):
    # The debug kernels' guests are slower and need more memory
    # (kernel.Kernel.timeout(), .memory_mb): scaled here, for every caller.
    timeout = kernel.timeout(timeout)
    memory = max(kernel.memory_mb, memory_mb or 0)
    work = tempfile.mkdtemp(prefix="vfsfast-vm-")
    console = os.path.join(work, "console.log")
    output = os.path.join(work, "output.log")
    cmd = qemu_command(kernel.image, initrd, memory, smp, icount, mttcg, append, console,
                       output, disk, kernel.arch, guest_qemu(kernel.arch))
    t0 = time.monotonic()
    timed_out = False
    proc = subprocess.Popen(cmd, start_new_session=True, stdin=subprocess.DEVNULL)
    try:
        if on_output is None:
            proc.wait(timeout=timeout)
        else:
            seen = 0
            while proc.poll() is None:
                if time.monotonic() - t0 > timeout:
                    raise subprocess.TimeoutExpired(cmd, timeout)
                time.sleep(1)
                if os.path.exists(output):
                    with open(output, errors="replace") as f:
                        f.seek(seen)
                        chunk = f.read()
                    # whole lines only
                    chunk = chunk[:chunk.rfind("\n") + 1]
                    seen += len(chunk.encode(errors="replace"))
                    if chunk:
                        on_output(chunk)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    seconds = time.monotonic() - t0
    read = lambda p: open(p, errors="replace").read() if os.path.exists(p) else ""
    res = Result(read(console), read(output), seconds, timed_out)
    if keep_dir:
        os.makedirs(keep_dir, exist_ok=True)
        for p in (console, output):
            shutil.copy2(p, keep_dir) if os.path.exists(p) else None
    shutil.rmtree(work)
    return res
