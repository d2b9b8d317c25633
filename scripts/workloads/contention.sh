# Rough wall time of /proc reads on 4 vCPUs, knob off vs on: the figures
# that one vCPU's instruction count cannot give (shared locks and lockref
# cache lines).  A guest script for
#
#   scripts/vfsfast-lab run --kernels "5.10 6.1" --smp 4 --mttcg \
#           scripts/workloads/contention.sh
#
# Multi-threaded TCG runs each vCPU on a host thread, so two vCPUs do run
# at once and wait for each other's locks; but atomics and cache-line
# transfers cost what the host's emulation of them costs, not what a real
# CPU's do, vCPUs outnumbering host CPUs share them, and the host's own
# load moves every figure.  Rough, and labelled so wherever reported.
#
#   cgroup  4 processes each reading /proc/self/cgroup (open, read, close)
#           while a fifth makes and removes a cgroup in a loop
#           (proc_cgroup: stock takes cgroup_mutex, which mkdir and rmdir
#           hold)
#   ps      4 loops of the guest's ps (busybox: every /proc/<pid>/stat and
#           cmdline) over 200 sleeping processes more (proc_pid_rcu: stock
#           leaves RCU mode at each pid component and takes dentry
#           references)
#   pidwalk 4 processes each stat()ing /proc/1/task/1/status
#           (proc_pid_rcu, the same walk without ps's reads)
#
# Each workload is measured off, on, off, on (ROUNDS pairs).  Each run
# prints a "contention:" line (kernel, knob, workload, arm, seconds of the
# 4 readers from /proc/uptime at 10 ms resolution, the creator's rounds),
# and the script ends with the markdown table of all of them.

CG=/sys/fs/cgroup
N=${CONTENTION_CALLS:-20000}
PSN=${CONTENTION_PS:-30}
ROUNDS=${CONTENTION_ROUNDS:-3}
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
insmod /lab/vfsfast.ko enable=none || exit 1
VF=/sys/kernel/vfsfast
kernel=$(uname -r)
rows=/tmp/cn.rows
: >$rows
sleepers=
i=0
while [ $i -lt 200 ]; do
	sleep 100000 &
	sleepers="$sleepers $!"
	i=$((i + 1))
done
sleep 5

up() { cut -d' ' -f1 /proc/uptime; }

psloop() {
	i=0
	while [ $i -lt $PSN ]; do
		ps >/dev/null
		i=$((i + 1))
	done
}

# run KNOB WORKLOAD ARM: one measurement, its seconds added to the rows.
run() {
	knob=$1 wl=$2 arm=$3
	echo $arm >$VF/$knob/enabled || return 1
	rm -f /tmp/cn.stop /tmp/cn.rounds
	if [ $wl = cgroup ]; then
		(
			r=0
			while [ ! -f /tmp/cn.stop ]; do
				mkdir $CG/vfcn && rmdir $CG/vfcn
				r=$((r + 1))
			done
			echo $r >/tmp/cn.rounds
		) &
		c=$!
	fi
	t0=$(up)
	pids=
	for i in 1 2 3 4; do
		case $wl in
		cgroup) /lab/bin/abloop read-file $N /proc/self/cgroup >/dev/null & ;;
		ps) psloop & ;;
		pidwalk) /lab/bin/abloop stat $N /proc/1/task/1/status >/dev/null & ;;
		esac
		pids="$pids $!"
	done
	wait $pids
	t1=$(up)
	if [ $wl = cgroup ]; then
		touch /tmp/cn.stop
		wait $c
	fi
	s=$(echo "$t1 $t0" | awk '{ printf "%.2f", $1 - $2 }')
	echo "contention: $kernel $knob $wl $arm ${s}s creator_rounds=$(cat /tmp/cn.rounds 2>/dev/null || echo -)"
	echo "$knob $wl $arm $s" >>$rows
	echo 0 >$VF/$knob/enabled
}

for kw in proc_cgroup:cgroup proc_pid_rcu:ps proc_pid_rcu:pidwalk; do
	knob=${kw%%:*} wl=${kw#*:}
	grep -q '^unsupported' $VF/$knob/status && { echo "contention: $kernel $knob unsupported"; continue; }
	r=0
	while [ $r -lt $ROUNDS ]; do
		run $knob $wl 0
		run $knob $wl 1
		r=$((r + 1))
	done
done
kill $sleepers
rmmod vfsfast

# The table: each arm's rounds in order, and their median.
echo
echo "| kernel | knob | workload | off, $ROUNDS rounds | median | on, $ROUNDS rounds | median |"
echo "|---|---|---|---|---:|---|---:|"
awk -v k="$kernel" '
function med(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++)
		for (j = i + 1; j <= n; j++)
			if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : sprintf("%.2f", (a[n / 2] + a[n / 2 + 1]) / 2)
}
{
	key = $1 " " $2
	if (!(key in seen)) { seen[key] = 1; order[++n] = key }
	v[key, $3] = v[key, $3] (v[key, $3] == "" ? "" : " ") $4
}
END {
	for (i = 1; i <= n; i++) {
		split(order[i], kw, " ")
		off = v[order[i], 0]; on = v[order[i], 1]
		o = off; gsub(" ", "s, ", o); q = on; gsub(" ", "s, ", q)
		printf "| %s | %s | %s | %ss | %ss | %ss | %ss |\n", k, kw[1], kw[2], o, med(off), q, med(on)
	}
}' $rows
