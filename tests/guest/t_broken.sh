# A target that cannot be unhooked (vfsfast-fi.ko: the module built with
# its test-only fault injection, which makes the named target's detach
# fail and leaves its site hooked): the optimization says broken, the
# module pins itself so that the code the site still leads to stays, the
# calls keep their stock results, and every further enable is refused.
# The module can never be unloaded afterwards, so this group runs in a
# guest of its own.

. /lab/lib.sh; in_group t_broken || return 0

if [ ! -f /lab/vfsfast-fi.ko ]; then
	t_fail "broken: fault-injection build available" "vfsfast-fi.ko was not built"
	return 0 2>/dev/null || exit 0
fi
insmod /lab/vfsfast-fi.ko enable=readlink ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
start_checker
t_eq "broken: loaded, readlink active" active "$(head -n1 $VF/readlink/status)"
dmesg -c >/dev/null
echo vfs_readlink >/sys/module/vfsfast/parameters/fail_detach
set_knob readlink 0
rc=$?
t_eq "broken: the disable itself succeeds, status names the function and the error" \
	"0 broken: vfs_readlink: detach failed (-5)" "$rc $(head -n1 $VF/readlink/status)"
t_eq "broken: one log line" 1 "$(dmesg | grep -c 'readlink: broken: vfs_readlink: detach failed (-5); the module stays loaded')"
h0=$(stat_of readlink hits)
i=0
while [ $i -lt 200 ]; do
	readlink /tmp/links/l0100 >/dev/null
	i=$((i + 1))
done
t_eq "broken: calls through the stuck site get the stock code (no hits)" "$h0" "$(stat_of readlink hits)"
t_eq "broken: enabling is refused (EIO)" "err EIO" "$(wr $VF/readlink/enabled 31)"
t_check "broken: rmmod refused, the module stays" sh -c '! rmmod vfsfast 2>/dev/null && [ -e /sys/module/vfsfast ]'
t_check "broken: the module holds a reference on itself" [ "$(cat /sys/module/vfsfast/refcnt)" -ge 1 ]
sleep 2
stop_checker
t_eq "broken: readlink results exact throughout" "0 ok" "$checked"
t_eq "broken: the other optimizations are untouched" "0 0" "$(knob fsnotify) $(knob pseudo_nonotify)"
