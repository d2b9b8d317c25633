"""vfsfast's optimizations as the lab knows them: one table, one row each.

Every list the lab used to write out by hand (the kernfs functions in the
suite's `vfsfast check` expectations, the upstream texts in guest.py's
environment, the benchmark knobs and workloads) is generated from OPTS.

Each row says what the module should report, so that a test can compare:

  functions   the kernel functions it replaces (modinfo's functions=)
  tag         modinfo's upstream= when the kernel already has it upstream
              (module/compat/compat.h VFSFAST_UPSTREAM_*_INFO); "none" else;
              a function of the Kernel where that differs by kernel
  text        what its status file's "upstream:" line then says (the
              prose of compat.h's VFSFAST_UPSTREAM_*), which the guest
              tests compare the status file with; a string or, like tag,
              a function of the Kernel
  unsupported status line 1's reason when the kernel has it upstream and
              the module has nothing to replace (kernfs), or None
  has_upstream  the lab's own check of the kernel's headers: plain greps,
              independent of the module's compile probes (scripts/probes),
              so that the module's answer is tested, not repeated
  lacks       the lab's own check of why kernel k cannot have it at all
              (a function of the Kernel returning that reason, or None),
              for an optimization the module reports unsupported on some
              kernels for another reason than upstream
  opt_in      enable=auto leaves it off even where upstream lacks it
  unless_ftrace  enable=auto leaves it off where ftrace is the best backend
              the kernel offers (a call saves less than a trip costs:
              module/backend.c vfsfast_auto_off())
  workloads   the benchmark workload set that measures it (bench.py's
              vfsfast-ab built-ins)

Whether a kernel has an optimization upstream is decided from the headers
of its base kernel (kernel.Kernel.base): a debug kernel is expected to
have what its stock Debian kernel has.
"""

import dataclasses
import glob
import os
import re

from . import arch, build

MODULE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "module")


def covers(name):
    """The functions optimization @name stands in for beyond its targets
    (a livepatch of one makes it yield), as the VFSFAST_COVERS() of its
    VFSFAST_OPTIMIZATION() in module/opt_*.c lists them: the module's own
    list, read, not repeated."""
    for path in sorted(glob.glob(os.path.join(MODULE_DIR, "opt_*.c"))):
        with open(path) as f:
            for m in re.finditer(r"^VFSFAST_OPTIMIZATION\((\w+),(.*?)^\);", f.read(),
                                 re.M | re.S):
                if m.group(1) == name:
                    c = re.search(r"\.covers\s*=\s*VFSFAST_COVERS\(([^)]*)\)", m.group(2))
                    return re.findall(r'"(\w+)"', c.group(1)) if c else []
    raise KeyError(f"no VFSFAST_OPTIMIZATION({name}, ...) in {MODULE_DIR}")


def has_observers(name):
    """Whether optimization @name has observers (targets of kind observe
    in the file of its VFSFAST_OPTIMIZATION()), whose enable waits for
    every task to leave their stock code (quiesce.c): read from the
    module, not repeated."""
    for path in sorted(glob.glob(os.path.join(MODULE_DIR, "opt_*.c"))):
        with open(path) as f:
            text = f.read()
        if re.search(rf"^VFSFAST_OPTIMIZATION\({name},", text, re.M):
            return re.search(r"\bobserve,", text) is not None
    raise KeyError(f"no VFSFAST_OPTIMIZATION({name}, ...) in {MODULE_DIR}")


def _readlink_upstream(k):
    """fs.h defines IOP_CACHED_LINK: symlink lengths cached (6.14)."""
    return re.search(r"#define\s+IOP_CACHED_LINK\b", k.header_text("linux/fs.h")) is not None


def _arch_strlen(k):
    """The architecture's asm/string.h (x86's string_64.h) defines
    __HAVE_ARCH_STRLEN: strlen() is its own (arm64's reads 16 bytes a
    step), not lib/string.c's byte-at-a-time loop that readlink skips."""
    inc = f"arch/{arch.KBUILD_ARCH[k.arch.name]}/include/asm"
    for name in ("string.h", "string_64.h"):
        path = k.source_header(os.path.join(inc, name))
        if os.path.exists(path):
            with open(path) as f:
                if re.search(r"#define\s+__HAVE_ARCH_STRLEN\b", f.read()):
                    return True
    return False


