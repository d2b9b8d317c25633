"""vfsfast's packages installed and run on a Debian system of another
architecture: an arm64 guest (qemu-system-aarch64, TCG) booting one of
the lab's arm64 kernels, with the release's own arm64 userland.

`vfsfast-lab deb --arch arm64 --guest 6.12-arm64` (make deb-arm64-guest)
builds the packages as `deb --arch arm64` does, then boots the kernel
with a root filesystem image that is a Debian system of the kernel's
architecture (dpkg database, maintainer scripts run, apt's lists): the
release's minbase with dkms, make, gcc, openssl, libbpf1 and the
headers of exactly the kernel the guest boots (linux-headers-<kver> at
the version the lab's cross builds use, with linux-kbuild; trixie's
bring the kernel's image package too), and the kernel's modules in
/usr/lib/modules with depmod run, as its image package leaves them (the
lab's unpacked copy, where the headers do not bring the image).  In the guest (tests/guest/t_dkms_native.sh),
chrooted into that image, apt-get installs vfsfast-dkms_*_all.deb and
vfsfast-tools_*_<arch>.deb as a user does: DKMS's postinst builds the
module natively, with the release's gcc for the running kernel; the
module is loaded with modprobe, `vfsfast status` and a short `vfsfast-ab`
run against it, and it is unloaded.

The image is made on the host: debootstrap --foreign (the host's), then
its second stage and apt-get, for the architecture, in a chroot run
under the release's qemu-user through binfmt_misc, registered in a user
namespace of its own (kernel 6.7 and later: the registration is that
namespace's only, nothing of the host's binfmt changes) whose uids are
the host's (identity map), so that the files keep their owners.  The
apt configuration and sources are the image's own (debian.APT_CONF, the
release's sources.list): the host's apt sources are never touched.
Cached as $VFSFAST_CACHE/userland/<release>-dkms-<arch>.img with a stamp
holding a hash of what made it; the guest writes into a snapshot of it
(qemu's -drive snapshot=on), which it throws away.
"""

import ctypes
import glob
import hashlib
import os
import re
import shutil
import subprocess
import time

from . import deb, debian, guest, kernels, userland, util

# What the image installs besides the release's minbase, for the
# packages' Depends and DKMS's build: dkms (with kmod), the compiler and
# make, openssl (DKMS makes its signing key with it), xz-utils (the
# module compressed as the kernel's are), libbpf1 (vfsfast-tools'
# Depends), binutils (readelf, for the checks).  The running kernel's
# headers are added by kernel (linux-headers-<kver>=<version>).
PACKAGES = ["dkms", "make", "gcc", "kmod", "openssl", "xz-utils", "libbpf1", "binutils"]
# Free space left in the image for DKMS's build tree and the module.
FREE_MB = 768
# The guest: TCG, one vCPU, its clock the host's; DKMS runs make -j1 there
# (one vCPU), and the module's compile probes run one after another.
GUEST_TIMEOUT_S = 3 * 3600
GUEST_MEMORY_MB = 2048
TEST = "t_dkms_native"
# binfmt_misc's magic and mask of the architecture's ELF executables
# (Debian's qemu-user-binfmt's).
BINFMT = {"aarch64": (r"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00",
                      r"\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff"
                      r"\xfe\xff\xff\xff")}
# The release whose qemu-user runs the architecture's programs on the
# host (trixie's 10.0: static, one package for every architecture).
QEMU_RELEASE = "trixie"

# The image: the second stage, the packages, the kernel's modules.
SETUP = """
apt-get update -q
apt-get install -y -q $PKGS
depmod -a $KVER
apt-get clean
dpkg-query -W -f='${Package} ${Version}\\n' dkms make gcc 'gcc-[0-9]*' \\
	"linux-headers-$KVER" 'linux-kbuild-*' openssl libbpf1 dpkg || true
"""

# Run as PID 1 of new user, mount and PID namespaces: binfmt_misc
# mounted and the architecture registered there (F: qemu opened now, as
# the host sees it), then the root's /proc, /sys and /dev, and the
# command chrooted.  $1 root, $2 registration, then the command.
NS_SH = r"""
set -e
root=$1 reg=$2
shift 2
mount --make-rprivate /
b=$(mktemp -d)
mount -t binfmt_misc binfmt_misc "$b"
printf '%s' "$reg" >"$b/register"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C \
	DEBIAN_FRONTEND=noninteractive HOME=/root container=lxc "$@"
"""
# container=lxc: debootstrap's second stage then takes /dev as it finds
# it (a user namespace may not mknod; the first stage made the nodes).

_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000


