# Helpers for guest tests: the one library every group sources.  Results
# are KTAP-like lines that the host collects: "ok - NAME" or
# "not ok - NAME # why".  Every check compares something that can differ;
# a test that only runs a command is not a test.
#
# NAME is stable: the same test has the same name in every run (the
# kernel and the backend, fixed per run, may be part of it), so two runs'
# output can be compared line by line (tests/guest/ktap-diff).  Anything
# measured or otherwise only known at run time (counts, timings, pids,
# errno texts, outcomes, profile sizes) goes in the diagnostic after
# " # " or in a "# " note line, never in NAME.
#
# Each group (t_*.sh, sig_enforce.sh) runs in a process of its own and
# begins with
#	. /lab/lib.sh; in_group t_NAME || return 0
# The job the lab generates sources the group (". /lab/t_NAME.sh");
# in_group then runs the file again as "sh /lab/t_NAME.sh" and the
# sourced copy returns: no variable, function or working directory of one
# group reaches another, and a group needs no other group to have run
# before it.  What a group needs it makes itself (need_links,
# need_link_lists).

VF=/sys/kernel/vfsfast

# The facts the host wrote (VFSFAST_KERNEL, VFSFAST_BACKENDS_EXPECT, the
# profile's sizes...), where the shell does not have them yet: a group
# started by hand as "sh /lab/t_NAME.sh".
[ -n "${VFSFAST_KERNEL+set}" ] || [ ! -f /lab/env.sh ] || . /lab/env.sh

# in_group NAME: true in the group's own process.  Otherwise runs
# /lab/NAME.sh in a new sh, with every VFSFAST_* variable of this shell
# (the host's facts, the pass's VFSFAST_BACKEND, VFSFAST_AB_ICOUNT, sizes
# a job set) in its environment, waits for it, and is false: the caller
# then returns (sourced) or exits (run by hand).
in_group() {
	[ "$VFSFAST_GROUP" = "$1" ] && return 0
	(
		for v in $(set | sed -n 's/^\(VFSFAST_[A-Za-z0-9_]*\)=.*/\1/p'); do
			export "$v"
		done
		VFSFAST_GROUP=$1
		export VFSFAST_GROUP
		cd /lab && exec sh "/lab/$1.sh"
	)
	return 1
}

# oneline TEXT: sets _one to TEXT on one line (a newline would end a
# result line early), "|" for each newline; no fork unless there is one.
NL='
'
oneline() {
	_one=$1
	case $_one in
	*"$NL"*) _one=$(printf '%s' "$_one" | tr '\n' '|') ;;
	esac
}

# Every result names the backend the pass forces (VFSFAST_BACKEND).
# t_ok NAME [DIAG], t_fail NAME WHY
t_ok() {
	oneline "${VFSFAST_BACKEND:+$VFSFAST_BACKEND: }$1${2:+ # $2}"
	echo "ok - $_one"
}
t_fail() {
	oneline "${VFSFAST_BACKEND:+$VFSFAST_BACKEND: }$1 # $2"
	echo "not ok - $_one"
}

# t_check NAME CONDITION-COMMAND... : ok when the command succeeds.
t_check() {
	name=$1
	shift
	if "$@"; then t_ok "$name"; else t_fail "$name" "failed: $*"; fi
}

# t_checkv NAME VALUES CONDITION-COMMAND... : t_check, with the run-time
# VALUES (what was measured or seen) as the diagnostic, ok or not.
t_checkv() {
	name=$1 vals=$2
	shift 2
	if "$@"; then t_ok "$name" "$vals"; else t_fail "$name" "$vals; failed: $*"; fi
}

# t_eq NAME EXPECTED ACTUAL [VALUES]: VALUES, if given, as the diagnostic.
t_eq() {
	if [ "$2" = "$3" ]; then
		t_ok "$1" "$4"
	else
		t_fail "$1" "expected '$2', got '$3'${4:+; $4}"
	fi
}

note() {
	oneline "$*"
	echo "# $_one"
}

# Whether this pass forces the kernel's first (best) backend, or none.
first_backend() {
	[ -z "$VFSFAST_BACKEND" ] || [ "$VFSFAST_BACKEND" = "${VFSFAST_BACKENDS_EXPECT%% *}" ]
}

# per_backend VAR: whether a slow part runs in this pass.  The profile's
# VAR (VFSFAST_TREE_DIFFS, VFSFAST_LP_CUMULATIVE) is 1 for every backend,
# 0 for the kernel's first only; unset means every backend.
per_backend() {
	eval "[ \"\${$1:-1}\" = 1 ]" || first_backend
}

