# close_sync, close(2) finishing the file before it returns: status
# everywhere; where the kernel lacks it, closediff's transcript of what
# close() returns and what is visible after it (inotify events, flock and
# POSIX locks, dups, pipe and socket EOF, epoll, O_PATH, eventfd, memfd,
# directories) knob off vs on, and task_work_add() per close of a last
# reference counted by a kprobe (stock one, none with the knob on); a
# ->flush() that sees the file count stock gives it; a close() whose
# last put sleeps as long as a peer decides (a lingering TCP socket) is
# stock's, so rmmod goes through meanwhile and the close() returns
# stock's answer; and, on the fault-injection build, a close() parked
# while another holder drops its reference ends the file exactly once.

. /lab/lib.sh; in_group t_close || return 0

T=/sys/kernel/tracing
o=close_sync
load_vfsfast enable=none
oneline "$(cat $VF/$o/status)"; st=$_one
if [ "$VFSFAST_OPT_CLOSE_SYNC_UPSTREAM" != none ]; then
	t_checkv "$o: unsupported where the kernel has it upstream, saying so" "$st" \
		grep -q '^unsupported: the kernel has it upstream' $VF/$o/status
	unload_vfsfast
	return 0 2>/dev/null || exit 0
fi
t_checkv "$o: off after enable=none where the kernel lacks it" "$st" \
	[ "$(head -n 1 $VF/$o/status)" = off ]
# Opt-in: what a tracer sees at the syscall-exit stop changes.
unload_vfsfast
load_vfsfast enable=auto
t_eq "$o: opt-in, enable=auto leaves it off" 0 "$(knob $o)"
unload_vfsfast
load_vfsfast enable=none

mkdir -p /tmp/cd
for d in /tmp/cd /mnt/ext4; do
	[ -w $d ] || continue
	h0=$(stat_of $o hits)
	out=$(closediff $VF/$o/enabled $d 2>&1)
	rc=$?
	t_checkv "$o: what close() returns and what is visible after it, knob off vs on ($d)" \
		"$(echo "$out" | tail -n 3 | tr '\n' ' ') hits+$(($(stat_of $o hits) - h0))" \
		[ $rc -eq 0 -a $(($(stat_of $o hits) - h0)) -gt 0 ]
done

tw() { # knob value: task_work_add() calls during 100 open+read+close
	set_knob $o $1
	kprobe_count task_work_add 'comm == "abloop"' abloop read-file 100 /tmp/cd/f
	set_knob $o 0
}
echo data >/tmp/cd/f
echo 1 >$T/tracing_on
off=$(tw 0)
on=$(tw 1)
t_checkv "$o: no task work per close of a last reference (task_work_add: stock one per close)" \
	"1,100 closes: off $off, on $on" [ "${off:-0}" -ge 1100 -a "${on:-1}" -lt 10 ]
# ____fput() is only called, never hooked: a kprobe there attaches and
# sees every file the replacement ends, as it sees stock's task work.
# (When close_sync took it over only to reach it, the replacement entered
# it past its ftrace site and the probe saw none of those calls.)
fp() { # knob value: ____fput() calls during 100 open+read+close
	set_knob $o $1
	kprobe_count ____fput 'comm == "abloop"' abloop read-file 100 /tmp/cd/f
	set_knob $o 0
}
off=$(fp 0)
on=$(fp 1)
t_checkv "$o: a kprobe on ____fput() sees the files the fast path ends (called, not hooked)" \
	"1,100 closes: off $off, on $on" [ "${off:-0}" -ge 1100 -a "${on:-0}" -ge 1100 ]
