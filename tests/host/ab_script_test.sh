#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# scripts/vfsfast-ab on the host, with the system sh and with busybox sh,
# against a stand-in sysfs tree (VFSFAST_AB_SYSFS): --help, bad input
# (exit 2, the reason named, no knob or file changed, no results folder),
# and an enable that does not take effect (exit 1, knob put back).  The
# real runs, knob on and off, are the lab's t_ab.  Needs root (as
# vfsfast-ab does).
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

here=$(cd "$(dirname "$0")" && pwd)
AB=$here/../../scripts/vfsfast-ab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=shells.sh
. "$here/shells.sh"

fake() { # the tree vfsfast makes, with readlink's status given
	rm -rf "$tmp/vf"
	mkdir -p "$tmp/vf/readlink" "$tmp/vf/other"
	echo "$1" >"$tmp/vf/readlink/enabled"
	printf '%s\nupstream: none\nrequested: off\n' "$2" >"$tmp/vf/readlink/status"
	echo 0 >"$tmp/vf/other/enabled"
	printf 'off\nupstream: none\nrequested: off\n' >"$tmp/vf/other/status"
	(cd "$tmp/vf" && find . -type f -exec cksum {} + | sort) >"$tmp/vf.sum"
}

# expect NAME RC PATTERN ARGS...: runs vfsfast-ab in an empty folder
expect() {
	name=$1 want=$2 pat=$3
	shift 3
	rm -rf "$tmp/cwd"
	mkdir "$tmp/cwd"
	(cd "$tmp/cwd" && VFSFAST_AB_SYSFS=$tmp/vf VFSFAST_AB_LIBEXEC=$tmp/lx $SH "$AB" "$@") >"$tmp/out" 2>&1
	rc=$?
	same=no
	[ -d "$tmp/vf" ] || [ -s "$tmp/vf.sum" ] || same=yes
	[ ! -d "$tmp/vf" ] || (cd "$tmp/vf" && find . -type f -exec cksum {} + | sort) | cmp -s - "$tmp/vf.sum" && same=yes
	if [ "$rc" = "$want" ] && grep -q -- "$pat" "$tmp/out" && [ $same = yes ] &&
		[ -z "$(ls -A "$tmp/cwd")" ]; then
		ok "$name: exit $want, '$pat', nothing changed"
	else
		bad "$name: exit $want, '$pat', nothing changed" \
			"rc=$rc sysfs unchanged=$same files=$(ls -A "$tmp/cwd") out=$(tr '\n' ' ' <"$tmp/out" | cut -c1-300)"
	fi
}

