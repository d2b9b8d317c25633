# External validators: Debian's stress-ng (the release's own build) runs
# its inotify, fanotify, dnotify, symlink (with --verify: it checks what
# readlink() returns), sysfs, dentry, pipe, fstat and access (which checks
# what access() and faccessat() answer for each mode it sets) stressors,
# with the release's C library (bookworm's makes fstat() an
# fstatat(fd, "")), while every knob
# (readlink, and the fsnotify ones, whose events the inotify, fanotify and
# dnotify stressors check) flips on and off as fast as it can and the
# checker runs.  Every stressor must pass (stress-ng exits 0), results
# stay exact, and the console stays clean.

. /lab/lib.sh; in_group t_stress || return 0

export LD_LIBRARY_PATH=/lib/$VFSFAST_MULTIARCH:/usr/lib/$VFSFAST_MULTIARCH
export PATH=$PATH:/usr/bin
if ! stress-ng --version >/dev/null 2>&1; then
	t_fail "stress-ng runs in the guest" "$(stress-ng --version 2>&1 | head -n1)"
	return 0 2>/dev/null || exit 0
fi
load_vfsfast enable=all
# Every knob this kernel has: the kernfs ones (kernfs on 5.10, kernfs_rcu
# on 6.12 and 7.2) under the sysfs stressor, which walks sysfs.
KNOBS=
for o in $VFSFAST_OPTS; do
	grep -q '^unsupported' $VF/$o/status || KNOBS="$KNOBS $o"
done
note "knobs flipping: $KNOBS"
start_checker
rm -f /tmp/stop_flip /tmp/flips
(
	n=0
	while [ ! -f /tmp/stop_flip ]; do
		for k in $KNOBS; do set_knob $k 0; done
		for k in $KNOBS; do set_knob $k 1; done
		n=$((n + 2))
	done
	echo $n >/tmp/flips
) &
flipper=$!
# Each stressor runs a third as long on the kernel's other backends in the
# ci profile (backend_size): they share everything with the first but the
# hooks, which the flipper keeps installing and removing all the same.
stress_s=$(backend_size VFSFAST_STRESS_S 10)
mkdir -p /tmp/stress
for s in inotify fanotify dnotify symlink sysfs dentry pipe fstat access; do
	out=$(cd /tmp/stress && stress-ng --$s 2 --timeout "$stress_s" \
		--verify --temp-path /tmp/stress 2>&1)
	rc=$?
	t_eq "stress-ng --$s 2, all knobs flipping: passes" 0 "$rc" "${stress_s}s"
	[ "$rc" = 0 ] || note "stress-ng --$s: $(echo "$out" | tail -n 3 | tr '\n' ' ')"
done
touch /tmp/stop_flip
wait $flipper
stop_checker
t_eq "stress-ng: readlink results exact throughout" "0 ok" "$checked"
t_checkv "stress-ng: the knobs flipped throughout" "$(cat /tmp/flips) flips each" \
	[ "$(cat /tmp/flips)" -gt 0 ]
for k in $KNOBS; do set_knob $k 0; done
unload_vfsfast
