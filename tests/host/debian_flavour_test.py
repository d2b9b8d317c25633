#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# Debian's kernel flavours as lab kernels (scripts/lablib/debian.py,
# FLAVOURS): each stock kernel "N" has a cloud twin "N-cloud" of the same
# release, chroot and compiler; the chroot installs both flavours' headers
# (a pinned release both at the pin's ABI and version); and each kernel
# finds exactly its own flavour's headers tree, although "amd64" is also
# the end of "cloud-amd64" (a glob of linux-headers-*-amd64 matched both
# and stopped the lab), and reads its sources from the ABI's -common tree.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import sys
import tempfile

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import build, debian, kernels, suite  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check

for kver, want in (("5.10.0-32-amd64", "amd64"), ("5.10.0-32-cloud-amd64", "cloud-amd64"),
                   ("6.12.117+deb13-amd64", "amd64"), ("7.2.13+deb14-cloud-amd64", "cloud-amd64"),
                   ("6.1.0-56-rt-amd64", "rt-amd64"), ("6.1.0-56-common", None),
                   ("7.2.13+deb14-common", None)):
    got = debian.flavour_of(kver)
    check(got == want, f"the flavour of {kver} is {want}", f"got {got}")

for name, facts in debian.KERNELS.items():
    k, c = kernels.get(name), kernels.get(f"{name}-cloud")
    check(k.flavour == "amd64" and c.flavour == "cloud-amd64" and c.release == k.release and
          c.gcc == k.gcc and c.base is c,
          f"{name}-cloud: {k.release}'s cloud flavour, built by {k.gcc} in the same chroot, "
          "judged by its own headers", f"{c}")
    check(c.name not in kernels.DEFAULT, f"{name}-cloud: not a default kernel",
          f"{kernels.DEFAULT}")
    pkgs = debian._packages(facts["release"])
    pin = facts.get("pin")
    want = [f"linux-headers-{pin['abi']}-{f}={pin['version']}" for f in debian.FLAVOURS] \
        if pin else [f"linux-headers-{f}" for f in debian.FLAVOURS]
    check(all(w in pkgs for w in want), f"{name}: the chroot installs every flavour's headers",
          f"{pkgs}")

# Each kernel finds its own flavour's tree among both, and the -common
# tree of its ABI; a fake cache holds only the directories.
# Debian's arm64 6.12 (issue 49): a cross build in trixie's amd64 chroot,
# its own headers tree beside amd64's, ARCH and CROSS_COMPILE on every make;
# the amd64 kernels cross nothing.
a = kernels.get("6.12-arm64")
check(a.release == kernels.get("6.12").release and a.flavour == "arm64" and a.cross and
      a.make_vars == "ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-" and a.base is a and
      a.name not in kernels.DEFAULT,
      "6.12-arm64: cross-built in trixie's chroot, its own flavour, not a default kernel", f"{a}")
# Debian's arm64 6.1 the same way in bookworm's chroot, of the pinned
# ABI and version (the download takes the amd64 tree's version).
b = kernels.get("6.1-arm64")
check(b.release == kernels.get("6.1").release and b.flavour == "arm64" and b.cross and
      b.make_vars == a.make_vars and b.base is b and b.name not in kernels.DEFAULT,
      "6.1-arm64: cross-built in bookworm's chroot, its own flavour, not a default kernel", f"{b}")
# Debian's arm64 5.10 in bullseye's chroot, of the amd64 5.10's ABI and
# version, with bullseye's default cross compiler (gcc-10, as the kernel).
d = kernels.get("5.10-arm64")
check(d.release == kernels.get("5.10").release and d.flavour == "arm64" and d.cross and
      d.make_vars == a.make_vars and d.base is d and d.name not in kernels.DEFAULT,
      "5.10-arm64: cross-built in bullseye's chroot, its own flavour, not a default kernel", f"{d}")
