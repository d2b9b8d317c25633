"""`vfsfast-lab style`: checkpatch.pl on the module's sources.

checkpatch() used to sit in debian.py after its `if __name__ ==
"__main__"` guard; it is the style check's tool, so it lives with the
style check, and debian.py keeps to chroots and stock kernels.
"""

import glob
import os
import re
import shutil
import subprocess

from . import debian, util

CHECKPATCH_FILES = ["scripts/checkpatch.pl", "scripts/spelling.txt",
                    "scripts/const_structs.checkpatch"]

# The release whose linux-source-6.1 ships the checkpatch.pl the lab runs.
CHECKPATCH_RELEASE = "bookworm"


def checkpatch():
    """checkpatch.pl and its data files, from bookworm's linux-source-6.1.

    Only the kernel source tarball ships them, not the headers packages.
    """
    d = os.path.join(util.cache_dir(), "checkpatch")
    script = os.path.join(d, "scripts/checkpatch.pl")
    if os.path.exists(script):
        return script
    root = debian.ensure_chroot(CHECKPATCH_RELEASE)
    with debian.mounted(root):
        debian.in_chroot(root, "rm -rf /var/tmp/ls && mkdir -p /var/tmp/ls && cd /var/tmp/ls && "
                         "apt-get download -q linux-source-6.1", quiet=True)
    deb = glob.glob(os.path.join(root, "var/tmp/ls/linux-source-6.1_*.deb"))[0]
    tmp = d + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    members = " ".join(f"linux-source-6.1/{f}" for f in CHECKPATCH_FILES)
    util.run(["sh", "-ec", f"dpkg-deb --fsys-tarfile '{deb}' | "
              "tar -xO ./usr/src/linux-source-6.1.tar.xz | "
              f"tar -xJ -C '{tmp}' --strip-components=1 {members}"])
    shutil.rmtree(os.path.join(root, "var/tmp/ls"))
    shutil.rmtree(d, ignore_errors=True)
    os.rename(tmp, d)
    return script


def style():
    """checkpatch.pl --no-tree on every module source, the test-only
    modules' too; returns (ok, problems, number of files)."""
    repo = util.repo_dir()
    files = sorted(glob.glob(os.path.join(repo, "module/**/*.[chS]"), recursive=True) +
                   glob.glob(os.path.join(repo, "include/*.h")) +
                   glob.glob(os.path.join(repo, "tests/modules/*.c")))
    files = [os.path.relpath(f, repo) for f in files]
    script = checkpatch()
    p = subprocess.run(["perl", script, "--no-tree", "--terse", "--show-types", "-f"] + files,
                       cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    problems = [l for l in p.stdout.splitlines() if re.search(r"(ERROR|WARNING|CHECK):", l)]
    return p.returncode == 0 and not problems, problems, len(files)
