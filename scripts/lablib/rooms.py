"""`vfsfast-lab style`'s layering check: the module's rooms call downwards.

module/engine.h lists the module's rooms, lowest first, each with its
files (relative to module/; a glob, or arch/<arch>/ for every
architecture's directory):

     *   state     state.c engine.h        states and their reasons
     *   backend   backend.c backend_direct.c
     *             arch/<arch>/site.c      the redirects

A room calls only the rooms listed before it.  The check reads every
module/**/*.c but the compile probes (and the headers a room lists), without comments, strings
or #include lines, finds the functions each defines at file level (those
a file's room offers the others: not static, or static inline in a
header the room lists) and every place another room names one (a call,
or its address handed on), and fails on a file in no room, a room
listed with no file, a call up the list, and a cycle between rooms,
printed as "a -> b -> a".  Calls through a pointer an upper room gave
(->setup, a backend's ops, a notifier) and shared data (vfsfast_opts,
vfsfast_mutex) are not calls between rooms.

Pure: a tree in, problems out (tests/host/rooms_test.py).
"""

import fnmatch
import glob
import os
import re

TABLE_HEADER = "module/engine.h"
COMPAT_PROBES = "compat/probes/"
# A line of the table: " *   room   file.c file.h   what it is", or a
# continuation line without the room.
_ROW = re.compile(r"^ \*   (?:([a-z][a-z0-9_]*)|  ) +(\S+\.[ch](?: +\S+\.[ch])*)(?:  +(.*))?$")
_IDENT = re.compile(r"[A-Za-z_]\w*")
# A file-level definition's head ends with its parameter list and,
# perhaps, attributes; what follows is "{".
_DEF_HEAD = re.compile(r"\b([A-Za-z_]\w*)\s*\(([^()]|\([^()]*\))*\)\s*"
                       r"(?:__\w+(?:\s*\(([^()]|\([^()]*\))*\))?\s*)*$")
_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "typeof",
             "__attribute__", "defined"}


def parse_table(text):
    """[(room, [file patterns])], lowest first, from engine.h's text."""
    rooms = []
    for line in text.splitlines():
        m = _ROW.match(line)
        if not m:
            continue
        name, files = m.group(1), m.group(2).split()
        if name:
            rooms.append((name, files))
        elif rooms:
            rooms[-1][1].extend(files)
    return rooms


