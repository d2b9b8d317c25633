# Faults and races forced with the fault-injection build (vfsfast-fi.ko)
# and vfsfast_kfrace.ko, each ending with the module unloaded (t_broken
# has the ones that pin it for good):
#  - a detach that fails during rmmod itself: module_exit cannot refuse,
#    so it retries until the site lets go, and calls through the site
#    after the unload reach the stock code, not freed text;
#  - a task the quiesce tracks exits between the quiesce's exit test and
#    its look at the stack: it must count as outside, its stack unread;
#  - kernfs_rcu's attribute generation crossing its sign change must not
#    turn every permission and getattr into a fallback;
#  - a sysfs writer queued while the livepatch scan's readdir holds
#    sysfs's kernfs_rwsem must not deadlock the scan;
#  - a target GCC split otherwise (its part entered with one more
#    argument) must leave the optimization unsupported before anything
#    calls the part, and the module loaded.

. /lab/lib.sh; in_group t_fault || return 0

export LD_LIBRARY_PATH=/lib/$VFSFAST_MULTIARCH:/usr/lib/$VFSFAST_MULTIARCH
export PATH=$PATH:/usr/bin

if [ ! -f /lab/vfsfast-fi.ko ]; then
	t_fail "fault: fault-injection build available" "vfsfast-fi.ko was not built"
	return 0 2>/dev/null || exit 0
fi
P=/sys/module/vfsfast/parameters
CG=/sys/fs/cgroup
DEEP=/sys/devices/system/cpu/cpu0/topology/core_id
load_fi() {
	insmod /lab/vfsfast-fi.ko ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND} "$@"
}
gone() { ! grep -q '^vfsfast ' /proc/modules; }

# The kernel's kernfs knob: kernfs on 5.10, kernfs_rcu on 6.12 and 7.2.
load_fi enable=none
KN=$(kernfs_knob)
rmmod vfsfast
[ -n "$KN" ] || note "fault: no kernfs knob on this kernel: its checks are left out"

# Every part GCC split off a target (<function>.part.0, where this
# kernel has one) seen as entered with one more argument than its
# function takes (fi_split_extra): the optimization is unsupported,
# saying so, and the module loads; where the target is not split, the
# check does not apply.
split=
for spec in "getname getname_flags" "lookup_exec inode_permission"; do
	set -- $spec
	eval "up=\$VFSFAST_OPT_$(echo $1 | tr a-z A-Z)_STATUS_UPSTREAM"
	eval "lacks=\$VFSFAST_OPT_$(echo $1 | tr a-z A-Z)_LACKS"
	[ "$up" = none ] && [ -z "$lacks" ] || continue
	grep -q " $2\.part\.0\$" /proc/kallsyms && split="$split $1:$2"
done
if [ -n "$split" ]; then
	got=
	want=
	if load_fi enable=none fi_split_extra=1; then
		for s in $split; do
			want="$want ${s%%:*}: unsupported: ${s#*:}.part.0 entered with more arguments than the function takes;"
			got="$got ${s%%:*}: $(head -n 1 $VF/${s%%:*}/status | sed 's/does not take [^:]*: //');"
		done
		unload_vfsfast
	else
		got="insmod failed"
	fi
	t_eq "fault: a part split off a target entered with one more argument than its function takes: unsupported, saying so, and the module loads" \
		"$want" "$got"
else
	note "fault: no optimization's target is a split part here: fi_split_extra has nothing to check"
fi

