"""Preparing and running one guest job on one lab kernel."""

import atexit
import os
import re
import subprocess
import tempfile
import threading

from . import build, ext4img, opts, util, vm

# Test programs (tests/guest/src) and vfsfast-ab's workload programs
# (scripts/workloads, which `make install` installs too); both are on the
# guests' PATH as /lab/bin/<name>.
GUEST_PROGRAMS = ["rldiff", "rlloop", "wr", "uffdrl", "sysfuzz", "runas",
                  "fanperm", "bpfentry", "pseudowatch", "evdiff", "scdiff",
                  "auditdiff", "procdiff", "closediff", "namediff", "uringname", "permdiff",
                  "aaprobe", "fliptime", "dirdiff", "dirrace", "dirhold"]
WORKLOAD_PROGRAMS = ["abloop", "rlbench", "nbench", "kfs"]
# vfsfast-ab runs in the guest as on a host: the script and its statistics.
GUEST_SCRIPTS = ["vfsfast-ab", "vfsfast-ab-stats.awk", "vfsfast"]
ABI_DOC = "Documentation/ABI/testing/sysfs-kernel-vfsfast"


def guest_programs(kernel):
    """Static test programs for the kernel's architecture (they run on
    any kernel of it): built on the host, or with the cross compiler of
    the kernel's chroot (kernel.Kernel.compile_static)."""
    out = os.path.join(util.cache_dir(), "guest-bin" if not kernel.cross else
                       f"guest-bin-{kernel.arch}")
    os.makedirs(out, exist_ok=True)
    src = os.path.join(util.repo_dir(), "tests/guest/src")
    wl = os.path.join(util.repo_dir(), "scripts/workloads")
    progs = {}
    for d, names in ((src, GUEST_PROGRAMS), (wl, WORKLOAD_PROGRAMS)):
        for name in names:
            c = os.path.join(d, name + ".c")
            exe = os.path.join(out, name)
            deps = [c] + [os.path.join(d, h) for h in ("common.h", "creds.h", "bpfraw.h")
                          if os.path.exists(os.path.join(d, h))]
            newest = max(os.path.getmtime(f) for f in deps)
            if not os.path.exists(exe) or os.path.getmtime(exe) < newest:
                kernel.compile_static(c, exe, ["-O2", "-pthread", "-Wall", "-Wextra",
                                               "-Werror"])
            progs[f"/lab/bin/{name}"] = exe
    for name in GUEST_SCRIPTS:
        progs[f"/lab/bin/{name}"] = os.path.join(util.repo_dir(), "scripts", name)
    if not kernel.cross:
        # The host's libbpf and clang target the host's architecture.
        progs.update(latency_programs(wl, out))
    return progs


def latency_programs(src, out):
    """vfsfast-ab --latency's helper (libbpf, static) and its BPF object,
    where the host has clang and libbpf-dev; otherwise none, and
    vfsfast-ab says in the guest that latency histograms are unavailable."""
    import shutil
    if not shutil.which("clang") or not os.path.exists("/usr/include/bpf/libbpf.h"):
        return {}
    obj = os.path.join(out, "ablat.bpf.o")
    exe = os.path.join(out, "ablat")
    bpf_c = os.path.join(src, "ablat.bpf.c")
    c = os.path.join(src, "ablat.c")
    if not os.path.exists(obj) or os.path.getmtime(obj) < os.path.getmtime(bpf_c):
        util.run(["clang", "-O2", "-g", "-target", "bpf", "-D__TARGET_ARCH_x86",
                  "-I/usr/include/x86_64-linux-gnu", "-Wall", "-Werror", "-c", bpf_c,
                  "-o", obj], quiet=True)
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(c):
        util.run(["gcc", "-O2", "-static", "-Wall", "-Wextra", "-Werror", "-o", exe, c,
                  "-lbpf", "-lelf", "-lz", "-lzstd"], quiet=True)
    return {"/lab/bin/ablat": exe, "/lab/bin/ablat.bpf.o": obj}


def abi_entries():
    """(mode, path relative to /sys/kernel/vfsfast) per documented file."""
    text = open(os.path.join(util.repo_dir(), ABI_DOC)).read()
    entries, names = [], []
    for block in text.split("What:")[1:]:
        path = block.split()[0]
        m = re.search(r"\(mode (\d+)\)", block)
        if not m:
            util.die(f"{ABI_DOC}: no (mode NNNN) for {path}")
        rel = path[len("/sys/kernel/vfsfast"):].strip("/") or "."
        entries.append((m.group(1).lstrip("0"), rel))
        o = re.search(r"Optimizations:\s*([^\n(]+)", block)
        if o:
            names = o.group(1).split()
    return entries, names


class Disk:
    """The ext4 test image and the entries it holds (relative paths)."""

    def __init__(self, path, entries):
        self.path = path
        self.entries = entries


def ext4_image():
    """A fresh image per lab process, removed when the process exits."""
    path = os.path.join(util.cache_dir(), f"ext4-links.{os.getpid()}.img")
    links = ext4img.build(path)
    atexit.register(lambda: os.path.exists(path) and os.unlink(path))
    return Disk(path, links + ext4img.NON_LINKS)


_evdiff_image = None
# Kernels run in threads of one process, and each guest asks for the image.
_evdiff_lock = threading.Lock()


def evdiff_image():
    """An empty ext4 image, gzipped (the initramfs is not compressed; the
    guest unpacks a fresh copy for each t_evdiff run).  One per lab
    process, removed when it exits."""
    with _evdiff_lock:
        return _make_evdiff_image()


