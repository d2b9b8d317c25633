"""Per-release Debian chroots and stock kernels for the vfsfast lab.

Each target kernel is built for in a chroot of its own release, so the module
is compiled by the compiler Debian built that kernel with.  Nothing here
touches the host's apt sources: debootstrap makes the chroots, and the kernel
packages are downloaded by apt inside them.
"""

import contextlib
import glob
import os
import re
import shutil
import subprocess
import sys

from . import util

# One entry per lab kernel: the release that ships it and the compiler that
# built it (the headers package depends on it, so apt installs it).
# "legacy" is no Debian package: the lab builds it (legacy.py) from
# bookworm's linux-source-6.1 with fsnotify as before Linux 5.8, in the
# bookworm chroot with its gcc-12; "legacy-ref" is the same build without
# the revert, the baseline legacy is measured against.  "5.10-debug" and
# "6.12-debug" are built too (debugk.py): Debian's 5.10 and 6.12 from their
# linux-source packages with KASAN, lockdep and the other checkers, each
# tested as its "base" kernel.  None of these is among the defaults.
KERNELS = {
    "5.10": {"release": "bullseye", "gcc": "gcc-10"},
    "6.1": {"release": "bookworm", "gcc": "gcc-12"},
    "6.12": {"release": "trixie", "gcc": "gcc-14"},
    "7.2": {"release": "sid", "gcc": "gcc"},
    "legacy": {"release": "bookworm", "gcc": "gcc-12", "built": True},
    "legacy-ref": {"release": "bookworm", "gcc": "gcc-12", "built": True},
    "5.10-debug": {"release": "bullseye", "gcc": "gcc-10", "built": True, "debug": True,
                   "base": "5.10"},
    "6.12-debug": {"release": "trixie", "gcc": "gcc-14", "built": True, "debug": True,
                   "base": "6.12"},
}

# What `--kernels` means when not given: Debian's own kernels.
DEFAULT_KERNELS = ["5.10", "6.1", "6.12", "7.2"]


def is_built(kernel):
    """True for a kernel the lab compiles itself (legacy, the debug
    kernels) rather than downloads from Debian."""
    return KERNELS[kernel].get("built", False)


def is_debug(kernel):
    """True for a lab-built debug kernel (KASAN, lockdep): slower guests."""
    return KERNELS[kernel].get("debug", False)


def base_kernel(kernel):
    """The kernel whose expectations a kernel's tests share: a debug
    kernel's stock Debian kernel ("5.10-debug" -> "5.10"), else itself."""
    return KERNELS[kernel].get("base", kernel)


def _builder(kernel):
    """The module that builds a lab-built kernel: debugk for the debug
    kernels, legacy for legacy and legacy-ref.  Imported here, not at the
    top: both import this module."""
    if is_debug(kernel):
        from . import debugk
        return debugk
    from . import legacy
    return legacy

MIRROR = os.environ.get("VFSFAST_MIRROR", "http://deb.debian.org/debian")

# What every chroot needs to build and DKMS-install the module.
CHROOT_PACKAGES = ["make", "gcc", "libc6-dev", "dkms", "kmod", "xz-utils",
                   "zstd", "sparse", "linux-headers-amd64",
                   # external validators run in the guests
                   "stress-ng", "rt-tests"]

APT_CONF = """\
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Check-Valid-Until "false";
Acquire::Retries "5";
Dpkg::Use-Pty "false";
"""


def chroot_dir(kernel):
    return os.path.join(util.cache_dir(), "chroots", KERNELS[kernel]["release"])


@contextlib.contextmanager
def mounted(root):
    """Bind /proc, /dev and /sys into a chroot for the duration of a block.

    7.2's objtool reads /proc, dpkg scripts want /dev; everything is
    unmounted again however the block ends.
    """
    done = []
    try:
        for fs, args in (("proc", ["-t", "proc", "proc"]),
                         ("sys", ["-t", "sysfs", "sysfs"]),
                         ("dev", ["--bind", "/dev"]),
                         ("dev/pts", ["--bind", "/dev/pts"])):
            target = os.path.join(root, fs)
            os.makedirs(target, exist_ok=True)
            if os.path.ismount(target):
                continue
            util.run(["mount"] + args + [target])
            done.append(target)
        yield
    finally:
        for target in reversed(done):
            subprocess.call(["umount", "-l", target])


def in_chroot(root, script, **kw):
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C",
           "DEBIAN_FRONTEND": "noninteractive", "HOME": "/root"}
    return util.run(["chroot", root, "/bin/sh", "-ec", script], env=env, **kw)