# Debian's arm64 7.2 in sid's chroot with its own compiler, named per
# kernel (CROSS_KERNELS' "gcc"): gcc-16, whatever sid's default cross gcc
# is; the others keep the release's default and the packages they had.
c = kernels.get("7.2-arm64")
check(c.release == kernels.get("7.2").release and c.flavour == "arm64" and c.cross and
      c.make_vars == a.make_vars and c.name not in kernels.DEFAULT and c.gcc == "gcc-16" and
      debian.CROSS_KIND._packages(c)[0] == "gcc-16-aarch64-linux-gnu" and
      c.arch.tool(c.gcc) == "aarch64-linux-gnu-gcc-16",
      "7.2-arm64: cross-built in sid's chroot with gcc-16-aarch64-linux-gnu, not a default kernel",
      f"{c} {c.gcc} {debian.CROSS_KIND._packages(c)}")
check(all(debian.CROSS_KIND._packages(k) == ["gcc-aarch64-linux-gnu", "binutils-aarch64-linux-gnu",
                                             "libc6-dev-arm64-cross", "perl"] and
          k.arch.tool(k.gcc) == "aarch64-linux-gnu-gcc" for k in (a, b, d)),
      "6.12-arm64, 6.1-arm64, 5.10-arm64: the release's default cross compiler, the same packages as before",
      f"{debian.CROSS_KIND._packages(a)} {debian.CROSS_KIND._packages(b)} "
      f"{debian.CROSS_KIND._packages(d)}")
# Debian's cloud flavour of arm64 (linux-image-cloud-arm64), of the ABI
# and release of the amd64 cloud twin it is based on: its own flavour,
# the release's default cross compiler and the same cross packages as
# the generic arm64 kernel of that release.
for name, generic, cloud in (("6.12-cloud-arm64", a, "6.12-cloud"),
                             ("6.1-cloud-arm64", b, "6.1-cloud")):
    k = kernels.get(name)
    check(k.release == kernels.get(cloud).release == generic.release and
          k.flavour == "cloud-arm64" and k.cross and k.arch is generic.arch and
          k.make_vars == generic.make_vars and k.base is k and k.name not in kernels.DEFAULT and
          debian.CROSS_KIND._packages(k) == debian.CROSS_KIND._packages(generic) and
          debian.CROSS_KERNELS[name]["base"] == cloud,
          f"{name}: {cloud}'s ABI, cross-built in {k.release}'s chroot as {generic} is, its own "
          "flavour, not a default kernel", f"{k} {k.release} {k.flavour}")
check(debian.flavour_of("6.12.117+deb13-cloud-arm64") == "cloud-arm64",
      "the flavour of 6.12.117+deb13-cloud-arm64", debian.flavour_of("6.12.117+deb13-cloud-arm64"))
check(all(not kernels.get(n).cross and kernels.get(n).make_vars == "" for n in debian.KERNELS),
      "the amd64 kernels: no cross build, nothing added to make", "")
check(debian.flavour_of("6.12.117+deb13-arm64") == "arm64", "the flavour of 6.12.117+deb13-arm64",
      debian.flavour_of("6.12.117+deb13-arm64"))

# CI's profile leaves a cloud kernel's later package steps to its generic
# twin when both run (suite.package_checks): only a cloud kernel has one,
# and only when the twin is in the run.
run = {"6.1", "6.1-cloud", "7.2-cloud", "6.12-arm64"}
got = {n: suite.generic_twin(kernels.get(n), run) for n in sorted(run)}
check(got == {"6.1": None, "6.1-cloud": "6.1", "7.2-cloud": None, "6.12-arm64": None},
      "a cloud kernel's generic twin, for the package steps: 6.1-cloud's is 6.1 when it runs; "
      "none for 7.2-cloud without 7.2, nor for generic or arm64 kernels", f"{got}")

# A kernel of another architecture runs only its own groups beside its
# amd64 kernel of the same ABI in CI's profile (suite.run_kernel).
run = {"6.12", "6.12-arm64", "6.1-arm64", "6.1-cloud", "6.1-cloud-arm64", "6.12-cloud-arm64"}
got = {n: suite.amd64_twin(kernels.get(n), run) for n in sorted(run)}
check(got == {"6.12": None, "6.12-arm64": "6.12", "6.1-arm64": None, "6.1-cloud": None,
              "6.1-cloud-arm64": "6.1-cloud", "6.12-cloud-arm64": None},
      "an arm64 kernel's amd64 twin, for CI's arm64 group: 6.12-arm64's is 6.12 and "
      "6.1-cloud-arm64's 6.1-cloud when they run; none for 6.1-arm64 without 6.1, nor "
      "6.12-cloud-arm64 without 6.12-cloud, nor for amd64 kernels", f"{got}")
