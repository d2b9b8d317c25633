# fsnotify, fsnotify_parent and pseudo_nonotify: status as the kernel's
# headers say, defaults, counters that prove which path ran, and the one
# documented difference of pseudo_nonotify.  Event streams knob off vs on
# are compared in t_evdiff.

. /lab/lib.sh; in_group t_fsnotify || return 0

load_vfsfast
for o in fsnotify fsnotify_parent; do
	up=$(sed -n 's/^upstream: //p' $VF/$o/status)
	t_eq "$o: status says what fsnotify.h says about the inline superblock check" \
		"$VFSFAST_EXPECT_UPSTREAM_FSNOTIFY" "$up"
	if [ "$up" = none ]; then want=1; else want=0; fi
	t_eq "$o: default: enabled exactly when missing upstream" "$want" "$(knob $o)"
done
t_eq "pseudo_nonotify: status says what fs.h says about file_set_fsnotify_mode" \
	"$VFSFAST_EXPECT_UPSTREAM_PSEUDO" "$(sed -n 's/^upstream: //p' $VF/pseudo_nonotify/status)"
t_eq "pseudo_nonotify: opt-in, enable=auto leaves it off" 0 "$(knob pseudo_nonotify)"
t_eq "functions name the targets" "fsnotify __fsnotify_parent alloc_file_pseudo" \
	"$(cat $VF/fsnotify/functions $VF/fsnotify_parent/functions $VF/pseudo_nonotify/functions | tr '\n' ' ' | sed 's/ $//')"
unload_vfsfast

load_vfsfast enable=fsnotify,fsnotify_parent
mkdir -p /mnt/fsn
mount -t tmpfs fsn /mnt/fsn
N=2000
hp0=$(stat_of fsnotify_parent hits); hf0=$(stat_of fsnotify hits)
nbench write $N /mnt/fsn >/dev/null
hp1=$(stat_of fsnotify_parent hits); hf1=$(stat_of fsnotify hits)
note "unwatched tmpfs, $N writes: fsnotify_parent hits +$((hp1 - hp0)), fsnotify hits +$((hf1 - hf0))"
if [ "$VFSFAST_EXPECT_UPSTREAM_FSNOTIFY" = none ]; then
	# Every write reaches __fsnotify_parent(), which the fast path answers.
	t_check "unwatched: the fast path answers every write (fsnotify_parent hits >= $N)" \
		[ $((hp1 - hp0)) -ge $N ]
else
	# fsnotify.h's inline check answers first: the hooks hardly run.
	t_check "unwatched: the inline check answers first (fsnotify_parent hits < $((N / 10)))" \
		[ $((hp1 - hp0)) -lt $((N / 10)) ]
fi
# A watch on another file of the same tmpfs: every call has to go to the
# stock functions, and the fast path must not answer any of them.
fp0=$(stat_of fsnotify_parent fallbacks); ff0=$(stat_of fsnotify fallbacks)
hp0=$(stat_of fsnotify_parent hits)
nbench watched $N /mnt/fsn >/dev/null
fp1=$(stat_of fsnotify_parent fallbacks); ff1=$(stat_of fsnotify fallbacks)
hp1=$(stat_of fsnotify_parent hits)
note "watched tmpfs, $N writes: fallbacks fsnotify_parent +$((fp1 - fp0)), fsnotify +$((ff1 - ff0))"
t_check "watched: every write goes to the stock __fsnotify_parent (fallbacks >= $N)" \
	[ $((fp1 - fp0)) -ge $N ]
if [ "$VFSFAST_EXPECT_UPSTREAM_FSNOTIFY" = none ]; then
	t_check "watched: and on to the stock fsnotify (fallbacks >= $N)" [ $((ff1 - ff0)) -ge $N ]
else
	# Since 5.9, __fsnotify_parent() itself returns early when neither the
	# file, its superblock nor its mount has marks: fsnotify() is not called.
	t_check "watched: the stock __fsnotify_parent answers first (fsnotify fallbacks < $((N / 10)))" \
		[ $((ff1 - ff0)) -lt $((N / 10)) ]
fi
umount /mnt/fsn
unload_vfsfast

# pseudo_nonotify: a watch through /proc/self/fd on a pipe or a socket
# sees what it sees without the knob; on eventfds and memfds it sees
# nothing, as on 6.14 and later (on 7.2, stock already does that).
load_vfsfast enable=none
off=$(pseudowatch)
set_knob pseudo_nonotify 1
h0=$(stat_of pseudo_nonotify hits)
on=$(pseudowatch)
h1=$(stat_of pseudo_nonotify hits)
set_knob pseudo_nonotify 0
again=$(pseudowatch)
note "pseudowatch: off: $off; on: $on; off again: $again; hits +$((h1 - h0))"
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
for k in pipe socket; do
	t_eq "pseudo_nonotify: $k events through /proc/self/fd as without the knob" \
		"$(field "$off" $k)" "$(field "$on" $k)"
	t_check "pseudo_nonotify: $k: events seen at all" [ "$(field "$off" $k)" -gt 0 ]
done
for k in eventfd memfd; do
	t_eq "pseudo_nonotify: $k: no events while on" 0 "$(field "$on" $k)"
	if [ "$VFSFAST_EXPECT_UPSTREAM_PSEUDO" = none ]; then
		t_check "pseudo_nonotify: $k: events without the knob (stock before 6.14)" \
			[ "$(field "$off" $k)" -gt 0 ]
	else
		t_eq "pseudo_nonotify: $k: none without the knob either (stock 6.14+)" \
			0 "$(field "$off" $k)"
	fi
done
t_eq "pseudo_nonotify: off again is stock again" "$off" "$again"
if [ "$VFSFAST_EXPECT_UPSTREAM_PSEUDO" = none ]; then
	t_check "pseudo_nonotify: hits counted (eventfd, memfd, inotify's own fd)" [ $((h1 - h0)) -ge 3 ]
else
	t_eq "pseudo_nonotify: upstream kernel: no hits, the stock function does it" \
		0 $((h1 - h0))
fi
unload_vfsfast
