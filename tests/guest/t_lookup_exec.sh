# lookup_exec, the search permission of a directory without the layers of
# inode_permission(): status everywhere (7.x has it upstream); where the
# kernel lacks it, a differential of the calls that walk through
# directories of every mode, owner and ACL, as every credential state
# (permdiff, with the ext4 image's paths, whose ACLs no one has read, and
# through an idmapped mount of ext4), the stock checks skipped and the LSM
# hook kept counted by kprobes, the shortcut taken for root's own ext4
# directories, walks with an fsuid that maps to no one through
# directories nobody owns (vfsfast_nobody.ko), and (fault-injection
# build) the checks that catch a shortcut that ignores the ACL, the
# mount's mapping or an invalid owner.

. /lab/lib.sh; in_group t_lookup_exec || return 0

T=/sys/kernel/tracing
o=lookup_exec
load_time_opt $o || return 0 2>/dev/null || exit 0
all=yes
per_backend VFSFAST_TREE_DIFFS || all=no

mkdir -p /tmp/le/a/b/c/d && : >/tmp/le/a/b/c/d/e
ext4=$(head -n 12 /lab/ext4.list)

# pd: the differential in a new /tmp/pd; prints its output.
pd() {
	rm -rf /tmp/pd && mkdir /tmp/pd
	# shellcheck disable=SC2086
	permdiff $VF/$o/enabled /tmp/pd $ext4 2>&1
}

h0=$(stat_of $o hits)
out=$(pd)
rc=$?
dh=$(($(stat_of $o hits) - h0))
t_checkv "$o: every walk through every directory mode, owner and ACL knob off vs on, as 9 credential states" \
	"$(echo "$out" | grep -v ': calls=.* mismatches=0 ' | tail -n 4 | tr '\n' ' ')hits+$dh" \
	[ $rc -eq 0 -a $dh -gt 0 ]
note "$o: $(echo "$out" | grep '^permdiff root:')"

# An idmapped mount of ext4 (5.12 and later), ids 1000 and 1001 swapped:
# the owner shortcut steps aside on a mount that maps ids, the ACL
# entries are read through the mapping; every walk through it as every
# credential state.  On the first backend of a ci run only.
# pdi: that differential on a fresh ext4 image; prints its output.
pdi() {
	mkdir -p /tmp/le/img /tmp/le/idm
	gunzip -c /lab/evdiff-ext4.img.gz >/tmp/le/ext4.img &&
		mount -t ext4 -o loop /tmp/le/ext4.img /tmp/le/img || {
		echo "the ext4 image would not mount"
		return 1
	}
	mkdir /tmp/le/img/pd
	permdiff -I /tmp/le/idm $VF/$o/enabled /tmp/le/img/pd 2>&1
	_rc=$?
	umount /tmp/le/idm 2>/dev/null
	umount /tmp/le/img
	rm -f /tmp/le/ext4.img
	return $_rc
}
idmap=yes
if [ $all = yes ]; then
	h0=$(stat_of $o hits)
	out=$(pdi)
	rc=$?
	dh=$(($(stat_of $o hits) - h0))
	if [ $rc = 3 ] && ! grep -qE ' __(x64|arm64)_sys_mount_setattr$' /proc/kallsyms; then
		idmap=no
		note "$o: $(echo "$out" | tail -n 1) (no mount_setattr() before 5.12)"
	else
		t_checkv "$o: every walk through an idmapped mount of ext4 knob off vs on, as 9 credential states" \
			"rc=$rc; $(echo "$out" | grep -v ': calls=.* mismatches=0 ' | tail -n 4 | tr '\n' ' ')hits+$dh" \
			[ $rc -eq 0 -a $dh -gt 0 ]
	fi
fi

