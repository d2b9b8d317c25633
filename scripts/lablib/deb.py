"""Debian packages of vfsfast, built and tested in the lab's chroots.

`vfsfast-lab deb` (make deb) builds vfsfast-dkms (the module's source for
DKMS, Architecture: all) and vfsfast-tools (the commands and vfsfast-ab's
workloads, amd64) from debian/ with debhelper, in the bookworm chroot, from
a clean copy of the sources; the build dependencies are installed there
with apt, lintian checks the result.

`vfsfast-lab deb --arch arm64` (make deb-arm64) adds vfsfast-tools for
arm64, cross-built with dpkg-buildpackage -a arm64 in an overlay of the same
chroot (the arm64 -dev packages it needs never reach the lab's chroot), checks
that its programs are arm64's and runs lintian on it; then, there being no
arm64 machine, dkms_cross_tests() has DKMS build and install vfsfast-dkms's
source for each of Debian's arm64 lab kernels (their headers unpacked aside,
debian.CrossKind), with the kernel's cross-make variables.

package_tests() installs them as a fleet would, in each release's chroot:
apt-get install of both .debs with DKMS building the module, a second
kernel's headers installed through apt (DKMS's kernel hooks build it), a
kernel whose module build fails, remove, purge and a reinstall, and the
DKMS signature.  That happens in an overlay of the release's chroot
(overlayfs; its upper layer is thrown away afterwards), with the chroot's
lock held: the lab's own builds in the chroot (build.py) never see the
packages, the second kernel or the broken one, and an interrupted test
leaves nothing behind.
"""

import contextlib
import glob
import hashlib
import os
import re
import shutil
import subprocess
import threading

from . import arch as arch_mod
from . import build, debian, kernels, util

BUILD_RELEASE = "bookworm"
PACKAGES = ["vfsfast-dkms", "vfsfast-tools"]
# A kernel release no Debian kernel has: the headers whose build fails.
BROKEN_KVER = "99.0.0-vfsfast-broken"
# Releases that cannot install bookworm's packages get a build of their
# own, with these build profiles: bullseye's dkms (2.8) predates
# BUILD_EXCLUSIVE_CONFIG, for which bookworm's dh_dkms requires dkms >=
# 3.0.3, and its glibc (2.31) is older than bookworm's binaries need.  Its
# build leaves out the BPF latency helper (no clang nor libbpf-dev).
OWN_BUILD = {"bullseye": ["pkg.vfsfast.nolatency"]}

_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C",
        "DEBIAN_FRONTEND": "noninteractive", "HOME": "/root"}


def changelog_version():
    """The Debian version at the top of debian/changelog ("" if none)."""
    with open(os.path.join(util.repo_dir(), "debian/changelog")) as f:
        m = re.match(r"\S+ \(([^)\s]+)\)", f.readline())
    return m.group(1) if m else ""


def upstream_version(debian_version):
    """0.1.0 of 0.1.0-1 (or of 1:0.1.0-1)."""
    v = re.sub(r"^\d+:", "", debian_version)
    return v.rsplit("-", 1)[0] if "-" in v else v


def stock_kernel(release):
    """The lab's stock Debian kernel of a release, whose chroot it is."""
    return kernels.stock(release) or util.die(f"no stock lab kernel for {release}")