def _userns_run(argv):
    """argv as PID 1 of new user, mount and PID namespaces, root there
    being the host's root (every uid and gid mapped to itself): (rc,
    output)."""
    libc = ctypes.CDLL(None, use_errno=True)
    out_r, out_w = os.pipe()
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(out_w, 1)
            os.dup2(out_w, 2)
            if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWPID) != 0:
                os.write(2, f"unshare: errno {ctypes.get_errno()}\n".encode())
                os._exit(125)
            os.write(ready_w, b"x")
            os.read(go_r, 1)
            child = os.fork()
            if child == 0:
                os.execvp(argv[0], argv)
            _, st = os.waitpid(child, 0)
            os._exit(os.waitstatus_to_exitcode(st) & 0xff)
        except BaseException:
            os._exit(126)
    os.close(out_w)
    os.read(ready_r, 1)
    for f in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{f}", "w") as fh:
            fh.write("0 0 4294967295\n")
    os.write(go_w, b"x")
    chunks = []
    while True:
        b = os.read(out_r, 65536)
        if not b:
            break
        chunks.append(b)
    _, st = os.waitpid(pid, 0)
    for fd in (out_r, ready_r, ready_w, go_r, go_w):
        os.close(fd)
    return os.waitstatus_to_exitcode(st), b"".join(chunks).decode(errors="replace")


def qemu_user(kernel):
    """The host path of QEMU_RELEASE's qemu-user for the kernel's
    architecture, unpacked once from the package (never installed)."""
    dest = os.path.join(util.cache_dir(), "arch", "qemu-user", QEMU_RELEASE)
    prog = os.path.join(dest, "usr/bin", f"qemu-{kernel.arch.uname_m}")
    if os.path.exists(prog):
        return prog
    root = debian.ensure_chroot(QEMU_RELEASE)
    util.log(f"{QEMU_RELEASE}: downloading qemu-user for the {kernel.arch} root filesystem")
    with debian.mounted(root):
        debian.in_chroot(root, "rm -rf /var/tmp/vfsfast-qemu-user && "
                         "mkdir -p /var/tmp/vfsfast-qemu-user && cd /var/tmp/vfsfast-qemu-user && "
                         "apt-get download -q qemu-user", quiet=True)
    got = glob.glob(os.path.join(root, "var/tmp/vfsfast-qemu-user/qemu-user_*.deb"))
    if len(got) != 1:
        util.die(f"{QEMU_RELEASE}: downloading qemu-user gave {got}")
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    util.run(["dpkg-deb", "-x", got[0], dest])
    shutil.rmtree(os.path.dirname(got[0]))
    if not os.path.exists(prog):
        util.die(f"qemu-user of {QEMU_RELEASE} has no {os.path.basename(prog)}")
    return prog


def foreign_chroot(kernel, root, script):
    """sh -ec script in root, a root filesystem of the kernel's
    architecture, its programs run by qemu-user (binfmt_misc in a user
    namespace): (rc, output)."""
    magic, mask = BINFMT[kernel.arch.uname_m]
    reg = f":vfsfast-{kernel.arch.uname_m}:M::{magic}:{mask}:{qemu_user(kernel)}:F"
    # printf '%s' writes the backslashes; binfmt_misc decodes \xHH itself.
    return _userns_run(["sh", "-c", NS_SH, "sh", root, reg, "/bin/sh", "-ec", script])


def headers_version(kernel):
    """The Debian version of the kernel's headers the lab's cross builds
    use: the amd64 twin's, as debian.CrossKind downloads them."""
    base = kernels.get(debian.CROSS_KERNELS[kernel.name]["base"])
    return util.run(["chroot", kernel.chroot_dir, "dpkg-query", "-W", "-f=${Version}",
                     f"linux-headers-{base.kver}"], capture=True).strip()


