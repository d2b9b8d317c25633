# Instructions per operation (icount mode: guest ns == instructions), the
# knobs in $BENCH_KNOBS off, on and passthrough, for each backend in
# $BENCH_BACKENDS; rounds interleaved with the order rotated each round so
# that drift cannot masquerade as an effect.  $BENCH_OPT picks the
# workloads: readlink (rlbench on short and long links, tmpfs and ext4)
# or io (nbench: small reads and writes, pipes, sockets, eventfds, a pipe
# beside a watched pipe, and rt-tests' hackbench in pipe mode, 1 group of
# 4 senders and 4 receivers, per message, alone and beside a watched pipe)
# or kernfs (kfs: sysfs path walks and attribute reads).
# Output lines:
#   R <round> <backend> <mode> <workload> <ns_per_op>

N=${BENCH_ITERATIONS:-20000}
KNOBS=${BENCH_KNOBS:-readlink}
FIRST=${KNOBS%% *}

case ${BENCH_OPT:-readlink} in
readlink)
	mkdir -p /tmp/b
	cp -a /mnt/ext4/links/bench32 /mnt/ext4/links/bench100 /tmp/b/
	W="tmpfs-32:/tmp/b/bench32 tmpfs-100:/tmp/b/bench100 ext4-32:/mnt/ext4/links/bench32 ext4-100:/mnt/ext4/links/bench100"
	measure() { rlbench "${1#*:}" $N; }
	;;
io)
	mkdir -p /tmp/b
	W="write read watched pipe pipewatched socket eventfd hackbench hackbenchwatched"
	HB_LOOPS=$((N / 100))
	measure() {
		case $1 in
		hackbench)
			nbench exec $((16 * HB_LOOPS)) hackbench -p -g 1 -f 4 -l $HB_LOOPS ;;
		hackbenchwatched)
			nbench execwatched $((16 * HB_LOOPS)) hackbench -p -g 1 -f 4 -l $HB_LOOPS ;;
		*) nbench "$1" $N /tmp/b ;;
		esac
	}
	;;
kernfs)
	# A missing name, an existing deep attribute (stat, and open/read/
	# close), and distinct attributes in turn (kfs readmany).
	ls -d /sys/devices/system/cpu/cpu0/topology/* >/tmp/b.list
	T=/sys/devices/system/cpu/cpu0/topology
	W="miss:$T/nonexistent stat:$T/core_id read:$T/core_id readmany:/tmp/b.list"
	measure() { kfs "${1%%:*}" $N "${1#*:}"; }
	;;
esac

mode() {
	for k in $KNOBS; do
		case $1 in
		off) echo 0 >$VF/$k/enabled; echo 0 >$VF/$k/passthrough ;;
		on) echo 0 >$VF/$k/passthrough; echo 1 >$VF/$k/enabled ;;
		passthrough) echo 1 >$VF/$k/passthrough; echo 1 >$VF/$k/enabled ;;
		esac
	done
}

# Let boot-time background work finish before anything is measured.
sleep 5
for w in $W; do measure $w >/dev/null; done
sleep 1

# One backend: loaded, measured, unloaded; "BACKEND <asked> <in use>"
# proves which backend carried the "on" and "passthrough" rounds.
bench_backend() {
	load_vfsfast enable=none backend=$1
	# An optimization this kernel cannot have: the stock figures only.
	only=
	grep -q '^unsupported' $VF/$FIRST/status && only=off
	r=1
	while [ $r -le "${BENCH_ROUNDS:-5}" ]; do
		case $((r % 3)) in
		1) order="off on passthrough" ;;
		2) order="on passthrough off" ;;
		0) order="passthrough off on" ;;
		esac
		order=${only:-$order}
		for m in $order; do
			mode $m
			for w in $W; do
				v=$(measure $w | sed -n 's/^ns_per_op=\([0-9.]*\).*/\1/p')
				echo "R $r $1 $m ${w%%:*} ${v:-ERR}"
			done
		done
		r=$((r + 1))
	done
	mode on
	echo "BACKEND $1 ${only:+unsupported}$(head -n1 $VF/$FIRST/backend)"
	mode off
	echo "STATUS $(head -n1 $VF/$FIRST/status) $(sed -n 's/^upstream: //p' $VF/$FIRST/status | tr ' ' '_')"
	unload_vfsfast
}

for backend in $BENCH_BACKENDS; do
	bench_backend $backend
done