# backend_size VAR DEFAULT: the size of a storm in this pass: the
# profile's VAR (default DEFAULT) where per_backend VFSFAST_TREE_DIFFS
# runs everything, a third of it (at least 1) on the kernel's other
# backends, which share all but the hooks with the first.
backend_size() {
	eval "_n=\${$1:-$2}"
	if per_backend VFSFAST_TREE_DIFFS; then
		echo "$_n"
	else
		echo $(((_n + 2) / 3))
	fi
}

# make_files DIR N: a new directory DIR holding N empty files f0 to
# f<N-1>, created one by one (ext4 builds its hashed index as they come).
make_files() {
	mkdir "$1"
	_i=0
	while [ $_i -lt "$2" ]; do
		: >"$1/f$_i"
		_i=$((_i + 1))
	done
}

knob() { cat "$VF/$1/enabled"; }
set_knob() { echo "$2" >"$VF/$1/enabled"; }
stat_of() { cat "$VF/$1/stats/$2"; }

# kprobe_count PROBE FILTER CMD...: how many times a kprobe event on PROBE
# ("function [fetch args]") that passes FILTER fired while CMD ran, or
# "refused" where the probe cannot be placed.  Tracing must be on.
kprobe_count() {
	_kt=${T:-/sys/kernel/tracing}
	echo "p:kprobes/vfkc $1" >>$_kt/kprobe_events 2>/dev/null || { echo refused; return 0; }
	echo "$2" >$_kt/events/kprobes/vfkc/filter
	shift 2
	echo >$_kt/trace
	echo 1 >$_kt/events/kprobes/vfkc/enable
	"$@" >/dev/null
	echo 0 >$_kt/events/kprobes/vfkc/enable
	grep -c ' vfkc:' $_kt/trace
	echo '-:kprobes/vfkc' >>$_kt/kprobe_events
}

# names_cachep_value ALLOC: names_cachep's value, the cache getname()
# takes its name buffers from, fetched by a kprobe on the slab allocator
# ALLOC during a stat: by name (@SYM), or where kallsyms names no
# variable (no KALLSYMS_ALL: Debian's arm64 5.10 and 6.1) as the cache
# stock getname_flags() passes it, the getname knob off meanwhile.
# Empty where neither works.  Tracing must be on.
names_cachep_value() {
	_kt=${T:-/sys/kernel/tracing}
	_g=$(cat $VF/getname/enabled 2>/dev/null)
	[ "$_g" = 1 ] && set_knob getname 0
	_nc=
	for _f in "nc=@names_cachep:x64" \
		"nc=\$arg1:x64 caller=$VFSFAST_KPROBE_ENTRY_RET:symbol"; do
		echo "p:kprobes/vfnc $1 $_f" >>$_kt/kprobe_events 2>/dev/null || continue
		echo >$_kt/trace
		echo 1 >$_kt/events/kprobes/vfnc/enable
		stat /etc/passwd >/dev/null
		echo 0 >$_kt/events/kprobes/vfnc/enable
		_nc=$(sed -n -e 's/.* vfnc:.* nc=\(0x[0-9a-f]*\)$/\1/p' \
			-e 's/.* vfnc:.* nc=\(0x[0-9a-f]*\) caller=getname_flags[+.].*/\1/p' \
			$_kt/trace | head -n 1)
		echo '-:kprobes/vfnc' >>$_kt/kprobe_events
		echo >$_kt/trace
		[ -n "$_nc" ] && break
	done
	[ "$_g" = 1 ] && set_knob getname 1
	echo "$_nc"
}

# The optimizations enable=auto turns on in this pass: lookup_exec is
# left off where ftrace carries it (opts.py, unless_ftrace).
opts_auto() {
	if [ "$VFSFAST_BACKEND" = ftrace ]; then
		echo "$VFSFAST_OPTS_AUTO_FTRACE"
	else
		echo "$VFSFAST_OPTS_AUTO"
	fi
}

# opt_auto_off OPT: the status file's expected "auto: off:" text in this
# pass, or empty.
opt_auto_off() {
	eval "echo \"\$VFSFAST_OPT_$(echo $1 | tr a-z A-Z)_AUTO_OFF${VFSFAST_BACKEND:+_$(echo $VFSFAST_BACKEND | tr a-z A-Z)}\""
}

# Loads with the backend this pass forces, if any.
load_vfsfast() {
	insmod /lab/vfsfast.ko ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND} "$@"
}

