# A BPF fentry program (bpfentry: raw bpf(2), the kernel's own BTF) on
# vfs_readlink beside vfsfast's hook, in both orders.  A BPF trampoline is
# a direct-call user of the site, so the kernel may refuse one side with
# EBUSY; whatever it decides, the side that is refused must say so
# (bpf(2) fails, or vfsfast's write fails and status names the function),
# the side that holds the site must keep working, status must match what
# the counters show, and every readlink result must stay exact.

. /lab/lib.sh; in_group t_bpf || return 0

# Waits for bpfentry's first line: attached, refused: ..., or no BTF.
bpf_start() {
	rm -f /tmp/bpf.stop /tmp/bpf.out
	bpfentry vfs_readlink /tmp/bpf.stop >/tmp/bpf.out 2>/tmp/bpf.err &
	bpf_pid=$!
	i=0
	while [ ! -s /tmp/bpf.out ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	bpf_first=$(head -n1 /tmp/bpf.out)
}

# Sets bpf_calls (empty if it never attached) and bpf_rc.
bpf_stop() {
	touch /tmp/bpf.stop
	wait $bpf_pid
	bpf_rc=$?
	bpf_calls=$(sed -n 's/^calls=//p' /tmp/bpf.out)
}

# "active" and growing hits, or not active and no hits: never a claim
# the counters contradict.
status_truthful() {
	h0=$(stat_of readlink hits)
	readlink /tmp/links/l0100 >/dev/null
	readlink /tmp/links/l0032 >/dev/null
	sleep 0.5
	h1=$(stat_of readlink hits)
	st=$(head -n1 $VF/readlink/status)
	if [ "$st" = active ]; then
		[ "$h1" -gt "$h0" ]
	else
		[ "$h1" -eq "$h0" ]
	fi
}

need_links
if [ ! -r /sys/kernel/btf/vmlinux ]; then
	note "no /sys/kernel/btf/vmlinux: BPF fentry needs BTF"
	return 0 2>/dev/null || exit 0
fi

# vfsfast first, then BPF.
load_vfsfast enable=readlink
start_checker
bpf_start
case $bpf_first in
attached) outcome=shared ;;
# 7.2 answers EINVAL where earlier kernels answer EBUSY.
"refused: attach: EBUSY"|"refused: attach: EINVAL") outcome="refused (${bpf_first#refused: attach: })" ;;
*) outcome="unexpected: $bpf_first $(head -c 300 /tmp/bpf.err)" ;;
esac
t_checkv "bpf after vfsfast ($VFSFAST_BACKEND): attaches or is refused with EBUSY/EINVAL" "$outcome" \
	[ "$outcome" = shared -o "${outcome%% *}" = refused ]
t_checkv "bpf after vfsfast: status is truthful" "$(head -n1 $VF/readlink/status)" status_truthful
t_eq "bpf after vfsfast: vfsfast kept the site (status active)" active "$(head -n1 $VF/readlink/status)"
bpf_stop
if [ "$outcome" = shared ]; then
	t_checkv "bpf after vfsfast: the BPF program saw the calls" "calls=$bpf_calls" \
		[ "${bpf_calls:-0}" -gt 0 ]
fi
stop_checker
t_eq "bpf after vfsfast: readlink results exact" "0 ok" "$checked"
note "$VFSFAST_BACKEND: BPF fentry after vfsfast: $outcome"
unload_vfsfast

# BPF first, then vfsfast.
load_vfsfast enable=none
start_checker
bpf_start
t_eq "bpf first: the fentry program attaches to an unhooked function" attached "$bpf_first"
if echo 1 >$VF/readlink/enabled 2>/tmp/bpf.werr; then
	outcome=shared
	t_eq "bpf first: vfsfast shares the site (status active)" active \
		"$(head -n1 $VF/readlink/status)"
else
	outcome="refused ($(head -n1 $VF/readlink/status))"
	t_check "bpf first: refused enable names the function and EBUSY" \
		grep -q "^conflict: vfs_readlink: .*-16" $VF/readlink/status
	t_eq "bpf first: the request is remembered" "requested: on" \
		"$(sed -n 3p $VF/readlink/status)"
fi
t_checkv "bpf first: status is truthful" "$(head -n1 $VF/readlink/status)" status_truthful
bpf_stop
t_checkv "bpf first: the BPF program kept seeing the calls" "calls=$bpf_calls" \
	[ "$bpf_rc" = 0 -a "${bpf_calls:-0}" -gt 0 ]
note "$VFSFAST_BACKEND: vfsfast after BPF fentry: $outcome"
# Once BPF is gone, vfsfast can take the site.
set_knob readlink 0
set_knob readlink 1
t_eq "bpf gone: vfsfast enables and is active" active "$(head -n1 $VF/readlink/status)"
t_check "bpf gone: status is truthful" status_truthful
stop_checker
t_eq "bpf first: readlink results exact" "0 ok" "$checked"
set_knob readlink 0
unload_vfsfast
