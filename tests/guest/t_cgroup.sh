# proc_cgroup, /proc/<pid>/cgroup without cgroup_mutex: status everywhere
# (the module asks the kernel's proc_cgroup_show() at load, holding
# cgroup_mutex); where the kernel lacks it, differentials knob off vs on
# of every process's file (kernel threads, processes in nested cgroups, a
# zombie whose cgroup was removed: " (deleted)") as root, as a user and
# from a cgroup namespace, with a named v1 hierarchy too (stock answers);
# cgroup_mutex acquisitions per read counted by a kprobe; reads of a task
# moved back and forth while cgroups are made and removed and a named v1
# hierarchy comes and goes; and (fault-injection build) a read parked
# while a hierarchy is mounted and the task moved, with the guard that
# keeps the one-hierarchy test and the line in one css_set_lock section,
# and without it, and one parked while a v1 root is destroyed.

. /lab/lib.sh; in_group t_cgroup || return 0


T=/sys/kernel/tracing
o=proc_cgroup
CG=/sys/fs/cgroup
V1=/tmp/vfcg1
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
load_time_opt $o || return 0 2>/dev/null || exit 0

all=yes
per_backend VFSFAST_TREE_DIFFS || all=no

# Other groups leave cgroup v1 hierarchies mounted (t_kernfs's named
# one), which send every read to stock: unmount them, and wait for the
# kernel to tear them down (asynchronously, once their last cgroup goes).
v1_gone() {
	for m in $(awk '$3 == "cgroup" { print $2 }' /proc/mounts); do umount $m; done
	i=0
	while grep -qv '^0::' /proc/self/cgroup && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	! grep -qv '^0::' /proc/self/cgroup
}
v1_gone || note "$o: cgroup v1 hierarchies remain: $(grep -v '^0::' /proc/self/cgroup | tr '\n' ' ')"

# The processes: in nested cgroups, one in the root, a zombie (the child
# of a sleep that never reaps) whose cgroup is removed after it died.
rmdir $CG/vfg/z $CG/vfg/a/b $CG/vfg/a $CG/vfg/c $CG/vfg 2>/dev/null
mkdir -p $CG/vfg/a/b $CG/vfg/c $CG/vfg/z
pids=
for d in vfg/a vfg/a/b vfg/c; do
	sleep 1000 &
	echo $! >$CG/$d/cgroup.procs
	pids="$pids $!"
done
sh -c "echo \$\$ >$CG/vfg/z/cgroup.procs; (exit 0) & exec sleep 1000" &
zp=$!
pids="$pids $zp"
sleep 0.5
echo $zp >$CG/vfg/c/cgroup.procs
rmdir $CG/vfg/z
zombie=$(for s in /proc/[0-9]*/stat; do
	awk -v pp=$zp '$4 == pp && $3 == "Z" { print $1 }' $s 2>/dev/null; done)
t_checkv "$o: a zombie whose cgroup was removed reads as deleted" \
	"zombie ${zombie:-none}: $(cat /proc/${zombie:-0}/cgroup 2>&1)" \
	grep -qx '0::/vfg/z (deleted)' /proc/${zombie:-0}/cgroup

