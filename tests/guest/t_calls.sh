# fstatat_empty, statx_empty, access_creds and proc_filesystems, the calls every
# process makes: status everywhere; where the kernel lacks them upstream,
# differential tests knob off vs on (scdiff: every flag, mode, descriptor
# kind, bad pointer and credential state, on tmpfs, ext4, overlayfs,
# procfs, sysfs and devtmpfs; /proc/filesystems at every offset and read
# size, across filesystem registrations, and under registration churn),
# the allocations each removes counted by kprobe events, audit records
# compared, an unload while a fast path sleeps in a user-space page
# fault, and a filesystem unregistered while a reader is parked between
# making the text and keeping it, and a wrong st_gid the differential must
# see (the fault-injection build).

. /lab/lib.sh; in_group t_calls || return 0

T=/sys/kernel/tracing
load_vfsfast enable=none

# On: the knobs the kernel lacks upstream; the others say why not.
ON=
for o in fstatat_empty statx_empty access_creds proc_filesystems; do
	oneline "$(cat $VF/$o/status)"; st=$_one
	eval "lacks=\$VFSFAST_OPT_$(echo $o | tr a-z A-Z)_LACKS"
	if [ -n "$lacks" ]; then
		t_checkv "$o: unsupported where the kernel lacks what it needs, saying why" "$st" \
			[ "$(head -n 1 $VF/$o/status)" = "unsupported: $lacks" ]
		t_check "$o: enable refused where the kernel lacks what it needs" \
			sh -c "! echo 1 >$VF/$o/enabled 2>/dev/null"
	elif [ "$(eval echo \$VFSFAST_OPT_$(echo $o | tr a-z A-Z)_UPSTREAM)" = none ]; then
		t_checkv "$o: off after enable=none where the kernel lacks it" "$st" \
			[ "$(head -n 1 $VF/$o/status)" = off ]
		ON="$ON $o"
	else
		t_checkv "$o: unsupported where the kernel has it upstream, saying so" "$st" \
			grep -q '^unsupported: the kernel has it upstream' $VF/$o/status
		t_check "$o: enable refused where the kernel has it upstream" \
			sh -c "! echo 1 >$VF/$o/enabled 2>/dev/null"
	fi
done
if [ -z "$ON" ]; then
	unload_vfsfast
	return 0 2>/dev/null || exit 0
fi

# The files: tmpfs with every permission and owner the checks tell apart,
# the read-only ext4 image, an overlay of tmpfs on ext4, procfs, sysfs,
# devtmpfs.
S=/tmp/sc
rm -rf $S && mkdir -p $S/d $S/d700
for m in 000 400 600 644 700 755 4755 111; do
	: >$S/f$m && chmod $m $S/f$m
	: >$S/u$m && chmod $m $S/u$m && chown 1000:1000 $S/u$m
