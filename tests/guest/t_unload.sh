# Unloading under load, repeatedly: each cycle loads the module with every
# optimization on, parks a readlink() inside the replacement (its buffer
# faults into a userfaultfd that answers only later), and tries rmmod:
# the parked task holds the module, so rmmod must answer EBUSY at once and
# change nothing; once the fault is released and the readlink() has
# returned, rmmod must succeed.  Meanwhile the readlink checker runs, and a
# fanotify permission listener that answers after 20 ms holds a reader of
# a marked tmpfs asleep in the kernel's permission path (fsnotify's slow
# path leaves no frame of vfsfast's on the stack, so it never holds rmmod
# back).  The parked readlink must return the exact link, and nothing may
# be left.

. /lab/lib.sh; in_group t_unload || return 0

# Starts a readlink() that faults on its userfaultfd buffer, inside the
# replacement when the knob is on, and waits (up to 5 s) until it sleeps
# there; /tmp/release lets it go.  Sets upid.
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
while [ $i -lt "${VFSFAST_UNLOADS:-20}" ]; do
	load_vfsfast enable=all || fails=$((fails + 1))
	park_readlink
	if rmmod vfsfast 2>/tmp/rmmod.err; then
		fails=$((fails + 1))
		note "cycle $i: rmmod succeeded while a readlink() was parked inside"
	elif ! grep -qi "busy\|in use\|unavailable" /tmp/rmmod.err || [ ! -e /sys/module/vfsfast ]; then
		fails=$((fails + 1))
		note "cycle $i: rmmod: $(cat /tmp/rmmod.err)"
	fi
	touch /tmp/release
	wait $upid
	urc=$?
	unload_vfsfast 2>/tmp/rmmod.err || {
		fails=$((fails + 1))
		note "cycle $i: rmmod after the release: $(cat /tmp/rmmod.err)"
	}
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
t_eq "unload: cycles of load, enable all, park a readlink, rmmod EBUSY while parked, rmmod after, under load" \
	0 $fails
t_eq "unload: readlink results stayed exact" "0 ok" "$checked"
fpev=$(sed -n 's/^fanperm: events=//p' /tmp/fp.out)
t_checkv "unload: the permission listener answered throughout" \
	"$fpev events, $(cat /tmp/fp.readers) reader rounds" [ "$fprc" = 0 -a "${fpev:-0}" -gt 0 ]
umount /tmp/fp

# A task asleep inside the replacement (its copy_to_user() waits on a
# userfaultfd, for as long as user space likes) when rmmod comes: rmmod
# answers EBUSY at once and the module stays as it was; once the fault is
# resolved the task finishes with an exact result and drops its
# reference, and rmmod succeeds.
load_vfsfast enable=readlink
park_readlink
t0=$(date +%s)
rmmod vfsfast 2>/tmp/rmmod.err
rc=$?
t1=$(date +%s)
note "drain: rmmod answered in $((t1 - t0)) s: $(cat /tmp/rmmod.err)"
t_eq "drain: a task asleep in the replacement: rmmod refused at once, module live, readlink on" \
	"1 blocked live active" \
	"$([ $rc -ne 0 ] && [ $((t1 - t0)) -le 5 ] && echo 1) $(head -n1 /tmp/uffd.out) $(cat /sys/module/vfsfast/initstate 2>&1) $(head -n1 $VF/readlink/status)"
touch /tmp/release
wait $upid
unload_vfsfast
rc=$?
t_eq "drain: once it leaves, rmmod completes; its readlink was exact" \
	"0 ok 100 gone" \
	"$rc $(tail -n1 /tmp/uffd.out) $([ -e /sys/module/vfsfast ] && echo present || echo gone)"
