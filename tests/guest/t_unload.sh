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