done
chmod 700 $S/d700 && : >$S/d700/inner
# Owner and group apart: in every other file of the lists they are equal,
# and a field copied from the other would go unseen (fi_stat_gid_from_uid
# below).
: >$S/own1000-1001 && chown 1000:1001 $S/own1000-1001
: >$S/own0-1000 && chmod 640 $S/own0-1000 && chown 0:1000 $S/own0-1000
ln -s f644 $S/link && ln -s nowhere $S/dangling && mkfifo $S/fifo
ls -d $S/* $S/d700/inner >/tmp/sc.list
head -n 12 /lab/ext4.list >>/tmp/sc.list
ovl=no
if grep -q overlay /proc/filesystems || insmod /lab/modules/overlay.ko 2>/dev/null; then
	mkdir -p /tmp/ovl/u /tmp/ovl/w /tmp/ovl/m
	: >/tmp/ovl/u/upper && chmod 640 /tmp/ovl/u/upper
	lower=$(dirname "$(head -n 1 /lab/ext4.list)")
	if mount -t overlay -o lowerdir=$lower,upperdir=/tmp/ovl/u,workdir=/tmp/ovl/w none /tmp/ovl/m; then
		ls -d /tmp/ovl/m/* | head -n 8 >>/tmp/sc.list
		ovl=yes
	fi
fi
note "calls: overlayfs in the lists: $ovl"
printf '%s\n' /proc/self/status /proc/1/status /proc/self/fd /proc/self/exe \
	/proc/sys/kernel/hostname /proc/filesystems /proc/1/mem \
	/sys/devices/system/cpu/cpu0/topology/core_id /sys/kernel/mm \
	/sys/kernel/vfsfast/fstatat_empty/enabled /dev/null /dev/vda /tmp /proc /sys \
	/mnt/ext4 >>/tmp/sc.list
t_check "calls: the lists name an overlayfs file where the kernel has overlayfs" \
	[ $ovl = yes -o ! -f /lab/modules/overlay.ko ]

# A setuid-root copy, for the credentials a setuid program runs with.
cp /lab/bin/scdiff $S/scdiff-suid && chmod 4755 $S/scdiff-suid

diff_one() { # knob, mode, state: runs scdiff, one result
	h0=$(stat_of $1 hits)
	f0=$(stat_of $1 fallbacks)
	case $3 in
	setuid) out=$(/lab/bin/runas 1000 $S/scdiff-suid -k $VF/$1/enabled -s none $2 /tmp/sc.list 2>&1) ;;
	*) out=$(scdiff -k $VF/$1/enabled -s $3 $2 /tmp/sc.list 2>&1) ;;
	esac
	rc=$?
	dh=$(($(stat_of $1 hits) - h0))
	df=$(($(stat_of $1 fallbacks) - f0))
	note "$1 $3: $(echo "$out" | tail -n 1) hits+$dh fallbacks+$df"
	if [ $rc -eq 0 ] && echo "$out" | grep -q "mismatches=0"; then
		t_ok "$1: differential $2 as $3: knob off vs on equal"
	else
		t_fail "$1: differential $2 as $3: knob off vs on equal" \
			"$(echo "$out" | head -n 3 | tr '\n' ' ')"
	fi
}

# Every credential state, the audit records, the registration churn and
# the forced interleaving on the kernel's first backend (every backend in
# the full profile); on the others, what goes through the backend: the
# differentials as root and one state that keeps the override, the
# counts, /proc/filesystems read every way, the unload.
keep="root user userns capdrop-all nnp keepcaps" change="fsuid capdrop setuid" sts="root user"
all=yes
per_backend VFSFAST_TREE_DIFFS || { keep=root change=setuid sts=root all=no; }

case " $ON " in
*" fstatat_empty "*)
	for st in $sts; do
		diff_one fstatat_empty stat $st
		t_checkv "fstatat_empty: the fast path answered ($st)" "hits+$dh" [ $dh -gt 0 ]
	done
	;;
esac

# A copy that fills st_gid from the owner's uid (the fault-injection
# build's fi_stat_gid_from_uid) is right for every file whose owner and
# group are equal, and the lists had no other until LTP's fchown05 (a
# file chowned to 700:701, then fstat(), which glibc 2.33 to 2.38 make
# newfstatat(fd, "", AT_EMPTY_PATH)) caught it and this differential did
# not (Documentation/lab.md, External validators): with the own* files
# the differential must see it, on them alone, and with the switch off
# see nothing.  statx_empty's copy has the same field and its own switch.
gid_fault() { # knob, switch, the call scdiff names, the field
	unload_vfsfast
	for fi in 0 1; do
		insmod /lab/vfsfast-fi.ko enable=none $2=$fi \
			${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
		out=$(scdiff -k $VF/$1/enabled -s root stat /tmp/sc.list 2>&1)
		rc=$?
		rmmod vfsfast
		seen=$(echo "$out" | grep -Ec "^MISMATCH $3 (fd|opath-nofollow):/tmp/sc/own")
		other=$(echo "$out" | grep '^MISMATCH' |
			grep -Evc "^MISMATCH $3 (fd|opath-nofollow):/tmp/sc/own")
		got="rc $rc, $seen on them, $other other; $(echo "$out" | tail -n 1)"
		equal=no
		[ $rc = 0 ] && echo "$out" | grep -q 'mismatches=0' && equal=yes
		if [ $fi = 1 ]; then
			t_checkv "$1: the differential sees $4 filled from the uid, on the files whose owner and group differ ($2)" \
				"$got" [ $rc -ne 0 -a "$seen" -gt 0 -a "$other" = 0 ]
		else
			t_checkv "$1: the fault-injection build, $2 off: the differential equal" \
				"$got" [ $equal = yes ]
		fi
	done
	load_vfsfast enable=none
}
case "$all $ON " in
"yes "*" fstatat_empty "*)
	gid_fault fstatat_empty fi_stat_gid_from_uid newfstatat st_gid ;;
esac
case "$all $ON " in
"yes "*" statx_empty "*)
	gid_fault statx_empty fi_statx_gid_from_uid statx stx_gid ;;
esac

case " $ON " in
*" statx_empty "*)
	for st in $sts; do
		diff_one statx_empty stat $st
		t_checkv "statx_empty: the fast path answered ($st)" "hits+$dh" [ $dh -gt 0 ]
	done
	# The mount ids come from the module's copy of struct mount, checked
	# at load: a copy one int off must leave it unsupported.
	if [ $all = yes ]; then
		unload_vfsfast
		insmod /lab/vfsfast-fi.ko enable=none fi_mnt_id_skew=1 \
			${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND} 2>/tmp/insmod.err
		oneline "$(cat $VF/statx_empty/status 2>&1; cat /tmp/insmod.err)"; st=$_one
		rmmod vfsfast
		load_vfsfast enable=none
		t_checkv "statx_empty: unsupported when the struct mount copy is wrong (fi_mnt_id_skew)" \
			"$st" [ "${st#unsupported: struct mount is not as expected}" != "$st" ]
	fi
	;;
esac

case " $ON " in
*" access_creds "*)
	# Where the override changes nothing, the fast path answers; where it
	# changes something, every call goes to stock unchanged.
	for st in $keep; do
		diff_one access_creds access $st
		t_checkv "access_creds: the override skipped as $st (it would change nothing)" \
			"hits+$dh fallbacks+$df" [ $dh -gt 0 -a $df -eq 0 ]
	done
	for st in $change; do
		diff_one access_creds access $st
		t_checkv "access_creds: the override kept as $st (it changes the credentials)" \
			"hits+$dh fallbacks+$df" [ $dh -eq 0 -a $df -gt 0 ]
	done
	;;
esac

# With audit collecting for the task, stock records the empty name and a
# PATH item for it: the fast paths hand back, and the records are stock's.
[ $all = yes ] && for o in $ON; do
	[ $o = proc_filesystems ] && continue
	h0=$(stat_of $o hits)
	f0=$(stat_of $o fallbacks)
	out=$(auditdiff $VF/$o/enabled $(head -n 6 /tmp/sc.list) /proc/filesystems /dev/null 2>&1)
	rc=$?
	dh=$(($(stat_of $o hits) - h0))
	df=$(($(stat_of $o fallbacks) - f0))
	ok=no
	[ $rc -eq 0 ] && echo "$out" | grep -q 'path_records=[1-9]' && ok=yes
	t_checkv "$o: audit records knob off vs on equal, with PATH items" \
		"$(echo "$out" | tail -n 3 | tr '\n' ' ') hits+$dh fallbacks+$df" [ $ok = yes ]
	case $o in
	fstatat_empty | statx_empty)
		t_checkv "$o: audit collecting: every call handed to stock" "hits+$dh fallbacks+$df" \
			[ $dh -eq 0 -a $df -gt 0 ] ;;
	esac
done

# Allocations counted by kprobe events during 100 operations (after
# abloop's 1,000 warm-up calls and its exec): off, one per call; on, none.
# count KNOB VALUE ABLOOP-MODE PROBE [ARGS...]: the events, or with an
# argument cache= and $NC names_cachep's value, the allocations from it
# (the name buffers getname() takes) among them.
count() {
	kn=$1 val=$2 mode=$3
	shift 3
	echo "p:kprobes/vfcall $*" >>$T/kprobe_events || return 1
	echo 'comm == "abloop"' >$T/events/kprobes/vfcall/filter
	set_knob $kn $val
	echo >$T/trace
	echo 1 >$T/events/kprobes/vfcall/enable
	abloop $mode 100 $S/f644 >/dev/null
	echo 0 >$T/events/kprobes/vfcall/enable
	set_knob $kn 0
	awk -v nc="$NC" '/ vfcall:/ { c = n = "-"
		if (nc != "") n = nc
		for (i = 1; i <= NF; i++)
			if ($i ~ /^cache=/) c = substr($i, 7)
		if (c == n) k++ } END { print k + 0 }' $T/trace
	echo "-:kprobes/vfcall" >>$T/kprobe_events
}
echo 1 >$T/tracing_on
# names_cachep allocations per fstatat(fd, "") and per statx(fd, "").
for o in fstatat_empty statx_empty; do
	case " $ON " in *" $o "*) ;; *) continue ;; esac
	ev="kmem_cache_alloc cache=\$arg1:x64"
	mode=$(echo ${o%_empty} | tr _ -)-empty
	NC=$(names_cachep_value kmem_cache_alloc)
	off=$(count $o 0 $mode $ev)
	on=$(count $o 1 $mode $ev)
	t_checkv "$o: no name buffer per ${o%_empty}(fd, \"\") (names_cachep allocations: stock one per call)" \
		"1,100 calls: off $off, on $on (names_cachep ${NC:-not found})" \
		[ -n "$NC" -a "$off" -ge 1100 -a "$on" -lt 10 ]
	NC=
done
case " $ON " in
*" access_creds "*)
	off=$(count access_creds 0 access prepare_creds)
	on=$(count access_creds 1 access prepare_creds)
	t_checkv "access_creds: no credential copy per access() (prepare_creds: stock one per call)" \
		"1,100 calls: off $off, on $on" [ "$off" -ge 1100 -a "$on" -lt 10 ]
	;;
esac

# fstatat_empty's and statx_empty's fast paths copy to user space with
# page faults disabled and hand the whole call to stock when the copy
# would fault, so a call whose buffer is a userfaultfd page sleeps in
# stock's code, with nothing of vfsfast on its stack and no module
# reference: rmmod goes through at once, and the call completes with
# stock's answer once the page is filled.  (Before, the fast path slept
# there itself, holding the module, and rmmod was refused.)  The fast
# path's fallback count says the call went to stock.
for o in fstatat_empty statx_empty; do
	case " $ON " in *" $o "*) ;; *) continue ;; esac
	grep -q '^vfsfast ' /proc/modules || load_vfsfast enable=none
	set_knob $o 1
	fb0=$(stat_of $o fallbacks)
	rm -f /tmp/uffd.go
	uffdrl --${o%_empty} $S/f644 /tmp/uffd.go >/tmp/uffd.out 2>&1 &
	up=$!
	i=0
	while ! grep -q blocked /tmp/uffd.out && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	st=$(parked_stack $up handle_userfault)
	case "$st" in *vfsfast*) in_fast=yes ;; *) in_fast=no ;; esac
	fb=$(($(stat_of $o fallbacks) - fb0))
	t0=$(date +%s)
	if rmmod vfsfast 2>/tmp/rmmod.err; then unloaded=yes; else unloaded=no; fi
	t1=$(date +%s)
	touch /tmp/uffd.go
	wait $up
	urc=$?
	t_checkv "$o: rmmod goes through at once while the call sleeps in a page fault (handed to stock, no vfsfast frame)" \
		"in vfsfast: $in_fast, fallbacks+$fb, unloaded: $unloaded in $((t1 - t0)) s; $(cat /tmp/uffd.out /tmp/rmmod.err | tr '\n' ' ')" \
		[ $in_fast = no -a $fb -ge 1 -a $unloaded = yes -a $((t1 - t0)) -le 5 ]
	t_checkv "$o: the sleeping call completes with stock's answer" \
		"$(cat /tmp/uffd.out | tr '\n' ' ')" [ $urc -eq 0 ]
	grep -q '^vfsfast ' /proc/modules && set_knob $o 0
done
grep -q '^vfsfast ' /proc/modules || load_vfsfast enable=none

# /proc/filesystems: every read size and offset, knob off, then on twice
# (a miss that keeps the text, then a hit), with and without the test
# filesystems registered; then reads under registration churn, each of
# which must be one of the lists the churn passes through.
fs_reads() { # prints a checksum per read size and offset
	for bs in 1 7 100 4096; do
		for skip in 0 1 3 50; do
			printf '%s %s %s\n' $bs $skip \
				"$(dd if=/proc/filesystems bs=$bs skip=$skip 2>/dev/null | md5sum)"
		done
	done
}
case " $ON " in
*" proc_filesystems "*)
	for reg in before registered unregistered; do
		[ $reg = registered ] && insmod /lab/vfsfast_testfs.ko
		[ $reg = unregistered ] && rmmod vfsfast_testfs
		set_knob proc_filesystems 0
		fs_reads >/tmp/fs.off
		[ $reg = before ] && t_checkv "proc_filesystems: a checksum of every read size and offset (the comparisons see the data)" \
			"$(head -n 1 /tmp/fs.off)" [ "$(grep -c ' [0-9a-f]\{32\} ' /tmp/fs.off)" = 16 ]
		set_knob proc_filesystems 1
		h0=$(stat_of proc_filesystems hits)
		fs_reads >/tmp/fs.on1
		fs_reads >/tmp/fs.on2
		dh=$(($(stat_of proc_filesystems hits) - h0))
		set_knob proc_filesystems 0
		t_checkv "proc_filesystems: every read size and offset equal knob off vs on ($reg the test filesystems)" \
			"hits+$dh $(diff /tmp/fs.off /tmp/fs.on1 | head -n 2 | tr '\n' ' ')" \
			cmp -s /tmp/fs.off /tmp/fs.on1
		t_checkv "proc_filesystems: the kept text served again, equal ($reg the test filesystems)" \
			"hits+$dh" sh -c "[ $dh -gt 0 ] && cmp -s /tmp/fs.off /tmp/fs.on2"
		[ $reg = registered ] && t_check "proc_filesystems: the test filesystems listed, both kinds" \
			grep -q '^nodev	vfsfasttestfs$' /proc/filesystems
		[ $reg = registered ] && t_check "proc_filesystems: a FS_REQUIRES_DEV type listed without nodev" \
			grep -q '^	vfsfasttestfsblk$' /proc/filesystems
	done
	;;
esac
case "$all $ON " in
"yes "*" proc_filesystems "*)
	cat /proc/filesystems >/tmp/fs.base
	{ cat /tmp/fs.base; printf 'nodev\tvfsfasttestfs\n'; } >/tmp/fs.one
	{ cat /tmp/fs.one; printf '\tvfsfasttestfsblk\n'; } >/tmp/fs.two
	set_knob proc_filesystems 1
	( i=0; while [ $i -lt "${VFSFAST_FS_CHURN:-30}" ]; do insmod /lab/vfsfast_testfs.ko; rmmod vfsfast_testfs; i=$((i + 1)); done ) &
	churn=$!
	bad=0 n=0
	while kill -0 $churn 2>/dev/null; do
		cat /proc/filesystems >/tmp/fs.now
		n=$((n + 1))
		cmp -s /tmp/fs.now /tmp/fs.base || cmp -s /tmp/fs.now /tmp/fs.one ||
			cmp -s /tmp/fs.now /tmp/fs.two || bad=$((bad + 1))
	done
	wait $churn
	cat /proc/filesystems >/tmp/fs.after
	set_knob proc_filesystems 0
	t_checkv "proc_filesystems: reads under registration churn each one of its lists" \
		"$n reads, $bad other" [ $bad -eq 0 -a $n -gt 0 ]
	t_check "proc_filesystems: after the churn, the text is stock's" cmp -s /tmp/fs.after /tmp/fs.base
	;;
esac

grep -q '^vfsfast ' /proc/modules && unload_vfsfast
t_check "calls: module unloaded" sh -c "! grep -q '^vfsfast ' /proc/modules"

# A filesystem unregistered while a reader is parked after the stock show
# made its text and before the text is checked and kept (fault-injection
# build): the guard (the text tagged with the generation read before it
# was made) must keep the stale text from being served; with fi_late_tag,
# the mistake it prevents, it is served, so the test can fail.
case "$all $ON " in
"yes "*" proc_filesystems "*)
	P=/sys/module/vfsfast/parameters
	cp /lab/bin/abloop /tmp/fsrace
	for late in 0 1; do
		insmod /lab/vfsfast-fi.ko enable=none ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
		insmod /lab/vfsfast_testfs.ko
		echo $late >$P/fi_late_tag
		echo fsrace >$P/fi_park_show
		set_knob proc_filesystems 1
		/tmp/fsrace read-file 1 >/dev/null &
		r=$!
		i=0
		while [ "$(cat $P/fi_parked)" = 0 ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
		parked=$(cat $P/fi_parked)
		rmmod vfsfast_testfs
		echo >$P/fi_park_show
		wait $r
		served=$(grep -c vfsfasttestfs /proc/filesystems)
		set_knob proc_filesystems 0
		stock=$(grep -c vfsfasttestfs /proc/filesystems)
		if [ $late = 0 ]; then
			t_checkv "proc_filesystems: a filesystem unregistered while the text is made is never served" \
				"parked $parked, served $served, stock $stock" [ "$parked" -ge 1 -a $served = 0 -a $stock = 0 ]
		else
			t_checkv "proc_filesystems: the forced interleaving catches a late tag (fi_late_tag serves the stale text)" \
				"parked $parked, served $served, stock $stock" [ "$parked" -ge 1 -a $served -gt 0 -a $stock = 0 ]
		fi
		unload_vfsfast
	done
	;;
esac
umount /tmp/ovl/m 2>/dev/null
