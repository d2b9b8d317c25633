# The backend next to other ftrace users of the same function.
#
# An IPMODIFY user arriving after vfsfast (the holder, attaching the way a
# livepatch does) is refused with EBUSY by every backend, and vfsfast keeps
# working; it loads once vfsfast is gone.  The kernel's function and
# function_graph tracers on vfs_readlink join a hooked site, and the hook
# re-joins a traced site: results stay exact, the fast path keeps running
# on the same backend, and the tracer sees the calls.

. /lab/lib.sh; in_group t_backend || return 0

T=/sys/kernel/tracing
need_links
load_vfsfast enable=readlink
if [ -f /lab/vfsfast_holder.ko ]; then
	out=$(insmod /lab/vfsfast_holder.ko 2>&1)
	rc=$?
	[ $rc -eq 0 ] && rmmod vfsfast_holder
	case "$rc $out" in
	0*) t_fail "IPMODIFY user arriving second is refused with EBUSY" "it loaded" ;;
	*busy*) t_ok "IPMODIFY user arriving second is refused with EBUSY" ;;
	*) t_fail "IPMODIFY user arriving second is refused with EBUSY" "$out" ;;
	esac
	h0=$(stat_of readlink hits)
	t_eq "vfsfast unaffected by the refused user" \
		"$(readlink /mnt/ext4/links/l0100) active" \
		"$(readlink /tmp/links/l0100) $(head -n1 $VF/readlink/status)"
	t_check "... and its fast path still runs" [ "$(stat_of readlink hits)" -gt "$h0" ]
fi

for tracer in function function_graph; do
	start_checker
	echo vfs_readlink >$T/set_ftrace_filter
	echo $tracer >$T/current_tracer
	h0=$(stat_of readlink hits)
	sleep 1
	h1=$(stat_of readlink hits)
	set_knob readlink 0
	set_knob readlink 1
	sleep 1
	h2=$(stat_of readlink hits)
	seen=$(grep -c vfs_readlink $T/trace)
	backend_now=$(head -n1 $VF/readlink/backend)
	echo nop >$T/current_tracer
	echo >$T/set_ftrace_filter
	stop_checker
	t_eq "$tracer: results exact while tracing the hooked function" "0 ok" "$checked"
	t_check "$tracer: fast path runs with the tracer joined" [ "$h1" -gt "$h0" ]
	t_check "$tracer: fast path runs after re-enabling under the tracer" [ "$h2" -gt "$h1" ]
	t_eq "$tracer: same backend under the tracer" "$VFSFAST_BACKEND" "$backend_now"
	t_checkv "$tracer: the tracer saw vfs_readlink" "$seen lines" [ "$seen" -gt 0 ]
done
# kprobes on the hooked function: a trace kprobe event (no post handler)
# and a module's kprobe with a post handler.  Each either attaches next to
# the hook, and then both the probe and the fast path see every call, or
# is refused (kprobes may need IPMODIFY for it); either way results stay
# exact and status stays what it was.
K=$T/kprobe_events
start_checker
echo 'p:vfsfast_kp vfs_readlink' >>$K 2>/dev/null
if echo 1 >$T/events/kprobes/vfsfast_kp/enable 2>/dev/null; then
	h0=$(stat_of readlink hits)
	readlink /tmp/links/l0100 >/dev/null
	sleep 0.5
	kp="attached $([ "$(stat_of readlink hits)" -gt "$h0" ] && echo fast) $([ "$(grep -c vfsfast_kp $T/trace)" -gt 0 ] && echo probed)"
	echo 0 >$T/events/kprobes/vfsfast_kp/enable
	want="attached fast probed"
else
	kp="refused"
	want=refused
fi
echo '-:vfsfast_kp' >>$K 2>/dev/null
echo >$T/trace
t_eq "kprobe event on the hooked function: attached with probe and fast path both seeing calls, or refused; hook kept" \
	"$want active" "$kp $(head -n1 $VF/readlink/status)" "$want"
# A kprobe with a post handler needs IPMODIFY, which the hook's function
# cannot share: it is refused.  Since 6.14 (commit 587e8e6d640b, "kprobes:
# Adopt guard() and scoped_guard()") register_kprobe() returns 0 when
# arming fails but drops the probe, so on 7.2 it loads, is absent from
# kprobes/list and never fires: refused all the same.  The hook runs on.
# Without KPROBES_ON_FTRACE (arm64) a kprobe is a breakpoint on the
# entry's first instruction, before the ftrace site, and no ftrace user:
# there is nothing to share, so probe and hook both run, in either order.
KL=/sys/kernel/debug/kprobes/list
HH=/sys/module/vfsfast_holder/parameters/hits
if [ -f /lab/vfsfast_holder.ko ] && insmod /lab/vfsfast_holder.ko mode=kprobe_post 2>/dev/null; then
	h0=$(stat_of readlink hits)
	readlink /tmp/links/l0100 >/dev/null
	kp=refused
	[ "$VFSFAST_EXPECT_KPROBES_ON_FTRACE" = 1 ] || kp=beside
	grep -q ' vfs_readlink+' $KL && kp="$kp armed"
	[ "$(cat $HH)" -gt 0 ] && kp="$kp fired"
	[ "$(stat_of readlink hits)" -gt "$h0" ] || kp="$kp no-fast-path"
	[ "$VFSFAST_EXPECT_KPROBES_ON_FTRACE" = 1 ] &&
		note "post-handler kprobe: register_kprobe() returned 0 (6.14+), probe dropped: [$kp]"
	rmmod vfsfast_holder
