# Turning the optimization on and off many times while readlink runs: the
# loop checks every result, the console must stay clean.

load_vfsfast enable=none
start_checker
h0=$(stat_of readlink hits)
i=0
fails=0
while [ $i -lt "${VFSFAST_TOGGLES:-1000}" ]; do
	echo 1 >$VF/readlink/enabled || fails=$((fails + 1))
	echo 0 >$VF/readlink/enabled || fails=$((fails + 1))
	i=$((i + 1))
done
stop_checker
t_eq "toggle: ${VFSFAST_TOGGLES:-1000} on/off cycles, no failed write" 0 $fails
t_eq "toggle: readlink results stayed exact throughout" "0 ok" "$checked"
t_check "toggle: fast path ran during the storm" [ "$(stat_of readlink hits)" -gt "$h0" ]
note "$(cat /tmp/rlloop.out)"
rmmod vfsfast