# Every process's file, through PREFIX ("", "runas 1000", a cgroup
# namespace rooted at vfg/a), knob off, on, off, on: the two off listings
# give the volatile entries (processes that came or went), which are left
# out; the rest must be equal byte for byte.
cgdump() {
	"$@" sh -c 'for p in /proc/[0-9]*; do
		printf "%s: %s\n" "${p#/proc/}" "$(cat $p/cgroup 2>&1 | tr "\n" "|")"
	done' | sort
}
cgdiff() { # TAG PREFIX...
	ft=$(echo "$1" | tr -c 'a-z0-9\n' _)
	shift
	h0=$(stat_of $o hits)
	for x in a b c d; do
		case $x in a|c) set_knob $o 0 ;; *) set_knob $o 1 ;; esac
		cgdump "$@" >/tmp/cg.$ft.$x
	done
	set_knob $o 0
	dh=$(($(stat_of $o hits) - h0))
	# Processes in all four listings whose off listings agree: equal,
	# else a mismatch; "compared mismatches" on stdout.
	res=$(awk '{ k = $1; v[FILENAME, k] = $0; seen[k]++ }
		END {
			for (k in seen) {
				if (seen[k] != 4 || v[A, k] != v[C, k]) continue
				n++
				if (v[A, k] != v[B, k] || v[A, k] != v[D, k]) {
					bad++
					print "MISMATCH " v[A, k] " / " v[B, k] " / " v[D, k] > "/dev/stderr"
				}
			}
			print n + 0, bad + 0
		}' A=/tmp/cg.$ft.a B=/tmp/cg.$ft.b C=/tmp/cg.$ft.c D=/tmp/cg.$ft.d \
		/tmp/cg.$ft.a /tmp/cg.$ft.b /tmp/cg.$ft.c /tmp/cg.$ft.d 2>/tmp/cg.$ft.err)
	n=${res% *} bad=${res#* }
}

# cgdiff_check TAG WANT_HITS PREFIX...: one differential and its result.
cgdiff_check() {
	tag=$1 want=$2
	shift 2
	cgdiff "$tag" "$@"
	t_checkv "$o: /proc/<pid>/cgroup of every process knob off vs on, byte for byte ($tag)" \
		"$n processes, $bad mismatches, hits+$dh $(head -c 300 /tmp/cg.$ft.err)" \
		[ "$bad" = 0 -a "$n" -ge 20 -a \( "$want" = 0 -o "$dh" -ge "$n" \) ]
}

cgdiff_check "as root" 1
if [ $all = yes ]; then
	cgdiff_check "as a user" 1 /lab/bin/runas 1000
	# A cgroup namespace rooted at vfg/a: paths relative to it ("/b",
	# "/../c", "/.." for the root).
	cgdiff_check "in a cgroup namespace" 1 /lab/bin/runas -C $CG/vfg/a
	t_checkv "$o: paths relative to the reader's cgroup namespace" \
		"$(grep "^$zp:" /tmp/cg.in_a_cgroup_namespace.a)" \
		grep -q "^$zp: 0::/../c|" /tmp/cg.in_a_cgroup_namespace.a
	# With a named v1 hierarchy every read is stock's (counted as a
	# fallback): the same listings, two lines per process.
	mkdir -p $V1
	if mount -t cgroup -o none,name=vfcg cgroup $V1; then
		f0=$(stat_of $o fallbacks)
		cgdiff_check "a named v1 hierarchy mounted: stock answers" 0
		f1=$(stat_of $o fallbacks)
		t_checkv "$o: with a v1 hierarchy every read goes to stock" \
			"hits+$dh, fallbacks+$((f1 - f0))" [ "$dh" = 0 -a $((f1 - f0)) -ge "$n" ]
		v1_gone || t_fail "$o: the named v1 hierarchy goes at umount" \
			"$(grep -v '^0::' /proc/self/cgroup | tr '\n' ' ')"
	else
		t_fail "$o: a named v1 hierarchy mounts" "mount failed"
	fi
fi

# cgroup_mutex acquisitions during 100 reads of /proc/self/cgroup,
# counted by a kprobe event on mutex_lock() filtered on the mutex's
# address and on the reading command: stock one per read, none on.
cmutex=$(awk '$3 == "cgroup_mutex" { print $1 }' /proc/kallsyms)
cslock=$(awk '$3 == "css_set_lock" { print $1 }' /proc/kallsyms)
if [ -z "$cmutex" ]; then
	# No KALLSYMS_ALL (arm64 5.10, 6.1): where the test build's setup
	# found them, read from the code (module/arch/arm64/site.c).
	grep -q '^vfsfast ' /proc/modules && unload_vfsfast
	insmod /lab/vfsfast-fi.ko enable=none
	read -r cmutex cslock </sys/module/vfsfast/parameters/fi_cg_locks
	note "$o: kallsyms names no variables; setup found cgroup_mutex at $cmutex, css_set_lock at $cslock"
	unload_vfsfast
	load_vfsfast enable=none
fi
t_checkv "$o: cgroup_mutex and css_set_lock known to the test (kallsyms or the test build's setup)" \
	"cgroup_mutex $cmutex, css_set_lock $cslock" [ -n "$cmutex" -a -n "$cslock" ]
mlock=mutex_lock
grep -q " mutex_lock_nested\$" /proc/kallsyms && mlock=mutex_lock_nested
reads() { i=0; while [ $i -lt 100 ]; do cat /proc/self/cgroup; i=$((i + 1)); done >/dev/null; }
mcount() { # knob value
	set_knob $o $1
	kprobe_count "$mlock lock=\$arg1:u64" "lock == 0x$cmutex && comm == \"cat\"" reads
	set_knob $o 0
}
echo 1 >$T/tracing_on
h0=$(stat_of $o hits)
off=$(mcount 0)
h1=$(stat_of $o hits)
on=$(mcount 1)
h2=$(stat_of $o hits)
t_checkv "$o: no cgroup_mutex per /proc/self/cgroup read (stock: one per read)" \
	"100 reads: off $off, on $on; hits off +$((h1 - h0)), on +$((h2 - h1))" \
	[ "${off:-0}" -ge 100 -a "${on:-1}" = 0 -a $((h2 - h1)) -ge 100 ]

# Reads of a task moved between two cgroups, while cgroups are made and
# removed and (full runs, first backend) a named v1 hierarchy is mounted
# and unmounted: every answer is one a stock read could give.
set -- $pids
mover=$1
set_knob $o 1
rm -f /tmp/cg.stop
(
	while [ ! -f /tmp/cg.stop ]; do
		echo $mover >$CG/vfg/c/cgroup.procs
		mkdir $CG/vfg/t 2>/dev/null
		echo $mover >$CG/vfg/a/cgroup.procs
		rmdir $CG/vfg/t 2>/dev/null
	done
) &
churn=$!
v1churn=
if [ $all = yes ]; then
	(
		while [ ! -f /tmp/cg.stop ]; do
			mount -t cgroup -o none,name=vfcc cgroup $V1 && umount $V1
		done
	) &
	v1churn=$!
fi
h0=$(stat_of $o hits)
f0=$(stat_of $o fallbacks)
end=$(($(date +%s) + ${VFSFAST_STRESS_S:-5}))
reads=0 bad=0 badv=
while [ "$(date +%s)" -lt $end ]; do
	for r in 1 2 3 4 5 6 7 8 9 10; do
		v=$(tr '\n' '|' </proc/$mover/cgroup)
		case "$v" in
		"0::/vfg/a|" | "0::/vfg/c|" | [1-9]*":name=vfcc:/|0::/vfg/a|" | \
			[1-9]*":name=vfcc:/|0::/vfg/c|") ;;
		*) bad=$((bad + 1)) badv="$v" ;;
		esac
		reads=$((reads + 1))
	done