def _sh(root, script):
    """`sh -ec script` in the chroot at root (mounted): (rc, output)."""
    p = subprocess.run(["chroot", root, "/bin/sh", "-ec", script], env=_ENV,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace")
    return p.returncode, p.stdout


def _copy_tree(root, path):
    """A clean copy of the sources and debian/ at path inside root."""
    dst = os.path.join(root, path.lstrip("/"))
    build.copy_sources(dst)
    shutil.copytree(os.path.join(util.repo_dir(), "debian"), os.path.join(dst, "debian"))


def _buildpackage(root, src, arch_only=False, profiles=(), host=None):
    """apt-get build-dep and dpkg-buildpackage of src inside root (mounted):
    (rc, log).  The .debs land in src's parent directory.  host: the
    Debian architecture to cross-build for (arch_only then), whose
    build dependencies apt installs beside the chroot's own (multiarch),
    with crossbuild-essential, which apt's build-dep does not add."""
    prof = ",".join(profiles)
    cross = f"-a {host}" if host else ""
    dep = (f"apt-get build-dep -y -q {cross} {'--arch-only' if arch_only else ''} "
           f"{f'-P {prof}' if prof else ''} ./")
    if host:
        dep = f"apt-get install -y -q crossbuild-essential-{host} && {dep}"
    # The chroot's package lists may be older than the mirror: update and
    # try again when the first attempt fails.
    script = (f"cd {src}\n"
              f"{dep} || {{ apt-get update -q && {dep}; }}\n"
              f"DEB_BUILD_OPTIONS=noautodbgsym dpkg-buildpackage {cross} "
              f"{'-B' if arch_only else '-b'} "
              f"-us -uc {f'--build-profiles={prof}' if prof else ''}\n")
    return _sh(root, script)


LINTIAN_TAG = re.compile(r"^([EWIPX]): (\S+)")


def _lintian(root, changes):
    """lintian (errors, warnings and info; overrides applied) on a .changes
    file inside root, run as nobody: (ok, report).  ok: no tag at all."""
    rc, out = _sh(root, "command -v lintian >/dev/null || "
                  "{ apt-get install -y -q lintian || "
                  "{ apt-get update -q && apt-get install -y -q lintian; }; } >/dev/null 2>&1\n"
                  f"chmod -R a+rX {os.path.dirname(changes)}\n"
                  f"su nobody -s /bin/sh -c 'lintian -I --fail-on error,warning {changes}'")
    tags = [l for l in out.splitlines() if LINTIAN_TAG.match(l)]
    return rc == 0 and not tags, out.strip()


def build_debs(release=BUILD_RELEASE, out=None, lintian=True):
    """Build both packages in the release's chroot; copy the .debs to out
    (default: the lab cache).  Returns (debs, log, lintian_ok, lintian_report):
    debs is {package: path}, empty if the build failed."""
    kernel = stock_kernel(release)
    root = debian.ensure_chroot(release)
    out = out or os.path.join(util.cache_dir(), "deb", release)
    ver = build.version()
    work = "/tmp/vfsfast-deb"
    src = f"{work}/vfsfast-{ver}"
    lint_ok, report = None, None
    with build.chroot_lock(kernel), debian.mounted(root):
        shutil.rmtree(os.path.join(root, work.lstrip("/")), ignore_errors=True)
        _copy_tree(root, src)
        util.log(f"deb: dpkg-buildpackage in the {release} chroot")
        rc, log = _buildpackage(root, src, profiles=OWN_BUILD.get(release, ()))
        found = {p: glob.glob(os.path.join(root, work.lstrip("/"), f"{p}_*.deb"))
                 for p in PACKAGES}
        if rc != 0 or any(len(f) != 1 for f in found.values()):
            return {}, log + f"\nrc={rc}, packages found: {found}", None, None
        if lintian:
            changes = glob.glob(os.path.join(root, work.lstrip("/"), "*.changes"))
            lint_ok, report = _lintian(root, "/" + os.path.relpath(changes[0], root))
    return _keep(found, out), log, lint_ok, report


def _keep(found, out):
    """Copy each package's .deb of found ({package: [path]}) to out,
    replacing that package's older ones of the same architecture only (a
    cross build's are kept beside the native build's): {package: path}."""
    os.makedirs(out, exist_ok=True)
    debs = {}
    for p, (f,) in found.items():
        debarch = os.path.basename(f).rsplit("_", 1)[-1]
        for old in glob.glob(os.path.join(out, f"{p}_*_{debarch}")):
            os.unlink(old)
        debs[p] = os.path.join(out, os.path.basename(f))
        shutil.copyfile(f, debs[p])
    return debs


class Results:
    """The checks of `vfsfast-lab deb --arch`, one TAP line each, as the
    suite prints them (suite.Tally, which this module cannot import)."""

    def __init__(self):
        self.passed = self.failed = 0

    def record(self, ok, name, why=""):
        why = " | ".join(l.strip() for l in str(why or "").splitlines() if l.strip())
        n = self.passed + self.failed + 1
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        print(f"{'ok' if ok else 'not ok'} {n} - {name}{f' # {why}' if why else ''}", flush=True)


def build_cross_debs(arch, release=BUILD_RELEASE, out=None, lintian=True):
    """vfsfast-tools for another architecture (an arch.Arch), cross-built
    with dpkg-buildpackage -a in an overlay of the release's chroot, so
    that the architecture's -dev packages (libc6-dev, libbpf-dev) never
    reach the chroot the lab builds in.  Returns (debs, log, lintian_ok,
    lintian_report) as build_debs(); debs holds vfsfast-tools only
    (vfsfast-dkms is Architecture: all, the native build's)."""
    kernel = stock_kernel(release)
    root = debian.ensure_chroot(release)
    out = out or os.path.join(util.cache_dir(), "deb", release)
    work = "/tmp/vfsfast-deb"
    src = f"{work}/vfsfast-{build.version()}"
    lint_ok, report = None, None
    with build.chroot_lock(kernel), _overlay_of(root, release, f"deb-cross-{arch}") as oroot:
        _copy_tree(oroot, src)
        util.log(f"deb: dpkg-buildpackage -a {arch} in an overlay of the {release} chroot")
        rc, log = _buildpackage(oroot, src, arch_only=True, host=str(arch),
                                profiles=OWN_BUILD.get(release, ()))
        host_work = os.path.join(oroot, work.lstrip("/"))
        found = {"vfsfast-tools": glob.glob(os.path.join(host_work, f"vfsfast-tools_*_{arch}.deb"))}
        if rc != 0 or len(found["vfsfast-tools"]) != 1:
            return {}, log + f"\nrc={rc}, packages found: {found}", None, None
        if lintian:
            changes = glob.glob(os.path.join(host_work, f"*_{arch}.changes"))
            lint_ok, report = _lintian(oroot, "/" + os.path.relpath(changes[0], oroot))
        return _keep(found, out), log, lint_ok, report


def elf_check(deb, arch):
    """The ELF files a .deb installs and readelf -h's Machine of each:
    (ok, {path: machine}).  ok: every one is arch's, but BPF objects,
    which are the kernel's bytecode on every architecture."""
    tmp = os.path.join(util.cache_dir(), "deb", f"elf-check-{arch}")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    util.run(["dpkg-deb", "-x", deb, tmp])
    machines = {}
    for d, _, files in os.walk(tmp):
        for f in files:
            path = os.path.join(d, f)
            if os.path.islink(path):
                continue
            with open(path, "rb") as fh:
                if fh.read(4) != b"\x7fELF":
                    continue
            out = util.run(["readelf", "-h", path], capture=True)
            m = re.search(r"^\s*Machine:\s*(.+?)\s*$", out, re.M)
            machines["/" + os.path.relpath(path, tmp)] = m.group(1) if m else "?"
    shutil.rmtree(tmp)
    ok = bool(machines) and all(m == arch.elf_machine or m == "Linux BPF"
                                for m in machines.values())
    return ok, machines


def cross_install_tests(results, arch, deb, release=BUILD_RELEASE):
    """The cross-built vfsfast-tools installed as apt would on a machine
    of arch, as near as an amd64 chroot allows: apt-get install of the
    .deb in an overlay of the release's chroot, which has arch as a
    foreign architecture, so that its Depends must resolve among arch's
    packages; then its programs run under qemu-user (qemu-aarch64-static,
    the overlay's only: the host registers no binfmt), which loads them
    with arch's loader and libraries, as the machine's kernel would."""
    name = f"[{arch}] vfsfast-tools:"
    qemu = f"qemu-{arch.uname_m}-static"
    kernel = stock_kernel(release)
    root = debian.ensure_chroot(release)
    util.log(f"deb: vfsfast-tools for {arch} installed in an overlay of the {release} chroot")
    with build.chroot_lock(kernel), _overlay_of(root, release, f"deb-install-{arch}") as oroot:
        os.makedirs(os.path.join(oroot, "tmp/vfsfast-debs"), exist_ok=True)
        shutil.copyfile(deb, os.path.join(oroot, "tmp/vfsfast-debs", os.path.basename(deb)))
        install = (f"apt-get install -y -q --no-install-recommends qemu-user-static "
                   f"/tmp/vfsfast-debs/{os.path.basename(deb)}")
        rc, out = _sh(oroot, f"dpkg --print-foreign-architectures | grep -qx {arch} || "
                      f"dpkg --add-architecture {arch}\n"
                      f"{install} || {{ apt-get update -q && {install}; }}")
        _, got = _sh(oroot, "dpkg-query -W -f='${Architecture} ${Status}' vfsfast-tools 2>&1")
        _, foreign = _sh(oroot, f"dpkg-query -W -f='${{Package}}:${{Architecture}} ' "
                         f"'*:{arch}' 2>/dev/null || true")
        results.record(rc == 0 and got.strip() == f"{arch} install ok installed",
                       f"{name} apt-get install ./vfsfast-tools_*_{arch}.deb: its Depends "
                       f"resolve among {release}'s {arch} packages",
                       f"{got.strip()}; {arch} packages: {foreign.strip()[:300]}"
                       + ("" if rc == 0 else " | " + out[-400:]))
        if rc != 0:
            return
        progs = sorted(f for f in os.listdir(os.path.join(oroot, "usr/libexec/vfsfast"))
                       if not f.endswith(".o"))
        rc, out = _sh(oroot, "for p in " + " ".join(progs) + "; do "
                      f"rc=0; {qemu} /usr/libexec/vfsfast/$p >/tmp/out 2>&1 || rc=$?; "
                      "echo \"$p rc=$rc $(grep -c '^usage:' /tmp/out) $(head -n 1 /tmp/out)\"; "
                      "done")
        ran = {}
        for line in out.splitlines():
            m = re.match(r"(\S+) rc=(\d+) (\d+)", line)
            if m:
                ran[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        # 2 with a usage line: main() ran, past the loader and libraries.
        results.record(sorted(ran) == progs and all(rc == 2 and usage >= 1
                                                    for rc, usage in ran.values()),
                       f"{name} each program in /usr/libexec/vfsfast runs under {qemu} "
                       "(without arguments: its usage, exit 2)",
                       "; ".join(line.strip() for line in out.splitlines())[:600])
        rc, out = _sh(oroot, f"{qemu} /usr/libexec/vfsfast/abloop pipe 1000 2>&1")
        results.record(rc == 0 and "ops=1000" in out,
                       f"{name} abloop pipe 1000 under {qemu}: a workload's system calls run",
                       f"rc={rc}: {out.strip()[:200]}")


def cross_kernels(arch):
    """The lab's Debian kernels of arch (debian.CROSS_KERNELS), by name."""
    return [kernels.get(n) for n, c in debian.CROSS_KERNELS.items() if c["arch"] == str(arch)]


def dkms_cross_tests(results, kernel, debs):
    """vfsfast-dkms on a kernel of another architecture, without a machine
    of it: in an overlay of the kernel's release chroot, where its headers
    are unpacked (debian.CrossKind), apt installs the package (its
    postinst builds for the chroot's own kernels, as on any machine), with
    the build machine's vfsfast-tools, and DKMS builds and installs the
    module for the kernel, with --arch (BUILD_EXCLUSIVE_ARCH and DKMS's
    tree see the architecture's uname -m) and the kernel's cross-make
    variables in the environment: the
    headers' .kernelvariables set ARCH, and CROSS_COMPILE on trixie and
    later, but bookworm's only inside a Debian package build.  DKMS strips
    with `strip`, which is given the architecture's strip under that name,
    as an arm64 host's own would be.  The kernel's image package is
    unpacked into the overlay and depmod run, as its postinst would: DKMS
    3.2 runs depmod only for a kernel whose modules.dep exists, and
    depmod -e then checks the module's symbols against the kernel's
    exports.  Last, `vfsfast check --kernel` with the same variables, as
    a user would before booting an arm64 kernel."""
    name = f"[{kernel}] dkms:"
    kernel.ensure()
    a, kver, ver = kernel.arch, kernel.kver, build.version()
    env = f"env {kernel.make_vars} PATH=/tmp/vfsfast-cross-bin:$PATH"
    which = f"-m vfsfast -v {ver} -k {kver}"
    util.log(f"{kernel}: DKMS build of the package's source in an overlay of the "
             f"{kernel.release} chroot")
    with build.chroot_lock(kernel), \
            _overlay_of(kernel.chroot_dir, kernel.release, f"deb-dkms-{a}") as root:
        _fresh_machine(root)
        os.makedirs(os.path.join(root, "tmp/vfsfast-debs"), exist_ok=True)
        for path in debs.values():
            shutil.copyfile(path, os.path.join(root, "tmp/vfsfast-debs", os.path.basename(path)))
        # openssl: DKMS 3 makes its signing key with it (package_tests()).
        rc, out = _sh(root, "apt-get install -y -q openssl >/dev/null 2>&1 || "
                      "{ apt-get update -q && apt-get install -y -q openssl; } >/dev/null\n"
                      "apt-get install -y -q --no-install-recommends "
                      "/tmp/vfsfast-debs/vfsfast-*.deb")
        results.record(rc == 0 and all(_status(root, p) == "install ok installed" for p in debs),
                       f"{name} apt-get install ./vfsfast-dkms_*_all.deb "
                       f"./vfsfast-tools_*_amd64.deb in the {kernel.release} chroot",
                       f"rc={rc}" + ("" if rc == 0 else "; " + out[-400:]))
        if rc != 0:
            return
        config = open(os.path.join(kernel.headers_dir, ".config")).read()
        wanted = re.findall(r"\b(CONFIG_\w+)", re.search(
            r'^BUILD_EXCLUSIVE_CONFIG="([^"]*)"', open(os.path.join(
                root, f"usr/src/vfsfast-{ver}/dkms.conf")).read(), re.M).group(1))
        have = {c: (re.search(rf"^{c}=(\S+)", config, re.M) or [None, "unset"])[1]
                for c in wanted}
        image = os.path.join(root, "tmp/vfsfast-image")
        shutil.copytree(kernel.modules_dir, os.path.join(image, "modules"), symlinks=True)
        if kernel.system_map:
            shutil.copyfile(kernel.system_map, os.path.join(image, "System.map"))
        rc, out = _sh(root, f"""
            mkdir -p /lib/modules/{kver} /tmp/vfsfast-cross-bin
            cp -a /tmp/vfsfast-image/modules/. /lib/modules/{kver}/
            [ ! -f /tmp/vfsfast-image/System.map ] ||
                cp /tmp/vfsfast-image/System.map /boot/System.map-{kver}
            rm -rf /tmp/vfsfast-image
            depmod -a {kver}
            ln -sfn /usr/src/linux-headers-{kver} /lib/modules/{kver}/build
            ln -sf /usr/bin/{a.tool("strip")} /tmp/vfsfast-cross-bin/strip
            {env} dkms build {which} --arch {a.uname_m} 2>&1
            {env} dkms install {which} --arch {a.uname_m} 2>&1
        """)
        _, status = _sh(root, "dkms status 2>&1")
        line = next((l for l in status.splitlines() if l.startswith("vfsfast")
                     and f", {kver}," in l), "")
        excluded = "BUILD_EXCLUSIVE" in out
        results.record(rc == 0 and line.endswith(f"{a.uname_m}: installed") and not excluded
                       and all(v in ("y", "m") for v in have.values()),
                       f"{name} dkms build and install -k {kver} --arch {a.uname_m} "
                       f"({kernel.make_vars}): built and installed, BUILD_EXCLUSIVE_ARCH and "
                       f"BUILD_EXCLUSIVE_CONFIG met by the {a} kernel's .config",
                       f"dkms status: {line or 'nothing'}; .config: "
                       + ", ".join(f"{c}={v}" for c, v in have.items())
                       + ("" if rc == 0 and line else " | " + out[-600:]))
        mods = _modules(root, kver)
        if len(mods) != 1:
            results.record(False, f"{name} the module DKMS installed is {a}'s", f"modules: {mods}")
            return
        ko = os.path.join(root, "tmp", f"vfsfast-{kver}.ko")
        build.uncompressed_copy(mods[0], ko)
        machine = re.search(r"^\s*Machine:\s*(.+?)\s*$",
                            util.run(["readelf", "-h", ko], capture=True), re.M)
        sections = util.run(["readelf", "-S", "-W", ko], capture=True)
        vermagic = build.modinfo(ko, "vermagic")
        signer = build.modinfo(ko, "signer")
        with open(ko, "rb") as f:
            signed = f.read().endswith(b"~Module signature appended~\n")
        _, dep = _sh(root, f"grep vfsfast /lib/modules/{kver}/modules.dep || true")
        # Against the headers' Module.symvers, which 6.12's System.map
        # cannot stand for (exports there are no __ksymtab_ symbols): the
        # CRCs of MODVERSIONS are checked too.
        _, unknown = _sh(root, f"depmod -n -e -E /usr/src/linux-headers-{kver}/Module.symvers "
                         f"{kver} 2>&1 >/dev/null | grep vfsfast || true")
        # The same check with no export at all must name the module's
        # symbols, or it proves nothing.
        _, control = _sh(root, f": > /tmp/vfsfast-none.symvers; depmod -n -e -E "
                         f"/tmp/vfsfast-none.symvers {kver} 2>&1 >/dev/null | "
                         "grep -c 'vfsfast.*unknown symbol' || true")
        ok = (machine is not None and machine.group(1) == a.elf_machine
              and vermagic.split()[0] == kver and vermagic.split()[-1] == a.uname_m
              and signed and bool(signer) and ".debug_info" not in sections
              and "updates/dkms/vfsfast.ko" in dep and not unknown.strip()
              and int(control.strip() or 0) > 0)
        results.record(ok, f"{name} the module in /lib/modules/{kver}/updates/dkms is {a}'s "
                       "(readelf -h, vermagic), stripped and signed by DKMS, listed by DKMS's "
                       "depmod, every symbol it needs exported by the kernel at its version "
                       "(depmod -e -E Module.symvers)",
                       f"Machine: {machine.group(1) if machine else '?'}; vermagic: {vermagic}; "
                       f"signer: {signer or 'none'}; debug info: "
                       f"{'present' if '.debug_info' in sections else 'stripped'}; "
                       f"modules.dep: {dep.strip()[:120] or 'absent'}; depmod -e: "
                       f"{unknown.strip()[:300] or 'no unknown symbol'} (against an empty "
                       f"Module.symvers: {control.strip() or '0'})")
        backends = [b for b in ("jmp", "direct", "ftrace")
                    if build.modinfo(ko, f"vfsfast_backend_{b}") == "available"]
        rc, out = _sh(root, f"{env} /usr/sbin/vfsfast check --kernel {kver} 2>&1")
        said = re.search(r"^backends:(.*)$", out, re.M)
        results.record(rc == 0 and f"builds for {kver}" in out and said is not None
                       and said.group(1).split() == backends,
                       f"{name} vfsfast check --kernel {kver} ({kernel.make_vars}): builds, and "
                       "names the backends the DKMS-built module offers",
                       f"rc={rc}; check: backends:{said.group(1) if said else ' ?'}; DKMS's "
                       f"module: {' '.join(backends) or 'none'}"
                       + ("" if rc == 0 else " | " + out[-400:]))
        # Any architecture but the module's two: DKMS skips the build
        # (BUILD_EXCLUSIVE_ARCH) rather than failing it.
        other = "riscv64"
        rc, out = _sh(root, f"rc=0; {env} dkms build {which} --arch {other} 2>&1 || rc=$?; "
                      "echo rc=$rc")
        _, status = _sh(root, "dkms status 2>&1")
        results.record("BUILD_EXCLUSIVE" in out and other not in status,
                       f"{name} dkms build --arch {other} is skipped (BUILD_EXCLUSIVE_ARCH), "
                       "nothing built",
                       out.strip().splitlines()[-1] + "; " +
                       " ".join(l.strip() for l in out.splitlines()
                                if "BUILD_EXCLUSIVE" in l)[:200])


def _show(debs, log, lint_ok, report, what):
    """Print one build's lintian verdict and .debs: True when it built
    and lintian reports no error nor warning."""
    if not debs:
        print(log[-6000:])
        print(f"deb: the build of {what} failed")
        return False
    if report is None:
        print(f"lintian ({what}): not run ({BUILD_RELEASE}'s build is the one checked)")
    else:
        print(f"lintian ({what}): {'clean' if lint_ok else 'tags:'}")
        if not lint_ok:
            print(report)
    for p in sorted(debs):
        print(debs[p])
    return not [l for l in (report or "").splitlines() if re.match(r"[EW]: ", l)]


def default_out(release=BUILD_RELEASE):
    """Where `vfsfast-lab deb` leaves the .debs without --out: deb-out/ in
    the checkout, deb-out/RELEASE/ for another release than bookworm."""
    return os.path.join(util.repo_dir(), "deb-out", "" if release == BUILD_RELEASE else release)


def main(out=None, release=BUILD_RELEASE, arches=(), dkms_kernels=None):
    """`vfsfast-lab deb`: build, show lintian's report, print the paths.
    arches: the other architectures to cross-build vfsfast-tools for
    (arch.Arch); for each, its .debs' programs are checked and DKMS builds
    the module for dkms_kernels (default: every lab kernel of that
    architecture; [] for none).  Exit 1 when a build fails, lintian
    reports errors or warnings, or a check fails."""
    out = out or default_out(release)
    # The overrides are written for bookworm's lintian: older ones know
    # neither their syntax nor every tag.
    lint = release == BUILD_RELEASE
    debs, log, lint_ok, report = build_debs(release, out, lintian=lint)
    ok = _show(debs, log, lint_ok, report, "amd64 and all")
    if not debs or not arches:
        return 0 if ok else 1
    results = Results()
    for a in arches:
        cdebs, clog, clint_ok, creport = build_cross_debs(a, release, out, lintian=lint)
        ok = _show(cdebs, clog, clint_ok, creport, str(a)) and ok
        if not cdebs:
            continue
        elf_ok, machines = elf_check(cdebs["vfsfast-tools"], a)
        results.record(elf_ok, f"[{a}] vfsfast-tools' programs are {a}'s (readelf -h Machine: "
                       f"{a.elf_machine}; the BPF object's is Linux BPF)",
                       "; ".join(f"{os.path.basename(p)}: {m}"
                                 for p, m in sorted(machines.items())))
        cross_install_tests(results, a, cdebs["vfsfast-tools"], release)
        for k in (cross_kernels(a) if dkms_kernels is None else
                  [k for k in dkms_kernels if k.arch == a]):
            dkms_cross_tests(results, k, debs)
    print(f"{results.passed} passed, {results.failed} failed")
    return 0 if ok and not results.failed else 1


# The packages the suite tests, built once per lab process.
_suite_debs = {}
_suite_lock = threading.Lock()


def suite_debs(tally=None):
    """Build the packages for the suite's tests (once per process) and, the
    first time, record the build and lintian's verdict in tally."""
    with _suite_lock:
        if "debs" not in _suite_debs:
            debs, log, lint_ok, report = build_debs(BUILD_RELEASE)
            _suite_debs.update(debs=debs, log=log)
            if tally is not None:
                tally.record(bool(debs), f"deb: vfsfast-dkms and vfsfast-tools build in the "
                             f"{BUILD_RELEASE} chroot (debhelper, dh_dkms)",
                             "" if debs else log[-400:].replace("\n", " | "))
                if debs:
                    tags = [l for l in report.splitlines() if LINTIAN_TAG.match(l)]
                    tally.record(lint_ok, "deb: lintian -I reports no tag (each remaining one "
                                 "overridden with its reason in debian/*.lintian-overrides)",
                                 "; ".join(tags[:6]) or report[-300:])
        return _suite_debs["debs"]


def _mounts_under(path):
    with open("/proc/self/mounts") as f:
        points = [line.split()[1].encode().decode("unicode_escape") for line in f]
    return [p for p in points if p == path or p.startswith(path + "/")]


def _unmount_all(path):
    for p in sorted(set(_mounts_under(path)), key=len, reverse=True):
        subprocess.call(["umount", "-l", p], stderr=subprocess.DEVNULL)


def _overlay(kernel):
    """The kernel's release chroot with a throw-away overlay on top
    (_overlay_of())."""
    return _overlay_of(kernel.chroot_dir, kernel.release, "deb-test")


@contextlib.contextmanager
def _overlay_of(lower, release, purpose):
    """The chroot at lower with a throw-away overlay on top, its /proc,
    /sys and /dev mounted, and apt's downloads kept across runs (the
    second kernel's packages, the cross build's dependencies): yields the
    overlay's root.  purpose names its directory in the cache, one per
    use that may run beside another."""
    base = os.path.join(util.cache_dir(), purpose, release)
    upper, work, root = (os.path.join(base, d) for d in ("upper", "work", "root"))
    archives = os.path.join(util.cache_dir(), purpose, f"apt-archives-{release}")
    _unmount_all(root)  # an interrupted run
    for d in (upper, work):
        shutil.rmtree(d, ignore_errors=True)
    for d in (upper, work, root, os.path.join(archives, "partial")):
        os.makedirs(d, exist_ok=True)
    try:
        util.run(["mount", "-t", "overlay", "overlay", "-o",
                  f"lowerdir={lower},upperdir={upper},workdir={work}",
                  root])
        util.run(["mount", "--bind", archives, os.path.join(root, "var/cache/apt/archives")])
        with debian.mounted(root):
            yield root
    finally:
        _unmount_all(root)
        for d in (upper, work):
            shutil.rmtree(d, ignore_errors=True)


def _dkms_state(status, kver):
    """installed, built, ... of vfsfast for kver in `dkms status` output
    (2.8: "vfsfast, 0.1.0, KVER, x86_64: installed"; 3.x: "vfsfast/0.1.0,
    KVER, x86_64: installed"), or None."""
    for line in status.splitlines():
        if line.startswith("vfsfast") and f", {kver}," in line + ",":
            return line.rsplit(": ", 1)[-1].strip()
    return None


def _modules(root, kver=None):
    """Host paths of vfsfast modules in the root's /lib/modules (one
    kernel's, or every kernel's)."""
    pat = os.path.join(root, "lib/modules", kver or "*", "**", "vfsfast.ko*")
    return sorted(glob.glob(pat, recursive=True))


def _digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _status(root, pkg):
    rc, out = _sh(root, f"dpkg-query -W -f='${{Status}}' {pkg} 2>&1 || true")
    return out.strip()


def _second_headers(root, kver):
    """A second kernel's headers package for the release: another ABI of
    the same flavour where the archive has one (the usual kernel update),
    else the same kernel's other lab flavour (cloud for generic, generic
    for cloud; never rt, for which the module does not build: PREEMPT_RT's
    struct mutex has no owner word)."""
    rc, out = _sh(root, "apt-cache search --names-only '^linux-headers-[0-9].*-amd64$'")
    names = [l.split()[0] for l in out.splitlines() if l.strip()]
    flavour = debian.flavour_of(kver)
    same = [n for n in names if debian.flavour_of(n[len("linux-headers-"):]) == flavour
            and n != f"linux-headers-{kver}"]

    def key(n):
        return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", n)]
    if same:
        return sorted(same, key=key)[-1]
    other = next(f for f in debian.FLAVOURS if f != flavour)
    return f"linux-headers-{kver[:-len(flavour)]}{other}"


BROKEN_MAKEFILE = "all modules:\n\t@echo 'error: this kernel breaks every module build'; false\n"


def _broken_headers_deb(root, kver):
    """A headers package for BROKEN_KVER, made in root: a copy of kver's
    headers (its .config passes BUILD_EXCLUSIVE_CONFIG) whose Makefile
    fails, and a postinst that runs the header_postinst.d hooks as
    Debian's headers packages do.  Returns its path inside root."""
    pkg = f"linux-headers-{BROKEN_KVER}"
    tree = f"/tmp/vfsfast-broken/{pkg}"
    script = f"""
        rm -rf /tmp/vfsfast-broken
        mkdir -p {tree}/DEBIAN {tree}/usr/src {tree}/lib/modules/{BROKEN_KVER}
        cp -a /usr/src/linux-headers-{kver} {tree}/usr/src/{pkg}
        ln -s /usr/src/{pkg} {tree}/lib/modules/{BROKEN_KVER}/build
        cat > {tree}/DEBIAN/control <<'EOF'
Package: {pkg}
Version: 99.0.0-1
Architecture: amd64
Maintainer: vfsfast lab <lab@invalid>
Description: headers of a kernel that breaks every module build (vfsfast test)
EOF
        cat > {tree}/DEBIAN/postinst <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ] && [ -d /etc/kernel/header_postinst.d ]; then
	run-parts --report --exit-on-error --arg={BROKEN_KVER} /etc/kernel/header_postinst.d
fi
EOF
        chmod 0755 {tree}/DEBIAN/postinst
    """
    with open(os.path.join(root, "tmp", "vfsfast-broken.Makefile"), "w") as f:
        f.write(BROKEN_MAKEFILE)
    rc, out = _sh(root, script + f"cp /tmp/vfsfast-broken.Makefile {tree}/usr/src/{pkg}/Makefile\n"
                  f"dpkg-deb --root-owner-group -b {tree} /tmp/vfsfast-broken/{pkg}.deb >/dev/null")
    return (f"/tmp/vfsfast-broken/{pkg}.deb" if rc == 0 else None), out


def _fresh_machine(root):
    """Forget what the lab's own builds left in the chroot (the overlay's
    copy): DKMS state, sources, modules and /usr/local commands, and the
    /lib/modules trees no package installed (the lab-built kernels')."""
    return _sh(root, """
        rm -rf /var/lib/dkms/vfsfast /usr/src/vfsfast-* /usr/local/sbin/vfsfast \
            /usr/local/sbin/vfsfast-ab /usr/local/share/vfsfast /usr/local/libexec/vfsfast
        find /lib/modules -name 'vfsfast*.ko*' -delete
        for d in /lib/modules/*; do
            # merged /usr: dpkg may know it as /usr/lib/modules/...
            dpkg -S "$d" >/dev/null 2>&1 || dpkg -S "/usr$d" >/dev/null 2>&1 || rm -rf "$d"
        done
    """)


def package_tests(tally, kernel, lab_srcversion=None, twin=None):
    """The packages on the kernel's release, as a fleet installs them.

    Records "[kernel] deb: ..." results; returns the host path of the
    module DKMS built from the package for the kernel (uncompressed), for
    a guest to boot, or None.  lab_srcversion: that of `make dkms-install`'s
    module for the same kernel, which the package's must equal.  twin:
    another kernel of the run that takes the later steps (a second
    kernel's headers, a failing build, remove and reinstall) for both:
    this one stops after its own module is built, signed and checked.
    """
    if kernel.built:
        release = kernel.release
        tally.note(f"[{kernel}] deb: the package tests run on {release}'s stock kernel, "
                   "not on a lab-built one")
        return None
    debs = suite_debs()
    name = f"[{kernel}] deb:"
    if not debs:
        tally.record(False, f"{name} apt-get install of both packages: DKMS builds and installs "
                     "the module", "the packages did not build")
        return None
    release = kernel.release
    kver = kernel.kver
    util.log(f"{kernel}: package tests in an overlay of the {release} chroot")
    with build.chroot_lock(kernel), _overlay(kernel) as root:
        return _tests(tally, kernel, root, release, kver, debs, lab_srcversion, twin)


def _tests(tally, kernel, root, release, kver, debs, lab_srcversion, twin=None):
    name = f"[{kernel}] deb:"
    _fresh_machine(root)
    # openssl, as on a standard system (ca-certificates depends on it):
    # dkms 3 needs it to make its signing key.
    rc, prep = _sh(root, "apt-get update -q && apt-get install -y -q openssl")
    os.makedirs(os.path.join(root, "tmp/vfsfast-debs"), exist_ok=True)
    for p, path in debs.items():
        shutil.copyfile(path, os.path.join(root, "tmp/vfsfast-debs", os.path.basename(path)))
    native = ""
    if release in OWN_BUILD:
        # Built in the overlay: its build dependencies go with it.
        ver = build.version()
        _copy_tree(root, f"/tmp/vfsfast-native/vfsfast-{ver}")
        brc, blog = _buildpackage(root, f"/tmp/vfsfast-native/vfsfast-{ver}",
                                  profiles=OWN_BUILD[release])
        for old in glob.glob(os.path.join(root, "tmp/vfsfast-debs/*.deb")):
            os.unlink(old)
        own = glob.glob(os.path.join(root, "tmp/vfsfast-native/vfsfast-*.deb"))
        for d in own:
            shutil.copy(d, os.path.join(root, "tmp/vfsfast-debs"))
        native = (f"both built in {release} ({' '.join(OWN_BUILD[release])}): rc={brc}; ")
        if brc != 0 or len(own) != 2:
            prep += blog[-2000:]
    install = ("cd /tmp/vfsfast-debs && apt-get install -y -q ./vfsfast-dkms_*.deb "
               "./vfsfast-tools_*.deb")
    # The chroot has both flavours' headers; the second kernel's must
    # arrive through apt in step 4, for DKMS's hook to be what builds it.
    pkg2 = _second_headers(root, kver)
    if _status(root, pkg2) == "install ok installed":
        rc, out = _sh(root, f"apt-get purge -y -q {pkg2}")
        prep += "" if rc == 0 else out[-600:]

    # 1. apt-get install: DKMS builds and installs the module for kver.
    rc, out = _sh(root, install)
    _, dkms_status = _sh(root, "dkms status 2>&1")
    state = _dkms_state(dkms_status, kver)
    mods = _modules(root, kver)
    statuses = {p: _status(root, p) for p in PACKAGES}
    ko = None
    srcversion = ""
    if len(mods) == 1:
        ko = os.path.join(kernel.build_dir, "vfsfast-deb.ko")
        build.uncompressed_copy(mods[0], ko)
        srcversion = build.modinfo(ko, "srcversion")
    conf = os.path.join(root, f"usr/src/vfsfast-{build.version()}/dkms.conf")
    autoinstall = open(conf).read() if os.path.exists(conf) else ""
    ok = (rc == 0 and state == "installed" and ko is not None and bool(srcversion) and
          all(s == "install ok installed" for s in statuses.values()) and
          'AUTOINSTALL="yes"' in autoinstall)
    tally.record(ok, f"{name} apt-get install ./vfsfast-dkms_*.deb ./vfsfast-tools_*.deb: both "
                 "installed, DKMS builds and installs the module for the chroot's kernel "
                 "(dkms status: installed)",
                 f"{native}{kver}: dkms {state}, srcversion {srcversion or '?'}, {mods}"
                 if ok else f"{native}rc={rc}; dkms {state!r}; {statuses}; modules {mods}; "
                 + (prep + out)[-600:].replace("\n", " | "))
    if not ok:
        return None
    if lab_srcversion is not None:
        tally.record(srcversion == lab_srcversion,
                     f"{name} the package's module has the srcversion of make dkms-install's "
                     "(the package ships the checkout's sources)",
                     f"package {srcversion}, make dkms-install {lab_srcversion}")

    # 2. The commands find what the package installed.
    _tools_test(tally, name, root, kver)

    # 3. Signed where DKMS signs.
    _signature_test(tally, name, root, ko)

    if twin:
        tally.note(f"{name} the second kernel's headers, a failing build, remove and "
                   f"reinstall: on {twin}, in this run (the same steps, the other flavour)")
        return ko

    # 4. A second kernel's headers, through apt only: DKMS's hooks build it.
    kver2 = pkg2[len("linux-headers-"):]
    before = {m: _digest(m) for m in _modules(root, kver)}
    rc, out = _sh(root, f"apt-get install -y -q {pkg2}")
    _, dkms_status = _sh(root, "dkms status 2>&1")
    state2 = _dkms_state(dkms_status, kver2)
    mods2 = _modules(root, kver2)
    tally.record(rc == 0 and state2 == "installed" and len(mods2) == 1,
                 f"{name} headers of a second kernel installed with apt-get: DKMS's kernel hook "
                 "builds and installs the module for it, no vfsfast command run",
                 f"{pkg2}: rc={rc}, dkms {state2!r}, {mods2}"
                 + ("" if rc == 0 and mods2 else "; " + out[-500:].replace("\n", " | ")))

    # 5. A kernel whose module build fails.
    _broken_kernel_test(tally, name, root, kver, kver2, before)

    # 6. Remove, purge, reinstall.
    _remove_purge_test(tally, name, root, install, [kver, kver2], srcversion)
    return ko


def _tools_test(tally, name, root, kver):
    """vfsfast-tools' files in /usr, runnable; `vfsfast check` finds the
    sources vfsfast-dkms put in /usr/src (a headers tree whose build fails
    stops it after the lookup: exit 1, cheap)."""
    _, listing = _sh(root, "dpkg -L vfsfast-tools")
    files = set(listing.split())
    want = ["/usr/sbin/vfsfast", "/usr/sbin/vfsfast-ab", "/usr/share/vfsfast/vfsfast-ab-stats.awk",
            "/usr/libexec/vfsfast/abloop", "/usr/libexec/vfsfast/rlbench",
            "/usr/libexec/vfsfast/nbench", "/usr/libexec/vfsfast/kfs"]
    latency = "/usr/libexec/vfsfast/ablat" in files
    if latency:
        want.append("/usr/libexec/vfsfast/ablat.bpf.o")
    missing = [f for f in want if f not in files or not os.path.exists(os.path.join(root, f[1:]))]
    notexec = [f for f in want if not f.endswith((".awk", ".o")) and
               not os.access(os.path.join(root, f[1:]), os.X_OK)]
    _, ldd = _sh(root, "for f in /usr/libexec/vfsfast/*; do case $f in *.o) ;; *) "
                 "ldd $f | sed \"s|^|$f: |\";; esac; done 2>&1")
    unresolved = [l.strip() for l in ldd.splitlines() if "not found" in l]
    os.makedirs(os.path.join(root, "tmp/vfsfast-broken-kdir"), exist_ok=True)
    with open(os.path.join(root, "tmp/vfsfast-broken-kdir/Makefile"), "w") as f:
        f.write(BROKEN_MAKEFILE)
    rc, out = _sh(root, f"rc=0; /usr/sbin/vfsfast check --kernel {kver} "
                  "--kdir /tmp/vfsfast-broken-kdir || rc=$?; echo rc=$rc")
    check_ok = out.rstrip().endswith("rc=1") and "does NOT build" in out
    _, help_out = _sh(root, "/usr/sbin/vfsfast-ab --help 2>&1 | head -n 3; echo")
    tally.record(not missing and not notexec and not unresolved and check_ok and
                 "usage" in help_out.lower(),
                 f"{name} vfsfast-tools: vfsfast and vfsfast-ab in /usr/sbin, the statistics in "
                 "/usr/share/vfsfast, the workloads in /usr/libexec/vfsfast (libraries resolved); "
                 "vfsfast check finds the sources in /usr/src",
                 f"latency helper {'included' if latency else 'not built'}; missing {missing}; "
                 f"not executable {notexec}; unresolved {unresolved}; "
                 f"check: {out[-200:].strip()}; vfsfast-ab --help: {help_out[:80].strip()}"
                 .replace("\n", " | "))
    # The metrics units (debian/rules: dh_installsystemd --no-enable
    # --no-start): shipped where systemd looks, off until the user
    # enables the timer.
    units = sorted(f for f in files
                   if re.search(r"/systemd/system/vfsfast-metrics\.(service|timer)$", f))
    wants = sorted(os.path.relpath(p, root) for p in
                   glob.glob(os.path.join(root, "etc/systemd/system/*.wants/vfsfast-metrics*")))
    tally.record(len(units) == 2 and not wants,
                 f"{name} vfsfast-tools: vfsfast-metrics.service and .timer shipped, neither "
                 "enabled at install",
                 f"units {units}; enabled: {wants or 'none'}")


def _signature_test(tally, name, root, ko):
    """Where DKMS has its MOK key (dkms 3, bookworm on), the module must be
    signed with it; dkms 2.8 (bullseye) signs only when configured to."""
    _, dkms_ver = _sh(root, "dpkg-query -W -f='${Version}' dkms")
    key = os.path.exists(os.path.join(root, "var/lib/dkms/mok.key"))
    with open(ko, "rb") as f:
        marker = f.read().endswith(b"~Module signature appended~\n")
    signer = build.modinfo(ko, "signer")
    if not key and dkms_ver.startswith("2."):
        tally.note(f"{name} dkms {dkms_ver} has no MOK key of its own: the module is "
                   f"{'signed' if marker else 'unsigned'} (see debian/vfsfast-dkms.README.Debian "
                   "for sign_tool)")
        return
    tally.record(key and marker and bool(signer),
                 f"{name} DKMS signs the module with its MOK key (/var/lib/dkms/mok.key, "
                 "mok.pub to enroll)",
                 f"dkms {dkms_ver}; key {'present' if key else 'absent'}; signature "
                 f"{'appended' if marker else 'absent'}; signer {signer!r}")


def _broken_kernel_test(tally, name, root, kver, kver2, before):
    """Headers of a kernel whose module build fails, installed with apt:
    the failure is reported (DKMS names its make.log), vfsfast's packages
    stay installed, the other kernels' modules stay as they were, and the
    package system is consistent again once that kernel's headers are
    purged."""
    deb, log = _broken_headers_deb(root, kver)
    if not deb:
        tally.record(False, f"{name} a kernel whose module build fails: reported, vfsfast-dkms "
                     "stays installed, the other kernels keep their module, dpkg --audit clean "
                     "once it is purged", "could not make its headers package: "
                     + log[-300:].replace("\n", " | "))
        return
    rc, out = _sh(root, f"apt-get install -y -q {deb}")
    statuses = {p: _status(root, p) for p in PACKAGES}
    _, audit = _sh(root, "dpkg --audit 2>&1 || true")
    ours = [l for l in audit.splitlines() if "vfsfast-dkms" in l or "vfsfast-tools" in l]
    kept = {m: _digest(m) for m in _modules(root, kver)}
    broken_mods = _modules(root, BROKEN_KVER)
    others = bool(_modules(root, kver2))
    prc, pout = _sh(root, f"apt-get purge -y -q linux-headers-{BROKEN_KVER}")
    _, audit2 = _sh(root, "dpkg --audit 2>&1; "
                    "apt-get check -q 2>&1 | grep -v '^Reading\\|^Building'")
    ok = ("make.log" in out and all(s == "install ok installed" for s in statuses.values())
          and not ours and kept == before and others and not broken_mods and prc == 0
          and not audit2.strip())
    pending = [l for l in audit.splitlines() if l.startswith(" ")]
    tally.record(ok, f"{name} a kernel whose module build fails: reported, vfsfast-dkms stays "
                 "installed, the other kernels keep their module, dpkg --audit clean once it "
                 "is purged",
                 f"apt-get rc={rc}; dpkg --audit before the purge: "
                 f"{' '.join(p.strip() for p in pending)[:120] or 'nothing'}; "
                 f"reported: {'make.log' in out}; {statuses}; our packages in --audit: {ours}; "
                 f"{kver} module unchanged: {kept == before}; {kver2} module: {others}; "
                 f"broken kernel modules: {broken_mods}; purge rc={prc}; audit after: "
                 f"{audit2.strip()[:200]!r}"
                 + ("" if ok else " | " + out[-400:].replace("\n", " | ")))


def _remove_purge_test(tally, name, root, install, kvers, srcversion):
    """apt-get remove, then purge: nothing of either package left, nor
    DKMS's modules and state; then a reinstall builds for every kernel
    again, and a last purge leaves the overlay as clean."""
    _, listing = _sh(root, "dpkg -L " + " ".join(PACKAGES))
    owned = [l.strip() for l in listing.splitlines() if l.startswith("/")]
    ver = build.version()

    def leftovers():
        left = _modules(root)
        for pat in (f"usr/src/vfsfast-*", "var/lib/dkms/vfsfast", "usr/sbin/vfsfast*",
                    "usr/share/vfsfast", "usr/libexec/vfsfast", "usr/share/doc/vfsfast-*"):
            left += glob.glob(os.path.join(root, pat))
        left += [os.path.join(root, f[1:]) for f in owned
                 if os.path.lexists(os.path.join(root, f[1:]))
                 and not os.path.isdir(os.path.join(root, f[1:]))]
        _, st = _sh(root, "dkms status 2>&1")
        left += [l for l in st.splitlines() if l.startswith("vfsfast")]
        return sorted(set(os.path.relpath(p, root) if p.startswith(root) else p for p in left))

    rc, out = _sh(root, "apt-get remove -y -q " + " ".join(PACKAGES))
    left = leftovers()
    # Files only: the doc directory may stay until purge.
    left_files = [p for p in left if not p.startswith("usr/share/doc/")]
    tally.record(rc == 0 and not left_files,
                 f"{name} apt-get remove takes the module out of every kernel's /lib/modules and "
                 f"removes /usr/src/vfsfast-{ver}, /var/lib/dkms/vfsfast and the commands",
                 f"rc={rc}; left: {left_files[:8]}" + ("" if rc == 0 else " | " + out[-300:]))
    def forgotten(p):
        s = _status(root, p)
        return "not-installed" in s or "no packages found" in s

    # Without conffiles nor postrm dpkg may forget a package at remove:
    # apt-get then has nothing of it to purge (and does not know it).
    known = [p for p in PACKAGES if not forgotten(p)]
    rc, out = _sh(root, "apt-get purge -y -q " + " ".join(known)) if known else (0, "")
    left = leftovers()
    states = {p: _status(root, p) for p in PACKAGES}
    tally.record(rc == 0 and not left and all(forgotten(p) for p in PACKAGES),
                 f"{name} apt-get purge: no file of either package left, nor DKMS state, and "
                 "dpkg forgets both",
                 f"purged {known or 'nothing: dpkg forgot both at remove'}: rc={rc}; "
                 f"left: {left[:8]}; {states}")
    rc, out = _sh(root, install)
    mods = {k: _modules(root, k) for k in kvers}
    srcs = {}
    for k, m in mods.items():
        if len(m) == 1:
            tmp = os.path.join(root, "tmp", f"vfsfast-{k}.ko")
            build.uncompressed_copy(m[0], tmp)
            srcs[k] = build.modinfo(tmp, "srcversion")
    prc, pout = _sh(root, "apt-get purge -y -q " + " ".join(PACKAGES))
    left = leftovers()
    # The srcversion hashes the compile probes' results too: only the
    # same kernel's must be equal.
    tally.record(rc == 0 and all(len(m) == 1 for m in mods.values())
                 and srcs.get(kvers[0]) == srcversion and prc == 0 and not left,
                 f"{name} reinstall after the purge: DKMS builds the module for both kernels "
                 "again (the first kernel's with the same srcversion); purged again, nothing left",
                 f"rc={rc}; modules {mods}; srcversions {srcs} (first {srcversion}); "
                 f"purge rc={prc}; left {left[:6]}"
                 + ("" if rc == 0 else " | " + out[-300:].replace("\n", " | ")))
