"""A lab kernel as an object: its name and every path and fact derived from it.

A kernel used to be a bare string ("6.1", "legacy", "5.10-debug") that each
module turned back into paths by asking debian.py, which asked legacy.py or
debugk.py, which imported debian.py back.  Now one Kernel owns its facts
(Debian release, compiler, image, headers, build and log directories,
guest memory and timeouts) and the kinds of kernel register theirs:

  debian.py   Debian's stock kernels (packages downloaded into a chroot)
  legacy.py   legacy, legacy-ref (built by the lab, kbuild.BuiltKind)
  debugk.py   5.10-debug, 6.12-debug (built by the lab, kbuild.BuiltKind)

kernels.py imports all three and is what the rest of the lab asks
(kernels.get(name)).  This module imports nothing of the lab but util and
arch, so that it sits at the bottom of the import graph (tests/host/
lablib_imports_test.py checks there is no cycle).
"""

import dataclasses
import glob
import os
import re
import shutil

from . import arch as arch_mod
from . import util

# Guest memory and timeouts.  The debug kernels (KASAN, lockdep, KFENCE)
# run their guests several times slower in TCG, and KASAN's shadow takes
# an eighth of the guest's memory on top of its quarantine: every guest
# timeout of theirs is scaled (vm.boot()), and their guests get more memory.
MEMORY_MB = 1024
DEBUG_MEMORY_MB = 2048
DEBUG_TIMEOUT_SCALE = 4


def chroot_dir(release):
    """The build chroot of a Debian release, shared by its kernels."""
    return os.path.join(util.cache_dir(), "chroots", release)


class Kind:
    """How the kernels of one family are obtained and where they lie.

    Subclassed by debian.DebianKind (Debian's packages, unpacked) and
    kbuild.BuiltKind (compiled by the lab); a Kernel forwards to its kind
    what differs between them, so no caller has to ask which it is.
    """

    # The lab compiles these kernels itself (and their package tests are
    # left to the release's stock kernel).
    built = False

    def ensure(self, k):
        """Make the kernel's image, modules and headers available; returns
        kernel_dir(k)."""
        raise NotImplementedError

    def release(self, k):
        """uname -r of the kernel (of its headers)."""
        raise NotImplementedError

    def kernel_dir(self, k):
        """The directory laid out like an unpacked image package."""
        raise NotImplementedError

    def headers_dir(self, k):
        """Host path of the tree the module builds against (KDIR)."""
        raise NotImplementedError

    def source_header(self, k, rel):
        """Host path of a kernel source file (e.g. include/linux/fs.h)."""
        raise NotImplementedError

    def chroot_argv(self, k, script):
        """argv running `sh -ec script` in the kernel's chroot."""
        raise NotImplementedError

    def cache_dir(self, k):
        """Where the lab keeps what it downloaded or built for the kernel."""
        raise NotImplementedError

    def busybox(self, k):
        """Host path of the static busybox the kernel's guests run: the
        host's own, of the host's architecture."""
        return shutil.which("busybox") or "/bin/busybox"

    def compile_static(self, k, src, exe, flags):
        """Compile one C file into a static program for the kernel's
        guests with the host's gcc (the host's architecture)."""
        util.run(["gcc"] + flags + ["-static", "-o", exe, src], quiet=True)