done
touch /tmp/cg.stop
wait $churn $v1churn
set_knob $o 0
t_checkv "$o: reads of a task moved between cgroups, during mkdir/rmdir${v1churn:+ and v1 mount/umount}: each a stock answer" \
	"$reads reads, $bad bad${badv:+ (last: $badv)}, hits+$(($(stat_of $o hits) - h0)), fallbacks+$(($(stat_of $o fallbacks) - f0))" \
	[ $bad = 0 -a $reads -gt 0 ]
v1_gone >/dev/null
unload_vfsfast

# Fault-injection build, the kernel's first backend: a read parked while
# a named v1 hierarchy is mounted and then the task is moved.  A stock
# read gives the task's old cgroup alone, or the new hierarchy's line
# with the old or the new cgroup; never the new cgroup alone.  Parked
# before its css_set_lock section (fi_cg_split=0) the fast path sees the
# second hierarchy and answers as stock; parked between the
# one-hierarchy test and the line (fi_cg_split=1: the guard removed) it
# gives the new cgroup alone, which the check must catch.
if [ $all = yes ]; then
	P=/sys/module/vfsfast/parameters
	insmod /lab/vfsfast-fi.ko enable=none ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
	cp /lab/bin/runas /tmp/cgpark
	# The mover's file read by a task named cgpark, in the background ($w),
	# once it is parked ($parked: the holds it made, 1 when it did).
	start_parked() {
		p0=$(cat $P/fi_cg_parked)
		echo cgpark >$P/fi_cg_park
		/tmp/cgpark -c /proc/$mover/cgroup >/tmp/cg.parked &
		w=$!
		i=0
		while [ "$(cat $P/fi_cg_parked)" = "$p0" ] && [ $i -lt 100 ]; do sleep 0.02; i=$((i + 1)); done
		parked=$(($(cat $P/fi_cg_parked) - p0))
	}
	parked_read() { # fi_cg_split
		v1_gone >/dev/null
		echo $mover >$CG/vfg/a/cgroup.procs
		echo $1 >$P/fi_cg_split
		set_knob $o 1
		start_parked
		mount -t cgroup -o none,name=vfcp cgroup $V1
		echo $mover >$CG/vfg/c/cgroup.procs
		echo >$P/fi_cg_park
		wait $w
		set_knob $o 0
		echo 0 >$P/fi_cg_split
		umount $V1
		v="$(tr '\n' '|' </tmp/cg.parked)"
		case "$v" in
		"0::/vfg/a|" | [1-9]*":name=vfcp:/|0::/vfg/a|" | [1-9]*":name=vfcp:/|0::/vfg/c|") ok=stock ;;
		*) ok=bad ;;
		esac
		echo "parked $parked, read: $v $ok"
	}
	r=$(parked_read 0)
	t_checkv "$o: a read parked while a hierarchy is mounted and its task moved answers as stock" \
		"$r" [ "${r#parked 1,}" != "$r" -a "${r% stock}" != "$r" ]
	r=$(parked_read 1)
	t_checkv "$o: the check catches a fast path that drops css_set_lock between its test and its line (fi_cg_split)" \
		"$r" [ "${r#parked 1,}" != "$r" -a "$r" != "${r% bad}" ]
	# A root destroyed under a parked read: the named v1 hierarchy is
	# unmounted, and its root torn down, while the read waits before its
	# css_set_lock section.  The fast path never reads a v1 root: while
	# the root's links remain the read is stock's, once they are gone it
	# has cgroup2 alone, as a stock read then has.
	destroyed_read() {
		v1_gone >/dev/null
		echo $mover >$CG/vfg/a/cgroup.procs
		mount -t cgroup -o none,name=vfcp cgroup $V1
		set_knob $o 1
		start_parked
		v1_gone >/dev/null && gone=yes || gone=no
		h0=$(stat_of $o hits)
		echo >$P/fi_cg_park
		wait $w
		set_knob $o 0
		v="$(tr '\n' '|' </tmp/cg.parked)"
		case "$v" in
		"0::/vfg/a|") ok=stock ;;
		*) ok=bad ;;
		esac
		echo "parked $parked, root gone $gone, read: $v $ok, hits+$(($(stat_of $o hits) - h0))"
	}
	r=$(destroyed_read)
	case "$r" in
	"parked 1, root gone yes, read: 0::/vfg/a| stock, hits+"[1-9]*) good=yes ;;
	*) good=no ;;
	esac
	t_checkv "$o: a read parked while its task's v1 root is destroyed answers as stock after it" \
		"$r" [ $good = yes ]
	unload_vfsfast