# Stock's permission layers run no more for a walk through directories
# everyone may search; every LSM's hook still runs once per directory.
p=/tmp/le/a/b/c/d/e
set_knob $o 0
goff=$(kprobe_count generic_permission 'comm == "abloop"' abloop lstat 1000 $p)
soff=$(kprobe_count security_inode_permission 'comm == "abloop"' abloop lstat 1000 $p)
set_knob $o 1
gon=$(kprobe_count generic_permission 'comm == "abloop"' abloop lstat 1000 $p)
son=$(kprobe_count security_inode_permission 'comm == "abloop"' abloop lstat 1000 $p)
set_knob $o 0
t_checkv "$o: generic_permission() calls for 1000 lstats of a 5-component path: stock one per directory, none with the knob on" \
	"off $goff, on $gon" [ "$goff" -ge 5000 -a "$gon" -lt 100 ]
t_checkv "$o: security_inode_permission() calls for the same: as many knob off as on (the LSMs see every check)" \
	"off $soff, on $son" [ "$soff" -ge 5000 -a "$soff" = "$son" ]

# What the shortcut skips is what it covers: every function that stock
# calls beneath inode_permission() (or its split part) for walks (the
# function graph tracer, knob off) and that runs at most half as often
# with the knob on (the function tracer, abloop's calls, knob off vs on)
# is one whose livepatch makes lookup_exec yield (VFSFAST_COVERS() in
# opt_lookup_exec.c; 6.12's make_vfsuid() was not).
# walks: the walks the tracers watch.
walks() {
	abloop lstat 100 $p >/dev/null
	abloop stat 100 /tmp/le/a/b/c >/dev/null
}
# traced TRACER: the trace of walks() under TRACER, read before the tracer
# changes back (a change empties the buffer).
traced() {
	echo >$T/trace
	echo $1 >$T/current_tracer
	walks
	echo 0 >$T/tracing_on
	cat $T/trace
	echo nop >$T/current_tracer
	echo 1 >$T/tracing_on
}
set_knob $o 0
echo inode_permission >$T/set_graph_function
grep -q ' inode_permission\.part\.0$' /proc/kallsyms &&
	echo inode_permission.part.0 >>$T/set_graph_function
beneath=$(traced function_graph | grep -o '[a-z_0-9.]*();\|[a-z_0-9.]*() {' |
	sed 's/[(); {]//g' | sort | uniq -c | awk '$1 >= 400 { print $2 }')
echo >$T/set_graph_function
# calls: "count function" of abloop's calls of each function beneath.
calls() {
	echo "$beneath" >$T/set_ftrace_filter
	traced function | grep ' abloop-' | grep -o '[a-z_0-9.]* <-' | sort | uniq -c
	echo >$T/set_ftrace_filter
}
coff=$(calls)
set_knob $o 1
con=$(calls)
set_knob $o 0
skipped=
uncovered=
for f in $beneath; do
	n=$(echo "$con" | awk -v f=$f '$2 == f { print $1 }')
	[ $((${n:-0} * 2)) -le $(echo "$coff" | awk -v f=$f '$2 == f { print $1 }') ] || continue
	skipped="$skipped $f"
	case " $VFSFAST_OPT_LOOKUP_EXEC_COVERS $VFSFAST_OPT_LOOKUP_EXEC_FUNCTIONS " in
	*" $f "* | *" ${f%.part.0} "*) ;;
	*) uncovered="$uncovered $f" ;;
	esac
done
t_checkv "$o: every stock function the shortcut skips for walks is one it covers (function graph, knob off vs on)" \
	"skipped:${skipped:- none}; not covered:${uncovered:- none}" [ -n "$skipped" -a -z "$uncovered" ]

# Root's own ext4 directories, whose ACLs no one asked for: the owner
# test decides, as acl_permission_check()'s does.
e=$(head -n 1 /lab/ext4.list)
set_knob $o 1
h0=$(stat_of $o hits)
abloop lstat 100 "$e" >/dev/null
dh=$(($(stat_of $o hits) - h0))
set_knob $o 0
t_checkv "$o: root's walks through root's ext4 directories take the shortcut (ACL never read)" \
	"$e: hits+$dh" [ $dh -ge 200 ]