# A ->flush() may decide by the file count (the SCSI tape driver writes
# its filemark only at 1): with the knob on it must see stock's count.
# vfsfast_flushrec's ->flush() records it; the close is the shell's.
if insmod /lab/vfsfast_flushrec.ko; then
	P=/sys/module/vfsfast_flushrec/parameters
	fc() { # knob value: the count the last ->flush() saw, and the flushes
		set_knob $o $1
		f0=$(cat $P/flushes)
		(exec 3</dev/vfsfast_flushrec && exec 3<&-)
		echo "$(cat $P/last_count) $(($(cat $P/flushes) - f0))"
		set_knob $o 0
	}
	fb0=$(stat_of $o fallbacks)
	off=$(fc 0)
	on=$(fc 1)
	fb=$(($(stat_of $o fallbacks) - fb0))
	rmmod vfsfast_flushrec
	t_checkv "$o: ->flush() sees stock's file count (closed as stock)" \
		"off: count, flushes $off; on: $on; fallbacks+$fb" \
		[ "${off%% *}" = 1 -a "$on" = "$off" -a $fb -ge 1 ]
else
	t_fail "$o: ->flush() sees stock's file count (closed as stock)" "insmod vfsfast_flushrec failed"
fi

# The final __fput() of a lingering socket sleeps as long as the peer
# decides: a socket is not a file the replacement ends itself, so the
# whole close(2) is stock's and nothing of vfsfast is on the sleeper's
# stack.  rmmod must go through at once (no module reference, no drain
# waiting for it), and the close() must still return 0 after its linger
# time.  Before vfsfast_close_bounded() the replacement slept there itself,
# holding the module, and rmmod was refused.
set_knob $o 1
closediff --linger 3 >/tmp/cd.linger 2>&1 &
lp=$!
i=0
while ! grep -q closing /tmp/cd.linger && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.5
if cat /proc/$lp/task/*/stack 2>/dev/null | grep -q vfsfast; then in_fast=yes; else in_fast=no; fi
t0=$(date +%s)
if rmmod vfsfast 2>/tmp/rmmod.err; then unloaded=yes; else unloaded=no; fi
t1=$(date +%s)
wait $lp
lrc=$?
t_checkv "$o: rmmod goes through at once while a close() of a socket sleeps in its linger (stock's close, no vfsfast frame)" \
	"in vfsfast: $in_fast, unloaded: $unloaded in $((t1 - t0)) s; $(cat /tmp/cd.linger /tmp/rmmod.err | tr '\n' ' ')" \
	[ $in_fast = no -a $unloaded = yes -a $((t1 - t0)) -le 5 ]
ms=$(sed -n 's/^closed 0 //p' /tmp/cd.linger)
t_checkv "$o: that close() returns 0 after its linger time" \
	"$(tr '\n' ' ' </tmp/cd.linger)" [ $lrc -eq 0 -a "${ms:-0}" -ge 2000 ]
grep -q '^vfsfast ' /proc/modules && { set_knob $o 0; unload_vfsfast; }

# Fault-injection build, the kernel's first backend: a thread asleep in
# read() of a tmpfs file (its buffer a userfaultfd page) drops its
# reference while close() of the descriptor is parked between
# filp_close() and the drop of the replacement's own.  Exactly one of the
# two puts must end the file, so once both are done the flock() the
# descriptor held is gone and another open takes it at once.  With the
# guard the drop itself decides (fi_close_split=0); deciding by
# file_count() before the hold and dropping after it (fi_close_split=1:
# the guard removed) leaves the file ended by nobody, its lock held for
# good, which the check must catch.
if first_backend; then
	P=/sys/module/vfsfast/parameters
	insmod /lab/vfsfast-fi.ko enable=none ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
	echo data >/tmp/clpark.f
	parked_close() { # fi_close_split
		echo $1 >$P/fi_close_split
		set_knob $o 1
		h0=$(stat_of $o hits)
		r=$(closediff --park $P /tmp/clpark.f 2>&1)
		echo "$r; hits+$(($(stat_of $o hits) - h0))"
		set_knob $o 0
		echo 0 >$P/fi_close_split
	}
	r=$(parked_close 0)
	t_checkv "$o: a close() parked while the reader drops its reference ends the file once" \
		"$r" [ "${r#parked 1, reader 1, close 0, flock after both 0;}" != "$r" ]
	r=$(parked_close 1)
	t_checkv "$o: the check catches a close() that decides by file_count() and drops after (fi_close_split)" \
		"$r" [ "${r#parked 1, reader 1, close 0, flock after both -11;}" != "$r" ]
	unload_vfsfast
fi

# A livepatch of close_fd(), which the replacement stands in for without
# hooking it (vfsfast_lp_close.ko, a real livepatch that does what the
# kernel's close_fd() does and counts its calls).  Each close(2) the fast
# path answered would step around the fix, so close_sync yields to it, in
# both load orders: the livepatch coming while close_sync is on (the
# other optimizations come back, close_sync stays yielded, naming
# close_fd and the livepatch, and every close goes through the fix), and
# the livepatch there first (enabling close_sync answers EBUSY and says
# yielded).  Once the livepatch is gone close_sync re-arms by itself.
# Before the covers list, close_sync re-armed beside the livepatch and
# the fix saw no close.  Only where the kernel has LIVEPATCH (none of
# Debian's arm64 kernels), which builds the test module.
if first_backend && [ ! -f /lab/vfsfast_lp_close.ko ]; then
	if [ "$VFSFAST_EXPECT_LIVEPATCH" = 1 ]; then
		t_fail "$o: test module vfsfast_lp_close available" "vfsfast_lp_close.ko was not built"
	else
		note "$o: a livepatch of close_fd(): not run: the kernel has no LIVEPATCH"
	fi
elif first_backend; then
	lpc=/sys/module/vfsfast_lp_close/parameters/calls
	lpc_remove() {
		echo 0 >/sys/kernel/livepatch/vfsfast_lp_close/enabled 2>/dev/null
		i=0
		while [ -e /sys/kernel/livepatch/vfsfast_lp_close ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
		rmmod vfsfast_lp_close
	}
	closes() { i=0; while [ $i -lt 20 ]; do exec 3</tmp/cd/f; exec 3<&-; i=$((i + 1)); done; }
	load_vfsfast enable=none
	set_knob $o 1
	set_knob readlink 1
	if insmod /lab/vfsfast_lp_close.ko; then
		c0=$(cat $lpc)
		h0=$(stat_of $o hits)
		closes
		r="$(head -n1 $VF/$o/status); $(knob $o); closes through the fix +$(($(cat $lpc) - c0)); hits +$(($(stat_of $o hits) - h0)); readlink $(head -n1 $VF/readlink/status)"
		t_checkv "$o: yields to a livepatch of close_fd() it stands in for, and every close goes through the fix" \
			"$r" [ "${r#yielded: close_fd taken by vfsfast_lp_close; 0; closes through the fix +}" != "$r" \
			-a "$(($(cat $lpc) - c0))" -ge 20 -a "$(stat_of $o hits)" = "$h0" \
			-a "$(head -n1 $VF/readlink/status)" = active ]
		lpc_remove
		t_eq "$o: re-armed once the livepatch of close_fd() is gone" "active" "$(head -n1 $VF/$o/status)"
	else
		t_fail "$o: yields to a livepatch of close_fd() it stands in for" "insmod vfsfast_lp_close failed"
	fi
	set_knob $o 0
	unload_vfsfast
	# The livepatch first: found in /sys/kernel/livepatch at enable.
	if insmod /lab/vfsfast_lp_close.ko; then
		load_vfsfast enable=none
		r="$(wr $VF/$o/enabled 31); $(head -n1 $VF/$o/status)"
		t_eq "$o: enabling beside a livepatch of close_fd() loaded before vfsfast: EBUSY, yielded" \
			"err EBUSY; yielded: close_fd taken by vfsfast_lp_close" "$r"
		lpc_remove
		unload_vfsfast
	else
		t_fail "$o: enabling beside a livepatch of close_fd() loaded before vfsfast" "insmod vfsfast_lp_close failed"
	fi
fi
