# The external suites (LTP's syscall tests, fstests' vfstest) in one
# guest, every knob off and then every knob that can be on, on each
# filesystem of EXT_FS; run by `vfsfast-lab external` (scripts/lablib/
# external.py), never by the suite: CI has neither checkout.
#
# Sourced by the job after lib.sh, with:
#   EXT_SUITES  /mnt/ext4 (the host's image of the builds: ltp/, vfstest)
#   EXT_FS      filesystems, of tmpfs ext2 ext3 ext4
#   EXT_PASSES  "off on" (any sequence of off and on)
#   EXT_LTP     1 to run LTP (EXT_SUITES/ltp/runtest: "TAG COMMAND..." lines)
#   EXT_VFSTEST the vfstest suites to run (--test-NAME), or empty
#   EXT_TIMEOUT seconds one test may take before `timeout` stops it
#   EXT_FSTESTS fstests' tests to run with its check (EXT_SUITES/fstests,
#               chrooted into EXT_SUITES/fstests-root.img), or empty
#   EXT_FSTESTS_FS  the filesystems check runs them on
#   EXT_MODULE_ARGS module parameters (the fault-injection build's
#               switches, with `vfsfast-lab external --fault`), or empty
# Results: extresults.py's EXT-* lines, one per test and pass; check's
# own output, line by line, for fstests.

B=$EXT_SUITES/ltp/testcases/bin
# An ext image per filesystem, in memory: every block the test writes is
# guest work, and nothing outlives the pass.
IMG_MB=${EXT_IMG_MB:-320}

# The users and groups LTP's tests look up (nobody, bin, daemon) and
# fstests' (fsgqa, fsgqa2: vfstest's setattr and setxattr cases), where
# the initramfs has none.
[ -s /etc/passwd ] || printf '%s\n' root:x:0:0:root:/root:/bin/sh \
	daemon:x:1:1:daemon:/:/bin/false bin:x:2:2:bin:/:/bin/false \
	fsgqa:x:1000:1000:fsgqa:/:/bin/sh fsgqa2:x:1001:1001:fsgqa2:/:/bin/sh \
	nobody:x:65534:65534:nobody:/:/bin/false >/etc/passwd
[ -s /etc/group ] || printf '%s\n' root:x:0: daemon:x:1: bin:x:2: users:x:100: \
	fsgqa:x:1000: fsgqa2:x:1001: nogroup:x:65534: >/etc/group
# glibc before 2.34 (bullseye's 2.31) has its files service outside libc,
# and static tests dlopen() it by the service names nsswitch.conf gives.
[ -e /etc/nsswitch.conf ] || printf '%s\n' 'passwd: files' 'group: files' \
	'shadow: files' 'hosts: files' >/etc/nsswitch.conf
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm
for fs in ext2 ext3 ext4; do
	[ -e /usr/sbin/mkfs.$fs ] || ln -s mke2fs /usr/sbin/mkfs.$fs
done
export PATH=$B:/usr/sbin:$PATH LTPROOT=$EXT_SUITES/ltp
# TCG runs tests 10 to 50 times slower than a CPU: LTP's own timeouts
# would stop tests that are merely slow.
export LTP_TIMEOUT_MUL=${EXT_TIMEOUT_MUL:-10}
# The race tests (fuzzy sync: inotify06, inotify09) run for their runtime,
# 150 s and more, however often they meet the race, and one vCPU under TCG
# meets it rarely: a tenth of it, in each of the passes.
export LTP_RUNTIME_MUL=${EXT_RUNTIME_MUL:-0.1}
# The device LTP's filesystem tests format (.needs_device, .all_filesystems),
# outside the filesystem under test, which it would otherwise be put on.
dd if=/dev/zero of=/tmp/ltpdev.img bs=1M count=0 seek=320 2>/dev/null
LTP_DEV=$(losetup -f) && losetup "$LTP_DEV" /tmp/ltpdev.img && export LTP_DEV

mount_fs() { # FS: mounted at /ext/FS, its device (or tmpfs) in $dev
	mkdir -p /ext/$1
	if [ "$1" = tmpfs ]; then
		mount -t tmpfs -o size=${IMG_MB}m tmpfs /ext/$1 && dev=tmpfs
		return
	fi
	dd if=/dev/zero of=/tmp/$1.img bs=1M count=0 seek=$IMG_MB 2>/dev/null
	# By path: busybox's sh runs its own mke2fs applet before PATH's.
	/usr/sbin/mke2fs -q -F -t $1 /tmp/$1.img >/dev/null || return 1
	dev=$(losetup -f) && losetup "$dev" /tmp/$1.img && mount -t $1 "$dev" /ext/$1
}

umount_fs() {
	umount /ext/$1
	[ "$1" = tmpfs ] || { losetup -d "$dev"; rm -f /tmp/$1.img; }
}

# set_knobs 0|1: every knob that can be on (status neither unsupported nor
# disabled, opt-ins included), and prints them.
set_knobs() {
	_on=
	for o in $VFSFAST_OPTS; do
		case $(head -n1 $VF/$o/status) in unsupported* | disabled*) continue ;; esac
		echo "$1" >$VF/$o/enabled
		[ "$(knob $o)" = "$1" ] || echo "EXT-KNOB-STUCK $o $1" >&2
		[ "$1" = 1 ] && _on="$_on $o"
	done
	echo "${_on# }"
}

