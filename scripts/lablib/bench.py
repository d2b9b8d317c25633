"""Benchmarks in the lab: instructions per operation, knob off vs on.

Runs in icount mode (one vCPU, -icount shift=0,sleep=off), where guest
nanoseconds count executed instructions, so figures reproduce to about
0.1% and a difference of a few instructions per call is visible.

The measurement is vfsfast-ab's, run in the guest as on a host (one run
per backend and workload, arms off, on and passthrough), and so are the
statistics: medians, spreads, deltas, redirect costs and the share of
upstream's saving recovered on legacy all come from
scripts/vfsfast-ab-stats.awk.  This file only parses what vfsfast-ab
writes (summary.json, raw.csv) and lays it out in tables.
"""

import concurrent.futures
import json
import os
import re
import shlex
import subprocess

from . import ab, arch, build, debian, guest, opts, util, vm

# What each benchmark measures: the knobs it switches together (the
# guest job's workload set, WORKLOADS below, is theirs: opts.OPTS),
# and the operation named in the table's title.
BENCHES = {
    "readlink": (("readlink",), "readlink(), instructions per call"),
    "fsnotify": (("fsnotify", "fsnotify_parent"),
                 "small I/O (1-byte pwrite/pread, pipe and socket write+read, "
                 "eventfd write+read), instructions per operation, and "
                 "hackbench -p -g 1 -f 4, instructions per message; knobs "
                 "fsnotify and fsnotify_parent together"),
    "pseudo_nonotify": (("pseudo_nonotify",),
                        "small I/O and hackbench as for fsnotify, knob pseudo_nonotify"),
    "fsnotify_all": (("fsnotify", "fsnotify_parent", "pseudo_nonotify"),
                     "small I/O and hackbench as for fsnotify, knobs fsnotify, "
                     "fsnotify_parent and pseudo_nonotify together"),
    "kernfs": (("kernfs",),
               "sysfs: stat() of a missing and of an existing attribute under "
               "/sys/devices/system/cpu/cpu0/topology, open/read/close of one "
               "attribute and of each in turn, instructions per operation"),
    "kernfs_rcu": (("kernfs_rcu",),
                   "sysfs and cgroupfs path walks: stat() and open/read/close of "
                   "/sys/devices/system/cpu/cpu0/topology/core_id (6 sysfs components) and "
                   "of cgroup.procs three cgroups deep, instructions per operation"),
    "fstatat_empty": (("fstatat_empty",),
                      "fstatat(fd, \"\", AT_EMPTY_PATH), statx(fd, \"\", AT_EMPTY_PATH) and "
                      "the fstat system call of an open file on tmpfs, instructions per call"),
    "statx_empty": (("statx_empty",),
                    "fstatat(fd, \"\", AT_EMPTY_PATH), statx(fd, \"\", AT_EMPTY_PATH) and "
                    "the fstat system call of an open file on tmpfs, instructions per call"),
    "access_creds": (("access_creds",),
                     "access() of a file on tmpfs (R_OK), of a missing name beside it "
                     "(ENOENT) and X_OK of the file (EACCES), as root, instructions per call"),
    "close_sync": (("close_sync",),
                   "open, read and close of a small tmpfs file, and open() of a missing "
                   "name beside it (ENOENT) and of the file with O_DIRECTORY (ENOTDIR), "
                   "which close_sync does not touch, instructions per call"),
    "getname": (("getname",),
                "path-taking calls on tmpfs, 5 components (/tmp/<dir>/a/b/file): lstat(), "
                "stat() of the last component relative to its directory, stat() of a "
                "missing last component, access(X_OK), open+close, stat() of the file "
                "by a 4,070-byte name; lstat() of a link 3 directories deep on the "
                "lab's ext4 image; and stat() of /proc/self/status, instructions per call"),
    "lookup_exec": (("lookup_exec",),
                    "the getname workloads, knob lookup_exec (the ext4 row: root's own "
                    "directories, whose ACLs no one has read), instructions per call"),
    "path": (("getname", "lookup_exec"),
             "the getname workloads with the knobs getname and lookup_exec together, "
             "instructions per call"),
    "proc_pid_rcu": (("proc_pid_rcu",),
                     "/proc/<pid> walks: stat() of /proc/self/status and of "
                     "/proc/1/task/1/status, open/read/close of /proc/self/stat, "
                     "instructions per call"),
    "proc_cgroup": (("proc_cgroup",),
                    "open, read and close of /proc/self/cgroup (cgroup2 only), "
                    "instructions per read"),
    "proc_filesystems": (("proc_filesystems",),
                         "open, read and close of /proc/filesystems, instructions per read"),
    "readdir_arena": (("readdir_arena",),
                      "one whole read of a directory (open, getdents64() into 32 KiB until "
                      "the end, close) on ext4 made in the guest (mkfs.ext4's defaults, "
                      "dir_index: the kernel builds the index as the files are created), "
                      "2,000 and 60 empty files, and on tmpfs, 2,000; instructions per read"),
}


