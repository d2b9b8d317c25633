# Which functions a path walk calls for each component: a guest script for
#
#   scripts/vfsfast-lab run --icount --kernels "6.12 7.2" scripts/workloads/walkprof.sh
#
# The function tracer records every kernel function (of every task: the
# guest is otherwise idle, and the count keeps abloop's) that abloop's
# lstat() calls (glibc's lstat() is fstatat(AT_FDCWD, path, buf,
# AT_SYMLINK_NOFOLLOW)) for a 5-component and a 9-component tmpfs path,
# 100 calls each (and abloop's 1,000 warm-up calls before them, counted
# too) after an untraced run; a function's calls per
# component are the difference between the two, divided by 4.  First
# stock (the module loaded with enable=none), then with what the module
# enables by default (enable=auto).  What each call costs is the bench's
# business (instructions per lstat() of each path, without a tracer);
# this says where they go: a kernel whose walk calls fewer functions per
# component spends fewer instructions on calls, returns and the ftrace
# nops at every function's entry.
#
# Output: "walkprof: <kernel> <enable=> <function> <per component>
# <per lstat-5>", the functions called at least once per component,
# then a "walkprof: ... total" line.

T=/sys/kernel/tracing
mkdir -p /tmp/wp/a/b/c/d/e/f/g && : >/tmp/wp/a/b/c/f && : >/tmp/wp/a/b/c/d/e/f/g/f
N=100
echo 16384 >$T/buffer_size_kb

count() { # path: prints "function calls-per-lstat" lines
	/lab/bin/abloop lstat $N "$1" >/dev/null
	echo 0 >$T/tracing_on
	echo function >$T/current_tracer
	echo >$T/trace
	echo 1 >$T/tracing_on
	/lab/bin/abloop lstat $N "$1" >/dev/null
	echo 0 >$T/tracing_on
	# Lines: "  abloop-123  [000] .....  12.345678: func <-caller"
	awk -v n=$N '$1 ~ /^abloop-/ && $5 != "" { c[$5]++ } END { for (f in c) printf "%s %.2f\n", f, c[f] / (n + 1000) }' $T/trace
	# (A change of tracer empties the buffer: only after the count.)
	echo nop >$T/current_tracer
}

for K in none auto; do
	insmod /lab/vfsfast.ko enable=$K || exit 1
	sleep 1
	count /tmp/wp/a/b/c/f >/tmp/wp5
	count /tmp/wp/a/b/c/d/e/f/g/f >/tmp/wp9
	awk -v kern="$(uname -r)" -v k=$K '
		FNR == NR { a[$1] = $2; next }
		{ b[$1] = $2 }
		END {
			for (f in b) {
				d = (b[f] - a[f]) / 4
				if (d >= 0.5) {
					printf "walkprof: %s %s %-36s %5.2f %6.2f\n", kern, k, f, d, a[f]
					t += d
				}
			}
			printf "walkprof: %s %s total calls per component %.2f\n", kern, k, t
		}' /tmp/wp5 /tmp/wp9 | sort -k5,5nr
	rmmod vfsfast
done
