# What a fleet sees: `vfsfast status` and `vfsfast metrics`, with the
# release's own userland and node_exporter (Documentation/fleet.md).
#
# The fleet image (scripts/lablib/userland.py: prometheus-node-exporter
# and systemd of the kernel's release, with its essential and required
# packages) is loop-mounted read-only under a tmpfs overlay, where the
# vfsfast command and vfsfast-metrics.service and .timer lie where
# vfsfast-tools installs them.  systemd-analyze verifies the units; the
# service's ExecStart runs as systemd runs it (its Environment=, the
# release's sh and awk); the release's node_exporter serves the textfile
# directory on loopback, and every optimization's series is compared with
# what this group reads from sysfs itself.  A hits counter rises between
# two scrapes while a workload runs with the knob on and stays flat with
# it off; once the module is unloaded, vfsfast_module_loaded 0 is all
# that is left.  The metrics files and `vfsfast status --json` go to the
# host between file marks, where promtool and the JSON Schema check them
# (suite.py, fleet_checks).
#
# A guest of its own (suite.py, FLEET_TESTS), with the kernel's default
# backend: the image is large, and nothing here depends on the backend.

. /lab/lib.sh; in_group t_fleet || return 0

L=/tmp/fleet/lower
R=/tmp/fleet/root
UNITS=$R/lib/systemd/system
PORT=9100
URL=http://127.0.0.1:$PORT/metrics
# The documented states (Documentation/ABI/testing/sysfs-kernel-vfsfast).
STATES="off active passthrough yielded conflict broken unsupported disabled"
# readlink() calls of the workload between two scrapes.
N=100

inroot() {
	chroot $R /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C "$@"
}

setup() {
	mkdir -p $L $R /tmp/fleet/u /tmp/fleet/w &&
		mount -t ext4 -o ro,loop /lab/fleet.img $L &&
		{ grep -q overlay /proc/filesystems || insmod /lab/modules/overlay.ko; } &&
		mount -t overlay -o lowerdir=$L,upperdir=/tmp/fleet/u,workdir=/tmp/fleet/w overlay $R &&
		mount -t proc proc $R/proc && mount -t sysfs sysfs $R/sys &&
		mount -t cgroup2 cgroup2 $R/sys/fs/cgroup &&
		mount -t devtmpfs devtmpfs $R/dev && mount -t tmpfs tmpfs $R/run &&
		mount -t tmpfs tmpfs $R/tmp || return 1
	# Where vfsfast-tools installs them.
	mkdir -p $UNITS && cp /lab/bin/vfsfast $R/usr/sbin/vfsfast &&
		chmod 0755 $R/usr/sbin/vfsfast &&
		cp /lab/fleet/vfsfast-metrics.service /lab/fleet/vfsfast-metrics.timer $UNITS/
}

# send NAME FILE: FILE to the host, as NAME.
send() {
	echo "$VFSFAST_FILE_MARK$1"
	awk '{ print }' "$2"
	echo "$VFSFAST_END_MARK"
}

# The image's own programs must run in it: an image without libc (one
# made from a chroot where dpkg -L stopped early) fails here, by name.
if ! setup || ! inroot prometheus-node-exporter --version >/dev/null 2>&1; then
	t_fail "fleet: the release's userland with node_exporter mounted, the package's files in place" \
		"setup failed: $(ls /lab/fleet.img $L/usr/bin/prometheus-node-exporter 2>&1 | tr '\n' ' ')$(inroot true 2>&1)"
	exit 0
fi
t_ok "fleet: the release's userland with node_exporter mounted, the package's files in place" \
	"$(inroot prometheus-node-exporter --version 2>&1 | head -n1)"

out=$(inroot systemd-analyze verify --man=no /lib/systemd/system/vfsfast-metrics.service \
	/lib/systemd/system/vfsfast-metrics.timer 2>&1)
rc=$?
t_checkv "fleet: systemd-analyze verify accepts vfsfast-metrics.service and .timer without a word" \
	"rc=$rc $out" [ "$rc" = 0 -a -z "$out" ]