# run_ltp PASS FS: every runtest line, in a directory of FS (TMPDIR).
run_ltp() {
	while read -r tag cmd; do
		mkdir -p /ext/$2/tmp
		# The test's stdin is not the list being read.
		(cd /ext/$2/tmp && TMPDIR=/ext/$2/tmp exec timeout -s KILL "$EXT_TIMEOUT" \
			sh -c "exec $cmd") </dev/null >/tmp/ltp.out 2>&1
		rc=$?
		seq=$(grep -o 'T\(PASS\|FAIL\|BROK\|CONF\|WARN\)' /tmp/ltp.out |
			sed 's/^T\(.\).*/\1/' | tr -d '\n')
		echo "EXT-RES ltp $1 $2 $tag $rc ${seq:--}"
		grep 'T\(FAIL\|BROK\|WARN\)' /tmp/ltp.out | head -n 3 |
			sed "s/^/EXT-LOG ltp $1 $2 $tag /"
		rm -rf /ext/$2/tmp
	done <$EXT_SUITES/ltp/runtest
}

run_vfstest() { # PASS FS
	for s in $EXT_VFSTEST; do
		[ "$s" != tmpfs ] || [ "$2" = tmpfs ] || continue
		# What a failed suite left would fail the next one's setup.
		rm -rf /ext/$2/* 2>/dev/null
		(cd /tmp && exec timeout -s KILL "$EXT_TIMEOUT" $EXT_SUITES/vfstest --test-$s \
			--device "$dev" --mountpoint /ext/$2 --fstype $2) </dev/null >/tmp/vfs.out 2>&1
		rc=$?
		why=$(grep -m1 'failure' /tmp/vfs.out | sed 's/^.*failure: *//' | tr ' ' _)
		echo "EXT-RES vfstest $1 $2 $s $rc ${why:--}"
		[ "$rc" = 0 ] || tail -n 3 /tmp/vfs.out | sed "s/^/EXT-LOG vfstest $1 $2 $s /"
	done
}

# fstests' check runs in the release's userland (bash, xfs_io, the
# release's mkfs and fsck), as real.py's programs do; its tree is copied
# into a tmpfs, where check writes its results.
FR=/fstests
FST_MB=${EXT_FST_MB:-1024}
fstests_root() {
	mount_userland $FR $EXT_SUITES/fstests-root.img mnt || return 1
	mkdir -p $FR/dev/shm && mount -t tmpfs tmpfs $FR/dev/shm
	# The lock tests (generic/131) talk to themselves over TCP on localhost.
	ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
}

# run_fstests PASS FS: check with TEST_DEV and SCRATCH_DEV on two loop
# devices over files in memory, made afresh for each pass: no pass sees
# what another left.  check's output goes out as EXT-FST lines.
run_fstests() {
	devs=
	for d in test scratch; do
		dd if=/dev/zero of=/tmp/fst-$d.img bs=1M count=0 seek=$FST_MB 2>/dev/null
		l=$(losetup -f) && losetup "$l" /tmp/fst-$d.img && devs="$devs $l"
	done
	set -- "$1" "$2" $devs
	mkdir -p $FR/mnt/test $FR/mnt/scratch
	rm -rf $FR/root/fstests && cp -a $EXT_SUITES/fstests $FR/root/fstests
	printf 'export %s\n' FSTYP=$2 TEST_DEV=$3 TEST_DIR=/mnt/test SCRATCH_DEV=$4 \
		SCRATCH_MNT=/mnt/scratch >$FR/root/fstests/local.config
	n=$(echo $EXT_FSTESTS | wc -w)
	{
		chroot $FR /usr/sbin/mkfs.$2 -q -F "$3" >/dev/null 2>&1 &&
			timeout -s KILL $((EXT_TIMEOUT * n)) chroot $FR /usr/bin/env -i \
			PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C TERM=dumb \
			/bin/bash -c "cd /root/fstests && exec ./check $EXT_FSTESTS" </dev/null 2>&1
		echo "EXT-FST-RC $?"
	} | while IFS= read -r l; do
		case $l in
		EXT-FST-RC*) echo "EXT-FST-END $1 $2 ${l#EXT-FST-RC }" ;;
		*) echo "EXT-FST $1 $2 $l" ;;
		esac
	done
	umount $FR/mnt/test $FR/mnt/scratch 2>/dev/null
	losetup -d "$3"
	losetup -d "$4"
	rm -f /tmp/fst-test.img /tmp/fst-scratch.img
}

if [ -n "$EXT_FSTESTS" ] && ! fstests_root; then
	echo "EXT-RES mount off fstests-root fstests-root 1 -"
	EXT_FSTESTS=
fi
load_vfsfast enable=none $EXT_MODULE_ARGS || echo "EXT-LOAD-FAILED"
for pass in $EXT_PASSES; do
	case $pass in off) v=0 ;; on) v=1 ;; *) continue ;; esac
	echo "EXT-KNOBS $pass $(set_knobs 0 >/dev/null; [ $v = 1 ] && set_knobs 1)"
	for fs in $EXT_FS; do
		[ "$EXT_LTP" = 1 ] || [ -n "$EXT_VFSTEST" ] || break
		if ! mount_fs $fs; then
			echo "EXT-RES mount $pass $fs $fs 1 -"
			continue
		fi
		t0=$(date +%s)
		[ "$EXT_LTP" = 1 ] && run_ltp $pass $fs
		echo "EXT-TIME $pass $fs ltp $(($(date +%s) - t0))"
		t0=$(date +%s)
		[ -n "$EXT_VFSTEST" ] && run_vfstest $pass $fs
		echo "EXT-TIME $pass $fs vfstest $(($(date +%s) - t0))"
		umount_fs $fs
	done
	for fs in $EXT_FSTESTS_FS; do
		[ -n "$EXT_FSTESTS" ] || break
		t0=$(date +%s)
		run_fstests $pass $fs
		echo "EXT-TIME $pass $fs fstests $(($(date +%s) - t0))"
	done
done
set_knobs 0 >/dev/null
unload_vfsfast
echo "EXT-DONE"
