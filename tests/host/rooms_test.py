#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The rooms check of `vfsfast-lab style` (scripts/lablib/rooms.py) on
# synthetic module trees: a tree whose rooms call downwards passes; a
# call up the table, a cycle (the one hook.c and yield.c had), a file in
# no room and a room naming no file fail; comments, strings, #include
# lines and a header's declarations are not calls, a function's address
# handed on is, a macro's body counts where it is, a static function of
# the same name shadows another room's; the compile probes are left out.
# Then the real tree passes.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import shutil
import sys
import tempfile

import hostktap  # tests/host/, beside this file

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
sys.path.insert(0, os.path.join(REPO, "scripts"))
from lablib import rooms  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check

TABLE = """/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rooms, lowest first.
 *
 *   state     state.c engine.h        states
 *   arch      arch/<arch>/site.c      sites
 *   attach    attach.c attach_more.c
 *             attach_last.c           attaching
 *   yield     yield.c                 livepatches
 */
static inline int vfsfast_nfuncs(int n)
{
	return n + 1;
}

int vfsfast_attach(void);
void vfsfast_yield(void);
"""

BASE = {
    "module/engine.h": TABLE,
    "module/state.c": "int vfsfast_set(int s)\n{\n\treturn s;\n}\n",
    "module/arch/x86/site.c": "bool vfsfast_site_live(unsigned long ip)\n{\n\treturn ip;\n}\n",
    "module/arch/arm64/site.c": "bool vfsfast_site_live(unsigned long ip)\n{\n\treturn !ip;\n}\n",
    "module/attach.c": ("#include \"engine.h\"\n"
                        "/* vfsfast_yield() is above: this comment is no call. */\n"
                        "static const char *s = \"vfsfast_yield()\";\n"
                        "int vfsfast_attach(void)\n{\n"
                        "\treturn vfsfast_set(vfsfast_nfuncs(1)) + vfsfast_site_live(0);\n}\n"),
    "module/attach_more.c": "static int helper(void)\n{\n\treturn vfsfast_attach();\n}\n",
    "module/attach_last.c": "int vfsfast_attach_last(void)\n{\n\treturn 0;\n}\n",
    "module/yield.c": ("static int (*cb)(void) = vfsfast_attach;\n"
                       "void vfsfast_yield(void)\n{\n\tvfsfast_set(0);\n}\n"),
    "module/compat/probes/probe.c": "int probe(void)\n{\n\treturn vfsfast_yield();\n}\n",
}


def tree(changes=None, drop=()):
    d = tempfile.mkdtemp(prefix="vfsfast-rooms-")
    files = dict(BASE)
    files.update(changes or {})
    for path, text in files.items():
        if path in drop:
            continue
        os.makedirs(os.path.join(d, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(d, path), "w") as f:
            f.write(text)
    return d


def run(changes=None, drop=()):
    d = tree(changes, drop)
    try:
        return rooms.check(d)
    finally:
        shutil.rmtree(d)


problems, graph, table = run()
check(not problems, "a tree whose rooms call downwards passes", "; ".join(problems))
check([r for r, _ in table] == ["state", "arch", "attach", "yield"],
      "the table's rooms, lowest first, with a continuation line",
      str(table))
check(table[2][1] == ["attach.c", "attach_more.c", "attach_last.c"],
      "a continuation line adds its files to the room above", str(table[2]))
check(set(graph["attach"]) == {"state", "arch"},
      "attach calls state (a header's inline, a .c's function) and arch (every <arch>)",
      str(graph["attach"]))
check(set(graph["yield"]) == {"state", "attach"},
      "a function's address handed on is a call", str(graph["yield"]))
check(graph["state"] == {},
      "a header's declarations and a room's comments and strings call nothing",
      str(graph["state"]))

problems, _, _ = run({"module/state.c": BASE["module/state.c"] +
                      "void vfsfast_up(void)\n{\n\tvfsfast_attach_last();\n}\n"})
check(any("state calls up into attach" in p and "vfsfast_attach_last" in p for p in problems),
      "a call up the table fails, naming the file and the function", "; ".join(problems))
check(any(p == "cycle between rooms: attach -> state -> attach" for p in problems),
      "a cycle is printed as a -> b -> a", "; ".join(problems))

# hook.c and yield.c as they were: each names the other's function.
problems, _, _ = run({"module/attach.c": BASE["module/attach.c"] +
                      "void vfsfast_holder(void)\n{\n\tvfsfast_yield();\n}\n"})
check(any("cycle between rooms: attach -> yield -> attach" == p for p in problems),
      "hook.c and yield.c calling each other is a cycle", "; ".join(problems))

problems, _, _ = run({"module/state.c": BASE["module/state.c"] +
                      "#define vfsfast_park() vfsfast_yield()\n"})
check(any("state calls up into yield" in p for p in problems),
      "a macro's body naming a function is a call where the macro is", "; ".join(problems))

problems, _, _ = run({"module/state.c": BASE["module/state.c"] +
                      "static void vfsfast_yield(void)\n{\n}\n"
                      "void vfsfast_s(void)\n{\n\tvfsfast_yield();\n}\n"})
check(not problems, "a static function of the same name is the file's own",
      "; ".join(problems))

problems, _, _ = run({"module/new.c": "int vfsfast_new(void)\n{\n\treturn 0;\n}\n"})
check(any(p.startswith("new.c is in no room") for p in problems),
      "a file in no room fails", "; ".join(problems))

problems, _, _ = run(drop=("module/attach_last.c",))
check(any("attach_last.c names no file" in p for p in problems),
      "a room naming a file that is not there fails", "; ".join(problems))

problems, _, _ = run({"module/yield.c": BASE["module/yield.c"] +
                      "int vfsfast_set(int s)\n{\n\treturn -s;\n}\n"})
check(any("vfsfast_set is defined in rooms state" in p for p in problems),
      "one function defined in two rooms fails", "; ".join(problems))

problems, _, _ = run(drop=("module/engine.h",))
check(problems == ["module/engine.h: missing"], "a tree without the table fails",
      "; ".join(problems))

ok, problems, summary = rooms.rooms_check(REPO)
check(ok, f"the tree's module/ keeps its rooms' layering ({summary})", "; ".join(problems[:5]))

RESULTS.finish()
