"""A release's own userland as a root filesystem image, for real programs.

The lab's guests run busybox; `vfsfast-lab real` measures the release's
own lscpu, lsblk, udevadm, find, systemd-cgls, ps, ls, realpath, python3,
gcc and lsof.  Their
root filesystem is made from the release's build chroot: an overlay of
it (the chroot itself is never changed), where apt, with the chroot's own
sources and configuration (debian.APT_CONF), installs PACKAGES; then what
the programs never read (compilers, headers, documentation, apt's lists)
is left out and the rest written into an ext4 image with mkfs.ext4 -d.
The host's apt sources are never touched.

The guest loop-mounts the image read-only from its initramfs and runs the
programs chrooted into it: under -icount, a loop device over a file in
memory makes every read guest CPU work, as for the benchmarks' ext4 image.

Cached as $VFSFAST_CACHE/userland/<release>.img, with a stamp holding a
hash of the package list and the exclusions: when either changes, the
next run makes the image again.
"""

import collections
import contextlib
import hashlib
import os
import shutil
import subprocess

from . import build, debian, util

# What the measured programs come from (the release's own builds).
PACKAGES = ["util-linux", "udev", "procps", "findutils", "coreutils", "systemd",
            "python3-minimal", "gcc", "libc6-dev", "lsof", "git"]
# A second, smaller image for the suite's t_fleet: what a fleet host runs
# `vfsfast metrics` with (the release's sh, awk and coreutils, among the
# essential and required packages), node_exporter, which serves the file
# through its textfile collector, and systemd, whose systemd-analyze
# checks the shipped units.
FLEET_PACKAGES = ["prometheus-node-exporter", "systemd"]
# A third for `vfsfast-lab external`: what fstests' check and its generic
# tests run (kvm-xfstests' list, cut to the local filesystems and the
# tests external.py chooses); the libraries of fstests' own programs are
# added by the caller (extbuild.fstests names them per release).
FSTESTS_PACKAGES = ["bash", "xfsprogs", "acl", "attr", "e2fsprogs", "gawk", "bc", "psmisc",
                    "perl", "sed", "grep", "findutils", "procps", "util-linux", "mount",
                    "coreutils", "diffutils", "libcap2-bin", "hostname", "kmod", "file",
                    "uuid-runtime"]
# The users fstests' tests switch to (_require_user, _require_user_exists),
# made in the overlay: the guest's /etc is the image's, read-only.
FSTESTS_SETUP = """
for u in fsgqa fsgqa2 123456-fsgqa; do
	id -u $u >/dev/null 2>&1 || useradd -M -U -d / -s /bin/bash $u
done
"""
# Image flavour: its packages, the suffix of its file name, whether it
# keeps the commands update-alternatives made (/usr/bin/awk -> mawk), which
# dpkg does not list (the vfsfast command and fstests run awk), and shell
# run in the overlay after the packages are installed.
Flavour = collections.namedtuple("Flavour", "packages suffix alternatives setup",
                                 defaults=("",))
FLAVOURS = {"real": Flavour(PACKAGES, "", False), "fleet": Flavour(FLEET_PACKAGES, "-fleet", True),
            "fstests": Flavour(FSTESTS_PACKAGES, "-fstests", True, FSTESTS_SETUP)}

# The image holds these packages, what they depend on (apt-cache depends
# --recurse, installed ones only: no recommends) and the release's
# essential and required packages, each with the files dpkg lists for it,
# and the chroot's /etc.  The rest of the chroot (compilers, headers, the
# kernel headers, apt's lists) is left out.  A chroot that cross-builds
# for arm64 has arm64 as a foreign architecture: apt-cache then names
# some arm64 packages (libc6:arm64), which the image never holds.
CLOSURE = """
ess=$(dpkg-query -W -f='${Package} ${Essential} ${Priority}\\n' |
	awk '$2 == "yes" || $3 == "required" { print $1 }')
apt-cache depends --recurse --installed --no-recommends --no-suggests \\
	--no-conflicts --no-breaks --no-replaces --no-enhances $PKGS $ess |
	grep '^[a-z0-9]' | grep -v : | sort -u
"""
# The files dpkg lists for $PKGS, each named with the chroot's own
# architecture: a package installed for amd64 and arm64 both
# (gcc-12-base, of the cross compiler's closure) is otherwise an
# ambiguous name, on which dpkg -L stops listing at all (t_fleet's
# bookworm image once came out without libc).
LISTED = """
dpkg-query -W -f='${Package} ${Architecture} ${binary:Package}\\n' |
	awk -v n="$(dpkg --print-architecture)" -v want="$PKGS" '
	BEGIN { split(want, w, " "); for (i in w) keep[w[i]] = 1 }
	keep[$1] && ($2 == n || $2 == "all") { print $3 }' |
	xargs dpkg -L 2>/dev/null || true
"""

