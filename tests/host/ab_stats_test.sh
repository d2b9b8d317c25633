#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# vfsfast-ab's statistics (scripts/vfsfast-ab-stats.awk) on synthetic data
# with known answers: no effect, a known effect, drift, the icount cases
# (every pair equal; a deterministic difference), exact Wilcoxon p-values
# with and without ties, the normal approximation, the "pairs needed"
# advice and malformed input.  Reference values were computed
# independently (exact enumeration of the signed-rank distribution,
# math.erfc for the normal tail).  Runs once per awk found: the system's
# awk and busybox awk (the guests' awk, built without math support).
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

here=$(cd "$(dirname "$0")" && pwd)
STATS=$here/../../scripts/vfsfast-ab-stats.awk
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok - $AWKNAME: $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $AWKNAME: $1 # $2"; }

# gen FILE: stdin lines "KIND X Y" (KIND AB: X=off Y=on; AA: X=a Y=b);
# the slot order alternates so that no arm is always first.
gen() {
	$AWK '
	BEGIN { print "run,pair,kind,slot,arm,metric,value" }
	NF == 3 {
		p++
		xa = $1 == "AB" ? "off" : "a"; ya = $1 == "AB" ? "on" : "b"
		if (p % 2) { print ++r "," p "," $1 ",1," xa ",m," $2; print ++r "," p "," $1 ",2," ya ",m," $3 }
		else       { print ++r "," p "," $1 ",1," ya ",m," $3; print ++r "," p "," $1 ",2," xa ",m," $2 }
	}' >"$1"
}

# run_stats CSV: writes $tmp/out/{summary.json,table.txt,...}; sets $rc.
run_stats() {
	rm -rf "$tmp/out"
	mkdir "$tmp/out"
	$AWK -f "$STATS" -v out="$tmp/out" "$1" >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
}

# field KIND NAME: a field of the summary.json row for compare KIND.
field() {
	sed -n "s|.*\"compare\":\"$1\".*\"$2\":\\([^,}]*\\).*|\\1|p" "$tmp/out/summary.json" |
		tr -d '"'
}

# near A B TOL: |A - B| <= TOL
near() { $AWK -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= t) }'; }

check_eq() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1" "expected '$2', got '$3'"; fi; }
check_near() { if near "$2" "$3" "$4"; then ok "$1"; else bad "$1" "expected $2 +- $4, got '$3'"; fi; }

