# getname where slab debugging watches names_cache: this group's guest
# boots with slub_debug=P,names_cache (suite.py, SLAB_DEBUG_CMDLINE).
# A kept name would be live to the poisoning, so getname must be
# unsupported, saying which debugging it saw, and the module must load
# with every other optimization as enable=auto leaves it.

. /lab/lib.sh; in_group t_slabdebug || return 0

o=getname
poison=$(cat /sys/kernel/slab/names_cache/poison 2>/dev/null)
if [ "$poison" != 1 ]; then
	t_fail "$o: the guest's names_cache is poisoned (slub_debug=P,names_cache)" \
		"/sys/kernel/slab/names_cache/poison: '$poison'"
	return 0 2>/dev/null || exit 0
fi
load_vfsfast
if [ "$VFSFAST_OPT_GETNAME_STATUS_UPSTREAM" != none ] || [ -n "$VFSFAST_OPT_GETNAME_LACKS" ]; then
	note "$o: not this kernel's to refuse (upstream: $VFSFAST_OPT_GETNAME_STATUS_UPSTREAM; lacks: $VFSFAST_OPT_GETNAME_LACKS)"
else
	st=$(head -n 1 $VF/$o/status)
	t_checkv "$o: unsupported where slab debugging poisons names_cache, saying so" "$st" \
		[ "$st" = "unsupported: slab debugging watches names_cache (poison): names kept for reuse would hide a use after putname() from it" ]
fi
off=
auto=$(opts_auto)
for k in $auto; do
	[ $k = $o ] && continue
	[ "$(head -n 1 $VF/$k/status)" = active ] || off="$off $k: $(head -n 1 $VF/$k/status);"
done
t_checkv "slab debugging of names_cache: every other optimization enable=auto turns on is active" \
	"${off:-all of: $(echo " $auto " | sed "s/ $o / /")}" [ -z "$off" ]
unload_vfsfast
