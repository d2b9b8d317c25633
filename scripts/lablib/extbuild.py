"""LTP and fstests' vfstest built static in a release's chroot (issue 48).

Neither suite is ever part of the project: the user names a checkout of
each, and this module builds what the external run needs from it, in the
build chroot of the kernel's release (the release's compiler and libc),
static so that the busybox guests run it without libraries.  The source
is the checkout's HEAD commit (`git archive`, so a dirty work tree never
leaks into a result that names a commit), and the build is cached under
$VFSFAST_CACHE/external/ keyed by suite, release and commit.

The build dependencies go into the chroot with apt, as debian.py installs
the module's, under the chroot's build lock (build.chroot_lock): other
lab runs share the chroot.
"""

import os
import shutil
import subprocess

from . import build, debian, util

# The syscall test directories of LTP (testcases/kernel/syscalls/<dir>)
# of every call a fast path touches: path lookup and permissions (access,
# faccessat, stat and friends, getname's callers), links (readlink, the
# *link*), fsnotify (inotify, fanotify, and the reads and writes it
# hooks: pipe, dup, close), kernfs and proc through open and getdents.
LTP_DIRS = [
    "access", "chdir", "chmod", "chown", "chroot", "close", "creat", "dup", "dup2",
    "dup3", "execve", "execveat", "faccessat", "faccessat2", "fanotify", "fchdir",
    "fchmod", "fchmodat", "fchmodat2", "fchown", "fchownat", "fcntl", "flock", "fstat",
    "fstatat", "getcwd", "getdents", "inotify", "link", "linkat", "lstat", "mkdir",
    "mkdirat", "mknod", "mknodat", "open", "openat", "openat2", "pipe", "readlink",
    "readlinkat", "rename", "renameat", "renameat2", "rmdir", "stat", "statx",
    "symlink", "symlinkat", "truncate", "unlink", "unlinkat", "utime", "utimensat",
    "utimes",
]

# What the builds need in the chroot.  Optional libraries (libcap, libacl,
# liburing) turn tests on rather than off: without them LTP's configure
# leaves tests TCONF and vfstest drops its io_uring and fscaps cases.
# xfslibs-dev and uuid-dev: fstests' configure refuses to run without them;
# libtool-bin (the libtool program its make runs) and libaio-dev: the rest
# of its tree (src/, the helpers its generic tests run).
# e2fsprogs and acl: the release's mke2fs and setfacl/getfacl, which the
# guests run (trixie's minbase chroot has no mke2fs).
BUILD_PACKAGES = ["e2fsprogs", "acl", "autoconf", "automake", "libtool", "m4", "pkg-config", "make", "gcc",
                  "libc6-dev", "libcap-dev", "libacl1-dev", "libattr1-dev", "liburing-dev",
                  "xfslibs-dev", "uuid-dev", "libtool-bin", "libaio-dev"]
DEPS_STAMP = ".vfsfast-external-deps"
# For a kernel of another architecture (kernel.cross), the optional
# libraries of that architecture, PKG:ARCH beside the chroot's own (they
# are Multi-Arch: same, the same version): the cross compiler finds them
# in /usr/lib/TRIPLET.  Installed only where apt would remove, replace or
# upgrade nothing of the chroot (apt-get -s says so), since other lab
# runs share it; otherwise the builds go without them (the tests that
# need them TCONF, vfstest without its io_uring and fscaps cases).
CROSS_LIBRARIES = ["libcap-dev", "libacl1-dev", "libattr1-dev", "liburing-dev"]

# Where a build happens inside the chroot (removed afterwards).
WORK = "/var/tmp/vfsfast-external"


