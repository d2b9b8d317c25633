# Secure Boot's lockdown enforces module signatures. The lab's DKMS build
# is unsigned, as a user's is until a MOK key is enrolled, so with
# enforcement on the kernel must refuse it and `vfsfast load` must say
# that it is the signature and what to do. Enforcement is switched on at
# run time (module.sig_enforce only goes from N to Y), so this runs last
# in its guest; Debian's 5.10 -unsigned image ships unsigned in-tree
# modules, which a boot with module.sig_enforce=1 could not even load.

. /lab/lib.sh; in_group sig_enforce || return 0

rmmod vfsfast 2>/dev/null
echo Y > /sys/module/module/parameters/sig_enforce 2>/dev/null
t_eq "signatures enforced: module.sig_enforce switched on at run time" Y \
	"$(cat /sys/module/module/parameters/sig_enforce 2>&1)"
out=$(sh /lab/bin/vfsfast load --file /lab/vfsfast.ko 2>&1)
rc=$?
t_eq "signatures enforced: vfsfast load is refused, exit 1" 1 "$rc"
t_checkv "signatures enforced: the kernel's reason is shown" "$(echo "$out" | head -n1)" \
	[ -n "$(echo "$out" | grep "load refused: .*\(Required key not available\|Key was rejected\)")" ]
t_check "signatures enforced: the signature is named and mokutil steps given" \
	[ -n "$(echo "$out" | grep "refused the module's signature")" -a \
	  -n "$(echo "$out" | grep "mokutil --import /var/lib/dkms/mok.pub")" ]
t_check "signatures enforced: nothing of vfsfast is loaded" [ ! -e /sys/module/vfsfast ]
