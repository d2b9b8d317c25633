"""`vfsfast-lab external`: the suites kernel maintainers trust, LTP's syscall
tests, fstests' vfstest and fstests' generic tests, in the lab's guests
with every knob off and then on (issue 48; Documentation/lab.md,
"External validators").

Per kernel, one guest with the kernel's default backend: the suites are
built static in the release's chroot (extbuild.py), written into an ext4
image the guest mounts read-only from its virtio disk (hundreds of static
binaries would not fit an initramfs beside the tests' own filesystems),
and tests/guest/external.sh runs them on each filesystem, each pass.
fstests' check, which needs bash, xfs_io and the rest of a userland, runs
chrooted into the release's own (userland.py's "fstests" image, carried
on the same disk).  The host compares the passes test by test
(extresults.py).

The checkouts are the user's: nothing here fetches them, and CI, which
cannot, never runs this.
"""

import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

from . import build, debian, extbuild, extresults, guest, userland, util

FILESYSTEMS = ["tmpfs", "ext4", "ext2", "ext3"]
# vfstest's suites (--test-NAME) that the generic tests run (generic/633,
# 644, 645, 656, 689, 696, 697) and tmpfs/001's; btrfs's needs btrfs.
VFSTEST_SUITES = ["core", "fscaps-regression", "nested-userns", "setattr-fix-968219708108",
                  "setxattr-fix-705191b03d50", "setgid-create-umask", "setgid-create-acl",
                  "tmpfs"]
# vfstest on these filesystems only: the suites ask for no device of
# their own, and ext2/3 add nothing to its VFS cases that ext4 lacks.
VFSTEST_FILESYSTEMS = ["tmpfs", "ext4"]

# fstests' generic tests: those of the quick group (each under 30 s on a
# real machine; under TCG ten to fifty times that) in a group of what the
# fast paths answer: permissions and ACLs (acl, perms, cap, idmapped),
# xattrs (attr: getxattr's lookups), directories and names (dir, rename),
# O_TMPFILE (unlink).  Chosen by fstests' own group lists of the checkout
# (tests/generic/group.list), so its new tests join.
FSTESTS_GROUPS = ["acl", "attr", "perms", "cap", "idmapped", "dir", "rename", "unlink"]
# The quick tests of links, symlinks, renames, getcwd and stat that no
# such group names, by name.  (No generic quick test is about fsnotify:
# LTP's inotify and fanotify tests are.)
FSTESTS_NAMED = {
    "generic/002": "a regular file's link count",
    "generic/023": "renameat2() without flags",
    "generic/024": "renameat2(RENAME_NOREPLACE)",
    "generic/025": "renameat2(RENAME_EXCHANGE)",
    "generic/028": "getcwd() racing renames (t_getcwd)",
    "generic/035": "rename over an existing file",
    "generic/078": "renameat2(RENAME_WHITEOUT)",
    "generic/184": "mknod's nodes work",
    "generic/236": "a link's ctime",
    "generic/294": "EEXIST, not EROFS, creating an existing name on a read-only mount",
    "generic/360": "a symlink to a very long path",
    "generic/378": "permissions through hard links",
    "generic/423": "statx()",
    # Directory reads (readdir_arena), beyond the dir group's 257, 471,
    # 637 and 736 (generic/310, readdir racing lseek, is not quick).
    "generic/676": "seekdir to valid and invalid positions",
}
# fstests' own marks of tests nobody should run.
FSTESTS_NEVER = {"dangerous", "broken", "deprecated"}
FSTESTS_FILESYSTEMS = ["ext4"]
SUITES = ["ltp", "vfstest", "fstests"]

HOW_TO_GET = {
    "ltp": "git clone https://github.com/linux-test-project/ltp /root/src/ltp",
    "fstests": "git clone https://git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git /root/src/xfstests",
}


