# A target that cannot be unhooked (vfsfast-fi.ko: the module built with
# its test-only fault injection, which makes the named target's detach
# fail and leaves its site hooked): the optimization says broken, the
# module pins itself so that the code the site still leads to stays, the
# calls keep their stock results, and every further write to any of its
# knobs is refused and changes nothing: passthrough 1 then 0 once routed
# the stuck target back to its replacement, whose observers were gone.
# The module can never be unloaded afterwards, so this group runs in a
# guest of its own.  (A detach that fails during rmmod itself: t_fault.)

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
f0=$(stat_of readlink fallbacks)
# passthrough 0 last: before the fix it routed the stuck target back in.
t_eq "broken: enabled 0, passthrough 1 and passthrough 0 are refused (EIO)" \
	"err EIO|err EIO|err EIO" \
	"$(wr $VF/readlink/enabled 30)|$(wr $VF/readlink/passthrough 31)|$(wr $VF/readlink/passthrough 30)"
i=0
while [ $i -lt 200 ]; do
	readlink /tmp/links/l0100 >/dev/null
	i=$((i + 1))
done
t_eq "broken: after those writes, still broken, passthrough 0, and calls still get the stock code (no hit, no fallback)" \
	"broken: vfs_readlink: detach failed (-5)|0|$h0 $f0" \
	"$(head -n1 $VF/readlink/status)|$(cat $VF/readlink/passthrough)|$(stat_of readlink hits) $(stat_of readlink fallbacks)"
t_check "broken: rmmod refused, the module stays" sh -c '! rmmod vfsfast 2>/dev/null && [ -e /sys/module/vfsfast ]'
t_check "broken: the module holds a reference on itself" [ "$(cat /sys/module/vfsfast/refcnt)" -ge 1 ]
sleep 2
stop_checker
t_eq "broken: readlink results exact throughout" "0 ok" "$checked"
t_eq "broken: the other optimizations are untouched" "0 0" "$(knob fsnotify) $(knob pseudo_nonotify)"

# The same for the kernel's kernfs knob ($KN: kernfs on 5.10, kernfs_rcu on
# 6.12 and 7.2), broken in kernfs_dop_revalidate: its observers detach, the
# revalidate stays hooked.  Re-armed without them, it would take a renamed
# node's old name and a name made since its miss for what they were: the
# rename and the creation below must be seen at once.
KN=$(kernfs_knob)
if [ -z "$KN" ]; then
	note "broken: no kernfs knob on this kernel (kernfs and kernfs_rcu unsupported)"
elif [ ! -f /lab/vfsfast_kfrace.ko ]; then
	t_fail "broken: test module vfsfast_kfrace available" "vfsfast_kfrace.ko was not built"
else
	insmod /lab/vfsfast_kfrace.ko
	set_knob $KN 1
	kf_do add vfbrold
	dmesg -c >/dev/null
	echo kernfs_dop_revalidate >/sys/module/vfsfast/parameters/fail_detach
	set_knob $KN 0
	t_eq "broken: $KN broken in kernfs_dop_revalidate" \
		"broken: kernfs_dop_revalidate: detach failed (-5)" "$(head -n1 $VF/$KN/status)"
	h0="$(stat_of $KN hits) $(stat_of $KN fallbacks)"
	t_eq "broken: $KN: enabled 1 and 0, passthrough 1 and 0 refused (EIO)" \
		"err EIO|err EIO|err EIO|err EIO" \
		"$(wr $VF/$KN/enabled 31)|$(wr $VF/$KN/enabled 30)|$(wr $VF/$KN/passthrough 31)|$(wr $VF/$KN/passthrough 30)"
	bad=$(kf_names_seen vfbr)
	t_eq "broken: $KN: names made and renamed seen at once, 3 times" "" "$bad"
	t_eq "broken: $KN: still broken, and no replacement ran since (no hit, no fallback)" \
		"broken: kernfs_dop_revalidate: detach failed (-5)|$h0" \
		"$(head -n1 $VF/$KN/status)|$(stat_of $KN hits) $(stat_of $KN fallbacks)"
	echo 1 >$KF/remove
	rmmod vfsfast_kfrace
fi
