#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The lab's modules (scripts/lablib/*.py) import one another without a
# cycle.  A cycle works only as long as nobody touches a name at import
# time, and hides behind imports inside functions (debian.py and legacy.py
# used to import each other that way): the graph here is built with ast
# from every import statement of every module, at any depth, function
# bodies included.  Every module must also import on its own.
#
#   python3 tests/host/lablib_imports_test.py [LABLIB_DIR]
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.
# A cycle is printed as "a -> b -> a".

import ast
import importlib
import importlib.util
import os
import sys

import hostktap  # tests/host/, beside this file

# The rooms check's cycle finder (scripts/lablib/rooms.py), loaded by its
# path so that this tree's package is not imported before the test's.
_spec = importlib.util.spec_from_file_location("vfsfast_rooms", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "../../scripts/lablib/rooms.py"))
_rooms = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_rooms)
find_cycle = _rooms.find_cycle

LABLIB = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "../../scripts/lablib"))
PACKAGE = os.path.basename(LABLIB)

RESULTS = hostktap.Results()
check = RESULTS.check


def modules():
    return sorted(f[:-3] for f in os.listdir(LABLIB)
                  if f.endswith(".py") and f != "__init__.py")


def imports_of(name, known):
    """The package's modules that module name imports, anywhere in it:
    `from . import a, b`, `from .a import x`, `from lablib import a`,
    `from lablib.a import x`, `import lablib.a`."""
    with open(os.path.join(LABLIB, name + ".py")) as f:
        tree = ast.parse(f.read(), filename=name + ".py")
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module is None or \
                    node.level == 0 and node.module == PACKAGE:
                out.update(a.name for a in node.names)
            elif node.level == 1:
                out.add(node.module.split(".")[0])
            elif node.level == 0 and node.module and node.module.startswith(PACKAGE + "."):
                out.add(node.module.split(".")[1])
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(PACKAGE + "."):
                    out.add(a.name.split(".")[1])
    return sorted(m for m in out if m in known and m != name)


names = modules()
graph = {n: imports_of(n, set(names)) for n in names}
for n in names:
    print(f"# {n} -> {' '.join(graph[n]) or '(nothing of the lab)'}")
cycle = find_cycle(graph)
check(cycle is None, f"{PACKAGE}: the import graph of {len(names)} modules has no cycle",
      "cycle: " + " -> ".join(cycle or []))

sys.path.insert(0, os.path.dirname(LABLIB))
for n in names:
    try:
        importlib.import_module(f"{PACKAGE}.{n}")
        check(True, f"{PACKAGE}.{n} imports")
    except Exception as e:  # noqa: BLE001 (any failure is the test's answer)
        check(False, f"{PACKAGE}.{n} imports", f"{type(e).__name__}: {e}")

RESULTS.finish()
