#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The userland images' file lists (scripts/lablib/userland.py): in a
# chroot with a foreign architecture (bookworm's, which cross-builds for
# arm64), a package installed for both architectures is an ambiguous name
# to dpkg -L, which then lists nothing after it; the closure drops
# arch-qualified names and LISTED names each package by the chroot's own
# architecture (or all).  Run here with dpkg-query, dpkg and apt-cache
# stand-ins on PATH that answer as that chroot did.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import subprocess
import sys
import tempfile

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import userland  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check

# Package Architecture binary:Package, as bookworm's chroot with
# gcc-aarch64-linux-gnu's closure answered (plus an arm64-only package).
INSTALLED = """\
base-files amd64 base-files
gcc-12-base amd64 gcc-12-base:amd64
gcc-12-base arm64 gcc-12-base:arm64
libc6 amd64 libc6:amd64
libc6 arm64 libc6:arm64
libc6-arm64-cross all libc6-arm64-cross
tzdata all tzdata
zlib1g arm64 zlib1g:arm64
"""

STUBS = {
    "dpkg-query": f"""#!/bin/sh
case "$*" in
*binary:Package*) printf '%s' '{INSTALLED}' ;;
*Essential*) printf '%s\\n' 'base-files yes required' 'libc6 no required' 'tzdata no optional' ;;
esac
""",
    "dpkg": """#!/bin/sh
case "$1" in
--print-architecture) echo amd64 ;;
-L) shift; for p; do case $p in *:*:*) exit 2 ;; esac; echo "/listed/$p"; done ;;
esac
""",
    "apt-cache": """#!/bin/sh
printf '%s\\n' base-files gcc-12-base gcc-12-base:arm64 libc6 libc6:arm64 \\
	'  Depends: libc6' tzdata
""",
}

with tempfile.TemporaryDirectory() as d:
    for name, text in STUBS.items():
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o755)
    env = dict(os.environ, PATH=d + ":" + os.environ["PATH"])

    def sh(script, pkgs):
        p = subprocess.run(["sh", "-c", f"PKGS='{pkgs}'\n" + script], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return p.returncode, p.stdout.split()

    rc, closure = sh(userland.CLOSURE, "systemd")
    check(rc == 0 and closure == ["base-files", "gcc-12-base", "libc6", "tzdata"],
          "the closure holds no arch-qualified name", f"rc {rc}: {closure}")
    rc, listed = sh(userland.LISTED, " ".join(closure + ["libc6-arm64-cross", "zlib1g"]))
    check("/listed/gcc-12-base:amd64" in listed and "/listed/libc6:amd64" in listed,
          "a package of both architectures is listed as the chroot's own", f"{listed}")
    check("/listed/base-files" in listed and "/listed/tzdata" in listed
          and "/listed/libc6-arm64-cross" in listed,
          "single-architecture and Architecture: all packages are listed by name", f"{listed}")
    check(not any(x.endswith(":arm64") for x in listed) and "/listed/zlib1g" not in listed
          and "/listed/zlib1g:arm64" not in listed,
          "nothing of the foreign architecture is listed", f"{listed}")
    check(not any(x in ("/listed/gcc-12-base", "/listed/libc6") for x in listed),
          "no ambiguous bare name reaches dpkg -L", f"{listed}")

RESULTS.finish()
