# Turning the optimization on and off many times while readlink runs: the
# loop checks every result, the console must stay clean.

load_vfsfast enable=none
LOOP_PATHS="/tmp/links/l0032 /tmp/links/l0100 /tmp/links/l4095 /mnt/ext4/links/l0032 /mnt/ext4/links/l0100 /proc/self /sys/class/net/lo"
rm -f /tmp/stop
rlloop /tmp/stop $LOOP_PATHS >/tmp/rlloop.out 2>&1 &
pid=$!
h0=$(stat_of readlink hits)
i=0
fails=0
while [ $i -lt "${VFSFAST_TOGGLES:-1000}" ]; do
	echo 1 >$VF/readlink/enabled || fails=$((fails + 1))
	echo 0 >$VF/readlink/enabled || fails=$((fails + 1))
	i=$((i + 1))
done
touch /tmp/stop
wait $pid
rc=$?
t_eq "toggle: ${VFSFAST_TOGGLES:-1000} on/off cycles, no failed write" 0 $fails
t_eq "toggle: readlink results stayed exact throughout" "0 ok" \
	"$rc $(sed -n 's/.*iterations=[0-9]* \(ok\)$/\1/p' /tmp/rlloop.out)"
t_check "toggle: fast path ran during the storm" [ "$(stat_of readlink hits)" -gt "$h0" ]
note "$(cat /tmp/rlloop.out)"
rmmod vfsfast
