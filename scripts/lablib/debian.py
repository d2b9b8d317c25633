"""Per-release Debian chroots and stock kernels for the vfsfast lab.

Each target kernel is built for in a chroot of its own release, so the module
is compiled by the compiler Debian built that kernel with.  Nothing here
touches the host's apt sources: debootstrap makes the chroots, and the kernel
packages are downloaded by apt inside them.
"""

import contextlib
import fcntl
import glob
import os
import re
import shutil
import subprocess

from . import arch as arch_mod
from . import kernel as kernel_mod
from . import util

# Debian's stock kernels: the release that ships each and the compiler
# that built it (the headers package depends on it, so apt installs it).
# The lab-built kernels (legacy.py, debugk.py) register themselves.
#
# A "pin" names one kernel by ABI and package version, from the suite
# given (added to that release's chroot only): bookworm hosts that take
# security updates run bookworm-security's 6.1, not the point release's,
# and a pin keeps the figures reproducible when the suite moves on.  The
# others follow their release's linux-headers-amd64.  Moving a pin:
# Documentation/lab.md, "Which kernels".
KERNELS = {
    "5.10": {"release": "bullseye", "gcc": "gcc-10"},
    "6.1": {"release": "bookworm", "gcc": "gcc-12",
            "pin": {"suite": "bookworm-security", "abi": "6.1.0-56", "version": "6.1.192-2"}},
    "6.12": {"release": "trixie", "gcc": "gcc-14"},
    "7.2": {"release": "sid", "gcc": "gcc"},
}

# Debian's flavours of each of those kernels the lab boots, with the
# suffix of their lab names: the generic one ("6.1"), and the one Debian's
# cloud images boot ("6.1-cloud", linux-image-cloud-amd64: a smaller
# config for virtual machines).  A flavour is the end of uname -r after
# the ABI; both share the release's chroot (and a pin's ABI and version),
# which installs the headers of each.
FLAVOURS = {"amd64": "", "cloud-amd64": "-cloud"}

# What `--kernels` means when not given: Debian's own kernels.
DEFAULT_KERNELS = list(KERNELS)

MIRROR = os.environ.get("VFSFAST_MIRROR", "http://deb.debian.org/debian")
SECURITY_MIRROR = os.environ.get("VFSFAST_SECURITY_MIRROR",
                                 "http://deb.debian.org/debian-security")


def _pin(release):
    """The pin of the stock kernel of a release's chroot, or None."""
    for facts in KERNELS.values():
        if facts["release"] == release:
            return facts.get("pin")
    return None


def _sources(release):
    """The chroot's sources.list: the release, and a pinned kernel's suite."""
    lines = [f"deb {MIRROR} {release} main"]
    pin = _pin(release)
    if pin and pin["suite"].endswith("-security"):
        lines.append(f"deb {SECURITY_MIRROR} {pin['suite']} main")
    elif pin:
        lines.append(f"deb {MIRROR} {pin['suite']} main")
    return "\n".join(lines) + "\n"


def _preferences(release):
    """apt's preferences for a pinned kernel's suite: only the kernel's own
    packages come from it; everything else (linux-source-6.1, from which
    the legacy kernels are built, the compiler, libc) stays the release's,
    so the pin moves nothing else.  None without a pin."""
    pin = _pin(release)
    if not pin:
        return None
    return (f"Package: *\nPin: release n={pin['suite']}\nPin-Priority: 100\n\n"
            f"Package: linux-headers-* linux-image-* linux-kbuild-* linux-compiler-* "
            f"linux-binary-* linux-modules-*\nPin: release n={pin['suite']}\n"
            f"Pin-Priority: 500\n")


def _write_apt_sources(root, release):
    """sources.list, and the preferences of a pinned kernel's suite."""
    with open(os.path.join(root, "etc/apt/sources.list"), "w") as f:
        f.write(_sources(release))
    prefs = os.path.join(root, "etc/apt/preferences.d/vfsfast-pin")
    if _preferences(release):
        os.makedirs(os.path.dirname(prefs), exist_ok=True)
        with open(prefs, "w") as f:
            f.write(_preferences(release))
    elif os.path.exists(prefs):
        os.unlink(prefs)


