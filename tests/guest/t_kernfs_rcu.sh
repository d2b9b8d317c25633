# kernfs_rcu: sysfs and cgroupfs path walks that stay in RCU mode (6.12
# and 7.2).  Status everywhere; where the kernel frees kernfs nodes after
# a grace period: proof that the walks stay in RCU mode and take no kernfs
# lock, the differential of whole trees knob off vs on as root, as an
# unprivileged user and in a second network namespace, and a rename parked
# between its work and the observer's bump.  The churn and create-after-
# miss checks run in t_kernfs with this knob.

. /lab/lib.sh; in_group t_kernfs_rcu || return 0

export LD_LIBRARY_PATH=/lib/$VFSFAST_MULTIARCH:/usr/lib/$VFSFAST_MULTIARCH
export PATH=$PATH:/usr/bin

T=/sys/kernel/tracing
CG=/sys/fs/cgroup
DEEP=/sys/devices/system/cpu/cpu0/topology/core_id
load_vfsfast enable=none
oneline "$(cat $VF/kernfs_rcu/status)"; st=$_one

# An independent witness of RCU-freed kernfs nodes: their RCU callback.
# Where the module refuses it all the same (an architecture without
# quiesce's stack walk: VFSFAST_OPT_KERNFS_RCU_LACKS), the reason is the
# one the lab expects and enabling is refused.
if grep -q " kernfs_free_rcu\$" /proc/kallsyms && [ -n "$VFSFAST_OPT_KERNFS_RCU_LACKS" ]; then
	t_checkv "kernfs_rcu: unsupported where the module refuses it at load, saying why" "$st" \
		[ "$(head -n 1 $VF/kernfs_rcu/status)" = "unsupported: $VFSFAST_OPT_KERNFS_RCU_LACKS" ]
	t_check "kernfs_rcu: enable refused where the module refuses it at load" \
		sh -c "! echo 1 >$VF/kernfs_rcu/enabled 2>/dev/null"
	unload_vfsfast
	return 0 2>/dev/null || exit 0
elif grep -q " kernfs_free_rcu\$" /proc/kallsyms; then
	t_checkv "kernfs_rcu: off after enable=none where kernfs nodes are RCU-freed" "$st" \
		[ "$(head -n 1 $VF/kernfs_rcu/status)" = off ]
	t_check "kernfs_rcu: enable takes effect" sh -c "echo 1 >$VF/kernfs_rcu/enabled"
	t_eq "kernfs_rcu: status active" active "$(head -n 1 $VF/kernfs_rcu/status)"
	set_knob kernfs_rcu 0
	on=1
else
	t_checkv "kernfs_rcu: unsupported, saying why, where kernfs frees nodes at once" "$st" \
		grep -q '^unsupported: kernfs frees nodes without an RCU grace period' \
		$VF/kernfs_rcu/status
	t_check "kernfs_rcu: enable refused (EOPNOTSUPP)" \
		sh -c "! echo 1 >$VF/kernfs_rcu/enabled 2>/dev/null"
	unload_vfsfast
	return 0 2>/dev/null || exit 0
fi

mkdir -p $CG
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
mkdir -p $CG/vfr/a/b/c
CGDEEP=$CG/vfr/a/b/c/cgroup.procs

# Read-side acquisitions of any rwsem by kfs, per kernfs function that
# took them (a kprobe event on down_read() with its return address, where
# the architecture's call leaves it: VFSFAST_KPROBE_ENTRY_RET).
# The walk's are those of revalidate, lookup, permission and getattr
# (kernfs_rwsem, kernfs_iattr_rwsem); others (open's) are noted.
echo "p:kprobes/vfrw down_read sem=\$arg1:x64 caller=$VFSFAST_KPROBE_ENTRY_RET:symbol" >>$T/kprobe_events
echo 'comm == "kfs"' >$T/events/kprobes/vfrw/filter
echo 1 >$T/tracing_on
rw_count() {
	echo >$T/trace
	echo 1 >$T/events/kprobes/vfrw/enable
	"$@" >/dev/null
	echo 0 >$T/events/kprobes/vfrw/enable
	sed -n 's/.* caller=\(kernfs_[a-z_]*\)+.*/\1/p' $T/trace | sort | uniq -c |
		awk '$2 ~ /^kernfs_(dop_revalidate|iop_(lookup|permission|getattr))$/ { n += $1 }
		     { s = s " " $2 "=" $1 } END { print n + 0 s }'
}
N=100
for w in stat,sysfs,$DEEP read,sysfs,$DEEP stat,cgroupfs,$CGDEEP read,cgroupfs,$CGDEEP; do
	set -- $(echo "$w" | tr , ' ')
	wl=$1 fs=$2 p=$3
	set_knob kernfs_rcu 0
	kfs $wl 10 $p >/dev/null
	off=$(rw_count kfs $wl $N $p)
	set_knob kernfs_rcu 1
	kfs $wl 10 $p >/dev/null
	h0=$(stat_of kernfs_rcu hits) f0=$(stat_of kernfs_rcu fallbacks)
	on=$(rw_count kfs $wl $N $p)
	h1=$(stat_of kernfs_rcu hits) f1=$(stat_of kernfs_rcu fallbacks)
	# kfs runs its own 200 warm-up calls before the N it times.
	calls=$((N + 200))
	note "kernfs_rcu: rwsem read acquisitions by $calls x $wl $p (walk total, then by caller): off ${off}; on ${on}; RCU-mode answers $((h1 - h0)), ref-walk/declined $((f1 - f0))"
	t_checkv "kernfs_rcu: $wl of a deep $fs path takes kernfs locks with the knob off (the witness works)" \
		"${off%% *}" [ "${off%% *}" -ge $calls ]
	t_checkv "kernfs_rcu: $wl of a deep $fs path: its walk takes no kernfs lock with the knob on" \
		"${on%% *}" [ "${on%% *}" -le 2 ]
	t_checkv "kernfs_rcu: $wl of a deep $fs path: every component answered without the stock code" \
		"$((h1 - h0)) answers, $((f1 - f0)) declined" \
		[ $((h1 - h0)) -ge $((calls * 4)) -a $((f1 - f0)) -le 20 ]