def commit_of(checkout):
    """The checkout's HEAD commit; util.die() when it is no git work tree."""
    p = subprocess.run(["git", "-C", checkout, "rev-parse", "HEAD"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if p.returncode:
        util.die(f"{checkout}: not a git checkout (git rev-parse HEAD failed)")
    return p.stdout.strip()


def cross_libraries(kernel):
    """CROSS_LIBRARIES as PKG:ARCH for a cross kernel; [] for another."""
    return [f"{p}:{kernel.arch}" for p in CROSS_LIBRARIES] if kernel.cross else []


def _apt_refuses(root, packages):
    """What `apt-get -s install` of @packages would do to the chroot beyond
    installing new packages (lines Remv, and Inst of an installed package,
    which show its old version in brackets); [] when nothing."""
    out = debian.in_chroot(root, "apt-get -s install " + " ".join(packages) + " 2>&1",
                           capture=True, check=False)
    return [l for l in out.splitlines()
            if l.startswith(("Remv ", "E: ")) or (l.startswith("Inst ") and len(l.split()) > 2
                                         and l.split()[2].startswith("["))]


def deps(kernel):
    """BUILD_PACKAGES in the kernel's chroot, once (a stamp lists them),
    and a cross kernel's cross_libraries() where apt adds them cleanly
    (the stamp lists them as "refused:PKG" where it would not); the
    caller holds build.chroot_lock(kernel)."""
    root = kernel.chroot_dir
    stamp = os.path.join(root, DEPS_STAMP)
    want = BUILD_PACKAGES + cross_libraries(kernel)
    have = set(open(stamp).read().split()) if os.path.exists(stamp) else set()
    if {p.split(":", 1)[1] if p.startswith("refused:") else p for p in have} >= set(want):
        return
    util.log(f"{kernel.release}: installing the external suites' build dependencies")
    refused = []
    with debian.mounted(root):
        debian.in_chroot(root, "apt-get update -q && apt-get install -y -q "
                         + " ".join(BUILD_PACKAGES), quiet=True)
        extra = cross_libraries(kernel)
        if extra:
            would = _apt_refuses(root, extra)
            if would:
                util.log(f"{kernel}: not installing {' '.join(extra)}: apt would "
                         f"change the chroot ({'; '.join(would[:3])}); the tests that "
                         "need them will TCONF")
                refused = extra
            else:
                debian.in_chroot(root, "apt-get install -y -q " + " ".join(extra), quiet=True)
    with open(stamp, "w") as f:
        f.write("\n".join(sorted(have | {p for p in want if p not in refused}
                                 | {f"refused:{p}" for p in refused})) + "\n")


def _unpack(checkout, commit, dst):
    """The checkout's tree at commit into dst (a fresh directory)."""
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    util.run(["sh", "-ec", f"git -C '{checkout}' archive --format=tar {commit} | "
              f"tar -C '{dst}' -xf -"])


def _cached(name, kernel, commit):
    """The build's cache directory: one per suite, release, architecture
    (a release's chroot builds for amd64 and, cross, for arm64) and
    commit."""
    return os.path.join(util.cache_dir(), "external",
                        f"{name}-{kernel.release}-{kernel.arch}-{commit[:12]}")


def _toolchain(kernel):
    """The format fields of the build scripts for the kernel's
    architecture: cc and strip, the chroot's (cross) tools, and
    configure, what autoconf's configure adds for a cross build (the
    host triplet, the tools, pkg-config's directory of that
    architecture)."""
    a = kernel.arch
    configure = ""
    if kernel.cross:
        configure = (f"--build=$(gcc -dumpmachine) --host={a.triplet} CC={a.tool('gcc')} "
                     f"AR={a.tool('ar')} RANLIB={a.tool('ranlib')} STRIP={a.tool('strip')} "
                     f"PKG_CONFIG_LIBDIR=/usr/lib/{a.triplet}/pkgconfig:/usr/share/pkgconfig")
    return {"cc": a.tool("gcc"), "strip": a.tool("strip"), "configure": configure}


# LTP: the library, then each directory, installed under /opt/ltp.  The
# configure run is told -static so that its library probes link as the
# tests will (a library without a static archive counts as missing).
# libltp uses pthread mutexes: before glibc 2.34 (bullseye's 2.31) they
# are in libpthread.a, which a static link must name after -lltp, and
# some Makefiles append -lltp to LIBS; gcc's -pthread puts -lpthread
# after every library the command names (later glibcs keep an empty
# libpthread.a).  For another architecture, configure is told the
# cross compiler (_toolchain()).  The programs are stripped here, by the
# architecture's strip (the host's knows only its own).  .tconf lists the
# optional libraries configure did not find (config.h's HAVE_LIB*
# undefined): the tests that need them TCONF.
LTP_SCRIPT = """
cd {src}
make autotools >/dev/null
./configure -q --prefix=/opt/ltp {configure} "LDFLAGS=-static -pthread" >/dev/null
make -s -j{jobs} -C lib
for d in {dirs}; do
	make -s -j{jobs} -C testcases/kernel/syscalls/$d
	make -s -C testcases/kernel/syscalls/$d install DESTDIR={dest}
done
mkdir -p {dest}/opt/ltp/runtest
cp runtest/syscalls {dest}/opt/ltp/runtest/
for f in {dest}/opt/ltp/testcases/bin/*; do {strip} --strip-all "$f" 2>/dev/null || :; done
for h in LIBCAP LIBACL; do
	grep -q "^#define HAVE_$h 1" include/config.h || echo $h
done >{dest}/.tconf
"""

# vfstest: fstests' own configure (config.h says what the libc and
# libraries offer), then the one program, linked by hand: libtool's link
# line would be dynamic.  configure runs for the chroot's own
# architecture even for a cross build (it needs xfslibs and libuuid of
# the architecture it builds for, which vfstest does not use; the glibc
# is the same version): an optional library the cross compiler cannot
# link static is then taken out of config.h, and .tconf names it.
VFSTEST_SCRIPT = """
cd {src}
make configure >/dev/null
./configure -q >/dev/null
cd src/vfs
libs="-pthread"
: >{dest}/.tconf
links() {{
	echo 'int main(void) {{ return 0; }}' | {cc} -static -x c -o {dest}/.probe - -l$1 2>/dev/null
}}
for h in SYS_CAPABILITY_H:cap LIBURING:uring; do
	grep -q "^#define HAVE_${{h%:*}} 1" ../../include/config.h || continue
	if links ${{h#*:}}; then
		libs="$libs -l${{h#*:}}"
	else
		sed -i "/HAVE_${{h%:*}}/d" ../../include/config.h
		echo ${{h%:*}} >>{dest}/.tconf
	fi
done
rm -f {dest}/.probe
{cc} -O2 -static -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -I../../include -I.. \\
	-o {dest}/vfstest vfstest.c btrfs-idmapped-mounts.c idmapped-mounts.c utils.c \\
	tmpfs-idmapped-mounts.c $libs
"""

# fstests: the whole tree (check, common/, tests/, the helpers of src/),
# built in place as kvm-xfstests uses it (its `make install` skips the
# directories of src/ and ltp/ under a DESTDIR), linked dynamically as
# fstests always is; the objects are left out.  .libpackages names the
# release's packages that hold the libraries its programs load: the
# userland image that runs it installs them (the names change between
# releases: libaio1, libaio1t64).
FSTESTS_SCRIPT = """
cd {src}
make configure >/dev/null
./configure -q >/dev/null
# -k: a helper program an older release's headers cannot build (bullseye's
# glibc 2.31 has no RWH_WRITE_LIFE_NOT_SET for src/rw_hint.c) fails the
# tests that run it in both passes alike; the rest are built.  What did
# not build is listed in .build-failures.
make -k -s -j{jobs} >/dev/null 2>{dest}/.build-log || true
sed -n 's/^.*\\*\\*\\* \\[[^]]*: \\([^]]*\\)\\] Error.*/\\1/p' {dest}/.build-log | sort -u >{dest}/.build-failures
[ -x check ] && [ -x ltp/fsstress ] || {{ tail -n 20 {dest}/.build-log; exit 1; }}
find . -name '*.o' -delete
find . -type f -perm -u+x -exec ldd {{}} + 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\\// {{ print $3 }}' |
	sort -u | while read -r lib; do
		dpkg -S "*/${{lib##*/}}" 2>/dev/null | sed -n '1s/[:,].*//p'
	done | sort -u >{dest}/.libpackages
cd / && mv {src} {dest}/fstests
"""


def _build(name, kernel, checkout, script, **fmt):
    """Build in the chroot; returns the cache directory holding the result."""
    commit = commit_of(checkout)
    out = _cached(name, kernel, commit)
    if os.path.exists(os.path.join(out, ".ready")):
        return out
    kernel.ensure()
    # The lock only for apt: a build of minutes would hold up the module's
    # builds of every other lab run on the release.
    with build.chroot_lock(kernel):
        deps(kernel)
    root = kernel.chroot_dir
    rel = f"{WORK}/{name}.{os.getpid()}"
    work = os.path.join(root, rel.lstrip("/"))
    src, dest = os.path.join(work, "src"), os.path.join(work, "dest")
    try:
        _unpack(checkout, commit, src)
        os.makedirs(dest, exist_ok=True)
        util.log(f"{kernel.release}: building {name} {commit[:12]} (minutes)")
        text = script.format(src=f"{rel}/src", dest=f"{rel}/dest",
                             jobs=os.cpu_count() or 1, **_toolchain(kernel), **fmt)
        with debian.mounted(root):
            debian.in_chroot(root, text, quiet=True)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        shutil.move(dest, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    tconf = os.path.join(out, ".tconf")
    if os.path.exists(tconf) and open(tconf).read().split():
        util.log(f"{kernel}: {name} built without {' '.join(open(tconf).read().split())} "
                 "(the tests that need them TCONF)")
    with open(os.path.join(out, ".commit"), "w") as f:
        f.write(commit + "\n")
    open(os.path.join(out, ".ready"), "w").close()
    return out


def ltp(kernel, checkout, dirs=None):
    """LTP's tests of dirs (LTP_DIRS) for the kernel's release: the cache
    directory, whose opt/ltp/testcases/bin holds them and
    opt/ltp/runtest/syscalls says how each is run."""
    dirs = dirs or LTP_DIRS
    missing = [d for d in dirs if not os.path.isdir(
        os.path.join(checkout, "testcases/kernel/syscalls", d))]
    if missing:
        util.die(f"{checkout}: no testcases/kernel/syscalls/{{{','.join(missing)}}}: "
                 "not an LTP checkout, or an old one")
    return _build("ltp", kernel, checkout, LTP_SCRIPT, dirs=" ".join(dirs))


def vfstest(kernel, checkout):
    """fstests' vfstest for the kernel's release: the cache directory
    holding it."""
    if not os.path.isfile(os.path.join(checkout, "src/vfs/vfstest.c")):
        util.die(f"{checkout}: no src/vfs/vfstest.c: not an fstests checkout, or an old one")
    return _build("vfstest", kernel, checkout, VFSTEST_SCRIPT)


def fstests(kernel, checkout):
    """fstests' tree for the kernel's release, built: the cache directory,
    whose fstests/ holds check and the tests, and .libpackages the
    packages of the libraries its programs need."""
    if not os.path.isfile(os.path.join(checkout, "check")):
        util.die(f"{checkout}: no check: not an fstests checkout")
    if kernel.cross:
        # Dynamic, for the chroot's own architecture, and run in the
        # release's userland image of that architecture (userland.py).
        util.die(f"{kernel}: fstests' generic tests on a kernel of another architecture "
                 "are not done (its tree and userland are built for the chroot's own); "
                 "--suites ltp,vfstest")
    out = _build("fstests", kernel, checkout, FSTESTS_SCRIPT)
    path = os.path.join(out, ".build-failures")
    failed = [n for n in (open(path).read().split() if os.path.exists(path) else [])
              if n not in ("default", "all") and not os.path.isdir(os.path.join(out, "fstests", n))]
    if failed:
        util.log(f"{kernel.release}: fstests programs that did not build: {' '.join(failed)} "
                 "(the tests that run them fail alike in both passes)")
    return out
