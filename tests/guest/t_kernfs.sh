# kernfs: negative dentries and mutex-free revalidate, permission and
# getattr on kernels without Ian Kent's series (5.10); status elsewhere.
# The correctness checks run on every kernel, with the kernel's kernfs
# knob on where it has one ($KN: kernfs on 5.10, kernfs_rcu, the RCU-mode
# walks, on 6.12 and 7.2), so that they are seen to hold on the upstream
# code too.

. /lab/lib.sh; in_group t_kernfs || return 0

export LD_LIBRARY_PATH=/lib/$VFSFAST_MULTIARCH:/usr/lib/$VFSFAST_MULTIARCH
export PATH=$PATH:/usr/bin

T=/sys/kernel/tracing
CG=/sys/fs/cgroup
MISS=/sys/devices/system/cpu/cpu0/topology/nonexistent
DEEP=/sys/devices/system/cpu/cpu0/topology/core_id
load_vfsfast enable=none

# The global kernfs_mutex is what 5.15 removed: an independent witness of
# which kernfs this kernel has.  Where kallsyms names no variables (no
# KALLSYMS_ALL: Debian's arm64 5.10 and 6.1) it is the mutex stock
# kernfs_iop_lookup() takes, seen by a kprobe on mutex_lock() while a
# fresh missing sysfs name is looked up (every knob off).
kernfs_mutex_seen() {
	echo "p:kprobes/vfkw mutex_lock lock=\$arg1:x64 caller=$VFSFAST_KPROBE_ENTRY_RET:symbol" \
		>>$T/kprobe_events 2>/dev/null || return 0
	echo 1 >$T/tracing_on
	echo >$T/trace
	echo 1 >$T/events/kprobes/vfkw/enable
	[ -e $MISS.vfkw ]
	echo 0 >$T/events/kprobes/vfkw/enable
	sed -n 's/.* vfkw:.* lock=0x\([0-9a-f]*\) caller=kernfs_iop_lookup[+.].*/\1/p' $T/trace | head -n 1
	echo '-:kprobes/vfkw' >>$T/kprobe_events
	echo >$T/trace
}
kmutex=$(awk '$3 == "kernfs_mutex" { print $1 }' /proc/kallsyms)
[ -n "$kmutex" ] || kmutex=$(kernfs_mutex_seen)
note "kernfs: kernfs_mutex: ${kmutex:-none}"
st=$(cat $VF/kernfs/status)
if [ -n "$kmutex" ]; then
	t_checkv "kernfs: status supported where kernfs_mutex exists" "$st" \
		sh -c "! grep -q unsupported $VF/kernfs/status"
	t_eq "kernfs: upstream none where kernfs_mutex exists" none \
		"$(sed -n 's/^upstream: //p' $VF/kernfs/status)"
	t_check "kernfs: enable takes effect" sh -c "echo 1 >$VF/kernfs/enabled"
	t_eq "kernfs: status active" active "$(head -n 1 $VF/kernfs/status)"
	# Each function taken over is one copy under its own name, which
	# ftrace can trace: no .isra/.part/.constprop clone whose calling
	# convention could differ.
	bad=
	for fn in $(cat $VF/kernfs/functions); do
		[ "$(grep -cE " $fn(\.|\$)" /proc/kallsyms)" = 1 ] &&
			grep -qx "$fn" $T/available_filter_functions || bad="$bad $fn"
	done
	t_eq "kernfs: every function one copy in kallsyms and in available_filter_functions" "" "$bad"
	on=1
else
	t_checkv "kernfs: unsupported, naming the upstream series, where kernfs_mutex is gone" "$st" \
		grep -q 'unsupported.*kernfs_elem_dir.rev' $VF/kernfs/status
	t_check "kernfs: enable refused (EOPNOTSUPP)" \
		sh -c "! echo 1 >$VF/kernfs/enabled 2>/dev/null"
	t_eq "kernfs: still off" 0 "$(knob kernfs)"
	on=0
fi
KN=kernfs
if [ "$on" = 0 ] && ! grep -q '^unsupported' $VF/kernfs_rcu/status; then
	KN=kernfs_rcu
	on=1
fi
note "kernfs: the knob of the checks below: $KN (on=$on)"