def ensure_chroot(kernel):
    """Create (or reuse) the build chroot of a kernel's release."""
    release = KERNELS[kernel]["release"]
    root = chroot_dir(kernel)
    stamp = os.path.join(root, ".vfsfast-ready")
    if os.path.exists(stamp):
        # The stamp lists what was installed: top up an older chroot.
        have = set(open(stamp).read().split())
        missing = [p for p in CHROOT_PACKAGES if p not in have]
        if missing:
            _apt_install(root, missing, stamp)
        return root
    if os.path.exists(root):
        util.log(f"{release}: removing incomplete chroot {root}")
        subprocess.call(["umount", "-R", "-l", root], stderr=subprocess.DEVNULL)
        shutil.rmtree(root)
    util.log(f"{release}: debootstrap into {root} (a few minutes)")
    os.makedirs(os.path.dirname(root), exist_ok=True)
    util.run(["debootstrap", "--variant=minbase", release, root, MIRROR],
             quiet=True)
    with open(os.path.join(root, "etc/apt/apt.conf.d/99vfsfast"), "w") as f:
        f.write(APT_CONF)
    with open(os.path.join(root, "etc/apt/sources.list"), "w") as f:
        f.write(f"deb {MIRROR} {release} main\n")
    _apt_install(root, CHROOT_PACKAGES, stamp)
    return root


def _apt_install(root, packages, stamp):
    with mounted(root):
        in_chroot(root, "apt-get update -q && apt-get install -y -q "
                  + " ".join(packages), quiet=True)
    with open(stamp, "w") as f:
        f.write("\n".join(CHROOT_PACKAGES) + "\n")


def chroot_programs(kernel, programs):
    """{guest path: host path} for dynamically linked programs of a
    release's chroot and every library they load (ldd), so the guest can
    run the release's own build of them."""
    root = chroot_dir(kernel)
    files = {}
    for prog in programs:
        files[prog] = os.path.join(root, prog.lstrip("/"))
        out = in_chroot(root, f"ldd {prog}", capture=True)
        for m in re.finditer(r"(?:=>\s*)?(/\S+)\s+\(0x", out):
            files[m.group(1)] = _in_root(root, m.group(1))
    return files


def _in_root(root, path):
    """Host path of the file @path names inside chroot @root, following
    symbolic links as the chroot would."""
    p = os.path.join(root, path.lstrip("/"))
    for _ in range(40):
        if not os.path.islink(p):
            return p
        t = os.readlink(p)
        p = os.path.join(root, t.lstrip("/")) if t.startswith("/") else \
            os.path.join(os.path.dirname(p), t)
    util.die(f"{path}: too many symbolic links in {root}")


def headers_release(kernel):
    """The kernel release string (uname -r) whose headers the chroot has."""
    if is_built(kernel):
        return _builder(kernel).release(kernel)
    root = chroot_dir(kernel)
    found = sorted(
        os.path.basename(p)[len("linux-headers-"):]
        for p in glob.glob(os.path.join(root, "usr/src/linux-headers-*-amd64")))
    if len(found) != 1:
        util.die(f"{kernel}: expected one amd64 headers tree in {root}, found {found}")
    return found[0]


def kernel_dir(kernel):
    if is_built(kernel):
        return _builder(kernel).kernel_dir(kernel)
    return os.path.join(util.cache_dir(), "kernels", headers_release(kernel))


def headers_dir(kernel):
    """Host path of the tree the module builds against (KDIR)."""
    if is_built(kernel):
        return _builder(kernel).src_dir(kernel)
    return os.path.join(chroot_dir(kernel), "usr/src", f"linux-headers-{headers_release(kernel)}")


def source_header(kernel, rel):
    """Host path of a kernel source header (e.g. include/linux/fs.h): in
    Debian's -common headers package, or in a lab-built kernel's tree."""
    if is_built(kernel):
        return os.path.join(headers_dir(kernel), rel)
    kver = headers_release(kernel)
    return os.path.join(chroot_dir(kernel), "usr/src",
                        f"linux-headers-{kver.rsplit('-', 1)[0]}-common", rel)


def chroot_argv(kernel, script):
    """argv running `sh -ec script` in the kernel's chroot.  Run a Debian
    kernel's inside mounted(); a lab-built kernel's mounts what it needs,
    its tree included, privately (legacy.chroot_argv, debugk.chroot_argv)."""
    if is_built(kernel):
        return _builder(kernel).chroot_argv(chroot_dir(kernel), script, kernel)
    return ["chroot", chroot_dir(kernel), "/bin/sh", "-ec", script]


