# AppArmor, the LSM Debian enables by default, over the path names and
# walks of getname and lookup_exec: a profile with path rules (a tree it
# allows, one it denies, one it allows read-only, a directory the walk
# searches but may not read, a symbolic link into the denied tree)
# loaded in enforce mode by the release's own apparmor_parser, confining
# aaprobe.  Confined, aaprobe's records with the knobs off, on and off
# again must agree (a record of the pass with the knobs on is wrong when
# it equals neither pass with them off), and the profile must be
# enforced: paths it denies are refused to the confined aaprobe and
# granted to the unconfined one.  Where the kernel has both optimizations
# upstream there is nothing to compare.

. /lab/lib.sh; in_group t_apparmor || return 0

AA=/sys/kernel/security/apparmor
[ -d $AA ] || mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
if [ ! -d /sys/module/apparmor ]; then
	note "apparmor: not built into this kernel; nothing to confine"
	return 0 2>/dev/null || exit 0
fi
t_checkv "apparmor: active in the guest, its profiles loadable" \
	"$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null); $(ls $AA 2>&1 | tr '\n' ' ')" \
	[ -e $AA/.replace ] || return 0 2>/dev/null || exit 0

load_vfsfast enable=none
KNOBS=
for o in getname lookup_exec; do
	[ -e $VF/$o ] && ! grep -q '^unsupported' $VF/$o/status && KNOBS="$KNOBS $o"
done
if [ -z "$KNOBS" ]; then
	note "apparmor: getname and lookup_exec are upstream here; nothing to compare"
	unload_vfsfast
	return 0 2>/dev/null || exit 0
fi
note "apparmor: knobs compared:$KNOBS"

