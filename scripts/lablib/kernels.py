"""The lab's kernels by name: kernels.get("6.1") is a kernel.Kernel.

Importing this module loads every kind of kernel (debian.py, legacy.py,
debugk.py), each of which registers its kernels with kernel.py as it
loads; the rest of the lab asks here, never those modules, for a kernel.
"""

from . import debian, debugk, legacy  # noqa: F401  (they register their kernels)
from .kernel import Kernel, get, names  # noqa: F401

# What `--kernels` means when not given: Debian's own kernels.
DEFAULT = list(debian.DEFAULT_KERNELS)


def releases():
    """The Debian releases of the lab's chroots, sorted."""
    return sorted({get(n).release for n in names()})


def stock(release):
    """The lab's stock Debian kernel of a release (whose chroot it is),
    or None."""
    for n in DEFAULT:
        if get(n).release == release:
            return get(n)
    return None