def ensure_kernel(kernel):
    """Download and unpack the stock kernel image and modules of a release.

    Returns the directory holding boot/vmlinuz-* and lib/modules/<release>.
    The lab-built kernels are built instead (legacy.ensure(kernel),
    debugk.ensure(kernel)), into the same layout.
    """
    if is_built(kernel):
        return _builder(kernel).ensure(kernel)
    root = ensure_chroot(kernel)
    kver = headers_release(kernel)
    kdir = kernel_dir(kernel)
    stamp = os.path.join(kdir, ".vfsfast-ready")
    if os.path.exists(stamp):
        return kdir
    if os.path.exists(kdir):
        shutil.rmtree(kdir)
    util.log(f"{kernel}: downloading linux-image {kver}")
    # The image package of 7.2 is a stub depending on linux-binary-* and
    # linux-modules-*; the older releases ship everything in one package.
    # Debian's unsigned image has the same kernel as the signed one.
    script = f"""
        rm -rf /var/tmp/vfsfast-kernel && mkdir -p /var/tmp/vfsfast-kernel
        cd /var/tmp/vfsfast-kernel
        img=linux-image-{kver}-unsigned
        apt-cache show "$img" >/dev/null 2>&1 || img=linux-image-{kver}
        pkgs="$img $(apt-cache depends "$img" | sed -n 's/^ *Depends: \\(linux-\\(binary\\|modules\\)-[^ ]*\\)$/\\1/p')"
        apt-get download -q $pkgs
        ls *.deb
    """
    with mounted(root):
        in_chroot(root, script, quiet=True)
    debs = glob.glob(os.path.join(root, "var/tmp/vfsfast-kernel/*.deb"))
    if not debs:
        util.die(f"{kernel}: no kernel packages were downloaded")
    os.makedirs(kdir)
    for deb in debs:
        util.run(["dpkg-deb", "-x", deb, kdir])
    shutil.rmtree(os.path.join(root, "var/tmp/vfsfast-kernel"))
    if not _find(kdir, ["boot/vmlinuz-*", "usr/lib/modules/*/vmlinuz"]):
        util.die(f"{kernel}: no vmlinuz in {debs}")
    open(stamp, "w").close()
    return kdir


def _find(kdir, patterns):
    for pat in patterns:
        hits = glob.glob(os.path.join(kdir, pat))
        if hits:
            return hits[0]
    return None


# 7.2 moved the image and its config into /usr/lib/modules/<release>/.
def vmlinuz(kernel):
    return _find(kernel_dir(kernel), ["boot/vmlinuz-*", "usr/lib/modules/*/vmlinuz"])


def modules_dir(kernel):
    kver = headers_release(kernel)
    return _find(kernel_dir(kernel), [f"lib/modules/{kver}", f"usr/lib/modules/{kver}"])


def kconfig(kernel):
    path = _find(kernel_dir(kernel), ["boot/config-*", "usr/lib/modules/*/config"])
    conf = {}
    with open(path) as f:
        for line in f:
            if line.startswith("CONFIG_"):
                k, _, v = line.strip().partition("=")
                conf[k] = v
    return conf


def setup(kernels):
    for k in kernels:
        ensure_kernel(k)
        util.log(f"{k}: ready: {headers_release(k)} in {chroot_dir(k)}")


if __name__ == "__main__":
    setup(sys.argv[1:] or DEFAULT_KERNELS)


CHECKPATCH_FILES = ["scripts/checkpatch.pl", "scripts/spelling.txt",
                    "scripts/const_structs.checkpatch"]


def checkpatch():
    """checkpatch.pl and its data files, from bookworm's linux-source-6.1.

    Only the kernel source tarball ships them, not the headers packages.
    """
    d = os.path.join(util.cache_dir(), "checkpatch")
    script = os.path.join(d, "scripts/checkpatch.pl")
    if os.path.exists(script):
        return script
    root = ensure_chroot("6.1")
    with mounted(root):
        in_chroot(root, "rm -rf /var/tmp/ls && mkdir -p /var/tmp/ls && cd /var/tmp/ls && "
                  "apt-get download -q linux-source-6.1", quiet=True)
    deb = glob.glob(os.path.join(root, "var/tmp/ls/linux-source-6.1_*.deb"))[0]
    tmp = d + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    members = " ".join(f"linux-source-6.1/{f}" for f in CHECKPATCH_FILES)
    util.run(["sh", "-ec", f"dpkg-deb --fsys-tarfile '{deb}' | "
              "tar -xO ./usr/src/linux-source-6.1.tar.xz | "
              f"tar -xJ -C '{tmp}' --strip-components=1 {members}"])
    shutil.rmtree(os.path.join(root, "var/tmp/ls"))
    shutil.rmtree(d, ignore_errors=True)
    os.rename(tmp, d)
    return script