def _readlink_tag(k):
    return "IOP_CACHED_LINK" if _readlink_upstream(k) else "arch-strlen"


def _readlink_text(k):
    return ("IOP_CACHED_LINK" if _readlink_upstream(k) else
            "the architecture's own strlen(), not byte at a time (__HAVE_ARCH_STRLEN)")


def _fsnotify_upstream(k):
    """fsnotify.h's inline fsnotify_parent() checks the superblock's watch
    count before calling out (5.15's s_fsnotify_connectors test, or
    fsnotify_sb_has_watchers())."""
    m = re.search(r"static inline int fsnotify_parent\(.*?\n}",
                  k.header_text("linux/fsnotify.h"), re.S)
    body = m.group(0) if m else ""
    return re.search(r"s_fsnotify_connectors\)\s*==\s*0|fsnotify_sb_has_watchers\(",
                     body) is not None


def _pseudo_upstream(k):
    """fs.h has file_set_fsnotify_mode(): pseudo files get FMODE_NONOTIFY
    at birth (6.14)."""
    return "file_set_fsnotify_mode" in k.header_text("linux/fs.h")


def _kernfs_node(k):
    m = re.search(r"struct kernfs_node \{.*?\n\};", k.header_text("linux/kernfs.h"), re.S)
    return m.group(0) if m else ""


def _kernfs_rcu_lacks(k):
    """Without an rcu_head in struct kernfs_node, kernfs frees nodes at
    once: an RCU walk could read freed memory (the module's reason)."""
    if re.search(r"struct rcu_head\s+rcu;", _kernfs_node(k.base)):
        return None
    return ("kernfs frees nodes without an RCU grace period (no kernfs_node.rcu):"
            " an RCU walk could read freed memory")


def _never(k):
    return False


def _kernfs_upstream(k):
    """kernfs.h's kernfs_elem_dir has the directory revision (5.15)."""
    m = re.search(r"struct kernfs_elem_dir \{.*?\n\};", k.header_text("linux/kernfs.h"), re.S)
    return m is not None and re.search(r"\brev;", m.group(0)) is not None


def _fstatat_empty_upstream(k):
    """fs.h has vfs_empty_path(): fstatat() and statx() of an empty path
    skip the walk (6.11; fstatat alone since 6.6, with no header sign)."""
    return re.search(r"\bvfs_empty_path\(", k.header_text("linux/fs.h")) is not None


def _access_creds_upstream(k):
    """capability.h has cap_isidentical(), added for faccessat()'s test of
    whether the credential override changes anything (6.3)."""
    return re.search(r"\bcap_isidentical\(", k.header_text("linux/capability.h")) is not None


def _proc_filesystems_upstream(k):
    """fs.h's struct file_system_type keeps the types on an hlist (list),
    as the 7.x "revamp fs/filesystems.c" series made it."""
    m = re.search(r"struct file_system_type \{.*?\n\};", k.header_text("linux/fs.h"), re.S)
    return m is not None and re.search(r"struct hlist_node\s+list;", m.group(0)) is not None


def _close_sync_upstream(k):
    """fdtable.h no longer declares close_fd_get_file(): it moved inside
    fs/ after 6.6 made close(2) finish the file itself."""
    return re.search(r"\bclose_fd_get_file\(", k.header_text("linux/fdtable.h")) is None


def _getname_upstream(k):
    """fs.h defines EMBEDDED_NAME_MAX: struct filename is a small object
    with the name inside (7.0)."""
    return re.search(r"#define\s+EMBEDDED_NAME_MAX\b", k.header_text("linux/fs.h")) is not None


def _getname_lacks(k):
    """A KASAN kernel (the debug kernels) gets no kept names: the module
    is built without the targets (module/compat/getname.h).  The kernel's
    own configuration, not its base's."""
    if k.config().get("CONFIG_KASAN") == "y":
        return "KASAN is on: names kept for reuse would hide a use after putname() from it"
    return None


