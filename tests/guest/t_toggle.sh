# Toggle storm: VFSFAST_TOGGLES knob flips per kernel, split evenly over its
# backends, each round flipping every optimization's knob on and off, while, on the guest's 2 vCPUs, the
# readlink checker, Debian's stress-ng (pipe, inotify, fanotify and sysfs
# stressors, run back to back with --verify) and a loop of the calls every
# process makes (fstatat and statx of an empty path, access, open, read
# and close, a /proc/self/cgroup read, each result checked by abloop) keep working.  No write may
# fail, every checker result and every stressor must pass, and afterwards
# the readlink differential (rldiff, knob off vs on) must still be
# byte-for-byte equal.  The console is checked by the harness.

. /lab/lib.sh; in_group t_toggle || return 0

export LD_LIBRARY_PATH=/lib/$VFSFAST_MULTIARCH:/usr/lib/$VFSFAST_MULTIARCH
export PATH=$PATH:/usr/bin

need_link_lists

load_vfsfast enable=none
# Every optimization the kernel supports (kernfs only where it lacks it).
opts=$(for f in $VF/*/status; do
	grep -q '^unsupported' "$f" || { f=${f%/status}; echo "${f##*/}"; }
done)
h0=$(stat_of readlink hits)
start_checker
rm -f /tmp/stop_stress /tmp/stress.runs /tmp/stress.fails
stressors="--pipe 1 --inotify 1 --fanotify 1 --sysfs 1"
if stress-ng --version >/dev/null 2>&1; then
	mkdir -p /tmp/stress
	(
		runs=0
		fails=0
		while [ ! -f /tmp/stop_stress ]; do
			# At the lowest priority (busybox has renice, not
			# nice), so that the flips are not starved.
			(cd /tmp/stress && sh -c 'renice -n 19 -p $$ >/dev/null &&
				exec stress-ng "$@"' sh $stressors --timeout 3 \
				--verify --temp-path /tmp/stress) >/tmp/stress.last 2>&1 ||
				{ fails=$((fails + 1)); cp /tmp/stress.last /tmp/stress.failed; }
			runs=$((runs + 1))
		done
		echo $runs >/tmp/stress.runs
		echo $fails >/tmp/stress.fails
	) &
	stress_pid=$!
else
	t_fail "toggle: stress-ng runs in the guest" "$(stress-ng --version 2>&1 | head -n1)"
	stress_pid=
fi

echo data >/tmp/calls.f
rm -f /tmp/calls.runs /tmp/calls.fails
(
	runs=0
	fails=0
	while [ ! -f /tmp/stop_stress ]; do
		for m in fstatat-empty statx-empty access read-file; do
			abloop $m 50 /tmp/calls.f >/dev/null 2>>/tmp/calls.err || fails=$((fails + 1))
		done
		abloop read-file 50 /proc/self/cgroup >/dev/null 2>>/tmp/calls.err || fails=$((fails + 1))
		runs=$((runs + 1))
	done
	echo $runs >/tmp/calls.runs
	echo $fails >/tmp/calls.fails
) &
calls_pid=$!

nb=$(echo $VFSFAST_BACKENDS_EXPECT | wc -w)
want=$(( ${VFSFAST_TOGGLES:-1000} / (nb > 0 ? nb : 1) ))
t0=$(date +%s)
flips=0
fails=0
while [ $flips -lt "$want" ]; do
	for o in $opts; do
		echo 1 >$VF/$o/enabled || fails=$((fails + 1))
		echo 0 >$VF/$o/enabled || fails=$((fails + 1))
		flips=$((flips + 2))
	done
done
t1=$(date +%s)
touch /tmp/stop_stress
[ -n "$stress_pid" ] && wait $stress_pid
wait $calls_pid
stop_checker

t_checkv "toggle: at least the profile's flips" "$flips of $want" [ "$flips" -ge "$want" ]
t_eq "toggle: every optimization's knob flipped, no failed write" 0 $fails \
	"$flips flips across [$(echo $opts)] in $((t1 - t0))s"
t_eq "toggle: readlink results stayed exact throughout" "0 ok" "$checked"
t_check "toggle: fast path ran during the storm" [ "$(stat_of readlink hits)" -gt "$h0" ]
note "$(cat /tmp/rlloop.out)"
if [ -n "$stress_pid" ]; then
	t_checkv "toggle: stress-ng ($stressors) ran during the storm" "$(cat /tmp/stress.runs) runs" \
		[ "$(cat /tmp/stress.runs)" -gt 0 ]
	t_eq "toggle: every stress-ng run passed" 0 "$(cat /tmp/stress.fails)"
	[ -f /tmp/stress.failed ] && note "stress-ng: $(tail -n 3 /tmp/stress.failed | tr '\n' ' ')"
fi
t_checkv "toggle: the calls loop (fstatat and statx of \"\", access, open/read/close) ran, every result right" \
	"$(cat /tmp/calls.runs) rounds, $(cat /tmp/calls.fails) failed; $(tail -n 2 /tmp/calls.err 2>/dev/null | tr '\n' ' ')" \
	[ "$(cat /tmp/calls.runs)" -gt 0 -a "$(cat /tmp/calls.fails)" = 0 ]
for o in $opts; do
	t_eq "toggle: $o ends as asked (off)" 0 "$(knob $o)"
done

# The storm must leave nothing behind that changes a result.
for fs in tmpfs ext4; do
	out=$(rldiff /tmp/list.$fs)
	rc=$?
	t_checkv "toggle: differential $fs after the storm" "$(echo "$out" | tail -n1)" \
		[ $rc -eq 0 ]
done
t_eq "toggle: knob restored after rldiff" 0 "$(knob readlink)"
unload_vfsfast
