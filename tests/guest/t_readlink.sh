# readlink differential tests: the same calls with the knob off and on,
# results and buffers compared byte for byte (rldiff), on every kind of
# link the guest has, then counters that prove which path ran.

. /lab/lib.sh; in_group t_readlink || return 0

load_vfsfast enable=none
# Runs once per backend in the same guest: start from nothing.
rm -rf /tmp/links /tmp/fresh /tmp/warm /tmp/fdlink /tmp/list.tmpfs /tmp/list.ext4
need_link_lists
# Names from readdir alone (a glob): ls would stat them, and 7.2 refuses
# to load the crafted inodes.
for f in /mnt/ext4/corrupt/*; do echo "${f##*/}"; done >/tmp/corrupt.ls
ln -s /proc/self/fd /tmp/fdlink
printf '%s\n' /proc/self /proc/thread-self /proc/self/exe /proc/self/cwd \
	/proc/self/root /proc/self/fd/0 /proc/self/fd/1 /proc/self/fd/2 \
	/proc/self/ns/mnt /proc/self/ns/net /proc/self/ns/pid /proc/1/exe \
	/proc/mounts /proc/self/mounts /tmp/fdlink /tmp /lab/init >/tmp/list.proc
find /sys/class /sys/dev /sys/bus -maxdepth 3 -type l | head -n 150 >/tmp/list.sysfs

t_check "ext4 image holds the crafted links" grep -qx size_longer /tmp/corrupt.ls
t_check "tmpfs copy holds a 4095-byte link" \
	[ "$(readlink /tmp/links/l4095 | wc -c)" -eq 4096 ]

for fs in tmpfs ext4 proc sysfs; do
	h0=$(stat_of readlink hits)
	out=$(rldiff /tmp/list.$fs)
	rc=$?
	h1=$(stat_of readlink hits)
	note "$fs: $(echo "$out" | tail -n1) hits+$((h1 - h0))"
	if [ $rc -eq 0 ] && echo "$out" | grep -q "mismatches=0"; then
		t_ok "differential $fs: knob off vs on byte-for-byte equal"
	else
		t_fail "differential $fs: knob off vs on byte-for-byte equal" \
			"$(echo "$out" | head -n3 | tr '\n' ' ')"
	fi
	case $fs in
	tmpfs|ext4|sysfs)
		t_check "fast path ran for $fs (hits grew)" [ $((h1 - h0)) -gt 0 ] ;;
	esac
done
t_eq "knob restored after rldiff" 0 "$(knob readlink)"

# Passthrough sends callers through the hook straight back into the stock
# body: just as exact, and no replacement runs, so nothing is counted.
echo 1 >$VF/readlink/passthrough
h0=$(stat_of readlink hits)
f0=$(stat_of readlink fallbacks)
out=$(rldiff /tmp/list.tmpfs)
t_check "differential tmpfs with passthrough" [ $? -eq 0 ]
t_eq "passthrough: no replacement ran (hits, fallbacks unchanged)" "$h0 $f0" \
	"$(stat_of readlink hits) $(stat_of readlink fallbacks)"
set_knob readlink 1
t_eq "passthrough: the hook is attached with the expected backend" \
	"$VFSFAST_BACKEND" "$(head -n1 $VF/readlink/backend)"
t_eq "passthrough: status says passthrough while hooked, active once it is off, off when disabled" \
	"passthrough 1|active 1|off 0" \
	"$(head -n1 $VF/readlink/status) $(knob readlink)|$(echo 0 >$VF/readlink/passthrough; head -n1 $VF/readlink/status) $(knob readlink)|$(set_knob readlink 0; head -n1 $VF/readlink/status) $(knob readlink)"
set_knob readlink 0
echo 0 >$VF/readlink/passthrough

# Counters, exactly: a new inode first goes through the stock checks
# (one fallback), then takes the fast path.  The shell's own helpers
# read /proc/self/exe (a fallback each), so compare a fresh link with a
# warm one over identical sequences: the difference is the first call.
# 200 bytes: past tmpfs's inline limit, so 6.14+ caches no length either.
target=/$(head -c 199 /dev/zero | tr '\0' 'x')
ln -s "$target" /tmp/fresh
ln -s "$target" /tmp/warm
set_knob readlink 1
readlink /tmp/warm >/dev/null
counts() {
	h0=$(stat_of readlink hits)
	f0=$(stat_of readlink fallbacks)
	rlbench "$1" 2000 >/dev/null
	echo "$(($(stat_of readlink hits) - h0)) $(($(stat_of readlink fallbacks) - f0))"
}
warm=$(counts /tmp/warm)
fresh=$(counts /tmp/fresh)
t_eq "fresh inode: exactly one more fallback and one fewer hit" \
	"$((${warm% *} - 1)) $((${warm#* } + 1))" "$fresh"
t_check "warm inode: every one of the 3000 calls hit" [ "${warm% *}" -ge 3000 ]
f0=$(stat_of readlink fallbacks)
readlink /proc/self/fd/0 >/dev/null
t_check "custom ->readlink (/proc/self/fd) falls back" [ "$(stat_of readlink fallbacks)" -gt "$f0" ]
set_knob readlink 0
h0=$(stat_of readlink hits)
f0=$(stat_of readlink fallbacks)
rlbench /tmp/links/l0032 2000 >/dev/null
t_eq "knob off: counters do not move" "$h0 $f0" \
	"$(stat_of readlink hits) $(stat_of readlink fallbacks)"
unload_vfsfast