def _make_evdiff_image():
    global _evdiff_image
    if _evdiff_image:
        return _evdiff_image
    img = os.path.join(util.cache_dir(), f"evdiff-ext4.{os.getpid()}.img")
    util.run(["rm", "-f", img, img + ".gz"])
    with open(img, "wb") as f:
        f.truncate(16 << 20)
    # Inode tables and journal written now: no lazy init in the guest.
    util.run(["mkfs.ext4", "-q", "-F", "-E",
              "root_owner=0:0,lazy_itable_init=0,lazy_journal_init=0", img],
             quiet=True)
    util.run(["gzip", "-n", img], quiet=True)
    _evdiff_image = img + ".gz"
    atexit.register(lambda: os.path.exists(_evdiff_image) and os.unlink(_evdiff_image))
    return _evdiff_image


def run_job(kernel, job, ko, disk=None, smp=1, icount=False, timeout=900,
            env=None, keep_dir=None, mttcg=False, extra_files=None, on_output=None,
            append="", memory_mb=None):
    """Boot kernel (a kernel.Kernel) with vfsfast's .ko (None: a job that
    loads a module of its own) and the test programs; run job text.  The guest's environment (/lab/env.sh) holds
    the kernel's facts and expectations, env on top."""
    entries, abi_opts = abi_entries()
    fd, initrd = tempfile.mkstemp(prefix="vfsfast-initrd-", suffix=".cpio")
    os.close(fd)
    jobs_dir = tempfile.mkdtemp(prefix="vfsfast-job-")
    try:
        job_path = os.path.join(jobs_dir, "job.sh")
        with open(job_path, "w") as f:
            f.write(job)
        abi_path = os.path.join(jobs_dir, "abi.txt")
        with open(abi_path, "w") as f:
            f.write("".join(f"{m} {p}\n" for m, p in entries))
        files = dict(guest_programs(kernel))
        files["/lab/job.sh"] = job_path
        files["/lab/abi.txt"] = abi_path
        if disk:
            # The guest cannot list what it cannot look up: newer kernels
            # refuse the crafted inodes.  The host knows what is there.
            list_path = os.path.join(jobs_dir, "ext4.list")
            with open(list_path, "w") as f:
                f.write("".join(f"/mnt/ext4/{e}\n" for e in disk.entries))
            files["/lab/ext4.list"] = list_path
        if ko:
            files["/lab/vfsfast.ko"] = ko
        files["/lab/evdiff-ext4.img.gz"] = evdiff_image()
        files.update(extra_files or {})
        genv = {
            "VFSFAST_KVER": kernel.kver,
            "VFSFAST_KERNEL": kernel.name,
            "VFSFAST_VERSION": build.version(),
            "VFSFAST_SRCVERSION": build.modinfo(ko, "srcversion") if ko else "",
            "VFSFAST_BACKENDS_EXPECT": " ".join(build.expected_backends(kernel)),
            "VFSFAST_EXPECT_LIVEPATCH": "1" if build.has_livepatch(kernel) else "0",
            # A kprobe on a function's entry is an ftrace user (x86), or a
            # breakpoint beside it (arm64).
            "VFSFAST_EXPECT_KPROBES_ON_FTRACE":
                "1" if build.kernel_config(kernel.base).get("CONFIG_KPROBES_ON_FTRACE") == "y"
                else "0",
            # t_cgroup: spin_lock_irq() is inlined, so no kprobe on
            # _raw_spin_lock_irq() sees css_set_lock taken (arm64 5.10, 6.1).
            "VFSFAST_EXPECT_INLINE_SPIN_LOCK_IRQ":
                "1" if build.kernel_config(kernel.base).get("CONFIG_INLINE_SPIN_LOCK_IRQ") == "y"
                else "0",
            # The ftrace backend's targets all on one shared ops, no
            # observer group (arch.Arch.ftrace_call_ops).
            "VFSFAST_EXPECT_FTRACE_LIST_WALK":
                "1" if kernel.arch.ftrace_call_ops and build.kernel_config(kernel.base).get(
                    kernel.arch.ftrace_call_ops) != "y" else "0",
            # t_pac: the kernel signs its return addresses (arm64 PAC).
            "VFSFAST_EXPECT_PTR_AUTH_KERNEL":
                "1" if build.config_option(kernel.base, "CONFIG_ARM64_PTR_AUTH_KERNEL") == "y"
                else "0",
            "VFSFAST_ABI_OPTS": " ".join(abi_opts),
        }
        # VFSFAST_EXPECT_UPSTREAM_* and the rest generated from opts.OPTS.
        genv.update(opts.guest_env(kernel))
        if disk and icount:
            # With -icount sleep=off an idle guest's clock races ahead of
            # the host's I/O thread: a virtio read looks like minutes of
            # guest time.  A loop device over a file in the initramfs
            # makes every I/O guest CPU work, deterministic as well.
            files["/lab/ext4.img"] = disk.path
        if not icount:
            # The guest's clock is the host's here (with icount an idle
            # guest's races ahead): init's watchdog fires shortly before
            # the lab kills the guest.
            genv["VFSFAST_WATCHDOG_S"] = str(max(timeout - 90, timeout // 2))
        genv.update(env or {})
        vm.build_initramfs(kernel, initrd, files, genv)
        return vm.boot(kernel, initrd, disk=disk.path if disk and not icount else None, smp=smp, icount=icount,
                       timeout=timeout, keep_dir=keep_dir, mttcg=mttcg,
                       on_output=on_output, append=append, memory_mb=memory_mb)
    finally:
        os.unlink(initrd)
        subprocess.call(["rm", "-rf", jobs_dir])
