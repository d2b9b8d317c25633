# vfsfast-ab in the guest, as on a host: bad input is refused and changes
# nothing; an A/A run is "~" or "="; readlink of a 100-byte link with the
# knob on is a significant gain where the kernel lacks the optimization
# (status's upstream: none; not where the architecture's own strlen() is
# already fast, arm64's);
# a workload that fails mid-run stops the run with a clear error and puts
# every knob back; so does a signal.  vfsfast-ab measures whatever hook is
# in place, so this runs with the first backend only.  The lab boots a
# second guest in icount mode (VFSFAST_AB_ICOUNT=1) for the verdicts:
# guest time is instructions there, so a 3% gain is not lost in the
# noise of TCG wall time on a shared host.
# VFSFAST_AB_PAIRS / VFSFAST_AB_ITERS come from the lab profile.

. /lab/lib.sh; in_group t_ab || return 0

ab_field() { # SUMMARY.JSON COMPARE FIELD
	sed -n "s|.*\"compare\":\"$2\".*\"$3\":\([^,}]*\).*|\1|p" "$1" | tr -d '"'
}

# ab_bad NAME PATTERN ARGS...: exit 2, PATTERN on stderr, knob and its
# status as before, no results folder.
ab_bad() {
	name=$1 pat=$2
	shift 2
	before="$(knob readlink) $(head -n1 $VF/readlink/status)"
	rm -rf /tmp/abbad
	mkdir /tmp/abbad
	chmod 777 /tmp/abbad
	(cd /tmp/abbad && "$@") >/tmp/abbad.out 2>&1
	rc=$?
	after="$(knob readlink) $(head -n1 $VF/readlink/status)"
	if [ "$rc" = 2 ] && grep -q "$pat" /tmp/abbad.out && [ "$before" = "$after" ] &&
		[ -z "$(ls -A /tmp/abbad)" ]; then
		t_ok "ab: $name: exit 2, says '$pat', changes nothing"
	else
		t_fail "ab: $name: exit 2, says '$pat', changes nothing" \
			"rc=$rc before='$before' after='$after' files='$(ls -A /tmp/abbad)' out: $(tail -n 2 /tmp/abbad.out | tr '\n' ' ')"
	fi
}