# Each workload set's workloads: (label in the table, vfsfast-ab options,
# vfsfast-ab workload).  /mnt/ext4 is the lab's read-only ext4 image, with
# links of 32 and 100 bytes; the io files live in the guest's tmpfs /tmp.
WORKLOADS = {
    "readlink": [("tmpfs-32", [], ["readlink-tmpfs-32"]),
                 ("tmpfs-100", [], ["readlink-tmpfs-100"]),
                 ("ext4-32", [], ["readlink-at", "/mnt/ext4/links/bench32"]),
                 ("ext4-100", [], ["readlink-at", "/mnt/ext4/links/bench100"])],
    "io": [("write", ["--root-dir", "/tmp"], ["write"]),
           ("read", ["--root-dir", "/tmp"], ["read"]),
           ("watched", ["--root-dir", "/tmp"], ["write-watched"]),
           ("pipe", [], ["pipe"]),
           ("pipewatched", [], ["pipe-watched"]),
           ("socket", [], ["socket"]),
           ("eventfd", [], ["eventfd"]),
           ("hackbench", [], ["hackbench-msg"]),
           ("hackbenchwatched", [], ["hackbench-msg-watched"])],
    "kernfs": [("miss", [], ["kernfs-miss"]),
               ("stat", [], ["kernfs-stat"]),
               ("read", [], ["kernfs-read"]),
               ("readmany", [], ["kernfs-readmany"])],
    "kernfs_rcu": [("sysfs-stat", [], ["kernfs-stat"]),
                   ("sysfs-read", [], ["kernfs-read"]),
                   ("cgroupfs-stat", [], ["cgroupfs-stat"]),
                   ("cgroupfs-read", [], ["cgroupfs-read"])],
    "fstatat_empty": [("fstatat-empty", ["--root-dir", "/tmp"], ["fstatat-empty"]),
                      ("statx-empty", ["--root-dir", "/tmp"], ["statx-empty"]),
                      ("fstat", ["--root-dir", "/tmp"], ["fstat"])],
    "access_creds": [("access", ["--root-dir", "/tmp"], ["access"]),
                     ("access-missing", ["--root-dir", "/tmp"], ["access-missing"]),
                     ("access-denied", ["--root-dir", "/tmp"], ["access-denied"])],
    "close_sync": [("open-read-close", ["--root-dir", "/tmp"], ["read-small"]),
                   ("open-missing", ["--root-dir", "/tmp"], ["open-missing"]),
                   ("open-notdir", ["--root-dir", "/tmp"], ["open-notdir"])],
    "path": [("lstat-5", ["--root-dir", "/tmp"], ["path-lstat"]),
                ("stat-1", ["--root-dir", "/tmp"], ["path-stat1"]),
                ("stat-missing-5", ["--root-dir", "/tmp"], ["path-missing"]),
                ("access-x-5", ["--root-dir", "/tmp"], ["path-access-x"]),
                ("open-close-5", ["--root-dir", "/tmp"], ["path-open"]),
                ("stat-4070-byte-name", ["--root-dir", "/tmp"], ["path-long"]),
                ("ext4-lstat", [], ["lstat-at", "/mnt/ext4/links/bench32"]),
                ("proc-stat", [], ["proc-stat"])],
    "proc_pid_rcu": [("proc-stat", [], ["proc-stat"]),
                     ("proc-walk", [], ["proc-walk"]),
                     ("proc-read", [], ["proc-read"])],
    "proc_cgroup": [("proc-cgroup", [], ["proc-cgroup"])],
    "proc_filesystems": [("read", [], ["read-file"])],
    "readdir": [("ext4-2000", [], ["readdir-at", "/tmp/rdb/mnt/d2000"]),
                ("ext4-60", [], ["readdir-at", "/tmp/rdb/mnt/d60"]),
                ("tmpfs-2000", [], ["readdir-at", "/tmp/rdb/d2000"])],
}