def need_checkouts(ltp, fstests):
    """util.die()-like exit 2 naming the command to run, when neither
    checkout is given or a given one is missing."""
    problems = []
    if not ltp and not fstests:
        problems.append("no checkout named: give --ltp PATH and/or --fstests PATH "
                        "(make check-external LTP=PATH FSTESTS=PATH)")
    for name, path in (("ltp", ltp), ("fstests", fstests)):
        if path and not os.path.isdir(path):
            problems.append(f"{name} checkout {path} is missing; get one with: "
                            f"{HOW_TO_GET[name]}")
    if problems:
        for p in problems:
            util.log(f"error: {p}")
        util.log("example: " + HOW_TO_GET["ltp"] + " && " + HOW_TO_GET["fstests"]
                 + " && make check-external LTP=/root/src/ltp FSTESTS=/root/src/xfstests "
                 "KERNELS=6.12")
        raise SystemExit(2)


def runtest_lines(runtest_text, binaries, match=None):
    """The lines of LTP's runtest file whose program was built (binaries:
    names in testcases/bin), and whose tag contains one of match, if
    given: "TAG COMMAND ARGS..." each, comments and blanks left out."""
    out = []
    for line in runtest_text.splitlines():
        f = line.split()
        if not f or f[0].startswith("#") or len(f) < 2 or f[1] not in binaries:
            continue
        if match and not any(m in f[0] for m in match):
            continue
        out.append(" ".join(f))
    return out


def generic_tests(group_list, match=None):
    """The tests of FSTESTS_GROUPS and FSTESTS_NAMED in fstests' group
    list (tests/generic/group.list: "NNN GROUP..." lines), quick and in no
    group of FSTESTS_NEVER; with match, only those whose name contains
    one of it.  Names as check takes them (generic/NNN)."""
    out = []
    for line in group_list.splitlines():
        f = line.split("#", 1)[0].split()
        if not f:
            continue
        name, groups = f"generic/{f[0]}", set(f[1:])
        if "quick" not in groups or groups & FSTESTS_NEVER:
            continue
        if not (groups & set(FSTESTS_GROUPS) or name in FSTESTS_NAMED):
            continue
        if match and not any(m in name for m in match):
            continue
        out.append(name)
    return out


def suites_image(ltp_dir, vfs_dir, ltp_match, fst_dir=None, fst_root=None):
    """An ext4 image of what the guest runs (ltp/testcases/bin stripped,
    ltp/runtest, vfstest, fstests/ and the root filesystem image check
    runs in, fstests-root.img); (path, number of LTP tests).  The caller
    removes it."""
    stage = tempfile.mkdtemp(prefix="vfsfast-ext-stage-", dir=util.cache_dir())
    try:
        n = 0
        if ltp_dir:
            src = os.path.join(ltp_dir, "opt/ltp/testcases/bin")
            dst = os.path.join(stage, "ltp/testcases/bin")
            shutil.copytree(src, dst, symlinks=True)
            subprocess.call(["sh", "-c", f"strip --strip-all '{dst}'/* 2>/dev/null"])
            with open(os.path.join(ltp_dir, "opt/ltp/runtest/syscalls")) as f:
                lines = runtest_lines(f.read(), set(os.listdir(src)), ltp_match)
            with open(os.path.join(stage, "ltp/runtest"), "w") as f:
                f.write("".join(l + "\n" for l in lines))
            n = len(lines)
        if vfs_dir:
            shutil.copy2(os.path.join(vfs_dir, "vfstest"), os.path.join(stage, "vfstest"))
        if fst_dir:
            shutil.copytree(os.path.join(fst_dir, "fstests"), os.path.join(stage, "fstests"),
                            symlinks=True)
            try:
                os.link(fst_root, os.path.join(stage, "fstests-root.img"))
            except OSError:  # the userland cache on another filesystem
                shutil.copy2(fst_root, os.path.join(stage, "fstests-root.img"))
        size_mb = int(util.run(["du", "-sm", stage], capture=True).split()[0]) * 5 // 4 + 32
        fd, img = tempfile.mkstemp(prefix="vfsfast-ext-", suffix=".img", dir=util.cache_dir())
        os.close(fd)
        with open(img, "wb") as f:
            f.truncate(size_mb << 20)
        util.run(["mkfs.ext4", "-q", "-F", "-d", stage, "-E", "root_owner=0:0", img], quiet=True)
        return img, n
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def mke2fs_files(kernel):
    """{guest path: host path}: the release's mke2fs (of the kernel's
    architecture) with its libraries and e2fsprogs' mke2fs.conf."""
    files = debian.chroot_programs(kernel, ["/usr/sbin/mke2fs"])
    root = debian.foreign_unpack(kernel, ["e2fsprogs"]) if kernel.cross else kernel.chroot_dir
    conf = os.path.join(root, "etc/mke2fs.conf")
    if os.path.isfile(conf):
        files["/etc/mke2fs.conf"] = conf
    return files


