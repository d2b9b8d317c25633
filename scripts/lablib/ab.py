"""vfsfast-ab in a lab guest: `vfsfast-lab ab --kernel K [--icount|--vcpus N] -- ARGS`.

Boots the kernel with the module loaded, runs scripts/vfsfast-ab ARGS in
the guest exactly as on a host, prints its report, and copies its results
folder back: the guest prints each file between markers on its output
port and the host writes them under --out.
"""

import os
import re
import shlex
import time

from . import build, debian, guest, util, vm

FILE_MARK = "VFSFAST-AB-FILE "
END_MARK = "VFSFAST-AB-END"
RC_MARK = "VFSFAST-AB-RC "


def job_text(args, load_args, lab_desc):
    cmd = " ".join(shlex.quote(a) for a in args)
    return f"""load_vfsfast {load_args}
rm -rf /tmp/abres
VFSFAST_AB_LAB={shlex.quote(lab_desc)} vfsfast-ab -o /tmp/abres {cmd}
echo "{RC_MARK}$?"
for f in /tmp/abres/*; do
	[ -f "$f" ] || continue
	echo "{FILE_MARK}${{f##*/}}"
	awk '{{ print }}' "$f"
	echo "{END_MARK}"
done
"""


def split_output(text):
    """(report text without the file blocks, {name: content}, rc or None)."""
    files, report, rc = {}, [], None
    name, buf = None, []
    for line in text.splitlines():
        if name is not None:
            if line == END_MARK:
                files[name] = "\n".join(buf) + ("\n" if buf else "")
                name, buf = None, []
            else:
                buf.append(line)
        elif line.startswith(FILE_MARK):
            name = os.path.basename(line[len(FILE_MARK):].strip())
        elif line.startswith(RC_MARK):
            rc = int(line[len(RC_MARK):])
        elif not line.startswith("VFSFAST-JOB-DONE"):
            report.append(line)
    return "\n".join(report), files, rc


def checked_output(kernel, res, rc_mark, what):
    """A guest job's report and files, after dying if the guest failed or
    any of its runs (a line "<rc_mark>... <rc>") ended non-zero."""
    report, files, _ = split_output(res.output)
    if not res.clean:
        util.die(f"{kernel}: {what} guest failed: completed={res.completed} "
                 f"timed_out={res.timed_out} console={res.bad_lines[:3]}\n{res.output[-3000:]}")
    for line in report.splitlines():
        if line.startswith(rc_mark) and not line.endswith(" 0"):
            util.die(f"{kernel}: vfsfast-ab failed: {line[len(rc_mark):]}\n{report[-3000:]}")
    return report, files


def progress(chunk):
    """vfsfast-ab's progress lines, live, while the guest runs."""
    for line in chunk.splitlines():
        if line.startswith("vfsfast-ab: pair ") or line.startswith("vfsfast-ab: done"):
            util.log(line)


def main(kernel, args, icount=False, vcpus=1, out=None, load_args="", disk=False,
         timeout=900):
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        util.die("ab: no vfsfast-ab arguments; e.g. vfsfast-lab ab --kernel 6.1 --icount "
                 "-- readlink -- readlink-tmpfs-100")
    kernel.ensure()
    ko, log = build.dkms_install(kernel)
    if not ko:
        util.die(f"{kernel}: module build failed:\n{log[-2000:]}")
    smp = 1 if icount else vcpus
    mode = (f"qemu TCG icount (guest ns = instructions), {vm.cost_model_label()}, 1 vCPU"
            if icount else
            f"qemu TCG, {smp} vCPU{'s' if smp > 1 else ''}, wall time")
    lab_desc = f"kernel {kernel} ({kernel.kver}), {mode}"
    util.log(f"{kernel}: vfsfast-ab {' '.join(args)} ({mode})")
    res = guest.run_job(kernel, job_text(args, load_args, lab_desc), ko,
                        disk=guest.ext4_image() if disk else None, smp=smp,
                        icount=icount, timeout=timeout, on_output=progress,
                        extra_files=debian.chroot_programs(kernel, ["/usr/bin/hackbench"]))
    report, files, rc = split_output(res.output)
    print(report.rstrip("\n"))
    if files:
        out = out or os.path.join("vfsfast-ab-results", f"lab-{kernel}-"
                                  f"{'icount' if icount else f'{smp}cpu'}-"
                                  f"{time.strftime('%Y%m%d-%H%M%S')}")
        os.makedirs(out, exist_ok=True)
        for name, content in files.items():
            if not re.match(r"^[A-Za-z0-9._-]+$", name):
                util.die(f"ab: odd file name from the guest: {name!r}")
            with open(os.path.join(out, name), "w") as f:
                f.write(content)
        print(f"lab: results copied to {out}/ ({' '.join(sorted(files))})")
    for line in res.bad_lines:
        print(f"CONSOLE: {line}")
    if not res.clean:
        util.log(f"{kernel}: guest did not finish cleanly: completed={res.completed} "
                 f"timed_out={res.timed_out}")
        return 1
    if rc is None:
        util.log(f"{kernel}: vfsfast-ab did not report an exit status")
        return 1
    return rc