# What a workload set needs made in the guest before it runs: the
# directories of readdir, on a fresh ext4 filesystem (the lab's own
# empty image, guest.evdiff_image()) and on tmpfs.
PREPARE = {
    "readdir": """mkdir -p /tmp/rdb/mnt
gunzip -c /lab/evdiff-ext4.img.gz >/tmp/rdb/ext4.img
mount -t ext4 -o loop /tmp/rdb/ext4.img /tmp/rdb/mnt
make_files /tmp/rdb/mnt/d2000 2000
make_files /tmp/rdb/mnt/d60 60
make_files /tmp/rdb/d2000 2000
sync
""",
}

RC_MARK = "VFSFAST-BENCH-RC "
STATS = os.path.join(util.repo_dir(), "scripts/vfsfast-ab-stats.awk")


def bench_job(opt):
    """(workload set, knobs) of a benchmark."""
    knobs = BENCHES[opt][0]
    return opts.workloads(knobs), " ".join(knobs)


def job_text(opt, rounds, iterations, backends):
    """The guest job: for each backend, load the module and run vfsfast-ab
    once per workload, arms off, on and passthrough (an A/A run, the knob
    never switched on, where this kernel cannot have the optimization),
    then print the results folder's files (ab.FILE_MARK blocks)."""
    wset, knobs = bench_job(opt)
    first = knobs.split()[0]
    common = f"-p {rounds} --aa 0 -n {iterations} -w 1 --settle 0 --seed 1 --no-perf"
    lines = [f"{label} {' '.join(shlex.quote(a) for a in o + [knobs.replace(' ', ','), '--'] + w)}"
             for label, o, w in WORKLOADS[wset]]
    runs = "\n".join(lines)
    return f"""# cgroupfs, for the workloads that walk it (the guest mounts none itself).
grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts || mount -t cgroup2 none /sys/fs/cgroup
{PREPARE.get(wset, "")}# Let boot-time background work finish before anything is measured.
sleep 5
for b in {' '.join(backends)}; do
	load_vfsfast enable=none backend=$b
	arms="--arms on,passthrough"
	grep -q '^unsupported' $VF/{first}/status && arms=--aa-only
	printf '{runs}\n' | while read -r label args; do
		rm -rf /tmp/abres
		eval "set -- $args"
		vfsfast-ab {common} $arms -o /tmp/abres "$@" </dev/null >/tmp/ab.out 2>&1
		rc=$?
		echo "{RC_MARK}$b $label $rc"
		[ $rc = 0 ] || tail -n 15 /tmp/ab.out
		for f in summary.json raw.csv env.txt; do
			[ -f /tmp/abres/$f ] || continue
			echo "{ab.FILE_MARK}$b.$label.$f"
			awk '{{ print }}' /tmp/abres/$f
			echo "{ab.END_MARK}"
		done
	done
	unload_vfsfast
done
"""


def raw_rounds(csv_text):
    """{mode: [values]} of a raw.csv's ns_per_op runs, in run order (A/A
    arms a and b are both "off")."""
    out = {}
    for line in csv_text.splitlines()[1:]:
        f = line.split(",")
        if len(f) >= 7 and f[5] == "ns_per_op":
            mode = "off" if f[4] in ("a", "b") else f[4]
            out.setdefault(mode, []).append(float(f[6]))
    return out


def run(kernel, opt, rounds, iterations, disk, backends=None, append=""):
    """One kernel's benchmark (kernel: a kernel.Kernel); returns (data,
    status, summaries): data {(backend, workload, mode): [values]} from
    raw.csv, status "<state> <upstream>" of the first knob, summaries
    {(backend, workload): {compare: summary.json row}}."""
    kernel.ensure()
    ko, log = build.guest_module(kernel)
    if not ko:
        util.die(f"{kernel}: module build failed:\n{log[-2000:]}")
    offered = build.expected_backends(kernel)
    backends = [b for b in (backends or offered) if b in offered]
    wset, knobs = bench_job(opt)
    util.log(f"{kernel}: {opt} benchmark (vfsfast-ab in the guest), backends "
             f"{' '.join(backends)}, {rounds} rounds x {iterations} calls")
    res = guest.run_job(kernel, job_text(opt, rounds, iterations, backends), ko, disk=disk,
                        icount=True, timeout=900 * max(1, len(backends)), append=append,
                        extra_files=debian.chroot_programs(kernel, ["/usr/bin/hackbench"])
                        if wset == "io" else None)
    report, files = ab.checked_output(kernel, res, RC_MARK, "benchmark")
    data, summaries, status = {}, {}, ""
    for b in backends:
        for label, _, _ in WORKLOADS[wset]:
            name = f"{b}.{label}"
            if f"{name}.summary.json" not in files:
                util.die(f"{kernel}: no vfsfast-ab results for {b} {label}\n{report[-2000:]}")
            summary = json.loads(files[f"{name}.summary.json"])
            summaries[(b, label)] = {r["compare"]: r for r in summary["results"]
                                     if r["metric"] == "ns_per_op"}
            for mode, vals in raw_rounds(files.get(f"{name}.raw.csv", "")).items():
                data[(b, label, mode)] = vals
            first = knobs.split()[0]
            up = summary.get("upstream", {}).get(first, "?") or "?"
            supported = "on/off" in summaries[(b, label)]
            status = f"{'measured' if supported else 'unsupported'} {up}"
            used = summary.get("backends_used", "")
            for kv in used.split():
                if kv.split("=", 1)[1] != b:
                    util.die(f"{kernel}: backend {b} asked, {kv} used ({label})")
    return data, status, summaries


