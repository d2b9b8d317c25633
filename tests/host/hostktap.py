# SPDX-License-Identifier: GPL-2.0
"""The result lines every Python host test prints, as the suite reads
them (suite.host_sh_test()): "ok - what", "not ok - what # detail", and
last "N passed, N failed", with exit status 1 when anything failed."""

import sys


class Results:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, cond, what, detail=""):
        if cond:
            self.passed += 1
            print(f"ok - {what}")
        else:
            self.failed += 1
            print(f"not ok - {what}" + (f" # {detail}" if detail else ""))
        return cond

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed else 0)