class Image:
    """The root filesystem image of a cross kernel's release and
    architecture, with what DKMS needs for that kernel."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.name = f"{kernel.release}-dkms-{kernel.arch}"
        self.image = os.path.join(util.cache_dir(), "userland", f"{self.name}.img")
        self.stamp = self.image + ".stamp"

    def packages(self):
        return PACKAGES + [f"linux-headers-{self.kernel.kver}={headers_version(self.kernel)}"]

    def _stamp_want(self):
        h = hashlib.sha256("\0".join(self.packages() + [SETUP, NS_SH, debian.APT_CONF,
                                                        str(FREE_MB)]).encode())
        return h.hexdigest() + "\n"

    def versions(self):
        path = self.image + ".versions"
        return open(path).read().split("\n") if os.path.exists(path) else []

    def ensure(self):
        k = self.kernel
        if os.path.exists(self.stamp) and open(self.stamp).read() == self._stamp_want() \
                and os.path.exists(self.image):
            return self.image
        k.ensure()
        pkgs = self.packages()
        util.log(f"{k}: {k.release}'s {k.arch} root filesystem with {' '.join(pkgs)} "
                 "(debootstrap, then qemu-user: many minutes)")
        t0 = time.monotonic()
        stage = self.image + ".stage"
        shutil.rmtree(stage, ignore_errors=True)
        util.run(["debootstrap", "--arch", str(k.arch), "--foreign", "--variant=minbase",
                  k.release, stage, debian.MIRROR], quiet=True)
        with open(os.path.join(stage, "etc/apt/apt.conf.d/99vfsfast"), "w") as f:
            f.write(debian.APT_CONF)
        rc, out = foreign_chroot(k, stage, "/debootstrap/debootstrap --second-stage")
        if rc != 0:
            util.die(f"{self.name}: debootstrap's second stage failed (rc={rc}):\n{out[-3000:]}")
        # The release's sources (and a pinned kernel's suite), after
        # debootstrap, which writes its own.
        debian._write_apt_sources(stage, k.release)
        # The kernel's modules, as its image package would leave them
        # (its postinst's depmod runs in SETUP).
        mods = os.path.join(stage, "usr/lib/modules", k.kver)
        shutil.rmtree(mods, ignore_errors=True)
        shutil.copytree(k.modules_dir, mods, symlinks=True)
        rc, out = foreign_chroot(k, stage, f"PKGS='{' '.join(pkgs)}' KVER='{k.kver}'\n" + SETUP)
        if rc != 0:
            util.die(f"{self.name}: installing {' '.join(pkgs)} failed (rc={rc}):\n"
                     f"{out[-3000:]}")
        versions = "\n".join(l for l in out.splitlines()
                             if re.fullmatch(r"[a-z0-9][a-z0-9.+-]* \S+", l))
        for d in ("proc", "sys", "dev"):
            os.makedirs(os.path.join(stage, d), exist_ok=True)
        size_mb = userland.image_from_stage(stage, self.image, FREE_MB, "root_owner=0:0")
        with open(self.image + ".versions", "w") as f:
            f.write(versions + "\n")
        with open(self.stamp, "w") as f:
            f.write(self._stamp_want())
        util.log(f"{self.name}: {self.image} ({size_mb} MB) in {time.monotonic() - t0:.0f}s")
        return self.image


def guest_tests(results, kernel, debs):
    """Boot the kernel with its release's image and the packages (debs:
    {package: host path}, vfsfast-tools of the kernel's architecture);
    record the guest's checks and its console's in results."""
    name = f"[{kernel}] {TEST}:"
    image = Image(kernel).ensure()
    files = {f"/lab/debs/{os.path.basename(p)}": p for p in debs.values()}
    util.log(f"{kernel}: booting the {TEST} guest (DKMS builds in it: many minutes)")
    keep = os.path.join(kernel.log_dir, TEST)

    def progress(chunk):
        for line in chunk.splitlines():
            if line.startswith(("ok ", "not ok ", "# ")):
                util.log(f"{kernel}: {line[:160]}")
    # No module of the lab's: the guest loads the one DKMS builds.
    res = guest.run_job(kernel, f"VFSFAST_BACKEND=\n. /lab/{TEST}.sh\n", None,
                        disk=guest.Disk(image, []), timeout=GUEST_TIMEOUT_S, keep_dir=keep,
                        extra_files=files, memory_mb=GUEST_MEMORY_MB, on_output=progress)
    util.log(f"{kernel}: {TEST} guest finished in {res.seconds:.0f}s")
    for line in res.output.splitlines():
        m = re.match(r"(ok|not ok) - (.*?)(?: # (.*))?$", line)
        if m:
            results.record(m.group(1) == "ok", f"{name} {m.group(2)}", m.group(3) or "")
        elif line.startswith("# "):
            print(line, flush=True)
    results.record(res.completed and res.rc == 0 and not res.timed_out,
                   f"{name} the guest's job ran to its end",
                   f"{res.seconds:.0f}s; rc={res.rc}; timed out: {res.timed_out}; "
                   f"console and output in {keep}")
    results.record(not res.bad_lines, f"{name} the console holds no kernel warning, oops or "
                   "other report", "; ".join(l.strip() for l in res.bad_lines[:3]))


def main(kernels_, out):
    """The guest checks on each of kernels_ (cross kernels), with the
    .debs in out (deb.main's): 0 when all pass, else 1."""
    results = deb.Results()
    ver = deb.changelog_version()
    for k in kernels_:
        debs = {"vfsfast-dkms": os.path.join(out, f"vfsfast-dkms_{ver}_all.deb"),
                "vfsfast-tools": os.path.join(out, f"vfsfast-tools_{ver}_{k.arch}.deb")}
        missing = [p for p in debs.values() if not os.path.exists(p)]
        if missing:
            results.record(False, f"[{k}] {TEST}: the packages to install",
                           f"missing {' '.join(missing)}")
            continue
        guest_tests(results, k, debs)
    print(f"{results.passed} passed, {results.failed} failed")
    return 0 if not results.failed else 1
