"""What the lab-built kernels (legacy.py: legacy, legacy-ref; debugk.py:
5.10-debug, 6.12-debug) share: where a build lives, its stamp, the chroot
commands that see its tree, the source package, and the build itself from
`make bzImage modules` to the laid-out kernel/.  Each module makes one
Family for its kernels and keeps what is its own: the recipe hash, the
configuration, legacy's patch.

Everything lives in <cache>/<name>:
  linux-source-X.Y_*.deb   the source package, downloaded once
  linux-source-X.Y/        the built tree: the module's KDIR
  kernel/                  laid out like an unpacked Debian image package:
                           boot/vmlinuz-<release>, boot/System.map-<release>,
                           boot/config-<release>, lib/modules/<release>/
  build.log, .vfsfast-ready (a JSON stamp: recipe hash, release, timings)

kbuild.BuiltKind is what their Kernel objects (kernel.py) forward to: the
paths above and the build.

Inside the release's chroot the tree appears as
/usr/src/linux-headers-<release>, bind-mounted in a private mount namespace
for each command (Family.chroot_argv()), so nothing is mounted where other
lab runs sharing the chroot could see or unmount it; /lib/modules/<release>/
build in the chroot points there, for DKMS and `make install`.
"""

import fcntl
import glob
import json
import os
import resource
import shutil
import subprocess
import time

from . import kernel, util

# In a tree: the source package it was unpacked from (reuse_or_unpack).
SOURCE_MARK = ".lab-source"


def headers_in_chroot(kver):
    return f"/usr/src/linux-headers-{kver}"


def read_config(path):
    """A .config as a dict: option (without CONFIG_) -> value."""
    conf = {}
    with open(path) as f:
        for line in f:
            if line.startswith("CONFIG_"):
                k, _, val = line.strip().partition("=")
                conf[k[len("CONFIG_"):]] = val
    return conf