suite() {
	# 1. No effect: ratios symmetric about 1 (W+ = n(n+1)/4 but for rounding
	# in the last bit of the ratios) -> p near 1, "~".
	for i in 1 2 3 4 5 6 7 8 9 10; do
		echo "AB 1000 $((1000 + i))"
		echo "AB $((1000 + i)) 1000"
	done | gen "$tmp/none.csv"
	run_stats "$tmp/none.csv"
	check_eq "no effect: exit 0" 0 "$rc"
	check_eq "no effect: marker ~" "~" "$(field on/off marker)"
	check_near "no effect: p near 1 (W+ = n(n+1)/4 up to rounding)" 1 "$(field on/off p)" 0.1
	check_near "no effect: delta 0%" 0 "$(field on/off delta_pct)" 1e-9
	lo=$(field on/off delta_lo_pct)
	hi=$(field on/off delta_hi_pct)
	if near "$lo" -0.5 0.5 && near "$hi" 0.5 0.5; then ok "no effect: 95% interval straddles 0 ($lo, $hi)"
	else bad "no effect: 95% interval straddles 0" "got $lo $hi"; fi

	# 2. Known effect: on = 0.95 * off * noise, noise factors in
	# reciprocal pairs (1+e, 1/(1+e)) so the geometric mean is exactly 0.95;
	# 12 pairs all in the same direction: exact p = 2/2^12.
	$AWK 'BEGIN { for (i = 1; i <= 6; i++) { e = 1 + i / 1000; o = 1000 + 7 * i
		printf "AB %.10f %.10f\nAB %.10f %.10f\n", o, 0.95 * o * e, o, 0.95 * o / e } }' |
		gen "$tmp/effect.csv"
	run_stats "$tmp/effect.csv"
	check_eq "known effect: marker *" "*" "$(field on/off marker)"
	check_near "known effect: ratio 0.95" 0.95 "$(field on/off ratio_gm)" 1e-8
	check_near "known effect: delta -5%" -5 "$(field on/off delta_pct)" 1e-6
	check_near "known effect: exact p = 2/4096" 0.00048828125 "$(field on/off p)" 1e-12
	check_eq "known effect: exact test used" exact "$(field on/off test)"
	if grep -q "knob on is a GAIN (-5.00%)" "$tmp/stdout"; then ok "known effect: reported as a gain"
	else bad "known effect: reported as a gain" "$(cat "$tmp/stdout")"; fi

	# 3. Drift: the machine slows by 2% every pair (20 pairs: +46% end to
	# end), on = 0.97 * off inside each pair.  Pairs cancel the drift:
	# the ratio stays 0.97 with a tight interval.  A/A pairs whose second
	# run is always 0.5% slower (warming up), with the order inside the
	# pair alternating as vfsfast-ab randomizes it, stay "~".
	$AWK 'BEGIN { v = 1000; for (i = 1; i <= 20; i++) { v *= 1.02
		printf "AB %.6f %.6f\n", v, v * 0.97 * (1 + (i % 3 - 1) / 2000)
		if (i % 2) printf "AA %.6f %.6f\n", v, v * 1.005
		else printf "AA %.6f %.6f\n", v * 1.005, v } }' | $AWK '
		BEGIN { print "run,pair,kind,slot,arm,metric,value" }
		{ p++; if ($1 == "AB") { print ++r "," p ",AB,1,off,m," $2; print ++r "," p ",AB,2,on,m," $3 }
		  else { print ++r "," p ",AA,1,a,m," $2; print ++r "," p ",AA,2,b,m," $3 } }' >"$tmp/drift.csv"
	run_stats "$tmp/drift.csv"
	check_near "drift: ratio 0.97 despite 46% drift" 0.97 "$(field on/off ratio_gm)" 0.0002
	lo=$(field on/off delta_lo_pct)
	hi=$(field on/off delta_hi_pct)
	if near "$lo" -3 0.05 && near "$hi" -3 0.05; then ok "drift: interval within 0.05% of -3% ($lo, $hi)"
	else bad "drift: interval within 0.05% of -3%" "got $lo $hi"; fi
	check_eq "drift: on/off marker *" "*" "$(field on/off marker)"
	check_eq "drift: A/A with in-pair warmup, order alternating: ~" "~" "$(field aa marker)"
	check_near "drift: A/A p near 1 (half the pairs each way)" 1 "$(field aa p)" 0.4

	# 4. icount, no difference: every value identical -> "=", no p-value.
	for i in 1 2 3 4 5 6 7 8; do echo "AB 1234 1234"; echo "AA 1234 1234"; done | gen "$tmp/eq.csv"
	run_stats "$tmp/eq.csv"
	check_eq "icount equal: marker =" "=" "$(field on/off marker)"
	check_eq "icount equal: p is null in JSON" null "$(field on/off p)"
	check_eq "icount equal: A/A marker =" "=" "$(field aa marker)"
	if grep -q '^m  *on/off .* -  *8  =$' "$tmp/stdout"; then ok "icount equal: table shows p '-' and '='"
	else bad "icount equal: table shows p '-' and '='" "$(grep on/off "$tmp/stdout")"; fi

	# 5. icount, deterministic difference: 8 pairs -> p = 2/256, "*",
	# interval of zero width; 5 pairs cannot reach p < 0.05 (p = 1/16),
	# and the report says 6 pairs are needed.
	for i in 1 2 3 4 5 6 7 8; do echo "AB 1000 900"; done | gen "$tmp/det8.csv"
	run_stats "$tmp/det8.csv"
	check_eq "icount effect, 8 pairs: marker *" "*" "$(field on/off marker)"
	check_near "icount effect, 8 pairs: p = 2/256" 0.0078125 "$(field on/off p)" 1e-12
	check_near "icount effect: interval collapses to -10%" -10 "$(field on/off delta_lo_pct)" 1e-6
	check_near "icount effect: upper end -10%" -10 "$(field on/off delta_hi_pct)" 1e-6
	for i in 1 2 3 4 5; do echo "AB 1000 900"; done | gen "$tmp/det5.csv"
	run_stats "$tmp/det5.csv"
	check_eq "icount effect, 5 pairs: marker ~" "~" "$(field on/off marker)"
	check_near "icount effect, 5 pairs: p = 1/16" 0.0625 "$(field on/off p)" 1e-12
	if grep -q "needs about 6 pairs.*this run has 5: WARNING: too short" "$tmp/stdout"; then
		ok "icount effect, 5 pairs: warns that 6 pairs are needed"
	else bad "icount effect, 5 pairs: warns that 6 pairs are needed" "$(cat "$tmp/stdout")"; fi

	# 6. Exact p, no ties: +1..+8%, -9%, -10%: W+ = 36 of 55, p = 0.431640625.
	for x in 1010 1020 1030 1040 1050 1060 1070 1080 910 900; do echo "AB 1000 $x"; done |
		gen "$tmp/w10.csv"
	run_stats "$tmp/w10.csv"
	check_near "exact Wilcoxon, n=10: p = 0.431640625" 0.431640625 "$(field on/off p)" 1e-12
	check_eq "exact Wilcoxon, n=10: not significant" "~" "$(field on/off marker)"

	# 7. Exact p with ties and a zero: |d| ties get midranks, the zero
	# pair is dropped: p = 0.1484375.
	for x in 1010 990 1020 1020 1030 980 1040 1050 1000; do echo "AB 1000 $x"; done |
		gen "$tmp/ties.csv"
	run_stats "$tmp/ties.csv"
	check_near "exact Wilcoxon with ties and a zero: p = 0.1484375" 0.1484375 "$(field on/off p)" 1e-12

	# 8. Normal approximation (49 non-zero pairs, one zero): p = 0.0210118.
	$AWK 'BEGIN { for (i = 1; i <= 50; i++) print "AB 1000", 1000 + i - 20 }' | gen "$tmp/n50.csv"
	run_stats "$tmp/n50.csv"
	check_eq "normal approximation used above 40 pairs" normal "$(field on/off test)"
	check_near "normal approximation: p = 0.0210118" 0.0210118014 "$(field on/off p)" 2e-6
	check_near "normal approximation: ratio 1.0053964 (zero pair included)" 1.0053964307 "$(field on/off ratio_gm)" 1e-9
	check_near "noise: sd of log ratio 1.44997%" 1.4499732338 "$(field on/off noise_cv_pct)" 1e-6
	check_eq "pairs needed for 1%: 16*(CV/1%)^2 rounded up = 34" 34 "$(field on/off pairs_needed)"

	# 10. A third arm (vfsfast-ab --arms on,passthrough): each pair runs off,
	# on and passthrough; on/off and passthrough/off are each a paired
	# comparison against the same off runs.  Medians, spreads ((max -
	# min) / median, percent) and diff_median worked out by hand: off
	# 1000/1010/990 (median 1000, spread 2%), on 900/909/891 (900, 2%),
	# passthrough 1010/1020/1000 (1010, 1.9802%).
	$AWK 'BEGIN { print "run,pair,kind,slot,arm,metric,value"
		split("1000 1010 990", o, " "); split("900 909 891", n, " "); split("1010 1020 1000", t, " ")
		for (p = 1; p <= 3; p++) { print ++r "," p ",AB,1,passthrough,m," t[p]
			print ++r "," p ",AB,2,off,m," o[p]; print ++r "," p ",AB,3,on,m," n[p] } }' >"$tmp/pt.csv"
	run_stats "$tmp/pt.csv"
	check_eq "passthrough arm: exit 0" 0 "$rc"
	check_near "passthrough arm: on/off off median 1000" 1000 "$(field on/off off_median)" 1e-9
	check_near "passthrough arm: on median 900" 900 "$(field on/off on_median)" 1e-9
	check_near "passthrough arm: on/off delta -10%" -10 "$(field on/off delta_pct)" 1e-6
	check_near "passthrough arm: off spread 2%" 2 "$(field on/off off_spread_pct)" 1e-9
	check_near "passthrough arm: on spread 2%" 2 "$(field on/off on_spread_pct)" 1e-9
	check_near "passthrough arm: on - off medians -100" -100 "$(field on/off diff_median)" 1e-9
	check_near "passthrough arm: passthrough median 1010" 1010 "$(field passthrough/off on_median)" 1e-9
	check_near "passthrough arm: redirect cost (passthrough - off) +10" 10 "$(field passthrough/off diff_median)" 1e-9
	check_near "passthrough arm: passthrough spread 20/1010" 1.98019802 "$(field passthrough/off on_spread_pct)" 1e-6
	check_eq "passthrough arm: 3 pairs each" "3 3" "$(field on/off pairs) $(field passthrough/off pairs)"
	if grep -q '^m  *passthrough/off ' "$tmp/stdout"; then ok "passthrough arm: its own table line"
	else bad "passthrough arm: its own table line" "$(cat "$tmp/stdout")"; fi

	# 11. recovery=1 (vfsfast-lab bench's share of upstream's saving on
	# legacy): medians, not means; under 0.5% or within either side's
	# spread, no ratio.  tests/host/bench_recovery_test.py has the rest.
	printf '%s\n' side,backend,workload,value \
		legacy_off,direct,w,995 legacy_off,direct,w,1000 legacy_off,direct,w,1060 \
		legacy_on,direct,w,910 legacy_on,direct,w,905 legacy_on,direct,w,920 \
		ref_off,direct,w,899 ref_off,direct,w,900 ref_off,direct,w,901 \
		legacy_off,direct,h,3780 legacy_off,direct,h,3800 legacy_off,direct,h,3840 \
		legacy_on,direct,h,3750 ref_off,direct,h,3770 legacy_on,direct,x,1 >"$tmp/rec.csv"
	$AWK -v recovery=1 -f "$STATS" "$tmp/rec.csv" >"$tmp/rec.out" 2>&1
	check_eq "recovery: 90 of 100 recovered" "direct w 1000 910 900 100 90 90 -" \
		"$(grep '^direct	w	' "$tmp/rec.out" | tr '\t' ' ')"
	check_eq "recovery: within the rounds' spread, no ratio" \
		"direct h 3800 3750 3770 30 50 - upstream saving within the rounds' spread of 60" \
		"$(grep '^direct	h	' "$tmp/rec.out" | tr '\t' ' ')"
	check_eq "recovery: a workload without all three sides gives no row" 2 "$(wc -l <"$tmp/rec.out" | tr -d ' ')"

	# 9. Malformed input: exit 2 with the line named, no summary.
	printf 'run,pair,kind,slot,arm,metric,value\n1,1,AB,1,off,m,12x\n' >"$tmp/bad.csv"
	run_stats "$tmp/bad.csv"
	check_eq "malformed value: exit 2" 2 "$rc"
	if grep -q "raw line 2 malformed" "$tmp/stderr" && [ ! -s "$tmp/out/summary.json" ]; then
		ok "malformed value: line named, no summary written"
	else bad "malformed value: line named, no summary written" "$(cat "$tmp/stderr")"; fi
	printf 'run,pair,kind,slot,arm,metric,value\n1,1,AB,1,off,m,0\n2,1,AB,2,on,m,5\n' >"$tmp/zero.csv"
	run_stats "$tmp/zero.csv"
	check_eq "a zero value cannot make a ratio: exit 2" 2 "$rc"
}

AWKS="awk"
command -v busybox >/dev/null 2>&1 && busybox awk 'BEGIN {}' 2>/dev/null && AWKS="$AWKS busybox"
for a in $AWKS; do
	if [ "$a" = busybox ]; then AWK="busybox awk"; AWKNAME="busybox awk"
	else AWK=awk; AWKNAME="awk ($(readlink -f "$(command -v awk)"))"; fi
	suite
	cp "$tmp/stdout" "$tmp/last.$a"
done
if [ -f "$tmp/last.busybox" ]; then
	AWKNAME=both
	if cmp -s "$tmp/last.awk" "$tmp/last.busybox"; then ok "system awk and busybox awk print the same report"
	else bad "system awk and busybox awk print the same report" "$(diff "$tmp/last.awk" "$tmp/last.busybox" | head -5)"; fi
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
