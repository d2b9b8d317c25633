#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The docs must not lie about the tree they describe: README.md and
# Documentation/*.md are read by people who then type what they say.  A
# link to a moved section, a make target or lab option that was renamed,
# or a file that no longer exists sends them nowhere, and nothing else in
# the suite would notice.  So, from the repository root:
#
#   - every relative link resolves: the file exists, and a #anchor is the
#     GitHub slug of a heading in the target;
#   - every `make <target>` written in code is a target of the Makefile
#     (from make's own database, so included or generated rules count);
#   - every `scripts/vfsfast-lab <subcommand>` exists, and every --option
#     written before a bare `--` is one that subcommand's --help lists
#     (what follows `--` belongs to vfsfast-ab);
#   - every repo path written in backticks or code blocks exists;
#   - CI's command (.ci/run) is in README.md word for word;
#   - README.md stays short enough to read: under 260 lines;
#   - its first 100 lines hold Quick start, `make demo` and `make check`,
#     then What it gains: a row per optimization of scripts/lablib/opts.py,
#     each naming the command behind its figure.
#
# Diagnostics name file:line.  Last line: "N passed, N failed"; exit
# status 1 when anything failed.

import glob
import os
import re
import shlex
import subprocess
import sys
import unicodedata

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
README_MAX_LINES = 260
README_FIRST_SCREEN = 100
PATH_PREFIXES = ("module/", "scripts/", "tests/", "debian/", "Documentation/", "include/",
                 ".ci/")
SHELL_OPS = {"&&", "||", ";", "|", "&", ")", "(", ">", ">>", "<", "2>&1"}

n = passed = failed = 0


def check(problems, what):
    """One numbered result; problems are (file, line, message)."""
    global n, passed, failed
    n += 1
    # One line per diagnostic, whatever a tool printed.
    problems = sorted((f, line, re.sub(r"\s*\n\s*", " | ", msg.strip()))
                      for f, line, msg in problems)
    for f, line, msg in problems:
        print(f"# {f}:{line}: {msg}")
    if problems:
        failed += 1
        f, line, msg = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        print(f"not ok {n} - {what} # {f}:{line}: {msg}{more}")
    else:
        passed += 1
        print(f"ok {n} - {what}")


class Doc:
    """A markdown file split into prose (code spans blanked, so links and
    headings are found only where they render) and code (fenced blocks and
    inline spans), each with the line it starts on."""

    def __init__(self, path):
        self.path = path
        self.rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8") as f:
            self.text = f.read()
        self.lines = self.text.split("\n")
        self.code = []      # (line, text): one command line or inline span
        self.headings = []  # (line, text)
        prose = []
        fence = None
        block = []
        for i, line in enumerate(self.lines, 1):
            m = re.match(r"\s*(`{3,}|~{3,})", line)
            if fence is None and m:
                fence = m.group(1)
                prose.append("")
                continue
            if fence is not None:
                if line.strip().startswith(fence):
                    fence = None
                    self._block(block)
                    block = []
                else:
                    block.append((i, line))
                prose.append("")
                continue
            prose.append(line)
        self._block(block)
        self.prose = "\n".join(prose)

        def span(m):
            self.code.append((self.lineno(m.start()), re.sub(r"\s+", " ", m.group(2))))
            return re.sub(r"[^\n]", " ", m.group(0))
        # Code spans may wrap lines, never paragraphs.
        self.prose = re.sub(r"(`+)((?:(?!\n\s*\n).)+?)\1", span, self.prose, flags=re.S)
        for i, line in enumerate(self.prose.split("\n"), 1):
            m = re.match(r" {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if m:
                # Code in a heading was blanked above: take it from the source.
                src = re.match(r" {0,3}#{1,6}\s+(.*?)\s*#*\s*$", self.lines[i - 1])
                self.headings.append((i, src.group(1)))
        self.slugs = set()
        seen = {}
        for _, h in self.headings:
            s = slug(h)
            if s in seen:
                seen[s] += 1
                s = f"{s}-{seen[s]}"
            else:
                seen[s] = 0
            self.slugs.add(s)
        self.slugs.update(re.findall(r"""<a\s+(?:name|id)=["']([^"']+)["']""", self.text))

    def _block(self, block):
        """Commands of a code block: continuation lines joined; a comment is
        code too (it often names the command behind a make target)."""
        cur, start = "", None
        for i, line in block:
            if start is None:
                start = i
            if line.rstrip().endswith("\\"):
                cur += line.rstrip()[:-1] + " "
                continue
            cur += line
            parts = re.split(r"(?:^|\s)#", cur, maxsplit=1)
            self.code.append((start, parts[0]))
            if len(parts) > 1:
                self.code.append((start, parts[1]))
            cur, start = "", None
        if cur:
            self.code.append((start, cur))

    def lineno(self, pos):
        # Positions are in the prose, which keeps every line of the text.
        return self.prose.count("\n", 0, pos) + 1


def slug(heading):
    """GitHub's anchor for a heading: rendered text, lower case, punctuation
    dropped, spaces to hyphens."""
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    t = t.replace("`", "").lower()
    out = []
    for c in t:
        if c == " ":
            out.append("-")
        elif c in "-_" or c.isalnum() or unicodedata.category(c).startswith("M"):
            out.append(c)
    return "".join(out)


def tokens(text):
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def make_targets():
    """The Makefile's targets, from make's database (-p), running nothing
    (-q) and asking for a goal that does not exist so no recipe is chosen."""
    try:
        p = subprocess.run(["make", "-pRrq", "-f", "Makefile", ".vfsfast-docs-test-no-such-goal"],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           errors="replace")
    except FileNotFoundError:
        return set()
    db = p.stdout.split("\n# Files\n", 1)[-1].split("\n# Finished Make data base", 1)[0]
    targets = set()
    for para in db.split("\n\n"):
        lines = para.strip("\n").split("\n")
        if any(l.startswith("# Not a target") for l in lines):
            continue
        for l in lines:
            m = re.match(r"([^\s#:=][^:=]*?):(?!=)", l)
            if m:
                targets.update(m.group(1).split())
                break
    return targets


def lab_help(*args):
    p = subprocess.run([sys.executable, "-B", os.path.join(ROOT, "scripts/vfsfast-lab"),
                        *args, "--help"], cwd=ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, errors="replace")
    return p.returncode, p.stdout


def clean(tok):
    return tok.strip("`'\"(),;:.").removesuffix("'s")


docs = [Doc(os.path.join(ROOT, "README.md"))] + \
    [Doc(p) for p in sorted(glob.glob(os.path.join(ROOT, "Documentation/*.md")))]
by_path = {d.path: d for d in docs}

# Links.
nlinks = 0
bad_files, bad_anchors = [], []
for d in docs:
    for m in re.finditer(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)",
                         d.prose):
        url = m.group(1)
        if re.match(r"[a-z][a-z0-9+.-]*:", url, re.I):
            continue  # http:, https:, mailto:
        nlinks += 1
        line = d.lineno(m.start())
        target, _, anchor = url.partition("#")
        tpath = os.path.normpath(os.path.join(os.path.dirname(d.path), target)) if target \
            else d.path
        if not os.path.exists(tpath):
            bad_files.append((d.rel, line, f"link to {url}: {os.path.relpath(tpath, ROOT)} "
                              "does not exist"))
            continue
        if anchor:
            td = by_path.get(tpath)
            if td is None and tpath.endswith(".md"):
                td = by_path[tpath] = Doc(tpath)
            if td is None:
                bad_anchors.append((d.rel, line, f"link to {url}: #anchor into a file that "
                                    "is not markdown"))
            elif anchor not in td.slugs:
                near = sorted(s for s in td.slugs if s[:8] == anchor[:8])
                bad_anchors.append((d.rel, line, f"link to {url}: no heading in "
                                    f"{td.rel} has the slug #{anchor}"
                                    + (f" (did you mean #{near[0]}?)" if near else "")))
