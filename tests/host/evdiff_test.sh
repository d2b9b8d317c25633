#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# tests/guest/src/evdiff.c on the host: its command line (--help, usage
# errors exit 2, a missing directory exits 1), then the property the lab's
# t_evdiff relies on: the same seed twice, each in a fresh tmpfs (or a
# fresh directory where mounting is not allowed), gives byte-identical
# recordings with events of every kind the host allows; another seed
# gives another recording; and a recording with one event left out
# (--inject-drop) differs from the original by exactly that line, so the
# comparison can fail.  Watches on sockets and eventfds are left out
# (--no-pseudo-watches): every eventfd of every process on a shared host
# is the same anonymous inode, so other programs' activity would show up.
# Needs root (mount, fanotify).
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

here=$(cd "$(dirname "$0")" && pwd)
# Any other process that opens the test's directories adds events to a
# recording (seen: a `find` over /tmp during the suite put OPEN|ISDIR
# lines into one of two same-seed runs), so the test runs in a mount
# namespace of its own, on a tmpfs over its directory that no process
# outside can reach.  Where unshare is not allowed, as before.
if [ -z "$EVDIFF_PRIVATE" ] && unshare -m --propagation private true 2>/dev/null; then
	EVDIFF_PRIVATE=1 exec unshare -m --propagation private sh "$0" "$@"
fi
tmp=$(mktemp -d)
private=
if [ -n "$EVDIFF_PRIVATE" ] && mount -t tmpfs -o size=512m evdiff-private "$tmp"; then
	private=$tmp
