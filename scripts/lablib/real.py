"""Real programs, every optimization off vs on: `vfsfast-lab real`.

Each kernel boots in icount mode (one vCPU, -icount shift=0,sleep=off:
guest nanoseconds are executed instructions) with its release's own
userland (userland.py: util-linux, udev, procps, findutils, coreutils,
systemd from the release's chroot), loop-mounted read-only at /real.  The
guest job starts udevd once to fill udev's database, makes a symlink farm
in a tmpfs, and then, per program of PROGRAMS, runs vfsfast-ab with every
optimization the kernel supports (status not unsupported), all switched
together: `vfsfast-ab -p PAIRS OPTS -- chroot /real ... sh -c 'loop'`.
The metric is vfsfast-ab's runtime_s of the whole loop (abloop time),
which under icount counts instructions; the table divides it by the
loop's count.  Every figure of the table (medians, delta, its interval,
p, the A/A row) is a field of vfsfast-ab's summary.json: this file only
lays them out, as bench.py does.
"""

import json
import re
import shlex

from . import ab, build, guest, userland, util, vm

FARM = "/tmp/farm"
# The link chain's directory: ten levels deep, so each link (an absolute
# path to the next) makes realpath walk every level again.
CHAIN = FARM + "/chain/" + "/".join(f"d{i}" for i in range(1, 11))
CHAIN_LINKS = 30

# The programs: (label, what the table calls it, command line run in the
# release's root (its /bin/sh), times per measured run).  The counts make
# each run a few tens of millions of instructions.
PROGRAMS = [
    ("lscpu", "`lscpu`", "lscpu", 4),
    ("lsblk", "`lsblk`", "lsblk", 8),
    ("udevadm", "`udevadm info --export-db`", "udevadm info --export-db", 2),
    ("find-sys", "`find /sys -name nonexistent`", "find /sys -name nonexistent", 1),
    ("cgls", "`systemd-cgls --no-pager`", "systemd-cgls --no-pager", 8),
    ("ps", "`ps aux`", "ps aux", 4),
    ("top", "`top -b -n1`", "top -b -n1", 2),
    ("pgrep", "`pgrep -f nonexistent`", "pgrep -f nonexistent", 4),
    ("ls-links", "`ls -l` of 1,000 symlinks (tmpfs)", f"ls -l {FARM}/links1k", 4),
    ("find-L", "`find -L` over a symlink farm (1,000 links to files, 10 to "
     "directories of 20 files; tmpfs)", f"find -L {FARM}/tree", 4),
    # Tree walks over the release's own /usr, whose every name is a
    # getname() and a path walk.
    ("find-usr", "`find /usr -name nothing`", "find /usr -name nothing", 1),
    ("du-usr", "`du -s /usr`", "du -s /usr", 1),
    ("ls-lR-doc", "`ls -lR /usr/share/doc`", "ls -lR /usr/share/doc", 1),
    ("tar-doc", "`tar -cf /dev/null /usr/share/doc`", "tar -cf /dev/null /usr/share/doc", 1),
    ("git-status", "`git status` in a work tree of 2,000 files in 40 directories (tmpfs)",
     f"git -C {FARM}/repo status --porcelain", 2),
    ("realpath", f"`realpath -e` of a chain of {CHAIN_LINKS} absolute links, "
     "each 12 directories deep (tmpfs)", f"realpath -e {CHAIN}/l{CHAIN_LINKS}", 20),
    # The short programs shell scripts and build systems run thousands of
    # times: fork and exec included, most of what they cost is the C
    # library's start (fstat, access, /proc/filesystems for libselinux).
    ("id", "`id`", "id", 20),
    ("cat", "`cat` of a small file (/etc/debian_version)", "cat /etc/debian_version", 20),
    ("sed", "`sed -n 1p /etc/passwd`", "sed -n 1p /etc/passwd", 20),
    ("date", "`date`", "date", 20),
    ("python3", "`python3 -c pass`", "python3 -c pass", 2),
    ("gcc-c", "`gcc -c` of a hello-world C file (tmpfs)",
     f"gcc -c -o {FARM}/hello.o {FARM}/hello.c", 1),
    ("lsof", "`lsof -p` of a process with 100 files open (`tail -f`)",
     f"lsof -p $(cat {FARM}/busy.pid)", 2),
    # Last, since its processes stay: ps with 500 more processes asleep,
    # started just before it (BEFORE).
    ("ps-500", "`ps aux` with 500 more processes (`sleep`)", "ps aux", 1),
]