else
	kp=refused
fi
if [ "$VFSFAST_EXPECT_KPROBES_ON_FTRACE" = 1 ]; then
	t_eq "kprobe with a post handler on the hooked function: refused (EBUSY, or dropped on 6.14+); hook kept" \
		"refused active" "$kp $(head -n1 $VF/readlink/status)"
else
	t_eq "kprobe with a post handler on the hooked function, no KPROBES_ON_FTRACE: armed beside the hook, both see calls" \
		"beside armed fired active" "$kp $(head -n1 $VF/readlink/status)"
fi
# The other order: the probe first, armed and firing; enabling the hook is
# refused with EBUSY and status says so; once the probe goes, it works.
set_knob readlink 0
if [ -f /lab/vfsfast_holder.ko ] && insmod /lab/vfsfast_holder.ko mode=kprobe_post; then
	readlink /tmp/links/l0100 >/dev/null
	armed=$(grep -c ' vfs_readlink+' $KL)
	fired=$(cat $HH)
	echo 1 >$VF/readlink/enabled 2>/dev/null && en=enabled || en=refused
	st=$(head -n1 $VF/readlink/status)
	if [ "$VFSFAST_EXPECT_KPROBES_ON_FTRACE" = 1 ]; then
		rmmod vfsfast_holder
		t_checkv "kprobe with a post handler first: armed, fires, the hook refused with EBUSY" \
			"armed $armed, fired $fired, $en: $st" [ "$armed" -ge 1 -a "$fired" -ge 1 -a "$en" = refused -a -n "$(echo "$st" | grep -- '-16')" ]
	else
		f0=$(cat $HH)
		h0=$(stat_of readlink hits)
		readlink /tmp/links/l0100 >/dev/null
		pf=$(($(cat $HH) - f0))
		fh=$(($(stat_of readlink hits) - h0))
		rmmod vfsfast_holder
		t_checkv "kprobe with a post handler first, no KPROBES_ON_FTRACE: armed, fires, the hook enables beside it and both see calls" \
			"armed $armed, fired $fired, $en: $st; then probe +$pf, fast path +$fh" \
			[ "$armed" -ge 1 -a "$fired" -ge 1 -a "$en" = enabled -a "$st" = active -a "$pf" -ge 1 -a "$fh" -ge 1 ]
	fi
fi
set_knob readlink 1
t_eq "kprobe with a post handler gone: the hook is back" active "$(head -n1 $VF/readlink/status)"
stop_checker
t_eq "kprobes: results exact throughout" "0 ok" "$checked"

# sysctl kernel.ftrace_enabled=0 would turn every ftrace site off behind
# status's back: a hooked site is PERMANENT, so the write fails, and the
# fast path keeps running.  With the hook off the write works, and
# enabling then fails with EBUSY and a reason that names it.
FE=/proc/sys/kernel/ftrace_enabled
(echo 0 >$FE) 2>/dev/null
h0=$(stat_of readlink hits)
readlink /tmp/links/l0100 >/dev/null
t_eq "ftrace_enabled=0 refused while hooked; hook and status unchanged" \
	"1 active yes" \
	"$(cat $FE) $(head -n1 $VF/readlink/status) $([ "$(stat_of readlink hits)" -gt "$h0" ] && echo yes)"
set_knob readlink 0
echo 0 >$FE
t_eq "ftrace_enabled=0: enabling fails with EBUSY, status says why" \
	"err EBUSY 0|conflict: vfs_readlink: held by another ftrace user, or ftrace_enabled is 0" \
	"$(wr $VF/readlink/enabled 31) $(knob readlink)|$(head -n1 $VF/readlink/status | sed 's/ (.*//')"
echo 1 >$FE
set_knob readlink 1
t_eq "ftrace_enabled=1 again: enabling works" "active 1" \
	"$(head -n1 $VF/readlink/status) $(knob readlink)"
set_knob readlink 0
unload_vfsfast
if [ -f /lab/vfsfast_holder.ko ]; then
	t_check "the IPMODIFY user loads once vfsfast is gone" insmod /lab/vfsfast_holder.ko
	rmmod vfsfast_holder 2>/dev/null
fi

