"""Building vfsfast for a lab kernel, inside that kernel's release chroot.

The module the guest loads is the one `dkms install` put into the chroot's
/lib/modules/<release>/updates/dkms, so every lab run also exercises the
DKMS packaging exactly as a user's `dkms install` does.
"""

import contextlib
import fcntl
import functools
import glob
import hashlib
import os
import re
import shutil
import subprocess

from . import arch as arch_mod
from . import debian, util

# What a DKMS source tree (and a release tarball) holds, and the command
# that `make install` and `make dkms-install` put on the machine.
SOURCES = ["Kbuild", "Makefile", "dkms.conf", "module", "include", "scripts/vfsfast",
           "scripts/vfsfast-ab", "scripts/vfsfast-ab-stats.awk",
           "scripts/workloads"]
_IGNORE = shutil.ignore_patterns("*.o", "*.ko", "*.mod", "*.mod.c", ".*.cmd",
                                 "generated", "*.order", "*.symvers", ".tmp*")


def version():
    with open(os.path.join(util.repo_dir(), "dkms.conf")) as f:
        m = re.search(r'^PACKAGE_VERSION="([^"]+)"', f.read(), re.M)
    return m.group(1)


def header_version():
    with open(os.path.join(util.repo_dir(), "include/vfsfast.h")) as f:
        return re.search(r'#define VFSFAST_VERSION "([^"]+)"', f.read()).group(1)


