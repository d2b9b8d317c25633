# The shared ftrace ops (6.1-arm64) next to another IPMODIFY user: with
# every auto knob on the shared ops, the holder takes vfs_readlink, and
# enabling readlink (a filter add on the registered ops) must fail with
# EBUSY and leave the other targets redirecting; once the holder goes,
# readlink enables, a holder arriving second is refused, and every
# disable and the unload leave no vfsfast site.  Prints "chk:" lines:
#
#   scripts/vfsfast-lab run --kernels 6.1-arm64 --test-modules \
#           scripts/workloads/sharedconflict.sh
VF=/sys/kernel/vfsfast
T=/sys/kernel/tracing
[ -d $T/options ] || mount -t tracefs none $T
sleep 2
insmod /lab/vfsfast.ko enable=auto || exit 1
echo "chk: auto on: $(for d in $VF/*/; do [ "$(cat $d/enabled)" = 1 ] && basename $d; done | tr '\n' ' ')"
echo "chk: sites hooked: $(grep -c . $T/enabled_functions)"
insmod /lab/vfsfast_holder.ko; echo "chk: holder(vfs_readlink) rc=$?"
echo 1 > $VF/readlink/enabled 2>/tmp/e; echo "chk: readlink enable rc=$? ($(cat /tmp/e)) knob=$(cat $VF/readlink/enabled)"
echo "chk: readlink status: $(head -1 $VF/readlink/status)"
echo "chk: sites hooked after refusal: $(grep -c . $T/enabled_functions); vfs_readlink line: $(grep vfs_readlink $T/enabled_functions)"
cnt() { for o in access_creds fstatat_empty statx_empty getname lookup_exec; do printf "%s=%s/%s " $o $(cat $VF/$o/stats/entered) $(cat $VF/$o/stats/hits); done; }
echo "chk: counters (entered/hits) before: $(cnt)"
for i in 1 2 3 4 5 6 7 8 9 10; do test -x /bin/sh; stat -L /dev/null >/dev/null; done
exec 3</lab/job.sh; stat -c %s /proc/self/fd/3 >/dev/null; exec 3<&-
echo "chk: counters after: $(cnt)"
rmmod vfsfast_holder; echo "chk: holder gone rc=$?"
echo 1 > $VF/readlink/enabled; echo "chk: readlink enable rc=$? knob=$(cat $VF/readlink/enabled) status=$(head -1 $VF/readlink/status) backend=$(head -1 $VF/readlink/backend)"
echo "chk: sites hooked: $(grep -c . $T/enabled_functions)"
insmod /lab/vfsfast_holder.ko 2>&1; echo "chk: holder arriving second rc=$?"
echo 0 > $VF/readlink/enabled; echo "chk: readlink off rc=$? sites hooked: $(grep -c . $T/enabled_functions)"
for d in $VF/*/; do echo 0 > $d/enabled 2>/dev/null; done
echo "chk: all off: sites hooked $(grep -c . $T/enabled_functions)"
for d in $VF/*/; do echo 1 > $d/enabled 2>/dev/null; done
echo "chk: all on (explicit): sites hooked $(grep -c . $T/enabled_functions)"
rmmod vfsfast; echo "chk: rmmod rc=$? sites hooked $(grep -c . $T/enabled_functions)"