# Where the ftrace backend may be used (backend=auto), the observers of
# kernfs or kernfs_rcu share one ftrace ops, whatever carries the
# replacements: one registration instead of one per observer.  Checked
# against the kernel's own record of its sites (enabled_functions): every
# observer site on one trampoline (x86's "tramp:"; arm64 has none, its
# CALL_OPS sites name the ops they call, "ops:"), vfsfast's group callback.  Every
# observer must still see its calls (names made and renamed are seen at
# once, between passthrough flips, which retarget jmp's replacements and
# must leave the group alone); the disable lets go of every site.  An
# IPMODIFY user of one observer (as a livepatch of kernfs_setattr) refuses
# the group: the one-by-one attach then names it.  Once, with the first
# backend's pass.
KN=
if first_backend && [ -f /lab/vfsfast_kfrace.ko ]; then
	insmod /lab/vfsfast.ko enable=none
	KN=$(kernfs_knob)
fi
flip_passthrough() {
	echo 1 >$VF/$KN/passthrough && echo 0 >$VF/$KN/passthrough
}
if [ -n "$KN" ] && first_backend && [ -f /lab/vfsfast_kfrace.ko ]; then
	insmod /lab/vfsfast_kfrace.ko
	set_knob $KN 1
	grp=$(sed -n 's/^observers: ftrace, shared by //p' $VF/$KN/backend)
	if [ "$VFSFAST_EXPECT_FTRACE_LIST_WALK" = 1 ]; then
		# Every site walks the list of ops: the observers ride the one
		# shared ops with the replacements (backend_ftrace.c), no group,
		# and enabled_functions names no callback there: each of the
		# knob's functions is on one ops.
		nf=0
		n1=0
		for fn in $(cat $VF/$KN/functions); do
			nf=$((nf + 1))
			grep -qE "^$fn \(1\)" $T/enabled_functions && n1=$((n1 + 1))
		done
		t_eq "observer group: none where every ftrace site walks the ops list: $KN's observers on the one shared ops (backend file: no group; enabled_functions: each function on one ops)" \
			"none $nf" "${grp:-none} $n1" \
			"$(head -n1 $VF/$KN/backend); $(grep -E '^kernfs_' $T/enabled_functions | tr '\n\t' '| ')"
	else
		ef=$(grep 'vfsfast_group_thunk' $T/enabled_functions)
		t_eq "observer group: $KN's observers share one ftrace ops (backend file, enabled_functions: one trampoline, the group's callback)" \
			"yes ${grp:-none} 1" \
			"$([ "${grp:-0}" -ge 2 ] && echo yes) $(echo "$ef" | grep -c .) $(echo "$ef" | sed -En 's/.*(tramp|ops): ([^ ]*).*/\2/p' | sort -u | grep -c .)" \
			"$(head -n1 $VF/$KN/backend); $(echo "$ef" | tr '\n\t' '| ')"
	fi
	bad=
	kf_do add vfgrold || bad="setup: $(cat $KF/state);"
	bad="$bad$(kf_names_seen vfgr flip_passthrough)"
	t_eq "observer group: $KN: names made and renamed seen at once, 3 times, passthrough flipped between, fast path used" \
		"|yes" "$bad|$([ "$(stat_of $KN hits)" -gt 0 ] && echo yes)"
	set_knob $KN 0
	t_eq "observer group: $KN off: no vfsfast site left, backend none" \
		"0 none" "$(grep -c '\[vfsfast\]' $T/enabled_functions) $(cat $VF/$KN/backend)"
	echo 1 >$KF/remove
	rmmod vfsfast_kfrace
	if [ -f /lab/vfsfast_holder.ko ] && insmod /lab/vfsfast_holder.ko func=kernfs_setattr; then
		t_eq "observer group: an IPMODIFY user of kernfs_setattr: $KN refused, naming it" \
			"err EBUSY 0|conflict: kernfs_setattr: held by another ftrace user, or ftrace_enabled is 0|0" \
			"$(wr $VF/$KN/enabled 31) $(knob $KN)|$(head -n1 $VF/$KN/status | sed 's/ (.*//')|$(grep -c '\[vfsfast\]' $T/enabled_functions)"
		rmmod vfsfast_holder
		set_knob $KN 1
		grp2=$(sed -n 's/^observers: ftrace, shared by //p' $VF/$KN/backend)
		t_eq "observer group: the user gone, $KN enables with its observers shared" \
			"active ${grp:-none}" "$(head -n1 $VF/$KN/status) ${grp2:-none}"
		set_knob $KN 0
	else
		t_fail "observer group: the holder takes kernfs_setattr" "vfsfast_holder.ko func=kernfs_setattr did not load"
	fi
	unload_vfsfast
elif first_backend; then
	note "observer group: no kernfs knob here, or vfsfast_kfrace.ko missing"
	unload_vfsfast 2>/dev/null
fi
