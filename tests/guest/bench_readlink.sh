# Instructions per readlink() (icount mode: guest ns == instructions),
# knob off, on and passthrough, for each backend in $BENCH_BACKENDS, rounds
# interleaved with the order rotated each round so that drift cannot
# masquerade as an effect.  Output lines:
#   R <round> <backend> <mode> <workload> <ns_per_op>

mkdir -p /tmp/b
cp -a /mnt/ext4/links/bench32 /mnt/ext4/links/bench100 /tmp/b/
W="tmpfs-32:/tmp/b/bench32 tmpfs-100:/tmp/b/bench100 ext4-32:/mnt/ext4/links/bench32 ext4-100:/mnt/ext4/links/bench100"
N=${BENCH_ITERATIONS:-20000}

mode() {
	case $1 in
	off) echo 0 >$VF/readlink/enabled; echo 0 >$VF/readlink/passthrough ;;
	on) echo 0 >$VF/readlink/passthrough; echo 1 >$VF/readlink/enabled ;;
	passthrough) echo 1 >$VF/readlink/passthrough; echo 1 >$VF/readlink/enabled ;;
	esac
}

# Let boot-time background work finish before anything is measured.
sleep 5
for w in $W; do rlbench ${w#*:} $N >/dev/null; done
sleep 1

# One backend: loaded, measured, unloaded; "BACKEND <asked> <in use>"
# proves which backend carried the "on" and "passthrough" rounds.
bench_backend() {
	load_vfsfast enable=none backend=$1
	r=1
	while [ $r -le "${BENCH_ROUNDS:-5}" ]; do
		case $((r % 3)) in
		1) order="off on passthrough" ;;
		2) order="on passthrough off" ;;
		0) order="passthrough off on" ;;
		esac
		for m in $order; do
			mode $m
			for w in $W; do
				v=$(rlbench ${w#*:} $N | sed -n 's/^ns_per_op=\([0-9.]*\).*/\1/p')
				echo "R $r $1 $m ${w%%:*} ${v:-ERR}"
			done
		done
		r=$((r + 1))
	done
	mode on
	echo "BACKEND $1 $(head -n1 $VF/readlink/backend)"
	mode off
	echo "STATUS $(head -n1 $VF/readlink/status) $(sed -n 's/^upstream: //p' $VF/readlink/status)"
	rmmod vfsfast
}

for backend in $BENCH_BACKENDS; do
	bench_backend $backend
done