def strip_c(text):
    """C text without comments, string and character literals (each left
    as an empty literal) and #include lines; a #define's body stays, so
    that a macro naming a function counts where it is defined."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j) or " ")
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    code = "".join(out).replace("\\\n", " ")
    return re.sub(r"(?m)^\s*#\s*include\b.*$", "", code)


def definitions(code):
    """{name: static} of the functions defined at file level in code
    (stripped); static is True for a static one (static inline too)."""
    defs = {}
    depth = 0
    start = 0  # where the current file-level declaration began
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                head = code[start:i]
                # A directive line before the head is not part of it.
                head = re.sub(r"(?m)^\s*#.*$", "", head)
                m = _DEF_HEAD.search(head)
                if m and "=" not in head[:m.start()] and m.group(1) not in _KEYWORDS:
                    before = head[:m.start()]
                    defs[m.group(1)] = defs.get(m.group(1), True) and \
                        bool(re.search(r"\bstatic\b", before))
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            start = i + 1
        elif c == "\n" and depth == 0 and code[start:i].lstrip().startswith("#"):
            start = i + 1
    return defs


def names(code, header=False):
    """Every identifier in code (stripped); in a header's only those in
    its inline functions' bodies and its macros: a declaration calls
    nothing."""
    if header:
        depth, kept = 0, []
        for line in code.splitlines():
            if depth == 0 and line.lstrip().startswith("#define"):
                kept.append(line)
            for c in line:
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                elif depth > 0:
                    kept.append(c)
            kept.append("\n")
        code = "".join(kept)
    return set(_IDENT.findall(code))


def room_files(module_dir, rooms):
    """({relative path: room}, problems): each file of module/ (the .c
    files, and the headers a room lists) in its room."""
    problems = []
    of = {}
    every = sorted(os.path.relpath(f, module_dir)
                   for f in glob.glob(os.path.join(module_dir, "**/*.c"), recursive=True))
    # The compile probes are built alone, never linked into the module.
    every = [f for f in every if not f.startswith(COMPAT_PROBES)]
    for room, patterns in rooms:
        for pat in patterns:
            pat = pat.replace("<arch>", "*")
            hits = [f for f in every if fnmatch.fnmatchcase(f, pat)]
            if not hits and pat.endswith(".h") and os.path.exists(os.path.join(module_dir, pat)):
                hits = [pat]
            if not hits:
                problems.append(f"room {room}: {pat} names no file in module/")
            for f in hits:
                if f in of and of[f] != room:
                    problems.append(f"{f} is in two rooms, {of[f]} and {room}")
                of.setdefault(f, room)
    for f in every:
        if f not in of:
            problems.append(f"{f} is in no room of {TABLE_HEADER}: add it to the table")
    return of, problems


def find_cycle(graph):
    """One cycle of graph ({node: {node}}) as a list of nodes, first ==
    last, or None."""
    state = {}
    path = []

    def visit(n):
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                c = visit(m)
                if c:
                    return c
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            c = visit(n)
            if c:
                return c
    return None


def check(repo):
    """(problems, graph, rooms) for the tree at repo: graph is {room:
    {room it calls: [(file, function), ...]}}."""
    module_dir = os.path.join(repo, "module")
    table = os.path.join(repo, TABLE_HEADER)
    if not os.path.exists(table):
        return [f"{TABLE_HEADER}: missing"], {}, []
    with open(table) as f:
        rooms = parse_table(f.read())
    if not rooms:
        return [f"{TABLE_HEADER}: no table of rooms"], {}, []
    rank = {room: i for i, (room, _) in enumerate(rooms)}
    of, problems = room_files(module_dir, rooms)
    code = {}
    for f in of:
        with open(os.path.join(module_dir, f), errors="replace") as fh:
            code[f] = strip_c(fh.read())
    # What each room offers: a header's static inlines, a .c's non-static.
    offered = {}
    local = {}
    for f, text in code.items():
        defs = definitions(text)
        local[f] = {n for n, static in defs.items() if static}
        for n, static in defs.items():
            if static != f.endswith(".h"):
                continue
            if n in offered and offered[n][0] != of[f]:
                problems.append(f"{n} is defined in rooms {offered[n][0]} ({offered[n][1]}) "
                                f"and {of[f]} ({f})")
            offered.setdefault(n, (of[f], f))
    graph = {room: {} for room, _ in rooms}
    for f, text in sorted(code.items()):
        room = of[f]
        for n in sorted(names(text, f.endswith(".h")) - local[f]):
            if n not in offered or offered[n][0] == room:
                continue
            graph[room].setdefault(offered[n][0], []).append((f, n))
    for room, calls in graph.items():
        for to, where in sorted(calls.items()):
            if rank[to] > rank[room]:
                f, n = where[0]
                problems.append(f"{room} calls up into {to}: {f} names {n}"
                                f" ({offered[n][1]})")
    cycle = find_cycle({r: set(c) for r, c in graph.items()})
    if cycle:
        problems.append("cycle between rooms: " + " -> ".join(cycle))
    return problems, graph, rooms


def rooms_check(repo=None):
    """(ok, problems, summary) for `vfsfast-lab style` and the suite."""
    from . import util
    repo = repo or util.repo_dir()
    problems, graph, rooms = check(repo)
    edges = sum(len(c) for c in graph.values())
    return not problems, problems, f"{len(rooms)} rooms, {edges} calls between them, all down"