def _lookup_exec_upstream(k):
    """fs.h defines IOP_FASTPERM_MAY_EXEC: path lookup checks MAY_EXEC on
    a directory itself (6.19)."""
    return re.search(r"#define\s+IOP_FASTPERM_MAY_EXEC\b", k.header_text("linux/fs.h")) is not None


def _release_at_least(k, release):
    """Whether the kernel tree's Makefile names @release or later: for
    the changes no header shows, which the module does not decide this
    way (it asks the kernel's own function at load)."""
    try:
        with open(k.source_header("Makefile")) as f:
            text = f.read()
    except OSError:
        return False
    v = re.search(r"^VERSION = (\d+)", text, re.M)
    p = re.search(r"^PATCHLEVEL = (\d+)", text, re.M)
    return v is not None and p is not None and (int(v.group(1)), int(p.group(1))) >= release


def _proc_pid_rcu_upstream(k):
    """5.14's pid_revalidate() answers in RCU mode."""
    return _release_at_least(k, (5, 14))


def _proc_cgroup_lacks(k):
    """Without KALLSYMS_ALL kallsyms names no variable: the module is built
    without the targets (module/compat/proc_cgroup.h), unless it can read
    them from the code that takes them (arch.Arch.call_ref: arm64)."""
    if k.config().get("CONFIG_KALLSYMS_ALL") != "y" and not k.arch.call_ref:
        return ("kallsyms names no variables (CONFIG_KALLSYMS_ALL is off): cgroup_mutex "
                "and css_set_lock cannot be found")
    return None


def _proc_cgroup_upstream(k):
    """6.7's proc_cgroup_show() takes no cgroup_mutex (6.1.y has the RCU
    root list of the same series, not this)."""
    return _release_at_least(k, (6, 7))


@dataclasses.dataclass(frozen=True)
class Syscall:
    """A function of an optimization that is a system call's entry, whose
    name is the architecture's (arch.Arch.syscall(): __x64_sys_statx,
    __arm64_sys_statx), as the module's VFSFAST_SYSCALL() names it."""
    name: str