# rmmod, again for up to 5 s while it is refused as in use: the one path
# that holds the module (close_sync's close of a file another thread put
# at the descriptor meanwhile, vfsfast_close_raced()) can meet an rmmod,
# and a test module may still be going.
unload_vfsfast() {
	u=0
	while ! rmmod vfsfast 2>/tmp/unload.err; do
		if [ $u -ge 50 ] || ! grep -qi "unavailable\|in use" /tmp/unload.err; then
			cat /tmp/unload.err >&2
			return 1
		fi
		sleep 0.1
		u=$((u + 1))
	done
}

# load_time_opt OPT: load the module (enable=none) for an optimization
# whose upstream presence the module finds at load.  Where the lab expects
# the kernel to have it (VFSFAST_OPT_<OPT>_STATUS_UPSTREAM), or to lack
# what it needs (VFSFAST_OPT_<OPT>_LACKS: a KASAN kernel for getname),
# check that status says so and that enabling is refused, unload, and
# return 1; else check that it is off, and return 0 with the module
# loaded.
load_time_opt() {
	load_vfsfast enable=none
	oneline "$(cat $VF/$1/status)"
	eval "up=\$VFSFAST_OPT_$(echo $1 | tr a-z A-Z)_STATUS_UPSTREAM"
	eval "lacks=\$VFSFAST_OPT_$(echo $1 | tr a-z A-Z)_LACKS"
	if [ -n "$lacks" ]; then
		t_checkv "$1: unsupported where the kernel lacks what it needs, saying why" "$_one" \
			[ "$(head -n 1 $VF/$1/status)" = "unsupported: $lacks" ]
		t_check "$1: enable refused where the kernel lacks what it needs" \
			sh -c "! echo 1 >$VF/$1/enabled 2>/dev/null"
		unload_vfsfast
		return 1
	fi
	if [ "$up" != none ]; then
		t_checkv "$1: unsupported where the kernel has it upstream, saying so (asked at load)" "$_one" \
			grep -q '^unsupported: the kernel has it upstream' $VF/$1/status
		t_check "$1: enable refused where the kernel has it upstream" \
			sh -c "! echo 1 >$VF/$1/enabled 2>/dev/null"
		unload_vfsfast
		return 1
	fi
	t_checkv "$1: off after enable=none where the kernel lacks it" "$_one" \
		[ "$(head -n 1 $VF/$1/status)" = off ]
}

# The tmpfs copy of the ext4 image's links, made once per guest by
# whichever group needs it first.
need_links() {
	[ -d /tmp/links ] || cp -a /mnt/ext4/links /tmp/links
}

# The readlink differential's link lists for tmpfs and ext4 (rldiff):
# t_readlink's and t_toggle's, the same whichever runs first.
need_link_lists() {
	need_links
	[ -s /tmp/list.tmpfs ] || find /tmp/links -type l >/tmp/list.tmpfs
	[ -s /tmp/list.ext4 ] || {
		cp /lab/ext4.list /tmp/list.ext4
		echo /mnt/ext4/nonexistent >>/tmp/list.ext4
	}
}

# A background reader that checks every readlink() result against what it
# read at start: tmpfs (inline and page), ext4 (fast and slow), proc, sysfs.
CHECKER_PATHS="/tmp/links/l0032 /tmp/links/l0100 /tmp/links/l4095 /mnt/ext4/links/l0032 /mnt/ext4/links/l0100 /proc/self /sys/class/net/lo"