def copy_sources(dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    os.makedirs(dst)
    repo = util.repo_dir()
    for name in SOURCES:
        src = os.path.join(repo, name)
        if os.path.isdir(src):
            shutil.copytree(src, os.path.join(dst, name), ignore=_IGNORE)
        else:
            os.makedirs(os.path.dirname(os.path.join(dst, name)), exist_ok=True)
            shutil.copy2(src, os.path.join(dst, name))


@contextlib.contextmanager
def chroot_lock(kernel):
    """Hold the kernel's chroot for one user at a time: two lab runs with
    different caches may share chroots (symlinked), and their /tmp trees
    and DKMS state inside them; kernels of one release share a chroot."""
    with open(os.path.join(kernel.chroot_dir, ".vfsfast-build.lock"), "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def _exclusive(fn):
    """One build at a time per chroot (chroot_lock)."""
    @functools.wraps(fn)
    def locked(kernel, *args, **kwargs):
        with chroot_lock(kernel):
            return fn(kernel, *args, **kwargs)
    return locked


def _tmp(kernel, name):
    """A work path in /tmp of the kernel's chroot, per kernel (6.1 and
    legacy share the bookworm chroot) and per cache: two lab runs of
    different trees share the chroots, and what one built (test modules,
    the objects the objdump checks read) is read after its build's lock is
    released, so it must not be where the other builds."""
    tag = hashlib.sha1(os.path.realpath(util.cache_dir()).encode()).hexdigest()[:8]
    return f"/tmp/{name}-{kernel}-{tag}"


def _chroot_sh(kernel, script):
    """Run a shell script in the kernel's chroot; returns the
    CompletedProcess (never dies)."""
    root = kernel.chroot_dir
    # A lab-built kernel's command mounts what it needs privately.
    with contextlib.nullcontext() if kernel.built else debian.mounted(root):
        return subprocess.run(kernel.chroot_argv(script),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True, errors="replace",
                              env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"})


def _remove_installed(kernel):
    """Forget earlier installs in the chroot, so exactly one result counts."""
    root = kernel.chroot_dir
    kver = kernel.kver
    for old in glob.glob(os.path.join(root, f"lib/modules/{kver}/updates/**/vfsfast*.ko*"),
                         recursive=True):
        os.unlink(old)


@_exclusive
def dkms_install(kernel):
    """`make dkms-install` (the README's command) in the chroot.

    Returns (ko path, log); the .ko is an uncompressed copy of what DKMS
    installed, which is what the guest loads.
    """
    root = kernel.chroot_dir
    kver = kernel.kver
    src = _tmp(kernel, "vfsfast-src")
    copy_sources(os.path.join(root, src.lstrip("/")))
    _remove_installed(kernel)
    # A previous interrupted run may have left DKMS state behind.
    script = (f"rm -rf /var/lib/dkms/vfsfast; "
              f"make -C {src} dkms-install KERNELRELEASE={kver}")
    p = _chroot_sh(kernel, script)
    log = p.stdout
    ver = version()
    if p.returncode != 0:
        for f in glob.glob(os.path.join(root, f"var/lib/dkms/vfsfast/{ver}/build/make.log")):
            log += open(f, errors="replace").read()
        return None, log
    found = glob.glob(os.path.join(root, f"lib/modules/{kver}/updates/dkms/vfsfast.ko*"))
    if len(found) != 1:
        return None, log + f"\ninstalled module not found: {found}"
    out = os.path.join(kernel.build_dir, "vfsfast.ko")
    uncompressed_copy(found[0], out)
    return out, log


def guest_module(kernel):
    """The module a kernel's guests load, (ko path or None, log): what
    `make dkms-install` installed, or for a kernel of another
    architecture, whose DKMS cross build is not done yet, the W=1 cross
    build (make_cross())."""
    if kernel.cross:
        ko, log, _ = make_cross(kernel)
        return ko, log
    return dkms_install(kernel)


def uncompressed_copy(src, out):
    """Copy an installed module (.ko, .ko.xz or .ko.zst) to out, as .ko."""
    if src.endswith(".xz"):
        util.run(["sh", "-c", f"xz -dc '{src}' > '{out}'"])
    elif src.endswith(".zst"):
        util.run(["sh", "-c", f"zstd -qdc '{src}' > '{out}'"])
    else:
        shutil.copyfile(src, out)


@_exclusive
def make_w1(kernel, extra=""):
    """Plain Kbuild build with W=1 (and anything in extra); returns (ok, log).

    Also builds the test-only modules of tests/modules against the same
    probe results; test_modules() returns them afterwards.
    """
    root = kernel.chroot_dir
    kver = kernel.kver
    w1 = _tmp(kernel, "vfsfast-w1")
    tree = os.path.join(root, w1.lstrip("/"))
    copy_sources(tree)
    shutil.copytree(os.path.join(util.repo_dir(), "tests/modules"),
                    os.path.join(tree, "tests/modules"), ignore=_IGNORE)
    # The module again with its test-only fault injection (fault.c, ...), as
    # vfsfast-fi.ko: never the one DKMS installs.
    fi = _tmp(kernel, "vfsfast-fi")
    copy_sources(os.path.join(root, fi.lstrip("/")))
    kdir = f"/usr/src/linux-headers-{kver}"
    out = _tmp(kernel, "vfsfast-testmods")
    # Through the top-level Makefile, as `make KDIR=...` in the README.
    mv = kernel.make_vars
    script = (f"make -C {w1} KDIR={kdir} W=1 {mv} {extra} && "
              f"make -C {kdir} M={w1}/tests/modules {mv} modules && "
              f"make -C {fi} KDIR={kdir} VFSFAST_FAULT_INJECT=1 {mv} && "
              f"rm -rf {out} && mkdir {out} && "
              f"cp {fi}/vfsfast.ko {out}/vfsfast-fi.ko && "
              f"cp {' '.join(f'{w1}/tests/modules/{m}.ko' for m in test_module_names(kernel) if m != 'vfsfast-fi')} {out}/")
    p = _chroot_sh(kernel, script)
    return p.returncode == 0, p.stdout


@_exclusive
def make_cross(kernel):
    """The module cross-built for a kernel of another architecture
    (kernel.cross), with W=1, through the top-level Makefile as `make
    KDIR=...` in the README, with the kernel's ARCH and CROSS_COMPILE:
    the module such a kernel's guests load (DKMS does not cross-build
    yet, guest_module()).  Returns (ko path or None, log, modinfo): None
    also when the compiler warned."""
    root = kernel.chroot_dir
    tree = _tmp(kernel, "vfsfast-cross")
    copy_sources(os.path.join(root, tree.lstrip("/")))
    kdir = f"/usr/src/linux-headers-{kernel.kver}"
    p = _chroot_sh(kernel, f"make -C {tree} KDIR={kdir} W=1 {kernel.make_vars}")
    log = p.stdout
    warned = [line for line in log.splitlines() if re.search(r"\b(warning|error):", line)]
    ko = os.path.join(root, tree.lstrip("/"), "vfsfast.ko")
    if p.returncode != 0 or warned or not os.path.exists(ko):
        return None, log, ""
    out = os.path.join(kernel.build_dir, "vfsfast.ko")
    shutil.copyfile(ko, out)
    info = subprocess.run(["modinfo", out], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True).stdout
    return out, log, info


# Calls that must compile to tail calls (jmp, never call), as each
# optimization file declares them with VFSFAST_TAIL_CALL(caller, callee)
# (include/vfsfast.h): on those paths the stock code may sleep for as long
# as user space decides, and nothing of vfsfast may be left on the stack.
# A callee may be a system call's stock stub, VFSFAST_SYSCALL_STOCK(name)
# (module/compat/compat.h), whose symbol depends on the architecture
# (stock_symbol()).
_CALLEE = r"(\w+|VFSFAST_SYSCALL_STOCK\(\w+\))"
TAIL_CALL = re.compile(r"^VFSFAST_TAIL_CALL\((\w+),\s*" + _CALLEE + r"\);", re.M)
# The calls of stock code that may stay calls: VFSFAST_BOUNDED_CALL(caller,
# callee), each with the reason it cannot sleep for long.
BOUNDED_CALL = re.compile(r"^VFSFAST_BOUNDED_CALL\((\w+),\s*" + _CALLEE + r"\);", re.M)
# Functions on a rare path, which may take a lock or an atomic on a line
# every CPU shares: VFSFAST_RARE_PATH(fn).
RARE_PATH = re.compile(r"^VFSFAST_RARE_PATH\((\w+)\);", re.M)
# The objects whose code runs on a replacement's path.
HOT_OBJECTS = "module/opt_*.c module/bounded.c"


def _declared(pattern):
    """{object: {first: [second, ...]}} of a declaration in the hot sources."""
    out = {}
    for glob_ in HOT_OBJECTS.split():
        for src in sorted(glob.glob(os.path.join(util.repo_dir(), glob_))):
            obj = "module/" + os.path.basename(src)[:-2] + ".o"
            with open(src) as f:
                for m in pattern.finditer(f.read()):
                    first, second = (m.group(1), m.group(2)) if pattern.groups == 2 else (m.group(1), None)
                    out.setdefault(obj, {}).setdefault(first, []).append(second)
    return out


def stock_symbol(kernel, callee):
    """The symbol a declared callee is in kernel's build: itself, or for
    VFSFAST_SYSCALL_STOCK(name) the stock stub of the architecture's
    entry of that system call (vfsfast_stock___arm64_sys_statx)."""
    m = re.fullmatch(r"VFSFAST_SYSCALL_STOCK\((\w+)\)", callee)
    return f"vfsfast_stock_{kernel.arch.syscall(m.group(1))}" if m else callee


def tail_calls():
    """{object: {function: [callees]}} from the optimization files."""
    return {o: f for o, f in _declared(TAIL_CALL).items() if o.endswith(".o") and "opt_" in o}


def _base(fn):
    """gcc's clones (.isra.0, .part.1, .constprop.0) are their function."""
    return fn.split(".")[0] if fn else fn


def disassembly(path, arch=arch_mod.AMD64, argv=None):
    """{function: [(mnemonic, target or None, atomic, reloc_sym or None)]}
    of an object, from objdump -dr: every branch with its real target (a
    relocation names it), and every atomic read-modify-write (x86: an
    instruction with a lock prefix; arm64: arch.Disasm.atomic) with the
    symbol its memory operand is relocated against, if any.  On x86 the
    relocation is the instruction's own; on arm64 an address is built in
    a register first (adrp, then add or ldr with :lo12:), so the symbol
    is the one last relocated into the atomic's base register, and any
    other write of that register (the per-CPU offset added to it) forgets
    it.  argv: the objdump command, when not the host's (a cross
    objdump in the kernel's chroot), path then its last argument."""
    argv = argv or ["objdump", "-dr", "--no-show-raw-insn"]
    p = subprocess.run(argv + [path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    reloc = arch.disasm.reloc
    out = {}
    fn = None
    last = None
    regs = {}
    # Where a forward branch lands, the registers hold what the other way
    # in left there: what they were relocated against is forgotten there.
    # A backward branch closes a loop (an exclusive pair's retry): its
    # body is read once, from the way in before it.
    landings = {t for a, t in re.findall(r"^\s+([0-9a-f]+):\s+(?:b|bl|b\.\w+|cbn?z|tbn?z)\s+"
                                         r"(?:\w+,\s*)*([0-9a-f]+) <", p.stdout, re.M)
                if int(t, 16) > int(a, 16)}
    for line in p.stdout.splitlines():
        m = re.match(r"[0-9a-f]+ <([\w.]+)>:$", line)
        if m:
            fn = _base(m.group(1))
            out.setdefault(fn, [])
            last = None
            regs = {}
            continue
        if fn is None:
            continue
        # A relocation names the real target of the instruction before it,
        # or (arm64) the symbol its destination register now points into.
        m = re.match(r"\s+[0-9a-f]+: " + reloc + r"\w+\s+([\w.]+)", line)
        if m:
            if last is not None:
                sym = _base(m.group(1))
                if arch.is_call(last[0]) or arch.is_jump(last[0]):
                    last[1] = sym
                # An address built into a register: adrp, then add :lo12:
                # (an ldr :lo12: loads what is there, no address of it).
                if last[4] and last[0] in ("adrp", "add"):
                    regs[last[4]] = sym
                if last[2] and not last[3]:
                    last[3] = sym
                last = None
            continue
        m = re.match(r"\s+[0-9a-f]+:\s+(lock\s+)?([\w.]+)\s*(\S*)(?:\s+<([\w.]+)"
                     r"(?:[+-]0x[0-9a-f]+)?>)?", line)
        if not m:
            continue
        mnem, ops = m.group(2), m.group(3)
        if line.split(":")[0].strip() in landings:
            regs = {}
        target = _base(m.group(4)) if arch.is_call(mnem) or arch.is_jump(mnem) else None
        atomic = arch.is_atomic(mnem, bool(m.group(1)))
        sym = None
        dest = None
        if arch.name != "amd64":
            # The base register of a memory operand, "[x0]" or "[x0, #8]".
            base = re.search(r"\[(\w+)", line)
            if atomic and base:
                sym = regs.get(base.group(1).replace("w", "x", 1))
            first = re.match(r"([xw]\d+)", ops)
            if first and not mnem.startswith(("st", "b", "cb", "tb", "ret", "cmp", "tst")):
                dest = "x" + first.group(1)[1:]
                regs.pop(dest, None)
            if arch.is_call(mnem) or arch.is_jump(mnem) or mnem == "ret":
                # A call clobbers the caller-saved registers; after a
                # jump, the next instruction is reached from elsewhere.
                regs = {}
        last = [mnem, target, atomic, sym, dest]
        out[fn].append(last)
    return {f: [tuple(i[:4]) for i in insns] for f, insns in out.items()}


def kernel_disassembly(kernel, path):
    """disassembly() of an object the kernel's chroot built (host path),
    with the kernel architecture's objdump (the chroot's, for a cross
    build: the host's has no other target)."""
    if not kernel.cross:
        return disassembly(path)
    inner = "/" + os.path.relpath(path, kernel.chroot_dir)
    return disassembly(inner, kernel.arch,
                       ["chroot", kernel.chroot_dir, kernel.arch.tool("objdump"), "-dr",
                        "--no-show-raw-insn"])


def _w1_object(kernel, obj):
    return os.path.join(kernel.chroot_dir, _tmp(kernel, "vfsfast-w1").lstrip("/"), obj)


def tail_call_problems(kernel):
    """What in the last make_w1() build breaks tail_calls(): a list of
    "function: call callee" or "function: no jmp to callee".  A caller
    absent from its object is one the compat layer did not build for this
    kernel (e.g. fsnotify_parent before 5.8's __fsnotify_parent(dentry,
    ...), fstatat_empty where upstream has it)."""
    problems = []
    for obj, funcs in tail_calls().items():
        code = kernel_disassembly(kernel, _w1_object(kernel, obj))
        for f, callees in funcs.items():
            if f not in code:
                continue
            for c in (stock_symbol(kernel, c) for c in callees):
                insns = [i[0] for i in code[f] if i[1] == c]
                if any(kernel.arch.is_call(i) for i in insns):
                    problems.append(f"{f}: call {c}")
                elif not any(kernel.arch.is_jump(i) for i in insns):
                    problems.append(f"{f}: no jmp to {c}")
    return problems


def stock_call_problems(kernel):
    """Calls (not tail calls) of a vfsfast_stock_<name>() stub that no
    VFSFAST_BOUNDED_CALL() declares, in the last make_w1() build: each is a
    frame of vfsfast's left on the stack of a task in stock code, which
    may sleep for as long as user space decides."""
    bounded = _declared(BOUNDED_CALL)
    problems = []
    for src in sorted(glob.glob(os.path.join(util.repo_dir(), "module/opt_*.c"))):
        obj = "module/" + os.path.basename(src)[:-2] + ".o"
        code = kernel_disassembly(kernel, _w1_object(kernel, obj))
        allowed = bounded.get(obj, {})
        for f, insns in code.items():
            for mnem, target, _, _ in insns:
                if (kernel.arch.is_call(mnem) and target and target.startswith("vfsfast_stock_")
                        and target not in (stock_symbol(kernel, c) for c in allowed.get(f, []))):
                    problems.append(f"{f}: call {target}")
    return sorted(set(problems))


# Module references are a locked operation on the module's one line.
GLOBAL_REFCOUNT_CALLS = ("try_module_get", "module_put", "__module_get", "refcount_inc",
                         "refcount_dec", "atomic_inc", "atomic_dec")


def global_atomic_problems(kernel):
    """Locked instructions on memory named by a symbol (a variable that
    every CPU shares: a module's refcount, a global counter) and calls of
    the module refcount, in the code of the last make_w1() build that runs
    per call, outside functions declared VFSFAST_RARE_PATH().  A locked
    operation on an object a call works on (file->f_count, a pipe) names
    no symbol, and per-CPU counting has no lock prefix."""
    rare = _declared(RARE_PATH)
    problems = []
    for glob_ in HOT_OBJECTS.split():
        for src in sorted(glob.glob(os.path.join(util.repo_dir(), glob_))):
            obj = "module/" + os.path.basename(src)[:-2] + ".o"
            code = kernel_disassembly(kernel, _w1_object(kernel, obj))
            skip = rare.get(obj, {})
            for f, insns in code.items():
                if f in skip:
                    continue
                for mnem, target, locked, sym in insns:
                    if locked and sym:
                        problems.append(f"{f}: lock {mnem} on {sym}")
                    elif kernel.arch.is_call(mnem) and target in GLOBAL_REFCOUNT_CALLS:
                        problems.append(f"{f}: call {target}")
    return sorted(set(problems))


@_exclusive
def make_example(kernel, wrong_proto=False):
    """Build the module with tests/build/opt_example.c dropped into
    module/ and nothing else changed, with W=1; with wrong_proto, its
    replacement's prototype differs from its target's.

    Returns (ok, log, modinfo output, symbols of vfsfast.ko).
    """
    work = _tmp(kernel, "vfsfast-example")
    tree = os.path.join(kernel.chroot_dir, work.lstrip("/"))
    copy_sources(tree)
    shutil.copyfile(os.path.join(util.repo_dir(), "tests/build/opt_example.c"),
                    os.path.join(tree, "module/opt_example.c"))
    flags = " KCFLAGS=-DVFSFAST_EXAMPLE_WRONG_PROTO" if wrong_proto else ""
    p = _chroot_sh(kernel, f"make -C {work} KDIR=/usr/src/linux-headers-{kernel.kver} W=1{flags} "
                   f"{kernel.make_vars}")
    if p.returncode:
        return False, p.stdout, "", ""
    info = _chroot_sh(kernel, f"/sbin/modinfo {work}/vfsfast.ko").stdout
    syms = _chroot_sh(kernel, f"{kernel.arch.tool('nm')} {work}/vfsfast.ko").stdout
    return True, p.stdout, info, syms


def system_map(kernel):
    """The kernel's System.map copied into its chroot (guest path), or None."""
    src = kernel.system_map
    if not src:
        return None
    dst = _tmp(kernel, "System.map")
    shutil.copyfile(src, os.path.join(kernel.chroot_dir, dst.lstrip("/")))
    return dst


def system_map_has_symbols(kernel):
    """Whether the kernel's System.map is a real one (Debian ships a
    placeholder; the legacy build's is real), by the test scripts/vfsfast
    check uses."""
    src = kernel.system_map
    if not src:
        return False
    with open(src, errors="replace") as f:
        return any(re.search(r" [Tt] _stext$", line) for line in f)


@_exclusive
def vfsfast_check(kernel, args):
    """`scripts/vfsfast check ARGS` in the release's chroot: (rc, output)."""
    root = kernel.chroot_dir
    check = _tmp(kernel, "vfsfast-check")
    copy_sources(os.path.join(root, check.lstrip("/")))
    p = _chroot_sh(kernel, f"rc=0; sh {check}/scripts/vfsfast check {args} || rc=$?; "
                   "echo rc=$rc")
    out = p.stdout.rstrip().splitlines()
    rc = int(out[-1][3:]) if out and out[-1].startswith("rc=") else -1
    return rc, "\n".join(out[:-1])


@_exclusive
def make_install(kernel):
    """`make install` into the chroot's /lib/modules; returns (ok, log)."""
    root = kernel.chroot_dir
    kver = kernel.kver
    target = os.path.join(root, f"lib/modules/{kver}/updates/vfsfast.ko")
    _remove_installed(kernel)
    script = (f"make -C {_tmp(kernel, 'vfsfast-w1')} install KERNELRELEASE={kver} "
              f"KDIR=/usr/src/linux-headers-{kver}")
    cmd = os.path.join(root, "usr/local/sbin/vfsfast")
    # vfsfast-ab, its statistics and its C workloads come with it.
    ab = [os.path.join(root, f) for f in (
        "usr/local/sbin/vfsfast-ab", "usr/local/share/vfsfast/vfsfast-ab-stats.awk",
        "usr/local/libexec/vfsfast/abloop", "usr/local/libexec/vfsfast/rlbench")]
    for f in [cmd] + ab:
        if os.path.exists(f):
            os.unlink(f)
    p = _chroot_sh(kernel, script)
    ok = (p.returncode == 0 and bool(glob.glob(target + "*")) and os.access(cmd, os.X_OK)
          and all(os.path.exists(f) for f in ab) and os.access(ab[0], os.X_OK)
          and os.access(ab[2], os.X_OK))
    _remove_installed(kernel)
    return ok, p.stdout


# tests/modules: an IPMODIFY holder of vfs_readlink, a real livepatch and
# its cumulative successor, the kernfs task parker, a holder of
# cgroup_mutex, a livepatch of close_fd() (a function close_sync stands in
# for), walks by and through ids that map to no one, a use of a name
# after putname() for KASAN to report; and vfsfast built with fault
# injection.
TEST_MODULES = ["vfsfast_holder", "vfsfast_lp", "vfsfast_lp2", "vfsfast_kfrace", "vfsfast_testfs",
                "vfsfast_flushrec", "vfsfast_cgmutex", "vfsfast_lp_close", "vfsfast_nobody",
                "vfsfast_nameuaf", "vfsfast-fi"]


# The real livepatches among them: built where the kernel has LIVEPATCH
# only (tests/modules/Kbuild).
LIVEPATCH_TEST_MODULES = ["vfsfast_lp", "vfsfast_lp2", "vfsfast_lp_close"]


def has_livepatch(kernel):
    """Whether the kernel has LIVEPATCH (its base's configuration, as the
    suite's other expectations: a debug build that lost it fails)."""
    return kernel_config(kernel.base).get("CONFIG_LIVEPATCH") == "y"


def test_module_names(kernel):
    """TEST_MODULES that make_w1() builds for the kernel."""
    return [m for m in TEST_MODULES
            if has_livepatch(kernel) or m not in LIVEPATCH_TEST_MODULES]


def test_modules(kernel):
    """{guest path: host path} of the test modules from the last make_w1()."""
    out = {}
    for name in test_module_names(kernel):
        src = os.path.join(kernel.chroot_dir,
                           _tmp(kernel, "vfsfast-testmods").lstrip("/"), f"{name}.ko")
        dst = os.path.join(kernel.build_dir, f"{name}.ko")
        shutil.copyfile(src, dst)
        out[f"/lab/{name}.ko"] = dst
    return out


def modinfo(ko, field):
    return util.run(["modinfo", "-F", field, ko], capture=True).strip()


def kernel_config(kernel):
    """The CONFIG_ options of the kernel's headers, as a dict."""
    return kernel.config()


# Options split off an older one that covered both: where the kernel's
# configuration does not know the newer name at all, the older one's
# value is what it means there.  ARM64_PTR_AUTH signed the kernel's own
# return addresses as well as user pointers until ARM64_PTR_AUTH_KERNEL
# was split off (5.13): Debian's arm64 5.10 signs them under
# ARM64_PTR_AUTH (its arch/arm64/Makefile's pac-ret flags).
CONFIG_SPLIT_FROM = {"CONFIG_ARM64_PTR_AUTH_KERNEL": "CONFIG_ARM64_PTR_AUTH"}


def config_option(kernel, opt):
    """The value of option @opt for the kernel ("y", "m", ... or None),
    through CONFIG_SPLIT_FROM on a kernel older than @opt."""
    conf = kernel_config(kernel)
    if opt in conf or opt not in CONFIG_SPLIT_FROM:
        return conf.get(opt)
    # .config lists every option the kernel's Kconfig offers, set or not.
    path = os.path.join(kernel.headers_dir, ".config")
    if not os.path.exists(path) or re.search(rf"\b{opt}\b", open(path).read()):
        return None
    return conf.get(CONFIG_SPLIT_FROM[opt])


def expected_backends(kernel):
    """The hook backends the kernel's configuration offers, best first.

    Read from the configuration, independently of the module's compile
    probes, so that a test can compare the two.  A debug kernel is
    expected to offer what its stock Debian kernel does (Kernel.base), so
    that a debug build which lost a backend fails instead of being
    expected to.
    """
    conf = kernel_config(kernel.base)
    out = []
    if conf.get("CONFIG_DYNAMIC_FTRACE_WITH_JMP") == "y":
        out.append("jmp")
    if conf.get("CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS") == "y":
        out.append("direct")
    return out + ["ftrace"]