fi

# A hybrid host: with a v1 hierarchy mounted every read is stock's, and
# stock takes cgroup_mutex, which a cgroup.procs write may hold for as
# long as user space decides (cpuset's attach waiting for an mmap lock a
# FUSE daemon keeps; here vfsfast_cgmutex holds it until told).  The read
# must reach stock by a tail call, leaving nothing of vfsfast on its
# stack: rmmod goes through at once while it sleeps, and the read then
# gives stock's answer.  And it must step aside before paying for the
# fast path's try: css_set_lock taken per read as stock takes it (one),
# not once more.
mkdir -p $V1
if mount -t cgroup -o none,name=vfcm cgroup $V1; then
	grep -q '^vfsfast ' /proc/modules || load_vfsfast enable=none
	set_knob $o 1
	lcount() { # knob value: css_set_lock acquisitions by 100 reads
		set_knob $o $1
		kprobe_count "_raw_spin_lock_irq lock=\$arg1:u64" "lock == 0x$cslock && comm == \"cat\"" reads
	}
	if [ "$VFSFAST_EXPECT_INLINE_SPIN_LOCK_IRQ" = 1 ]; then
		note "$o: spin_lock_irq() is inlined here: css_set_lock's acquisitions cannot be counted"
	else
		off=$(lcount 0)
		on=$(lcount 1)
		t_checkv "$o: with a v1 hierarchy, a read steps aside before css_set_lock (as many as stock takes, not one more per read)" \
			"100 reads: off $off, on $on" [ "${off:-0}" -ge 100 -a "${on:-999}" -lt $((off + 10)) ]
	fi
	want=$(cat /proc/self/cgroup | tr '\n' '|')
	if insmod /lab/vfsfast_cgmutex.ko addr=0x$cmutex; then
		i=0
		while [ "$(cat /sys/module/vfsfast_cgmutex/parameters/held)" != Y ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		sh -c 'cat /proc/self/cgroup' >/tmp/cg.held 2>&1 &
		rp=$!
		sleep 1
		st=$(cat /proc/$rp/task/*/stack /proc/$(pgrep -P $rp cat 2>/dev/null | head -n1)/stack 2>/dev/null)
		case "$st" in *vfsfast*) in_fast=yes ;; *) in_fast=no ;; esac
		case "$st" in *proc_cgroup_show*) in_stock=yes ;; *) in_stock=no ;; esac
		t0=$(date +%s)
		if rmmod vfsfast 2>/tmp/rmmod.err; then unloaded=yes; else unloaded=no; fi
		t1=$(date +%s)
		echo 1 >/sys/module/vfsfast_cgmutex/parameters/release
		wait $rp
		got=$(tr '\n' '|' </tmp/cg.held)
		rmmod vfsfast_cgmutex
		t_checkv "$o: rmmod goes through at once while a read stock answers sleeps on cgroup_mutex (a tail call: no vfsfast frame)" \
			"asleep in proc_cgroup_show: $in_stock, in vfsfast: $in_fast, unloaded: $unloaded in $((t1 - t0)) s; $(cat /tmp/rmmod.err)" \
			[ $in_stock = yes -a $in_fast = no -a $unloaded = yes -a $((t1 - t0)) -le 5 ]
		t_eq "$o: that read gives stock's answer once the mutex is free" "$want" "$got"
	else
		t_fail "$o: vfsfast_cgmutex holds cgroup_mutex" "insmod failed"
	fi
	grep -q '^vfsfast ' /proc/modules && { set_knob $o 0; unload_vfsfast; }
	v1_gone >/dev/null
else
	t_fail "$o: a named v1 hierarchy mounts (hybrid host)" "mount failed"
fi

kill $pids 2>/dev/null
wait $pids 2>/dev/null
v1_gone >/dev/null
rmdir $CG/vfg/a/b $CG/vfg/a $CG/vfg/c $CG/vfg 2>/dev/null

