#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The packages for every architecture the module has code for, checked
# without building them (a build is `make deb-arm64`, minutes and root):
#
#   - debian/control builds vfsfast-tools for each of the lab's
#     architectures (scripts/lablib/arch.py), vfsfast-dkms for all, and
#     marks clang, which only emits BPF, as the build machine's (:native):
#     without it a cross build's apt-get build-dep asks for arm64's clang;
#   - debian/rules takes the host compiler from dpkg's buildtools.mk and
#     hands it to the Makefile, which builds the workloads with $(CC), and
#     LATENCY=no under pkg.vfsfast.nolatency leaves ablat out even where
#     clang and libbpf-dev are installed (a build on this machine);
#   - dkms.conf's BUILD_EXCLUSIVE_ARCH takes each architecture's uname -m
#     and no other (DKMS skips the module there instead of failing);
#   - make deb-arm64 runs `vfsfast-lab deb --arch arm64`, whose --help
#     lists --arch and --dkms-kernels;
#   - deb.elf_check() tells a package of this machine's programs from one
#     of another architecture's (a .deb made here with dpkg-deb).
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import re
import shutil
import subprocess
import sys
import tempfile

import hostktap  # tests/host/, beside this file

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from lablib import arch, deb  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check


def stanzas(path):
    """debian/control's paragraphs as {field: value} (continuation lines
    joined)."""
    out = []
    for para in open(path).read().split("\n\n"):
        fields, last = {}, None
        for line in para.splitlines():
            if line.startswith((" ", "\t")) and last:
                fields[last] += "\n" + line.strip()
            elif ":" in line:
                last, value = line.split(":", 1)
                fields[last] = value.strip()
        if fields:
            out.append(fields)
    return out


control = stanzas(os.path.join(ROOT, "debian/control"))
source = control[0]
binary = {s["Package"]: s for s in control[1:]}
tools_arches = binary.get("vfsfast-tools", {}).get("Architecture", "").split()
check(sorted(tools_arches) == sorted(arch.ARCHES),
      "debian/control builds vfsfast-tools for each of the lab's architectures",
      f"Architecture: {' '.join(tools_arches)}; the lab's: {' '.join(arch.ARCHES)}")
check(binary.get("vfsfast-dkms", {}).get("Architecture") == "all",
      "vfsfast-dkms is Architecture: all (DKMS builds it on the machine)",
      binary.get("vfsfast-dkms", {}).get("Architecture"))
deps = [d.strip() for d in source.get("Build-Depends-Arch", "").split(",")]
clang = [d for d in deps if re.match(r"clang\b", d)]
check(len(clang) == 1 and clang[0].startswith("clang:native"),
      "Build-Depends-Arch: clang is the build machine's (clang:native)", f"{clang}")

rules = open(os.path.join(ROOT, "debian/rules")).read()
install = re.search(r"^override_dh_auto_install-arch:\n((?:\t.*\n)+)", rules, re.M)
recipe = install.group(1) if install else ""
check("include /usr/share/dpkg/buildtools.mk" in rules and
      re.search(r"install-scripts\b.*\bCC=\$\(CC\)", recipe),
      "debian/rules takes CC from buildtools.mk and passes it to make install-scripts",
      recipe.strip()[:200])
check(re.search(r"pkg\.vfsfast\.nolatency.*LATENCY=no", recipe, re.S),
      "debian/rules: the pkg.vfsfast.nolatency profile passes LATENCY=no", recipe.strip()[:200])