# Directories the guest mounts over (proc, sysfs, devtmpfs, tmpfs).
MOUNTPOINTS = ["proc", "sys", "dev", "run", "tmp", "var/tmp", "root", "mnt"]


def _stamp_text(packages, alternatives=False, setup=""):
    h = hashlib.sha256(("\n".join(packages) + "\0" + CLOSURE + LISTED + "\0" + _files.__doc__
                        + ("\0alternatives" if alternatives else "")
                        + ("\0" + setup if setup else "")).encode())
    return h.hexdigest() + "\n"


def _alternatives(root):
    """The commands update-alternatives made: links in usr/bin and usr/sbin
    into /etc/alternatives (which _files keeps, as all of /etc)."""
    out = []
    for d in ("usr/bin", "usr/sbin"):
        for n in sorted(os.listdir(os.path.join(root, d))):
            p = os.path.join(root, d, n)
            if os.path.islink(p) and os.readlink(p).startswith("/etc/alternatives/"):
                out.append(os.path.join(d, n))
    return out


@contextlib.contextmanager
def _overlay(release, name):
    """The release's chroot with an overlay on top, mounted, /proc, /sys
    and /dev inside; yields its root.  Everything is unmounted and the
    upper layer removed afterwards."""
    base = os.path.join(util.cache_dir(), "userland", f"{name}.work")
    upper, work, root = (os.path.join(base, d) for d in ("upper", "work", "root"))
    subprocess.call(["umount", "-R", "-l", root], stderr=subprocess.DEVNULL)
    shutil.rmtree(base, ignore_errors=True)
    for d in (upper, work, root):
        os.makedirs(d)
    try:
        util.run(["mount", "-t", "overlay", "overlay", "-o",
                  f"lowerdir={debian.chroot_dir(release)},upperdir={upper},workdir={work}",
                  root])
        with debian.mounted(root):
            yield root
    finally:
        subprocess.call(["umount", "-R", "-l", root], stderr=subprocess.DEVNULL)
        shutil.rmtree(base, ignore_errors=True)


def _files(root, listed):
    """What goes into the image, as paths relative to root, parents
    first: every path dpkg lists that exists, with its directories
    resolved as the chroot resolves them (/lib/x86_64-linux-gnu/... of a
    merged /usr is usr/lib/x86_64-linux-gnu/...), the top-level links of
    a merged /usr (bin, lib, lib64, sbin), and all of /etc."""
    out = set()

    def canon(rel):
        # resolve every component but the last, inside root
        parts, done = [p for p in rel.split("/") if p], ""
        for i, part in enumerate(parts[:-1]):
            p = os.path.join(done, part)
            for _ in range(40):
                full = os.path.join(root, p)
                if not os.path.islink(full):
                    break
                t = os.readlink(full)
                p = os.path.normpath(t.lstrip("/") if t.startswith("/")
                                     else os.path.join(os.path.dirname(p), t))
            done = p
        return os.path.join(done, parts[-1]) if parts else ""

    for line in listed:
        line = line.strip()
        if not line.startswith("/") or line == "/.":
            continue
        rel = canon(line)
        full = os.path.join(root, rel)
        if rel and (os.path.lexists(full)):
            out.add(rel)
            d = os.path.dirname(rel)
            while d:
                out.add(d)
                d = os.path.dirname(d)
    for name in os.listdir(root):
        if os.path.islink(os.path.join(root, name)):
            out.add(name)
    for d, dirs, files in os.walk(os.path.join(root, "etc")):
        for n in dirs + files:
            out.add(os.path.relpath(os.path.join(d, n), root))
    out.add("etc")
    return sorted(out, key=lambda p: (p.count("/"), p))


def image_from_stage(stage, image, free_mb=32, extended=""):
    """Write the tree @stage as the ext4 image @image (mkfs.ext4 -d; a
    quarter more than the tree holds, and @free_mb MB more), which it
    replaces whole, and remove @stage; returns the image's size in MB.
    @extended: more of mkfs.ext4's -E options."""
    size_mb = int(util.run(["du", "-sm", stage], capture=True).split()[0])
    size_mb = size_mb * 5 // 4 + free_mb
    tmp = image + ".tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    with open(tmp, "wb") as f:
        f.truncate(size_mb << 20)
    util.run(["mkfs.ext4", "-q", "-F", "-d", stage, "-E",
              ",".join(filter(None, [extended, "lazy_itable_init=0,lazy_journal_init=0"])),
              tmp], quiet=True)
    shutil.rmtree(stage)
    os.rename(tmp, image)
    return size_mb


