# Unloading while readlink calls are in flight, repeatedly: rmmod must
# succeed (the module drains in-flight calls) and results stay exact.

start_checker
i=0
fails=0
while [ $i -lt "${VFSFAST_UNLOADS:-20}" ]; do
	load_vfsfast enable=readlink || fails=$((fails + 1))
	sleep 0.2
	rmmod vfsfast || fails=$((fails + 1))
	[ -e $VF ] && fails=$((fails + 1))
	i=$((i + 1))
done
stop_checker
t_eq "unload: ${VFSFAST_UNLOADS:-20} load/rmmod cycles under load" 0 $fails
t_eq "unload: readlink results stayed exact" "0 ok" "$checked"

# A task asleep inside the replacement (its copy_to_user() waits on a
# userfaultfd) when rmmod comes: rmmod unhooks at once and then waits for
# that task; once the fault is resolved the task finishes in vfsfast's
# text with an exact result, and only then does the module go.
load_vfsfast enable=readlink
rm -f /tmp/release /tmp/uffd.out
uffdrl /tmp/links/l0100 /tmp/release >/tmp/uffd.out 2>&1 &
upid=$!
i=0
while ! grep -q blocked /tmp/uffd.out && [ $i -lt 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
rmmod vfsfast &
rpid=$!
sleep 2
t_eq "drain: a task asleep in the replacement holds rmmod back" \
	"blocked going" \
	"$(head -n1 /tmp/uffd.out) $(cat /sys/module/vfsfast/initstate 2>&1)"
touch /tmp/release
wait $rpid
rc=$?
wait $upid
t_eq "drain: rmmod completes once it leaves; its readlink was exact" \
	"0 ok 100 gone" \
	"$rc $(tail -n1 /tmp/uffd.out) $([ -e /sys/module/vfsfast ] && echo present || echo gone)"
