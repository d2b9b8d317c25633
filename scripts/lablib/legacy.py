"""The lab-built kernels: "legacy", 6.1 with fsnotify as it was before
Linux 5.8, and "legacy-ref", the same source and configuration without the
revert, to subtract from it.

Debian no longer ships 4.19 or 5.4, whose fsnotify hooks have none of the
fast paths later kernels added for the case where nobody watches.  This
builds one: bookworm's linux-source-6.1 (fetched with apt inside the
bookworm chroot, as style.checkpatch() does), patched with
tests/legacy/fsnotify-pre-5.8.patch, configured from x86_64_defconfig plus
what the lab needs (everything the guest uses built in), and compiled in
the bookworm chroot by its gcc-12.

"legacy-ref" exists because stock Debian 6.1 cannot be compared with the
legacy kernel instruction for instruction: its configuration differs in
ways that have nothing to do with fsnotify.  legacy-ref differs from legacy
only by the patch, so legacy-ref minus legacy is the saving upstream's
fast paths give, and the knobs on legacy can be measured against it.

Everything lives in <cache>/<name> (legacy, legacy-ref), laid out as
kbuild.py describes: the source package, the patched and built tree (the
module's KDIR, seen in the bookworm chroot as
/usr/src/linux-headers-<release>), kernel/ and the stamp.  The machinery
(stamp, chroot commands, download, unpacking, build and layout) is
kbuild.Family's, shared with the debug kernels (debugk.py).

The stamp holds a hash of the patch, the configuration lists and the build
recipe; when any of them changes, the tree is unpacked afresh and rebuilt.
"""

import hashlib
import json
import os

from . import debian, kbuild, kernel, util

# Both are built in the bookworm chroot by its gcc-12.
RELEASE = "bookworm"
GCC = "gcc-12"
SOURCE_PACKAGE = "linux-source-6.1"

# name -> the patch applied to the source (or None), the release suffix
# and the source package (both the same: one download serves both).
VARIANTS = {
    "legacy": {"patch": "tests/legacy/fsnotify-pre-5.8.patch",
               "localversion": "-vfsfast-legacy", "source": SOURCE_PACKAGE},
    "legacy-ref": {"patch": None, "localversion": "-vfsfast-ref", "source": SOURCE_PACKAGE},
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


FAMILY = kbuild.Family(VARIANTS, "legacy", BUILD_PACKAGES, lambda name: ensure(name),
                       "about 140 MB", label="legacy")

src_dir, chroot_argv = FAMILY.src_dir, FAMILY.chroot_argv


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


def _unpack(root, deb, name):
    """A fresh tree from the package, patched; returns the kernel release."""
    kver = FAMILY.unpack(deb, name)
    patch = VARIANTS[name]["patch"]
    if not patch:
        return kver
    # The chroot's patch(1), reading the repository's patch on stdin.
    for dry in (" --dry-run", ""):
        with open(os.path.join(util.repo_dir(), patch)) as f:
            util.run(chroot_argv(root, f"cd {kbuild.headers_in_chroot(kver)} && patch -p1 -s{dry}",
                                 name, kver), quiet=True, stdin=f)
    return kver


def _check_config(path, name):
    conf = kbuild.read_config(path)
    missing = [o for o in CONFIG_ENABLE if conf.get(o) != "y"]
    stuck = [o for o in CONFIG_DISABLE if conf.get(o) in ("y", "m")]
    if missing or stuck:
        util.die(f"{name}: configuration did not take: not =y: {missing}; still on: {stuck}")


def ensure(name):
    """Make sure the kernel is built for the current recipe; returns
    kernel_dir(name).  Idempotent: a matching stamp means nothing to do."""
    want = recipe_hash(name)
    root = debian.ensure_chroot(RELEASE)
    return FAMILY.ensure(name, root, want, lambda: _build(root, name, want))


def _build(root, name, want):
    deb = FAMILY.start(root, name)
    kver = _unpack(root, deb, name)
    log = FAMILY.new_log(name)
    tree = kbuild.headers_in_chroot(kver)
    enable = " ".join(f"-e {o}" for o in CONFIG_ENABLE)
    disable = " ".join(f"-d {o}" for o in CONFIG_DISABLE)
    FAMILY.chroot_run(root, f"""
        cd {tree}
        make -s x86_64_defconfig
        scripts/config {enable} {disable} --set-str LOCALVERSION {VARIANTS[name]['localversion']}
        make -s olddefconfig
    """, name, kver, log)
    _check_config(os.path.join(src_dir(name), ".config"), name)
    return FAMILY.compile(root, name, kver, log,
                          "about 17 CPU-minutes, 30 minutes of wall time on 2 busy CPUs",
                          {"hash": want, "release": kver, "source": os.path.basename(deb)})


KIND = kbuild.BuiltKind(FAMILY, ensure)
for _name in VARIANTS:
    kernel.register(kernel.Kernel(_name, RELEASE, GCC, KIND))
