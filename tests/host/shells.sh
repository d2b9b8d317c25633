# SPDX-License-Identifier: GPL-2.0
#
# Sourced by the host tests of the user-space scripts, which must work
# under Debian's sh (dash) and busybox sh alike: the tally, and
# each_shell FUNCTION, which runs FUNCTION once per shell with SH (the
# command line to run a script with) and SHNAME (its name in results)
# set, then prints the last line, "N passed, N failed", and returns 1
# when anything failed.  busybox sh is skipped where busybox is missing.

pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $SHNAME: $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $SHNAME: $1 # $2"; }

each_shell() {
	for s in sh busybox; do
		if [ $s = busybox ]; then
			command -v busybox >/dev/null 2>&1 || continue
			SH="busybox sh" SHNAME="busybox sh"
		else
			SH=sh SHNAME="sh ($(readlink -f "$(command -v sh)"))"
		fi
		"$1"
	done
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