@dataclasses.dataclass(frozen=True)
class Opt:
    name: str
    functions: tuple
    tag: str
    text: str
    has_upstream: object
    opt_in: bool = False
    unless_ftrace: bool = False
    workloads: str = ""
    unsupported: str = None
    lacks: object = None
    # The variable the guest tests have always read for this row, and
    # whether it holds the status text or the modinfo tag.
    env: str = None
    env_holds: str = "text"

    # Decided by the module at load, where no header tells (its modinfo
    # tag is then "load-time" on every kernel); has_upstream is still the
    # lab's own answer, for the status file.
    load_time: bool = False

    def funcs(self, k):
        """Its functions' names on kernel k."""
        return tuple(k.arch.syscall(f.name) if isinstance(f, Syscall) else f
                     for f in self.functions)

    def upstream(self, k):
        """modinfo's expected upstream= tag on kernel k: tag or "none"."""
        tag = self.tag(k.base) if callable(self.tag) else self.tag
        return tag if self.load_time or self.has_upstream(k.base) else "none"

    def upstream_text(self, k):
        """The status file's expected "upstream:" line on k."""
        text = self.text(k.base) if callable(self.text) else self.text
        return text if self.has_upstream(k.base) else "none"

    def lacking(self, k):
        """Why k cannot have it at all (the status line's reason), or None."""
        return self.lacks(k) if self.lacks else None

    def refused(self, k):
        """Why the module, built with its targets, refuses it at load on
        k's architecture (arch.Arch.no_quiesce, for one with observers),
        or None."""
        return k.arch.no_quiesce if k.arch.no_quiesce and has_observers(self.name) else None

    def missing(self, k):
        """Why k cannot have it, built out or refused at load, or None."""
        return self.lacking(k) or self.refused(k)

    def auto_off(self, k, backend="auto"):
        """Why enable=auto leaves it off on k, with the backend= given,
        though k lacks it: the status file's "auto: off:" line, or None."""
        first = build.expected_backends(k)[0] if backend == "auto" else backend
        if self.unless_ftrace and first == "ftrace" and self.upstream_text(k) == "none" \
                and not self.missing(k):
            return "an ftrace trip costs more than it saves a call"
        return None

    def auto(self, k, backend="auto"):
        """Whether enable=auto turns it on on k, with the backend= given."""
        return (self.upstream_text(k) == "none" and not self.opt_in and not self.missing(k)
                and not self.auto_off(k, backend))

    def built(self, k):
        """Whether the module built for k has its targets: not where k
        lacks it, nor where upstream left nothing to replace."""
        return not self.lacking(k) and (self.load_time or not (
            self.unsupported and self.upstream(k) != "none"))

    def modinfo(self, k):
        """`modinfo -F vfsfast_opt_<name>` of the module built for k."""
        return (f"functions={','.join(self.funcs(k))} upstream={self.upstream(k)}" +
                (" opt-in=yes" if self.opt_in else "") +
                (" auto=unless-ftrace" if self.unless_ftrace else "") +
                ("" if self.built(k) else " built=no"))

    def auto_word(self, k):
        """What `vfsfast check` says of enable=auto, from modinfo alone."""
        if self.load_time and not self.opt_in and self.built(k):
            return "on unless the kernel has it (decided at load)"
        if self.auto_off(k):
            return "off (only ftrace here, whose trip costs more than it saves)"
        return "on" if self.auto(k) else "off"

    def check_line(self, k, found):
        """Its line of `vfsfast check` (scripts/vfsfast, from modinfo);
        found: what the check says of each function ("present" where the
        System.map is real, "unchecked" where it is Debian's placeholder)."""
        fns = " ".join(f"{fn}:{found}" for fn in self.funcs(k))
        return (f"{self.name}: functions {fns}; upstream: {self.upstream(k)}; "
                f"enable=auto: {self.auto_word(k)}"
                f"{' (opt-in)' if self.opt_in else ''}"
                f"{'' if self.built(k) else ' (not built for this kernel)'}")

    def load_line(self, k):
        """Its line of `vfsfast load enable=none`: the status line 1 and
        the upstream text."""
        up = self.upstream_text(k)
        state = (f"unsupported: {self.unsupported}" if self.unsupported and up != "none"
                 else f"unsupported: {self.missing(k)}" if self.missing(k)
                 else "off")
        return f"{self.name}: {state} (upstream: {up})"


