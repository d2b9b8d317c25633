# Booted with module.sig_enforce=1, as Secure Boot's lockdown enforces it:
# the lab's DKMS build is unsigned, so the kernel must refuse it, and
# `vfsfast load` must say that it is the signature and what to do.

out=$(sh /lab/bin/vfsfast load --file /lab/vfsfast.ko 2>&1)
rc=$?
t_eq "signatures enforced: vfsfast load is refused, exit 1" 1 "$rc"
t_check "signatures enforced: the kernel's reason is shown ($(echo "$out" | head -n1))" \
	[ -n "$(echo "$out" | grep "load refused: .*\(Required key not available\|Key was rejected\)")" ]
t_check "signatures enforced: the signature is named and mokutil steps given" \
	[ -n "$(echo "$out" | grep "refused the module's signature")" -a \
	  -n "$(echo "$out" | grep "mokutil --import /var/lib/dkms/mok.pub")" ]
t_check "signatures enforced: nothing of vfsfast is loaded" [ ! -e /sys/module/vfsfast ]