# The service, as systemd starts it: Environment= then ExecStart=, whose
# ${VAR} systemd expands as the shell does.
DIR=$(sed -n 's/^Environment=TEXTFILE_DIRECTORY=//p' $UNITS/vfsfast-metrics.service)
EXEC=$(sed -n 's/^ExecStart=//p' $UNITS/vfsfast-metrics.service)
PROM=$R$DIR/vfsfast.prom
run_service() {
	inroot TEXTFILE_DIRECTORY="$DIR" /bin/sh -c "exec $EXEC" 2>/tmp/fleet/service.err
}
t_checkv "fleet: the unit writes vfsfast metrics --output into node_exporter's textfile directory" \
	"$DIR; $EXEC" [ -d "$R$DIR" -a "$(echo "$EXEC" | grep -c 'vfsfast metrics --output .*/vfsfast\.prom$')" = 1 ]

# scrape FILE: node_exporter's /metrics over loopback, up to 60 s while
# it starts.  A read that stalls is given up after 20 s and tried again
# (wget's own default is 15 minutes, longer than the guest lives).
scrape() {
	i=0
	until timeout 20 wget -q -O "$1" $URL 2>/dev/null; do
		[ $i -lt 120 ] || return 1
		sleep 0.5
		i=$((i + 1))
	done
}

# value FILE SERIES: the series' value in a scrape, a whole number (the
# exposition may print 1.234567e+06).
value() {
	awk -v s="$2" 'index($0, s " ") == 1 { printf "%.0f\n", $NF; found = 1 }
		END { if (!found) print "absent" }' "$1"
}

# The gauges sysfs says, as node_exporter prints them (labels in name
# order), one a line, sorted: read here, not by the vfsfast command.
expect_gauges() {
	for o in $VFSFAST_OPTS; do
		st=$(head -n1 $VF/$o/status)
		for w in $STATES; do
			echo "vfsfast_optimization_state{optimization=\"$o\",state=\"$w\"} $([ "${st%%:*}" = $w ] && echo 1 || echo 0)"
		done
		r=$(sed -n 's/^requested: //p' $VF/$o/status)
		echo "vfsfast_optimization_requested{optimization=\"$o\"} $([ "$r" = on ] && echo 1 || echo 0)"
		# The lab's own expectation of the kernel's upstream text.
		eval "up=\$VFSFAST_OPT_$(echo $o | tr a-z A-Z)_STATUS_UPSTREAM"
		if [ "$up" = none ]; then
			echo "vfsfast_optimization_upstream{feature=\"\",optimization=\"$o\"} 0"
		else
			echo "vfsfast_optimization_upstream{feature=\"$up\",optimization=\"$o\"} 1"
		fi
		echo "vfsfast_optimization_backend_info{backend=\"$(head -n1 $VF/$o/backend)\",optimization=\"$o\"} 1"
	done | sort
}
got_gauges() {
	grep -E '^vfsfast_optimization_(state|requested|upstream|backend_info)\{' "$1" | sort
}

# counters: every optimization's "hits fallbacks", one line each, from sysfs.
counters() {
	for o in $VFSFAST_OPTS; do
		echo "$o $(cat $VF/$o/stats/hits) $(cat $VF/$o/stats/fallbacks)"
	done
}

load_vfsfast
mkdir -p "$R$DIR"
echo "stale 1" >"$PROM"
c0=$(counters)
run_service
rc=$?
t_checkv "fleet: the service exits 0 with the module loaded" "rc=$rc $(cat /tmp/fleet/service.err)" [ "$rc" = 0 ]
left=$(ls -A "$R$DIR" | grep -v '^vfsfast\.prom$' | tr '\n' ' ')
t_checkv "fleet: the metrics file replaced whole (mode 0644), nothing else left in the directory" \
	"mode $(stat -c %a "$PROM"); left: $left" \
	[ "$(stat -c %a "$PROM")" = 644 -a -z "$left" -a "$(grep -c '^stale' "$PROM")" = 0 ]
cp "$PROM" /tmp/fleet/loaded.prom

ip link set lo up
args="--web.listen-address=127.0.0.1:$PORT --collector.textfile.directory=$DIR"
# Only the textfile collector where node_exporter can say so (1.1 and
# later): the others cost TCG time and say nothing of vfsfast.
inroot prometheus-node-exporter --help 2>&1 | grep -q -- --collector.disable-defaults &&
	args="$args --collector.disable-defaults --collector.textfile"
