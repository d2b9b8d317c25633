"""The ext4 image the guest tests read symlinks from.

build(path) makes a small ext4 image holding symlinks of every length that
matters to readlink (both sides of the 60-byte fast/slow symlink boundary,
word and page boundaries, the 4095-byte maximum) and a few deliberately
damaged ones crafted with debugfs, and returns the link paths relative to
the image's root.  Only the stdlib and e2fsprogs (mkfs.ext4, debugfs) are
used.

    python3 scripts/lablib/ext4img.py IMG
"""

import os
import re
import subprocess
import sys
import tempfile

BLOCK_SIZE = 4096

# Fast symlinks (text in the inode's 60-byte i_block) hold at most 59 bytes;
# the lengths around 8/16/32/64 catch word-at-a-time strlen() edge cases,
# the rest cover slow symlinks up to the 4095-byte maximum.
LINK_LENGTHS = list(range(1, 71)) + [100, 127, 128, 129, 200, 500, 1000,
                                     2047, 2048, 4000, 4094, 4095]

# Not symlinks: readlink() on them must fail the same way in both passes.
NON_LINKS = ["files/regular", "files/dir"]

_ALPHA = b"abcdefghijklmnopqrstuvwxyz"
_UPPER = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"

# Damaged symlinks: (name, target written by mkfs, debugfs commands with
# {p} for the link's path, expected "Size:", expected "Fast link dest:" or
# None when debugfs does not show one).  The kernel keeps i_size and the
# NUL-terminated text apart, and a readlink() that trusted one over the
# other would differ from stock exactly here.
CORRUPT = [
    # i_size beyond the text: stock stops at the first NUL (26 bytes) on
    # kernels without a cached link length.
    ("size_longer", _ALPHA,
     ["sif {p} size 40"], 40, _ALPHA),
    # i_size inside the text: ext4 NUL-terminates i_block at i_size on load.
    ("size_shorter", _UPPER + b"0123456789abcd",
     ["sif {p} size 10"], 10, _UPPER[:10]),
    # NULs at offsets 4..7 (i_block[1]) while i_size stays 30.
    ("embedded_nul", b"0123456789" + _ALPHA[:20],
     ["sif {p} block[1] 0"], 30, b"0123"),
    # The last word of i_block (where the 59-byte text's NUL sits) made
    # non-zero; debugfs calls i_block[14] "block[TIND]".
    ("size_59_full", (_ALPHA * 3)[:59],
     ["sif {p} block[TIND] 0x41414141"], 59, _ALPHA * 2 + _ALPHA[:4] + b"AAA"),
    # Added: an empty fast symlink.  strlen() of "" and a zero-length
    # copy; newer kernels reject the inode instead, in both passes alike.
    ("size_zero", _ALPHA[:20],
     ["sif {p} size 0"], 0, None),
    # Added: a fast symlink (no blocks) whose i_size is past the 60-byte
    # i_block, so copying i_size bytes would read the rest of the inode.
    # Older kernels terminate at byte 59, newer ones treat it as a slow
    # symlink or reject it: either way both passes must agree.
    ("size_100_fast", _UPPER + _ALPHA[:24],
     ["sif {p} size 100"], 100, None),
    # Added: the same inconsistencies on a slow symlink (text in a data
    # block), which never has a cached length, so the replacement's own
    # strlen() is what runs.
    ("slow_size_shorter", (_ALPHA * 4)[:100],
     ["sif {p} size 80"], 80, None),
    ("slow_size_longer", (_UPPER * 4)[:100],
     ["sif {p} size 200"], 200, None),
    ("slow_embedded_nul", (_ALPHA * 4)[:100],
     ["zap_block -f {p} -o 10 -l 4 -p 0 0"], 100, None),
    # Added: a full block with no NUL anywhere (i_size 4096, the block's
    # last byte overwritten): the kernel must terminate at 4095 itself.
    ("slow_no_nul", (_UPPER * 158)[:4095],
     ["zap_block -f {p} -o 4095 -l 1 -p 0x41 0", "sif {p} size 4096"],
     4096, None),
]


def _target(n):
    """n deterministic bytes from 1..255 ('/' and high bytes included)."""
    return bytes((n * 7 + i * 13) % 255 + 1 for i in range(n))