fi
mounted=
cleanup() {
	for m in $mounted $private; do umount "$m" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1 # $2"; }
OPS=5000

# fresh NAME: an empty directory, a tmpfs of its own where possible (then
# opts says --fs-marks)
fresh() {
	mkdir "$tmp/$1"
	opts=
	if mount -t tmpfs -o size=64m evdiff "$tmp/$1" 2>/dev/null; then
		mounted="$mounted $tmp/$1"
		opts=--fs-marks
	fi
}

# count KIND ERRFILE: the number the summary line gives
count() {
	sed -n "s/^evdiff: seed .*[ (]$1 \([0-9]*\).*/\1/p" "$2"
}

# run NAME SEED [OPTION...]: one recording into $tmp/NAME.out, .err, .rc
run() {
	n=$1 s=$2
	shift 2
	fresh "$n"
	"$tmp/evdiff" --seed "$s" --ops $OPS --dir "$tmp/$n" --no-pseudo-watches \
		--out "$tmp/$n.out" $opts "$@" 2>"$tmp/$n.err"
	echo $? >"$tmp/$n.rc"
	[ -z "$opts" ] || touch "$tmp/$n.fs"
}

expect_rc() { # NAME RC PATTERN ARGS...
	name=$1 want=$2 pat=$3
	shift 3
	"$tmp/evdiff" "$@" >"$tmp/cli.out" 2>&1
	rc=$?
	if [ $rc = "$want" ] && grep -q -- "$pat" "$tmp/cli.out"; then
		ok "$name: exit $want, '$pat'"
	else
		bad "$name: exit $want, '$pat'" "rc=$rc: $(head -c 300 "$tmp/cli.out" | tr '\n' ' ')"
	fi
}

if [ "$(id -u)" != 0 ]; then
	echo "evdiff_test: needs root"
	echo "0 passed, 1 failed"
	exit 1
fi
# The lab's flags (scripts/lablib/guest.py), static included.
if ! gcc -O2 -static -pthread -Wall -Wextra -Werror -o "$tmp/evdiff" \
	"$here/../guest/src/evdiff.c" >"$tmp/cc.out" 2>&1; then
	bad "evdiff builds static with -Wall -Wextra -Werror" "$(head -c 300 "$tmp/cc.out")"
	echo "$pass passed, $fail failed"
	exit 1
fi
ok "evdiff builds static with -Wall -Wextra -Werror"

expect_rc "--help" 0 "usage: evdiff" --help
expect_rc "no --dir" 2 "--dir is required" --seed 1
expect_rc "malformed --ops" 2 "bad number for --ops" --ops 1x --dir "$tmp"
expect_rc "unknown option" 2 "usage: evdiff" --bogus --dir "$tmp"
expect_rc "missing directory" 1 "$tmp/none" --dir "$tmp/none"

run A 42
run B 42
if [ "$(cat "$tmp/A.rc") $(cat "$tmp/B.rc")" = "0 0" ]; then
	ok "seed 42 twice: both runs exit 0"
else
	bad "seed 42 twice: both runs exit 0" "$(cat "$tmp/A.err" "$tmp/B.err" | head -n 3 | tr '\n' ' ')"
fi
where="fresh tmpfs, --fs-marks"
[ -f "$tmp/A.fs" ] || where="fresh directory (tmpfs not mountable here)"
echo "# $where; $(cat "$tmp/A.err")"
if cmp -s "$tmp/A.out" "$tmp/B.out"; then
	ok "seed 42 twice ($where): byte-identical"
else
	bad "seed 42 twice ($where): byte-identical" \
		"$(diff "$tmp/A.out" "$tmp/B.out" | head -n 4 | tr '\n' '|')"
fi
if [ "$(cat "$tmp/A.err")" = "$(cat "$tmp/B.err")" ]; then
	ok "seed 42 twice: same summary line"
else
	bad "seed 42 twice: same summary line" "$(cat "$tmp/A.err" "$tmp/B.err" | tr '\n' '|')"
fi

# What the host allows: fanotify needs CAP_SYS_ADMIN in the initial user
# namespace, file handles need a filesystem with an fsid (tmpfs has had
# one since 6.7).
kinds="inotify dnotify"
if grep -q "^init [0-9]* fanotify-init fan0 NOTIF = 0$" "$tmp/A.out"; then
	kinds="$kinds fanotify permission"
	grep -q "fan-mark fan1 add .* = 0$" "$tmp/A.out" && kinds="$kinds fid"
else
	echo "# fanotify refused here: $(grep -m1 'fanotify-init fan0' "$tmp/A.out")"
fi
for k in $kinds; do
	c=$(count "$k" "$tmp/A.err")
	if [ "${c:-0}" -gt 0 ]; then
		ok "seed 42: $k events recorded ($c)"
	else
		bad "seed 42: $k events recorded" "$(cat "$tmp/A.err")"
	fi
done

run C 43
if [ "$(cat "$tmp/C.rc")" = 0 ] && ! cmp -s "$tmp/A.out" "$tmp/C.out"; then
	ok "seed 43: a different recording from seed 42"
else
	bad "seed 43: a different recording from seed 42" "rc=$(cat "$tmp/C.rc")"
fi

# The same seed without --fs-marks, in a plain directory: still identical.
mkdir "$tmp/E" "$tmp/F"
for n in E F; do
	"$tmp/evdiff" --seed 7 --ops $OPS --dir "$tmp/$n" --no-pseudo-watches \
		--out "$tmp/$n.out" 2>"$tmp/$n.err"
	echo $? >"$tmp/$n.rc"
done
if [ "$(cat "$tmp/E.rc") $(cat "$tmp/F.rc")" = "0 0" ] && cmp -s "$tmp/E.out" "$tmp/F.out"; then
	ok "seed 7 twice in plain directories, inode marks only: byte-identical"
else
	bad "seed 7 twice in plain directories, inode marks only: byte-identical" \
		"rc $(cat "$tmp/E.rc") $(cat "$tmp/F.rc"): $(diff "$tmp/E.out" "$tmp/F.out" | head -n 4 | tr '\n' '|')"
fi

# One event left out must show: the recordings differ, and A without its
# first differing line (an event line: indented) is D.
run D 42 --inject-drop 100
at=$(cmp "$tmp/A.out" "$tmp/D.out" 2>/dev/null | sed -n 's/.* line \([0-9]*\).*/\1/p')
line=$(sed -n "${at:-0}p" "$tmp/A.out" 2>/dev/null)
if [ "$(cat "$tmp/D.rc")" = 0 ] && [ -n "$at" ] && [ "${line#  }" != "$line" ] &&
	sed "${at}d" "$tmp/A.out" | cmp -s - "$tmp/D.out"; then
	ok "--inject-drop 100: the recordings differ by exactly one event line ($line)"
else
	bad "--inject-drop 100: the recordings differ by exactly one event line" \
		"rc=$(cat "$tmp/D.rc") first difference at line '$at': '$line'"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