# Shell run in the guest just before a program's measurement.
BEFORE = {
    "lsof": f"inroot /bin/sh -c 'tail -q -f $(seq 0 99 | sed \"s|^|{FARM}/targets/file-|\") "
            f">/dev/null 2>&1 & echo $! >{FARM}/busy.pid'; sleep 1; "
            f"echo \"real: lsof of $(cat $R{FARM}/busy.pid), $(ls $R/proc/$(cat $R{FARM}/busy.pid)/fd | wc -l) descriptors\"",
    # Made by the release's own git, once: its index then holds every
    # file, and status stats each of them.
    "git-status": f"inroot /bin/sh -ec '[ -d {FARM}/repo/.git ] || {{ mkdir -p {FARM}/repo && "
                  f"cd {FARM}/repo && git init -q && for d in $(seq 0 39); do mkdir d$d && "
                  f"(cd d$d && seq 0 49 | sed \"s/^/f-/\" | xargs touch); done && git add . && "
                  f"git -c user.name=lab -c user.email=lab@lab commit -qm tree; }}; "
                  f"echo \"real: git work tree of $(git -C {FARM}/repo ls-files | wc -l) files\"'",
    "ps-500": "i=0; while [ $i -lt 500 ]; do sleep 100000 & i=$((i + 1)); done; "
              "echo \"real: $(ls -d /proc/[0-9]* | wc -l) processes\"",
}

ROOT = "/real"
# The programs' environment.  systemd's tools (udevadm trigger, settle,
# control) do nothing in a chroot unless told to behave as booted.
ENV = "PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C HOME=/root SYSTEMD_IGNORE_CHROOT=1"
# In the guest: the root's mounts, then the farm, made by the release's
# own shell and coreutils.
SETUP = f"""R={ROOT}
ENV={shlex.quote(ENV)}
mount_userland $R /lab/userland.img || echo "real: userland: mount failed"
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup || echo "real: no cgroup2"
# The same address space layout every run: fewer instructions that
# differ between runs of the same program (both arms alike).
echo 0 >/proc/sys/kernel/randomize_va_space
inroot() {{
	chroot $R /usr/bin/env -i $ENV "$@"
}}
# udev's database, as a booted system has it; udevd is gone before
# anything is measured.
inroot /bin/sh -c 'for u in /usr/lib/systemd/systemd-udevd /lib/systemd/systemd-udevd; do
	[ -x $u ] && break; done
	$u --daemon && udevadm trigger --action=add && udevadm settle --timeout=300
	udevadm control --exit' 2>&1 | sed "s/^/real: udev: /" | tail -n 5
echo "VFSFAST-REAL-UDEV $(ls $R/run/udev/data 2>/dev/null | wc -l)"
inroot /bin/sh -ec '
	mkdir -p {FARM}/targets {FARM}/links1k {FARM}/tree {CHAIN}
	cd {FARM}/targets
	seq 0 999 | sed "s/^/file-/" | xargs touch
	for j in $(seq 0 9); do mkdir dir-$j; (cd dir-$j && seq 0 19 | sed "s/^/f-/" | xargs touch); done
	cd {FARM}/links1k
	seq 0 999 | xargs -I@ ln -s {FARM}/targets/file-@ link-@
	for j in $(seq 0 9); do
		mkdir {FARM}/tree/d$j && cd {FARM}/tree/d$j
		seq $((j * 100)) $((j * 100 + 99)) | xargs -I@ ln -s ../../targets/file-@ f-@
		ln -s {FARM}/targets/dir-$j sub
	done
	printf "#include <stdio.h>\\nint main(void)\\n{{\\n\\tputs(\\"hello\\");\\n\\treturn 0;\\n}}\\n" >{FARM}/hello.c
	touch {CHAIN}/target
	ln -s {CHAIN}/target {CHAIN}/l0
	for i in $(seq 1 {CHAIN_LINKS}); do ln -s {CHAIN}/l$((i - 1)) {CHAIN}/l$i; done
	echo "VFSFAST-REAL-FARM $(find {FARM} -type l | wc -l) links"
'
"""

RC_MARK = "VFSFAST-REAL-RC "
KNOBS_MARK = "VFSFAST-REAL-KNOBS "
CALLS_MARK = "VFSFAST-REAL-CALLS "


def loop(cmd, count):
    """The shell loop one measured run times: cmd count times, its output
    thrown away, stopping (and failing the run) at the first failure."""
    return (f"i=0; while [ $i -lt {count} ]; do {cmd} >/dev/null || exit 1; "
            f"i=$((i + 1)); done")