class Userland:
    """One release's root filesystem image (kernel.Kernel.release) of a
    flavour of FLAVOURS: "real" for vfsfast-lab real, "fleet" for t_fleet,
    "fstests" for vfsfast-lab external; extra: more packages."""

    def __init__(self, release, flavour="real", extra=(), foreign=None):
        self.release = release
        f = FLAVOURS[flavour]
        self.packages = list(f.packages) + sorted(set(extra) - set(f.packages))
        self.alternatives, self.setup = f.alternatives, f.setup
        # foreign: the arch.Arch of a kernel of another architecture,
        # whose image ensure() makes from that architecture's packages.
        self.foreign = foreign
        self.name = self.release + f.suffix + (f"-{foreign}" if foreign else "")

    @property
    def image(self):
        return os.path.join(util.cache_dir(), "userland", f"{self.name}.img")

    @property
    def _stamp(self):
        return self.image + ".stamp"

    def _stamp_want(self):
        return _stamp_text(self.packages, self.alternatives, self.setup)

    def versions(self):
        """{package: version} installed in the image (written beside it)."""
        path = self.image + ".versions"
        if not os.path.exists(path):
            return {}
        with open(path) as f:
            return dict(line.split() for line in f if len(line.split()) == 2)

    def ensure(self, kernel):
        """Make the image (kernel: one of the release's kernels, whose
        chroot lock is held meanwhile); returns its path.

        For a kernel of another architecture the packages are chosen, and
        /etc with the users and alternatives made, in the amd64 overlay as
        for the release's own image; then each package of the closure is
        that architecture's build, unpacked over the merged /usr's links
        (debian.foreign_download()), and the overlay's /etc and
        alternatives' links go on top: they are the same for every
        architecture, but for ld.so.cache, which is left out (the loader
        then searches its own directories)."""
        if os.path.exists(self._stamp) and open(self._stamp).read() == self._stamp_want() \
                and os.path.exists(self.image):
            return self.image
        debian.ensure_chroot(self.release)
        util.log(f"{self.release}: root filesystem image with {' '.join(self.packages)} "
                 "(overlay of the chroot; a few minutes)")
        stage = self.image + ".stage"
        shutil.rmtree(stage, ignore_errors=True)
        with build.chroot_lock(kernel), _overlay(self.release, self.name) as root:
            debian.in_chroot(root, "apt-get update -q && apt-get install -y -q "
                             + " ".join(self.packages), quiet=True)
            if self.setup:
                debian.in_chroot(root, self.setup, quiet=True)
            versions = debian.in_chroot(
                root, "dpkg-query -W -f='${Package} ${Version}\\n' " + " ".join(self.packages),
                capture=True)
            pkgs = debian.in_chroot(root, f"PKGS='{' '.join(self.packages)}'\n" + CLOSURE,
                                    capture=True).split()
            listed = debian.in_chroot(root, f"PKGS='{' '.join(pkgs)}'\n" + LISTED, capture=True)
            names = _files(root, listed.splitlines())
            if self.alternatives:
                names += _alternatives(root)
            os.makedirs(stage)
            if self.foreign:
                names = self._foreign_stage(kernel, root, stage, pkgs, names)
            with open(stage + ".list", "w") as f:
                f.write("".join(n + "\n" for n in names))
            util.run(["sh", "-ec", f"tar -C '{root}' --no-recursion -cf - -T '{stage}.list' | "
                      f"tar -C '{stage}' -xpf -"])
            os.unlink(stage + ".list")
        for d in MOUNTPOINTS:
            os.makedirs(os.path.join(stage, d), exist_ok=True)
        size_mb = image_from_stage(stage, self.image)
        with open(self.image + ".versions", "w") as f:
            f.write(versions)
        with open(self._stamp, "w") as f:
            f.write(self._stamp_want())
        util.log(f"{self.release}: {self.image} ({size_mb} MB)")
        return self.image


    def _foreign_stage(self, kernel, root, stage, pkgs, names):
        """Unpack the architecture's builds of pkgs into stage, with the
        overlay's top-level links first; returns what of names is still to
        be copied from the overlay: /etc (but ld.so.cache) and the
        alternatives' links."""
        for n in os.listdir(root):
            if os.path.islink(os.path.join(root, n)):
                os.symlink(os.readlink(os.path.join(root, n)), os.path.join(stage, n))
        missing = debian.foreign_download(kernel, pkgs, stage, apt_root=root)
        if missing:
            util.log(f"{self.name}: {self.foreign} has no build of {' '.join(missing)}")
        etc = [n for n in names if (n == "etc" or n.startswith("etc/")) and
               n != "etc/ld.so.cache"]
        return etc + (_alternatives(root) if self.alternatives else [])


def of(kernel, flavour="real", extra=()):
    """The userland of a kernel's release, of the kernel's architecture."""
    return Userland(kernel.release, flavour, extra, kernel.arch if kernel.cross else None)