def guest_tools(kernel):
    """{guest path: host path}: the release's mke2fs with its libraries and
    configuration, setfacl and getfacl (vfstest's ACL cases run them),
    glibc's NSS module for files, which the static tests' getpwnam()
    loads before glibc 2.34 (bullseye's 2.31), with the loader beside it:
    the libc.so.6 it pulls in names the loader as a library, and a static
    program's dlopen() looks for it in the multiarch directory, not in
    /lib64; and the kernel's configuration where LTP's tst_kconfig looks
    (/boot/config-RELEASE).  For a kernel of another architecture, all of
    them of that architecture (debian.foreign_programs())."""
    files = mke2fs_files(kernel)
    files.update(debian.chroot_programs(kernel, ["/usr/bin/setfacl", "/usr/bin/getfacl"]))
    # For a kernel of another architecture, the NSS module and the loader
    # are its libc6's, unpacked beside the programs above (which brought
    # e2fsprogs' mke2fs.conf there too), not the chroot's own.
    root = debian.foreign_unpack(kernel, ["libc6"]) if kernel.cross else kernel.chroot_dir
    lib = f"usr/lib/{kernel.arch.multiarch}"
    loaders = [os.path.relpath(p, root) for p in glob.glob(os.path.join(root, lib, "ld-linux*.so.*"))]
    for rel in [f"{lib}/libnss_files.so.2"] + loaders:
        path = os.path.realpath(os.path.join(root, rel))
        if os.path.isfile(path):
            files["/" + rel.replace("usr/lib/", "lib/", 1)] = path
    configs = glob.glob(os.path.join(kernel.kernel_dir, "boot/config-*")) + \
        glob.glob(os.path.join(kernel.kernel_dir, "usr/lib/modules/*/config"))
    if configs:
        files[f"/boot/config-{kernel.kver}"] = configs[0]
    return files


def job_text(filesystems, passes, ltp, vfstest_suites, timeout, fst_tests=(), fst_fs=(),
             module_args=()):
    return (f"EXT_SUITES=/mnt/ext4 EXT_FS='{' '.join(filesystems)}' "
            f"EXT_PASSES='{' '.join(passes)}' EXT_LTP={1 if ltp else 0} "
            f"EXT_VFSTEST='{' '.join(vfstest_suites)}' EXT_TIMEOUT={timeout} "
            f"EXT_FSTESTS='{' '.join(fst_tests)}' EXT_FSTESTS_FS='{' '.join(fst_fs)}' "
            f"EXT_MODULE_ARGS='{' '.join(module_args)}'\n"
            ". /lab/external.sh\n")


def fstests_build(kernel, checkout, match):
    """fstests built for the kernel's release, its userland image and the
    generic tests chosen: (cache directory, image, tests)."""
    fst_dir = extbuild.fstests(kernel, checkout)
    with open(os.path.join(fst_dir, ".libpackages")) as f:
        libs = f.read().split()
    root = userland.of(kernel, "fstests", libs).ensure(kernel)
    with open(os.path.join(fst_dir, "fstests/tests/generic/group.list")) as f:
        tests = generic_tests(f.read(), match)
    if not tests:
        util.die(f"no fstests generic test chosen (--fstests-tests {' '.join(match or [])})")
    return fst_dir, root, tests


def fstests_missing(run, passes, filesystems, tests):
    """A problem for each pass and filesystem where check gave fewer
    results than tests asked for (check that never started is no
    difference between passes when it failed in both)."""
    out = []
    for p in dict.fromkeys(passes):
        for fs in filesystems:
            got = sum(1 for k, per in run.results.items()
                      if k[0] == "fstests" and k[1] == fs and p in per)
            if got < len(tests):
                out.append(f"fstests on {fs} with knobs {p}: {got} of {len(tests)} tests "
                           "have a result")
    return out


