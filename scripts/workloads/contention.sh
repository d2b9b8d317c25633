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
#   pidwalk 4 processes each stat()ing /proc/1/task/1/status
#           (proc_pid_rcu: stock leaves RCU mode at the pid component and
#           takes dentry references)
#
# Each knob is measured off, on, off, on (ROUNDS pairs), and each line says
# the kernel, knob, arm, elapsed seconds of the 4 readers (from
# /proc/uptime, 10 ms resolution) and the creator's rounds.

CG=/sys/fs/cgroup
N=${CONTENTION_CALLS:-20000}
ROUNDS=${CONTENTION_ROUNDS:-3}
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
insmod /lab/vfsfast.ko enable=none || exit 1
VF=/sys/kernel/vfsfast
kernel=$(uname -r)
sleep 5

up() { cut -d' ' -f1 /proc/uptime; }

# run KNOB ARM WORKLOAD...: one measurement.
run() {
	knob=$1 arm=$2
	shift 2
	echo $arm >$VF/$knob/enabled || return 1
	rm -f /tmp/cn.stop /tmp/cn.rounds
	if [ $knob = proc_cgroup ]; then
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
		/lab/bin/abloop "$@" >/dev/null &
		pids="$pids $!"
	done
	wait $pids
	t1=$(up)
	if [ $knob = proc_cgroup ]; then
		touch /tmp/cn.stop
		wait $c
	fi
	echo "contention: $kernel $knob $arm $(echo "$t1 $t0" | awk '{ printf "%.2f", $1 - $2 }')s creator_rounds=$(cat /tmp/cn.rounds 2>/dev/null || echo -)"
	echo 0 >$VF/$knob/enabled
}

for knob in proc_cgroup proc_pid_rcu; do
	grep -q '^unsupported' $VF/$knob/status && { echo "contention: $kernel $knob unsupported"; continue; }
	case $knob in
	proc_cgroup) set -- read-file $N /proc/self/cgroup ;;
	proc_pid_rcu) set -- stat $N /proc/1/task/1/status ;;
	esac
	r=0
	while [ $r -lt $ROUNDS ]; do
		run $knob 0 "$@"
		run $knob 1 "$@"
		r=$((r + 1))
	done
done
rmmod vfsfast