# parked_stack PID FUNC: the kernel stacks of PID's threads once one of
# them shows FUNC, where the call parks (up to 5 s, or until PID is gone;
# then whatever they show).  A task that has just woken the thread reporting it parked may
# still be running, and a running task's stack file shows the frames of
# its last switch, which can be anywhere it was preempted earlier (once
# in 5.10-debug's t_unload: a frame of vfsfast's from before the call
# went to stock).
parked_stack() {
	_j=0
	while :; do
		_s=$(cat /proc/$1/task/*/stack 2>/dev/null)
		case "$_s" in *"$2"*) break ;; esac
		[ $_j -ge 100 ] || [ ! -e "/proc/$1" ] && break
		sleep 0.05
		_j=$((_j + 1))
	done
	echo "$_s"
}

start_checker() {
	need_links
	rm -f /tmp/stop
	rlloop /tmp/stop $CHECKER_PATHS >/tmp/rlloop.out 2>&1 &
	checker_pid=$!
}

# Sets checked to "<exit status> ok" when every result the checker saw was
# exact.  Not for $(...): wait needs the shell that started the checker.
stop_checker() {
	touch /tmp/stop
	wait $checker_pid
	checked="$? $(sed -n 's/.*iterations=[0-9]* \(ok\)$/\1/p' /tmp/rlloop.out)"
}

# knob_diff KNOB ON TAG PREFIX DIR...: the differential of a knob over
# whole trees.  `kfs dump DIR...`, run through PREFIX (empty, "runas
# 65534", "nsenter -t PID -n -m"), with KNOB off, on, off, on (on only if
# ON is 1; files /tmp/kd.TAG.[abcd]).  Entries that differ between the two
# off listings are volatile and left out, and so are vfsfast's own files
# and the slab statistics.  An entry that differs in both on listings is a
# suspect only: a volatile file (the root cgroup's memory.numa_stat) can
# keep still across the two off listings and move across the on ones by
# chance.  A suspect fails only if it follows the knob: read three times
# with the knob off and three times on, alternating, the off reads agree
# and no on read gives their answer.  Sets kd_bad (suspects that follow
# the knob), kd_stable, kd_suspects, kd_volatile, kd_entries; the knob is
# left off.
knob_diff() {
	kd_knob=$1 kd_on=$2 kd_tag=$3 kd_pre=$4
	shift 4
	for kd_l in a b c d; do
		case $kd_l in
		a|c) set_knob $kd_knob 0 ;;
		*) [ "$kd_on" = 1 ] && set_knob $kd_knob 1 ;;
		esac
		$kd_pre kfs dump "$@" >/tmp/kd.$kd_tag.$kd_l
	done
	set_knob $kd_knob 0
	awk -F '\t' '$1 ~ "^/sys/kernel/(vfsfast|slab)/" { next }
	     FILENAME == ARGV[1] { a[$1] = $0; next }
	     FILENAME == ARGV[2] { if (a[$1] == $0) stable[$1] = $0; next }
	     FILENAME == ARGV[3] { if (($1 in stable) && stable[$1] != $0) b[$1] = $0
				  if ($1 in stable) seen++
				  next }
	     ($1 in b) && stable[$1] != $0 { print "differs: " $0; bad++ }
	     END { printf "%d %d\n", bad + 0, seen + 0 }' \
		/tmp/kd.$kd_tag.a /tmp/kd.$kd_tag.c /tmp/kd.$kd_tag.b /tmp/kd.$kd_tag.d \
		>/tmp/kd.$kd_tag.diff
	kd_res=$(tail -n 1 /tmp/kd.$kd_tag.diff)
	kd_suspects=${kd_res%% *}
	kd_stable=${kd_res#* }
	kd_entries=$(wc -l </tmp/kd.$kd_tag.a)
	kd_bad=0
	kd_volatile=0
	for kd_p in $(awk -F '\t' 'sub(/^differs: /, "", $1) { print $1 }' \
			/tmp/kd.$kd_tag.diff | head -n 50); do
		kd_off=$($kd_pre kfs entries "$kd_p")
		kd_follows=1
		for kd_r in 1 2 3; do
			[ "$kd_on" = 1 ] && set_knob $kd_knob 1
			[ "$($kd_pre kfs entries "$kd_p")" = "$kd_off" ] && kd_follows=0
			set_knob $kd_knob 0
			[ "$($kd_pre kfs entries "$kd_p")" = "$kd_off" ] || kd_follows=0
		done
		if [ $kd_follows = 1 ]; then
			kd_bad=$((kd_bad + 1))
			note "$kd_tag: differs with the knob: $(grep -F "differs: $kd_p	" \
				/tmp/kd.$kd_tag.diff | head -n 1)"
		else
			kd_volatile=$((kd_volatile + 1))
		fi
	done
}

# The kernel's kernfs knob, vfsfast loaded: kernfs (5.10) or kernfs_rcu
# (6.12, 7.2), whichever is not unsupported; nothing on 6.1.
kernfs_knob() {
	for k in kernfs kernfs_rcu; do
		grep -q '^unsupported' $VF/$k/status || { echo $k; return; }
	done
}

# A kernel stack (/proc/PID/stack) on stdin as its first 8 function
# names on one line, for a diagnostic.
stack_funcs() {
	sed 's/^\[<[^>]*>\] //; s/+.*//' | head -n 8 | tr '\n' ' '
}

# Every task asleep in D state: "pid comm: stack_funcs"; reads only /proc.
blocked_tasks() {
	for d in /proc/[0-9]*; do
		grep -q '^State:.D' $d/status 2>/dev/null || continue
		echo "${d#/proc/} $(cat $d/comm 2>/dev/null): $(stack_funcs <$d/stack 2>/dev/null)"
	done | paste -sd ';' -
}

# vfsfast_kfrace.ko's parameters, and kf_wait STATE: up to 10 s for its
# state to begin with STATE.
KF=/sys/module/vfsfast_kfrace/parameters
kf_wait() {
	w=0
	while ! grep -q "^$1" $KF/state && [ $w -lt 200 ]; do
		sleep 0.05
		w=$((w + 1))
	done
	grep -q "^$1" $KF/state
}

# kf_do OP ARG: kfrace's OP (add, rename) run through its park at once,
# for a name to exist or move, not for a race.
kf_do() {
	echo "$2" >$KF/$1 && kf_wait parked && echo 1 >$KF/release && kf_wait "done 0"
}

# kf_names_seen TAG [CMD]: with kfrace loaded and /sys/kernel/TAGold made
# (kf_do add), three rounds, each after CMD: a name missed (a negative
# dentry) is seen once made, and a name found is gone once renamed and
# its new name there, at once.  Prints what went wrong, else nothing.
kf_names_seen() {
	kn_bad=
	for kn_r in 1 2 3; do
		[ -z "$2" ] || $2 || kn_bad="$kn_bad $kn_r: $2 failed;"
		for kn_c in 1 2; do
			[ -e /sys/kernel/$1new$kn_r ] && kn_bad="$kn_bad $kn_r: $1new$kn_r there before ($kn_c);"
		done
		kf_do add $1new$kn_r || { kn_bad="$kn_bad $kn_r: add: $(cat $KF/state);"; continue; }
		[ -e /sys/kernel/$1new$kn_r ] || kn_bad="$kn_bad $kn_r: $1new$kn_r missing after its creation;"
		kn_old=$1old; [ $kn_r = 1 ] || kn_old=$1mv$((kn_r - 1))
		for kn_c in 1 2 3; do
			[ -e /sys/kernel/$kn_old/. ] || kn_bad="$kn_bad $kn_r: $kn_old missing before the rename ($kn_c);"
		done
		kf_do rename $kn_old:$1mv$kn_r || { kn_bad="$kn_bad $kn_r: rename: $(cat $KF/state);"; continue; }
		[ -e /sys/kernel/$kn_old ] && kn_bad="$kn_bad $kn_r: $kn_old still there after its rename;"
		[ -e /sys/kernel/$1mv$kn_r ] || kn_bad="$kn_bad $kn_r: $1mv$kn_r missing after the rename;"
	done
	echo "$kn_bad"
}

# Livepatches (t_livepatch, t_fault), such as vfsfast_lp.ko.
# Wait (up to 3 minutes) until livepatch $1's sysfs directory is gone.
lp_gone() {
	i=0
	while [ -e /sys/kernel/livepatch/$1 ] && [ $i -lt 1800 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

# Disable livepatch $1 (default vfsfast_lp), wait for its transition to
# finish, remove it.  With the checker's tight readlink() loop running, a
# transition takes about a minute on 6.12 (under a second on the other
# kernels, and without the checker): its livepatch re-patches the
# preemption static calls site by site when a transition starts and ends,
# slow under TCG (Documentation/lab.md, "CI time").
lp_remove() {
	echo 0 >/sys/kernel/livepatch/${1:-vfsfast_lp}/enabled 2>/dev/null
	lp_gone ${1:-vfsfast_lp}
	rmmod ${1:-vfsfast_lp}
}

# mount_userland ROOT IMAGE [DIR...]: a release's userland image
# (scripts/lablib/userland.py) read-only at ROOT, with the kernel's
# filesystems and a tmpfs on each directory its programs write (run, tmp,
# var/tmp, root, and DIR...), for chroot ROOT: vfsfast-lab real's and
# external's fstests.
mount_userland() {
	_r=$1 _img=$2
	shift 2
	mkdir -p $_r && mount -t ext4 -o ro,loop $_img $_r || return 1
	mount -t proc proc $_r/proc && mount -t sysfs sysfs $_r/sys &&
		mount -t devtmpfs devtmpfs $_r/dev || return 1
	mkdir -p $_r/dev/pts && mount -t devpts devpts $_r/dev/pts
	for _d in run tmp var/tmp root "$@"; do mount -t tmpfs tmpfs $_r/$_d || return 1; done
}
