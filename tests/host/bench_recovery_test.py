#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# The "recovered" figure of `vfsfast-lab bench` (the share of upstream's
# saving that the knobs win back on the legacy kernel), computed by
# scripts/vfsfast-ab-stats.awk (recovery=1) through bench.recovery(), which
# only hands it the rounds and lays out the rows, on synthetic rounds
# with answers worked out by hand: medians, not means; the 0.5% noise
# floor and the rounds' spread; workloads or kernels missing from one
# side; and the table text.
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

import os
import sys

import hostktap  # tests/host/, beside this file

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../scripts"))
from lablib import bench  # noqa: E402

RESULTS = hostktap.Results()
check = RESULTS.check


# legacy: write off 1000 (median of 995/1000/1060, mean 1018.3), on 910;
# legacy-ref: 900.
# upstream saves 100, the knobs 90: 90%.
legacy = {("direct", "write", "off"): [995, 1000, 1060],
          ("direct", "write", "on"): [910, 905, 920],
          ("direct", "write", "passthrough"): [1010, 1010, 1010],
          # upstream saves 2 of 1000 (0.2%): under the floor.
          ("direct", "watched", "off"): [1000, 1000, 1000],
          ("direct", "watched", "on"): [1040, 1040, 1040],
          # the knobs cost more than upstream saves: negative share.
          ("direct", "pipe", "off"): [2000, 2000, 2000],
          ("direct", "pipe", "on"): [2030, 2030, 2030],
          # no "on" (unsupported): no row.
          ("direct", "socket", "off"): [3000, 3000, 3000],
          # upstream saves 30 of 3800 (0.8%), but legacy's rounds span 60.
          ("direct", "hackbench", "off"): [3780, 3800, 3840],
          ("direct", "hackbench", "on"): [3750, 3750, 3750],
          # saves 40 of 3800: more than legacy's 20 and legacy-ref's 30.
          ("direct", "hackbench2", "off"): [3790, 3800, 3810],
          ("direct", "hackbench2", "on"): [3780, 3780, 3780],
          # saves 40 of 3800, but legacy-ref's rounds span 50.
          ("direct", "hackbench3", "off"): [3800, 3800, 3800],
          ("direct", "hackbench3", "on"): [3780, 3780, 3780],
          # legacy-ref lacks it: no row.
          ("direct", "eventfd", "off"): [1500, 1500, 1500],
          ("direct", "eventfd", "on"): [1400, 1400, 1400]}
ref = {("direct", "write", "off"): [899, 900, 901],
       ("direct", "watched", "off"): [998, 998, 998],
       ("direct", "pipe", "off"): [1900, 1900, 1900],
       ("direct", "socket", "off"): [2900, 2900, 2900],
       ("direct", "hackbench", "off"): [3770, 3770, 3770],
       ("direct", "hackbench2", "off"): [3750, 3760, 3780],
       ("direct", "hackbench3", "off"): [3740, 3760, 3790]}

rows = bench.recovery({"legacy": (legacy, "s"), "legacy-ref": (ref, "s")})
by = {w: r for _, w, *r in rows}
check(sorted(by) == ["hackbench", "hackbench2", "hackbench3", "pipe", "watched",
                    "write"],
      "rows only where legacy on/off and "
      "legacy-ref off all exist", sorted(by))
w = by.get("write")
check(w is not None and w[:5] == [1000, 910, 900, 100, 90], "medians and savings of write",
      w)
check(w is not None and abs(w[5] - 90.0) < 1e-9, "write: 90 of 100 recovered", w)
check(by.get("watched", [None] * 6)[5] is None, "an upstream saving under 0.5% gives no "
      "ratio", by.get("watched"))
h = by.get("hackbench", [None] * 7)
check(h[5] is None and "spread of 60" in (h[6] or ""), "a saving within legacy's "
      "rounds' spread gives no ratio, and says so", h)
h2 = by.get("hackbench2", [None] * 7)
check(h2[5] is not None and abs(h2[5] - 50.0) < 1e-9,
      "a saving above both spreads keeps its ratio (20 of 40)", h2)
h3 = by.get("hackbench3", [None] * 7)
check(h3[5] is None and "spread of 50" in (h3[6] or ""), "a saving within "
      "legacy-ref's rounds' spread gives no ratio either", h3)
p = by.get("pipe", [None] * 6)
check(p[5] is not None and abs(p[5] + 30.0) < 1e-9, "knobs that cost give a negative "
      "share (-30 of 100), not a clipped one", p)
check(bench.recovery({"legacy": (legacy, "s")}) == [], "no legacy-ref: no rows")
check(bench.recovery({"legacy-ref": (ref, "s"), "6.1": (ref, "s")}) == [],
      "no legacy: no rows")
text = bench.recovery_table(rows)
check("| direct | write | 1000 | 910 | 900 | +100 | +90 | 90% |" in text,
      "table row for write", text)
check("| direct | pipe | 2000 | 2030 | 1900 | +100 | -30 | -30% |" in text,
      "table row for pipe", text)
check("n/a (upstream saves < 0.5%)" in text, "table says why watched has no ratio", text)
check("| direct | hackbench | 3800 | 3750 | 3770 | +30 | +50 | "
      "n/a (upstream saving within the rounds' spread of 60) |" in text,
      "table says why hackbench has no ratio", text)
check(bench.recovery_table([]) == "", "no rows: no table")

# compare(): the sensitivity table, from two tables as table() prints
# them: the old one without a named model (measured under -cpu max).
OLD = """readlink(), instructions per call (qemu TCG, 1 vCPU, -icount shift=0; vfsfast-ab ...)

| kernel | upstream | backend | workload | off | on | delta | passthrough | redirect cost | spread off/on/pt |
|---|---|---|---|---:|---:|---:|---:|---:|---:|
| 6.1 | none | direct | tmpfs-100 | 8000 | 7700 | -3.75% | 8006 | +6 | 0.04%/0.02%/0.11% |
| 6.1 | none | ftrace | tmpfs-100 | 8000 | 7740 | -3.25% | 8040 | +40 | 0.01%/0.13%/0.00% |
| 5.10 | none | direct | tmpfs-32 | 7303 | unsupported | | | | 0.02% |
"""
NEW = """readlink(), ... (qemu TCG, 1 vCPU, -icount shift=0, cost model no-fast-strings (-cpu max,-erms,-fsrm); ...)

| kernel | upstream | backend | workload | off | on | delta | passthrough | redirect cost | spread off/on/pt |
|---|---|---|---|---:|---:|---:|---:|---:|---:|
| 6.1 | none | direct | tmpfs-100 | 4000 | 3700 | -7.50% | 4006 | +6 | 0.04%/0.02%/0.11% |
| 6.12 | none | direct | tmpfs-100 | 4209 | 3965 | -5.85% | 4219 | +11 | 0.08%/0.23%/0.22% |
"""
cmp = bench.compare(OLD, NEW)
check("| 6.1 | direct | tmpfs-100 | 8000 | 4000 | -50.0% | -3.75% | -7.50% | +6 | +6 |" in cmp,
      "compare: a row both tables have, the off change as new/old - 1", cmp)
check("ftrace" not in cmp and "6.12" not in cmp and "5.10" not in cmp,
      "compare: rows only one table has are left out", cmp)
check("cost model max (-cpu max) and no-fast-strings (-cpu max,-erms,-fsrm)" in cmp,
      "compare: names both models, max for a table that names none", cmp.splitlines()[0])

RESULTS.finish()
