#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# vfsfast-ab --latency names each syscall by its number (ablat records
# raw_tp/sys_enter's id), and the numbers are the architecture's: openat
# is 257 on x86-64 and 56 on arm64, where 56 on x86-64 is clone.  The
# report's awk program (latency_report() in scripts/vfsfast-ab) keeps a
# table per machine; here each entry is checked against the kernel's own
# numbers in this machine's uapi headers (linux-libc-dev: x86-64's
# asm/unistd_64.h, and asm-generic/unistd.h, arm64's table), and the
# program is run on a histogram of openat for each machine, which must
# come out as "openat".
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import glob
import os
import re
import subprocess
import tempfile

import hostktap  # tests/host/, beside this file

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
RESULTS = hostktap.Results()
check = RESULTS.check

script = open(os.path.join(ROOT, "scripts/vfsfast-ab")).read()
m = re.search(r"^latency_report\(\) \{\n\tawk -v machine=\"\$\(uname -m\)\" '(.*?)' "
              r"\"\$results/latency_raw\.txt\"\n\}", script, re.S | re.M)
check(m is not None, "scripts/vfsfast-ab: latency_report() runs one awk program with machine "
      "set to uname -m")
program = m.group(1) if m else ""
branch = re.search(r'if \(machine == "aarch64"\) \{(.*?)\} else \{(.*?)\n\t\t\}', program, re.S)
tables = {}
if branch:
    for machine, text in (("aarch64", branch.group(1)), ("x86_64", branch.group(2))):
        tables[machine] = {int(n): name for n, name in
                           re.findall(r'NAME\[(\d+)\] = "(\w+)"', text)}
check(len(tables) == 2 and all(tables.values()),
      "the report has a syscall table for aarch64 and one for x86-64",
      f"{ {k: len(v) for k, v in tables.items()} }")


def numbers_generic(path):
    """asm-generic/unistd.h's __NR_<name>, 64-bit: __NR3264_<x> resolved
    to the name the 64-bit branch gives it (__NR_newfstatat for
    __NR3264_fstatat, ...)."""
    text = open(path).read()
    direct = {name: int(n) for name, n in re.findall(r"#define __NR_(\w+) (\d+)\b", text)}
    n3264 = {name: int(n) for name, n in re.findall(r"#define __NR3264_(\w+) (\d+)\b", text)}
    # The 64-bit names follow `#if __BITS_PER_LONG == 64 ...`: the first
    # definition of a name through __NR3264_ in the file is the 64-bit one.
    for name, target in re.findall(r"#define __NR_(\w+) __NR3264_(\w+)", text):
        if target in n3264 and name not in direct:
            direct[name] = n3264[target]
    return direct


def numbers_plain(path):
    return {name: int(n) for name, n in
            re.findall(r"#define __NR_(\w+) (\d+)\b", open(path).read())}


headers = {"aarch64": ("/usr/include/asm-generic/unistd.h", numbers_generic),
           "x86_64": (next(iter(glob.glob("/usr/include/x86_64-linux-gnu/asm/unistd_64.h") +
                                glob.glob("/usr/include/asm/unistd_64.h")), ""), numbers_plain)}
for machine, (path, parse) in headers.items():
    if not os.path.exists(path):
        check(True, f"{machine}: no {path or 'unistd_64.h'} on this machine (linux-libc-dev): "
              "its table not checked")
        continue
    nr = parse(path)
    table = tables.get(machine, {})
    wrong = [f"{n}={name} (header: {nr.get(name)})" for n, name in sorted(table.items())
             if nr.get(name) != n]
    check(table and not wrong, f"{machine}: each of the {len(table)} names of the report's "
          f"table has its number in {path}", "; ".join(wrong[:8]))
    if "openat" not in nr or not program:
        continue
    with tempfile.TemporaryDirectory() as tmp:
        raw = os.path.join(tmp, "latency_raw.txt")
        with open(raw, "w") as f:
            # <arm> <nr> <bucket> <count>: 100 calls of 6.4 us (bucket 12 * 64)
            f.write(f"off {nr['openat']} 768 100\non {nr['openat']} 768 100\n")
        p = subprocess.run(["awk", "-v", f"machine={machine}", program, raw],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    rows = [l.split()[0] for l in p.stdout.splitlines()[1:] if l and not l.startswith("(")]
    check(p.returncode == 0 and rows == ["openat"],
          f"{machine}: a histogram of syscall {nr['openat']} is reported as openat",
          p.stdout.strip()[:300])

RESULTS.finish()