def job_text(pairs, aa, seed, programs=PROGRAMS, knobs=None):
    """knobs: the optimizations to switch (comma separated); "auto": those
    enable=auto turns on (lib.sh's opts_auto, which t_sysfs holds to the
    module's own choice); None: every one the kernel supports."""
    runs = "\n".join(f"{label} {shlex.quote(loop(cmd, n))}" for label, _, cmd, n in programs)
    before = "\n".join(f"\t{label}) {BEFORE[label]} ;;" for label, _, _, _ in programs
                       if label in BEFORE) or "\t*) ;;"
    return f"""load_vfsfast enable=none
{SETUP}
knobs={shlex.quote(knobs or "")}
[ "$knobs" != auto ] || knobs=$(opts_auto | tr ' ' ,)
[ -n "$knobs" ] || for o in $VFSFAST_OPTS; do
	case $(head -n1 $VF/$o/status) in unsupported* | disabled*) continue ;; esac
	knobs="$knobs${{knobs:+,}}$o"
done
echo "{KNOBS_MARK}$knobs"
kl=$(echo "$knobs" | tr , ' ')
snap() {{ # every knob's hits and fallbacks, knob:hits:fallbacks, one line
	for o in $kl; do
		read h <$VF/$o/stats/hits
		read f <$VF/$o/stats/fallbacks
		printf '%s:%s:%s ' $o $h $f
	done
}}
# Let boot-time background work finish before anything is measured.
sleep 5
printf '%s\\n' {' '.join(shlex.quote(l) for l in runs.splitlines())} |
while read -r label cmd; do
	eval "cmd=$cmd"
	case $label in
{before}
	esac
	rm -rf /tmp/abres
	vfsfast-ab -p {pairs} --aa {aa} --seed {seed} --no-perf -w 2 --settle 1 -o /tmp/abres \\
		"$knobs" -- chroot $R /usr/bin/env -i $ENV /bin/sh -c "$cmd" </dev/null >/tmp/ab.out 2>&1
	rc=$?
	echo "{RC_MARK}$label $rc"
	[ $rc = 0 ] || tail -n 15 /tmp/ab.out
	# One more run with every knob on, not timed: what each fast path
	# answered (hits) and handed to stock (fallbacks) in it.  Reading the
	# counters makes calls too (opens, reads, closes, a pipe), so the
	# difference across two snapshots with nothing between them is taken
	# off: the same calls, in the same order, every time, once a first
	# snapshot has warmed the dentries of the counters' sysfs files (a
	# cold lookup there is a kernfs fallback the others do not make).
	for o in $kl; do echo 1 >$VF/$o/enabled; done
	snap >/dev/null
	b0=$(snap)
	b1=$(snap)
	c0=$(snap)
	chroot $R /usr/bin/env -i $ENV /bin/sh -c "$cmd" </dev/null >/dev/null 2>&1
	c1=$(snap)
	for o in $kl; do echo 0 >$VF/$o/enabled; done
	echo "{CALLS_MARK}$label $(echo "$b0
$b1
$c0
$c1" | awk '{{ for (i = 1; i <= NF; i++) {{ split($i, a, ":"); h[NR, i] = a[2]; f[NR, i] = a[3]; k[i] = a[1] }} }}
		END {{ for (i = 1; i <= NF; i++)
			printf "%s%s:%d:%d", (i > 1 ? " " : ""), k[i],
				h[4, i] - h[3, i] - (h[2, i] - h[1, i]), f[4, i] - f[3, i] - (f[2, i] - f[1, i]) }}')"
	for f in summary.json env.txt; do
		[ -f /tmp/abres/$f ] || continue
		echo "{ab.FILE_MARK}$label.$f"
		awk '{{ print }}' /tmp/abres/$f
		echo "{ab.END_MARK}"
	done
done
unload_vfsfast
"""


class Result:
    """One kernel's measurement: its summaries per program, the knobs
    switched, the backend, the udev database's size, the versions."""

    def __init__(self, kernel, summaries, knobs, backend, udev, versions, seconds, pairs, aa,
                 programs=PROGRAMS, chosen=False, calls=None):
        self.kernel = kernel
        # per program: [(knob, hits, fallbacks)] in one run with every knob on
        self.calls = calls or {}
        self.summaries = summaries
        self.knobs = knobs
        self.backend = backend
        self.udev = udev
        self.versions = versions
        self.seconds = seconds
        self.pairs = pairs
        self.aa = aa
        self.programs = programs
        # knobs named by --knobs, not every one the kernel supports
        self.chosen = chosen


