"""The lab-built kernels: "legacy", 6.1 with fsnotify as it was before
Linux 5.8, and "legacy-ref", the same source and configuration without the
revert, to subtract from it.

Debian no longer ships 4.19 or 5.4, whose fsnotify hooks have none of the
fast paths later kernels added for the case where nobody watches.  This
builds one: bookworm's linux-source-6.1 (fetched with apt inside the
bookworm chroot, as debian.checkpatch() does), patched with
tests/legacy/fsnotify-pre-5.8.patch, configured from x86_64_defconfig plus
what the lab needs (everything the guest uses built in), and compiled in
the bookworm chroot by its gcc-12.

"legacy-ref" exists because stock Debian 6.1 cannot be compared with the
legacy kernel instruction for instruction: its configuration differs in
ways that have nothing to do with fsnotify.  legacy-ref differs from legacy
only by the patch, so legacy-ref minus legacy is the saving upstream's
fast paths give, and the knobs on legacy can be measured against it.

Everything lives in <cache>/<name> (legacy, legacy-ref):
  linux-source-6.1_*.deb   the source package, downloaded once
  linux-source-6.1/        the patched, built tree: the module's KDIR
  kernel/                  laid out like an unpacked Debian image package:
                           boot/vmlinuz-<release>, boot/System.map-<release>,
                           boot/config-<release>, lib/modules/<release>/
  build.log, .vfsfast-ready (a JSON stamp: recipe hash, release, timings)

The stamp holds a hash of the patch, the configuration lists and the build
recipe; when any of them changes, the tree is unpacked afresh and rebuilt.

Inside the bookworm chroot the tree appears as
/usr/src/linux-headers-<release>, bind-mounted in a private mount namespace
for each command (chroot_argv()), so nothing is mounted where other lab
runs sharing the chroot could see or unmount it; /lib/modules/<release>/
build in the chroot points there, for DKMS and `make install`.
"""

import fcntl
import glob
import hashlib
import json
import os
import resource
import shutil
import subprocess
import time

from . import util

RELEASE = "bookworm"
SOURCE_PACKAGE = "linux-source-6.1"

# name -> the patch applied to the source (or None) and the release suffix.
VARIANTS = {
    "legacy": {"patch": "tests/legacy/fsnotify-pre-5.8.patch",
               "localversion": "-vfsfast-legacy"},
    "legacy-ref": {"patch": None, "localversion": "-vfsfast-ref"},
}

# Bump when the build steps below change in a way the lists do not show.
RECIPE = 1

# What the kernel build needs in the chroot beyond debian.CHROOT_PACKAGES.
BUILD_PACKAGES = ["bc", "bison", "flex", "libelf-dev", "libssl-dev", "openssl",
                  "patch", "perl", "cpio"]

# On top of x86_64_defconfig.  Everything the guest needs is built in, so
# the guest loads no in-tree module (vm.GUEST_MODULES are skipped when
# built in).  Each of these must be =y after olddefconfig, or the build
# stops and names it.
CONFIG_ENABLE = [
    # boot: serial consoles, initramfs, devtmpfs, ACPI poweroff
    "SERIAL_8250", "SERIAL_8250_CONSOLE", "BLK_DEV_INITRD", "DEVTMPFS", "ACPI",
    "BINFMT_ELF", "BINFMT_SCRIPT", "PROC_FS", "SYSFS", "TMPFS", "DEBUG_FS",
    # the test disk: virtio-blk with ext4, and loop (icount guests)
    "PCI", "VIRTIO_MENU", "VIRTIO", "VIRTIO_PCI", "VIRTIO_BLK", "BLK_DEV",
    "BLK_DEV_LOOP", "EXT4_FS", "CRYPTO_CRC32C",
    # fsnotify users
    "FSNOTIFY", "DNOTIFY", "INOTIFY_USER", "FANOTIFY", "FANOTIFY_ACCESS_PERMISSIONS",
    # what vfsfast hooks with, and what it shares vfs_readlink with
    "FTRACE", "FUNCTION_TRACER", "FUNCTION_GRAPH_TRACER", "DYNAMIC_FTRACE",
    "DYNAMIC_FTRACE_WITH_REGS", "DYNAMIC_FTRACE_WITH_DIRECT_CALLS", "KPROBES",
    "KPROBE_EVENTS", "KALLSYMS", "KALLSYMS_ALL", "LIVEPATCH",
    "MODULES", "MODULE_UNLOAD", "BPF_SYSCALL", "BPF_JIT",
    # module signatures, so that module.sig_enforce exists (sig_enforce.sh)
    "MODULE_SIG", "MODULE_SIG_SHA256",
    # what the guest programs and stress-ng use
    "USERFAULTFD", "EVENTFD", "SIGNALFD", "TIMERFD", "EPOLL", "SYSVIPC",
    "CGROUPS", "NAMESPACES", "NET_NS", "USER_NS", "PID_NS", "UTS_NS", "IPC_NS",
    "NET", "UNIX", "INET", "NETDEVICES", "NET_CORE", "DUMMY",
    # the lab reads the running configuration
    "IKCONFIG", "IKCONFIG_PROC",
    # the detectors the lab's command line makes fatal, as on Debian
    "SOFTLOCKUP_DETECTOR", "DETECT_HUNG_TASK",
    "HZ_250",
]

