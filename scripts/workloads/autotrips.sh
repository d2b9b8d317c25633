# What the knobs cost and save together, not one at a time: bench runs
# each optimization alone, so only its own targets are hooked; under
# enable=auto every auto optimization's are.  Where a trip's cost grows
# with the number of hooked functions (ftrace without per-callsite ops:
# 6.1-arm64, where every trip walks ftrace_ops_list_func's list, one hash
# test per registered ops), a knob can gain alone and lose beside the
# others.  A guest script for icount guests:
#
#   scripts/vfsfast-lab run --kernels 6.1-arm64 --icount \
#           scripts/workloads/autotrips.sh
#
# Loads the module with enable=auto and the kernel's first backend (or
# BACKEND=...), then with vfsfast-ab (3 pairs of off, on and passthrough
# of 5,000 calls, as `vfsfast-lab bench`):
#
#   auto          every knob enable=auto turned on, off vs on together
#   auto-<knob>   getname, lookup_exec: that knob off vs on, the other
#                 auto knobs on
#   auto-path     the auto knobs but getname and lookup_exec, together
#   <knob>        fstatat_empty alone (every stat() and lstat() is a
#                 newfstatat on arm64, so it pays the trip)
#
# and prints one "autotrips:" line per case and workload (instructions
# per call: off, on, passthrough medians; the on/off and passthrough/off
# deltas as vfsfast-ab gives them), then the markdown table of them.

VF=/sys/kernel/vfsfast
B=${BACKEND:-${VFSFAST_BACKENDS_EXPECT%% *}}
C="-p 3 --aa 0 -n 5000 -w 1 --settle 0 --seed 1 --no-perf --arms on,passthrough --root-dir /tmp"
OUT=/tmp/autotrips.txt
: >$OUT

sleep 5
insmod /lab/vfsfast.ko enable=auto backend="$B" || exit 1
AUTO=$(for d in "$VF"/*/; do
	[ "$(cat "$d/enabled" 2>/dev/null)" = 1 ] && basename "$d"
done | tr '\n' ',' | sed 's/,$//')
[ -d /sys/kernel/tracing/options ] || mount -t tracefs none /sys/kernel/tracing
HOOKED=$(grep -c . /sys/kernel/tracing/enabled_functions)
echo "autotrips: kernel $VFSFAST_KERNEL backend $B, enable=auto: $AUTO;" \
	"functions hooked: $HOOKED"
cat /sys/kernel/tracing/enabled_functions

# knobs_set LIST VALUE
knobs_set() {
	for o in $(echo "$1" | tr , ' '); do
		echo "$2" >"$VF/$o/enabled"
	done
}

# ab CASE KNOBS WORKLOAD: one vfsfast-ab run, its line
ab() {
	vfsfast-ab $C "$2" -- "$3" </dev/null >/tmp/autotrips.ab 2>&1 ||
		{ tail -n 15 /tmp/autotrips.ab; return; }
	awk -v c="$1" -v w="$3" '
		$1 == "ns_per_op" && $2 == "on/off" { off = $3; on = $6; d = $9 }
		$1 == "ns_per_op" && $2 == "passthrough/off" { pt = $6; dp = $9 }
		END { printf "autotrips: %s %s off=%.0f on=%.0f passthrough=%.0f on/off=%s passthrough/off=%s\n",
			c, w, off, on, pt, d, dp }' /tmp/autotrips.ab | tee -a $OUT
}

WL="path-stat1 path-lstat access fstatat-empty statx-empty read-file"
knobs_set "$AUTO" 0
for w in $WL; do
	ab auto "$AUTO" "$w"
done
knobs_set "$AUTO" 1
for k in getname lookup_exec; do
	case ",$AUTO," in *",$k,"*) ;; *) continue ;; esac
	echo 0 >"$VF/$k/enabled"
	for w in path-stat1 path-lstat; do
		ab "auto-$k" "$k" "$w"
	done
	echo 1 >"$VF/$k/enabled"
done
REST=$(echo "$AUTO" | tr , '\n' | grep -v '^getname$\|^lookup_exec$' | tr '\n' ',' | sed 's/,$//')
knobs_set "$AUTO" 0
for w in $WL; do
	ab auto-path "$REST" "$w"
done
for w in path-stat1 path-lstat; do
	ab fstatat_empty fstatat_empty "$w"
done
rmmod vfsfast

echo
echo "| case | knobs switched | workload | off | on | on/off | passthrough | passthrough/off |"
echo "|---|---|---|---:|---:|---:|---:|---:|"
sed 's/=/ /g' $OUT | awk -v auto="$AUTO" -v rest="$REST" '{
	k = $2 == "auto" ? auto : $2 == "auto-path" ? rest : $2 ~ /^auto-/ ? substr($2, 6) : $2
	printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", $2, k, $3, $5, $7, $11, $9, $13 }'
