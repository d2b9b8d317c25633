# Pointer authentication and the stock entry (arm64): a replacement that
# calls its target stock enters the target's body just past the ftrace
# site, where the target's own "paciasp" signs the return address it
# came with; its "autiasp" then checks it on return.  (a) With PAC on,
# readlink() through the fast path and through the stock fallback returns
# exact answers and the kernel reports nothing.  (b) The same call with
# the stock entry one instruction late (vfsfast-fi.ko
# fi_arm64_skip_sign=vfs_readlink, past the "paciasp") must oops on the
# unsigned return address: proof that (a) ran with authentication
# enforced.  The oops leaves the kernel tainted and a task dead, so this
# group runs in a guest of its own, on kernels that sign return addresses
# (CONFIG_ARM64_PTR_AUTH_KERNEL; on 5.10, before that option was split
# off, CONFIG_ARM64_PTR_AUTH: build.config_option()); the suite skips it
# elsewhere.

. /lab/lib.sh; in_group t_pac || return 0

if [ "$VFSFAST_EXPECT_PTR_AUTH_KERNEL" != 1 ]; then
	note "pac: not run: the kernel does not sign return addresses (no CONFIG_ARM64_PTR_AUTH_KERNEL)"
	return 0 2>/dev/null || exit 0
fi

# The report's markers, written where the console scan (scripts/lablib/vm.py)
# looks for them.
PAC_BEGIN="vfsfast_pac: expected pointer authentication report begin"
PAC_END="vfsfast_pac: expected pointer authentication report end"

feat=$(grep -m1 '^Features' /proc/cpuinfo)
t_checkv "pac: the CPU offers address and generic authentication (paca, pacg)" "$feat" \
	sh -c "echo ' $feat ' | grep -q ' paca ' && echo ' $feat ' | grep -q ' pacg '"
auth=$(dmesg | grep -m1 'CPU features: detected: Address authentication')
t_checkv "pac: the kernel uses address authentication" "${auth#*] }" [ -n "$auth" ]

need_link_lists
printf '%s\n' /proc/self /proc/self/exe /proc/self/cwd /proc/self/root \
	/proc/self/fd/0 /proc/self/fd/1 /proc/self/ns/mnt /proc/1/exe \
	/proc/mounts /proc/thread-self >/tmp/list.proc

# (a) The normal build.  rldiff compares each call knob off vs on; proc's
# links go to stock (a ->readlink of their own, or a ->get_link outside
# the bounded filesystems), and so do its bad-buffer calls; the rest of
# tmpfs's stays on the fast path.
load_vfsfast enable=readlink
t_eq "pac: normal build: readlink active" active "$(head -n1 $VF/readlink/status)"
dmesg -c >/dev/null
h0=$(stat_of readlink hits)
f0=$(stat_of readlink fallbacks)
for fs in tmpfs proc; do
	out=$(rldiff /tmp/list.$fs)
	rc=$?
	oneline "$(echo "$out" | tail -n1)"
	t_checkv "pac: normal build: differential $fs: knob off vs on byte-for-byte equal" "$_one" \
		sh -c "[ $rc -eq 0 ] && echo '$_one' | grep -q 'mismatches=0'"
done
h1=$(stat_of readlink hits)
f1=$(stat_of readlink fallbacks)
t_checkv "pac: normal build: rldiff went through the fast path and the stock fallback" \
	"hits+$((h1 - h0)) fallbacks+$((f1 - f0))" [ $((h1 - h0)) -gt 0 -a $((f1 - f0)) -gt 0 ]

# A symlink's first readlink() goes to stock (IOP_DEFAULT_READLINK is not
# set yet), the next one stays on the fast path: 64 fresh links of 1 to
# 4095 bytes, each read twice.
set_knob readlink 1
mkdir -p /tmp/pacfresh
long=$(printf '%04095d' 0)
f0=$(stat_of readlink fallbacks)
h0=$(stat_of readlink hits)
bad=""
i=0
while [ $i -lt 64 ]; do
	len=$((i * 64 + 1))
	[ $len -gt 4095 ] && len=4095
	tgt=$(echo "$long" | cut -c1-$len)
	ln -s "$tgt" /tmp/pacfresh/l$i
	for pass in stock fast; do
		[ "$(readlink /tmp/pacfresh/l$i)" = "$tgt" ] || bad="$bad l$i($len,$pass)"
	done
	i=$((i + 1))
done
f1=$(stat_of readlink fallbacks)
h1=$(stat_of readlink hits)
t_eq "pac: normal build: 64 fresh links read exactly, first through stock, then fast" "" "$bad" \
	"fallbacks+$((f1 - f0)) hits+$((h1 - h0))"
t_checkv "pac: normal build: each fresh link's first call went to stock" \
	"fallbacks+$((f1 - f0))" [ $((f1 - f0)) -ge 64 ]
i=0
while [ $i -lt 200 ]; do
	readlink /proc/self/exe >/dev/null || bad="$bad exe"
	i=$((i + 1))
done
t_eq "pac: normal build: 200 stock readlink() of /proc/self/exe returned" "" "$bad" \
	"fallbacks+$(($(stat_of readlink fallbacks) - f1))"
reports=$(dmesg | grep -E 'Internal error|Unable to handle|FPAC|BUG:|WARNING:|Oops')
t_eq "pac: normal build: no kernel report" "" "$reports"
t_check "pac: normal build: unloads" unload_vfsfast