# Not through inroot: $! must be node_exporter itself (chroot and env exec).
chroot $R /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C \
	prometheus-node-exporter $args >/tmp/fleet/node-exporter.log 2>&1 &
ne=$!
if ! scrape /tmp/fleet/s0; then
	t_fail "fleet: node_exporter serves /metrics on loopback" "$(tail -n 5 /tmp/fleet/node-exporter.log)"
	kill $ne
	exit 0
fi
c1=$(counters)
t_ok "fleet: node_exporter serves /metrics on loopback"
t_eq "fleet: node_exporter read the textfile directory without an error" "0 1" \
	"$(value /tmp/fleet/s0 node_textfile_scrape_error) $(grep -c "^node_textfile_mtime_seconds{file=\"\($DIR/\)\{0,1\}vfsfast.prom\"}" /tmp/fleet/s0)"
t_eq "fleet: vfsfast_module_loaded 1" 1 "$(value /tmp/fleet/s0 vfsfast_module_loaded)"
v=$(cat $VF/version)
t_eq "fleet: vfsfast_module_info names the module's version, its kernel and the running one" 1 \
	"$(value /tmp/fleet/s0 "vfsfast_module_info{built_for=\"${v#* }\",kernel=\"$(uname -r)\",version=\"$VFSFAST_VERSION\"}")"
lt=$(value /tmp/fleet/s0 vfsfast_module_load_time_seconds)
bt=$(sed -n 's/^btime //p' /proc/stat)
now=$(date +%s)
ok=0
[ "$lt" != absent ] && [ "$lt" = "$(cat $VF/load_time)" ] && [ "$lt" -ge "$bt" ] && [ "$lt" -le "$now" ] && ok=1
t_checkv "fleet: vfsfast_module_load_time_seconds is the module's load_time, between the boot and now" \
	"$bt <= $lt (load_time $(cat $VF/load_time)) <= $now" [ $ok = 1 ]
exp=$(expect_gauges)
got=$(got_gauges /tmp/fleet/s0)
t_checkv "fleet: every optimization's state, requested, upstream and backend series are what sysfs says" \
	"$(echo "$exp" | wc -l) series; differ: $(printf '%s\n' "$exp" >/tmp/fleet/exp; printf '%s\n' "$got" | diff /tmp/fleet/exp - | grep '^[-+]v' | head -n 4)" \
	[ "$exp" = "$got" ]
bad=
for o in $VFSFAST_OPTS; do
	set -- $(echo "$c0" | grep "^$o ") && lo_h=$2 lo_f=$3
	set -- $(echo "$c1" | grep "^$o ") && hi_h=$2 hi_f=$3
	h=$(value /tmp/fleet/s0 "vfsfast_optimization_hits_total{optimization=\"$o\"}")
	f=$(value /tmp/fleet/s0 "vfsfast_optimization_fallbacks_total{optimization=\"$o\"}")
	[ "$h" != absent ] && [ "$f" != absent ] && [ "$lo_h" -le "$h" ] && [ "$h" -le "$hi_h" ] &&
		[ "$lo_f" -le "$f" ] && [ "$f" -le "$hi_f" ] || bad="$bad $o:$lo_h<=$h<=$hi_h,$lo_f<=$f<=$hi_f"
done
t_checkv "fleet: every optimization's hits and fallbacks counters lie between sysfs's before the service and after the scrape" \
	"${bad:-$(echo $VFSFAST_OPTS | wc -w) optimizations}" [ -z "$bad" ]
n=$(grep -c '^vfsfast_' /tmp/fleet/s0)
t_eq "fleet: no vfsfast series but those (3 of the module, 13 per optimization)" \
	$((3 + 13 * $(echo $VFSFAST_OPTS | wc -w))) "$n"

