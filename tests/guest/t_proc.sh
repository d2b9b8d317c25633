# proc_pid_rcu, walks through /proc/<pid> that stay in RCU mode: status
# everywhere (the module asks the kernel's pid_revalidate() at load);
# where the kernel lacks it, differential walks knob off vs on (procdiff:
# every kind of process and entry, as root and as a user, under a
# hidepid=2 mount and in a second pid namespace), walks under process
# churn, the owner an inode takes when its task changes uid, the walks
# that leave RCU mode counted by a kprobe, and (fault-injection build) a
# task that exits and is reaped while a revalidation in RCU mode is
# parked between finding it and updating the inode.

. /lab/lib.sh; in_group t_proc || return 0

T=/sys/kernel/tracing
o=proc_pid_rcu
load_time_opt $o || return 0 2>/dev/null || exit 0

# Every differential, the churn and the forced interleaving on the
# kernel's first backend (every backend in the full profile); on the
# others, what goes through the backend: the differential as root, the
# owner check, the counts.
all=yes
per_backend VFSFAST_TREE_DIFFS || all=no

# pd TAG ARGS...: one differential (procdiff -k KNOB ARGS...).
pd() {
	tag=$1
	shift
	h0=$(stat_of $o hits)
	out=$(procdiff -k $VF/$o/enabled "$@" 2>&1)
	rc=$?
	dh=$(($(stat_of $o hits) - h0))
	t_checkv "$o: differential /proc walks knob off vs on ($tag)" \
		"$(echo "$out" | tail -n 3 | tr '\n' ' ') hits+$dh" [ $rc -eq 0 -a $dh -gt 0 ]
}
pd "as root"
mkdir -p /tmp/proch /tmp/procns
if [ $all = no ]; then :
elif mount -t proc -o hidepid=2 proc /tmp/proch; then
	pd "as a user" -u 1000
	pd "hidepid=2, as a user" -p /tmp/proch -u 1000
	pd "hidepid=2, as root" -p /tmp/proch
	umount /tmp/proch
	pd "in a second pid namespace" -n -p /tmp/procns
else
	t_fail "$o: a hidepid=2 proc mounts" "mount failed"
fi

# The owner a revalidation gives the inode when its task changed uid: a
# user may list a process's fd/ (0500) once that process is the user's.
set_knob $o 0
off=$(procdiff owner $VF/$o/enabled 0)
on=$(procdiff owner $VF/$o/enabled 1)
set_knob $o 0
t_checkv "$o: the owner follows a uid change, as stock (access of /proc/<pid>/fd as the new owner)" \
	"off: $off; on: $on" [ "$off" = "$on" -a "$off" = "owner: before=13 after=0" ]

# Walks of the newest of a stream of processes that exit at once.
[ $all = yes ] && {
set_knob $o 1
h0=$(stat_of $o hits)
f0=$(stat_of $o fallbacks)
out=$(procdiff churn ${VFSFAST_STRESS_S:-5} 2>&1)
rc=$?
set_knob $o 0
t_checkv "$o: walks under process churn: success or ENOENT, owner 0 or 1000" \
	"$(echo "$out" | tail -n 2 | tr '\n' ' ') hits+$(($(stat_of $o hits) - h0)) fallbacks+$(($(stat_of $o fallbacks) - f0))" \
	[ $rc -eq 0 ]
}

# Walks that leave RCU mode before their end (try_to_unlazy_next(), which
# lookup_fast() calls when a revalidation answers anything but 1), during
# 100 stat() calls: stock one per walk, none with the knob on.
unlazy() { # knob value, path
	set_knob $o $1
	kprobe_count try_to_unlazy_next 'comm == "procdiff"' procdiff stat 100 $2
	set_knob $o 0
}
echo 1 >$T/tracing_on
for p in /proc/self/status /proc/1/task/1/status; do
	off=$(unlazy 0 $p)
	on=$(unlazy 1 $p)
	t_checkv "$o: stat($p) stays in RCU mode (try_to_unlazy_next: stock one per walk)" \
		"100 walks: off $off, on $on" [ "${off:-0}" -ge 100 -a "${on:-1}" -eq 0 ]
done
# pid_update_inode() is only called, never hooked: a kprobe there sees
# the fast path's updates.  (When proc_pid_rcu took it over only to reach
# it, the replacement entered it past its ftrace site and the probe saw
# none of them.)  Stock's own ref-walk revalidation calls an inlined copy
# on 5.10, which no probe on the function sees.
upd() { # knob value: pid_update_inode() calls during 100 stat() walks
	set_knob $o $1
	kprobe_count pid_update_inode 'comm == "procdiff"' procdiff stat 100 /proc/self/status
	set_knob $o 0
}
off=$(upd 0)
on=$(upd 1)
t_checkv "$o: a kprobe on pid_update_inode() sees the fast path's updates (called, not hooked)" \
	"100 walks: on $on (off $off: stock's ref-walk revalidation has its own inlined copy)" \
	[ "${on:-0}" -ge 100 ]
unload_vfsfast

# Fault-injection build, the kernel's first backend: the shortcut that
# answers without updating the inode is caught by the owner check; and a
# task that exits and is reaped while a revalidation in RCU mode is
# parked between finding it and updating the inode (2 vCPUs; the walk's
# RCU read-side section keeps the task's memory, which KASAN watches on
# the debug kernels): the walk completes with one of stock's answers.
if [ $all = yes ]; then
	P=/sys/module/vfsfast/parameters
	insmod /lab/vfsfast-fi.ko enable=none ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
	echo 1 >$P/fi_pid_no_update
	bad=$(procdiff owner $VF/$o/enabled 1)
	echo 0 >$P/fi_pid_no_update
	t_checkv "$o: the owner check catches a fast path that skips pid_update_inode (fi_pid_no_update)" \
		"$bad" [ "$bad" = "owner: before=13 after=13" ]
	cp /lab/bin/procdiff /tmp/procpark
	set_knob $o 1
	sleep 1000 &
	s=$!
	stat /proc/$s/status >/dev/null
	echo procpark >$P/fi_park_pid
	/tmp/procpark stat 1 /proc/$s/status 2>/dev/null &
	w=$!
	i=0
	while [ "$(cat $P/fi_pid_parked)" = 0 ] && [ $i -lt 100 ]; do sleep 0.02; i=$((i + 1)); done
	parked=$(cat $P/fi_pid_parked)
	kill -9 $s
	wait $s 2>/dev/null
	echo >$P/fi_park_pid
	wait $w
	wrc=$?
	gone=$(stat /proc/$s/status >/dev/null 2>&1 && echo no || echo yes)
	set_knob $o 0
	t_checkv "$o: a task reaped while its revalidation is parked: the walk completes (stock's answers: 0 or ENOENT), then the entry is gone" \
		"parked $parked, walk rc $wrc, gone $gone" [ "$parked" -ge 1 -a $wrc -le 1 -a $gone = yes ]
	unload_vfsfast
fi
