# The LSMs that Debian enables and that decide on paths, over the path
# names and walks of getname and lookup_exec.  AppArmor (Debian's
# default): a profile with path rules (a tree it allows, one it denies
# with a symbolic link into it, one it allows read-only, a directory the
# walk crosses without a rule) loaded in enforce mode by the release's
# own apparmor_parser, confining aaprobe.  Landlock (5.13 and later):
# aaprobe restricts itself with a ruleset of the same shape.  Either way
# aaprobe's records with the knobs off, on and off again must agree (a
# record of the pass with the knobs on is wrong when it equals neither
# pass with them off), as root and as a user, and the rules must be
# enforced: what they deny is refused to the confined aaprobe and granted
# to an unconfined one.  The BPF LSM (6.1 and later in Debian's lsm=): a
# program on inode_permission, whose calls are counted in each record, so
# that the hook is shown to see every directory's check with the knobs
# on.  Where the kernel has both optimizations upstream there is nothing
# to compare.

. /lab/lib.sh; in_group t_lsm || return 0

load_vfsfast enable=none
KNOBS=
for o in getname lookup_exec; do
	[ -e $VF/$o ] && ! grep -q '^unsupported' $VF/$o/status && KNOBS="$KNOBS $o"
done
if [ -z "$KNOBS" ]; then
	note "lsm: getname and lookup_exec are upstream here; nothing to compare"
	unload_vfsfast
	return 0 2>/dev/null || exit 0
fi
note "lsm: knobs compared:$KNOBS"

# The tree, owned by root; the user may write where the rules allow it.
rm -rf /tmp/aa && mkdir -p /tmp/aa/allow/d/e /tmp/aa/deny/d /tmp/aa/ro/d /tmp/aa/walk/in
for d in allow allow/d allow/d/e deny deny/d ro ro/d walk/in; do : >/tmp/aa/$d/f; done
ln -s ../deny/f /tmp/aa/allow/to-deny
ln -s d/f /tmp/aa/allow/to-d
chmod 0777 /tmp/aa/allow /tmp/aa/allow/d /tmp/aa/walk/in
paths="/tmp/aa /tmp/aa/allow /tmp/aa/allow/f /tmp/aa/allow/d /tmp/aa/allow/d/e/f
/tmp/aa/allow/to-deny /tmp/aa/allow/to-d /tmp/aa/allow/missing /tmp/aa/allow/d/e/missing/x
/tmp/aa/deny /tmp/aa/deny/f /tmp/aa/deny/d /tmp/aa/deny/d/f /tmp/aa/deny/missing
/tmp/aa/ro /tmp/aa/ro/f /tmp/aa/ro/d/f /tmp/aa/walk /tmp/aa/walk/in /tmp/aa/walk/in/f
/tmp/aa/walk/../allow/d/./e/f //tmp//aa//allow//f /tmp/aa/ro/f/"

# probe FILE VALUE CMD...: CMD's records for $paths into FILE, run from /,
# with every compared knob at VALUE (set as root); the pass's hits go to
# FILE.hits.
probe() {
	_f=$1 _v=$2
	shift 2
	for k in $KNOBS; do set_knob $k "$_v"; done
	_h0=0
	for k in $KNOBS; do _h0=$((_h0 + $(stat_of $k hits))); done
	# shellcheck disable=SC2086
	(cd / && "$@" $paths) >"$_f"
	_h1=0
	for k in $KNOBS; do _h1=$((_h1 + $(stat_of $k hits))); done
	echo $((_h1 - _h0)) >"$_f.hits"
	for k in $KNOBS; do set_knob $k 0; done
}