# kernfs_mutex acquisitions while "$@" runs, counted by a kprobe event on
# mutex_lock() filtered on the mutex's address.
mutex_count() {
	echo >$T/trace
	echo 1 >$T/events/kprobes/vfkm/enable
	"$@" >/dev/null
	echo 0 >$T/events/kprobes/vfkm/enable
	grep -c ' vfkm:' $T/trace
}

if [ "$KN" = kernfs ] && [ "$on" = 1 ]; then
	# With lock debugging, mutex_lock() is mutex_lock_nested().
	mlock=mutex_lock
	grep -q " mutex_lock_nested\$" /proc/kallsyms && mlock=mutex_lock_nested
	echo "p:kprobes/vfkm $mlock lock=\$arg1:u64" >>$T/kprobe_events
	echo "lock == 0x$kmutex" >$T/events/kprobes/vfkm/filter
	echo 1 >$T/tracing_on
	for w in miss:$MISS stat:$DEEP read:$DEEP; do
		kfs ${w%%:*} 10 ${w#*:} >/dev/null
		set_knob kernfs 0
		off=$(mutex_count kfs ${w%%:*} 100 ${w#*:})
		set_knob kernfs 1
		kfs ${w%%:*} 10 ${w#*:} >/dev/null
		h0=$(stat_of kernfs hits)
		n=$(mutex_count kfs ${w%%:*} 100 ${w#*:})
		h1=$(stat_of kernfs hits)
		note "kernfs_mutex acquisitions for 300 x ${w%%:*} ${w#*:} (with warm-up): off $off, on $n; fast-path hits $((h1 - h0))"
		case ${w%%:*} in
		miss|stat)
			t_checkv "kernfs: ${w%%:*} without kernfs_mutex" "on: $n, off: $off" \
				[ "$n" -le 2 -a "$off" -ge 300 ]
			t_checkv "kernfs: ${w%%:*} answered by the fast path" "$((h1 - h0)) hits" \
				[ $((h1 - h0)) -ge 300 ]
			;;
		esac
	done
	echo "-:kprobes/vfkm" >>$T/kprobe_events
fi

# Create after miss: a name looked up while missing (twice: the second
# finds the cached negative) must be there as soon as its creation returns,
# and gone as soon as its removal returns, while another task keeps
# looking the same names up.
mkdir -p $CG
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
dummy=0
grep -q '^dummy ' /proc/modules || insmod /lab/modules/dummy.ko numdummies=0 2>/dev/null
# Moves between network namespaces need ip's "netns" (a move into the
# namespace the device is in already succeeds), which bullseye's busybox
# 1.30 (5.10-arm64's guests) lacks: they are left out there.
netns=0
if ip link add name vfkprobe type dummy 2>/dev/null; then
	ip link set dev vfkprobe netns 1 2>/dev/null && netns=1
	ip link del vfkprobe && dummy=1
fi
[ "$dummy" = 1 ] || note "kernfs: no dummy network devices here (module missing?)"
[ "$dummy" = 1 ] && [ "$netns" = 0 ] &&
	note "kernfs: netns moves: not run: this ip has no netns ($(ip 2>&1 | head -n 1))"
rm -f /tmp/kstop
(
	while [ ! -f /tmp/kstop ]; do
		for i in 1 2 3; do
			[ -e $CG/vfk$i ]
			[ -e /sys/class/net/vfk$i ]
			[ -e /sys/devices/virtual/net/vfk$i/ifindex ]
			[ -e /sys/module/vfsfast_holder ]
		done
	done
) &
looker=$!
bad=0
rounds=$(backend_size VFSFAST_KERNFS_ROUNDS 30)
i=0
while [ $i -lt "$rounds" ]; do
	n=$((i % 3 + 1))
	for p in $CG/vfk$n /sys/class/net/vfk$n /sys/devices/virtual/net/vfk$n/ifindex; do
		[ -e $p ] && { bad=$((bad + 1)); note "present before creation: $p"; }
		[ -e $p ] && bad=$((bad + 1))
	done
	mkdir $CG/vfk$n || bad=$((bad + 1))
	[ -e $CG/vfk$n/cgroup.procs ] || { bad=$((bad + 1)); note "missing after mkdir: $CG/vfk$n"; }
	rmdir $CG/vfk$n || bad=$((bad + 1))
	[ -e $CG/vfk$n ] && { bad=$((bad + 1)); note "present after rmdir: $CG/vfk$n"; }
	if [ "$dummy" = 1 ]; then
		ip link add name vfk$n type dummy || bad=$((bad + 1))
		for p in /sys/class/net/vfk$n /sys/devices/virtual/net/vfk$n/ifindex; do
			[ -e $p ] || { bad=$((bad + 1)); note "missing after ip link add: $p"; }
		done
		ip link del vfk$n || bad=$((bad + 1))
		[ -e /sys/class/net/vfk$n ] && { bad=$((bad + 1)); note "present after ip link del: vfk$n"; }
	fi
	if [ $((i % 10)) = 0 ]; then
		[ -e /sys/module/vfsfast_holder ] && bad=$((bad + 1))
		insmod /lab/vfsfast_holder.ko || bad=$((bad + 1))
		[ -e /sys/module/vfsfast_holder/refcnt ] || { bad=$((bad + 1)); note "missing after insmod: /sys/module/vfsfast_holder"; }
		rmmod vfsfast_holder || bad=$((bad + 1))
		[ -e /sys/module/vfsfast_holder ] && { bad=$((bad + 1)); note "present after rmmod: /sys/module/vfsfast_holder"; }
	fi
	i=$((i + 1))
done
touch /tmp/kstop
wait $looker
t_eq "kernfs: create after miss (cgroup mkdir/rmdir, dummy netdev add/del where there are dummy netdevs, module load/unload): each name there at once and gone at once" \
	0 $bad "$rounds rounds$([ $dummy = 1 ] && echo ', with dummy netdevs' || echo ', without dummy netdevs')"

# Renames: a network device renamed onto a name looked up while missing,
# and moved to another network namespace and back, seen from both; a
# cgroup renamed.
# cgroup2 refuses renames: a named cgroup1 hierarchy without controllers.
bad=0
CG1=/tmp/vfkcg1
mkdir -p $CG1
grep -q " $CG1 cgroup " /proc/mounts || mount -t cgroup -o none,name=vfk none $CG1
i=0
while [ $i -lt 5 ]; do
	mkdir $CG1/vfka || bad=$((bad + 1))
	[ -e $CG1/vfkb ] && bad=$((bad + 1))
	[ -e $CG1/vfkb ] && bad=$((bad + 1))
	mv $CG1/vfka $CG1/vfkb || bad=$((bad + 1))
	[ -e $CG1/vfkb/cgroup.procs ] || { bad=$((bad + 1)); note "cgroup rename: new name missing"; }
	[ -e $CG1/vfka ] && { bad=$((bad + 1)); note "cgroup rename: old name present"; }
	rmdir $CG1/vfkb || bad=$((bad + 1))
	i=$((i + 1))
done
t_eq "kernfs: cgroup (v1) rename seen at once, 5 rounds" 0 $bad
if [ "$dummy" = 1 ]; then
	bad=0
	ip link add name vfkn type dummy
	[ -e /sys/class/net/vfkr ]
	[ -e /sys/class/net/vfkr ]
	ip link set dev vfkn name vfkr || bad=$((bad + 1))
	[ -e /sys/class/net/vfkr/ifindex ] || { bad=$((bad + 1)); note "netdev rename: new name missing"; }
	[ -e /sys/class/net/vfkn ] && { bad=$((bad + 1)); note "netdev rename: old name present"; }
fi
if [ "$dummy" = 1 ] && [ "$netns" = 1 ]; then
	# Another network namespace, with its own sysfs, held by a sleeper.
	unshare -n -m sh -c 'mkdir -p /tmp/nssys && mount -t sysfs none /tmp/nssys &&
		echo $$ >/tmp/ns.pid && exec sleep 1000' &
	nsholder=$!
	w=0
	while [ ! -s /tmp/ns.pid ] && [ $w -lt 100 ]; do sleep 0.1; w=$((w + 1)); done
	nspid=$(cat /tmp/ns.pid)
	inns() { nsenter -t "$nspid" -n -m sh -c "$1"; }
	inns '[ -e /tmp/nssys/class/net/vfkr ]; [ -e /tmp/nssys/class/net/vfkr ]' &&
		{ bad=$((bad + 1)); note "netns: device seen in the other namespace before the move"; }
	ip link set dev vfkr netns "$nspid" || bad=$((bad + 1))
	inns '[ -e /tmp/nssys/class/net/vfkr/ifindex ]' ||
		{ bad=$((bad + 1)); note "netns: moved device missing in its new namespace"; }
	[ -e /sys/class/net/vfkr ] && { bad=$((bad + 1)); note "netns: moved device still in the old namespace"; }
	inns 'ip link set dev vfkr netns 1' || bad=$((bad + 1))
	[ -e /sys/class/net/vfkr/ifindex ] || { bad=$((bad + 1)); note "netns: device missing after moving back"; }
	inns '[ -e /tmp/nssys/class/net/vfkr ]' &&
		{ bad=$((bad + 1)); note "netns: device still in the other namespace after moving back"; }
	kill $nsholder
	wait $nsholder 2>/dev/null
	rm -f /tmp/ns.pid
fi
if [ "$dummy" = 1 ]; then
	ip link del vfkr || bad=$((bad + 1))
	if [ "$netns" = 1 ]; then
		t_eq "kernfs: netdev rename and moves between network namespaces seen at once from both" 0 $bad
	else
		t_eq "kernfs: netdev rename seen at once" 0 $bad
	fi
fi

# Moving a netdev into a namespace renames its sysfs directory under RTNL
# (device_rename()): the rename observer must not make that slower than
# stock (it used to wait out an RCU grace period there).  Wall time in TCG
# is rough: the bound is 1.5 times stock plus 0.5 s for 40 moves.
if [ "$dummy" = 1 ] && [ "$netns" = 1 ] && [ "$on" = 1 ]; then
	uptime_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
	unshare -n sh -c 'echo $$ >/tmp/ns2.pid && exec sleep 1000' &
	ns2holder=$!
	w=0
	while [ ! -s /tmp/ns2.pid ] && [ $w -lt 100 ]; do sleep 0.1; w=$((w + 1)); done
	ns2=$(cat /tmp/ns2.pid)
	ip link add name vfkm type dummy
	moves() {
		t0=$(uptime_cs)
		m=0
		while [ $m -lt 20 ]; do
			ip link set dev vfkm netns "$ns2" &&
				nsenter -t "$ns2" -n ip link set dev vfkm netns 1 || echo x >>/tmp/kmove.fail
			m=$((m + 1))
		done
		echo $(($(uptime_cs) - t0))
	}
	rm -f /tmp/kmove.fail
	moves >/dev/null
	set_knob $KN 0
	off_cs=$(moves)
	set_knob $KN 1
	on_cs=$(moves)
	set_knob $KN 0
	off2_cs=$(moves)
	set_knob $KN 1
	note "kernfs: 40 netns moves of a dummy netdev (wall time, TCG, rough): off ${off_cs}0 ms, on ${on_cs}0 ms, off again ${off2_cs}0 ms"
	t_check "kernfs: netns moves (RTNL held across the sysfs rename) no slower with the knob on than 1.5 x stock + 0.5 s" \
		[ ! -e /tmp/kmove.fail -a "$on_cs" -le $(( (off_cs > off2_cs ? off_cs : off2_cs) * 3 / 2 + 50 )) ]
	ip link del vfkm
	kill $ns2holder
	wait $ns2holder 2>/dev/null
	rm -f /tmp/ns2.pid
fi

# Churn while the knob flips: cgroup2 directories made and removed,
# cgroup1 directories renamed, dummy netdevs made, renamed, moved to
# another namespace and back, removed.  After each step every name is
# there or gone as the stock kernel says, looked up twice (the second
# lookup may meet a cached negative dentry) and listed by readdir.
# kc_has PATH: looked up twice and listed; kc_gone PATH: neither.
kc_has() {
	[ -e "$1" ] && [ -e "$1" ] && ls "${1%/*}" | grep -qx "${1##*/}" ||
		{ kbad=$((kbad + 1)); note "churn: missing: $1"; }
}
kc_gone() {
	[ ! -e "$1" ] && [ ! -e "$1" ] && ! ls "${1%/*}" | grep -qx "${1##*/}" ||
		{ kbad=$((kbad + 1)); note "churn: still there: $1"; }
}
if [ "$on" = 1 ]; then
	unshare -n sh -c 'echo $$ >/tmp/ns3.pid && exec sleep 1000' &
	ns3holder=$!
	w=0
	while [ ! -s /tmp/ns3.pid ] && [ $w -lt 100 ]; do sleep 0.1; w=$((w + 1)); done
	ns3=$(cat /tmp/ns3.pid)
	rm -f /tmp/kflip.stop /tmp/kflip.n
	(
		f=0
		while [ ! -f /tmp/kflip.stop ]; do
			echo 1 >$VF/$KN/enabled && echo 0 >$VF/$KN/enabled || break
			f=$((f + 2))
		done
		echo $f >/tmp/kflip.n
	) &
	flipper=$!
	kbad=0
	i=0
	while [ $i -lt "$rounds" ]; do
		kc_gone $CG/vfc$i
		mkdir $CG/vfc$i
		kc_has $CG/vfc$i
		mkdir $CG1/vfca
		kc_gone $CG1/vfcb
		mv $CG1/vfca $CG1/vfcb
		kc_has $CG1/vfcb
		kc_gone $CG1/vfca
		rmdir $CG1/vfcb
		kc_gone $CG1/vfcb
		rmdir $CG/vfc$i
		kc_gone $CG/vfc$i
		if [ "$dummy" = 1 ]; then
			kc_gone /sys/class/net/vfcd
			ip link add name vfcd type dummy
			kc_has /sys/class/net/vfcd
			kc_gone /sys/class/net/vfce
			ip link set dev vfcd name vfce
			kc_has /sys/class/net/vfce
			kc_gone /sys/class/net/vfcd
			if [ "$netns" = 1 ]; then
				ip link set dev vfce netns "$ns3"
				kc_gone /sys/class/net/vfce
				nsenter -t "$ns3" -n ip link set dev vfce netns 1
				kc_has /sys/class/net/vfce
			fi
			ip link del vfce
			kc_gone /sys/class/net/vfce
		fi
		i=$((i + 1))
	done
	touch /tmp/kflip.stop
	wait $flipper
	kill $ns3holder
	wait $ns3holder 2>/dev/null
	rm -f /tmp/ns3.pid
	note "kernfs: churn: $i rounds during $(cat /tmp/kflip.n 2>/dev/null) knob flips"
	t_eq "kernfs: churn while the knob flips: every name there or gone as stock says, lookup and readdir agree" \
		0 $kbad
	t_check "kernfs: churn: the knob flipped throughout" [ "$(cat /tmp/kflip.n 2>/dev/null || echo 0)" -ge 4 ]
	set_knob $KN 1
fi

# Differential: everything below /sys and the cgroup tree, listed with
# modes, owners, link counts, access() and what the readable files hold,
# knob off, on, off, on (knob_diff in lib.sh).  Four whole listings take
# a while in TCG: the ci and quick profiles make them on the kernel's
# first backend only (VFSFAST_TREE_DIFFS=0), and one listing, for the
# readers below, on the others.
if per_backend VFSFAST_TREE_DIFFS; then
	knob_diff $KN $on kernfs "" /sys $CG
	t_checkv "kernfs: /sys and $CG listed (> 1000 entries)" "$kd_entries entries" \
		[ "$kd_entries" -gt 1000 ]
	t_eq "kernfs: listing and contents identical with the knob on, twice" 0 "$kd_bad" \
		"$kd_stable stable entries, $kd_suspects suspects, $kd_volatile of them volatile"
	# Names must match exactly: structure does not change in a quiet guest.
	t_eq "kernfs: the same names off and on" "$(cut -f1 /tmp/kd.kernfs.a | md5sum)" \
		"$(cut -f1 /tmp/kd.kernfs.b | md5sum)"
else
	set_knob $KN 0
	kfs dump /sys $CG >/tmp/kd.kernfs.a
	note "kernfs: the whole-tree differential ran on the first backend (VFSFAST_TREE_DIFFS=0)"
fi
[ "$on" = 1 ] && set_knob $KN 1

# Parallel readers of all of /sys while the knob flips: every listing has
# the names of the quiet one, and nothing fails.
if [ "$on" = 1 ]; then
	cut -f1 /tmp/kd.kernfs.a >/tmp/kd.names
	for r in 1 2; do
		(
			j=0
			while [ ! -f /tmp/kstop2 ]; do
				kfs dump /sys $CG | cut -f1 | cmp -s - /tmp/kd.names ||
					echo x >>/tmp/kd.readerfail
				j=$((j + 1))
			done
			echo $j >/tmp/kd.runs.$r
		) &
	done
	rm -f /tmp/kstop2 /tmp/kd.readerfail
	flips=0
	while [ $flips -lt "${VFSFAST_KERNFS_FLIPS:-60}" ]; do
		set_knob $KN 1 || break
		sleep 0.2
		set_knob $KN 0 || break
		flips=$((flips + 2))
	done
	touch /tmp/kstop2
	wait
	runs=$(( $(cat /tmp/kd.runs.1) + $(cat /tmp/kd.runs.2) ))
	t_checkv "kernfs: full listings by 2 readers during the flips, all with the same names" \
		"$runs listings, $flips flips" [ "$runs" -ge 2 -a ! -s /tmp/kd.readerfail ]
	rm -f /tmp/kd.readerfail /tmp/kstop2
fi

# Permission: a mode or owner change of a sysfs attribute or directory is
# seen at once by an unprivileged open.
[ "$on" = 1 ] && set_knob $KN 1
D=/sys/module/printk/parameters
F=$D/time
bad=0
canread() { runas 65534 cat "$F" >/dev/null 2>&1; }
for step in "0444 755 0 yes" "0400 755 0 no" "0444 755 0 yes" "0444 700 0 no" \
	"0444 755 0 yes" "0400 755 65534 yes" "0400 755 0 no" "0644 755 0 yes"; do
	set -- $step
	chmod "$1" $F && chmod "$2" $D && chown "$3" $F || bad=$((bad + 1))
	canread && got=yes || got=no
	[ "$got" = "$4" ] || { bad=$((bad + 1)); note "permission: mode $1, dir $2, owner $3: read $got"; }
	canread && got=yes || got=no
	[ "$got" = "$4" ] || { bad=$((bad + 1)); note "permission (again): mode $1, dir $2, owner $3: read $got"; }
done
t_eq "kernfs: chmod/chown of a sysfs file and its directory seen at once by uid 65534" 0 $bad
t_eq "kernfs: stat shows the mode set" "644 0" "$(stat -c '%a %u' $F)"

# Calls that entered a kernfs function before the knob was turned on
# (vfsfast_kfrace.ko parks one, before it takes kernfs_mutex or
# kernfs_rwsem, inside
# kernfs_add_one() or kernfs_rename_ns()).  Such a call bumps no stamp, so
# the enable must wait until it has left; meanwhile lookups get the stock
# answer, and afterwards the name it made is found, every time.  With the
# enable order before the fix, a miss during the park became a negative
# dentry that hid the name for good.
# kf_race KIND ARG NAME GONE FUNC [WHERE]: KIND add or rename, NAME the
# name it makes, GONE the one it removes (or ""), FUNC the kernfs function
# it parks in, WHERE what the enable's wait may name for it (an extended
# regex; FUNC, unless a walk cannot tell which target the task is in).
# Sets why when something was wrong.
kf_waited() {
	dmesg | grep -Eq "$KN: waiting for [0-9]+ task\(s\) that may be inside ($1) unobserved \(kfrace/"
}
kf_race() {
	where=${6:-$5}
	why=
	set_knob $KN 0
	dmesg -c >/dev/null
	echo "$2" >$KF/$1
	kf_wait parked || { why="not parked: $(cat $KF/state)"; return; }
	rm -f /tmp/kf.en
	(echo 1 >$VF/$KN/enabled; echo $? >/tmp/kf.en) &
	enpid=$!
	# The release comes once the enable has returned (the old order
	# returned at once; so does an enable that observes nothing here) or
	# says that it waits for the parked call (its first report, after 1 s
	# of waiting), and at the latest 8 s of the guest's clock after it
	# started, inside its 10 s wait.  Timed by the clock, not by turns of
	# the loop or a fixed pause: on 6.12-debug under load 60 turns of a
	# 50 ms sleep outlasted the enable's 10 s, and 3 s of the clock could
	# end before it had waited 1 s.
	end=$(awk '{ print $1 + 8 }' /proc/uptime)
	while [ ! -e /tmp/kf.en ] &&
	      ! kf_waited "$where" &&
	      awk -v e="$end" '{ exit $1 >= e }' /proc/uptime; do
		sleep 0.05
	done
	[ -e /sys/kernel/$3 ] && why="$why $3 visible while parked;"
	[ -e /sys/kernel/$3 ] && why="$why $3 visible while parked (again);"
	echo 1 >$KF/release
	kf_wait "done 0" || why="$why kfrace: $(cat $KF/state);"
	wait $enpid
	[ "$(cat /tmp/kf.en)" = 0 ] || why="$why enable failed: $(cat /tmp/kf.en);"
	[ "$(head -n 1 $VF/$KN/status)" = active ] || why="$why status: $(head -n 1 $VF/$KN/status);"
	[ -e /sys/kernel/$3 ] || why="$why $3 missing after its $1 returned;"
	[ -e /sys/kernel/$3 ] || why="$why $3 missing (again);"
	ls /sys/kernel | grep -qx "$3" || why="$why $3 not listed;"
	if [ -n "$4" ]; then
		[ -e /sys/kernel/$4 ] && why="$why $4 still there after the rename;"
		ls /sys/kernel | grep -qx "$4" && why="$why $4 still listed;"
	fi
	# Only an observed function's calls are waited for (kernfs_rcu
	# observes renames, not additions: its negatives trust dir.rev).
	if grep -qw "$5" $VF/$KN/functions; then
		kf_waited "$where" ||
			why="$why the enable did not wait for the parked call;"
	fi
}
if [ "$on" = 1 ] && [ -f /lab/vfsfast_kfrace.ko ]; then
	insmod /lab/vfsfast_kfrace.ko
	bad=
	for r in 1 2 3; do
		kf_race add vfrace$r vfrace$r "" kernfs_add_one
		[ -z "$why" ] || { bad="$bad add $r:$why"; note "kernfs: add $r:$why"; }
	done
	t_eq "kernfs: a kernfs_add_one() parked across the enable: the enable waits, its name is found after, 3 times" "" "$bad"
	bad=
	for r in 1 2 3; do
		set_knob $KN 0
		echo vfold$r >$KF/add
		kf_wait parked && echo 1 >$KF/release && kf_wait "done 0" || bad="$bad setup $r"
		kf_race rename vfold$r:vfnew$r vfnew$r vfold$r kernfs_rename_ns
		[ -z "$why" ] || { bad="$bad rename $r:$why"; note "kernfs: rename $r:$why"; }
	done
	t_eq "kernfs: a kernfs_rename_ns() parked across the enable: the enable waits, the new name is found and the old one gone after, 3 times" "" "$bad"
	echo 1 >$KF/remove
	rmmod vfsfast_kfrace
	# The same, with a kretprobe on the function the parked call is in
	# (kfrace's retprobe): the only word of kernfs_rename_ns()'s text on
	# the parked stack, the return address into it, is the kretprobe's
	# trampoline instead, as under any tracer of return values
	# (function_graph, kretprobes, fexit); a scan that compares words
	# with the targets' text alone finds nothing and lets the enable
	# through.
	insmod /lab/vfsfast_kfrace.ko retprobe=1
	bad=
	for r in 1 2 3; do
		set_knob $KN 0
		kf_do add vfoldrp$r || bad="$bad setup $r"
		# x86's ORC recovers a kretprobe's return address from 5.15 on
		# and finds the task in kernfs_rename_ns(); a walk that meets
		# the trampoline instead (5.10's ORC) cannot say where.
		kf_race rename vfoldrp$r:vfnewrp$r vfnewrp$r vfoldrp$r kernfs_rename_ns \
			"kernfs_rename_ns|a target"
		[ -z "$why" ] || { bad="$bad rename $r:$why"; note "kernfs: retprobe rename $r:$why"; }
	done
	hits=$(cat $KF/retprobe_hits)
	note "kernfs: parks returned through the kretprobe: $hits"
	[ "$hits" -ge 6 ] || bad="$bad the kretprobe fired $hits times, not 6;"
	t_eq "kernfs: a kernfs_rename_ns() parked across the enable, the return address into it a kretprobe's trampoline: the enable waits, the new name is found and the old one gone after, 3 times" "" "$bad"
	echo 1 >$KF/remove
	rmmod vfsfast_kfrace
	t_check "kernfs: the names made by the parked calls are gone with them" \
		sh -c '! ls /sys/kernel | grep -q "^vf\(race\|old\|new\)"'
elif [ "$on" = 1 ]; then
	t_fail "kernfs: test module vfsfast_kfrace available" "vfsfast_kfrace.ko was not built"
fi

[ -e $CG/vfkz ]
[ -e $CG/vfkz ]
set_knob $KN 0
unload_vfsfast
t_check "kernfs: unloads after use" sh -c "! grep -q '^vfsfast ' /proc/modules"
# Negative dentries vfsfast left behind are dropped by the stock revalidate.
mkdir $CG/vfkz && { [ -e $CG/vfkz/cgroup.procs ]; t_eq "kernfs: a name cached missing before unload is there after" 0 $?; rmdir $CG/vfkz; }
