# Unloading under load, repeatedly: each cycle loads the module with every
# optimization on, parks a readlink() whose buffer faults into a
# userfaultfd that answers only later, and tries rmmod: the replacement
# copies with page faults disabled and hands such a call to stock, so the
# parked task sleeps with nothing of vfsfast on its stack and holds no
# reference, and rmmod must go through at once; once the fault is
# released the readlink() must return the exact link.  Meanwhile the readlink checker runs, and a
# fanotify permission listener that answers after 20 ms holds a reader of
# a marked tmpfs asleep in the kernel's permission path (fsnotify's slow
# path leaves no frame of vfsfast's on the stack, so it never holds rmmod
# back).  The parked readlink must return the exact link, and nothing may
# be left.

. /lab/lib.sh; in_group t_unload || return 0

# Starts a readlink() that faults on its userfaultfd buffer, and waits (up
# to 5 s) until it sleeps there; /tmp/release lets it go.  Sets upid.
park_readlink() {
	rm -f /tmp/release /tmp/uffd.out
	uffdrl /tmp/links/l0100 /tmp/release >/tmp/uffd.out 2>&1 &
	upid=$!
	j=0
	while ! grep -qs blocked /tmp/uffd.out && [ $j -lt 100 ]; do
		sleep 0.05
		j=$((j + 1))
	done
}

need_links
mkdir -p /tmp/fp
mount -t tmpfs none /tmp/fp
echo data >/tmp/fp/f
ln -s /tmp/links/l0100 /tmp/fp/link
rm -f /tmp/fp.stop /tmp/fp.out /tmp/fp.readers
fanperm /tmp/fp 20000 /tmp/fp.stop >/tmp/fp.out 2>&1 &
fp_pid=$!
i=0
while ! grep -q ready /tmp/fp.out && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
t_eq "unload: fanotify permission listener is in place" ready "$(head -n1 /tmp/fp.out)"
(
	n=0
	while [ ! -f /tmp/fp.stop ]; do
		cat /tmp/fp/f >/dev/null && readlink /tmp/fp/link >/dev/null
		n=$((n + 1))
	done
	echo $n >/tmp/fp.readers
) &
reader_pid=$!

start_checker
i=0
fails=0
unloads=$(backend_size VFSFAST_UNLOADS 20)
while [ $i -lt "$unloads" ]; do
	load_vfsfast enable=all || fails=$((fails + 1))
	park_readlink
	st=$(parked_stack $upid handle_userfault)
	case "$st" in
	*vfsfast*)
		fails=$((fails + 1))
		note "cycle $i: the parked readlink() sleeps in vfsfast's text: $(echo "$st" | grep vfsfast | head -n 2 | tr '\n' ' ')" ;;
	*handle_userfault*) ;;
	*) note "cycle $i: no stack showed the fault after 5 s: $(echo "$st" | head -n 4 | tr '\n' ' ')" ;;
	esac
	if ! rmmod vfsfast 2>/tmp/rmmod.err || [ -e /sys/module/vfsfast ]; then
		fails=$((fails + 1))
		note "cycle $i: rmmod while a readlink() was parked: $(cat /tmp/rmmod.err)"
		unload_vfsfast 2>/dev/null
	fi
	touch /tmp/release
	wait $upid
	urc=$?
	if [ $urc -ne 0 ] || [ "$(head -n1 /tmp/uffd.out)" != blocked ]; then
		fails=$((fails + 1))
		note "cycle $i: parked readlink: $(tr '\n' ' ' </tmp/uffd.out)"
	fi
	[ -e /sys/module/vfsfast ] && fails=$((fails + 1))
	i=$((i + 1))
done
stop_checker
touch /tmp/fp.stop
wait $reader_pid
wait $fp_pid
fprc=$?
t_eq "unload: cycles of load, enable all, park a readlink in a fault, rmmod at once, exact readlink after, under load" \
	0 $fails
t_eq "unload: readlink results stayed exact" "0 ok" "$checked"
fpev=$(sed -n 's/^fanperm: events=//p' /tmp/fp.out)
t_checkv "unload: the permission listener answered throughout" \
	"$fpev events, $(cat /tmp/fp.readers) reader rounds" [ "$fprc" = 0 -a "${fpev:-0}" -gt 0 ]
umount /tmp/fp

# A readlink() whose copy waits on a userfaultfd, for as long as user space
# likes, when rmmod comes: the fast path handed it to stock before it
# slept, so rmmod completes at once (the drain has nobody to wait for) and
# the module is gone; once the fault is resolved the call finishes in
# stock's code with an exact result.  Before, the replacement slept there
# holding the module, and rmmod answered EBUSY.
load_vfsfast enable=readlink
park_readlink
t0=$(date +%s)
rmmod vfsfast 2>/tmp/rmmod.err
rc=$?
t1=$(date +%s)
note "drain: rmmod answered in $((t1 - t0)) s: $(cat /tmp/rmmod.err)"
t_eq "drain: a readlink() asleep in a fault: rmmod completes at once, module gone" \
	"0 1 blocked gone" \
	"$rc $([ $((t1 - t0)) -le 5 ] && echo 1) $(head -n1 /tmp/uffd.out) $([ -e /sys/module/vfsfast ] && echo present || echo gone)"
touch /tmp/release
wait $upid
t_eq "drain: once released, its readlink was exact" "ok 100" "$(tail -n1 /tmp/uffd.out)"
