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


def marks(command, kernel):
    """The lines that fence, in a document, the block that `vfsfast-lab
    COMMAND --doc` writes for a kernel."""
    return (f"<!-- vfsfast-lab {command} --kernels {kernel}: begin -->",
            f"<!-- vfsfast-lab {command} --kernels {kernel}: end -->")


def update_doc(path, command, blocks):
    """Put each (kernel, block) into the document at @path between the
    kernel's marks (replacing the block there), or, where the document has
    none, before the line `<!-- vfsfast-lab COMMAND: new kernels -->`."""
    with open(path) as f:
        text = f.read()
    anchor = f"<!-- vfsfast-lab {command}: new kernels -->"
    for k, block in blocks:
        b, e = marks(command, k)
        if b in text and e in text:
            i, j = text.index(b), text.index(e) + len(e)
            text = text[:i] + block + text[j:]
        elif anchor in text:
            text = text.replace(anchor, block + "\n\n" + anchor)
        else:
            die(f"{path}: neither {b!r} nor {anchor!r}")
    with open(path, "w") as f:
        f.write(text)