# The Makefile's own recipe, run: a compiler wrapper that notes each call
# stands for a cross compiler.
cc = shutil.which("cc")
if cc:
    with tempfile.TemporaryDirectory() as tmp:
        wrapper = os.path.join(tmp, "notecc")
        with open(wrapper, "w") as f:
            f.write(f"#!/bin/sh\necho \"$*\" >> {tmp}/calls\nexec {cc} \"$@\"\n")
        os.chmod(wrapper, 0o755)
        p = subprocess.run(["make", "-s", "install-scripts", f"DESTDIR={tmp}/dest", "prefix=/usr",
                            f"CC={wrapper}", "LATENCY=no"], cwd=ROOT, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace")
        libexec = os.path.join(tmp, "dest/usr/libexec/vfsfast")
        built = sorted(os.listdir(libexec)) if os.path.isdir(libexec) else []
        calls = open(os.path.join(tmp, "calls")).read() if os.path.exists(
            os.path.join(tmp, "calls")) else ""
        workloads = re.search(r"^WORKLOADS := (.*)$",
                              open(os.path.join(ROOT, "Makefile")).read(), re.M).group(1).split()
        check(p.returncode == 0 and all(re.search(rf"\bscripts/workloads/{w}\.c\b", calls)
                                        for w in workloads),
              "make install-scripts CC=... builds every workload with that compiler",
              f"rc={p.returncode}; calls: {calls.count(chr(10))}; {p.stdout[-300:]}")
        check(p.returncode == 0 and sorted(workloads) == built,
              "make install-scripts LATENCY=no: the workloads and no ablat, whatever is "
              "installed", f"built {built}")
else:
    RESULTS.check(True, "no cc on this machine: the Makefile's compile not run")

conf = open(os.path.join(ROOT, "dkms.conf")).read()
m = re.search(r'^BUILD_EXCLUSIVE_ARCH="([^"]*)"', conf, re.M)
pattern = m.group(1) if m else None
# DKMS matches with bash's =~, an ERE: this one is plain enough that
# Python's re reads it the same.
ours = [a.uname_m for a in arch.ARCHES.values()]
others = ["i686", "armv7l", "riscv64", "ppc64le", "s390x", "x86_64_v2", "aarch64_be"]
check(pattern is not None and all(re.search(pattern, u) for u in ours)
      and not any(re.search(pattern, u) for u in others),
      "dkms.conf: BUILD_EXCLUSIVE_ARCH takes " + " and ".join(ours) + " and no other",
      f"pattern {pattern!r}")

p = subprocess.run(["make", "-n", "deb-arm64"], cwd=ROOT, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, text=True, errors="replace")
check(p.returncode == 0 and re.search(r"vfsfast-lab deb --arch arm64\b", p.stdout),
      "make deb-arm64 runs vfsfast-lab deb --arch arm64", p.stdout.strip()[-200:])
p = subprocess.run([sys.executable, "-B", os.path.join(ROOT, "scripts/vfsfast-lab"), "deb",
                    "--help"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                   text=True, errors="replace")
check(p.returncode == 0 and "--arch" in p.stdout and "--dkms-kernels" in p.stdout,
      "vfsfast-lab deb --help lists --arch and --dkms-kernels", p.stdout[-200:])
check({str(k.arch) for k in deb.cross_kernels(arch.ARM64)} == {"arm64"}
      and len(deb.cross_kernels(arch.ARM64)) >= 1,
      "deb --arch arm64 has DKMS build for the lab's arm64 kernels",
      f"{[str(k) for k in deb.cross_kernels(arch.ARM64)]}")

# elf_check() on a package of this machine's programs.
if cc and shutil.which("dpkg-deb"):
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["VFSFAST_CACHE"] = os.path.join(tmp, "cache")
        tree = os.path.join(tmp, "pkg")
        os.makedirs(os.path.join(tree, "DEBIAN"))
        os.makedirs(os.path.join(tree, "usr/libexec/t"))
        with open(os.path.join(tree, "DEBIAN/control"), "w") as f:
            f.write("Package: t\nVersion: 1\nArchitecture: all\nMaintainer: t <t@invalid>\n"
                    "Description: t\n")
        with open(os.path.join(tmp, "t.c"), "w") as f:
            f.write("int main(void) { return 0; }\n")
        subprocess.run([cc, "-o", os.path.join(tree, "usr/libexec/t/prog"),
                        os.path.join(tmp, "t.c")], check=True)
        with open(os.path.join(tree, "usr/libexec/t/notes"), "w") as f:
            f.write("not a program\n")
        subprocess.run(["dpkg-deb", "--root-owner-group", "-b", tree, os.path.join(tmp, "t.deb")],
                       check=True, stdout=subprocess.DEVNULL)
        machine = os.uname().machine
        here = next((a for a in arch.ARCHES.values() if a.uname_m == machine), None)
        if here:
            ok_here, seen = deb.elf_check(os.path.join(tmp, "t.deb"), here)
            check(ok_here and list(seen) == ["/usr/libexec/t/prog"],
                  f"elf_check: a package of this machine's program is {here}'s", f"{seen}")
            other = next(a for a in arch.ARCHES.values() if a != here)
            ok_other, seen = deb.elf_check(os.path.join(tmp, "t.deb"), other)
            check(not ok_other, f"elf_check: the same package is not {other}'s", f"{seen}")
        else:
            check(True, f"elf_check: this machine ({machine}) is none of the lab's architectures")

RESULTS.finish()