def fault_switches():
    """The fault-injection build's switches: every fi_* module parameter
    of module/*.c (they exist only in that build)."""
    names = set()
    mdir = os.path.join(util.repo_dir(), "module")
    for f in sorted(os.listdir(mdir)):
        if f.endswith(".c"):
            with open(os.path.join(mdir, f)) as src:
                names.update(re.findall(r"module_param(?:_string)?\((fi_\w+),", src.read()))
    return names


def check_fault(fault, switches=None):
    """The module parameters of --fault: NAME=VALUE each, NAME one of the
    fault-injection build's fi_* switches, so that a misspelt one stops
    the run here instead of being ignored by insmod in the guest."""
    switches = fault_switches() if switches is None else switches
    for arg in fault:
        m = re.fullmatch(r"(fi_\w+)=([\w-]+)", arg)
        if not m:
            util.die(f"--fault {arg}: not NAME=VALUE with NAME a fault-injection "
                     "switch (fi_...), e.g. fi_stat_gid_from_uid=1")
        if m.group(1) not in switches:
            util.die(f"--fault {arg}: the fault-injection build has no switch "
                     f"{m.group(1)}; it has {' '.join(sorted(switches))}")


def fault_module(kernel):
    """The fault-injection build (vfsfast-fi.ko) for the kernel: its path,
    or None with the build's log printed."""
    ok, log = build.make_w1(kernel)
    if not ok:
        print(log[-3000:])
        return None
    return build.test_modules(kernel)["/lab/vfsfast-fi.ko"]


