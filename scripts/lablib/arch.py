"""The architectures the lab's kernels run on, as objects: what a guest
of one boots with, how code is built for it and how its disassembly reads.

A kernel.Kernel carries its Arch (k.arch; str(k.arch) is Debian's name,
"amd64", "arm64"), and vm.py, guest.py, build.py and debian.py ask it,
never test a name.  This module imports nothing of the lab but util, so
that it sits at the bottom of the import graph with kernel.py.
"""

import dataclasses
import re

from . import util


@dataclasses.dataclass(frozen=True)
class Disasm:
    """How objdump -dr of one architecture reads, for build.disassembly():

    call, jump: mnemonics of a call and of an unconditional jump (a tail
    call); reloc: the prefix of its relocation lines; atomic: a regex on
    the mnemonic of an instruction that is an atomic read-modify-write
    on memory (x86: any with a lock prefix, which the line parser passes
    as "lock <mnemonic>")."""
    call: tuple
    jump: tuple
    reloc: str
    atomic: str


@dataclasses.dataclass(frozen=True)
class Arch:
    """One architecture.  name: Debian's (dpkg --print-architecture).

    triplet: the GNU triplet of the cross toolchain the release's amd64
    chroot installs for it (None: the chroot's own gcc); make_vars: what
    every make of the module for its kernels adds (ARCH, CROSS_COMPILE;
    bookworm's and bullseye's arm64 headers set CROSS_COMPILE only within
    a Debian package build, so it is always given).
    qemu, machine: the emulator and its -machine; console: the guest
    kernel's console= (the first serial port, which the lab scans);
    job_out: the guest device of the job's output, which the guest's
    init writes to (the lab's second channel, a file on the host).
    job_channel: qemu's arguments that make job_out a file on the host
    ("{path}" in them is the file).  job_modules: the kernel modules
    that driver needs where a kernel builds it as a module (the guests
    load them with the others, vm.GUEST_MODULES; a built-in one is
    skipped).  host_packages: the host's Debian
    packages the guests need.  cpu: qemu's -cpu for every guest; None:
    the lab's cost models (vm.py, an x86 matter: TCG's rep strings).
    """
    name: str
    triplet: str
    qemu: str
    machine: str
    console: str
    job_out: str
    job_channel: tuple
    host_packages: tuple
    disasm: Disasm
    cpu: str = None
    # Kernel arguments of the guests that do not count instructions
    # (vm.WALLCLOCK_CMDLINE says why amd64's).
    wallclock_cmdline: str = ""
    # Why the module refuses the optimizations with observers on this
    # architecture (module/arch/<arch>/arch.h, VFSFAST_ARCH_NO_QUIESCE,
    # word for word: the status line the suite expects), or None.
    no_quiesce: str = None
    # The module reads a variable kallsyms cannot name from the code that
    # takes it (module/arch/<arch>/arch.h VFSFAST_ARCH_CALL_REF).
    call_ref: bool = False
    # The guest's multiarch library directory (programs of the release
    # packed with their libraries).
    multiarch: str = "x86_64-linux-gnu"
    # A kprobe event's fetch of the return address at a function's first
    # instruction: where the call left it (x86: on top of the stack).
    entry_ret: str = "+0($stack)"
    job_modules: tuple = ()
    # The prefix of a system call's entry, the wrapper that takes the
    # user's pt_regs: the module's VFSFAST_SYSCALL()
    # (module/arch/<arch>/arch.h), word for word.
    syscall_prefix: str = "__x64_sys_"
    # The kernel's name of it (uname -m): DKMS's --arch, and the last word
    # of a module's vermagic on arm64.
    uname_m: str = "x86_64"
    # readelf -h's Machine of its programs (a package's binaries are
    # checked against it).
    elf_machine: str = "Advanced Micro Devices X86-64"
    # The option without which every ftrace site walks the list of all
    # ftrace ops (ftrace_ops_list_func()): the module then keeps every
    # target of its ftrace backend, observers included, on one shared ops
    # (VFSFAST_ARCH_FTRACE_LIST_WALK, module/arch/<arch>/arch.h).  None:
    # never a walk (x86-64 gives each ops a trampoline of its own).
    ftrace_call_ops: str = None

    def __str__(self):
        return self.name

    @property
    def cross(self):
        """Built for with a cross compiler from the amd64 chroots."""
        return self.triplet is not None

    @property
    def make_vars(self):
        if not self.cross:
            return ""
        return f"ARCH={KBUILD_ARCH[self.name]} CROSS_COMPILE={self.triplet}-"

    def syscall(self, name):
        """The entry of system call @name ("statx": "__x64_sys_statx")."""
        return self.syscall_prefix + name

    def tool(self, name):
        """A binutils or gcc program of the architecture in the chroot
        (objdump, gcc)."""
        return f"{self.triplet}-{name}" if self.cross else name

    def job_out_args(self, path):
        """qemu's arguments that put the guest's job_out into file path."""
        return [a.format(path=path) for a in self.job_channel]

    def is_call(self, mnem):
        return mnem in self.disasm.call

    def is_jump(self, mnem):
        return mnem in self.disasm.jump

    def is_atomic(self, mnem, locked):
        return locked or bool(re.fullmatch(self.disasm.atomic, mnem))


