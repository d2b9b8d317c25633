# getname, path names without the 4 KB clear: status everywhere (7.x has
# it upstream); where the kernel lacks it, a differential of every
# path-taking system call knob off vs on (namediff: every length class,
# PROT_NONE edges, bad pointers; as root and as a user), the audit
# records of the same calls, names_cache allocations counted per stat by a
# kprobe, names taken on one side and released on the other while the
# knob flips (a FIFO open holds its name; io_uring's requests in
# flight), names_cache's object count
# before the load and after the unload, and (fault-injection build) a
# putname() parked inside the module while it unloads, with the check
# that catches a teardown before the drain; every object handed out all
# zero, with the checks that catch names kept unscrubbed and an empty
# name refused; on a KASAN kernel, a read of a name after putname() still
# reported.

. /lab/lib.sh; in_group t_getname || return 0

T=/sys/kernel/tracing
o=getname

# A KASAN kernel must still report a use of a name after putname(): a
# name kept for reuse would be live to it.  The knob is turned on where
# it can be (on the lab's KASAN kernels it cannot: unsupported, which
# load_time_opt checks below); vfsfast_nameuaf.ko then reads a name it
# released.
if grep -q ' kasan_report$' /proc/kallsyms; then
	load_vfsfast enable=none
	on=no
	echo 1 >$VF/$o/enabled 2>/dev/null && on=yes
	dmesg -c >/dev/null
	if insmod /lab/vfsfast_nameuaf.ko; then
		echo 1 >/sys/module/vfsfast_nameuaf/parameters/touch
		rmmod vfsfast_nameuaf
	fi
	rep=$(dmesg | grep 'BUG: KASAN' | head -n 1)
	seen=no
	case "$rep" in *"use-after-free in nameuaf_touch"*) seen=yes ;; esac
	t_checkv "$o: KASAN reports a read of a name after putname() (vfsfast_nameuaf)" \
		"knob on: $on; $rep" [ $seen = yes ]
	unload_vfsfast
fi

load_time_opt $o || return 0 2>/dev/null || exit 0
unload_vfsfast
all=yes
per_backend VFSFAST_TREE_DIFFS || all=no

# names_cache's objects in use, per-CPU slabs flushed first, with no
# name taken between the flush and the count: exact on a quiet guest.
names_in_use() { namediff count names_cache; }
n0=$(names_in_use)
load_vfsfast enable=none

# nd TAG ARGS...: one differential.
nd() {
	tag=$1
	shift
	rm -rf /tmp/nd && mkdir -m 1777 /tmp/nd
	h0=$(stat_of $o hits)
	out=$(namediff "$@" $VF/$o/enabled /tmp/nd 2>&1)
	rc=$?
	dh=$(($(stat_of $o hits) - h0))
	t_checkv "$o: every path-taking call knob off vs on, every name class ($tag)" \
		"$(echo "$out" | tail -n 4 | tr '\n' ' ') hits+$dh" [ $rc -eq 0 -a $dh -gt 0 ]
}
nd "as root"
[ $all = yes ] && nd "as a user" -u

# names_cache allocations per stat of a short name, counted by a kprobe
# on the slab allocator whose filter is names_cachep's value (which a
# first probe fetches: names_cachep_value): stock allocates one per
# call, the fast path none once its cache is warm.
ka=kmem_cache_alloc_noprof
grep -q " $ka\$" /proc/kallsyms || ka=kmem_cache_alloc
nc=$(names_cachep_value $ka)
if [ -n "$nc" ]; then
	mkdir -p /tmp/gn && : >/tmp/gn/f
	set_knob $o 0
	# The first argument by its place, not its register: x86's %di, arm64's %x0.
	off=$(kprobe_count "$ka s=\$arg1" "s == $nc" abloop stat 1000 /tmp/gn/f)
	set_knob $o 1
	on=$(kprobe_count "$ka s=\$arg1" "s == $nc" abloop stat 1000 /tmp/gn/f)
	set_knob $o 0
	# abloop's warm-up makes 1000 more; its start-up a few.
	t_checkv "$o: names_cache allocations for 1000 short-name stats: stock one each, none with the knob on" \
		"off $off, on $on (names_cachep $nc, probe on $ka)" \
		[ "$off" -ge 2000 -a "$on" -lt 20 ]
else
	t_fail "$o: names_cache allocations for 1000 short-name stats: stock one each, none with the knob on" \
		"no names_cachep value from a probe on $ka"
fi

# A FIFO's open holds its name until a writer comes: taken with the knob
# on and released with it off, and the reverse.
fifo_cross() { # knob-at-open knob-at-release
	rm -f /tmp/gn/p && mkfifo /tmp/gn/p
	set_knob $o $1
	cat /tmp/gn/p >/tmp/gn/out &
	r=$!
	sleep 0.3
	set_knob $o $2
	echo data >/tmp/gn/p
	wait $r
	echo "$(cat /tmp/gn/out)"
}
a=$(fifo_cross 1 0)
b=$(fifo_cross 0 1)
set_knob $o 0
t_checkv "$o: a name taken with the knob on and released with it off, and the reverse (a FIFO's open)" \
	"on/off: $a, off/on: $b" [ "$a" = data -a "$b" = data ]

# io_uring's path-taking requests (openat, openat2, statx; mkdirat,
# renameat and unlinkat where the kernel has them), the knob flipped
# while they are in flight, one of them an open of a FIFO held in an
# io-wq worker across the flip.
rm -rf /tmp/gnu && mkdir /tmp/gnu
h0=$(stat_of $o hits)
out=$(uringname $VF/$o/enabled /tmp/gnu 20 2>&1)
rc=$?
t_checkv "$o: io_uring's path-taking requests, the knob flipped while they are in flight: each answered as the system call" \
	"$(echo "$out" | tail -n 3 | tr '\n' ' ') hits+$(($(stat_of $o hits) - h0))" [ $rc = 0 ]