check(suite.generic_twin(kernels.get("6.12-cloud-arm64"), {"6.12", "6.12-arm64"}) is None,
      "a cloud arm64 kernel has no generic twin for the package steps (it runs none)", "")

with tempfile.TemporaryDirectory() as tmp:
    os.environ["VFSFAST_CACHE"] = tmp
    for name, facts in debian.KERNELS.items():
        pin = facts.get("pin")
        abi = pin["abi"] if pin else {"bullseye": "5.10.0-32", "trixie": "6.12.117+deb13",
                                      "sid": "7.2.13+deb14"}.get(facts["release"], "9.9.9-1")
        src = os.path.join(tmp, "chroots", facts["release"], "usr/src")
        for tree in ("amd64", "cloud-amd64", "common"):
            os.makedirs(os.path.join(src, f"linux-headers-{abi}-{tree}"))
        for k in (kernels.get(name), kernels.get(f"{name}-cloud")):
            check(k.kver == f"{abi}-{k.flavour}",
                  f"{k}: its own flavour's headers of the two ({abi}-{k.flavour})", k.kver)
            want = os.path.join(src, f"linux-headers-{abi}-common", "include/linux/fs.h")
            got = k.source_header("include/linux/fs.h")
            check(got == want, f"{k}: sources from the ABI's -common tree", got)
    # A cloud arm64 kernel's uname -r is its amd64 cloud twin's ABI with
    # its own flavour, its sources that ABI's -common tree.
    for name in ("6.12-cloud-arm64", "6.1-cloud-arm64"):
        k = kernels.get(name)
        base = kernels.get(debian.CROSS_KERNELS[name]["base"])
        abi = base.kver[:-len(base.flavour)]
        check(k.kver == f"{abi}cloud-arm64", f"{k}: {base}'s ABI, flavour cloud-arm64", k.kver)
        got = k.source_header("include/linux/fs.h")
        want = os.path.join(tmp, "chroots", k.release, "usr/src",
                            f"linux-headers-{abi}common", "include/linux/fs.h")
        check(got == want, f"{k}: sources from the ABI's -common tree", got)


# Whether a kernel signs its own return addresses (t_pac runs only where
# it does): ARM64_PTR_AUTH_KERNEL, or on a kernel whose configuration
# predates that option (5.10-arm64) ARM64_PTR_AUTH, which covered both.
class FakeKernel:
    def __init__(self, d, conf, dotconfig):
        self.headers_dir, self.conf = d, conf
        if dotconfig is not None:
            with open(os.path.join(d, ".config"), "w") as f:
                f.write(dotconfig)

    def config(self):
        return self.conf


with tempfile.TemporaryDirectory() as tmp:
    cases = (("5.10-arm64", {"CONFIG_ARM64_PTR_AUTH": "y"}, "CONFIG_ARM64_PTR_AUTH=y\n", "y"),
             ("6.1-arm64", {"CONFIG_ARM64_PTR_AUTH": "y", "CONFIG_ARM64_PTR_AUTH_KERNEL": "y"},
              "CONFIG_ARM64_PTR_AUTH=y\nCONFIG_ARM64_PTR_AUTH_KERNEL=y\n", "y"),
             ("6.x, user PAC only", {"CONFIG_ARM64_PTR_AUTH": "y"},
              "CONFIG_ARM64_PTR_AUTH=y\n# CONFIG_ARM64_PTR_AUTH_KERNEL is not set\n", None),
             ("amd64", {"CONFIG_X86_64": "y"}, "CONFIG_X86_64=y\n", None))
    for i, (what, conf, dotconfig, want) in enumerate(cases):
        d = os.path.join(tmp, str(i))
        os.makedirs(d)
        got = build.config_option(FakeKernel(d, conf, dotconfig), "CONFIG_ARM64_PTR_AUTH_KERNEL")
        check(got == want, f"kernel return addresses signed ({what}): {want}", f"{got}")
RESULTS.finish()
