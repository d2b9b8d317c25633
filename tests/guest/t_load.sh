# The vfsfast command's load: loads with the given parameters and prints
# each optimization's status line; a parameter the module refuses is
# refused with the kernel's reason and an explanation, exit 1.

. /lab/lib.sh; in_group t_load || return 0

export PATH=$PATH:/lab/bin
# The load's name lookups register kprobes (disabled) and keep them until
# the last optimization is prepared, to unregister them in one batch (one
# grace period): a load that left them behind would list them here.
kpl=/sys/kernel/debug/kprobes/list
kp_before=$(wc -l <$kpl)
out=$(sh /lab/bin/vfsfast load --file /lab/vfsfast.ko enable=none \
	${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND} 2>&1)
rc=$?
t_eq "vfsfast load: loads, exit 0" 0 "$rc"
kp_after=$(wc -l <$kpl)
t_checkv "load: none of the name lookups' kprobes is left registered" \
	"kprobes listed before $kp_before, after $kp_after" \
	[ -r $kpl -a "$kp_after" = "$kp_before" ]
t_eq "vfsfast load: prints each optimization's status" \
	"$VFSFAST_EXPECT_LOAD_STATUS" \
	"$(echo "$out" | paste -sd '|')"
out=$(sh /lab/bin/vfsfast load --file /lab/vfsfast.ko 2>&1)
t_eq "vfsfast load: already loaded is exit 0" "0 vfsfast: already loaded" \
	"$? $(echo "$out" | head -n1)"
unload_vfsfast
out=$(sh /lab/bin/vfsfast load --file /lab/vfsfast.ko enable=bogus 2>&1)
rc=$?
t_checkv "vfsfast load enable=bogus: refused with the kernel's reason, exit 1" \
	"$rc: $(echo "$out" | head -n1)" [ "$rc" = 1 -a -n "$(echo "$out" | grep 'load refused: .*Invalid argument')" ]
t_check "vfsfast load enable=bogus: nothing left loaded" [ ! -e /sys/module/vfsfast ]