@dataclasses.dataclass(frozen=True, eq=False)
class Kernel:
    """One lab kernel.  str(k) is its name, so log lines and test names
    ("[6.1] ...") read as before.

    release: the Debian release whose chroot builds for it (and whose gcc,
    the compiler the kernel was built with, compiles the module).
    gcc: that compiler ("gcc-14"; "gcc", the release's default); a cross
    kernel's is its cross compiler's, <triplet>-<gcc> in the chroot
    (debian.CROSS_KERNELS).
    base_name: the kernel whose expectations it shares (a debug kernel is
    tested as its stock Debian kernel); None: itself.
    flavour: the Debian kernel flavour, the end of its uname -r after the
    ABI ("amd64", "cloud-amd64"): Debian's packages of one ABI differ only
    by it, so it alone tells the cloud kernel's headers from the generic's.
    """

    name: str
    release: str
    gcc: str
    kind: Kind
    base_name: str = None
    debug: bool = False
    flavour: str = "amd64"
    # The architecture the kernel runs on (arch.Arch; str() is Debian's
    # name): an arm64 kernel is built for in its release's amd64 chroot
    # with the cross compiler (make_vars), and boots in its own qemu.
    arch: arch_mod.Arch = arch_mod.AMD64

    def __str__(self):
        return self.name

    # --- facts -------------------------------------------------------------

    @property
    def built(self):
        """Compiled by the lab (legacy, legacy-ref, the debug kernels)."""
        return self.kind.built

    @property
    def base(self):
        """The Kernel whose configuration and headers the suite's
        expectations are read from: 5.10-debug's is 5.10, so that a debug
        build which lost a backend or an upstream change fails instead of
        being expected to; every other kernel's is itself."""
        return get(self.base_name) if self.base_name else self

    @property
    def cross(self):
        """Built for with a cross compiler."""
        return self.arch.cross

    @property
    def make_vars(self):
        """What every make for the kernel adds on its command line: a cross
        build's ARCH and CROSS_COMPILE (arch.Arch.make_vars)."""
        return self.arch.make_vars

    @property
    def memory_mb(self):
        return DEBUG_MEMORY_MB if self.debug else MEMORY_MB

    def timeout(self, seconds):
        """A guest timeout for this kernel (scaled for the debug kernels)."""
        return seconds * DEBUG_TIMEOUT_SCALE if self.debug else seconds

    # --- paths -------------------------------------------------------------

    @property
    def chroot_dir(self):
        """The release's build chroot (shared by the kernels of a release)."""
        return chroot_dir(self.release)

    @property
    def kver(self):
        """uname -r of the kernel whose headers the chroot has.  A lab-built
        kernel is built first if need be."""
        return self.kind.release(self)

    @property
    def kernel_dir(self):
        return self.kind.kernel_dir(self)

    @property
    def headers_dir(self):
        return self.kind.headers_dir(self)

    @property
    def cache_dir(self):
        return self.kind.cache_dir(self)

    @property
    def build_dir(self):
        """Where the lab keeps the modules it built for the kernel."""
        d = os.path.join(util.cache_dir(), "build", self.kver)
        os.makedirs(d, exist_ok=True)
        return d

    @property
    def log_dir(self):
        """Where the suite keeps the kernel's guest consoles and logs."""
        d = os.path.join(util.cache_dir(), "logs", self.name)
        os.makedirs(d, exist_ok=True)
        return d

    def source_header(self, rel):
        return self.kind.source_header(self, rel)

    def config(self):
        """The CONFIG_ options of the kernel's headers, as a dict."""
        conf = {}
        with open(os.path.join(self.headers_dir, "include/config/auto.conf")) as f:
            for line in f:
                m = re.match(r"(CONFIG_\w+)=(.*)$", line.strip())
                if m:
                    conf[m.group(1)] = m.group(2)
        return conf

    def header_text(self, rel):
        """Text of include/<rel> in the kernel's headers ("" if absent)."""
        path = self.source_header(os.path.join("include", rel))
        if not os.path.exists(path):
            return ""
        with open(path) as f:
            return f.read()

    def chroot_argv(self, script):
        return self.kind.chroot_argv(self, script)

    def ensure(self):
        return self.kind.ensure(self)

    @property
    def busybox(self):
        """Host path of the busybox of the kernel's guests (after ensure())."""
        return self.kind.busybox(self)

    def compile_static(self, src, exe, flags):
        """A static program for the kernel's guests, from one C file."""
        return self.kind.compile_static(self, src, exe, flags)

    def _find(self, patterns):
        for pat in patterns:
            hits = glob.glob(os.path.join(self.kernel_dir, pat))
            if hits:
                return hits[0]
        return None

    # 7.2 moved the image and its config into /usr/lib/modules/<release>/.
    @property
    def image(self):
        """Host path of the kernel image (vmlinuz) qemu boots."""
        return self._find(["boot/vmlinuz-*", "usr/lib/modules/*/vmlinuz"])

    @property
    def modules_dir(self):
        kver = self.kver
        return self._find([f"lib/modules/{kver}", f"usr/lib/modules/{kver}"])

    @property
    def system_map(self):
        """Host path of the image's System.map (None if it has none)."""
        return self._find(["boot/System.map-*"])


_KERNELS = {}


def register(k):
    """Make a Kernel known to get() (the kinds call this as they load)."""
    _KERNELS[k.name] = k
    return k


def get(name):
    """The Kernel of a name; util.die() for one nobody registered."""
    if isinstance(name, Kernel):
        return name
    try:
        return _KERNELS[name]
    except KeyError:
        util.die(f"unknown kernel {name!r}; choose from {' '.join(_KERNELS)}")


def names():
    """Every registered kernel's name, in registration order."""
    return list(_KERNELS)