# ab_measure MODE: an A/A run and a readlink-tmpfs-100 A/B run.  In
# icount mode (MODE icount) the verdicts are asserted: A/A is ~ or =, and
# the knob on is a significant gain where the kernel lacks the
# optimization (upstream: none).  In wall mode they are notes.
ab_measure() {
	mode=$1
	P=${VFSFAST_AB_PAIRS:-16}
	N=${VFSFAST_AB_ITERS:-20000}
	set_knob readlink 0
	# 8 A/A pairs can reach p < 0.01, so this can fail.
	vfsfast-ab --aa-only -p 8 --alpha 0.01 -n "$N" -o /tmp/ab-aa readlink -- readlink-tmpfs-100 \
		>/tmp/ab-aa.out 2>&1
	rc=$?
	m=$(ab_field /tmp/ab-aa/summary.json aa marker)
	note "ab $mode: A/A: $(grep '^ns_per_op  *A/A' /tmp/ab-aa.out)"
	case "$rc $m" in
	"0 ~" | "0 =") t_ok "ab $mode: A/A run (8 off/off pairs) is ~ or =" "'$m'" ;;
	*) t_fail "ab $mode: A/A run (8 off/off pairs) is ~ or =" "rc=$rc marker='$m'; $(tail -n 3 /tmp/ab-aa.out | tr '\n' ' ')" ;;
	esac
	t_eq "ab $mode: A/A: 16 measured runs in raw.csv, knob left off" "17 0" \
		"$(wc -l </tmp/ab-aa/raw.csv) $(knob readlink)"

	up=$(sed -n 's/^upstream: //p' $VF/readlink/status)
	aa=$((P / 4))
	[ "$aa" -ge 2 ] || aa=2
	vfsfast-ab -p "$P" -n "$N" -o /tmp/ab-rl readlink -- readlink-tmpfs-100 >/tmp/ab-rl.out 2>&1
	rc=$?
	m=$(ab_field /tmp/ab-rl/summary.json on/off marker)
	d=$(ab_field /tmp/ab-rl/summary.json on/off delta_pct)
	note "ab $mode: readlink-tmpfs-100, $P pairs: $(grep '^ns_per_op  *on/off' /tmp/ab-rl.out)"
	if [ "$mode" = icount ] && [ "$up" = none ]; then
		case "$rc $m" in
		"0 *")
			if awk -v d="$d" 'BEGIN { exit !(d < 0) }'; then
				t_ok "ab $mode: readlink 100 bytes, knob on: significant gain" "$d%"
			else
				t_fail "ab $mode: readlink 100 bytes, knob on: significant gain" "significant LOSS $d%"
			fi ;;
		*) t_fail "ab $mode: readlink 100 bytes, knob on: significant gain" \
			"rc=$rc marker='$m' delta=$d; $(tail -n 3 /tmp/ab-rl.out | tr '\n' ' ')" ;;
		esac
	else
		# Wall time, or upstream has it (on/off then compares two fast
		# paths): any verdict is honest; the run must complete.
		case "$rc $m" in
		"0 *" | "0 ~" | "0 =") t_ok "ab $mode: readlink 100 bytes (upstream $up): run completes" "'$m' $d%" ;;
		*) t_fail "ab $mode: readlink 100 bytes (upstream $up): run completes" "rc=$rc marker='$m'" ;;
		esac
	fi
	t_eq "ab $mode: A/B: every run in raw.csv; table, chart, SVG, JSON, env written" \
		"$((1 + 2 * (P + aa))) yes" \
		"$(wc -l </tmp/ab-rl/raw.csv) $([ -s /tmp/ab-rl/table.txt ] && [ -s /tmp/ab-rl/chart.txt ] &&
			grep -q '</svg>' /tmp/ab-rl/chart.svg && grep -q '"marker"' /tmp/ab-rl/summary.json &&
			grep -q '^kernel: ' /tmp/ab-rl/env.txt && echo yes)"
	t_eq "ab $mode: A/B: knob left as found (0)" 0 "$(knob readlink)"
}

