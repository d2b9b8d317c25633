# vfsfast's Debian packages on a Debian system of the guest's
# architecture, as a user installs them: the release's own userland
# (scripts/lablib/debguest.py: minbase with dkms, make, gcc and the
# running kernel's headers, a dpkg database and apt's lists), on the
# guest's disk (/dev/vda, which init mounts read-only on /mnt/ext4; the
# host gave it as a snapshot, so it is remounted writable and every
# write is thrown away with the guest).  Chrooted into it: apt-get
# install of vfsfast-dkms_*_all.deb and vfsfast-tools_*_<arch>.deb,
# offline (everything they depend on is installed); DKMS's postinst
# builds the module natively for the running kernel; modprobe loads it,
# `vfsfast status` and a short `vfsfast-ab` run against it; rmmod.
#
# Not one of the suite's groups: `vfsfast-lab deb --arch arm64 --guest
# KERNEL` (make deb-arm64-guest) boots it with the image and the .debs
# in /lab/debs, and the module the lab packs as every guest's
# (/lab/vfsfast.ko) is never loaded here.

. /lab/lib.sh; in_group t_dkms_native || return 0

R=/mnt/ext4
KVER=$(uname -r)
MARCH=$(uname -m)

inroot() {
	chroot $R /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C \
		DEBIAN_FRONTEND=noninteractive HOME=/root "$@"
}

# What udev makes on a booted system (a bare devtmpfs has none of them):
# DKMS's <(...) needs /dev/fd (bookworm's dkms 3.0 stops without it).
dev_links() {
	ln -sf /proc/self/fd $R/dev/fd && ln -sf /proc/self/fd/0 $R/dev/stdin &&
		ln -sf /proc/self/fd/1 $R/dev/stdout && ln -sf /proc/self/fd/2 $R/dev/stderr
}

setup() {
	mount -o remount,rw $R &&
		mount -t proc proc $R/proc && mount -t sysfs sysfs $R/sys &&
		mount -t devtmpfs devtmpfs $R/dev && dev_links && mount -t tmpfs tmpfs $R/run &&
		mount -t tmpfs tmpfs $R/tmp && mkdir -p $R/tmp/debs &&
		cp /lab/debs/*.deb $R/tmp/debs/
}

if ! setup; then
	t_fail "dkms-native: the release's $MARCH userland mounted writable, the packages copied in" \
		"$(ls /dev/vda $R/usr/bin/dpkg /lab/debs 2>&1 | tr '\n' ' ')"
	exit 0
fi
have=$(inroot dpkg-query -W -f='${Status}|${Package}=${Version}:${Architecture}\n' dkms gcc make \
	"linux-headers-$KVER" 2>&1)
t_checkv "dkms-native: the release's $MARCH userland mounted writable: dkms, gcc, make and the running kernel's headers installed" \
	"$(echo "$have" | sed 's/^install ok installed|//' | tr '\n' ' ')dpkg: $(inroot dpkg --print-architecture)" \
	[ "$(echo "$have" | grep -c '^install ok installed|')" = 4 ]

# 1. apt-get install, offline: DKMS's postinst builds for the running kernel.
debs=
for f in $R/tmp/debs/vfsfast-dkms_*_all.deb $R/tmp/debs/vfsfast-tools_*.deb; do
	debs="$debs ${f#$R}"
done
t0=$(date +%s)
out=$(inroot apt-get install -y -q $debs 2>&1)
rc=$?
t1=$(date +%s)
echo "$out" | tail -n 40 | sed 's/^/# apt-get: /'
st=$(inroot dpkg-query -W -f='${Package}:${Architecture} ${Status}; ' vfsfast-dkms vfsfast-tools 2>&1)
t_checkv "dkms-native: apt-get install ./vfsfast-dkms_*_all.deb ./vfsfast-tools_*_$(inroot dpkg --print-architecture).deb: exit 0, both installed" \
	"rc=$rc in $((t1 - t0)) s; $st" \
	[ "$rc" = 0 -a "$(echo "$st" | grep -o 'install ok installed' | wc -l)" = 2 ]

dstat=$(inroot dkms status 2>&1 | grep '^vfsfast')
t_checkv "dkms-native: dkms status: vfsfast installed for the running kernel and $MARCH" \
	"$dstat" [ "$(echo "$dstat" | grep -c ", $KVER, $MARCH: installed")" = 1 ]

log=$(inroot sh -c "ls /var/lib/dkms/vfsfast/*/$KVER/$MARCH/log/make.log 2>/dev/null | head -n 1")
# The make's (the last command DKMS ran and timed).
took=$(inroot sed -n 's/^# elapsed time: //p' "${log:-/nonexistent}" 2>/dev/null | tail -n 1)
exitc=$(inroot sed -n 's/^# exit code: //p' "${log:-/nonexistent}" 2>/dev/null | tail -n 1)
note "dkms-native: DKMS's build in the guest: elapsed ${took:-?} (make.log), apt-get install $((t1 - t0)) s;" \
	"$(inroot grep '^# command: ' "${log:-/nonexistent}" 2>/dev/null | tail -n 1 | cut -c1-200)"
ko=$(inroot sh -c "ls /lib/modules/$KVER/updates/dkms/vfsfast.ko* 2>/dev/null")
vermagic=$(inroot modinfo -F vermagic "${ko:-/nonexistent}" 2>&1)
srcv=$(inroot modinfo -F srcversion "${ko:-/nonexistent}" 2>&1)
t_checkv "dkms-native: the module in /lib/modules/\$(uname -r)/updates/dkms has the running kernel's vermagic" \
	"$ko: vermagic $vermagic; make.log exit code ${exitc:-?}" \
	[ -n "$ko" -a "${vermagic%% *}" = "$KVER" -a "${vermagic##* }" = "$MARCH" ]

# Native: the compiler that built it is the one that built the kernel
# (its .comment against /proc/version), and the object is this machine's.
tmpko=/tmp/vfsfast-dkms.ko
case $ko in
*.xz) inroot sh -c "xz -dc $ko >$tmpko" ;;
*.zst) inroot sh -c "zstd -qdc $ko >$tmpko" ;;
*) inroot cp "$ko" $tmpko ;;
esac
comment=$(inroot readelf -p .comment $tmpko 2>&1 | sed -n 's/^ *\[ *[0-9a-f]*\] *//p' | sort -u | tr '\n' ' ')
machine=$(inroot readelf -h $tmpko 2>&1 | sed -n 's/^ *Machine: *//p')
# "(aarch64-linux-gnu-gcc-14 (Debian 14.2.0-19) 14.2.0, GNU ld ...)": the
# compiler's identification, as its .comment in an object says it.
kgcc=$(grep -o '(Debian [^)]*) [0-9][0-9.]*' /proc/version | head -n 1)
cc=$(inroot sh -c "grep -h '^CONFIG_CC_VERSION_TEXT' /usr/src/linux-headers-$KVER/.config 2>/dev/null")
ok=0
[ -n "$kgcc" ] && [ "$(echo "$comment" | grep -cF "GCC: $kgcc")" = 1 ] &&
	[ "$machine" = AArch64 -o "$MARCH" != aarch64 ] && ok=1
