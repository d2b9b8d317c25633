# Loading, the sysfs tree against Documentation/ABI, status, defaults,
# module parameters, and the DKMS-installed module being the one loaded.

. /lab/lib.sh; in_group t_sysfs || return 0

# Parameters first, while no instance is loaded.
if insmod /lab/vfsfast.ko enable=bogus 2>/dev/null; then
	t_fail "param: enable=bogus refused" "load succeeded"
	unload_vfsfast
else
	t_check "param: enable=bogus refused, nothing left behind" [ ! -e $VF ]
fi
if insmod /lab/vfsfast.ko backend=bogus 2>/dev/null; then
	t_fail "param: backend=bogus refused" "load succeeded"
	unload_vfsfast
else
	t_check "param: backend=bogus refused, nothing left behind" [ ! -e $VF ]
fi
case " $VFSFAST_BACKENDS_EXPECT " in
*" jmp "*) ;;
*)
	if insmod /lab/vfsfast.ko backend=jmp 2>/dev/null; then
		t_fail "param: backend=jmp refused without jmp mode" "load succeeded"
		unload_vfsfast
	else
		t_check "param: backend=jmp refused without jmp mode" [ ! -e $VF ]
	fi ;;
esac
if insmod /lab/vfsfast.ko disable=bogus 2>/dev/null; then
	t_fail "param: disable=bogus refused" "load succeeded"
	unload_vfsfast
else
	t_check "param: disable=bogus refused, nothing left behind" [ ! -e $VF ]
fi
# The escape hatch (vfsfast.disable= on the kernel command line) wins over
# enable= and over sysfs, and says why.
for d in readlink all; do
	load_vfsfast enable=readlink disable=$d
	t_eq "param: disable=$d wins over enable=: off, status says why" \
		"0|disabled: disable= parameter|requested: off" \
		"$(knob readlink)|$(sed -n '1p;/^requested:/p' $VF/readlink/status | paste -sd '|')"
	t_eq "param: disable=$d: enabling fails with EPERM, changes nothing" \
		"err EPERM 0 none" \
		"$(wr $VF/readlink/enabled 31) $(knob readlink) $(head -n1 $VF/readlink/backend)"
	unload_vfsfast
done
insmod /lab/vfsfast.ko enable=readlink
t_eq "default backend: the best this kernel has" "${VFSFAST_BACKENDS_EXPECT%% *}" \
	"$(head -n1 $VF/readlink/backend)"
t_eq "backends lists what the kernel config offers, best first" \
	"$VFSFAST_BACKENDS_EXPECT" "$(cat $VF/backends)"
unload_vfsfast
load_vfsfast enable=none
t_eq "param: enable=none leaves readlink off" 0 "$(knob readlink)"
t_eq "backend file says none while off" none "$(cat $VF/readlink/backend)"
unload_vfsfast
load_vfsfast enable=readlink
t_eq "param: enable=readlink turns it on" 1 "$(knob readlink)"
t_eq "backend file names the forced backend" "$VFSFAST_BACKEND" \
	"$(cat $VF/readlink/backend)"
unload_vfsfast

load_vfsfast
dmesg >/tmp/kmsg.snapshot
t_check "module loads with defaults" [ -d $VF/readlink ]
t_eq "srcversion is the DKMS-installed module's" "$VFSFAST_SRCVERSION" \
	"$(cat /sys/module/vfsfast/srcversion)"
t_check "symbol lookup through kprobes gives real entries (IBT-safe)" \
	grep -q "symbol lookup through kprobes verified" /tmp/kmsg.snapshot
t_eq "version file" "$VFSFAST_VERSION $VFSFAST_KVER" "$(cat $VF/version)"
on=
for o in $(ls -d $VF/*/ | xargs -n1 basename); do
	[ "$(knob $o)" = 1 ] && on="$on $o"
done
t_eq "default: enable=auto turns on what the kernel lacks, less what costs more than its trip" \
	"$(echo $(opts_auto) | tr ' ' '\n' | sort | paste -sd ' ')" \
	"$(echo $on | tr ' ' '\n' | sort | paste -sd ' ')"
bad=
for o in $(ls -d $VF/*/ | xargs -n1 basename); do
	want=$(opt_auto_off $o)
	got=$(sed -n 's/^auto: off: //p' $VF/$o/status)
	[ "$got" = "$want" ] || bad="$bad $o: '$got', expected '$want';"
	[ -z "$want" ] || note "$o: status says enable=auto leaves it off: $got"
done
t_checkv "status: an auto: off: line exactly where enable=auto leaves off what the kernel lacks" \
	"${bad:-as expected}" [ -z "$bad" ]

# The tree as it is, "mode path" per entry, against the ABI document.
(cd $VF && find . | sort | while read -r p; do
	echo "$(stat -c %a "$p") ${p#./}"
done) | sort >/tmp/tree.actual
for opt in $(ls -d $VF/*/ | xargs -n1 basename); do
	sed "s/<optimization>/$opt/" /lab/abi.txt
done | sort -u >/tmp/tree.expected
grep -v '<optimization>' /lab/abi.txt | sort -u >>/tmp/tree.expected
sort -u -o /tmp/tree.expected /tmp/tree.expected
if cmp -s /tmp/tree.expected /tmp/tree.actual; then
	t_ok "sysfs tree and modes match Documentation/ABI"
else
	t_fail "sysfs tree and modes match Documentation/ABI" \
		"$(diff /tmp/tree.expected /tmp/tree.actual | grep '^[-+][^-+]' | tr '\n' ' ')"
fi
t_eq "optimizations match the ABI list" "$VFSFAST_ABI_OPTS" \
	"$(ls -d $VF/*/ | xargs -n1 basename | tr '\n' ' ' | sed 's/ $//')"

up=$(sed -n 's/^upstream: //p' $VF/readlink/status)
t_eq "status says what the headers say about IOP_CACHED_LINK" \
	"$VFSFAST_EXPECT_UPSTREAM_READLINK" "$up"
if [ "$up" = none ]; then want=1; else want=0; fi
t_eq "default: enabled exactly when missing upstream" "$want" "$(knob readlink)"
if [ "$want" = 1 ]; then state=active; else state=off; fi
t_eq "status line 1 matches enabled" "$state" "$(head -n1 $VF/readlink/status)"
t_eq "functions lists the target" vfs_readlink "$(cat $VF/readlink/functions)"

set_knob readlink 1
t_eq "status active, requested on after enabling" "active|requested: on" \
	"$(sed -n '1p;/^requested:/p' $VF/readlink/status | paste -sd '|')"
set_knob readlink 0
t_eq "status off, requested off after disabling" "off|requested: off" \
	"$(sed -n '1p;/^requested:/p' $VF/readlink/status | paste -sd '|')"
t_check "vfs_readlink is traceable (available_filter_functions)" \
	grep -qx vfs_readlink /sys/kernel/tracing/available_filter_functions
unload_vfsfast