# Off: what the guest never uses and costs build time, and -Werror, which
# a distribution compiler's new warnings must not turn into a failed build.
CONFIG_DISABLE = [
    "WERROR", "DRM", "AGP", "SOUND", "USB_SUPPORT", "HID", "INPUT_JOYSTICK",
    "INPUT_TABLET", "INPUT_TOUCHSCREEN", "WIRELESS", "WLAN", "CFG80211", "MAC80211",
    "RFKILL", "NETFILTER", "NET_SCHED", "NETLABEL", "NET_9P", "NFS_FS", "PCCARD",
    "ATA", "SCSI", "MD", "ETHERNET", "X86_PLATFORM_DEVICES", "MACINTOSH_DRIVERS",
    "WATCHDOG", "DMADEVICES", "AMD_IOMMU", "INTEL_IOMMU", "ISO9660_FS",
    "MSDOS_FS", "VFAT_FS", "SECURITY_SELINUX", "HIBERNATION", "HZ_1000",
    "LOCALVERSION_AUTO", "DEBUG_INFO_BTF",
]


def legacy_dir(name):
    d = os.path.join(util.cache_dir(), name)
    os.makedirs(d, exist_ok=True)
    return d


def src_dir(name):
    return os.path.join(legacy_dir(name), SOURCE_PACKAGE)


def kernel_dir(name):
    return os.path.join(legacy_dir(name), "kernel")


def _stamp_path(name):
    return os.path.join(legacy_dir(name), ".vfsfast-ready")


def recipe_hash(name):
    """Hash of what the build depends on: the patch's diff (its header text
    is left out), the configuration lists and the recipe."""
    h = hashlib.sha256()
    patch = VARIANTS[name]["patch"]
    if patch:
        with open(os.path.join(util.repo_dir(), patch), "rb") as f:
            text = f.read()
        start = text.find(b"\ndiff --git ")
        if start < 0:
            util.die(f"{patch}: no diff in it")
        h.update(text[start:])
    h.update(json.dumps([RECIPE, VARIANTS[name]["localversion"], BUILD_PACKAGES,
                         CONFIG_ENABLE, CONFIG_DISABLE]).encode())
    return h.hexdigest()[:16]