# Kbuild's ARCH of each Debian architecture.
KBUILD_ARCH = {"amd64": "x86", "arm64": "arm64"}

AMD64 = Arch(
    name="amd64", triplet=None, qemu="qemu-system-x86_64", machine="pc",
    console="ttyS0,115200", job_out="/dev/ttyS1", job_channel=("-serial", "file:{path}"),
    host_packages=("qemu-system-x86",), wallclock_cmdline="tsc=nowatchdog",
    # objdump prints calls as call/callq, jumps as jmp/jmpq; an atomic is
    # lock-prefixed (the parser's "locked").
    disasm=Disasm(call=("call", "callq"), jump=("jmp", "jmpq"), reloc="R_X86_64_",
                  atomic=r"(?!)"))

ARM64 = Arch(
    name="arm64", triplet="aarch64-linux-gnu", qemu="qemu-system-aarch64", machine="virt",
    console="ttyAMA0", host_packages=("qemu-system-arm",),
    # virt has one non-secure UART (qemu 7.2): the job's channel is a
    # virtio console, built into Debian's arm64 kernels.
    job_out="/dev/hvc0", job_channel=("-device", "virtio-serial-pci", "-chardev",
                                      "file,id=job,path={path}", "-device",
                                      "virtconsole,chardev=job"),
    # Built in on 6.12; a module on 6.1 (with virtio_pci, which the
    # guests load anyway).
    job_modules=("virtio_console",),
    # max has PAC (kernel return addresses are signed, as on hardware);
    # pauth-impdef swaps QARMA for qemu's cheaper hash: the same
    # instructions, so the same counts, in a fraction of TCG's time.
    cpu="max,pauth-impdef=on",
    # bl is a call, b a jump (R_AARCH64_CALL26 / JUMP26 name the target);
    # br is a jump through a register (the trampolines').  Atomics: the
    # exclusive pairs GCC emits without LSE (ldxr/stxr and their
    # acquire/release forms) and the LSE instructions the kernel's
    # alternatives patch in (ld<op>, st<op>, cas, swp, with their
    # ordering and size suffixes).
    disasm=Disasm(call=("bl", "blr"), jump=("b", "br"), reloc="R_AARCH64_",
                  atomic=r"ld[a]?xr[bh]?|st[l]?xr[bh]?|ld[a]?xp|st[l]?xp|"
                  r"(?:ld|st)(?:add|clr|eor|set|smax|smin|umax|umin)[al]{0,2}[bh]?|"
                  r"cas[al]{0,2}[bh]?|casp[al]{0,2}|swp[al]{0,2}[bh]?"),
    multiarch="aarch64-linux-gnu",
    # bl leaves it in x30, not yet signed at the callee's first
    # instruction.
    entry_ret="%x30",
    syscall_prefix="__arm64_sys_", uname_m="aarch64", elf_machine="AArch64",
    call_ref=True, ftrace_call_ops="CONFIG_DYNAMIC_FTRACE_WITH_CALL_OPS")

ARCHES = {a.name: a for a in (AMD64, ARM64)}


def get(name):
    """The Arch of Debian's name; util.die() for another."""
    try:
        return ARCHES[name]
    except KeyError:
        util.die(f"unknown architecture {name!r}; choose from {' '.join(ARCHES)}")
