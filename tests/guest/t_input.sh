# Every writable file accepts 0/1/on/off and rejects anything else with
# EINVAL, leaving every file of the optimization as it was.

load_vfsfast enable=none
snapshot() {
	for f in enabled passthrough status; do cat $VF/readlink/$f; done
	for f in hits fallbacks; do cat $VF/readlink/stats/$f; done
}
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }

for f in enabled passthrough; do
	for good in 1 0 on off "1
" "0
" "on
" "off
"; do
		r=$(wr $VF/readlink/$f "$(hex "$good")")
		want=$(case "$good" in 1*|on*) echo 1;; *) echo 0;; esac)
		t_eq "$f: '$(echo "$good" | head -n1)' accepted" "ok $(printf '%s' "$good" | wc -c) $want" \
			"$r $(cat $VF/readlink/$f)"
	done
	echo 0 >$VF/readlink/$f
	bad=0
	# sysfs never hands a zero-length write to the module: it succeeds
	# with 0 bytes written and must change nothing.
	before=$(snapshot)
	t_eq "$f: empty write changes nothing" "ok 0 $before" \
		"$(wr $VF/readlink/$f '') $(snapshot)"
	for v in 2 -1 yes no y n true false ON OFF On 01 10 00 0x1 " 1" "1 " \
		"1\n\n" "on\n\n" onn of "o" "+1" 1.0 9999999999999999999 \
		-9223372036854775808 "nonsense" "1;0" "\t1" "0\0" "1\0"; do
		before=$(snapshot)
		r=$(wr $VF/readlink/$f "$(printf "$v" | od -An -tx1 | tr -d ' \n')")
		after=$(snapshot)
		if [ "$r" != "err EINVAL" ] || [ "$before" != "$after" ]; then
			t_fail "$f: bad value '$v' rejected" "got '$r'"
			bad=$((bad + 1))
		fi
	done
	# Long and binary values, generated.
	for len in 3 64 4095 4096; do
		before=$(snapshot)
		r=$(wr $VF/readlink/$f "$(head -c $len /dev/urandom | od -An -tx1 | tr -d ' \n')")
		after=$(snapshot)
		case "$r" in
		"err EINVAL") [ "$before" = "$after" ] || bad=$((bad + 1)) ;;
		*) bad=$((bad + 1)); note "$f: random $len bytes: $r" ;;
		esac
	done
	t_eq "$f: all bad values rejected with EINVAL, state unchanged" 0 $bad
done
for f in status functions version stats/hits stats/fallbacks; do
	p=$VF/readlink/$f
	[ "$f" = version ] && p=$VF/version
	r=$(wr $p 31)
	case "$r" in "err EACCES"|"err EPERM"|"err EIO"|"open "*) t_ok "$f is not writable";;
	*) t_fail "$f is not writable" "$r";; esac
done
rmmod vfsfast