done
echo "-:kprobes/vfrw" >>$T/kprobe_events
set_knob kernfs_rcu 0

# The trees, on the first backend only unless the profile asks for every
# one (VFSFAST_TREE_DIFFS=1: they take a minute a pass in TCG, and what
# they test is the same code whichever backend routes to it).
if per_backend VFSFAST_TREE_DIFFS; then
	# The trees: 300 cgroups, and files and directories whose mode and owner
	# were changed (setattr), in cgroupfs and sysfs.
	for g in $(seq 1 20); do
		for h in $(seq 1 15); do
			mkdir -p $CG/vfr/g$g/h$h
		done
	done
	PF=/sys/module/printk/parameters/time
	PD=/sys/module/printk/parameters
	chmod 0400 $CG/vfr/g1/cgroup.procs $PF
	chmod 0700 $CG/vfr/g2 $PD
	chown 65534 $CG/vfr/g3 $CG/vfr/g3/cgroup.procs
	chmod 0600 $CG/vfr/g3/cgroup.procs

	knob_diff kernfs_rcu 1 rcu.root "" /sys $CG
	t_eq "kernfs_rcu: every entry of /sys and cgroupfs (300 cgroups, chmod/chown'ed) the same knob off and on, as root" \
		0 "$kd_bad" "$kd_entries entries, $kd_stable stable, $kd_suspects suspects, $kd_volatile of them volatile"
	knob_diff kernfs_rcu 1 rcu.user "runas 65534" /sys $CG
	t_eq "kernfs_rcu: every entry of /sys and cgroupfs the same knob off and on, as uid 65534" \
		0 "$kd_bad" "$kd_entries entries, $kd_stable stable, $kd_suspects suspects, $kd_volatile of them volatile"
	denied=$(grep -c "err 13\|	lstat 13" /tmp/kd.rcu.user.b)
	t_checkv "kernfs_rcu: uid 65534 is refused the chmod'ed files and directories, knob on" \
		"$denied refusals" grep -q "^$CG/vfr/g1/cgroup.procs	.* err 13" /tmp/kd.rcu.user.b
	t_checkv "kernfs_rcu: uid 65534 may read and write the file chown'ed to it, knob on" \
		"$(grep "^$CG/vfr/g3/cgroup.procs	" /tmp/kd.rcu.user.b)" \
		grep -q "^$CG/vfr/g3/cgroup.procs	100600 65534:0 1 rw-" /tmp/kd.rcu.user.b

	# A second network namespace: its own sysfs, whose class/net lists only
	# its own devices (namespaced kernfs directories).
	grep -q '^dummy ' /proc/modules || insmod /lab/modules/dummy.ko numdummies=0 2>/dev/null
	rm -f /tmp/nsr.pid
	unshare -n -m sh -c 'mkdir -p /tmp/s2 && mount -t sysfs none /tmp/s2 &&
		{ ip link add name vfns0 type dummy 2>/dev/null; ip link set lo up; } &&
		echo $$ >/tmp/nsr.pid && exec sleep 1000' &
	nsholder=$!
	w=0
	while [ ! -s /tmp/nsr.pid ] && [ $w -lt 100 ]; do sleep 0.1; w=$((w + 1)); done
	nsp=$(cat /tmp/nsr.pid)
	knob_diff kernfs_rcu 1 rcu.ns "nsenter -t $nsp -n -m" /tmp/s2/class/net /tmp/s2/devices/virtual/net
	t_eq "kernfs_rcu: a second network namespace's /sys/class/net the same knob off and on" \
		0 "$kd_bad" "$kd_entries entries, $kd_stable stable, $kd_suspects suspects"
	t_checkv "kernfs_rcu: the namespace's sysfs lists its own devices only" \
		"$(cut -f1 /tmp/kd.rcu.ns.b | grep -c '/class/net/') in class/net" \
		sh -c "grep -q '^/tmp/s2/class/net/lo	' /tmp/kd.rcu.ns.b &&
			! grep -q '^/tmp/s2/class/net/eth0	' /tmp/kd.rcu.ns.b"
	kill $nsholder
	wait $nsholder 2>/dev/null

	chmod 0644 $PF
	chmod 0755 $PD
	for g in $(seq 1 20); do
		rmdir $CG/vfr/g$g/h* $CG/vfr/g$g
	done