# rmmod while a detach fails 3 times.  Before the retry, rmmod returned 0
# at once and the next call through the site oopsed (6.12's ftrace
# backend in ftrace_ops_trampoline, 5.10's direct in the module's former
# text).  A checker reads links throughout.
need_links
want=$(readlink /tmp/links/l0100)
for spec in "readlink vfs_readlink" ${KN:+"$KN kernfs_dop_revalidate"}; do
	set -- $spec
	load_fi enable=$1
	st=$(head -n 1 $VF/$1/status)
	dmesg -c >/dev/null
	start_checker
	echo $2 >$P/fail_detach
	echo 3 >$P/fail_detach_times
	# Refused (in use) while the checker's readlink() holds the module:
	# that is before module_exit, so no detach has run; again, as always.
	unload_vfsfast
	rc=$?
	g=0; gone && g=1
	logged="$(dmesg | grep -c "vfsfast: $1: broken: $2: detach failed (-5); unloading waits until it lets go") $(dmesg | grep -c "vfsfast: 1 target(s) still hooked ($2) after 0 ms") $(dmesg | grep -c 'vfsfast: every target unhooked after [0-9]* ms of retries')"
	bad=
	i=0
	while [ $i -lt 200 ]; do
		[ "$(readlink /tmp/links/l0100)" = "$want" ] || { bad="$bad readlink;"; break; }
		i=$((i + 1))
	done
	kfs stat 200 $DEEP >/dev/null || bad="$bad stat of $DEEP;"
	[ -e /sys/kernel/vfsfast ] && bad="$bad /sys/kernel/vfsfast still there;"
	stop_checker
	t_eq "fault: $1: a detach of $2 failing 3 times during rmmod: rmmod retries until it lets go, and the site then leads to the stock code" \
		"active|0 1|1 1 1|0 ok|" "$st|$rc $g|$logged|$checked|$bad" \
		"$(dmesg | grep 'vfsfast: every target unhooked')"
	gone || rmmod vfsfast 2>/dev/null
done

# The same for an observer on the observers' shared ftrace ops (backend
# auto lets the group be used): the group's detach fails 3 times, so every
# observer stays hooked, routed to the stock code, and rmmod retries until
# the ops lets go.  Before the group had a fault of its own, a failure
# there was not seen at all.  Once, with the first backend's pass.
if [ -n "$KN" ] && first_backend; then
	insmod /lab/vfsfast-fi.ko enable=$KN
	n=$(sed -n 's/^observers: ftrace, shared by //p' $VF/$KN/backend)
	dmesg -c >/dev/null
	echo kernfs_setattr >$P/fail_detach
	echo 3 >$P/fail_detach_times
	unload_vfsfast
	rc=$?
	g=0; gone && g=1
	# Where every site walks the ops list the observers have no group:
	# every target is on the one shared ops, and only the failing site
	# stays in its filter.
	stay=${n:-none}
	want=yes
	what="the observers' shared ops failing to detach 3 times during rmmod: its ${n:-no} observers stay hooked"
	if [ "$VFSFAST_EXPECT_FTRACE_LIST_WALK" = 1 ]; then
		stay=1
		want=none
		what="kernfs_setattr failing to leave the shared ops 3 times during rmmod: that site alone stays hooked"
	fi
	logged="$(dmesg | grep -c "vfsfast: $KN: broken: kernfs_setattr: detach failed (-5); unloading waits until it lets go") $(dmesg | grep -c "vfsfast: $stay target(s) still hooked (kernfs_[a-z_]*) after 0 ms") $(dmesg | grep -c 'vfsfast: every target unhooked after [0-9]* ms of retries')"
	bad=
	kfs stat 200 $DEEP >/dev/null || bad="$bad stat of $DEEP;"
	[ -e /sys/kernel/vfsfast ] && bad="$bad /sys/kernel/vfsfast still there;"
	t_eq "fault: $KN: $what until it lets go, then every site leads to the stock code" \
		"$want|0 1|1 1 1|" "$([ "${n:-0}" -ge 2 ] && echo yes || echo "${n:-none}")|$rc $g|$logged|$bad" \
		"$(dmesg | grep 'vfsfast: .*still hooked' | head -n 1)"
	gone || rmmod vfsfast 2>/dev/null
fi