# In the order the module lists them (module/main.c vfsfast_opts[]).
OPTS = [
    # Off under enable=auto, as if upstream, where the architecture's
    # strlen() is already fast: the module's compat.h says the same.
    Opt("readlink", ("vfs_readlink",), _readlink_tag, _readlink_text,
        lambda k: _readlink_upstream(k) or _arch_strlen(k), workloads="readlink",
        env="VFSFAST_EXPECT_UPSTREAM_READLINK"),
    Opt("fsnotify", ("fsnotify",), "inline-superblock-check",
        "fsnotify.h helpers skip unwatched superblocks inline",
        _fsnotify_upstream, workloads="io", env="VFSFAST_EXPECT_UPSTREAM_FSNOTIFY"),
    Opt("fsnotify_parent", ("__fsnotify_parent",), "inline-superblock-check",
        "fsnotify.h helpers skip unwatched superblocks inline",
        _fsnotify_upstream, workloads="io", env="VFSFAST_EXPECT_UPSTREAM_FSNOTIFY"),
    Opt("pseudo_nonotify", ("alloc_file_pseudo",), "file_set_fsnotify_mode",
        "FMODE_NONOTIFY for pseudo files (file_set_fsnotify_mode)",
        _pseudo_upstream, opt_in=True, workloads="io", env="VFSFAST_EXPECT_UPSTREAM_PSEUDO"),
    Opt("kernfs", ("kernfs_add_one", "kernfs_activate", "kernfs_rename_ns", "kernfs_setattr",
                   "kernfs_iop_setattr", "kernfs_iop_lookup", "kernfs_dop_revalidate",
                   "kernfs_iop_permission", "kernfs_iop_getattr"),
        "kernfs_elem_dir.rev", "negative dentries and per-root rwsem (kernfs_elem_dir.rev)",
        _kernfs_upstream, workloads="kernfs",
        unsupported="the kernel has it upstream (kernfs_elem_dir.rev, 5.15): nothing to replace",
        env="VFSFAST_EXPECT_UPSTREAM_KERNFS", env_holds="tag"),
    # Upstream nowhere yet: the module has no probe to say otherwise.
    Opt("kernfs_rcu", ("kernfs_rename_ns", "kernfs_setattr", "kernfs_iop_setattr",
                       "kernfs_dop_revalidate", "kernfs_iop_permission", "kernfs_iop_getattr"),
        "none", "none", _never, workloads="kernfs_rcu", lacks=_kernfs_rcu_lacks,
        env="VFSFAST_EXPECT_UPSTREAM_KERNFS_RCU", env_holds="tag"),
    Opt("fstatat_empty", (Syscall("newfstatat"),), "vfs_empty_path",
        "fstatat and statx of an empty path skip the walk (vfs_empty_path)",
        _fstatat_empty_upstream, workloads="fstatat_empty",
        unsupported="the kernel has it upstream (vfs_empty_path, 6.11): nothing to replace"),
    Opt("statx_empty", (Syscall("statx"),), "vfs_empty_path",
        "fstatat and statx of an empty path skip the walk (vfs_empty_path)",
        _fstatat_empty_upstream, workloads="fstatat_empty",
        unsupported="the kernel has it upstream (vfs_empty_path, 6.11): nothing to replace"),
    Opt("getname", ("getname_flags", "putname"), "filename_embedded",
        "names are small objects with the name embedded (EMBEDDED_NAME_MAX)",
        _getname_upstream, workloads="path", lacks=_getname_lacks,
        unsupported="the kernel has it upstream (struct filename with the name embedded, 7.0): "
                    "nothing to replace"),
    Opt("lookup_exec", ("inode_permission",), "IOP_FASTPERM_MAY_EXEC",
        "path lookup checks MAY_EXEC on a directory itself (IOP_FASTPERM_MAY_EXEC)",
        _lookup_exec_upstream, workloads="path", unless_ftrace=True,
        unsupported="the kernel has it upstream (lookup_inode_permission_may_exec, 6.19): "
                    "nothing to replace"),
    Opt("access_creds", ("do_faccessat",), "cap_isidentical",
        "faccessat skips the credential override when it changes nothing (cap_isidentical)",
        _access_creds_upstream, workloads="access_creds",
        unsupported="the kernel has it upstream (cap_isidentical, 6.3): nothing to replace"),
    Opt("close_sync", (Syscall("close"),), "close_fd_get_file-private",
        "close(2) finishes the file itself (close_fd_get_file private to fs/)",
        _close_sync_upstream, workloads="close_sync", opt_in=True,
        unsupported="the kernel has it upstream (close(2) with __fput_sync, 6.6): "
                    "nothing to replace"),
    Opt("proc_pid_rcu", ("pid_revalidate",), "load-time",
        "pid_revalidate answers in RCU mode", _proc_pid_rcu_upstream,
        workloads="proc_pid_rcu", load_time=True,
        unsupported="the kernel has it upstream (pid_revalidate answers in RCU mode, 5.14): "
                    "nothing to replace"),
    Opt("proc_cgroup", ("proc_cgroup_show",), "load-time",
        "proc_cgroup_show runs without cgroup_mutex", _proc_cgroup_upstream,
        workloads="proc_cgroup", load_time=True, lacks=_proc_cgroup_lacks,
        unsupported="the kernel has it upstream (proc_cgroup_show runs without cgroup_mutex, 6.7): "
                    "nothing to replace"),
    Opt("proc_filesystems", ("register_filesystem", "unregister_filesystem",
                             "filesystems_proc_show"), "file_system_type.list",
        "/proc/filesystems kept as text (file_system_type.list)",
        _proc_filesystems_upstream, workloads="proc_filesystems",
        unsupported="the kernel has it upstream (file_system_type.list, 7.x): nothing to replace"),
    # Ahead of upstream: no kernel has it, and the module has no probe to
    # say otherwise.  The lab's guests load ext4 before vfsfast
    # (vm.GUEST_MODULES), where its targets live.
    Opt("readdir_arena", ("free_rb_tree_fname", "ext4_htree_store_dirent"), "none", "none",
        _never, workloads="readdir"),
]

