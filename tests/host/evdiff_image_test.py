#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# guest.evdiff_image() when two kernels' guests ask for it at once, as
# `make demo` does (its kernels run in threads of one process): the
# interleaving that broke it is forced, not hoped for.  The first
# thread's gzip waits (up to 3 s) until another thread reaches its own
# gzip of the same image; without the lock both get there, and the second
# gzip finds the first one's output ("already exists").  With it, the
# second thread waits for the first and takes its image.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import shutil
import sys
import tempfile
import threading

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import guest, util  # noqa: E402

RESULTS = hostktap.Results()

if not shutil.which("mkfs.ext4") and not os.path.exists("/sbin/mkfs.ext4"):
    print("ok - # SKIP mkfs.ext4 missing")
    RESULTS.finish()

cache = tempfile.mkdtemp(prefix="vfsfast-evdiff-test-")
os.environ["VFSFAST_CACHE"] = cache
real_run = util.run
at_gzip = threading.Semaphore(0)
first = threading.Event()


def run(cmd, *args, **kw):
    if cmd[0] == "gzip":
        at_gzip.release()
        if not first.is_set():
            first.set()
            # Hold the first gzip until a second thread is at its own.
            at_gzip.acquire(timeout=3)
            at_gzip.acquire(timeout=3)
    return real_run(cmd, *args, **kw)


def die(msg):
    raise RuntimeError(msg)


util.run = run
util.die = die
results = {}


def ask(i):
    try:
        results[i] = guest.evdiff_image()
    except (RuntimeError, SystemExit) as e:
        results[i] = e


threads = [threading.Thread(target=ask, args=(i,)) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
errors = [r for r in results.values() if not isinstance(r, str)]
RESULTS.check(not errors, "two threads asking at once: neither fails",
              "; ".join(str(e)[:200] for e in errors))
paths = {r for r in results.values() if isinstance(r, str)}
RESULTS.check(len(paths) == 1 and len(results) == 2 and all(map(os.path.exists, paths)),
              "both get the same image, and it exists", repr(results))
shutil.rmtree(cache, ignore_errors=True)
RESULTS.finish()