t_checkv "dkms-native: built natively by the release's gcc the kernel was built with (the module's .comment, /proc/version), a $MARCH object" \
	"module: $comment; kernel: $kgcc; headers: $cc; Machine: $machine" [ $ok = 1 ]

# 2. Loaded with modprobe: the module DKMS installed.
out=$(inroot modprobe vfsfast 2>&1)
rc=$?
lsrc=$(cat /sys/module/vfsfast/srcversion 2>/dev/null)
t_checkv "dkms-native: modprobe vfsfast loads DKMS's module: /sys/kernel/vfsfast, its srcversion" \
	"rc=$rc $out; loaded srcversion ${lsrc:-none}, DKMS's $srcv; backends $(cat $VF/backends 2>/dev/null)" \
	[ "$rc" = 0 -a -d $VF -a -n "$lsrc" -a "$lsrc" = "$srcv" ]

out=$(inroot vfsfast status 2>&1)
rc=$?
echo "$out" | sed 's/^/# vfsfast status: /'
rows=$(echo "$out" | awk '/^OPTIMIZATION / { t = 1; next } t && /: / { t = 0 } t { print $1 }' |
	sort | tr '\n' ' ')
ok=0
[ "$rc" = 0 ] && [ "$rows" = "$(echo $VFSFAST_OPTS | tr ' ' '\n' | sort | tr '\n' ' ')" ] &&
	[ "$(echo "$out" | head -n1 | grep -c "^vfsfast $VFSFAST_VERSION on $KVER ")" = 1 ] && ok=1
t_checkv "dkms-native: vfsfast status (vfsfast-tools): exit 0, a row per optimization under the module's version and the kernel" \
	"rc=$rc; $(echo "$out" | head -n1); rows: $rows" [ $ok = 1 ]

# 3. vfsfast-ab, short: readlink's knob off and on, its workload from
# /usr/libexec/vfsfast (rlbench, the package's arm64 build).
out=$(inroot vfsfast-ab -p 2 --aa 2 -w 1 -n 2000 --no-perf -o /tmp/ab readlink -- \
	readlink-tmpfs-32 2>&1)
rc=$?
echo "$out" | tail -n 12 | sed 's/^/# vfsfast-ab: /'
rows=$(inroot sh -c 'cat /tmp/ab/raw.csv 2>/dev/null' | wc -l)
t_checkv "dkms-native: vfsfast-ab readlink -- readlink-tmpfs-32 (2 pairs, 2 A/A): exit 0, its results written" \
	"rc=$rc; raw.csv $rows lines; $(inroot sh -c 'ls /tmp/ab 2>&1' | tr '\n' ' ')" \
	[ "$rc" = 0 -a "$rows" -gt 4 -a -n "$(inroot sh -c 'ls /tmp/ab/summary.json 2>/dev/null')" ]

# 4. Unloaded.
out=$(inroot rmmod vfsfast 2>&1)
rc=$?
t_checkv "dkms-native: rmmod vfsfast: exit 0, /sys/kernel/vfsfast gone" "rc=$rc $out" \
	[ "$rc" = 0 -a ! -e $VF ]