BY_NAME = {o.name: o for o in OPTS}


def get(name):
    return BY_NAME[name]


def check_lines(k, found):
    """The `vfsfast check` optimization lines expected on k."""
    return [o.check_line(k, found) for o in OPTS]


def guest_env(k):
    """The variables the guest tests read about the optimizations on k.

    The VFSFAST_EXPECT_UPSTREAM_* four are what the tests have always
    read (fsnotify and fsnotify_parent share one); the rest are added, for
    the tests' hand-written lists to read instead:
      VFSFAST_OPTS                  every optimization, in the module's order
      VFSFAST_OPTS_AUTO             those enable=auto turns on on k
      VFSFAST_OPTS_AUTO_FTRACE      the same where backend=ftrace is given
      VFSFAST_OPT_<NAME>_AUTO_OFF   its status "auto: off:" line on k, or
                                    empty; _AUTO_OFF_<BACKEND> the same
                                    with that backend= given
      VFSFAST_OPTS_OPTIN            the opt-in ones
      VFSFAST_OPT_<NAME>_FUNCTIONS  its functions, space separated
      VFSFAST_OPT_<NAME>_UPSTREAM   modinfo's expected upstream= tag
      VFSFAST_OPT_<NAME>_STATUS_UPSTREAM  the status file's "upstream:" line
      VFSFAST_OPT_<NAME>_MODINFO    `modinfo -F vfsfast_opt_<name>`, expected
      VFSFAST_OPT_<NAME>_LACKS      why k cannot have it at all (built out, or
                                    refused at load on k's architecture), or empty
      VFSFAST_OPT_<NAME>_COVERS     what it stands in for beyond its
                                    functions (covers()), space separated
      VFSFAST_EXPECT_LOAD_STATUS    `vfsfast load enable=none`'s lines,
                                    joined by "|" (as t_load.sh compares)
    """
    env = {}
    for o in OPTS:
        if o.env:
            env[o.env] = o.upstream(k) if o.env_holds == "tag" else o.upstream_text(k)
        n = o.name.upper()
        env[f"VFSFAST_OPT_{n}_FUNCTIONS"] = " ".join(o.funcs(k))
        env[f"VFSFAST_OPT_{n}_UPSTREAM"] = o.upstream(k)
        env[f"VFSFAST_OPT_{n}_STATUS_UPSTREAM"] = o.upstream_text(k)
        env[f"VFSFAST_OPT_{n}_MODINFO"] = o.modinfo(k)
        env[f"VFSFAST_OPT_{n}_LACKS"] = o.missing(k) or ""
        env[f"VFSFAST_OPT_{n}_COVERS"] = " ".join(covers(o.name))
        env[f"VFSFAST_OPT_{n}_AUTO_OFF"] = o.auto_off(k) or ""
        for b in build.expected_backends(k):
            env[f"VFSFAST_OPT_{n}_AUTO_OFF_{b.upper()}"] = o.auto_off(k, b) or ""
    env["VFSFAST_OPTS"] = " ".join(o.name for o in OPTS)
    env["VFSFAST_OPTS_AUTO"] = " ".join(o.name for o in OPTS if o.auto(k))
    env["VFSFAST_OPTS_AUTO_FTRACE"] = " ".join(o.name for o in OPTS if o.auto(k, "ftrace"))
    env["VFSFAST_OPTS_OPTIN"] = " ".join(o.name for o in OPTS if o.opt_in)
    # vfsfast load prints them in the order of the sysfs directories.
    env["VFSFAST_EXPECT_LOAD_STATUS"] = "|".join(
        o.load_line(k) for o in sorted(OPTS, key=lambda o: o.name))
    return env


def workloads(names):
    """The one benchmark workload set that measures all the named
    optimizations together (a benchmark's knobs must share one)."""
    sets = {get(n).workloads for n in names}
    if len(sets) != 1:
        raise ValueError(f"{' '.join(names)}: no common workload set ({sets})")
    return sets.pop()
