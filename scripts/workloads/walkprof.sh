# Where a path walk's instructions go, per function: a guest script for
#
#   scripts/vfsfast-lab run --icount --kernels "6.12 7.2" scripts/workloads/walkprof.sh
#
# With -icount shift=0 a guest nanosecond is one instruction, so the
# function_graph tracer's durations count instructions.  Each function's
# figure is inclusive (its callees' counted in) and includes the tracer's
# own cost for every traced call inside it: the same on every kernel, so
# the rows compare across kernels, not with the bench's figures.  What
# it profiles: lstat() of a 5-component tmpfs path (/tmp/wp/a/b/c/f) and
# of a 9-component one, 200 calls each after 200 unprofiled ones; the
# knobs given in WALKPROF_KNOBS (default: every optimization the module
# enables by default, so the walk of the product as it ships) are on.
# Output: one "walkprof:" line per function and path, calls per lstat()
# and instructions per call, for the functions the walk calls at depth 2
# to 4 below the system call.

K=${WALKPROF_KNOBS:-auto}
insmod /lab/vfsfast.ko enable=$K 2>/dev/null || echo "walkprof: module not loaded: stock"
T=/sys/kernel/tracing
mkdir -p /tmp/wp/a/b/c/d/e/f/g && : >/tmp/wp/a/b/c/f && : >/tmp/wp/a/b/c/d/e/f/g/f
sys=__x64_sys_newlstat
grep -q " $sys\$" /proc/kallsyms || { echo "walkprof: no $sys"; exit 1; }
sleep 2

prof() { # label path
	/lab/bin/abloop lstat 200 "$2" >/dev/null
	echo 0 >$T/tracing_on
	echo function_graph >$T/current_tracer
	echo $sys >$T/set_graph_function
	echo 5 >$T/max_graph_depth
	echo 1 >$T/options/funcgraph-tail 2>/dev/null
	echo >$T/trace
	echo 1 >$T/tracing_on
	/lab/bin/abloop lstat 200 "$2" >/dev/null
	echo 0 >$T/tracing_on
	# Lines: " 0)   1.234 us    |      } /* name */" or "...|   name();"
	awk -v label="$1" -v kern="$(uname -r)" '
		/\|/ {
			split($0, half, "|")
			body = half[2]
			if (match(half[1], /[0-9.]+ us/) == 0)
				next
			us = substr(half[1], RSTART, RLENGTH - 3)
			depth = (match(body, /[^ ]/) - 3) / 2
			name = body
			if (body ~ /\/\*/) {
				sub(/.*\/\* /, "", name)
				sub(/ \*\/.*/, "", name)
			} else {
				sub(/^ */, "", name)
				sub(/\(\);.*/, "", name)
			}
			if (name == "__x64_sys_newlstat")
				calls++
			key = depth " " name
			n[key]++
			t[key] += us * 1000
		}
		END {
			for (k in n) {
				split(k, p, " ")
				if (p[1] < 1 || p[1] > 3 || !calls)
					continue
				printf "walkprof: %s %s depth %d %-32s calls/lstat %5.2f instr/call %7.0f\n",
				       kern, label, p[1] + 1, p[2], n[k] / calls, t[k] / n[k]
			}
			printf "walkprof: %s %s lstat calls %d\n", kern, label, calls
		}' $T/trace | sort -k5,5n -k6
	echo nop >$T/current_tracer
	echo >$T/set_graph_function
}

prof lstat-5 /tmp/wp/a/b/c/f
prof lstat-9 /tmp/wp/a/b/c/d/e/f/g/f