# A task the quiesce tracks (a kernfs_rename_ns() parked by kfrace, so
# that the enable waits for it) exits while the quiesce is held between
# its exit test and its look at the task (park_quiesce).  Its stack is
# freed then: the quiesce must count it outside without reading it.
# Before the fix it found no stack, called it unknown and unwound it from
# its saved stack pointer, in freed memory.
if [ -n "$KN" ] && [ -f /lab/vfsfast_kfrace.ko ]; then
	load_fi enable=none
	insmod /lab/vfsfast_kfrace.ko
	bad=
	for r in 1 2 3; do
		kf_do add vfqold$r || { bad="$bad setup $r: $(cat $KF/state);"; continue; }
		echo kfrace >$P/park_quiesce
		echo vfqold$r:vfqnew$r >$KF/rename
		kf_wait parked || { bad="$bad $r: rename not parked: $(cat $KF/state);"; continue; }
		rm -f /tmp/fq.en
		(echo 1 >$VF/$KN/enabled; echo $? >/tmp/fq.en) &
		enpid=$!
		w=0
		while [ "$(cat $P/quiesce_verdict)" != parked ] && [ $w -lt 200 ]; do
			sleep 0.05
			w=$((w + 1))
		done
		[ "$(cat $P/quiesce_verdict)" = parked ] || bad="$bad $r: quiesce not parked: $(cat $P/quiesce_verdict);"
		echo 1 >$KF/release
		kf_wait "done 0" || bad="$bad $r: kfrace: $(cat $KF/state);"
		wait $enpid
		v=$(cat $P/quiesce_verdict)
		[ "$v" = "out: exited, stack freed" ] || bad="$bad $r: verdict '$v';"
		[ "$(cat /tmp/fq.en) $(head -n 1 $VF/$KN/status)" = "0 active" ] ||
			bad="$bad $r: enable: $(cat /tmp/fq.en) $(head -n 1 $VF/$KN/status);"
		[ -e /sys/kernel/vfqnew$r ] && [ ! -e /sys/kernel/vfqold$r ] ||
			bad="$bad $r: names after the rename;"
		echo "" >$P/park_quiesce
		set_knob $KN 0
	done
	t_eq "fault: $KN: a tracked task that exits while the quiesce is held before its look counts outside, its freed stack unread, 3 times" \
		"" "$bad"
	echo 1 >$KF/remove
	rmmod vfsfast_kfrace
	unload_vfsfast
elif [ -n "$KN" ]; then
	t_fail "fault: test module vfsfast_kfrace available" "vfsfast_kfrace.ko was not built"
fi

# kernfs_rcu's attribute generation started 48 changes below its sign
# change (krcu_attr_gen_start), then moved past it by chmods of one
# cgroup file: the stat of a sysfs path that no change touched must still
# be answered without falling back.  Before, a negative generation read
# as "a change in progress" until it wrapped again, 2^31 changes later.
if [ "$KN" = kernfs_rcu ]; then
	load_fi enable=none
	mkdir -p $CG
	grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
	mkdir -p $CG/vfgen
	echo 2147483600 >$P/krcu_attr_gen_start
	set_knob kernfs_rcu 1
	f0=$(stat_of kernfs_rcu fallbacks)
	kfs stat 200 $DEEP >/dev/null
	f1=$(stat_of kernfs_rcu fallbacks)
	i=0
	while [ $i -lt 100 ]; do
		chmod 0644 $CG/vfgen/cgroup.procs
		i=$((i + 1))
	done
	f2=$(stat_of kernfs_rcu fallbacks)
	kfs stat 200 $DEEP >/dev/null
	f3=$(stat_of kernfs_rcu fallbacks)
	t_checkv "fault: kernfs_rcu: 200 stats after the attribute generation's sign change fall back no more than before it" \
		"fallbacks before $((f1 - f0)), after $((f3 - f2))" [ $((f3 - f2)) -le $((f1 - f0 + 5)) ]
	set_knob kernfs_rcu 0
	rmdir $CG/vfgen
	unload_vfsfast
