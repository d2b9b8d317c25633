# A livepatch always wins (vfsfast_lp.ko: a real livepatch of
# vfs_readlink that counts the calls it serves), in both load orders:
# - vfsfast first: the livepatch loads, vfsfast says "yielded" and logs
#   it, the livepatch serves every readlink(), and vfsfast re-arms by itself
#   once the livepatch is disabled and removed;
# - livepatch first: vfsfast loads, cannot hook, and arms itself when the
#   livepatch goes.
# Results stay exact throughout (the checker runs the whole time).

. /lab/lib.sh; in_group t_livepatch || return 0

# A kernel without LIVEPATCH (Debian's arm64 ones) has nothing to yield
# to: the group checks only that the lab read its configuration right.
if [ "$VFSFAST_EXPECT_LIVEPATCH" != 1 ]; then
	t_check "livepatch: no /sys/kernel/livepatch, as the kernel's configuration says" \
		[ ! -d /sys/kernel/livepatch ]
	note "t_livepatch: not run: the kernel has no LIVEPATCH"
	return 0
fi

LP=/sys/kernel/livepatch/vfsfast_lp
lp_calls() { cat /sys/module/${1:-vfsfast_lp}/parameters/calls; }

# Wait (up to 3 minutes) until livepatch $1's transition has finished:
# another livepatch cannot be enabled while one is in transition (EBUSY).
lp_settled() {
	i=0
	while [ "$(cat /sys/kernel/livepatch/$1/transition 2>/dev/null)" = 1 ] && [ $i -lt 1800 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# Whether readlink's fast path runs: one call moves the hit count.
fast_path_runs() {
	h0=$(stat_of readlink hits)
	readlink /tmp/links/l0100 >/dev/null
	[ "$(stat_of readlink hits)" -gt "$h0" ]
}

# The "vfsfast: readlink: ..." lines logged since the last call.
vf_log() { dmesg -c | sed -n 's/.*vfsfast: readlink: //p'; }

if [ ! -f /lab/vfsfast_lp.ko ]; then
	t_fail "livepatch: test module available" "vfsfast_lp.ko was not built"
	return 0 2>/dev/null || exit 0
fi

need_links
load_vfsfast enable=readlink
start_checker
dmesg -c >/dev/null
t_check "livepatch loads while vfsfast holds vfs_readlink" insmod /lab/vfsfast_lp.ko
t_eq "vfsfast yielded: status, enabled, requested" \
	"yielded: vfs_readlink taken by vfsfast_lp 0 requested: on" \
	"$(head -n1 $VF/readlink/status) $(knob readlink) $(grep requested: $VF/readlink/status)"
t_eq "one log line per state change: yielding, then yielded" \
	"yielding to livepatch vfsfast_lp while it loads|yielded: vfs_readlink taken by vfsfast_lp" \
	"$(vf_log | paste -sd '|')"
c0=$(lp_calls)
h0=$(stat_of readlink hits)
r=$(readlink /tmp/links/l0100)
t_eq "the livepatch serves readlink(), vfsfast does not" \
	"$(readlink /mnt/ext4/links/l0100) yes $h0" \
	"$r $([ "$(lp_calls)" -gt "$c0" ] && echo yes) $(stat_of readlink hits)"
t_eq "enabling while yielded fails with EBUSY and logs one line" "err EBUSY 1" \
	"$(wr $VF/readlink/enabled 31) $(vf_log | grep -c 'enable refused: vfs_readlink: held by another ftrace user')"
lp_remove
t_eq "livepatch gone: vfsfast re-armed by itself, same backend, one log line" \
	"active 1 $VFSFAST_BACKEND|re-armed ($VFSFAST_BACKEND) after livepatch vfsfast_lp" \
	"$(head -n1 $VF/readlink/status) $(knob readlink) $(head -n1 $VF/readlink/backend)|$(vf_log | paste -sd '|')"
t_check "... and its fast path runs again" fast_path_runs
stop_checker
t_eq "vfsfast first: results exact throughout" "0 ok" "$checked"
unload_vfsfast

# The livepatch loaded first.
insmod /lab/vfsfast_lp.ko
start_checker
dmesg -c >/dev/null
load_vfsfast enable=readlink
t_eq "livepatch present: vfsfast loads, says why readlink is off, still wants it" \
	"conflict: vfs_readlink: held by another ftrace user, or ftrace_enabled is 0 requested: on 0" \
	"$(head -n1 $VF/readlink/status | sed 's/ (.*//') $(grep requested: $VF/readlink/status) $(knob readlink)"
t_eq "... in one log line" 1 "$(vf_log | grep -c 'enable refused: vfs_readlink: held by another ftrace user')"
c0=$(lp_calls)
readlink /tmp/links/l0100 >/dev/null
t_check "... and the livepatch serves readlink()" [ "$(lp_calls)" -gt "$c0" ]
lp_remove
t_eq "livepatch gone: vfsfast arms itself" \
	"active 1|re-armed ($VFSFAST_BACKEND) after livepatch vfsfast_lp" \
	"$(head -n1 $VF/readlink/status) $(knob readlink)|$(vf_log | paste -sd '|')"
stop_checker
t_eq "livepatch first: results exact throughout" "0 ok" "$checked"

# Off by request: a livepatch coming and going changes nothing.
set_knob readlink 0
dmesg -c >/dev/null
insmod /lab/vfsfast_lp.ko
lp_remove
t_eq "readlink off: a livepatch's visit leaves it off and logs nothing" \
	"off 0|" "$(head -n1 $VF/readlink/status) $(knob readlink)|$(vf_log | paste -sd '|')"
unload_vfsfast

# A cumulative livepatch: P2 (replace=true) takes vfs_readlink over from
# P1, P1's module goes, then P2 is disabled and goes.  status names the
# livepatch holding the function at every step, and vfsfast re-arms only
# when the last one is gone; readlink() stays exact throughout.  Its three
# transitions take three minutes a pass on 6.12 under TCG, and what it
# checks (lpscan.c's holder, yield.c's re-arm) is the same for every backend:
# the ci and quick profiles run it on the kernel's first backend only
# (VFSFAST_LP_CUMULATIVE=0), the full profile on every backend.
if ! per_backend VFSFAST_LP_CUMULATIVE; then
	note "cumulative livepatch: ran on the first backend (VFSFAST_LP_CUMULATIVE=0)"
elif [ -f /lab/vfsfast_lp2.ko ]; then
	load_vfsfast enable=readlink
	start_checker
	dmesg -c >/dev/null
	insmod /lab/vfsfast_lp.ko
	s1=$(head -n1 $VF/readlink/status)
	lp_settled vfsfast_lp
	insmod /lab/vfsfast_lp2.ko
	s2=$(head -n1 $VF/readlink/status)
	lp_gone vfsfast_lp
	c0=$(lp_calls vfsfast_lp2)
	readlink /tmp/links/l0100 >/dev/null
	served=$([ "$(lp_calls vfsfast_lp2)" -gt "$c0" ] && echo yes)
	rmmod vfsfast_lp
	s3="$(head -n1 $VF/readlink/status) $(knob readlink)"
	lp_remove vfsfast_lp2
	s4="$(head -n1 $VF/readlink/status) $(knob readlink) $(head -n1 $VF/readlink/backend)"
	t_eq "cumulative livepatch: status names the holder at each step: P1, P2 (replace), P2 after P1's module is gone, active once P2 is gone" \
		"yielded: vfs_readlink taken by vfsfast_lp|yielded: vfs_readlink taken by vfsfast_lp2|yes|yielded: vfs_readlink taken by vfsfast_lp2 0|active 1 $VFSFAST_BACKEND" \
		"$s1|$s2|$served|$s3|$s4"
	t_eq "cumulative livepatch: re-armed once, after the last livepatch went" \
		"re-armed ($VFSFAST_BACKEND) after livepatch vfsfast_lp2" "$(vf_log | grep re-armed | paste -sd '|')"
	t_check "cumulative livepatch: the fast path runs again" fast_path_runs
	stop_checker
	t_eq "cumulative livepatch: results exact throughout" "0 ok" "$checked"
	# Whatever failed above, leave no livepatch for the groups after.
	for lp in vfsfast_lp2 vfsfast_lp; do
		[ -e /sys/module/$lp ] && lp_remove $lp
	done
	unload_vfsfast
else
	t_fail "cumulative livepatch: test module available" "vfsfast_lp2.ko was not built"
fi
