# Another IPMODIFY ftrace user holds vfs_readlink, as a livepatch would:
# vfsfast still loads, says why readlink is unavailable, refuses to enable
# it with EBUSY, leaves readlink stock, and recovers once the holder goes.

. /lab/lib.sh; in_group t_conflict || return 0

if [ ! -f /lab/vfsfast_holder.ko ]; then
	t_fail "conflict: test module available" "vfsfast_holder.ko was not built"
	return 0 2>/dev/null || exit 0
fi
need_links
insmod /lab/vfsfast_holder.ko
load_vfsfast enable=readlink
t_check "conflict: module loads while vfs_readlink is held" [ -d $VF/readlink ]
t_eq "conflict: readlink stays off" 0 "$(knob readlink)"
t_eq "conflict: status says unsupported, why, and what was tried" \
	"conflict: vfs_readlink: held by another ftrace user, or ftrace_enabled is 0 ($VFSFAST_BACKEND -16)" \
	"$(head -n1 $VF/readlink/status)"
t_eq "conflict: enabling fails with EBUSY and changes nothing" "err EBUSY 0" \
	"$(wr $VF/readlink/enabled 31) $(knob readlink)"
t_check "conflict: status reports the errno" grep -qx "error: -16" $VF/readlink/status
h0=$(stat_of readlink hits)
t_eq "conflict: readlink still right (as the host wrote it), never reaches vfsfast" \
	"$(readlink /mnt/ext4/links/l0100) $h0" \
	"$(readlink /tmp/links/l0100) $(stat_of readlink hits)"
rmmod vfsfast_holder
set_knob readlink 1
t_eq "conflict gone: enabling works, status active, same backend" \
	"active 1 $VFSFAST_BACKEND" \
	"$(head -n1 $VF/readlink/status) $(knob readlink) $(head -n1 $VF/readlink/backend)"
t_check "conflict gone: error line cleared" sh -c "! grep -q '^error:' $VF/readlink/status"
unload_vfsfast