check(bad_files, f"{nlinks} relative links in {len(docs)} files point at files that exist")
check(bad_anchors, "every #anchor in them is a heading of its target (GitHub slugs)")

# make targets.
targets = make_targets()
bad, nmake = [], 0
if not targets:
    bad.append(("Makefile", 1, "make -pRrq listed no targets (is make installed?)"))
for d in docs if targets else []:
    for line, code in d.code:
        for m in re.finditer(r"(?:^|[\s;&|(])make((?:\s+\S+)*)", code):
            toks = tokens(m.group(1))
            skip = False
            for t in toks:
                if t in SHELL_OPS or t.startswith("#"):
                    break
                if skip:
                    skip = False
                    continue
                if t in ("-C", "-f", "-I", "-o", "-W"):
                    skip = True
                    continue
                if t.startswith("-") or "=" in t or t == "...":
                    continue
                t = clean(t)
                if not t:
                    continue
                nmake += 1
                if t not in targets:
                    bad.append((d.rel, line, f"`make {t}`: not a target of the Makefile"))
check(bad, f"{nmake} make targets named in code are targets of the Makefile")

# scripts/vfsfast-lab subcommands and options.
rc, top = lab_help()
m = re.search(r"\{([\w,-]+)\}", top)
subs = m.group(1).split(",") if rc == 0 and m else []
opts = {None: set(re.findall(r"(?<![\w-])--[a-z][\w-]*", top))}
choices = {}  # a subcommand's first positional, where --help lists its choices
problems = [] if subs else [("scripts/vfsfast-lab", 1, f"--help failed or lists no "
                             f"subcommands (rc={rc}): {top[-200:]}")]
for s in subs:
    rc, out = lab_help(s)
    if rc != 0:
        problems.append(("scripts/vfsfast-lab", 1, f"{s} --help: rc={rc}: {out[-200:]}"))
    opts[s] = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", out))
    m = re.search(r"\npositional arguments:\n  \{([\w,-]+)\}", out)
    if m:
        choices[s] = m.group(1).split(",")
check(problems, f"scripts/vfsfast-lab --help and <subcommand> --help run without root or "
      f"caches ({len(subs)} subcommands)")