# lsm_diff LSM CMD...: CMD (aaprobe confined by LSM) as root, then as a
# user (runas: uid and gid 1000, no capabilities; or $user_cmd, where
# only root can set the LSM up), knobs 0, 1, 0; the records go to
# /tmp/LSM.WHO.[abc].
lsm_diff() {
	_l=$1
	shift
	for who in root user; do
		for p in a:0 b:1 c:0; do
			if [ $who = root ]; then
				probe /tmp/$_l.$who.${p%:*} ${p#*:} "$@"
			elif [ -n "$user_cmd" ]; then
				# shellcheck disable=SC2086
				probe /tmp/$_l.$who.${p%:*} ${p#*:} $user_cmd
			else
				probe /tmp/$_l.$who.${p%:*} ${p#*:} runas 1000 "$@"
			fi
		done
		# A record with the knobs on is wrong when it equals neither off pass.
		bad=$(awk 'FILENAME == ARGV[1] { a[FNR] = $0; na = FNR; next }
			   FILENAME == ARGV[2] { c[FNR] = $0; next }
			   $0 != a[FNR] && $0 != c[FNR] { if (++bad <= 3) printf " %s (off: %s);", $0, a[FNR] }
			   END { if (FNR != na) printf " %d records on, %d off;", FNR, na
				 print ""; print bad + (FNR != na) }' \
			/tmp/$_l.$who.a /tmp/$_l.$who.c /tmp/$_l.$who.b)
		nbad=$(echo "$bad" | tail -n 1)
		n=$(wc -l </tmp/$_l.$who.b)
		hits=$(cat /tmp/$_l.$who.b.hits)
		t_checkv "$_l: the confined calls as $who answer the same with the knobs off and on" \
			"$n records, $nbad wrong, hits+$hits;$(echo "$bad" | head -n 1)" \
			[ "$nbad" = 0 -a "$hits" -gt 0 -a "$n" -ge 300 ]
	done
	cmp -s /tmp/$_l.root.a /tmp/$_l.user.a
	d=$?
	t_checkv "$_l: root's and the user's records differ (the mode bits were asked)" \
		"cmp exit $d" [ $d = 1 ]
}

# enforced LSM: the denied and read-only files are refused to the
# confined aaprobe as the rules say, and /lab/bin/aaprobe unconfined (a
# name no profile attaches to, no ruleset) opens them all.
enforced() {
	conf=$(grep -E '^/tmp/aa/(deny|ro)/f open-[rw] ' /tmp/$1.root.b | tr '\n' ' ')
	plain=$(cd / && aaprobe /tmp/aa/deny/f /tmp/aa/ro/f | grep -E ' open-[rw] ' | tr '\n' ' ')
	t_checkv "$1: the rules are enforced (denied and read-only files refused confined, opened unconfined)" \
		"confined: $conf; unconfined: $plain" \
		[ "$conf" = "/tmp/aa/deny/f open-r -1 13 /tmp/aa/deny/f open-w -1 13 /tmp/aa/ro/f open-r 0 0 /tmp/aa/ro/f open-w -1 13 " \
		  -a "$plain" = "/tmp/aa/deny/f open-r 0 0 /tmp/aa/deny/f open-w 0 0 /tmp/aa/ro/f open-r 0 0 /tmp/aa/ro/f open-w 0 0 " ]
}

# AppArmor: the profile attaches to /tmp/aa/aaprobe, a copy of aaprobe.
AA=/sys/kernel/security/apparmor
[ -d $AA ] || mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
if [ -d /sys/module/apparmor ]; then
	t_checkv "apparmor: active in the guest, its profiles loadable" \
		"$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null); $(ls $AA 2>&1 | tr '\n' ' ')" \
		[ -e $AA/.replace ]
	cp /lab/bin/aaprobe /tmp/aa/aaprobe
	cat >/tmp/aa/profile <<'PROFILE'
/tmp/aa/aaprobe {
  / r,
  /tmp/aa/aaprobe mr,
  /tmp/apparmor.* w,
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
PROFILE
	mkdir -p /etc/apparmor && : >>/etc/apparmor/parser.conf
	parser=$(command -v apparmor_parser || echo /usr/sbin/apparmor_parser)
	out=$($parser --skip-cache -r /tmp/aa/profile 2>&1)
	rc=$?
	loaded=no
	[ $rc = 0 ] && grep -q '^/tmp/aa/aaprobe (enforce)' $AA/profiles && loaded=yes
	t_checkv "apparmor: the release's apparmor_parser loads a profile with path rules (enforce mode)" \
		"rc=$rc; $(echo "$out" | tail -n 2 | tr '\n' ' ')$(grep aaprobe $AA/profiles 2>/dev/null)" \
		[ $loaded = yes ]
	if [ $loaded = yes ]; then
		lsm_diff apparmor /tmp/aa/aaprobe
		enforced apparmor
	fi
	$parser -R /tmp/aa/profile >/dev/null 2>&1
else
	note "apparmor: not built into this kernel"
fi

# Landlock: aaprobe restricts itself (every right beneath allow and
# walk/in, reading beneath ro, nothing elsewhere).
ll="aaprobe -w /tmp/aa/allow -w /tmp/aa/walk/in -r /tmp/aa/ro"
out=$(cd / && $ll /tmp/aa 2>&1 >/dev/null)
rc=$?
if [ $rc = 3 ] && ! grep -qE ' __(x64|arm64)_sys_landlock_create_ruleset$' /proc/kallsyms; then
	note "landlock: not in this kernel (5.13 and later): $out"
else
	t_checkv "landlock: aaprobe restricts itself with a ruleset" "rc=$rc; $out" [ $rc = 0 ]
	if [ $rc = 0 ]; then
		# shellcheck disable=SC2086
		lsm_diff landlock $ll
		enforced landlock
	fi
fi

# Fault-injection build, first backend: with fi_lookup_exec_nolsm the
# shortcut grants searches without asking the LSMs; the program's records
# with lookup_exec on must then differ from the pass with it off (fewer
# checks counted, the refused directory walked through).
fi_nolsm() {
	case " $KNOBS " in *" lookup_exec "*) ;; *) return 0 ;; esac
	first_backend || return 0
	P=/sys/module/vfsfast/parameters
	unload_vfsfast
	insmod /lab/vfsfast-fi.ko enable=none ${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
	echo 1 >$P/fi_lookup_exec_nolsm
	set_knob lookup_exec 1
	# shellcheck disable=SC2086
	(cd / && aaprobe -b "$deny" $paths) >/tmp/bpf.fi
	set_knob lookup_exec 0
	echo 0 >$P/fi_lookup_exec_nolsm
	unload_vfsfast
	load_vfsfast enable=none
	nd=$(awk 'FILENAME == ARGV[1] { a[FNR] = $0; next } $0 != a[FNR] { n++ } END { print n + 0 }' \
		/tmp/bpf.root.a /tmp/bpf.fi)
	through=$(awk '$1 == "/tmp/aa/deny/f" && $2 == "lstat" { print $3, $4 }' /tmp/bpf.fi)
	t_checkv "bpf lsm: the comparison catches a shortcut that skips the LSMs (fi_lookup_exec_nolsm)" \
		"$nd records differ; lstat through the refused directory: $through" \
		[ "$nd" -gt 0 -a "$through" = "0 0" ]
}

# The BPF LSM (in Debian's lsm= list from 6.1 on): aaprobe -b attaches a
# program to inode_permission that counts the hook's calls (each record
# ends with its call's count) and refuses MAY_EXEC on /tmp/aa/deny, so
# lsm_diff also says that the hook saw every check with the knobs on that
# it saw with them off.  Only root may attach it: aaprobe -U becomes the
# user afterwards.
# Where the BPF LSM is not active (5.10's default list), a program still
# attaches, to a hook that is never called: nothing to compare.
lsms=$(cat /sys/kernel/security/lsm 2>/dev/null)
deny=$(stat -c %i /tmp/aa/deny)
out=$(cd / && aaprobe -b 0 /tmp/aa 2>&1 >/dev/null)
rc=$?
if [ -n "$lsms" ] && ! echo ",$lsms," | grep -q ',bpf,'; then
	note "bpf lsm: not in this kernel's active LSMs ($lsms)"
elif [ $rc = 3 ] && [ ! -e /sys/kernel/btf/vmlinux ]; then
	note "bpf lsm: this kernel has no BTF for a program to attach by"
else
	t_checkv "bpf lsm: aaprobe attaches a program to inode_permission" \
		"rc=$rc; lsm: $lsms; $(echo "$out" | head -n 3 | tr '\n' ' ')" [ $rc = 0 ]
	if [ $rc = 0 ]; then
		user_cmd="aaprobe -b $deny -U 1000"
		lsm_diff bpf aaprobe -b "$deny"
		user_cmd=
		f4='{ printf "%s %s %s %s; ", $1, $2, $3, $4 }'
		conf=$(awk '$1 == "/tmp/aa/deny/f" && ($2 == "lstat" || $2 == "open-r")'"$f4" \
			/tmp/bpf.root.b)
		plain=$(cd / && aaprobe /tmp/aa/deny/f | awk '$2 == "lstat" || $2 == "open-r"'"$f4")
		walk=$(awk '$1 == "/tmp/aa/allow/d/e/f" && $2 == "lstat" { sub("h=", "", $NF); print $NF }' \
			/tmp/bpf.root.b)
		t_checkv "bpf lsm: the program refuses the walk through its directory and sees each directory's check" \
			"confined: $conf unconfined: $plain hook calls for a 6-directory lstat: $walk" \
			[ "$conf" = "/tmp/aa/deny/f lstat -1 13; /tmp/aa/deny/f open-r -1 13; " \
			  -a "$plain" = "/tmp/aa/deny/f lstat 0 0; /tmp/aa/deny/f open-r 0 0; " \
			  -a "${walk:-0}" -ge 6 ]
		fi_nolsm
	fi
fi
unload_vfsfast