# Knob flips while stats and opens run on every CPU.
set_knob $o 1
h0=$(stat_of $o hits)
for i in 1 2 3 4; do
	(j=0; while [ $j -lt 400 ]; do stat /tmp/gn/f /tmp/gn/missing >/dev/null 2>&1; j=$((j + 1)); done) &
done
i=0
while [ $i -lt 40 ]; do set_knob $o $((i % 2)); sleep 0.05; i=$((i + 1)); done
wait
set_knob $o 0
t_checkv "$o: stats while the knob flips: the module still answers" \
	"hits+$(($(stat_of $o hits) - h0))" [ $(($(stat_of $o hits) - h0)) -gt 0 ]

unload_vfsfast
n1=$(names_in_use)
t_checkv "$o: names_cache holds as many objects after the unload as before the load" \
	"before $n0, after $n1" [ "$n0" = "$n1" ]

# Fault-injection build, the kernel's first backend: a putname() held
# inside the module (between its scrub and keeping the name) while the
# module unloads.  The drain waits for it and the teardown after it frees
# the name it kept: names_cache is back where it was.  With the teardown
# before the drain (fi_teardown_first=1: the guard removed) the held
# task keeps its name after the cache was emptied, and that name is never
# freed, which the count must catch.
if [ $all = yes ] && first_backend; then
	P=/sys/module/vfsfast/parameters
	# Every object the cache hands out is all zero (fi_getname_check
	# looks at each); keeping names unscrubbed (fi_getname_noscrub) must
	# show as dirty objects, and an empty name refused under LOOKUP_EMPTY
	# (fi_getname_noempty) as differences in namediff.
	insmod /lab/vfsfast-fi.ko enable=none ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
	echo 1 >$P/fi_getname_check
	rm -rf /tmp/nd && mkdir /tmp/nd
	out=$(namediff $VF/$o/enabled /tmp/nd 2>&1)
	rc=$?
	t_checkv "$o: every object taken from the cache during the differential is all zero (fi_getname_check)" \
		"$(echo "$out" | tail -n 1), dirty $(cat $P/fi_getname_dirty)" [ $rc = 0 -a "$(cat $P/fi_getname_dirty)" = 0 ]
	echo 1 >$P/fi_getname_noscrub
	rm -rf /tmp/nd && mkdir /tmp/nd
	namediff $VF/$o/enabled /tmp/nd >/dev/null 2>&1
	echo 0 >$P/fi_getname_noscrub
	t_checkv "$o: the check catches names kept without the scrub (fi_getname_noscrub)" \
		"dirty $(cat $P/fi_getname_dirty)" [ "$(cat $P/fi_getname_dirty)" -gt 0 ]
	echo 0 >$P/fi_getname_check
	echo 1 >$P/fi_getname_noempty
	rm -rf /tmp/nd && mkdir /tmp/nd
	out=$(namediff $VF/$o/enabled /tmp/nd 2>&1)
	rc=$?
	echo 0 >$P/fi_getname_noempty
	t_checkv "$o: the differential catches an empty name refused under LOOKUP_EMPTY (fi_getname_noempty)" \
		"rc=$rc; $(echo "$out" | head -n 2 | tr '\n' ' ')$(echo "$out" | tail -n 1)" [ $rc = 1 ]
	unload_vfsfast
	cp /lab/bin/runas /tmp/gnpark
	fi_unload() { # fi_teardown_first
		b=$(names_in_use)
		insmod /lab/vfsfast-fi.ko enable=$o fi_teardown_first=$1 \
			${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
		echo gnpark >$P/fi_putname_park
		/tmp/gnpark -c /etc/passwd >/dev/null &
		w=$!
		i=0
		while [ "$(cat $P/fi_putname_parked)" = 0 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
		parked=$(cat $P/fi_putname_parked)
		rmmod vfsfast &
		u=$!
		sleep 1
		gone=$([ -d /sys/module/vfsfast ] && echo no || echo yes)
		echo >$P/fi_putname_park 2>/dev/null
		wait $w
		wait $u
		echo "parked $parked, unloaded while held: $gone, before $b, after $(names_in_use)"
	}
	# held_delta RESULT: names_cache's after minus before.
	held_delta() {
		echo "$1" | sed -n 's/.*before \([0-9]*\), after \([0-9]*\)$/\2 \1/p' | awk '{ print $1 - $2 }'
	}
	r=$(fi_unload 0)
	d=$(held_delta "$r")
	t_checkv "$o: a putname() held inside the module at unload: the drain waits, the teardown frees its name" \
		"$r" [ "${r#parked 1, unloaded while held: no,}" != "$r" -a "$d" = 0 ]
	r=$(fi_unload 1)
	d=$(held_delta "$r")
	t_checkv "$o: the count catches a teardown before the drain (fi_teardown_first): the held name leaks" \
		"$r" [ "${r#parked 1, unloaded while held: no,}" != "$r" -a "$d" = 1 ]
fi

# The audit records of the same stat and access calls, knob off and on
# (auditdiff's rule makes audit contexts live, and the fast path steps
# aside for them: the records must be equal).  Last: audit stays enabled
# for the processes started after it.
if [ $all = yes ] && first_backend; then
	load_vfsfast enable=none
	out=$(auditdiff $VF/$o/enabled /tmp/gn/f /etc/passwd 2>&1)
	rc=$?
	t_checkv "$o: audit records of the same calls knob off vs on" \
		"$(echo "$out" | tail -n 3 | tr '\n' ' ')" [ $rc -eq 0 ]
	unload_vfsfast
fi
