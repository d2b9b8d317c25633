# Helpers for guest tests.  Results are KTAP-like lines that the host
# collects: "ok - NAME" or "not ok - NAME # why".  Every check compares
# something that can differ; a test that only runs a command is not a test.

VF=/sys/kernel/vfsfast

# Every result names the backend the pass forces (VFSFAST_BACKEND).
t_ok() { echo "ok - ${VFSFAST_BACKEND:+$VFSFAST_BACKEND: }$1"; }
t_fail() { echo "not ok - ${VFSFAST_BACKEND:+$VFSFAST_BACKEND: }$1 # $2"; }

# t_check NAME CONDITION-COMMAND... : ok when the command succeeds.
t_check() {
	name=$1
	shift
	if "$@"; then t_ok "$name"; else t_fail "$name" "failed: $*"; fi
}

# t_eq NAME EXPECTED ACTUAL
t_eq() {
	if [ "$2" = "$3" ]; then
		t_ok "$1"
	else
		t_fail "$1" "expected '$2', got '$3'"
	fi
}

note() { echo "# $*"; }

knob() { cat "$VF/$1/enabled"; }
set_knob() { echo "$2" >"$VF/$1/enabled"; }
stat_of() { cat "$VF/$1/stats/$2"; }

# Loads with the backend this pass forces, if any.
load_vfsfast() {
	insmod /lab/vfsfast.ko ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND} "$@"
}

# rmmod, again for up to 5 s while it is refused as in use: a readlink()
# of a page-cache symlink holds the module while it runs (readlink's
# ->get_link() may sleep as long as its filesystem likes), so under
# readlink load a single rmmod can meet one in flight.
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

# The tmpfs copy of the ext4 image's links: made by t_readlink.sh, or here
# for a group that runs without it (--tests).
need_links() {
	[ -d /tmp/links ] || cp -a /mnt/ext4/links /tmp/links
}

# A background reader that checks every readlink() result against what it
# read at start: tmpfs (inline and page), ext4 (fast and slow), proc, sysfs.
CHECKER_PATHS="/tmp/links/l0032 /tmp/links/l0100 /tmp/links/l4095 /mnt/ext4/links/l0032 /mnt/ext4/links/l0100 /proc/self /sys/class/net/lo"

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