def run_kernel(kernel, ltp, fstests, filesystems, passes, ltp_match, timeout, guest_timeout,
               suites=SUITES, fstests_match=None, fault=()):
    """One kernel's guest; returns (ok, summary dict).  With @fault (module
    parameters), the module loaded is the fault-injection build with them,
    and the run's logs go to external-fault, apart from the real runs'."""
    t0 = time.monotonic()
    if kernel.cross and "fstests" in suites:
        # extbuild.fstests(): its tree and userland are the chroot's own
        # architecture's.
        util.log(f"{kernel}: no fstests generic tests on a kernel of another architecture "
                 "(not done yet)")
        suites = [s for s in suites if s != "fstests"]
    kernel.ensure()
    # The tree the module is built from, named before the build: a run
    # takes an hour and more, and the work tree may move meanwhile.
    commit = extbuild.commit_of(util.repo_dir())
    ko, log = build.guest_module(kernel)
    if ko and fault:
        ko = fault_module(kernel)
        log = ""
    if not ko:
        print(log[-3000:])
        return False, {"kernel": str(kernel), "error": "module build failed"}
    ltp_dir = extbuild.ltp(kernel, ltp) if ltp and "ltp" in suites else None
    vfs_dir = extbuild.vfstest(kernel, fstests) if fstests and "vfstest" in suites else None
    fst_fs = [fs for fs in filesystems if fs in FSTESTS_FILESYSTEMS]
    fst_dir = fst_root = None
    fst_tests = []
    if fstests and "fstests" in suites and fst_fs:
        fst_dir, fst_root, fst_tests = fstests_build(kernel, fstests, fstests_match)
    with build.chroot_lock(kernel):
        extbuild.deps(kernel)
    built_s = time.monotonic() - t0
    img, n = suites_image(ltp_dir, vfs_dir, ltp_match, fst_dir, fst_root)
    keep = os.path.join(kernel.log_dir, "external-fault" if fault else "external")
    shutil.rmtree(keep, ignore_errors=True)
    vfs_suites = VFSTEST_SUITES if vfs_dir else []
    util.log(f"{kernel}: {n} LTP tests, {len(vfs_suites)} vfstest suites, on "
             f"{' '.join(filesystems)}; "
             + (f"{len(fst_tests)} fstests generic tests on {' '.join(fst_fs)}; "
                if fst_tests else "no fstests generic tests; ")
             + f"knobs {' then '.join(passes)}"
             + (f"; the fault-injection build with {' '.join(fault)}" if fault else "")
             + f" (guest log: {keep})")
    done = [0]

    def progress(chunk):
        for line in chunk.splitlines():
            if line.startswith("EXT-RES"):
                done[0] += 1
                if done[0] % 100 == 0:
                    util.log(f"{kernel}: {done[0]} results")
            elif line.startswith("EXT-TIME"):
                util.log(f"{kernel}: {line}")
            elif line.startswith("EXT-FST ") and "/" in line.split(" ", 4)[3]:
                util.log(f"{kernel}: fstests {line.split(' ', 3)[1]}: {line.split(' ', 3)[3]}")

    try:
        # fstests' two devices are files in the guest's memory too.
        res = guest.run_job(kernel, job_text(filesystems, passes, ltp_dir, vfs_suites, timeout,
                                             fst_tests, fst_fs, fault), ko,
                            disk=guest.Disk(img, []), timeout=guest_timeout, keep_dir=keep,
                            extra_files=guest_tools(kernel), on_output=progress,
                            memory_mb=3072 if fst_tests else 2048)
    finally:
        os.unlink(img)
    run = extresults.parse(res.output)
    rep = extresults.compare(run, passes[0], passes[-1]) if len(passes) > 1 else None
    lines = extresults.format_report(rep, run, kernel) if rep else []
    problems = []
    if not res.completed or "EXT-DONE" not in res.output:
        problems.append("the guest did not finish" + (" (timed out)" if res.timed_out else ""))
    problems += [f"console: {l.strip()}" for l in res.bad_lines[:5]]
    problems += [l for l in res.output.splitlines()
                 if l.startswith(("EXT-KNOB-STUCK", "EXT-LOAD-FAILED"))]
    if not run.results:
        problems.append("no results")
    problems += fstests_missing(run, passes, fst_fs, fst_tests) if fst_tests else []
    # A filesystem that could not be made is the lab's failure, not the kernel's.
    problems += [f"could not make {k[1]} with knobs {p}" for k, per in run.results.items()
                 if k[0] == "mount" for p in per]
    for l in lines:
        print(l)
    for p in problems:
        print(f"[{kernel}] PROBLEM: {p}")
    summary = {
        "kernel": str(kernel), "kver": kernel.kver,
        "vfsfast_commit": commit,
        "ltp_commit": extbuild.commit_of(ltp) if ltp else None,
        "fstests_commit": extbuild.commit_of(fstests) if fstests else None,
        "filesystems": filesystems, "passes": passes, "ltp_tests": n,
        "vfstest_suites": vfs_suites, "fstests_tests": fst_tests,
        "fstests_filesystems": fst_fs if fst_tests else [], "tests": rep.tests if rep else len(run.results),
        "counts": {p: dict(c) for p, c in rep.counts.items()} if rep else {},
        "differences": len(rep.differences) if rep else None,
        "missing": len(rep.missing) if rep else None,
        "kernel_failures": [f"{k[0]} {k[2]} on {k[1]}: {o}" for k, o in rep.kernel_failures]
        if rep else [], "knobs": run.knobs,
        "guest_s": round(res.seconds), "build_s": round(built_s),
        "seconds": {" ".join(k): v for k, v in run.seconds.items()},
        "console_clean": res.clean, "problems": problems, "fault": list(fault),
    }
    os.makedirs(keep, exist_ok=True)
    with open(os.path.join(keep, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
    with open(os.path.join(keep, "report.txt"), "w") as f:
        f.write("".join(l + "\n" for l in lines + problems))
    ok = not problems and (rep is None or rep.identical)
    print(f"[{kernel}] {'ok' if ok else 'NOT OK'}: {summary['tests']} tests, guest "
          f"{summary['guest_s']} s (build {summary['build_s']} s); {keep}/summary.json")
    return ok, summary


def summary_path(kernel):
    return os.path.join(kernel.log_dir, "external", "summary.json")


def doc_key(summary):
    """Where a run's figures go in lab.md: the kernel's marks, or, for a
    run of some suites only (--suites), marks naming them too, so that
    one suite's run never overwrites another's figures.  The suites run
    are those that counted something."""
    suites = [s for s, key in (("ltp", "ltp_tests"), ("vfstest", "vfstest_suites"),
                               ("fstests", "fstests_tests")) if summary.get(key)]
    if set(suites) == set(SUITES):
        return summary["kernel"]
    return f"{summary['kernel']} --suites {','.join(suites)}"


def doc_block(summary):
    """A kernel's figures for lab.md, between its marks (doc_key()): one
    row per pass, then the failures the kernel has with every knob off."""
    b, e = util.marks("external", doc_key(summary))
    passes = summary["passes"]
    commits = ", ".join(f"{what} `{summary[key][:12]}`" for what, key in
                        (("vfsfast", "vfsfast_commit"), ("LTP", "ltp_commit"),
                         ("fstests", "fstests_commit")) if summary.get(key))
    on = summary["knobs"].get(passes[-1], "").split()
    ran = [f"{summary['ltp_tests']} LTP programs"] if summary.get("ltp_tests") else []
    ran += ([f"{len(summary['vfstest_suites'])} vfstest suites"]
            if summary.get("vfstest_suites") else [])
    out = [b, f"**{summary['kernel']}** ({summary['kver']}); {commits}; "
           + (f"{' and '.join(ran)} on {', '.join(summary['filesystems'])}; " if ran else "")
           + (f"{len(summary['fstests_tests'])} fstests generic tests on "
              f"{', '.join(summary['fstests_filesystems'])}; " if summary.get("fstests_tests") else "")
           + f"{len(on)} knobs on in the `{passes[-1]}` pass ({', '.join(on) or 'none'}); "
           f"guest {summary['guest_s'] / 60:.0f} min, build {summary['build_s']} s; "
           f"console {'clean' if summary['console_clean'] else 'NOT clean'}.", "",
           "| knobs | cases | " + " | ".join(extresults.CLASSES) + " | differences | missing |",
           "|---|" + "---:|" * (len(extresults.CLASSES) + 3)]
    for i, p in enumerate((passes[0], passes[-1])):
        c = summary["counts"].get(p, {})
        cmp = (f" {summary['differences']} | {summary['missing']} |" if i else " | |")
        out.append(f"| {p} | {sum(c.values())} | "
                   + " | ".join(str(c.get(k, 0)) for k in extresults.CLASSES) + " |" + cmp)
    own = summary["kernel_failures"]
    out += ["", "The kernel's own, the same with every knob off: "
            + ("; ".join(f"`{f}`" for f in own) if own else "none") + ".", e]
    return "\n".join(out)


def main(kernels, ltp, fstests, filesystems=None, passes=None, ltp_match=None, timeout=600,
         guest_timeout=4 * 3600, doc=None, from_logs=False, suites=None, fstests_match=None,
         fault=None):
    """Run each kernel (or, @from_logs, read the summary its last run
    left) and put each one's figures into @doc.  @fault: module
    parameters of the fault-injection build, which is then loaded instead
    of the module (a check that the suites see the fault: its figures
    are no kernel's, and go into no document)."""
    fault = fault or []
    if fault:
        check_fault(fault)
        if doc or from_logs:
            util.die("--fault: a fault-injection run's figures go into no document "
                     "(no --doc, no --from-logs)")
    if not from_logs:
        need_checkouts(ltp, fstests)
    filesystems = filesystems or FILESYSTEMS
    passes = passes or ["off", "on"]
    suites = suites or SUITES
    if set(suites) - set(SUITES):
        util.die(f"unknown suite {' '.join(sorted(set(suites) - set(SUITES)))}; "
                 f"choose from {' '.join(SUITES)}")
    if not from_logs and not [s for s in suites if (ltp if s == "ltp" else fstests)]:
        util.die(f"--suites {' '.join(suites)}: no checkout given for any of them")
    rc, blocks = 0, []
    for k in kernels:
        if from_logs:
            if not os.path.exists(summary_path(k)):
                util.die(f"{k}: no run to report ({summary_path(k)})")
            with open(summary_path(k)) as f:
                summary = json.load(f)
            ok = not summary["problems"] and not summary["differences"] and not summary["missing"]
        else:
            ok, summary = run_kernel(k, ltp, fstests, filesystems, passes, ltp_match, timeout,
                                     guest_timeout, suites, fstests_match, fault)
        rc |= 0 if ok else 1
        if doc and "counts" in summary:
            blocks.append((doc_key(summary), doc_block(summary)))
    if blocks:
        util.update_doc(doc, "external", blocks)
    return rc
