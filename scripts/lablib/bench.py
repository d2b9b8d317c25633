"""Benchmarks in the lab: instructions per operation, knob off vs on.

Runs in icount mode (one vCPU, -icount shift=0,sleep=off), where guest
nanoseconds count executed instructions, so figures reproduce to about
0.1% and a difference of a few instructions per call is visible.
"""

import concurrent.futures
import os
import re
import statistics

from . import build, debian, guest, opts, util

MODES = ["off", "on", "passthrough"]

# What each benchmark measures: the knobs it switches together (the
# guest job's workload set, tests/guest/bench.sh, is theirs: opts.OPTS),
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
}


def bench_job(opt):
    """(workload set, knobs) of a benchmark, as bench.sh reads them."""
    knobs = BENCHES[opt][0]
    return opts.workloads(knobs), " ".join(knobs)


def run(kernel, opt, rounds, iterations, disk, backends=None):
    """One kernel's benchmark (kernel: a kernel.Kernel); returns (data,
    status line)."""
    kernel.ensure()
    ko, log = build.dkms_install(kernel)
    if not ko:
        util.die(f"{kernel}: module build failed:\n{log[-2000:]}")
    job = open(os.path.join(util.repo_dir(), "tests/guest/bench.sh")).read()
    offered = build.expected_backends(kernel)
    backends = [b for b in (backends or offered) if b in offered]
    workloads, knobs = bench_job(opt)
    util.log(f"{kernel}: {opt} benchmark, backends {' '.join(backends)}, "
             f"{rounds} rounds x {iterations} calls")
    res = guest.run_job(kernel, job, ko, disk=disk, icount=True,
                        timeout=900 * max(1, len(backends)),
                        env={"BENCH_ROUNDS": str(rounds),
                             "BENCH_ITERATIONS": str(iterations),
                             "BENCH_BACKENDS": " ".join(backends),
                             "BENCH_OPT": workloads, "BENCH_KNOBS": knobs},
                        extra_files=debian.chroot_programs(kernel, ["/usr/bin/hackbench"])
                        if workloads == "io" else None)
    if not res.clean:
        util.die(f"{kernel}: benchmark guest failed: completed={res.completed} "
                 f"console={res.bad_lines[:3]}\n{res.output[-2000:]}")
    data = {}
    status = ""
    for line in res.output.splitlines():
        m = re.match(r"R (\d+) (\S+) (\S+) (\S+) ([0-9.]+)$", line)
        if m:
            data.setdefault((m.group(2), m.group(4), m.group(3)), []).append(float(m.group(5)))
        elif line.startswith("STATUS "):
            status = line[len("STATUS "):]
        elif re.match(r"R \d+ .* ERR$", line):
            util.die(f"{kernel}: a measurement failed: {line}")
        elif line.startswith("BACKEND "):
            asked, used = line.split()[1:3]
            if asked != used and used != "unsupportednone":
                util.die(f"{kernel}: backend {asked} asked, {used} used")
    return data, status


def summarize(vals):
    med = statistics.median(vals)
    spread = (max(vals) - min(vals)) / med * 100 if med else 0.0
    return med, spread


def _workload_key(w):
    kind, _, size = w.partition("-")
    return (kind, int(size) if size.isdigit() else 0)


def table(results, rounds, iterations, opt="readlink"):
    lines = [
        f"{BENCHES[opt][1]} (qemu TCG, 1 vCPU, -icount shift=0; "
        f"median of {rounds} interleaved rounds of {iterations} calls; spread = "
        f"(max-min)/median over the rounds)",
        "",
        "| kernel | upstream | backend | workload | off | on | delta | passthrough | redirect cost | spread off/on/pt |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    order = {"jmp": 0, "direct": 1, "ftrace": 2}
    for kernel, (data, status) in results.items():
        upstream = status.split()[-1] if status else "?"
        backends = sorted({b for b, _, _ in data}, key=lambda b: order.get(b, 9))
        workloads = sorted({w for _, w, _ in data}, key=_workload_key)
        for b in backends:
            for w in workloads:
                off, s_off = summarize(data[(b, w, "off")])
                if (b, w, "on") not in data:
                    lines.append(f"| {kernel} | {upstream} | {b} | {w} | {off:.0f} | unsupported "
                                 f"| | | | {s_off:.2f}% |")
                    continue
                on, s_on = summarize(data[(b, w, "on")])
                pt, s_pt = summarize(data[(b, w, "passthrough")])
                delta = (on - off) / off * 100
                lines.append(
                    f"| {kernel} | {upstream} | {b} | {w} | {off:.0f} | {on:.0f} | {delta:+.2f}% | "
                    f"{pt:.0f} | {pt - off:+.0f} | {s_off:.2f}%/{s_on:.2f}%/{s_pt:.2f}% |")
    lines += ["", "delta: on vs off (negative = fewer instructions). passthrough: the "
              "hook sends each call straight back into the stock body, so "
              "redirect cost = passthrough - off is what one trip through the "
              "backend costs."]
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
    Returns rows (backend, workload, l_off, l_on, r_off, up, knob, pct,
    why); pct is None, and why says which, where upstream saves under 0.5%
    or less than the rounds of either "off" figure spread over (max - min):
    the ratio of two numbers within the noise would mean nothing."""
    if not all(k in results for k in PAIR):
        return []
    (ldata, _), (rdata, _) = results[PAIR[0]], results[PAIR[1]]
    rows = []
    for (b, w, mode) in sorted(ldata):
        if mode != "off" or (b, w, "on") not in ldata or (b, w, "off") not in rdata:
            continue
        l_rounds, r_rounds = ldata[(b, w, "off")], rdata[(b, w, "off")]
        l_off = summarize(l_rounds)[0]
        l_on = summarize(ldata[(b, w, "on")])[0]
        r_off = summarize(r_rounds)[0]
        up, knob = l_off - r_off, l_off - l_on
        noise = max(max(l_rounds) - min(l_rounds), max(r_rounds) - min(r_rounds))
        pct, why = None, None
        if up <= 0.005 * l_off:
            why = "upstream saves < 0.5%"
        elif up <= noise:
            why = f"upstream saving within the rounds' spread of {noise:.0f}"
        else:
            pct = knob / up * 100
        rows.append((b, w, l_off, l_on, r_off, up, knob, pct, why))
    return rows


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


def main(kernels, opt, rounds, iterations, out=None, backends=None):
    """`vfsfast-lab bench`: kernels are kernel.Kernel objects; the results
    are keyed by their names (recovery() looks for legacy's)."""
    disk = guest.ext4_image()
    # Instruction counts do not depend on host load: run kernels side by side.
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        futs = {k.name: pool.submit(run, k, opt, rounds, iterations, disk, backends)
                for k in kernels}
        results = {k: f.result() for k, f in futs.items()}
    text = table(results, rounds, iterations, opt)
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