# The tree: owned by root, every directory searchable by everyone but
# /tmp/aa/walk, which the profile lets the walk through without a read
# rule of its own.
rm -rf /tmp/aa && mkdir -p /tmp/aa/allow/d/e /tmp/aa/deny/d /tmp/aa/ro/d /tmp/aa/walk/in
for d in allow allow/d allow/d/e deny deny/d ro ro/d walk/in; do : >/tmp/aa/$d/f; done
ln -s ../deny/f /tmp/aa/allow/to-deny
ln -s d/f /tmp/aa/allow/to-d
cp /lab/bin/aaprobe /tmp/aa/aaprobe
cat >/tmp/aa/profile <<'EOF'
/tmp/aa/aaprobe {
  / r,
  /tmp/aa/aaprobe mr,
  /tmp/aa.* w,
  /dev/console rw,
  /dev/null rw,
  /tmp/aa/allow/ rw,
  /tmp/aa/allow/** rwl,
  /tmp/aa/ro/ r,
  /tmp/aa/ro/** r,
  /tmp/aa/walk/in/** rw,
  deny /tmp/aa/deny/** rwl,
  deny /tmp/aa/deny/ rw,
}
EOF
mkdir -p /etc/apparmor && : >>/etc/apparmor/parser.conf
parser=$(command -v apparmor_parser || echo /usr/sbin/apparmor_parser)
out=$($parser --skip-cache -r /tmp/aa/profile 2>&1)
rc=$?
t_checkv "apparmor: the release's apparmor_parser loads a profile with path rules (enforce mode)" \
	"rc=$rc; $(echo "$out" | tail -n 2 | tr '\n' ' ')$(grep aaprobe $AA/profiles 2>/dev/null)" \
	[ $rc = 0 ] && grep -q '^/tmp/aa/aaprobe (enforce)' $AA/profiles || {
	unload_vfsfast
	return 0 2>/dev/null || exit 0
}

paths="/tmp/aa /tmp/aa/allow /tmp/aa/allow/f /tmp/aa/allow/d /tmp/aa/allow/d/e/f
/tmp/aa/allow/to-deny /tmp/aa/allow/to-d /tmp/aa/allow/missing /tmp/aa/allow/d/e/missing/x
/tmp/aa/deny /tmp/aa/deny/f /tmp/aa/deny/d /tmp/aa/deny/d/f /tmp/aa/deny/missing
/tmp/aa/ro /tmp/aa/ro/f /tmp/aa/ro/d/f /tmp/aa/walk /tmp/aa/walk/in /tmp/aa/walk/in/f
/tmp/aa/walk/../allow/d/./e/f //tmp//aa//allow//f /tmp/aa/ro/f/"

# probe FILE VALUE [runas UID]: the confined records into FILE, with every
# compared knob at VALUE (set as root), aaprobe run from / as root or as
# UID; the pass's hits go to FILE.hits.
probe() {
	_f=$1 _v=$2
	shift 2
	for k in $KNOBS; do set_knob $k "$_v"; done
	_h0=0
	for k in $KNOBS; do _h0=$((_h0 + $(stat_of $k hits))); done
	# shellcheck disable=SC2086
	(cd / && "$@" /tmp/aa/aaprobe $paths) >"$_f"
	_h1=0
	for k in $KNOBS; do _h1=$((_h1 + $(stat_of $k hits))); done
	echo $((_h1 - _h0)) >"$_f.hits"
	for k in $KNOBS; do set_knob $k 0; done
}

# As root, then as a user (runas: uid and gid 1000, no capabilities),
# whose records differ from root's where the mode bits decide.
chmod 0777 /tmp/aa/allow /tmp/aa/allow/d /tmp/aa/walk/in
for who in root user; do
	run=
	[ $who = user ] && run="runas 1000"
	probe /tmp/aa.$who.a 0 $run
	probe /tmp/aa.$who.b 1 $run
	probe /tmp/aa.$who.c 0 $run
	# A record with the knobs on is wrong when it equals neither off pass.
	bad=$(awk 'FILENAME == ARGV[1] { a[FNR] = $0; na = FNR; next }
		   FILENAME == ARGV[2] { c[FNR] = $0; next }
		   $0 != a[FNR] && $0 != c[FNR] { if (++bad <= 3) printf " %s (off: %s);", $0, a[FNR] }
		   END { if (FNR != na) printf " %d records on, %d off;", FNR, na
			 print ""; print bad + (FNR != na) }' \
		/tmp/aa.$who.a /tmp/aa.$who.c /tmp/aa.$who.b)
	nbad=$(echo "$bad" | tail -n 1)
	n=$(wc -l </tmp/aa.$who.b)
	hits=$(cat /tmp/aa.$who.b.hits)
	t_checkv "apparmor: the confined calls as $who answer the same with the knobs off and on" \
		"$n records, $nbad wrong, hits+$hits;$(echo "$bad" | head -n 1)" \
		[ "$nbad" = 0 -a "$hits" -gt 0 -a "$n" -ge 300 ]
done
t_check "apparmor: root's and the user's records differ (the mode bits were asked)" \
	sh -c '! cmp -s /tmp/aa.root.a /tmp/aa.user.a'

# The profile is enforced: denied and read-only files refused confined
# as the profile says; /lab/bin/aaprobe, the same program under a name
# no profile attaches to, opens them all.
conf=$(grep -E '^/tmp/aa/(deny|ro)/f open-[rw] ' /tmp/aa.root.b | tr '\n' ' ')
plain=$(cd / && aaprobe /tmp/aa/deny/f /tmp/aa/ro/f | grep -E ' open-[rw] ' | tr '\n' ' ')
t_checkv "apparmor: the profile is enforced (denied and read-only files refused confined, opened unconfined)" \
	"confined: $conf; unconfined: $plain" \
	[ "$conf" = "/tmp/aa/deny/f open-r -1 13 /tmp/aa/deny/f open-w -1 13 /tmp/aa/ro/f open-r 0 0 /tmp/aa/ro/f open-w -1 13 " \
	  -a "$plain" = "/tmp/aa/deny/f open-r 0 0 /tmp/aa/deny/f open-w 0 0 /tmp/aa/ro/f open-r 0 0 /tmp/aa/ro/f open-w 0 0 " ]

$parser -R /tmp/aa/profile >/dev/null 2>&1
unload_vfsfast
