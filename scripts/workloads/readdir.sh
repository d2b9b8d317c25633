# What one directory read costs, stock (issue 50's baseline): a guest
# script for icount guests, with the release's mke2fs:
#
#   scripts/vfsfast-lab run --kernels "5.10 6.1 6.12 7.2" --icount --mke2fs \
#           scripts/workloads/readdir.sh
#
# Makes an ext4 filesystem with mkfs.ext4's defaults (dir_index on) on a
# loop device over a file in the guest's tmpfs, and the same directories
# on tmpfs: 2,000 and 20,000 empty files, the kernel itself building the
# htree index as they are created.  For each, `abloop readdir` (open,
# getdents64() into 32 KiB until the end, close) READS reads per run,
# RUNS runs, first with no module, then with the module loaded
# (enable=auto, the kernel's first backend: what every other knob leaves),
# and prints one "readdir:" line per case (instructions per read, median
# and spread of the runs), then kprobe counts per 2,000-entry ext4 read
# (kfree() counts the whole guest's, a few of them not the read's;
# (stock, then with readdir_arena on) and, last, dirdiff's A/A run (both passes stock: every record of its
# reads, seeks and resumed reads reproducible) over every directory made,
# ext4 without dir_index (linear directories) included;
# ext4_htree_store_dirent() is called only for a hashed, dir_index read,
# which a directory of more than one block the kernel grew itself is): ext4_htree_store_dirent() calls (one kzalloc'd struct fname
# each), free_rb_tree_fname() calls and kfree() calls.

RUNS=${RUNS:-5}
READS=${READS:-10}
VF=/sys/kernel/vfsfast

sleep 5
dd if=/dev/zero of=/tmp/rd.img bs=1M count=0 seek=256 2>/dev/null
# By path: busybox's sh runs its own mke2fs applet before PATH's.
/usr/sbin/mke2fs -q -F -t ext4 /tmp/rd.img || { echo "readdir: mke2fs failed"; exit 1; }
mkdir -p /mnt/rd /tmp/rdt
mount -t ext4 -o loop /tmp/rd.img /mnt/rd || { echo "readdir: mount failed"; exit 1; }
for n in 2000 20000; do
	make_files /mnt/rd/d$n $n
	make_files /tmp/rdt/d$n $n
done
sync
echo "readdir: kernel $VFSFAST_KERNEL; /mnt/rd: $(grep ' /mnt/rd ' /proc/mounts)"

# measure CASE DIR: RUNS runs of READS reads, instructions per read
measure() {
	vals=
	r=0
	while [ $r -lt "$RUNS" ]; do
		v=$(abloop readdir "$READS" "$2" | sed -n 's/^ns_per_op=\([0-9.]*\).*/\1/p')
		[ -n "$v" ] || { echo "readdir: $1 $2: abloop failed"; return; }
		vals="$vals $v"
		r=$((r + 1))
	done
	echo "$vals" | tr ' ' '\n' | grep . | sort -n | awk -v c="$1" -v d="$2" '
		{ v[NR] = $1 }
		END {
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "readdir: %s %s median=%.0f spread=%.3f%% runs=%d:", c, d, m,
				(v[NR] - v[1]) / m * 100, NR
			for (i = 1; i <= NR; i++)
				printf " %.0f", v[i]
			printf "\n"
		}'
}

for c in stock auto; do
	if [ $c = auto ]; then
		insmod /lab/vfsfast.ko enable=auto || { echo "readdir: insmod failed"; exit 1; }
		echo "readdir: auto: $(for o in $VF/*/; do
			[ "$(cat $o/enabled 2>/dev/null)" = 1 ] && basename $o
		done | tr '\n' ' ')"
	fi
	for d in /mnt/rd/d2000 /tmp/rdt/d2000 /mnt/rd/d20000 /tmp/rdt/d20000; do
		measure $c $d
	done
done
rmmod vfsfast

T=/sys/kernel/tracing
[ -d $T/options ] || mount -t tracefs none $T
# counts WHAT: kprobe counts per read of /mnt/rd/d2000 (the page
# allocator's entry has one name before 6.10, another after).
counts() {
	for p in ext4_htree_store_dirent free_rb_tree_fname kfree __get_free_pages \
		get_free_pages_noprof; do
		echo "p:rd_$p $p" >>$T/kprobe_events 2>/dev/null
	done
	echo 1 >$T/events/kprobes/enable
	# abloop's 2 warm-up reads and 1 measured: 3 reads.
	abloop readdir 1 /mnt/rd/d2000 >/dev/null
	echo 0 >$T/events/kprobes/enable
	awk -v w="$1" '{ printf "readdir: %s: per read of /mnt/rd/d2000 (3 reads): %s %.1f\n",
		w, $1, $2 / 3 }' $T/kprobe_profile
	echo >$T/kprobe_events
}
counts stock
insmod /lab/vfsfast.ko enable=readdir_arena
counts readdir_arena
rmmod vfsfast

dd if=/dev/zero of=/tmp/rdl.img bs=1M count=0 seek=64 2>/dev/null
/usr/sbin/mke2fs -q -F -t ext4 -O ^dir_index /tmp/rdl.img &&
	mkdir -p /mnt/rdl && mount -t ext4 -o loop /tmp/rdl.img /mnt/rdl &&
	mkdir /mnt/rdl/d2000 && i=0 &&
	while [ $i -lt 2000 ]; do : >/mnt/rdl/d2000/f$i; i=$((i + 1)); done
# ext4's legacy hash has no minor hash: names sharing it (dirdiff -c)
# make the readdir tree's collision chains.
printf '[defaults]\n\thash_alg = legacy\n' >/tmp/legacy.conf
dd if=/dev/zero of=/tmp/rdh.img bs=1M count=0 seek=64 2>/dev/null
MKE2FS_CONFIG=/tmp/legacy.conf /usr/sbin/mke2fs -q -F -t ext4 -O dir_index /tmp/rdh.img &&
	mkdir -p /mnt/rdh && mount -t ext4 -o loop /tmp/rdh.img /mnt/rdh &&
	mkdir /mnt/rdh/collide && dirdiff -c 400 >/tmp/collide.txt &&
	while read -r n; do : >/mnt/rdh/collide/$n; done </tmp/collide.txt
mkdir -p /mnt/rd/empty /mnt/rd/one /tmp/rdt/one && : >/mnt/rd/one/f && : >/tmp/rdt/one/f
echo "readdir: dirdiff A/A: $(dirdiff /mnt/rd/empty /mnt/rd/one /mnt/rd/d2000 /mnt/rd/d20000 \
	/tmp/rdt/one /tmp/rdt/d2000 /mnt/rdl/d2000 2>&1 | tail -n 3 | tr '\n' ' ')"
echo "readdir: dirdiff A/A, $(wc -l </tmp/collide.txt) names sharing a legacy hash:" \
	"$(dirdiff /mnt/rdh/collide 2>&1 | tail -n 3 | tr '\n' ' ')"
# The same directories knob off vs on, collision chains included.
insmod /lab/vfsfast.ko enable=none
echo "readdir: dirdiff readdir_arena off vs on: $(dirdiff -k $VF/readdir_arena/enabled \
	/mnt/rd/empty /mnt/rd/one /mnt/rd/d2000 /mnt/rd/d20000 /mnt/rdl/d2000 /mnt/rdh/collide \
	2>&1 | tail -n 3 | tr '\n' ' ')"
rmmod vfsfast
