# fsnotify event streams, run A against run B: evdiff performs the same
# seeded operations twice, each time in a fresh filesystem, under inotify,
# fanotify (notification and permission groups, with and without file
# handles, inode, mount and filesystem marks) and dnotify watches, and the
# two recordings must be byte-identical.
#
# evdiff_pair LABEL SETUP_B [RESTORE [EVDIFF_OPTION...]]
#   runs A as found, then SETUP_B (e.g. "set_knob fsnotify 1"), run B, then
#   RESTORE; both on a fresh tmpfs and on a fresh ext4 (the empty image
#   the lab ships, unpacked anew), each mounted at /tmp/evd/mnt and given to
#   evdiff as D with --fs-marks.  With SETUP_B ":" it is an A/A pair: the
#   baseline that proves the recording is reproducible on this kernel.
#   VFSFAST_EVDIFF_OPS (profile) and VFSFAST_EVDIFF_SEED set the size and
#   the seed; EVD_FSES, if set, narrows the filesystems.

. /lab/lib.sh; in_group t_evdiff || return 0

EVD=/tmp/evd

evd_mount() { # FS: a fresh filesystem at $EVD/mnt
	mkdir -p $EVD/mnt
	case $1 in
	tmpfs) mount -t tmpfs -o size=64m evdiff $EVD/mnt ;;
	ext4)
		gunzip -c /lab/evdiff-ext4.img.gz >$EVD/ext4.img &&
			mount -t ext4 -o loop $EVD/ext4.img $EVD/mnt ;;
	esac
}

evd_umount() {
	umount $EVD/mnt
	rm -f $EVD/ext4.img
}

evd_now() { # centiseconds since boot
	read -r up _ </proc/uptime
	echo "${up%.*}${up#*.}"
}

# evd_run FS RUN OPTIONS...: one recording; leaves $EVD/RUN.out, RUN.err,
# RUN.rc and RUN.cs (centiseconds)
evd_run() {
	evd_fs=$1 evd_r=$2
	shift 2
	if ! evd_mount "$evd_fs"; then
		echo 1 >$EVD/$evd_r.rc
		echo "mount $evd_fs failed" >$EVD/$evd_r.err
		return
	fi
	evd_t0=$(evd_now)
	evdiff --seed "$evd_seed" --ops "$evd_ops" --dir $EVD/mnt --fs-marks \
		--out $EVD/$evd_r.out "$@" 2>$EVD/$evd_r.err
	echo $? >$EVD/$evd_r.rc
	echo $(($(evd_now) - evd_t0)) >$EVD/$evd_r.cs
	evd_umount
}

# evd_count KIND FILE: the count the summary line gives for KIND
evd_count() {
	sed -n "s/^evdiff: seed .*[ (]$1 \([0-9]*\).*/\1/p" "$2"
}

evdiff_pair() {
	label=$1 setup_b=$2 restore=${3:-:}
	shift 2
	[ $# -gt 0 ] && shift
	evd_seed=${VFSFAST_EVDIFF_SEED:-1}
	evd_ops=$(backend_size VFSFAST_EVDIFF_OPS 20000)
	rm -rf $EVD
	mkdir -p $EVD
	for fs in ${EVD_FSES:-tmpfs ext4}; do
		evd_name="evdiff $label, $fs"
		evd_size="seed $evd_seed, $evd_ops ops"
		evd_run $fs A "$@"
		eval "$setup_b"
		evd_run $fs B "$@"
		eval "$restore"
		rcs="$(cat $EVD/A.rc) $(cat $EVD/B.rc)"
		if [ "$rcs" != "0 0" ]; then
			t_fail "$evd_name: runs A and B complete" \
				"$evd_size; exit $rcs: $(cat $EVD/A.err $EVD/B.err | head -n 4 | tr '\n' ' ')"
			continue
		fi
		cs=$(($(cat $EVD/A.cs) + $(cat $EVD/B.cs)))
		note "${VFSFAST_BACKEND:+$VFSFAST_BACKEND: }$label $fs: $(cat $EVD/A.err); A+B ${cs}0 ms," \
			"$((evd_ops * 200 / (cs > 0 ? cs : 1))) ops/s," \
			"$(wc -c <$EVD/A.out) bytes each; refused:" \
			"$(sed -n 's/.*fan.* = \(E[A-Z]*\)$/\1/p' $EVD/A.out |
				grep -v -e ENOENT -e ENOTDIR | sort | uniq -c |
				tr -s ' \n' ' ')"
		if cmp -s $EVD/A.out $EVD/B.out; then
			t_ok "$evd_name: runs A and B byte-identical" "$evd_size"
		else
			t_fail "$evd_name: runs A and B byte-identical" \
				"$evd_size; $(diff $EVD/A.out $EVD/B.out | head -n 6 | tr '\n' '|')"
		fi
		for kind in inotify fanotify permission dnotify; do
			t_checkv "$evd_name: $kind events recorded" "$(evd_count $kind $EVD/A.err)" \
				[ "$(evd_count $kind $EVD/A.err)" -gt 0 ]
		done
		# tmpfs has had an fsid (which file handles need) only since 6.7.
		if [ $fs = ext4 ]; then
			t_checkv "$evd_name: events with file handles recorded" "$(evd_count fid $EVD/A.err)" \
				[ "$(evd_count fid $EVD/A.err)" -gt 0 ]
		fi
	done
	rm -rf $EVD
}

