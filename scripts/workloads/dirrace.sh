# Directory reads racing creates and unlinks, stock (issue 50): what
# POSIX promises and a fast path must keep.  A guest script for guests of
# two vCPUs (round-robin TCG), with the release's mke2fs:
#
#   scripts/vfsfast-lab run --kernels "5.10 6.1 6.12 7.2" --smp 2 --mke2fs \
#           scripts/workloads/dirrace.sh
#
# For ext4 (hashed, mkfs defaults), ext4 without dir_index and tmpfs,
# dirrace reads a directory of 1,000 files whole again and again, 4 KiB
# per getdents64(), for SECONDS while a child creates and unlinks other
# names in it: every file that exists throughout returned exactly once
# per read, each other one at most once.  One "dirrace:" line per
# filesystem.

SECONDS_EACH=${SECONDS_EACH:-20}
mk() { # IMG MOUNTPOINT MKE2FS-OPTIONS...
	img=$1 mnt=$2
	shift 2
	dd if=/dev/zero of=$img bs=1M count=0 seek=64 2>/dev/null &&
		/usr/sbin/mke2fs -q -F -t ext4 "$@" $img &&
		mkdir -p $mnt && mount -t ext4 -o loop $img $mnt
}

mk /tmp/race.img /mnt/race || { echo "dirrace: ext4: mkfs or mount failed"; exit 1; }
mk /tmp/racel.img /mnt/racel -O ^dir_index || { echo "dirrace: linear ext4: failed"; exit 1; }
mkdir -p /tmp/racet
grep -q ' /tmp tmpfs ' /proc/mounts || { echo "dirrace: /tmp is not tmpfs"; exit 1; }
for c in ext4:/mnt/race/d ext4-linear:/mnt/racel/d tmpfs:/tmp/racet/d; do
	d=${c#*:}
	mkdir $d
	echo "${c%%:*}: $(dirrace $d 1000 "$SECONDS_EACH" 4096 2>&1)"
done | sed 's/^/dirrace: /'