# A caller whose fsuid maps to no one (INVALID_UID), through directories
# nobody owns: 6.12's stock judges it as other (vfsuid_eq_kuid() is false
# for an invalid id), 5.10's and 6.1's as the owner (uid_eq()); the
# shortcut must answer as the kernel's own check, whichever it is.
NB=/sys/module/vfsfast_nobody/parameters
NB_MODES="700 100 711 755 751 111 000"
# nbwalk: every mode's walk to the directory's child, "mode=answer ...".
nbwalk() {
	for m in $NB_MODES; do
		echo /tmp/le/nb$m/d >$NB/walk
		printf '%s=%s ' $m "$(cat $NB/result)"
	done
}
nb=no
if [ ! -f /lab/vfsfast_nobody.ko ]; then
	t_fail "$o: test module vfsfast_nobody available" "vfsfast_nobody.ko was not built"
elif insmod /lab/vfsfast_nobody.ko; then
	nb=yes
	for m in $NB_MODES; do
		mkdir -p /tmp/le/nb$m/d && chmod $m /tmp/le/nb$m &&
			echo /tmp/le/nb$m >$NB/disown
	done
	set_knob $o 0
	nboff=$(nbwalk)
	set_knob $o 1
	h0=$(stat_of $o hits)
	nbon=$(nbwalk)
	dh=$(($(stat_of $o hits) - h0))
	set_knob $o 0
	t_checkv "$o: walks with an unmapped fsuid through directories nobody owns, knob off vs on" \
		"off: $nboff; on: $nbon; hits+$dh" [ "$nboff" = "$nbon" -a $dh -gt 0 ]
fi
unload_vfsfast

# Fault-injection build: a shortcut that ignores the ACL must show as
# differences (the users the ACL refuses walk through); so must an owner
# judged by the unmapped i_uid on an idmapped mount (the user walks
# through its own 0700 directory, which the mapping gives to another).
# fi_caught PARAM DIFF PATTERN NAME: with PARAM at 1, the differential
# DIFF fails with a line that matches PATTERN.
fi_caught() {
	echo 1 >$P/$1
	out=$($2)
	rc=$?
	echo 0 >$P/$1
	caught=no
	[ $rc = 1 ] && echo "$out" | grep -q "$3" && caught=yes
	t_checkv "$4" "rc=$rc; $(echo "$out" | grep "$3" | head -n 2 | tr '\n' ' ')" [ $caught = yes ]
}
if [ $all = yes ] && first_backend; then
	P=/sys/module/vfsfast/parameters
	insmod /lab/vfsfast-fi.ko enable=none ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
	fi_caught fi_lookup_exec_noacl pd '/acl-deny-user/' \
		"$o: the differential catches a shortcut that ignores the ACL (fi_lookup_exec_noacl)"
	[ $idmap = yes ] && fi_caught fi_lookup_exec_idmap pdi '^user .*/u700/' \
		"$o: the idmapped-mount differential catches an owner judged by the unmapped uid (fi_lookup_exec_idmap)"
	# Where stock refuses the unmapped caller its 0700 directory, a
	# shortcut that takes it for the owner must show.
	if [ $nb = yes ] && echo "$nboff" | grep -q '^700=-13 '; then
		echo 1 >$P/fi_lookup_exec_anyowner
		set_knob $o 1
		nbfi=$(nbwalk)
		set_knob $o 0
		echo 0 >$P/fi_lookup_exec_anyowner
		t_checkv "$o: the unmapped-id check catches an invalid owner taken for the caller (fi_lookup_exec_anyowner)" \
			"off: $nboff; fault: $nbfi" [ "$nbfi" != "$nboff" ]
	elif [ $nb = yes ]; then
		note "$o: this kernel judges an unmapped caller the owner of a directory nobody owns ($nboff): nothing for fi_lookup_exec_anyowner to break"
	fi
	unload_vfsfast
fi
[ $nb = yes ] && rmmod vfsfast_nobody