def _bench_target(n):
    """An ASCII absolute path of exactly n bytes."""
    return (b"/" + (b"abcdefg/" * (n // 8 + 1)))[:n]


def _debugfs(img, cmd, write=False):
    """Run one debugfs request; return its stdout (bytes).

    debugfs exits 0 even when the request fails and says so only on
    stderr, so anything there besides its version banner is an error.
    """
    argv = ["debugfs"] + (["-w"] if write else []) + ["-R", cmd, img]
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = [line for line in p.stderr.decode("utf-8", "replace").splitlines()
           if line.strip() and not line.startswith("debugfs ")]
    if p.returncode != 0 or err:
        raise RuntimeError(f"debugfs {cmd!r} on {img} failed "
                           f"({p.returncode}): {' / '.join(err)}")
    return p.stdout


def _stat(img, rel):
    """(i_size, fast link text or None) as debugfs reports them."""
    out = _debugfs(img, f"stat {rel}")
    m = re.search(rb"^User:.*\sSize: (\d+)\s*$", out, re.M)
    if not m:
        raise RuntimeError(f"no size in debugfs stat {rel}:\n{out!r}")
    fast = None
    i = out.find(b'\nFast link dest: "')
    if i >= 0:
        # Printed raw: only right for texts without '"' + newline, which
        # holds for every text checked here.
        fast = out[i + 18:].split(b'"\n', 1)[0]
    return int(m.group(1)), fast


def _populate(root):
    links = []
    os.makedirs(os.path.join(root, "links"))
    for n in LINK_LENGTHS:
        rel = f"links/l{n:04d}"
        os.symlink(_target(n), os.path.join(root, rel).encode())
        links.append(rel)
    for n in (32, 100):
        rel = f"links/bench{n}"
        os.symlink(_bench_target(n), os.path.join(root, rel).encode())
        links.append(rel)

    os.makedirs(os.path.join(root, "files", "dir"))
    with open(os.path.join(root, "files", "regular"), "w") as f:
        f.write("vfsfast test image: a regular file, not a symlink\n")

    os.makedirs(os.path.join(root, "corrupt"))
    for name, target, _, _, _ in CORRUPT:
        rel = f"corrupt/{name}"
        os.symlink(target, os.path.join(root, rel).encode())
        links.append(rel)
    return links


def _size_mb(size_mb):
    # Every slow symlink takes a block; leave ample room for metadata.
    data = sum(BLOCK_SIZE for n in LINK_LENGTHS if n >= 60)
    data += sum(BLOCK_SIZE for c in CORRUPT if len(c[1]) >= 60)
    need = (data + (1 << 20) - 1) // (1 << 20) + 16
    return max(size_mb, need)


def build(path, size_mb=32):
    """Create the image at path; return the link paths relative to its root."""
    size_mb = _size_mb(size_mb)
    with tempfile.TemporaryDirectory(prefix="vfsfast-ext4-") as staging:
        os.chmod(staging, 0o755)
        links = _populate(staging)
        if os.path.exists(path):
            os.unlink(path)
        with open(path, "wb") as f:
            f.truncate(size_mb << 20)
        # -b: mke2fs.conf makes a 32 MiB filesystem "small", with 1 KiB
        # blocks, which cannot hold symlinks of 1024 bytes or more.
        subprocess.run(["mkfs.ext4", "-q", "-F", "-b", str(BLOCK_SIZE),
                        "-O", "^metadata_csum,^has_journal",
                        "-E", "root_owner=0:0", "-d", staging,
                        path, f"{size_mb}M"],
                       check=True, stdout=subprocess.DEVNULL)

    # The fast/slow boundary is what the lengths were chosen around.
    size, fast = _stat(path, "links/l0059")
    if size != 59 or fast is None:
        raise RuntimeError("links/l0059 is not a 59-byte fast symlink")
    size, fast = _stat(path, "links/l0060")
    if size != 60 or fast is not None:
        raise RuntimeError("links/l0060 is not a 60-byte slow symlink")

    for name, target, cmds, _, _ in CORRUPT:
        size, fast = _stat(path, f"corrupt/{name}")
        if size != len(target) or (len(target) < 60) != (fast is not None):
            raise RuntimeError(f"corrupt/{name}: mkfs made size {size}, "
                               f"fast {fast is not None}")
        for cmd in cmds:
            _debugfs(path, cmd.format(p=f"corrupt/{name}"), write=True)

    # debugfs reported no error, but check that the inodes really changed.
    for name, target, _, want_size, want_fast in CORRUPT:
        rel = f"corrupt/{name}"
        size, fast = _stat(path, rel)
        if size != want_size:
            raise RuntimeError(f"{rel}: size {size}, wanted {want_size}")
        if want_fast is not None and fast != want_fast:
            raise RuntimeError(f"{rel}: fast link text {fast!r}, "
                               f"wanted {want_fast!r}")
    data = _debugfs(path, "cat corrupt/slow_embedded_nul")
    if data[10:14] != b"\0" * 4 or len(data) != 100:
        raise RuntimeError("corrupt/slow_embedded_nul: zap_block failed")
    data = _debugfs(path, "cat corrupt/slow_no_nul")
    if len(data) != 4096 or b"\0" in data:
        raise RuntimeError("corrupt/slow_no_nul: block still has a NUL")
    return links


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(f"usage: {sys.argv[0]} IMAGE", file=sys.stderr)
        sys.exit(2)
    for rel in build(sys.argv[1]):
        print(rel)
