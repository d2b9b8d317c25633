#!/bin/sh
# tests/guest/ktap-diff on synthetic logs: two runs that differ only in
# numbers, diagnostics and notes are the same; a changed result, a name
# gone or added, and a name that occurs twice are reported.
KD=$(cd "$(dirname "$0")/../guest" && pwd)/ktap-diff
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1 # $2"; }

printf '%s\n' "ok - a: flips # 600 flips in 12s" "# note: 3 rounds" \
	"not ok - b: exact # got 7" "ok - c # SKIP no netdevs" >"$tmp/A"
printf '%s\r\n' "ok 1 - a: flips # 599 flips in 14s" "# note: 4 rounds" \
	"not ok 2 - b: exact # got 9" "ok 3 - c # SKIP no netdevs" >"$tmp/B"
out=$(python3 "$KD" "$tmp/A" "$tmp/B" 2>&1)
rc=$?
if [ $rc = 0 ] && [ -z "$out" ]; then
	ok "numbers, diagnostics, notes and CRLF differ only: exit 0, nothing printed"
else
	bad "numbers, diagnostics, notes and CRLF differ only: exit 0, nothing printed" "rc=$rc $out"
fi

printf '%s\n' "ok - a: flips # 1" "ok - b: exact" "ok - d: new" >"$tmp/C"
out=$(python3 "$KD" "$tmp/A" "$tmp/C" 2>&1)
rc=$?
if [ $rc = 1 ] && echo "$out" | grep -qx -- "-not ok - b: exact" &&
	echo "$out" | grep -qx -- "+ok - b: exact" &&
	echo "$out" | grep -q -- "^-ok.* c$" && echo "$out" | grep -qx -- "+ok - d: new" &&
	! echo "$out" | grep -q "a: flips"; then
	ok "a result changed, a name gone, a name added: exit 1, each shown, the same line not"
else
	bad "a result changed, a name gone, a name added: exit 1, each shown, the same line not" \
		"rc=$rc $(echo "$out" | tr '\n' '|')"
fi

printf '%s\n' "ok - a: flips" "ok - a: flips" >"$tmp/D"
err=$(python3 "$KD" "$tmp/D" "$tmp/D" 2>&1 >/dev/null)
rc=$?
if [ $rc = 0 ] && echo "$err" | grep -q "a: flips"; then
	ok "a name twice in one log: named on stderr"
else
	bad "a name twice in one log: named on stderr" "rc=$rc $err"
fi

python3 "$KD" "$tmp/A" "$tmp/nonexistent" >/dev/null 2>&1
rc=$?
if [ $rc = 2 ]; then
	ok "an unreadable log: exit 2"
else
	bad "an unreadable log: exit 2" "rc=$rc"
fi
echo "$pass passed, $fail failed"
[ $fail = 0 ]
