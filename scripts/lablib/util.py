"""Small helpers shared by the lab: logging, commands that fail loudly, paths."""

import os
import subprocess
import sys
import time

_T0 = time.monotonic()


def log(msg):
    print(f"[lab {time.monotonic() - _T0:7.1f}s] {msg}", file=sys.stderr, flush=True)


def die(msg):
    log(f"error: {msg}")
    sys.exit(2)


def repo_dir():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cache_dir():
    d = os.environ.get("VFSFAST_CACHE") or os.path.join(
        os.path.expanduser("~"), ".cache", "vfsfast")
    os.makedirs(d, exist_ok=True)
    return d


def run(cmd, quiet=False, check=True, capture=False, **kw):
    """Run a command; on failure show its output and stop the lab.

    quiet: keep the output unless the command fails.
    capture: return stdout as text.
    """
    if quiet or capture:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, errors="replace", **kw)
        if check and p.returncode != 0:
            sys.stderr.write(p.stdout[-8000:])
            die(f"command failed ({p.returncode}): {' '.join(map(str, cmd))[:300]}")
        return p.stdout if capture else p.returncode
    p = subprocess.run(cmd, **kw)
    if check and p.returncode != 0:
        die(f"command failed ({p.returncode}): {' '.join(map(str, cmd))[:300]}")
    return p.returncode