def _headers_package(release, flavour):
    """The headers package of a release's kernel of @flavour: the pinned
    ABI and version where the release has a pin, else the release's
    metapackage (linux-headers-amd64, linux-headers-cloud-amd64)."""
    pin = _pin(release)
    if pin:
        return f"linux-headers-{pin['abi']}-{flavour}={pin['version']}"
    return f"linux-headers-{flavour}"


def _packages(release):
    """What the chroot of a release installs: CHROOT_PACKAGES and the
    headers of every flavour."""
    return CHROOT_PACKAGES + [_headers_package(release, f) for f in FLAVOURS]

# What every chroot needs to build and DKMS-install the module.
CHROOT_PACKAGES = ["make", "gcc", "libc6-dev", "dkms", "kmod", "xz-utils",
                   "zstd", "sparse",
                   # external validators run in the guests
                   "stress-ng", "rt-tests",
                   # the release's mke2fs, which `run --mke2fs` carries
                   # (trixie's minbase chroot has none)
                   "e2fsprogs"]

APT_CONF = """\
APT::Install-Recommends "false";
APT::Install-Suggests "false";
Acquire::Check-Valid-Until "false";
Acquire::Retries "5";
Dpkg::Use-Pty "false";
"""


chroot_dir = kernel_mod.chroot_dir


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


@contextlib.contextmanager
def setup_lock(release):
    """One kernel of a release set up at a time: suite.main() sets kernels
    up side by side, and kernels of one release (6.12, 6.12-cloud,
    6.12-arm64) share its chroot, which the first must finish making (and
    its /var/tmp, where each downloads its packages) before the next
    looks.  A lock file beside the chroots: flock() holds across threads
    as across lab runs."""
    d = os.path.dirname(chroot_dir(release))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f".{release}.setup.lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def ensure_chroot(release):
    """Create (or reuse) the build chroot of a release (a Kernel's
    .release); returns its path."""
    root = chroot_dir(release)
    stamp = os.path.join(root, ".vfsfast-ready")
    if os.path.exists(stamp):
        # The stamp lists what was installed: top up an older chroot
        # (a moved pin is a package it lacks, from a suite it may lack).
        have = set(open(stamp).read().split())
        missing = [p for p in _packages(release) if p not in have]
        if missing:
            _write_apt_sources(root, release)
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
    _write_apt_sources(root, release)
    _apt_install(root, _packages(release), stamp)
    return root


def _apt_install(root, packages, stamp):
    release = os.path.basename(root)
    pin = _pin(release)
    try:
        with mounted(root):
            in_chroot(root, "apt-get update -q && apt-get install -y -q "
                      + " ".join(packages), quiet=True)
    except SystemExit:
        if pin:
            util.log(f"{release}: could not install the pinned kernel headers "
                     f"{' '.join(_headers_package(release, f) for f in FLAVOURS)} from "
                     f"{pin['suite']}; if the suite has dropped that version, move the pin "
                     "(scripts/lablib/debian.py, KERNELS; Documentation/lab.md, "
                     "\"Which kernels\")")
        raise
    with open(stamp, "w") as f:
        f.write("\n".join(_packages(release)) + "\n")


def release_qemu(release, arch):
    """The argv that runs the release's own build of the architecture's
    qemu (arch.Arch.host_packages), installed in its chroot once, on the
    host: through the chroot's loader and libraries, so that the guest's
    files need not be inside the chroot, with its firmware directory."""
    root = chroot_dir(release)
    prog = os.path.join(root, "usr/bin", arch.qemu)
    with setup_lock(release):
        ensure_chroot(release)
        if not os.path.exists(prog):
            util.log(f"{release}: installing {' '.join(arch.host_packages)} in its chroot "
                     "for the guests")
            with mounted(root):
                in_chroot(root, "apt-get install -y -q --no-install-recommends "
                          + " ".join(arch.host_packages), quiet=True)
    libs = ":".join(os.path.join(root, d) for d in (f"usr/lib/{arch_mod.AMD64.multiarch}",
                                                     "usr/lib"))
    return [os.path.join(root, "usr/lib64/ld-linux-x86-64.so.2"), "--library-path", libs,
            prog, "-L", os.path.join(root, "usr/share/qemu")]