def run(kernel, pairs, aa, seed, programs=PROGRAMS, knobs=None):
    """Boot one kernel (a kernel.Kernel) and measure the programs."""
    kernel.ensure()
    ko, log = build.guest_module(kernel)
    if not ko:
        util.die(f"{kernel}: module build failed:\n{log[-2000:]}")
    land = userland.of(kernel)
    image = land.ensure(kernel)
    util.log(f"{kernel}: real programs (vfsfast-ab in the guest, {kernel.release} "
             f"userland), {pairs} pairs + {aa} A/A per program")
    res = guest.run_job(kernel, job_text(pairs, aa, seed, programs, knobs), ko, icount=True, timeout=5400,
                        extra_files={"/lab/userland.img": image}, memory_mb=3072,
                        on_output=_progress)
    report, files = ab.checked_output(kernel, res, RC_MARK, "real programs")
    m = re.search("^" + KNOBS_MARK + r"(\S*)$", report, re.M)
    switched = m.group(1).split(",") if m and m.group(1) else []
    m = re.search(r"^VFSFAST-REAL-UDEV (\d+)", report, re.M)
    udev = int(m.group(1)) if m else None
    summaries, backend = {}, set()
    for label, _, _, _ in programs:
        name = f"{label}.summary.json"
        if name not in files:
            util.die(f"{kernel}: no vfsfast-ab results for {label}\n{report[-3000:]}")
        s = json.loads(files[name])
        summaries[label] = {r["compare"]: r for r in s["results"] if r["metric"] == "runtime_s"}
        backend.update(kv.split("=", 1)[1] for kv in s.get("backends_used", "").split())
    # chosen: whether --knobs named them, not whether the guest switched any.
    return Result(kernel, summaries, switched, " ".join(sorted(backend)), udev,
                  land.versions(), res.seconds, pairs, aa, programs,
                  chosen="auto" if knobs == "auto" else bool(knobs),
                  calls=parse_calls(report))


def parse_calls(report):
    """The CALLS_MARK lines: {program: [(knob, hits, fallbacks)]}."""
    calls = {}
    for m in re.finditer("^" + CALLS_MARK + r"(\S+)(.*)$", report, re.M):
        calls[m.group(1)] = [(k, int(h), int(f)) for k, h, f in
                             (w.split(":") for w in m.group(2).split())]
    return calls


def calls_text(calls, count):
    """What the fast paths did per invocation: each knob with any call, its
    hits, and its fallbacks in parentheses where there were any."""
    def num(x):
        return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"

    out = []
    for knob, h, f in calls:
        if h or f:
            out.append(f"{knob} {num(h / count)}" + (f" ({num(f / count)})" if f else ""))
    return ", ".join(out) or "none"


def _progress(chunk):
    for line in chunk.splitlines():
        if line.startswith(RC_MARK) or line.startswith("VFSFAST-REAL-") or \
                line.startswith("real: "):
            util.log(line)


def _pct(x):
    """A percentage with the digits it needs: never rounded to 0.00 or
    across zero; "-" where vfsfast-ab gave none (an interval of one pair)."""
    if x is None:
        return "-"
    if abs(x) >= 0.1:
        return f"{x:+.2f}%"
    return f"{x:+.3f}%" if abs(x) >= 0.001 or x == 0 else f"{x:+.2g}%"


def _p(x):
    return "-" if x is None else f"{x:.4f}"


def verdict(on, aa):
    """What the row says, from vfsfast-ab's own marker and interval."""
    if aa and aa.get("marker") == "*":
        return "unstable: the A/A pairs differ, distrust this row"
    if on["marker"] == "*" and on["delta_hi_pct"] < 0:
        return "gain"
    if on["marker"] == "*" and on["delta_lo_pct"] > 0:
        return "LOSS"
    return "nothing measurable"


def begin_mark(kernel):
    return util.marks("real", kernel)[0]


def end_mark(kernel):
    return util.marks("real", kernel)[1]


# What the table says of the knobs switched, by Result.chosen.
CHOSEN = {"auto": "those enable=auto turns on, `--knobs auto`", True: "named by --knobs",
          False: "every optimization this kernel supports"}