bad_sub, bad_opt, nsub, nopt = [], [], 0, 0
for d in docs if subs else []:
    for line, code in d.code:
        for m in re.finditer(r"(?:^|(?<=[\s;&|(/]))vfsfast-lab(?![\w-])(.*)", code):
            toks = tokens(m.group(1))
            if not toks:
                continue
            sub = None
            first = clean(toks[0])
            if not toks[0].startswith("-"):
                if first in SHELL_OPS or not first:
                    continue
                nsub += 1
                if first not in subs:
                    bad_sub.append((d.rel, line, f"`vfsfast-lab {first}`: no such subcommand "
                                    f"(have: {' '.join(subs)})"))
                    continue
                sub, toks = first, toks[1:]
                if sub in choices and toks and not toks[0].startswith("-"):
                    nsub += 1
                    if clean(toks[0]) not in choices[sub]:
                        bad_sub.append((d.rel, line, f"`vfsfast-lab {sub} {clean(toks[0])}`: "
                                        f"{sub} takes one of {' '.join(choices[sub])}"))
            for t in toks:
                if t == "--" or t in SHELL_OPS or t.startswith("#"):
                    break
                if t.startswith("--"):
                    o = clean(t.split("=", 1)[0])
                    nopt += 1
                    if o not in opts.get(sub, set()):
                        bad_opt.append((d.rel, line, f"`vfsfast-lab {sub or ''} {o}`: "
                                        f"{sub or 'vfsfast-lab'} --help lists no {o}"))
if not subs:
    bad_sub = bad_opt = [("scripts/vfsfast-lab", 1, "not checked: --help failed (above)")]
check(bad_sub, f"{nsub} vfsfast-lab subcommands (and their choices, such as bench's "
      "optimization) named in code exist")
check(bad_opt, f"{nopt} vfsfast-lab --options written after them are in that subcommand's "
      "--help")

# Repo paths.
bad, npath = [], 0
for d in docs:
    for line, code in d.code:
        for t in code.split():
            t = clean(t).removeprefix("./")
            if not t.startswith(PATH_PREFIXES) or re.search(r"[<>$]", t):
                continue
            npath += 1
            if not glob.glob(os.path.join(ROOT, t)):
                bad.append((d.rel, line, f"`{t}` does not exist in the tree"))
check(bad, f"{npath} repo paths written in code exist")

# CI's command, word for word.
readme = docs[0]
with open(os.path.join(ROOT, ".ci/run")) as f:
    ci = [l.strip() for l in f if l.startswith("make ")]
bad = [(".ci/run", 1, "no make command found")] if not ci else []
for c in ci:
    if not any(c in code for _, code in readme.code):
        bad.append((readme.rel, 1, f".ci/run's `{c}` is not in README.md's code verbatim"))
check(bad, "CI's command (.ci/run) is in README.md verbatim")

# README length.
nl = readme.text.count("\n")
check([] if nl < README_MAX_LINES else
      [(readme.rel, nl, f"{nl} lines; the README is a first screen and a map, keep it under "
        f"{README_MAX_LINES} and move depth to Documentation/")],
      f"README.md is {nl} lines (under {README_MAX_LINES})")

# README's first screen: what it is, how to install and use it, the lab's
# two commands, then what it gains, one row per optimization the lab knows
# (scripts/lablib/opts.py), each with the command behind its figure.
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from lablib import opts  # noqa: E402

bad = []
heads = {h: i for i, h in readme.headings}
first = {}
for h in ("Quick start", "What it gains"):
    if h not in heads:
        bad.append((readme.rel, 1, f"no '## {h}' heading"))
    first[h] = heads.get(h, 10**6)
for cmd in ("make demo", "make check"):
    at = [line for line, code in readme.code if code.strip().startswith(cmd)]
    if not at:
        bad.append((readme.rel, 1, f"`{cmd}` is not in README.md's code"))
    elif not first["Quick start"] < at[0] < first["What it gains"]:
        bad.append((readme.rel, at[0], f"`{cmd}` is not between Quick start and What it gains"))
rows, gains_end = {}, 0
start = first.get("What it gains", 10**6)
for i, line in enumerate(readme.lines[start:], start + 1):
    if line.startswith("## "):
        break
    cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.startswith("|") else []
    if not cells or set(cells[0]) <= set("-: "):
        continue
    gains_end = i
    for name in re.findall(r"`(\w+)`", cells[0]):
        rows[name] = (i, cells)
for o in opts.OPTS:
    if o.name not in rows:
        bad.append((readme.rel, first.get("What it gains", 1),
                    f"What it gains has no row for `{o.name}`"))
for name, (i, cells) in sorted(rows.items()):
    if name in opts.BY_NAME and not re.search(r"`(?:bench|run|real|make) ", cells[-1]):
        bad.append((readme.rel, i, f"the `{name}` row names no command in its last cell"))
if gains_end > README_FIRST_SCREEN:
    bad.append((readme.rel, gains_end, f"What it gains' table ends at line {gains_end}, "
                f"past the first {README_FIRST_SCREEN} lines"))
check(bad, f"README's first {README_FIRST_SCREEN} lines: Quick start, make demo and make check, "
      f"then What it gains with a row and a command per optimization ({len(opts.OPTS)})")

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
