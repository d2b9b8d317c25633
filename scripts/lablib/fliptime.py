"""Load and flip time: what `insmod` with enable=auto and each knob's
write take, in guest time, on an idle icount guest.

In icount mode guest nanoseconds count instructions, and with sleep=off
the clock jumps over idle time to the next timer, so the figure is what
the writer waits: the grace periods a flip waits for are in it, at the
length the guest's RCU kthreads make them.  tests/guest/src/fliptime.c
times one finit_module() or one open/write/close.  Each timed operation
starts after 1 s of idle guest time, so that no grace period of the one
before is still running (RCU-tasks' kthread sleeps HZ/10 after each
grace period, and a synchronize_rcu_tasks() issued then waits that
out).
"""

import statistics

from . import build, guest, util, vm

MARK = "FLIPTIME "


def job_text(runs):
    """Per run: insmod enable=auto, then for each optimization it turned
    on, a disable and an enable; rmmod."""
    return f"""sleep 5
VF=/sys/kernel/vfsfast
for r in $(seq {runs}); do
	sleep 1
	out=$(fliptime load /lab/vfsfast.ko) || {{ echo "{MARK}error load $out"; exit 1; }}
	on=$(grep -l '^active' $VF/*/status | wc -l)
	echo "{MARK}load $r ${{out#ns }} $on"
	for s in $VF/*/status; do
		o=$(basename $(dirname $s))
		[ "$(head -n 1 $s)" = active ] || continue
		n=$(wc -l <$VF/$o/functions)
		b=$(head -n 1 $VF/$o/backend)
		sleep 1
		d=$(fliptime write $VF/$o/enabled 0) || {{ echo "{MARK}error $o $d"; exit 1; }}
		sleep 1
		e=$(fliptime write $VF/$o/enabled 1) || {{ echo "{MARK}error $o $e"; exit 1; }}
		[ "$(head -n 1 $s)" = active ] || {{ echo "{MARK}error $o not active again"; exit 1; }}
		echo "{MARK}flip $r $o $b $n ${{d#ns }} ${{e#ns }}"
	done
	rmmod vfsfast || exit 1
done
"""


def parse(output):
    """(loads [(ns, on)], flips {opt: (backend, targets, [dis], [en])})."""
    loads, flips = [], {}
    for line in output.splitlines():
        if not line.startswith(MARK):
            continue
        f = line[len(MARK):].split()
        if f[0] == "error":
            util.die(f"fliptime: guest error: {' '.join(f[1:])}")
        if f[0] == "load":
            loads.append((int(f[2]), int(f[3])))
        elif f[0] == "flip":
            opt, b, n, d, e = f[2], f[3], int(f[4]), int(f[5]), int(f[6])
            row = flips.setdefault(opt, (b, n, [], []))
            row[2].append(d)
            row[3].append(e)
    return loads, flips


def _ms(vals):
    return f"{statistics.median(vals) / 1e6:.1f}"


def _spread(vals):
    m = statistics.median(vals)
    return f"{(max(vals) - min(vals)) / m * 100:.1f}%" if m else "0%"


def begin_mark(kernel):
    return util.marks("fliptime", kernel)[0]


def end_mark(kernel):
    return util.marks("fliptime", kernel)[1]


def table(kernel, runs, loads, flips):
    lines = [begin_mark(kernel),
             f"**{kernel}** ({kernel.kver}); qemu TCG, 1 vCPU, `-icount shift=0,sleep=off` "
             f"(guest ns = instructions, idle time skipped to the next timer), "
             f"{vm.cost_model_label()}; idle guest; {runs} runs, medians in ms of guest "
             "time, spread (max−min)/median over the runs; each operation after 1 s idle.",
             "",
             "| operation | backend | targets | ms | spread |",
             "|---|---|---:|---:|---:|"]
    ns = [x for x, _ in loads]
    on = sorted({n for _, n in loads})
    lines.append(f"| insmod enable=auto ({'/'.join(map(str, on))} optimizations on) | | | "
                 f"{_ms(ns)} | {_spread(ns)} |")
    for opt in sorted(flips):
        b, n, d, e = flips[opt]
        lines.append(f"| `{opt}` enable | {b} | {n} | {_ms(e)} | {_spread(e)} |")
        lines.append(f"| `{opt}` disable | {b} | {n} | {_ms(d)} | {_spread(d)} |")
    lines.append(end_mark(kernel))
    return "\n".join(lines)


def update_doc(path, kernel, block):
    """Replace the kernel's block between its marks, or add it before
    `<!-- vfsfast-lab fliptime: new kernels -->`."""
    util.update_doc(path, "fliptime", [(kernel, block)])


def main(kernels, runs, doc=None):
    """`vfsfast-lab fliptime`: one kernel at a time."""
    rc = 0
    for k in kernels:
        k.ensure()
        ko, log = build.dkms_install(k)
        if not ko:
            util.die(f"{k}: module build failed:\n{log[-2000:]}")
        res = guest.run_job(k, job_text(runs), ko, icount=True, timeout=600)
        if not res.clean or res.rc:
            print(res.output[-3000:])
            util.die(f"{k}: fliptime guest failed: completed={res.completed} rc={res.rc} "
                     f"console={res.bad_lines[:3]}")
        loads, flips = parse(res.output)
        if len(loads) != runs:
            util.die(f"{k}: {len(loads)} loads timed, {runs} asked\n{res.output[-2000:]}")
        block = table(k, runs, loads, flips)
        print(block + "\n", flush=True)
        if doc:
            update_doc(doc, k, block)
    return rc