else
	note "kernfs_rcu: whole-tree differentials ran on the first backend (VFSFAST_TREE_DIFFS=0)"
fi

# A rename parked after its work, before the observer's bump (with
# vfsfast_kfrace.ko's rename_late): the node has its new name, its old
# dentry was found valid in RCU mode just before, and the generation has
# not moved yet.  Only the count of renames in progress stops that dentry
# from being trusted: the old name must be gone at once, and the new one
# there, while the rename is parked and after.
if [ -f /lab/vfsfast_kfrace.ko ]; then
	insmod /lab/vfsfast_kfrace.ko
	set_knob kernfs_rcu 1
	bad=
	for r in 1 2 3; do
		echo vfrold$r >$KF/add
		kf_wait parked && echo 1 >$KF/release && kf_wait "done 0" ||
			{ bad="$bad setup $r: $(cat $KF/state)"; continue; }
		h0=$(stat_of kernfs_rcu hits)
		kfs stat 10 /sys/kernel/vfrold$r/. >/dev/null || bad="$bad $r: vfrold$r missing"
		h1=$(stat_of kernfs_rcu hits)
		[ $((h1 - h0)) -ge 200 ] || bad="$bad $r: not answered in RCU mode before ($((h1 - h0)))"
		echo vfrold$r:vfrnew$r >$KF/rename_late || { bad="$bad $r: rename_late refused"; continue; }
		kf_wait parked || { bad="$bad $r: not parked: $(cat $KF/state)"; continue; }
		for c in 1 2; do
			[ -e /sys/kernel/vfrold$r ] && bad="$bad $r: old name there while parked ($c);"
			[ -e /sys/kernel/vfrnew$r ] || bad="$bad $r: new name missing while parked ($c);"
		done
		echo 1 >$KF/release
		kf_wait "done 0" || bad="$bad $r: $(cat $KF/state);"
		for c in 1 2; do
			[ -e /sys/kernel/vfrold$r ] && bad="$bad $r: old name there after ($c);"
			[ -e /sys/kernel/vfrnew$r ] || bad="$bad $r: new name missing after ($c);"
		done
	done
	t_eq "kernfs_rcu: a rename parked between its work and the observer's bump: old name gone and new there at once, 3 times" \
		"" "$bad"
	# A chmod parked the same way (chmod_late): the node has mode 0400,
	# the inode still 0444, and the setattr has not returned.  Stock
	# refreshes the inode before it checks, so uid 65534 is refused at
	# once; the fast path must not check the stale inode.
	bad=
	for r in 1 2 3; do
		A=/sys/kernel/vfattr$r/vfattr
		echo vfattr$r >$KF/add
		kf_wait parked && echo 1 >$KF/release && kf_wait "done 0" ||
			{ bad="$bad setup $r: $(cat $KF/state)"; continue; }
		for c in 1 2; do
			runas 65534 cat $A >/dev/null 2>&1 || bad="$bad $r: unreadable before ($c);"
		done
		echo vfattr$r:0400 >$KF/chmod_late || { bad="$bad $r: chmod_late refused"; continue; }
		kf_wait parked || { bad="$bad $r: not parked: $(cat $KF/state)"; continue; }
		for c in 1 2; do
			runas 65534 cat $A >/dev/null 2>&1 && bad="$bad $r: readable while parked ($c);"
		done
		echo 1 >$KF/release
		kf_wait "done 0" || bad="$bad $r: $(cat $KF/state);"
		runas 65534 cat $A >/dev/null 2>&1 && bad="$bad $r: readable after;"
		chmod 0444 $A
		runas 65534 cat $A >/dev/null 2>&1 || bad="$bad $r: unreadable after chmod 0444;"
	done
	t_eq "kernfs_rcu: a chmod parked between its work and the observer's end: refused at once, 3 times" \
		"" "$bad"
	echo 1 >$KF/remove
	rmmod vfsfast_kfrace
else
	t_fail "kernfs_rcu: test module vfsfast_kfrace available" "vfsfast_kfrace.ko was not built"
fi

set_knob kernfs_rcu 0
unload_vfsfast
t_check "kernfs_rcu: unloads after use" sh -c "! grep -q '^vfsfast ' /proc/modules"
# Dentries vfsfast stamped are checked by the stock code after unload.
rmdir $CG/vfr/a/b/c $CG/vfr/a/b $CG/vfr/a $CG/vfr
t_check "kernfs_rcu: a cgroup walked with the knob on is gone once removed, after unload" \
	[ ! -e $CGDEEP ]
