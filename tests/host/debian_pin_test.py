#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The pinned stock kernels (scripts/lablib/debian.py, KERNELS): 6.1 is the
# kernel bookworm hosts that take security updates run, named by ABI and
# package version from bookworm-security, so that its figures reproduce.
# A pinned release's chroot lists the pin's suite and installs the pinned
# headers, not the release's linux-headers-amd64, and apt's preferences
# keep every other package the release's own (without them bookworm's
# linux-source-6.1, the legacy kernels' source, became bookworm-security's
# 6.1.192 instead of 6.1.176); no other chroot changes.
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
        prefs = debian._preferences(rel) or ""
        stanzas = [dict(l.split(": ", 1) for l in st.splitlines()) for st in prefs.split("\n\n")]
        rest = [st for st in stanzas if st.get("Package") == "*"]
        kern = [st for st in stanzas if "linux-headers-*" in st.get("Package", "").split()]
        check(rest and rest[0].get("Pin") == f"release n={p['suite']}" and
              int(rest[0].get("Pin-Priority", "999")) < 500,
              f"{name}: nothing but the kernel comes from {p['suite']} (priority under "
              "the release's 500: linux-source-6.1 of the legacy kernels stays the release's)",
              prefs)
        check(kern and int(kern[0].get("Pin-Priority", "0")) >= 500 and
              "linux-kbuild-*" in kern[0]["Package"].split(),
              f"{name}: the kernel's headers, image and kbuild may come from {p['suite']}",
              prefs)
    else:
        check(len(src.splitlines()) == 1 and "linux-headers-amd64" in pkgs and
              debian._preferences(rel) is None,
              f"{name}: unpinned, the release's own headers and nothing else", src)
RESULTS.finish()