def _workload_key(w):
    kind, _, size = w.partition("-")
    return (kind, int(size) if size.isdigit() else 0)


def _fmt(x, f):
    return "" if x is None else format(x, f)


def table(results, rounds, iterations, opt="readlink", arches=None, append=""):
    """The markdown table of bench results; arches: the kernels'
    architectures (what the header says of the guests' CPU); append: the
    guests' extra kernel arguments."""
    wset = bench_job(opt)[0]
    lines = [
        f"{BENCHES[opt][1]} (qemu TCG, 1 vCPU, -icount shift=0, "
        f"{vm.arch_cpu_label(arches or [arch.AMD64])}; "
        f"{f'kernel arguments {append}; ' if append else ''}"
        f"vfsfast-ab in the guest, "
        f"{rounds} pairs (rounds) of off, on and passthrough in random order, {iterations} "
        f"calls per run; medians; delta = geometric mean of the per-round on/off ratios; "
        f"spread = (max-min)/median over the rounds)",
        "",
        "| kernel | upstream | backend | workload | off | on | delta | passthrough | redirect cost | spread off/on/pt |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    order = {"jmp": 0, "direct": 1, "ftrace": 2}
    labels = sorted((w[0] for w in WORKLOADS[wset]), key=_workload_key)
    for kernel, (_, status, summaries) in results.items():
        upstream = status.split(" ", 1)[-1] if status else "?"
        backends = sorted({b for b, _ in summaries}, key=lambda b: order.get(b, 9))
        for b in backends:
            for w in labels:
                s = summaries.get((b, w))
                if s is None:
                    continue
                if "on/off" not in s:
                    aa = s["aa"]
                    lines.append(f"| {kernel} | {upstream} | {b} | {w} | {aa['off_median']:.0f} "
                                 f"| unsupported | | | | {aa['off_spread_pct']:.2f}% |")
                    continue
                on, pt = s["on/off"], s.get("passthrough/off")
                lines.append(
                    f"| {kernel} | {upstream} | {b} | {w} | {on['off_median']:.0f} | "
                    f"{on['on_median']:.0f} | {on['delta_pct']:+.2f}% | "
                    f"{_fmt(pt and pt['on_median'], '.0f')} | "
                    f"{_fmt(pt and pt['diff_median'], '+.0f')} | "
                    f"{on['off_spread_pct']:.2f}%/{on['on_spread_pct']:.2f}%/"
                    f"{_fmt(pt and pt['on_spread_pct'], '.2f')}% |")
    lines += ["", "delta: on vs off (negative = fewer instructions). passthrough: the "
              "hook sends each call straight back into the stock body, so "
              "redirect cost = passthrough - off is what one trip through the "
              "backend costs."]
    return "\n".join(lines)


def _rows(text):
    """The rows of a table() text: {(kernel, backend, workload): cells}."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 10 or cells[0] in ("kernel", "") or cells[0].startswith("-"):
            continue
        rows[(cells[0], cells[2], cells[3])] = cells
    return rows


def _model(text):
    """The cost model a table() text names; tables from before the model
    was named were all measured under -cpu max."""
    m = re.search(r"cost model (\S+) \(-cpu ([^)]*)\)", text)
    return (m.group(1), m.group(2)) if m else ("max", "max")


def compare(old_text, new_text):
    """`vfsfast-lab compare`: the rows two table() texts share, side by
    side (Documentation/ab-methodology.md, "The cost model", whose
    sensitivity table this writes from --cost-model max and the default)."""
    old, new = _rows(old_text), _rows(new_text)
    (om, ocpu), (nm, ncpu) = _model(old_text), _model(new_text)
    lines = [f"The same rows under cost model {om} (-cpu {ocpu}) and {nm} (-cpu {ncpu}): "
             f"instructions per operation, medians as each table printed them; change = "
             f"{nm} / {om} - 1 of the off medians.",
             "",
             f"| kernel | backend | workload | off, {om} | off, {nm} | change | "
             f"delta, {om} | delta, {nm} | redirect cost, {om} | redirect cost, {nm} |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key in (k for k in new if k in old):
        o, n = old[key], new[key]
        try:
            change = f"{(float(n[4]) / float(o[4]) - 1) * 100:+.1f}%"
        except (ValueError, ZeroDivisionError):
            change = ""
        lines.append(f"| {' | '.join(key)} | {o[4]} | {n[4]} | {change} | {o[6]} | {n[6]} "
                     f"| {o[8]} | {n[8]} |")
    return "\n".join(lines)


# The lab-built pair: the same 6.1 source, configuration and compiler, with
# and without the revert of upstream's fsnotify fast paths (legacy.py).
PAIR = ("legacy", "legacy-ref")


def recovery(results):
    """How much of upstream's saving the knobs win back on the legacy kernel.

    upstream saving = legacy off - legacy-ref off (what the reverted fast
    paths are worth); knob saving = legacy off - legacy on; recovered = knob
    saving / upstream saving.  Only meaningful for the fsnotify benchmarks,
    whose fast paths are the whole difference between the two kernels.
    results: {kernel: (data, ...)}, data {(backend, workload, mode):
    [rounds]}.  Computed by vfsfast-ab-stats.awk (recovery=1), from the
    medians and the rounds' max - min; this only hands it the rounds.
    Returns rows (backend, workload, l_off, l_on, r_off, up, knob, pct,
    why); pct is None, and why says which, where upstream saves under 0.5%
    or less than the rounds of either "off" figure spread over (max - min):
    the ratio of two numbers within the noise would mean nothing."""
    if not all(k in results for k in PAIR):
        return []
    ldata, rdata = results[PAIR[0]][0], results[PAIR[1]][0]
    lines = ["side,backend,workload,value"]
    for side, data, mode in (("legacy_off", ldata, "off"), ("legacy_on", ldata, "on"),
                             ("ref_off", rdata, "off")):
        for (b, w, m), vals in sorted(data.items()):
            if m == mode:
                lines += [f"{side},{b},{w},{v!r}" for v in vals]
    out = subprocess.run(["awk", "-v", "recovery=1", "-f", STATS],
                         input="\n".join(lines) + "\n", capture_output=True, text=True)
    if out.returncode:
        util.die(f"vfsfast-ab-stats.awk recovery=1 failed: {out.stderr}")
    rows = []
    for line in out.stdout.splitlines():
        b, w, *nums, pct, why = line.split("\t")
        rows.append((b, w, *(float(x) for x in nums), None if pct == "-" else float(pct),
                     None if why == "-" else why))
    return sorted(rows, key=lambda r: (r[0], r[1]))


def recovery_table(rows):
    if not rows:
        return ""
    lines = ["", "What the knobs win back on legacy, against legacy-ref (the same "
             "build without the revert):", "",
             "| backend | workload | legacy off | legacy on | legacy-ref off | upstream saving "
             "| knob saving | recovered |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for b, w, l_off, l_on, r_off, up, knob, pct, why in rows:
        rec = f"{pct:.0f}%" if pct is not None else f"n/a ({why})"
        lines.append(f"| {b} | {w} | {l_off:.0f} | {l_on:.0f} | {r_off:.0f} | {up:+.0f} "
                     f"| {knob:+.0f} | {rec} |")
    return "\n".join(lines)


def main(kernels, opt, rounds, iterations, out=None, backends=None, append=""):
    """`vfsfast-lab bench`: kernels are kernel.Kernel objects; the results
    are keyed by their names (recovery() looks for legacy's); append:
    kernel arguments the guests add (the table says so)."""
    disk = guest.ext4_image()
    # Instruction counts do not depend on host load: run kernels side by side.
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futs = {k.name: pool.submit(run, k, opt, rounds, iterations, disk, backends, append)
                for k in kernels}
        results = {k: f.result() for k, f in futs.items()}
    text = table(results, rounds, iterations, opt, [k.arch for k in kernels], append)
    if opt in ("fsnotify", "fsnotify_all"):
        text += "\n" + recovery_table(recovery(results))
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text + "\n")
    return 0


def demo(kernels):
    """The short version users run first: a few rounds per kernel."""
    return main(kernels, "readlink", 3, 5000)