# A hits counter between two scrapes: rises with the knob on and a
# workload, stays flat with the knob off and the same workload.
mkdir -p /tmp/fleet/links
ln -s /tmp/fleet/a-target-of-some-length /tmp/fleet/links/l
workload() {
	i=0
	while [ $i -lt $N ]; do
		readlink /tmp/fleet/links/l >/dev/null
		i=$((i + 1))
	done
}
hits_series='vfsfast_optimization_hits_total{optimization="readlink"}'
set_knob readlink 1
st=$(head -n1 $VF/readlink/status)
run_service && scrape /tmp/fleet/s1
workload
run_service && scrape /tmp/fleet/s2
h1=$(value /tmp/fleet/s1 "$hits_series")
h2=$(value /tmp/fleet/s2 "$hits_series")
ok=0
[ "$st" = active ] && [ "$h1" != absent ] && [ "$h2" != absent ] && [ $((h2 - h1)) -ge $((N - 1)) ] && ok=1
t_checkv "fleet: readlink on: its hits_total rises between two scrapes by the workload's readlink() calls" \
	"$st; $h1 -> $h2 for $N calls" [ $ok = 1 ]
set_knob readlink 0
run_service && scrape /tmp/fleet/s3
workload
run_service && scrape /tmp/fleet/s4
h3=$(value /tmp/fleet/s3 "$hits_series")
h4=$(value /tmp/fleet/s4 "$hits_series")
ok=0
[ "$h3" != absent ] && [ "$h3" = "$h4" ] && ok=1
t_checkv "fleet: readlink off: its hits_total stays flat between two scrapes with the same workload" \
	"$h3 -> $h4" [ $ok = 1 ]

# vfsfast status, with the release's sh and awk, and as a plain user.
out=$(inroot vfsfast status 2>&1)
rc=$?
# The rows: from the header line to the reasons (lines with ": ").
rows=$(echo "$out" | awk '/^OPTIMIZATION / { t = 1; next } t && /: / { t = 0 } t { print $1 }' |
	sort | tr '\n' ' ')
ok=0
[ "$rc" = 0 ] && [ "$rows" = "$(echo $VFSFAST_OPTS | tr ' ' '\n' | sort | tr '\n' ' ')" ] &&
	[ "$(echo "$out" | head -n1 | grep -c "^vfsfast $VFSFAST_VERSION on $(uname -r) ")" = 1 ] && ok=1
t_checkv "fleet: vfsfast status: exit 0, a row per optimization under the module's version and the kernel" \
	"rc=$rc; rows: $rows" [ $ok = 1 ]
inroot vfsfast status --json >/tmp/fleet/status.json 2>/tmp/fleet/status.err
rc=$?
t_checkv "fleet: vfsfast status --json: exit 0" "rc=$rc $(cat /tmp/fleet/status.err)" \
	[ "$rc" = 0 -a -s /tmp/fleet/status.json ]
# What uid 1000 cannot read, found here, must be what the command names.
cannot=$(for f in $VF/version $VF/backends $VF/*/status $VF/*/enabled $VF/*/passthrough \
	$VF/*/backend $VF/*/stats/*; do
	runas 1000 cat "$f" >/dev/null 2>&1 || echo "$f"
done | sort | tr '\n' ' ')
runas 1000 sh /lab/bin/vfsfast status >/tmp/fleet/user.out 2>/tmp/fleet/user.err
rc=$?
named=$(sed -n 's/^    //p' /tmp/fleet/user.err | sort | tr '\n' ' ')
t_checkv "fleet: vfsfast status as uid 1000: exit 0, names exactly the files it cannot read" \
	"rc=$rc; cannot read: ${cannot:-none}; named: ${named:-none}" [ "$rc" = 0 -a "$cannot" = "$named" ]

# The module gone: one series says so, no stale numbers.
unload_vfsfast
run_service && scrape /tmp/fleet/s5
cp "$PROM" /tmp/fleet/unloaded.prom
t_eq "fleet: module unloaded: vfsfast_module_loaded 0 and no other vfsfast series" \
	"0 1" "$(value /tmp/fleet/s5 vfsfast_module_loaded) $(grep -c '^vfsfast_' /tmp/fleet/s5)"
out=$(inroot vfsfast status 2>&1)
rc=$?
t_eq "fleet: vfsfast status with the module unloaded: exit 1, says the kernel runs stock" \
	"1 1" "$rc $(echo "$out" | grep -c '^vfsfast: not loaded: the kernel (.*) runs stock\.$')"

kill $ne
send loaded.prom /tmp/fleet/loaded.prom
send unloaded.prom /tmp/fleet/unloaded.prom
send status.json /tmp/fleet/status.json