class Family:
    """The kernels one module builds.

    variants: name -> a dict with at least "source" (the source package)
    and "localversion" (the release suffix).  tag names what the family
    keeps outside <cache>/<name>: the chroot's stamp of installed build
    packages (.vfsfast-<tag>-packages) and the download directory
    (/var/tmp/vfsfast-<tag>-dl).  label is the name log lines give to
    what the variants share (the packages, the download); None: the
    variant's own name.  ensure(name) builds a kernel, for release()."""

    def __init__(self, variants, tag, build_packages, ensure, download_size, label=None):
        self.variants = variants
        self.tag = tag
        self.build_packages = build_packages
        self._ensure = ensure
        self.download_size = download_size
        self.label = label

    def _label(self, name):
        return self.label or name

    def dir(self, name):
        d = os.path.join(util.cache_dir(), name)
        os.makedirs(d, exist_ok=True)
        return d

    def src_dir(self, name):
        return os.path.join(self.dir(name), self.variants[name]["source"])

    def kernel_dir(self, name):
        return os.path.join(self.dir(name), "kernel")

    def stamp_path(self, name):
        return os.path.join(self.dir(name), ".vfsfast-ready")

    def stamp(self, name):
        """The stamp of the last complete build (a dict), or None."""
        try:
            with open(self.stamp_path(name)) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def release(self, name):
        """uname -r of the kernel, building it first if need be."""
        s = self.stamp(name)
        if not s:
            self._ensure(name)
            s = self.stamp(name)
        return s["release"]

    def chroot_argv(self, root, script, name=None, kver=None):
        """argv that runs `sh -ec script` in the release's chroot with /proc,
        /sys, /dev and (name given) that kernel's tree mounted in a private
        mount namespace: the mounts vanish with the command, and no other
        process sees them."""
        bind = ""
        if name:
            kver = kver or self.release(name)
            mp = f'"$r{headers_in_chroot(kver)}"'
            bind = f'mkdir -p {mp}; mount --bind "{self.src_dir(name)}" {mp}; '
        # A mount the chroot already has (debian.mounted() of another lab
        # command, which the private namespace copies) is kept: mount(8)
        # refuses a second sysfs on the same place.
        setup = ('r=$1; shift; '
                 'm() { mountpoint -q "$r/$1" || { t=$1; shift; mount "$@" "$r/$t"; }; }; '
                 'm proc -t proc proc; m sys -t sysfs sysfs; '
                 'm dev --bind /dev; m dev/pts --bind /dev/pts; '
                 f'{bind}'
                 'exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin '
                 'LC_ALL=C HOME=/root DEBIAN_FRONTEND=noninteractive /bin/sh -ec "$1"')
        return ["unshare", "--mount", "--propagation", "private", "sh", "-ec", setup, "sh",
                root, script]

    def chroot_run(self, root, script, name, kver, log):
        """Run script in the chroot (chroot_argv), output to the log; dies on
        failure with the log's end."""
        with open(log, "a") as f:
            f.write(f"### {script.strip()}\n")
            f.flush()
            rc = subprocess.call(self.chroot_argv(root, script, name, kver), stdout=f,
                                 stderr=subprocess.STDOUT)
        if rc:
            with open(log, errors="replace") as f:
                tail = f.read()[-6000:]
            util.log(f"{name}: last lines of {log}:\n{tail}")
            util.die(f"{name}: kernel build step failed ({rc}): {script.strip()[:200]}")

    def _ensure_build_packages(self, root, name):
        stamp_file = os.path.join(root, f".vfsfast-{self.tag}-packages")
        pkgs = self.build_packages
        if os.path.exists(stamp_file) and \
                set(open(stamp_file).read().split()) >= set(pkgs):
            return
        util.log(f"{self._label(name)}: installing kernel build packages in {root}: "
                 f"{' '.join(pkgs)}")
        # The chroot may be shared with other lab runs: wait for their apt.
        util.run(self.chroot_argv(root, "apt-get -o DPkg::Lock::Timeout=600 update -q && "
                                  "apt-get -o DPkg::Lock::Timeout=600 install -y -q "
                                  + " ".join(pkgs)), quiet=True)
        with open(stamp_file, "w") as f:
            f.write("\n".join(pkgs) + "\n")

    def _source_deb(self, root, name):
        """The cached source package (any variant's download of the same
        package serves them all, its own first); downloaded with apt in the
        chroot the first time."""
        pkg = self.variants[name]["source"]
        for n in [name] + [v for v in self.variants
                           if v != name and self.variants[v]["source"] == pkg]:
            found = sorted(glob.glob(os.path.join(util.cache_dir(), n, f"{pkg}_*_all.deb")))
            if found:
                return found[-1]
        who = self._label(name)
        util.log(f"{who}: apt-get download {pkg} ({self.download_size})")
        tmp = f"/var/tmp/vfsfast-{self.tag}-dl"
        util.run(self.chroot_argv(root, f"rm -rf {tmp} && mkdir -p {tmp} && cd {tmp} && "
                                  f"apt-get download -q {pkg}"), quiet=True)
        debs = glob.glob(os.path.join(root, tmp.lstrip("/"), f"{pkg}_*_all.deb"))
        if len(debs) != 1:
            util.die(f"{who}: expected one {pkg} package, got {debs}")
        dst = os.path.join(self.dir(name), os.path.basename(debs[0]))
        shutil.move(debs[0], dst)
        shutil.rmtree(os.path.join(root, tmp.lstrip("/")))
        return dst

    def start(self, root, name):
        """A build's first steps: the stamp dropped, the build packages in
        the chroot, the source package at hand (returned)."""
        if os.path.exists(self.stamp_path(name)):
            os.unlink(self.stamp_path(name))
        self._ensure_build_packages(root, name)
        return self._source_deb(root, name)

    def unpack(self, deb, name):
        """A fresh tree from the package; returns the kernel release."""
        pkg = self.variants[name]["source"]
        src = self.src_dir(name)
        tmp = src + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        util.log(f"{name}: unpacking {os.path.basename(deb)}")
        util.run(["sh", "-ec", f"dpkg-deb --fsys-tarfile '{deb}' | "
                  f"tar -xO ./usr/src/{pkg}.tar.xz | "
                  f"tar -xJ -C '{tmp}' --strip-components=1"])
        shutil.rmtree(src, ignore_errors=True)
        os.rename(tmp, src)
        with open(os.path.join(src, SOURCE_MARK), "w") as f:
            f.write(os.path.basename(deb) + "\n")
        return self._tree_release(name)

    def reuse_or_unpack(self, deb, name, old):
        """The tree of the last build when it came from the same package
        (its mark, or old, the stamp of that build, says so) and has a
        .config; a fresh one (unpack) otherwise.  Returns the release.
        Only for variants built from the package as it is (no patches):
        Kbuild then rebuilds what a new configuration touches and no more,
        as after any config change in a kernel tree (fixdep records each
        object's CONFIG_ dependencies), so a recipe change costs minutes,
        not the hour of a full debug build."""
        src = self.src_dir(name)
        base = os.path.basename(deb)
        try:
            with open(os.path.join(src, SOURCE_MARK)) as f:
                mark = f.read().strip()
        except OSError:
            mark = (old or {}).get("source")
        if mark != base or not os.path.isfile(os.path.join(src, ".config")):
            return self.unpack(deb, name)
        util.log(f"{name}: reusing the tree built from {base}; Kbuild rebuilds what the "
                 "new configuration touches")
        with open(os.path.join(src, SOURCE_MARK), "w") as f:
            f.write(base + "\n")
        return self._tree_release(name)

    def _tree_release(self, name):
        src = self.src_dir(name)
        v = {}
        with open(os.path.join(src, "Makefile")) as f:
            for line in f:
                k, sep, val = line.partition("=")
                if sep and k.strip() in ("VERSION", "PATCHLEVEL", "SUBLEVEL", "EXTRAVERSION"):
                    v[k.strip()] = val.strip()
                if len(v) == 4:
                    break
        return (f"{v['VERSION']}.{v['PATCHLEVEL']}.{v['SUBLEVEL']}{v['EXTRAVERSION']}"
                f"{self.variants[name]['localversion']}")

    def new_log(self, name):
        """<cache>/<name>/build.log, emptied."""
        log = os.path.join(self.dir(name), "build.log")
        open(log, "w").close()
        return log

    def _chroot_modules_dir(self, root, name, kver):
        """/lib/modules/<release> in the chroot: build -> the tree, and the
        module lists modules_install wrote, for depmod."""
        d = os.path.join(root, "lib/modules", kver)
        os.makedirs(d, exist_ok=True)
        build = os.path.join(d, "build")
        if os.path.lexists(build):
            os.unlink(build)
        os.symlink(headers_in_chroot(kver), build)
        mods = os.path.join(self.kernel_dir(name), "lib/modules", kver)
        for f in glob.glob(os.path.join(mods, "modules.*")):
            shutil.copyfile(f, os.path.join(d, os.path.basename(f)))

    def ensure(self, name, root, want, build):
        """kernel_dir(name) once built for the recipe hash want, calling
        build() under the variant's lock if it is not.  Idempotent: a
        matching stamp means nothing to do."""
        s = self.stamp(name)
        if s and s.get("hash") == want and os.path.exists(
                os.path.join(self.kernel_dir(name), "boot", f"vmlinuz-{s['release']}")):
            if not os.path.islink(os.path.join(root, "lib/modules", s["release"], "build")):
                self._chroot_modules_dir(root, name, s["release"])
            return self.kernel_dir(name)
        with open(os.path.join(self.dir(name), ".build.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            s = self.stamp(name)
            if s and s.get("hash") == want:
                return self.kernel_dir(name)
            return build()

    def compile(self, root, name, kver, log, cost, stamp):
        """Build the configured tree (bzImage and modules, at nice 19), lay
        out kernel/ and write the stamp: the dict stamp (hash, release,
        ...) followed by the timings.  cost: what the log line says the
        build takes.  Returns kernel_dir(name)."""
        tree = headers_in_chroot(kver)
        jobs = os.cpu_count() or 1
        util.log(f"{name}: building {kver} with {jobs} jobs at nice 19 (log: {log}); {cost}")
        t0 = time.monotonic()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.chroot_run(root, f"cd {tree} && nice -n 19 make -j{jobs} bzImage modules && "
                        f'test "$(cat include/config/kernel.release)" = {kver}', name, kver, log)
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.monotonic() - t0
        cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
        util.log(f"{name}: built in {wall / 60:.1f} min wall, {cpu / 60:.1f} min CPU")
        # Install into a staging directory inside the tree, then lay out
        # kernel/ as an unpacked image package.
        self.chroot_run(root, f"cd {tree} && rm -rf .lab-install && "
                        "make -s modules_install INSTALL_MOD_PATH=.lab-install", name, kver, log)
        kdir = self.kernel_dir(name)
        shutil.rmtree(kdir, ignore_errors=True)
        os.makedirs(os.path.join(kdir, "boot"))
        src = self.src_dir(name)
        shutil.copyfile(os.path.join(src, "arch/x86/boot/bzImage"),
                        os.path.join(kdir, "boot", f"vmlinuz-{kver}"))
        shutil.copyfile(os.path.join(src, "System.map"),
                        os.path.join(kdir, "boot", f"System.map-{kver}"))
        shutil.copyfile(os.path.join(src, ".config"), os.path.join(kdir, "boot", f"config-{kver}"))
        os.makedirs(os.path.join(kdir, "lib/modules"))
        os.rename(os.path.join(src, ".lab-install/lib/modules", kver),
                  os.path.join(kdir, "lib/modules", kver))
        shutil.rmtree(os.path.join(src, ".lab-install"))
        for link in ("build", "source"):
            p = os.path.join(kdir, "lib/modules", kver, link)
            if os.path.lexists(p):
                os.unlink(p)
        self._chroot_modules_dir(root, name, kver)
        with open(self.stamp_path(name), "w") as f:
            json.dump(dict(stamp, build_wall_s=round(wall), build_cpu_s=round(cpu),
                           jobs=jobs, date=time.strftime("%Y-%m-%d %H:%M:%S")), f)
            f.write("\n")
        return kdir


class BuiltKind(kernel.Kind):
    """The kind of the lab-built kernels (kernel.Kind): paths from their
    Family, and ensure(name), the module's own build, for what is missing.
    Their chroot commands mount what they need privately
    (Family.chroot_argv), so callers need no debian.mounted()."""

    built = True

    def __init__(self, family, ensure):
        self.family = family
        self._ensure = ensure

    def ensure(self, k):
        return self._ensure(k.name)

    def release(self, k):
        return self.family.release(k.name)

    def kernel_dir(self, k):
        return self.family.kernel_dir(k.name)

    def headers_dir(self, k):
        return self.family.src_dir(k.name)

    def source_header(self, k, rel):
        """In the built tree (which is also the headers)."""
        return os.path.join(self.family.src_dir(k.name), rel)

    def chroot_argv(self, k, script):
        return self.family.chroot_argv(k.chroot_dir, script, k.name)

    def cache_dir(self, k):
        return self.family.dir(k.name)