def stamp(name):
    """The stamp of the last complete build (a dict), or None."""
    try:
        with open(_stamp_path(name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def release(name):
    """uname -r of the kernel, building it first if need be."""
    s = stamp(name)
    if not s:
        ensure(name)
        s = stamp(name)
    return s["release"]


def headers_in_chroot(kver):
    return f"/usr/src/linux-headers-{kver}"


def chroot_argv(root, script, name=None, kver=None):
    """argv that runs `sh -ec script` in the bookworm chroot with /proc, /sys,
    /dev and (name given) that kernel's tree mounted in a private mount
    namespace: the mounts vanish with the command, and no other process
    sees them."""
    bind = ""
    if name:
        kver = kver or release(name)
        mp = f'"$r{headers_in_chroot(kver)}"'
        bind = f'mkdir -p {mp}; mount --bind "{src_dir(name)}" {mp}; '
    setup = ('r=$1; shift; '
             'mount -t proc proc "$r/proc"; mount -t sysfs sysfs "$r/sys"; '
             'mount --bind /dev "$r/dev"; mount --bind /dev/pts "$r/dev/pts"; '
             f'{bind}'
             'exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin '
             'LC_ALL=C HOME=/root DEBIAN_FRONTEND=noninteractive /bin/sh -ec "$1"')
    return ["unshare", "--mount", "--propagation", "private", "sh", "-ec", setup, "sh",
            root, script]


def _chroot_run(root, script, name, kver, log=None):
    """Run script in the chroot (chroot_argv); output to the log file, or
    shown on failure.  Dies on failure."""
    if log:
        with open(log, "a") as f:
            f.write(f"### {script.strip()}\n")
            f.flush()
            rc = subprocess.call(chroot_argv(root, script, name, kver), stdout=f,
                                 stderr=subprocess.STDOUT)
        if rc:
            with open(log, errors="replace") as f:
                tail = f.read()[-6000:]
            util.log(f"{name}: last lines of {log}:\n{tail}")
            util.die(f"{name}: kernel build step failed ({rc}): {script.strip()[:200]}")
        return
    util.run(chroot_argv(root, script, name, kver), quiet=True)


def _ensure_build_packages(root):
    stamp_file = os.path.join(root, ".vfsfast-legacy-packages")
    if os.path.exists(stamp_file) and \
            set(open(stamp_file).read().split()) >= set(BUILD_PACKAGES):
        return
    util.log(f"legacy: installing kernel build packages in {root}: {' '.join(BUILD_PACKAGES)}")
    # The chroot may be shared with other lab runs: wait for their apt.
    util.run(chroot_argv(root, "apt-get -o DPkg::Lock::Timeout=600 update -q && "
                         "apt-get -o DPkg::Lock::Timeout=600 install -y -q "
                         + " ".join(BUILD_PACKAGES)), quiet=True)
    with open(stamp_file, "w") as f:
        f.write("\n".join(BUILD_PACKAGES) + "\n")


def _source_deb(root, name):
    """The cached linux-source-6.1 package (either variant's download
    serves both); downloaded with apt in the chroot the first time."""
    for n in [name] + [v for v in VARIANTS if v != name]:
        found = sorted(glob.glob(os.path.join(util.cache_dir(), n,
                                              f"{SOURCE_PACKAGE}_*_all.deb")))
        if found:
            return found[-1]
    util.log(f"legacy: apt-get download {SOURCE_PACKAGE} (about 140 MB)")
    tmp = "/var/tmp/vfsfast-legacy-dl"
    util.run(chroot_argv(root, f"rm -rf {tmp} && mkdir -p {tmp} && cd {tmp} && "
                         f"apt-get download -q {SOURCE_PACKAGE}"), quiet=True)
    debs = glob.glob(os.path.join(root, tmp.lstrip("/"), f"{SOURCE_PACKAGE}_*_all.deb"))
    if len(debs) != 1:
        util.die(f"legacy: expected one {SOURCE_PACKAGE} package, got {debs}")
    dst = os.path.join(legacy_dir(name), os.path.basename(debs[0]))
    shutil.move(debs[0], dst)
    shutil.rmtree(os.path.join(root, tmp.lstrip("/")))
    return dst


def _unpack(root, deb, name):
    """A fresh tree from the package, patched; returns the kernel release."""
    src = src_dir(name)
    tmp = src + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    util.log(f"{name}: unpacking {os.path.basename(deb)}")
    util.run(["sh", "-ec", f"dpkg-deb --fsys-tarfile '{deb}' | "
              f"tar -xO ./usr/src/{SOURCE_PACKAGE}.tar.xz | "
              f"tar -xJ -C '{tmp}' --strip-components=1"])
    shutil.rmtree(src, ignore_errors=True)
    os.rename(tmp, src)
    v = {}
    with open(os.path.join(src, "Makefile")) as f:
        for line in f:
            k, sep, val = line.partition("=")
            if sep and k.strip() in ("VERSION", "PATCHLEVEL", "SUBLEVEL", "EXTRAVERSION"):
                v[k.strip()] = val.strip()
            if len(v) == 4:
                break
    kver = (f"{v['VERSION']}.{v['PATCHLEVEL']}.{v['SUBLEVEL']}{v['EXTRAVERSION']}"
            f"{VARIANTS[name]['localversion']}")
    patch = VARIANTS[name]["patch"]
    if not patch:
        return kver
    # The chroot's patch(1), reading the repository's patch on stdin.
    for dry in (" --dry-run", ""):
        with open(os.path.join(util.repo_dir(), patch)) as f:
            util.run(chroot_argv(root, f"cd {headers_in_chroot(kver)} && patch -p1 -s{dry}",
                                 name, kver), quiet=True, stdin=f)
    return kver


def _check_config(path, name):
    conf = {}
    with open(path) as f:
        for line in f:
            if line.startswith("CONFIG_"):
                k, _, val = line.strip().partition("=")
                conf[k[len("CONFIG_"):]] = val
    missing = [o for o in CONFIG_ENABLE if conf.get(o) != "y"]
    stuck = [o for o in CONFIG_DISABLE if conf.get(o) in ("y", "m")]
    if missing or stuck:
        util.die(f"{name}: configuration did not take: not =y: {missing}; still on: {stuck}")


def _chroot_modules_dir(root, name, kver):
    """/lib/modules/<release> in the chroot: build -> the tree, and the
    module lists modules_install wrote, for depmod."""
    d = os.path.join(root, "lib/modules", kver)
    os.makedirs(d, exist_ok=True)
    build = os.path.join(d, "build")
    if os.path.lexists(build):
        os.unlink(build)
    os.symlink(headers_in_chroot(kver), build)
    mods = os.path.join(kernel_dir(name), "lib/modules", kver)
    for f in glob.glob(os.path.join(mods, "modules.*")):
        shutil.copyfile(f, os.path.join(d, os.path.basename(f)))


def ensure(name):
    """Make sure the kernel is built for the current recipe; returns
    kernel_dir(name).  Idempotent: a matching stamp means nothing to do."""
    from . import debian
    want = recipe_hash(name)
    s = stamp(name)
    root = debian.ensure_chroot(name)
    if s and s.get("hash") == want and os.path.exists(
            os.path.join(kernel_dir(name), "boot", f"vmlinuz-{s['release']}")):
        if not os.path.islink(os.path.join(root, "lib/modules", s["release"], "build")):
            _chroot_modules_dir(root, name, s["release"])
        return kernel_dir(name)
    with open(os.path.join(legacy_dir(name), ".build.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        s = stamp(name)
        if s and s.get("hash") == want:
            return kernel_dir(name)
        return _build(root, name, want)


def _build(root, name, want):
    if os.path.exists(_stamp_path(name)):
        os.unlink(_stamp_path(name))
    _ensure_build_packages(root)
    deb = _source_deb(root, name)
    kver = _unpack(root, deb, name)
    log = os.path.join(legacy_dir(name), "build.log")
    open(log, "w").close()
    tree = headers_in_chroot(kver)
    enable = " ".join(f"-e {o}" for o in CONFIG_ENABLE)
    disable = " ".join(f"-d {o}" for o in CONFIG_DISABLE)
    _chroot_run(root, f"""
        cd {tree}
        make -s x86_64_defconfig
        scripts/config {enable} {disable} --set-str LOCALVERSION {VARIANTS[name]['localversion']}
        make -s olddefconfig
    """, name, kver, log)
    _check_config(os.path.join(src_dir(name), ".config"), name)
    jobs = os.cpu_count() or 1
    util.log(f"{name}: building {kver} with {jobs} jobs at nice 19 (log: {log}); "
             "about 17 CPU-minutes, 30 minutes of wall time on 2 busy CPUs")
    t0 = time.monotonic()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    _chroot_run(root, f"cd {tree} && nice -n 19 make -j{jobs} bzImage modules && "
                f'test "$(cat include/config/kernel.release)" = {kver}', name, kver, log)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.monotonic() - t0
    cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
    util.log(f"{name}: built in {wall / 60:.1f} min wall, {cpu / 60:.1f} min CPU")
    # Install into a staging directory inside the tree, then lay out
    # kernel/ as an unpacked image package.
    _chroot_run(root, f"cd {tree} && rm -rf .lab-install && "
                "make -s modules_install INSTALL_MOD_PATH=.lab-install", name, kver, log)
    kdir = kernel_dir(name)
    shutil.rmtree(kdir, ignore_errors=True)
    os.makedirs(os.path.join(kdir, "boot"))
    src = src_dir(name)
    shutil.copyfile(os.path.join(src, "arch/x86/boot/bzImage"),
                    os.path.join(kdir, "boot", f"vmlinuz-{kver}"))
    shutil.copyfile(os.path.join(src, "System.map"), os.path.join(kdir, "boot", f"System.map-{kver}"))
    shutil.copyfile(os.path.join(src, ".config"), os.path.join(kdir, "boot", f"config-{kver}"))
    os.makedirs(os.path.join(kdir, "lib/modules"))
    os.rename(os.path.join(src, ".lab-install/lib/modules", kver),
              os.path.join(kdir, "lib/modules", kver))
    shutil.rmtree(os.path.join(src, ".lab-install"))
    for link in ("build", "source"):
        p = os.path.join(kdir, "lib/modules", kver, link)
        if os.path.lexists(p):
            os.unlink(p)
    _chroot_modules_dir(root, name, kver)
    with open(_stamp_path(name), "w") as f:
        json.dump({"hash": want, "release": kver, "source": os.path.basename(deb),
                   "build_wall_s": round(wall), "build_cpu_s": round(cpu),
                   "jobs": jobs, "date": time.strftime("%Y-%m-%d %H:%M:%S")}, f)
        f.write("\n")
    return kdir