# evd_calls OPT: hits + fallbacks, the calls a hook has answered
evd_calls() { echo $(($(stat_of $1 hits) + $(stat_of $1 fallbacks))); }

load_vfsfast enable=none
# A/A proves the recording reproducible on this kernel; the host test
# proves the recorder itself, so CI's profile skips it for time.
if [ "${VFSFAST_EVDIFF_AA:-1}" = 1 ]; then
	evdiff_pair "A/A (no knob changed)" :
fi

# fsnotify and fsnotify_parent: every mark kind on the filesystem under
# test, so the hooks run and must hand each call to the stock function
# unchanged; the pseudo files' superblocks stay unwatched apart from the
# /proc/self/fd watches, which is where the fast paths answer.
c0=$(($(evd_calls fsnotify) + $(evd_calls fsnotify_parent)))
evdiff_pair "fsnotify+fsnotify_parent off/on" \
	"set_knob fsnotify 1; set_knob fsnotify_parent 1" \
	"set_knob fsnotify 0; set_knob fsnotify_parent 0"
c1=$(($(evd_calls fsnotify) + $(evd_calls fsnotify_parent)))
note "fsnotify hooks during the B runs: hits+fallbacks +$((c1 - c0))," \
	"of which hits fsnotify $(stat_of fsnotify hits), fsnotify_parent $(stat_of fsnotify_parent hits)"
t_checkv "evdiff fsnotify off/on: the hooks ran in run B (calls > ops)" "calls +$((c1 - c0))" \
	[ $((c1 - c0)) -gt "$evd_ops" ]

# pseudo_nonotify: the same, except that sockets and eventfds get no
# watches (the documented difference); pipes keep theirs and must see
# every event.  Pseudo files do not depend on the filesystem under test.
h0=$(evd_calls pseudo_nonotify)
EVD_FSES=tmpfs evdiff_pair "pseudo_nonotify off/on" "set_knob pseudo_nonotify 1" \
	"set_knob pseudo_nonotify 0" --no-pseudo-watches
h1=$(evd_calls pseudo_nonotify)
t_checkv "evdiff pseudo_nonotify off/on: the hook ran in run B" "calls +$((h1 - h0))" \
	[ $((h1 - h0)) -gt 0 ]

# Flips while events flow and marks come and go: run B flips every knob
# of this issue in the background throughout; whatever state each event
# meets, the stream must be stock's, with nothing lost, duplicated or
# reordered around a flip.
evd_flipper() {
	n=0
	while [ ! -e $EVD/stop ]; do
		for v in 1 0; do
			for o in fsnotify fsnotify_parent pseudo_nonotify; do
				set_knob $o $v
			done
		done
		n=$((n + 1))
		echo $n >$EVD/flips
	done
}
EVD_FSES=tmpfs evdiff_pair "every knob flipping during run B" \
	"rm -f $EVD/stop; echo 0 >$EVD/flips; evd_flipper & evd_fpid=\$!" \
	"touch $EVD/stop; wait \$evd_fpid; evd_nflips=\$(cat $EVD/flips)" --no-pseudo-watches
note "knob flips during run B: ${evd_nflips:-0}"
t_checkv "evdiff while flipping: knobs flipped during run B (>= 2 full cycles)" \
	"${evd_nflips:-0} full cycles" [ "${evd_nflips:-0}" -ge 2 ]
unload_vfsfast