t_ab_main() {
	# Bad input.
	vfsfast-ab readlink -- pipe >/tmp/abbad.out 2>&1
	t_eq "ab: without the module: exit 2, says it is not loaded" "2 1" \
		"$? $(grep -c 'module is not loaded' /tmp/abbad.out)"
	load_vfsfast enable=none
	set_knob readlink 1
	ab_bad "unknown optimization" "unknown optimization 'bogus'" vfsfast-ab bogus -- pipe
	ab_bad "one unknown in a list" "unknown optimization 'nope'" vfsfast-ab readlink,nope -- pipe
	ab_bad "workload not found" "workload 'no-such-workload' not found" \
		vfsfast-ab readlink -- no-such-workload
	ab_bad "non-root" "must run as root" runas 1000 vfsfast-ab readlink -- pipe
	ab_bad "malformed option" "needs a non-negative integer" vfsfast-ab --pairs x readlink -- pipe
	ab_bad "unknown option" "unknown option --frobnicate" vfsfast-ab --frobnicate readlink -- pipe
	unload_vfsfast
	load_vfsfast disable=readlink
	ab_bad "knob disabled on this kernel (disable=readlink)" "cannot be switched on this kernel: disabled" \
		vfsfast-ab readlink -- readlink-tmpfs-100
	unload_vfsfast
	load_vfsfast enable=none

	# Wall time under TCG on a shared host is far noisier than readlink's
	# gain: the verdicts are asserted in the icount guest (VFSFAST_AB_ICOUNT=1);
	# here the run must complete and write everything.
	ab_measure wall
	# Latency histograms: 2 traced pairs of 2000 calls; rlbench makes
	# 1000 more per run, so each arm counts 6000 readlink() calls, plus
	# one per run that static glibc's start-up makes (/proc/self/exe).
	vfsfast-ab -p 2 --aa 0 -w 0 -n 2000 --latency -o /tmp/ab-lat readlink -- readlink-tmpfs-100 \
		>/tmp/ab-lat.out 2>&1
	rc=$?
	if [ -x /lab/bin/ablat ] && [ -r /sys/kernel/btf/vmlinux ]; then
		t_eq "ab: --latency: readlink p50/p90/p99 off vs on, 6000 calls (+1 per run at start-up) each arm" \
			"0 1" "$rc $(grep -c '^readlink  *6002 / 6002 ' /tmp/ab-lat/latency.txt 2>/dev/null)"
		note "ab: $(grep '^syscall\|^readlink' /tmp/ab-lat/latency.txt | tr -s ' ' | tr '\n' ';')"
	else
		t_eq "ab: --latency without ablat or BTF: says so, carries on" "0 1" \
			"$rc $(grep -c 'latency histograms: .*carrying on without them' /tmp/ab-lat.out)"
	fi

	# A workload that fails mid-run: the 7th run and later fail when they
	# find the knob off; the knob was found on.
	rm -f /tmp/flaky.n
	cat >/tmp/flaky.sh <<'EOF'
n=$(cat /tmp/flaky.n 2>/dev/null || echo 0)
n=$((n + 1))
echo $n >/tmp/flaky.n
if [ $n -ge 7 ] && [ "$(cat /sys/kernel/vfsfast/readlink/enabled)" = 0 ]; then
	echo "flaky: giving up on run $n"
	exit 3
fi
echo "v=1.5"
EOF
	set_knob readlink 1
	vfsfast-ab -p 6 --metric v -o /tmp/ab-fail readlink -- sh /tmp/flaky.sh >/tmp/ab-fail.out 2>&1
	rc=$?
	t_eq "ab: failing workload: exit 1, clear error, its output shown and kept" "1 1 1 1" \
		"$rc $(grep -c 'error: the workload failed in pair .*exited with status 3' /tmp/ab-fail.out) $(grep -c 'flaky: giving up' /tmp/ab-fail.out) $(grep -c 'flaky: giving up' /tmp/ab-fail/failed-run.txt)"
	t_eq "ab: failing workload: stopped mid-run, knob back on and active" "yes 1 active" \
		"$([ "$(wc -l </tmp/ab-fail/raw.csv)" -lt 13 ] && echo yes) $(knob readlink) $(head -n1 $VF/readlink/status)"

	# A signal mid-run: the knob was found off; TERM while it is on.
	set_knob readlink 0
	vfsfast-ab -p 50 --metric v -o /tmp/ab-sig readlink -- sh -c 'sleep 1; echo v=1' \
		>/tmp/ab-sig.out 2>&1 &
	pid=$!
	i=0
	while [ "$(knob readlink)" != 1 ] && [ $i -lt 600 ]; do
		usleep 100000
		i=$((i + 1))
	done
	seen=$(knob readlink)
	kill -TERM $pid
	wait $pid
	rc=$?
	t_eq "ab: TERM while the knob is on: exit 143, knob back off" "1 143 0 off" \
		"$seen $rc $(knob readlink) $(head -n1 $VF/readlink/status)"
	unload_vfsfast
}

if [ "${VFSFAST_AB_ICOUNT:-0}" = 1 ]; then
	# The lab's second guest for t_ab: icount, 1 vCPU, default backend.
	# Its count is the lab's cost model (Documentation/ab-methodology.md):
	# offered a fast-string feature, a kernel copies and clears with
	# rep movsb/stosb, which icount charges per byte.
	fast=$(sed -n 's/^flags[[:space:]]*: //p' /proc/cpuinfo | head -n1 | tr ' ' '\n' |
		grep -x -E 'erms|fsrm|fsrs|fzrm|fsrc' | tr '\n' ' ')
	t_checkv "ab: the icount guest's CPU offers no fast strings (ERMS, FSRM, FSRS, FZRM, FSRC)" \
		"offered: ${fast:-none}; $(grep -c '^processor' /proc/cpuinfo) vCPU" [ -z "$fast" ]
	load_vfsfast enable=none
	ab_measure icount
	unload_vfsfast
elif [ "$VFSFAST_BACKEND" = "${VFSFAST_BACKENDS_EXPECT%% *}" ]; then
	t_ab_main
else
	note "t_ab: runs with the first backend only (${VFSFAST_BACKENDS_EXPECT%% *})"
fi