suite() {
	fake 1 active
	expect "--help" 0 "usage: vfsfast-ab" --help
	expect "no arguments" 2 "usage: vfsfast-ab"
	expect "unknown option" 2 "unknown option --bogus" --bogus readlink -- pipe
	expect "malformed number" 2 "needs a non-negative integer" -p 1x readlink -- pipe
	expect "missing --" 2 "expected -- after the optimization list" readlink pipe
	expect "no workload" 2 "no workload after --" readlink --
	expect "unknown optimization" 2 "unknown optimization 'bogus'" bogus -- pipe
	expect "unknown one in a list" 2 "unknown optimization 'nope'" readlink,nope -- pipe
	expect "workload not found" 2 "workload 'no-such-cmd' not found" readlink -- no-such-cmd
	rm -rf "$tmp/vf"
	: >"$tmp/vf.sum"
	expect "module not loaded" 2 "module is not loaded" readlink -- pipe
	fake 0 "unsupported: vfs_readlink: symbol not found"
	expect "unsupported knob" 2 "cannot be switched on this kernel: unsupported" readlink -- pipe
	fake 0 "conflict: vfs_readlink: held by another ftrace user"
	expect "conflict knob" 2 "cannot be switched on this kernel: conflict" readlink -- pipe
	fake 0 "broken: vfs_readlink: detach failed (-5)"
	expect "broken knob" 2 "cannot be switched on this kernel: broken" readlink -- pipe
	fake 0 "disabled: disable= parameter"
	expect "disabled knob" 2 "cannot be switched on this kernel: disabled" readlink -- pipe
	fake 0 "yielded: vfs_readlink taken by klp_x"
	expect "yielded knob" 2 "cannot be switched on this kernel: yielded" readlink -- pipe
	expect "bad --arms" 2 "--arms needs on, passthrough or both" --arms off readlink -- pipe
	# --aa-only never switches the knob on: an unsupported one is measured
	# off/off, its files untouched.
	fake 0 "unsupported: vfs_readlink: held by another ftrace user"
	rm -rf "$tmp/cwd"
	mkdir "$tmp/cwd"
	(cd "$tmp/cwd" && VFSFAST_AB_SYSFS=$tmp/vf VFSFAST_AB_LIBEXEC=$tmp/lx $SH "$AB" -w 0 -p 2 \
		--aa-only --no-perf --metric v -o "$tmp/cwd/r" readlink -- sh -c 'echo v=1') >"$tmp/out" 2>&1
	rc=$?
	if [ $rc = 0 ] && (cd "$tmp/vf" && find . -type f -exec cksum {} + | sort) | cmp -s - "$tmp/vf.sum" &&
		[ "$(grep -c ',A[AB],' "$tmp/cwd/r/raw.csv")" = 4 ] && grep -q '"compare":"aa"' "$tmp/cwd/r/summary.json"; then
		ok "--aa-only on an unsupported knob: exit 0, 2 A/A pairs, knob files untouched"
	else
		bad "--aa-only on an unsupported knob: exit 0, 2 A/A pairs, knob files untouched" \
			"rc=$rc out=$(tr '\n' ' ' <"$tmp/out" | cut -c1-300)"
	fi
	fake 0 "yielded: vfs_readlink taken by klp_x"
	expect "--list" 0 "readlink: enabled=0 yielded" --list

	# An enable that does not take effect: status stays "off" (this
	# stand-in has no module behind it).  Exit 1, said plainly, knobs as
	# found: readlink 0, other 0, though both were written.
	fake 0 off
	rm -rf "$tmp/cwd"
	mkdir "$tmp/cwd"
	(cd "$tmp/cwd" && VFSFAST_AB_SYSFS=$tmp/vf VFSFAST_AB_LIBEXEC=$tmp/lx $SH "$AB" -w 0 \
		--metric v -o "$tmp/cwd/r" readlink,other -- sh -c 'echo v=1') >"$tmp/out" 2>&1
	rc=$?
	if [ $rc = 1 ] && grep -q "readlink did not become active: status 'off'" "$tmp/out" &&
		grep -q "knobs restored as found: readlink=0 other=0" "$tmp/out" &&
		[ "$(cat "$tmp/vf/readlink/enabled") $(cat "$tmp/vf/other/enabled")" = "0 0" ]; then
		ok "enable without effect: exit 1, named, knobs put back"
	else
		bad "enable without effect: exit 1, named, knobs put back" \
			"rc=$rc enabled=$(cat "$tmp/vf/readlink/enabled") out=$(tr '\n' ' ' <"$tmp/out" | cut -c1-300)"
	fi
	if [ -f "$tmp/cwd/r/env.txt" ] && grep -q '^knobs found: readlink=0 other=0' "$tmp/cwd/r/env.txt" &&
		grep -q '^pairs: 10 off/on + 2 A/A' "$tmp/cwd/r/env.txt"; then
		ok "env.txt records the knobs as found and the plan"
	else
		bad "env.txt records the knobs as found and the plan" "$(cat "$tmp/cwd/r/env.txt" 2>&1 | head -n 3)"
	fi
}

if [ "$(id -u)" != 0 ]; then
	echo "ab_script_test: needs root"
	echo "0 passed, 1 failed"
	exit 1
fi
mkdir "$tmp/lx"
if ! ${CC:-cc} -O2 -o "$tmp/lx/abloop" "$here/../../scripts/workloads/abloop.c"; then
	echo "0 passed, 1 failed"
	exit 1
fi
each_shell suite