# (b) The fault-injection build with readlink's stock entry past its
# "paciasp", armed at load with the knob off.  With the knob on, every
# stock readlink() would fault, busybox's own at start included: the knob
# is on only around one call, and the shell switches it with builtins.
if [ ! -f /lab/vfsfast-fi.ko ]; then
	t_fail "pac: fault-injection build available" "vfsfast-fi.ko was not built"
	return 0 2>/dev/null || exit 0
fi
dmesg -c >/dev/null
insmod /lab/vfsfast-fi.ko enable=none fi_arm64_skip_sign=vfs_readlink \
	${VFSFAST_BACKEND:+backend=$VFSFAST_BACKEND}
t_eq "pac: skip-sign build: loaded, readlink off" off "$(head -n1 $VF/readlink/status)"
armed=$(dmesg | grep 'vfsfast: vfs_readlink: fi_arm64_skip_sign: stock calls enter at')
t_eq "pac: skip-sign build: armed, past the paciasp that starts vfs_readlink's body" 1 \
	"$(echo "$armed" | grep -c 'enter at vfs_readlink+0x[0-9a-f]*/0x[0-9a-f]*, past paciasp$')" \
	"${armed#*] }"

# The fast path never enters stock: exact, no fallback, no report.
# rldiff switches the knob itself, after its own start (static glibc's
# start-up reads /proc/self/exe), and -g leaves out its bad buffers,
# which go to stock.
out=$(rldiff -g /tmp/list.tmpfs)
rc=$?
oneline "$(echo "$out" | tail -n1) fallbacks $(stat_of readlink fallbacks)"
t_checkv "pac: skip-sign build: differential tmpfs (fast path only) byte-for-byte equal" "$_one" \
	sh -c "[ $rc -eq 0 ] && echo '$_one' | grep -q 'mismatches=0.* fallbacks 0$'"
reports=$(dmesg | grep -E 'Internal error|Unable to handle|FPAC|BUG:|WARNING:|Oops')
t_eq "pac: skip-sign build: no kernel report from the fast path" "" "$reports"

# One stock call, /proc/self/exe's (proc's own ->readlink): the task must
# die in an oops at its return, the rest of the kernel going on.
sym() { grep -m1 " $1\$" /proc/kallsyms | cut -d' ' -f1; }
rlat=$(sym do_readlinkat)
h0=$(stat_of readlink hits)
f0=$(stat_of readlink fallbacks)
echo 0 >/proc/sys/kernel/panic_on_oops
dmesg -c >/dev/null
echo "<3>$PAC_BEGIN" >/dev/kmsg
set_knob readlink 1
(readlink /proc/self/exe >/dev/null)
rc=$?
set_knob readlink 0
echo "<3>$PAC_END" >/dev/kmsg
echo 1 >/proc/sys/kernel/panic_on_oops
report=$(dmesg | sed -n "/$PAC_BEGIN/,/$PAC_END/p")
# The report without its register dump, for whoever reads the results.
echo "$report" | grep -v '\] x[0-9 ]*: ' | sed 's/^[^]]*] /# report: /'
t_eq "pac: skip-sign build: the stock readlink() is killed (SIGSEGV), one stock call, no hit" \
	"139 1 0" "$rc $(($(stat_of readlink fallbacks) - f0)) $(($(stat_of readlink hits) - h0))"
t_eq "pac: skip-sign build: exactly one oops, in the readlink task" "1 1" \
	"$(echo "$report" | grep -c 'Internal error: Oops') $(echo "$report" | grep -c 'Comm: readlink ')"
frame=$(echo "$report" | grep -c '^\[[ 0-9.]*\]  __arm64_sys_readlinkat+0x')
t_eq "pac: skip-sign build: the oops is in the readlink system call (a frame of __arm64_sys_readlinkat)" \
	1 "$frame"
# A CPU with FEAT_FPAC traps at the failed autiasp, in vfs_readlink; one
# without it (qemu 7.2's -cpu max) puts an error code in the pointer's top
# bits, and the ret faults there: the caller's return address, whose low
# 48 bits must be do_readlinkat's, as the stripped lr shows.
pc=$(echo "$report" | sed -n 's/.*\] pc : \(.*\)$/\1/p')
lr=$(echo "$report" | sed -n 's/.*\] lr : \(.*\)$/\1/p')
if echo "$report" | grep -q 'Internal error: Oops - FPAC: '; then
	note "pac: FEAT_FPAC: autiasp trapped (pc $pc)"
	t_eq "pac: skip-sign build: FPAC at vfs_readlink's autiasp" vfs_readlink "${pc%%+*}" "pc $pc"
else
	note "pac: no FEAT_FPAC: the unsigned return address failed autiasp and faulted at ret (pc $pc)"
	va=$(echo "$report" | sed -n 's/.*Unable to handle kernel paging request at virtual address \([0-9a-f]*\)$/\1/p')
	off=${lr#do_readlinkat+}
	off=${off%%/*}
	ret=$(printf '%012x' $((0x${rlat#????} + off)))
	iabt=$(echo "$report" | grep -c 'Internal error: Oops: 0000000086000004 \[#1\]')
	t_eq "pac: skip-sign build: instruction abort (ESR 0x86000004) at the return address, its top bits corrupted" \
		"1 0x$va $ret different" "$iabt $pc ${va#????} $([ "$va" != "${rlat%????????????}$ret" ] && echo different)" \
		"lr $lr do_readlinkat $rlat"
fi
