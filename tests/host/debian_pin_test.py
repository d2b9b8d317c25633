#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The pinned stock kernels (scripts/lablib/debian.py, KERNELS): 6.1 is the
# kernel bookworm hosts that take security updates run, named by ABI and
# package version from bookworm-security, so that its figures reproduce.
# A pinned release's chroot lists the pin's suite and installs the pinned
# headers, not the release's linux-headers-amd64; no other chroot changes.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import re
import sys

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import debian  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check

pin = debian.KERNELS["6.1"].get("pin") or {}
check(pin.get("suite") == "bookworm-security", "6.1 is bookworm-security's kernel", f"{pin}")
check(bool(re.fullmatch(r"6\.1\.0-\d+", pin.get("abi", ""))) and
      bool(re.fullmatch(r"6\.1\.\d+-\d+", pin.get("version", ""))),
      "6.1 is pinned by ABI and package version", f"{pin}")
for name, facts in debian.KERNELS.items():
    rel, p = facts["release"], facts.get("pin")
    src, pkgs = debian._sources(rel), debian._packages(rel)
    check(src.splitlines()[0] == f"deb {debian.MIRROR} {rel} main",
          f"{name}: the chroot lists its release first", src)
    if p:
        check(any(l.split()[2] == p["suite"] for l in src.splitlines()[1:]),
              f"{name}: the chroot lists the pin's suite", src)
        want = f"linux-headers-{p['abi']}-amd64={p['version']}"
        check(want in pkgs and "linux-headers-amd64" not in pkgs,
              f"{name}: the chroot installs the pinned headers, not the release's", f"{pkgs}")
    else:
        check(len(src.splitlines()) == 1 and "linux-headers-amd64" in pkgs,
              f"{name}: unpinned, the release's own headers and nothing else", src)
RESULTS.finish()