def table(r):
    """The markdown block of one kernel, between its marks."""
    k = r.kernel
    vers = ", ".join(f"{p} {v}" for p, v in sorted(r.versions.items()))
    lines = [
        begin_mark(k),
        f"**{k}** ({k.kver}), {k.release} userland ({vers}); qemu TCG, 1 vCPU, "
        f"`-icount shift=0,sleep=off` (guest ns = instructions), {vm.arch_cpu_label([k.arch])}; "
        f"backend {r.backend or '?'}; "
        f"knobs on: {', '.join(r.knobs) or 'none'} "
        f"({CHOSEN[r.chosen]}) "
        f"vs all off. Per program {r.pairs} off/on pairs in random order and {r.aa} A/A "
        f"(off/off) pairs (`--seed 1`, 2 warm-up runs, 1 settle run after each knob write); "
        f"udev database: {r.udev if r.udev is not None else '?'} devices; "
        f"{r.seconds / 60:.0f} minutes of wall time for the guest.",
        "",
        "| program | runs | instructions per invocation, off | on | delta [95% CI] | p "
        "| A/A delta [95% CI] | verdict |" + (" fast-path calls per invocation |" if r.calls else ""),
        "|---|---:|---:|---:|---:|---:|---:|---|" + ("---|" if r.calls else ""),
    ]
    for label, what, _, count in r.programs:
        s = r.summaries[label]
        on, aa = s.get("on/off"), s.get("aa")
        runs = f"{on['pairs']}+{aa['pairs'] if aa else 0}"
        aa_txt = (f"{_pct(aa['delta_pct'])} [{_pct(aa['delta_lo_pct'])}, "
                  f"{_pct(aa['delta_hi_pct'])}] {aa['marker']}" if aa else "")
        lines.append(
            f"| {what}{f' (x{count} per run)' if count > 1 else ''} | {runs} | "
            f"{on['off_median'] * 1e9 / count:,.0f} | {on['on_median'] * 1e9 / count:,.0f} | "
            f"{_pct(on['delta_pct'])} [{_pct(on['delta_lo_pct'])}, {_pct(on['delta_hi_pct'])}] "
            f"{on['marker']} | {_p(on.get('p'))} | {aa_txt} | {verdict(on, aa)} |"
            + (f" {calls_text(r.calls.get(label, []), count)} |" if r.calls else ""))
    lines += ["", "runs: off/on pairs + A/A pairs. Instructions per invocation: "
              "the median run (the whole loop, as `abloop time` measures it: shell, "
              "`fork()`, `exec()` and the program) divided by the invocations per run. "
              "delta: geometric mean of the per-pair on/off ratios, minus 1, with its 95% "
              "interval and the Wilcoxon signed-rank p, as vfsfast-ab reports them (mark "
              "`*` p < 0.05, `~` not significant, `=` every pair equal). gain or LOSS only "
              "where the mark is `*` and the interval lies on one side of zero; everything "
              "else is \"nothing measurable\"."
              + (" Fast-path calls per invocation: in one more run of the loop with every "
                 "knob on, each knob's `stats/hits` (and `stats/fallbacks`, in parentheses, "
                 "where any) divided by the invocations, the shell's fork and exec included."
                 if r.calls else ""), end_mark(k)]
    return "\n".join(lines)


def update_doc(path, blocks):
    """Put each kernel's block into the file between its marks (replacing
    the block there), or, where the file has none, before the marker line
    `<!-- vfsfast-lab real: new kernels -->`."""
    util.update_doc(path, "real", blocks)


def main(kernels, pairs, aa, seed=1, out=None, doc=None, knobs=None, programs=None):
    """`vfsfast-lab real`: one kernel at a time (one guest at a time).
    knobs, programs: a subset, for finding which knob a result comes
    from; not with doc, whose tables are every program, every knob."""
    if doc and (knobs or programs):
        util.die("real: --doc takes every program and every knob; --knobs and --programs "
                 "go with --out")
    known = [p[0] for p in PROGRAMS]
    for p in programs or []:
        if p not in known:
            util.die(f"real: unknown program {p!r}; choose from {' '.join(known)}")
    chosen = [p for p in PROGRAMS if not programs or p[0] in programs]
    blocks = []
    for k in kernels:
        r = run(k, pairs, aa, seed, chosen, knobs)
        block = table(r)
        print(block + "\n", flush=True)
        blocks.append((k, block))
        if doc:
            update_doc(doc, [(k, block)])
        if out:
            with open(out, "w") as f:
                f.write("\n\n".join(b for _, b in blocks) + "\n")
    return 0