fi
# The livepatch scan (lpscan.c) reads /sys/kernel/livepatch with
# iterate_dir().  Since upstream 6.15 (7.2 here, and any stable kernel
# that took the change) kernfs_fop_readdir() holds the root's
# kernfs_rwsem across dir_emit().
# The scan's actor is held there (fi_park_lp_scan) while a kfrace kthread
# adds a sysfs directory, whose down_write() queues behind it.  Before the
# fix the actor looked each name up itself, a second down_read() that
# waits behind the queued writer, which waits for the first: the enable,
# the writer and every sysfs lookup after them hung for good (CI's 7.2
# hung-task panic in t_livepatch, a livepatch freeing its sysfs files in
# a kworker while vfsfast scanned).  On a kernel that drops the lock
# around dir_emit() (5.10) the writer does not queue: the diagnostic says.
if [ -f /lab/vfsfast_lp.ko ] && [ -f /lab/vfsfast_kfrace.ko ]; then
	name="fault: livepatch scan: a sysfs writer queued behind its readdir: the enable and the writer both finish"
	insmod /lab/vfsfast_kfrace.ko
	insmod /lab/vfsfast_lp.ko
	load_fi enable=none
	cp "$(command -v wr)" /tmp/lpscan
	echo lpscan >$P/fi_park_lp_scan
	# Once the writer queues, every sysfs path walk waits for it (the
	# stock kernfs_dop_revalidate() takes the lock): the hold ends through
	# a descriptor opened now, and until then only /proc is read.
	exec 9>$P/fi_park_lp_scan
	rm -f /tmp/lpscan.out
	/tmp/lpscan $VF/readlink/enabled 310a >/tmp/lpscan.out &
	scan=$!
	w=0
	while [ "$(cat $P/fi_lp_scan_parked)" = 0 ] && [ $w -lt 200 ]; do sleep 0.05; w=$((w + 1)); done
	parked=$(cat $P/fi_lp_scan_parked)
	echo vflpscan >$KF/add
	kf_wait parked || note "fault: livepatch scan: kfrace's add not parked: $(cat $KF/state)"
	kpid=$(grep -lx kfrace /proc/[0-9]*/comm 2>/dev/null | head -n 1)
	kpid=${kpid#/proc/} kpid=${kpid%/comm}
	echo 1 >$KF/release
	# The writer either queues (asleep in the lock: kfrace's frame for it,
	# kfrace_lock_*, tops its kernel stack) or, on a kernel that drops
	# the lock around dir_emit(), adds its directory and exits.
	st=$(parked_stack "${kpid:-none}" kfrace_lock_)
	case $st in
	*kfrace_lock_*) writer=queued ;;
	*) if [ -n "$kpid" ] && [ ! -e /proc/$kpid ]; then
		writer=done
	   else
		writer="unseen (${kpid:-no kfrace thread}: $(echo "$st" | stack_funcs))"
	   fi ;;
	esac
	echo >&9
	exec 9>&-
	w=0
	while kill -0 $scan 2>/dev/null && [ $w -lt 600 ]; do sleep 0.05; w=$((w + 1)); done
	if kill -0 $scan 2>/dev/null; then
		t_fail "$name" "parked $parked, writer $writer; the enable still waits 30 s after the hold ended: deadlocked; blocked: $(blocked_tasks)"
		return 0 2>/dev/null || exit 0
	fi
	kf_wait "done"
	case $writer in queued | done) seen="queued or done" ;; *) seen=$writer ;; esac
	t_eq "$name" "held|writer queued or done|err EBUSY|done 0" \
		"$([ "$parked" -ge 1 ] && echo held)|writer $seen|$(cat /tmp/lpscan.out)|$(cat $KF/state)" \
		"parked $parked, writer $writer while the scan was held (pid $kpid)"
	echo 1 >$KF/remove
	rmmod vfsfast_kfrace
	unload_vfsfast
	lp_remove
elif [ ! -f /lab/vfsfast_lp.ko ] && [ "$VFSFAST_EXPECT_LIVEPATCH" = 1 ]; then
	t_fail "fault: test module vfsfast_lp available" "vfsfast_lp.ko was not built"
elif [ ! -f /lab/vfsfast_lp.ko ]; then
	note "fault: the kfrace window with a livepatch: not run: the kernel has no LIVEPATCH"
fi
t_check "fault: the module is unloaded at the end" gone