def chroot_programs(kernel, programs):
    """{guest path: host path} for dynamically linked programs of a
    release's chroot and every library they load (ldd), so the guest can
    run the release's own build of them.  kernel: a kernel.Kernel; for a
    kernel of another architecture, the same programs of that
    architecture (foreign_programs())."""
    if kernel.cross:
        return foreign_programs(kernel, programs)
    root = kernel.chroot_dir
    files = {}
    for prog in programs:
        files[prog] = os.path.join(root, prog.lstrip("/"))
        out = in_chroot(root, f"ldd {prog}", capture=True)
        for m in re.finditer(r"(?:=>\s*)?(/\S+)\s+\(0x", out):
            files[m.group(1)] = _in_root(root, m.group(1))
    return files


def _owner(root, prog):
    """The package of the chroot that installed @prog, under either of
    merged-/usr's names."""
    names = [prog, prog[4:] if prog.startswith("/usr/") else "/usr" + prog]
    for name in names:
        out = subprocess.run(["chroot", root, "dpkg-query", "-S", name], capture_output=True,
                             text=True, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"})
        if out.returncode == 0:
            return out.stdout.split(":")[0]
    util.die(f"{root}: no package installed {prog}")


# Where a release's chroot keeps packages of another architecture
# unpacked (dpkg-deb -x, never installed: no maintainer script of a
# foreign architecture could run, and apt would replace the chroot's own
# libraries), and the stamp there listing them.
def _foreign_root(kernel):
    return os.path.join(kernel.chroot_dir, f"opt/vfsfast/root-{kernel.arch}")


def foreign_download(kernel, names, dest, apt_root=None):
    """Download each package of @names built for the kernel's architecture
    (a package named for amd64's triplet, gcc-14-x86-64-linux-gnu, as the
    architecture's own; an Architecture: all one as it is) with the apt
    of @apt_root (the release's chroot, or an overlay of it), and unpack
    it into @dest as dpkg would over a merged /usr: a top-level link dest
    already has (lib -> usr/lib) is kept.  Returns the names of which the
    architecture has no build."""
    root, a = apt_root or kernel.chroot_dir, kernel.arch
    # apt-cache depends of a chroot with both architectures names some
    # packages as pkg:arch
    names = sorted({n.split(":")[0] for n in names})
    ours, theirs = (x.multiarch.replace("_", "-") for x in (arch_mod.AMD64, a))
    got = "/var/tmp/vfsfast-foreign"
    in_chroot(root, f"""
        rm -rf {got} && mkdir -p {got} && cd {got}
        for p in {' '.join(names)}; do
            q=$(echo $p | sed 's/{ours}/{theirs}/')
            apt-get download -q $q:{a} >/dev/null 2>&1 && continue
            if apt-cache show --no-all-versions $p 2>/dev/null | grep -qx 'Architecture: all'; then
                apt-get download -q $p >/dev/null
            else
                echo $p >> {got}.missing
            fi
        done
    """, quiet=True)
    os.makedirs(dest, exist_ok=True)
    host = os.path.join(root, got.lstrip("/"))
    for deb in sorted(glob.glob(os.path.join(host, "*.deb"))):
        util.run(["sh", "-ec", f"dpkg-deb --fsys-tarfile '{deb}' | "
                  f"tar -C '{dest}' -x --keep-directory-symlink"])
    missing = open(host + ".missing").read().split() if os.path.exists(host + ".missing") else []
    shutil.rmtree(host)
    if os.path.exists(host + ".missing"):
        os.unlink(host + ".missing")
    return missing


def foreign_unpack(kernel, packages):
    """Unpack @packages of the kernel's architecture, with everything they
    depend on (apt-cache depends --recurse, no recommends), into
    _foreign_root(), once each (foreign_download()); returns that
    directory."""
    dest = _foreign_root(kernel)
    stamp = os.path.join(dest, ".vfsfast-packages")
    have = set(open(stamp).read().split()) if os.path.exists(stamp) else set()
    if all(p in have for p in packages):
        return dest
    root, a = kernel.chroot_dir, kernel.arch
    util.log(f"{kernel}: unpacking {' '.join(f'{p}:{a}' for p in packages)} and what "
             f"they depend on")
    listing = "/var/tmp/vfsfast-foreign.list"
    with mounted(root):
        in_chroot(root, f"""
            apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts \
                --no-breaks --no-replaces --no-enhances {' '.join(f'{p}:{a}' for p in packages)} |
                grep '^[a-z0-9]' | sed 's/:{a}$//' | sort -u > {listing}
        """, quiet=True)
        want = [p for p in open(os.path.join(root, listing.lstrip("/"))).read().split()
                if p not in have]
        foreign_download(kernel, want, dest)
    with open(stamp, "w") as f:
        f.write("\n".join(sorted(have | set(want) | set(packages))) + "\n")
    return dest


def _elf(path, what):
    """readelf's answer for an ELF file of any architecture: the
    libraries it needs (NEEDED), or its interpreter, [] for none."""
    if what == "needed":
        out = util.run(["readelf", "-d", path], capture=True)
        return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    out = util.run(["readelf", "-l", path], capture=True)
    return re.findall(r"Requesting program interpreter: ([^\]]+)\]", out)


def foreign_programs(kernel, programs, packages=None):
    """chroot_programs() for a kernel of another architecture: the same
    programs, and every library they load, from the packages of that
    architecture that install them in the amd64 chroot (or @packages),
    unpacked by foreign_unpack().  No ldd can run a foreign program, so
    the libraries are its NEEDED entries, found where the release's
    loader looks (the multiarch directories, then /lib), and the loader
    itself at the path the program asks for."""
    root = kernel.chroot_dir
    dest = foreign_unpack(kernel, packages or sorted({_owner(root, p) for p in programs}))
    multiarch = kernel.arch.multiarch
    dirs = [f"usr/lib/{multiarch}", f"lib/{multiarch}", "usr/lib", "lib"]

    def find(path):
        for name in (path, path[4:] if path.startswith("/usr/") else "/usr" + path):
            host = _in_root(dest, name)
            if os.path.isfile(host):
                return host
        return None

    files, todo = {}, []
    for prog in programs:
        host = find(prog)
        if not host:
            util.die(f"{kernel}: the {kernel.arch} packages install no {prog}")
        files[prog] = host
        todo.append(host)
    seen = set()
    while todo:
        host = todo.pop()
        if host in seen:
            continue
        seen.add(host)
        for interp in _elf(host, "interp"):
            files[interp] = find(interp) or util.die(f"{kernel}: no {interp} in {dest}")
        for lib in _elf(host, "needed"):
            found = next((d for d in dirs if os.path.isfile(_in_root(dest, f"/{d}/{lib}"))), None)
            if not found:
                util.die(f"{kernel}: {lib}, which {os.path.basename(host)} needs, is not in "
                         f"the {kernel.arch} packages unpacked in {dest}")
            files[f"/{found}/{lib}".replace("/usr/lib/", "/lib/", 1)] = \
                _in_root(dest, f"/{found}/{lib}")
            todo.append(_in_root(dest, f"/{found}/{lib}"))
    return files


def package_programs(kernel, package, programs):
    """{guest path: host path} for programs of a release's package that
    the chroot does not install (apparmor's postinst would load profiles
    into the host's kernel): the package is downloaded once into the
    chroot and unpacked under /opt/vfsfast/<package>, unconfigured, and
    each program is found there under /usr/sbin or /sbin (bullseye's
    apparmor keeps /sbin).  Libraries as chroot_programs()."""
    if kernel.cross:
        return foreign_programs(kernel, programs, [package])
    root = kernel.chroot_dir
    unpacked = f"/opt/vfsfast/{package}"
    if not os.path.isdir(os.path.join(root, unpacked.lstrip("/"))):
        in_chroot(root, f"rm -rf {unpacked}.tmp && mkdir -p {unpacked}.tmp && cd {unpacked}.tmp && "
                  f"apt-get -q download {package} >/dev/null 2>&1 && "
                  f"dpkg-deb -x {package}_*.deb . && rm -f {package}_*.deb && "
                  f"mv {unpacked}.tmp {unpacked}")
    files = {}
    for prog in programs:
        name = os.path.basename(prog)
        found = [d for d in ("usr/sbin", "sbin", "usr/bin", "bin")
                 if os.path.isfile(os.path.join(root, unpacked.lstrip("/"), d, name))]
        if not found:
            util.die(f"{package} of {kernel.release} has no {name}")
        files.update(chroot_programs(kernel, [f"{unpacked}/{found[0]}/{name}"]))
        files[prog] = files.pop(f"{unpacked}/{found[0]}/{name}")
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


class DebianKind(kernel_mod.Kind):
    """Debian's stock kernels: the image package unpacked into
    <cache>/kernels/<release>, the headers installed by apt in the
    release's chroot."""

    def release(self, k):
        pin = _pin(k.release)
        if pin:
            # The chroot may keep the headers of a pin moved since.
            kver = f"{pin['abi']}-{k.flavour}"
            if not os.path.isdir(os.path.join(k.chroot_dir, "usr/src", f"linux-headers-{kver}")):
                util.die(f"{k}: the pinned headers linux-headers-{kver} are not in "
                         f"{k.chroot_dir}")
            return kver
        found = sorted(kver for kver in (
            os.path.basename(p)[len("linux-headers-"):]
            for p in glob.glob(os.path.join(k.chroot_dir, "usr/src/linux-headers-*")))
            if flavour_of(kver) == k.flavour)
        if len(found) != 1:
            util.die(f"{k}: expected one {k.flavour} headers tree in {k.chroot_dir}, "
                     f"found {found}")
        return found[0]

    def kernel_dir(self, k):
        return os.path.join(util.cache_dir(), "kernels", k.kver)

    cache_dir = kernel_dir

    def headers_dir(self, k):
        return os.path.join(k.chroot_dir, "usr/src", f"linux-headers-{k.kver}")

    def source_header(self, k, rel):
        """In Debian's -common headers package (one per ABI, every
        flavour's)."""
        return os.path.join(k.chroot_dir, "usr/src",
                            f"linux-headers-{k.kver[:-len(k.flavour)]}common", rel)

    def chroot_argv(self, k, script):
        """Run it inside mounted(k.chroot_dir)."""
        return ["chroot", k.chroot_dir, "/bin/sh", "-ec", script]

    def ensure(self, k):
        with setup_lock(k.release):
            return self._ensure(k)

    def _ensure(self, k):
        """Download and unpack the stock kernel image and modules of a release.

        Returns the directory holding boot/vmlinuz-* and lib/modules/<release>.
        """
        root = ensure_chroot(k.release)
        kver = k.kver
        pin = _pin(k.release)
        kdir = k.kernel_dir
        stamp = os.path.join(kdir, ".vfsfast-ready")
        if os.path.exists(stamp):
            return kdir
        if os.path.exists(kdir):
            shutil.rmtree(kdir)
        util.log(f"{k}: downloading linux-image {kver}")
        script = f"""
            rm -rf /var/tmp/vfsfast-kernel && mkdir -p /var/tmp/vfsfast-kernel
            cd /var/tmp/vfsfast-kernel
            {_image_packages_sh(kver)}
            ver="{pin['version'] if pin else ''}"
            [ -z "$ver" ] || pkgs="$(for p in $pkgs; do printf '%s=%s ' "$p" "$ver"; done)"
            apt-get download -q $pkgs
            ls *.deb
        """
        with mounted(root):
            in_chroot(root, script, quiet=True)
        debs = glob.glob(os.path.join(root, "var/tmp/vfsfast-kernel/*.deb"))
        if not debs:
            util.die(f"{k}: no kernel packages were downloaded")
        os.makedirs(kdir)
        for deb in debs:
            util.run(["dpkg-deb", "-x", deb, kdir])
        shutil.rmtree(os.path.join(root, "var/tmp/vfsfast-kernel"))
        if not k.image:
            util.die(f"{k}: no vmlinuz in {debs}")
        open(stamp, "w").close()
        return kdir


def _image_packages_sh(kver, arch=""):
    """Shell lines that set $pkgs to the packages of kernel @kver's image
    and modules (of architecture @arch, "" for the chroot's own).  The
    image package of 7.2 is a stub depending on linux-binary-* and
    linux-modules-*; the older releases ship everything in one package.
    Debian's unsigned image has the same kernel as the signed one."""
    q = f":{arch}" if arch else ""
    return (f'img=linux-image-{kver}-unsigned{q}\n'
            f'apt-cache show "$img" >/dev/null 2>&1 || img=linux-image-{kver}{q}\n'
            'pkgs="$img $(apt-cache depends "$img" | '
            "sed -n 's/^ *Depends: \\(linux-\\(binary\\|modules\\)-[^ ]*\\)$/\\1/p')\"")


def flavour_of(kver):
    """The flavour of a Debian uname -r ("5.10.0-32-cloud-amd64":
    "cloud-amd64"; "7.2.13+deb14-amd64": "amd64"), or None: what follows
    the ABI, a version and an optional number ("-32"), matched whole so
    that "amd64" is never the end of "cloud-amd64"."""
    m = re.fullmatch(r"\d+\.\d+[\w.+~]*(?:-\d+)?-([a-z][\w-]*)", kver)
    return m.group(1) if m and m.group(1) != "common" else None


KIND = DebianKind()
for _flavour, _suffix in FLAVOURS.items():
    for _name, _facts in KERNELS.items():
        kernel_mod.register(kernel_mod.Kernel(_name + _suffix, _facts["release"], _facts["gcc"],
                                              KIND, flavour=_flavour))


# Debian's kernels of other architectures (issue 49,
# Documentation/arm64-plan.md), by lab name: "base", the amd64 kernel of
# the same ABI and variant, whose release's chroot builds for it (its
# headers' package version is the one downloaded); "arch", the
# architecture; "flavour", Debian's flavour where it is not the
# architecture's generic one (the end of uname -r, as FLAVOURS); "gcc",
# the cross compiler where the release's default (gcc-<triplet>) is not
# the one the kernel was built with (the headers' .config,
# CONFIG_GCC_VERSION, tells; its .kernelvariables names it in CC): the
# chroot installs <gcc>-<triplet> and runs <triplet>-<gcc>.
CROSS_KERNELS = {"6.12-arm64": {"base": "6.12", "arch": "arm64"},
                 "6.1-arm64": {"base": "6.1", "arch": "arm64"},
                 "5.10-arm64": {"base": "5.10", "arch": "arm64"},
                 # The headers' CC is aarch64-linux-gnu-gcc-16 (16.2.0), whatever
                 # sid's default cross gcc (gcc-16 too in 4:16.1.0-3) moves to.
                 "7.2-arm64": {"base": "7.2", "arch": "arm64", "gcc": "gcc-16"},
                 # What Debian's cloud images for arm64 (AWS Graviton among
                 # them) boot, linux-image-cloud-arm64: the ABI of 6.12-cloud,
                 # a config for virtual machines that keeps what the guests
                 # use (PL011, virtio, generic PCI host) and every ftrace,
                 # kprobe and PAC option of the generic one.
                 "6.12-cloud-arm64": {"base": "6.12-cloud", "arch": "arm64",
                                      "flavour": "cloud-arm64"},
                 # bookworm's, at 6.1-cloud's pin (bookworm-security).
                 "6.1-cloud-arm64": {"base": "6.1-cloud", "arch": "arm64",
                                     "flavour": "cloud-arm64"}}

# What a release's chroot adds for a cross build besides the compiler, by
# architecture; only when such a kernel is asked for, so the amd64 chroots
# stay as they are.  The release's default cross compiler is the version
# its kernel was built with, checked against the arm64 headers' .config
# (trixie: gcc-14; bookworm: gcc-12 12.2.0, CONFIG_GCC_VERSION=120200),
# except where CROSS_KERNELS names one.
CROSS_PACKAGES = {"arm64": ["binutils-aarch64-linux-gnu",
                            # the guests' static test programs
                            "libc6-dev-arm64-cross",
                            # kernel-doc under W=1 needs Pod::Usage
                            "perl"]}


class CrossKind(DebianKind):
    """Debian's kernels of another architecture: built for in the release's
    amd64 chroot, whose amd64 headers already brought linux-kbuild (host
    tools, the same for every architecture) and the -common tree.  The
    kernel's own packages (headers, image with its modules) and the
    guests' busybox are downloaded and unpacked aside, never installed:
    apt would pull in the architecture's gcc and libc."""

    def _abi(self, k):
        base = kernel_mod.get(CROSS_KERNELS[k.name]["base"])
        return base, base.kver[:-len(base.flavour)]

    def release(self, k):
        return self._abi(k)[1] + k.flavour

    def _packages(self, k):
        """The cross compiler of k (k.gcc, CROSS_KERNELS), then the rest."""
        return [f"{k.gcc}-{k.arch.triplet}"] + CROSS_PACKAGES[str(k.arch)]

    def _ensure(self, k):
        """The chroot with the cross compiler and k's headers, the image
        and modules unpacked into kernel_dir(k), and the busybox; returns
        kernel_dir(k)."""
        root = ensure_chroot(k.release)
        base, abi = self._abi(k)
        tree = f"linux-headers-{abi}{k.flavour}"
        gcc = os.path.join(root, f"usr/bin/{k.arch.tool(k.gcc)}")
        stamp = os.path.join(root, f".vfsfast-cross-{k.arch}")
        packages = self._packages(k)
        have = open(stamp).read().split() if os.path.exists(stamp) else []
        if (not os.path.isdir(os.path.join(root, "usr/src", tree)) or not os.path.exists(gcc)
                or any(p not in have for p in packages)):
            util.log(f"{k}: installing the cross compiler and unpacking {tree} in {root}")
            # The headers of exactly the amd64 tree's version: the -common
            # tree and linux-kbuild are that version's.
            script = f"""
                dpkg --add-architecture {k.arch}
                apt-get update -q
                apt-get install -y -q {' '.join(packages)}
                ver=$(dpkg-query -W -f='${{Version}}' linux-headers-{base.kver})
                rm -rf /var/tmp/vfsfast-cross && mkdir -p /var/tmp/vfsfast-cross
                cd /var/tmp/vfsfast-cross
                apt-get download -q {tree}:{k.arch}="$ver"
                dpkg-deb -x {tree}_*.deb x
                rm -rf /usr/src/{tree}
                cp -a x/usr/src/{tree} /usr/src/
                cd / && rm -rf /var/tmp/vfsfast-cross
            """
            with mounted(root):
                in_chroot(root, script, quiet=True)
            with open(stamp, "w") as f:
                f.write("\n".join(have + [p for p in packages if p not in have]) + "\n")
        self._unpack(k, k.kernel_dir, f"linux-image {k.kver}", base, check="image")
        self._unpack(k, self._busybox_dir(k), "busybox-static", base, check="busybox")
        return k.kernel_dir

    def _unpack(self, k, dest, what, base, check):
        """Download @what of k's architecture in the release's chroot (the
        kernel's image and modules of the amd64 kernel's version, for
        check "image"; else the package @what names) and unpack it into
        @dest, once."""
        stamp = os.path.join(dest, ".vfsfast-ready")
        if os.path.exists(stamp):
            return
        root = k.chroot_dir
        if os.path.exists(dest):
            shutil.rmtree(dest)
        util.log(f"{k}: downloading {what}:{k.arch}")
        if check == "image":
            get = f"""
                {_image_packages_sh(k.kver, k.arch)}
                ver=$(dpkg-query -W -f='${{Version}}' linux-headers-{base.kver})
                apt-get download -q $(for p in $pkgs; do printf '%s=%s ' "$p" "$ver"; done)
            """
        else:
            get = f"apt-get download -q {what}:{k.arch}"
        script = f"""
            rm -rf /var/tmp/vfsfast-get && mkdir -p /var/tmp/vfsfast-get
            cd /var/tmp/vfsfast-get
            {get}
        """
        with mounted(root):
            in_chroot(root, script, quiet=True)
        debs = sorted(glob.glob(os.path.join(root, "var/tmp/vfsfast-get/*.deb")))
        if not debs or (check != "image" and len(debs) != 1):
            util.die(f"{k}: downloading {what}:{k.arch} gave {debs}")
        os.makedirs(dest)
        for deb in debs:
            util.run(["dpkg-deb", "-x", deb, dest])
        shutil.rmtree(os.path.join(root, "var/tmp/vfsfast-get"))
        names = " ".join(os.path.basename(d) for d in debs)
        if check == "image" and not k.image:
            util.die(f"{k}: no vmlinuz in {names}")
        if check == "busybox" and not self._find_busybox(dest):
            util.die(f"{k}: no usr/bin/busybox or bin/busybox in {names}")
        open(stamp, "w").close()

    def _busybox_dir(self, k):
        # The release's own: kernels of two releases are set up side by
        # side, and bookworm's package keeps /bin, trixie's /usr/bin.
        return os.path.join(util.cache_dir(), "arch", str(k.arch), k.release, "busybox-static")

    @staticmethod
    def _find_busybox(d):
        return next((p for p in (os.path.join(d, "usr/bin/busybox"), os.path.join(d, "bin/busybox"))
                     if os.path.exists(p)), None)

    def busybox(self, k):
        return self._find_busybox(self._busybox_dir(k)) or \
            os.path.join(self._busybox_dir(k), "usr/bin/busybox")

    def compile_static(self, k, src, exe, flags):
        """With the release's cross compiler in its chroot: the source is
        copied in and the program out."""
        root = k.chroot_dir
        work = f"/var/tmp/vfsfast-guestcc-{k.arch}"
        host_work = os.path.join(root, work.lstrip("/"))
        if os.path.exists(host_work):
            shutil.rmtree(host_work)
        # The file and the headers beside it, which it includes.
        shutil.copytree(os.path.dirname(src), host_work,
                        ignore=shutil.ignore_patterns("*.o", "__pycache__"))
        name = os.path.basename(src)
        in_chroot(root, f"cd {work} && {k.arch.tool(k.gcc)} {' '.join(flags)} -static "
                  f"-o prog {name}", quiet=True)
        shutil.copyfile(os.path.join(host_work, "prog"), exe)
        os.chmod(exe, 0o755)
        shutil.rmtree(host_work)

    def kernel_dir(self, k):
        return os.path.join(util.cache_dir(), "kernels", k.kver)

    cache_dir = kernel_dir


CROSS_KIND = CrossKind()
for _name, _cross in CROSS_KERNELS.items():
    # A cross kernel's gcc is its cross compiler's (CROSS_KERNELS); its
    # release its base's (registered above, a stock kernel or its cloud
    # twin).
    kernel_mod.register(kernel_mod.Kernel(_name, kernel_mod.get(_cross["base"]).release,
                                          _cross.get("gcc", "gcc"), CROSS_KIND,
                                          flavour=_cross.get("flavour", _cross["arch"]),
                                          arch=arch_mod.get(_cross["arch"])))


def setup(kernels):
    """`vfsfast-lab setup`: each kernel ready (chroot, image, headers)."""
    for k in kernels:
        k.ensure()
        util.log(f"{k}: ready: {k.kver} in {k.chroot_dir}")
