# Every writable file accepts 0/1/on/off and rejects anything else with
# EINVAL, leaving every file of the optimization as it was.

. /lab/lib.sh; in_group t_input || return 0

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
		# A trailing newline shown as \n: "1" and "1\n" are two tests.
		case "$good" in
		*"
") shown="${good%?}\\n" ;;
		*) shown=$good ;;
		esac
		t_eq "$f: '$shown' accepted" "ok $(printf '%s' "$good" | wc -c) $want" \
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
# Fuzz: random invalid writes (seeded; the seed is printed), each checked
# for EINVAL and an unchanged state of every file, with the knob off and on.
seed=$(date +%s)
fuzz=$(backend_size VFSFAST_FUZZ 10000)
note "sysfuzz seed $seed"
for state in 0 1; do
	set_knob readlink $state
	for f in enabled passthrough; do
		out=$(sysfuzz $VF/readlink/$f "$fuzz" $seed \
			$VF/readlink/enabled $VF/readlink/passthrough \
			$VF/readlink/status $VF/readlink/backend \
			$VF/readlink/stats/hits $VF/readlink/stats/fallbacks 2>&1)
		t_eq "$f (knob $state): random invalid writes: EINVAL, nothing changed" \
			"bad=0 changed=0" "$(echo "$out" | sed -n 's/^sysfuzz: .* \(bad=[0-9]* changed=[0-9]*\)$/\1/p')" \
			"$fuzz writes, seed $seed"
		seed=$((seed + 1))
	done
done
set_knob readlink 0

# Not root: every file refuses writes, every file is readable, and no file
# shows a kernel address.
before=$(snapshot)
nr=0
for f in $(cd $VF && find . -type f | sort); do
	r=$(runas 1000 wr $VF/$f 31)
	case "$r" in
	"open EACCES"|"open EPERM") ;;
	*) nr=$((nr + 1)); note "non-root write to $f: $r" ;;
	esac
done
t_eq "non-root: every file refuses writes with EACCES, state unchanged" \
	"0 $before" "$nr $(snapshot)"
t_check "non-root: every file but the counters is readable" \
	runas 1000 sh -c "cd $VF && cat \$(find . -type f ! -path '*/stats/*') >/tmp/nonroot.txt"
# The counters count every user's calls on the host: root's alone.
nr=0
for f in $(cd $VF && find . -path '*/stats/*' -type f | sort); do
	m=$(stat -c %a $VF/$f)
	runas 1000 cat $VF/$f >/dev/null 2>&1 && { nr=$((nr + 1)); note "non-root read $f"; }
	[ "$m" = 400 ] || { nr=$((nr + 1)); note "$f: mode $m"; }
done
t_eq "non-root: no counter is readable (stats/* mode 0400)" 0 $nr
cat $(find $VF -type f) >>/tmp/nonroot.txt
t_check "no file shows a kernel address" \
	sh -c "! grep -Eiq 'ffff[0-9a-f]{12}|0x[0-9a-f]{8,}' /tmp/nonroot.txt"

for f in status functions version stats/hits stats/fallbacks; do
	p=$VF/readlink/$f
	[ "$f" = version ] && p=$VF/version
	r=$(wr $p 31)
	case "$r" in "err EACCES"|"err EPERM"|"err EIO"|"open "*) t_ok "$f is not writable";;
	*) t_fail "$f is not writable" "$r";; esac
done
unload_vfsfast

# Module parameters: random and malformed values are refused at load and
# leave nothing behind.
# Parameters are parsed before any hook is placed: the other backends of
# a ci run get a third of the loads (backend_size).
param_fuzz=$(backend_size VFSFAST_PARAM_FUZZ 100)
pf=0
i=0
while [ $i -lt "$param_fuzz" ]; do
	v=$(head -c $((i % 24 + 1)) /dev/urandom | od -An -tx1 | tr -d ' \n')
	case $((i % 6)) in
	0) ;;
	1) v="readlink,$v" ;;
	2) v="$v,readlink" ;;
	3) v="readlink,," ;;
	4) v=",readlink" ;;
	5) v="all,$v" ;;
	esac
	for p in enable disable backend; do
		if insmod /lab/vfsfast.ko "$p=$v" 2>/dev/null; then
			pf=$((pf + 1))
			note "param $p=$v accepted"
			unload_vfsfast
		fi
		[ -e $VF ] && pf=$((pf + 1))
	done
	i=$((i + 1))
done
t_eq "params: malformed values refused at load, nothing left" 0 $pf \
	"$param_fuzz x 3 values"
