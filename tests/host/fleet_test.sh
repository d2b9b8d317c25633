#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# `vfsfast status` and `vfsfast metrics` on the host, with the system sh and
# with busybox sh (each with the awk it finds first: the system's, then
# busybox's), against a stand-in sysfs tree (VFSFAST_SYSFS), kernel log
# (VFSFAST_KERNEL_LOG) and /proc (VFSFAST_PROC): the table, the JSON
# against Documentation/vfsfast-status.schema.json, the metrics through
# promtool check metrics with every value the tree's, the load time, the
# module not loaded, a plain user who cannot read the counters (mode
# 0400), --output's atomic replace and its failure, and bad usage.  The
# real module, node_exporter and the units are the lab's t_fleet.  Needs
# root (to become a plain user), promtool (Debian's prometheus) and
# Debian's python3 with python3-jsonschema (scripts/lab-packages).
#
# Last line: "N passed, N failed"; exit status 1 when anything failed.

here=$(cd "$(dirname "$0")" && pwd)
VFSFAST=$here/../../scripts/vfsfast
SCHEMA=$here/../../Documentation/vfsfast-status.schema.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
# shellcheck source=shells.sh
. "$here/shells.sh"
# check NAME CONDITION...: ok when the condition command succeeds.
check() {
	name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name" "out: $(tr '\n' '|' <"$tmp/out" | cut -c1-300) err: $(tr '\n' '|' <"$tmp/err" | cut -c1-200)"; fi
}

BTIME=1800000000
# opt NAME STATUS-LINE UPSTREAM REQUESTED BACKEND HITS FALLBACKS [ERROR]
opt() {
	d=$tmp/vf/$1
	mkdir -p "$d/stats"
	printf '%s\nupstream: %s\nrequested: %s\n%s' "$2" "$3" "$4" "${8:+error: $8
}" >"$d/status"
	[ "$4" = on ] && [ "${2%%:*}" = active ] && echo 1 >"$d/enabled" || echo 0 >"$d/enabled"
	echo 0 >"$d/passthrough"
	echo "$5" >"$d/backend"
	echo "$6" >"$d/stats/hits"
	echo "$7" >"$d/stats/fallbacks"
}
fake() {
	rm -rf "$tmp/vf"
	mkdir -p "$tmp/vf" "$tmp/proc"
	echo "9.8.7 6.12.99-test-amd64" >"$tmp/vf/version"
	echo "direct ftrace" >"$tmp/vf/backends"
	opt readlink active none on direct 1234567 89
	opt kernfs "unsupported: the kernel has it upstream (kernfs_elem_dir.rev, 5.15): nothing to replace" \
		"negative dentries and per-root rwsem (kernfs_elem_dir.rev)" off none 0 0
	opt access_creds "conflict: do_faccessat: held by another ftrace user, or ftrace_enabled is 0 (direct -16, ftrace -16)" \
		none on none 7 1 -16
	opt close_sync off none off none 0 0
	opt lookup_exec off none off none 0 0
	echo "auto: off: an ftrace trip costs more than it saves a call" >>"$tmp/vf/lookup_exec/status"
	chmod -R a+rX "$tmp/vf"
	printf 'cpu  1 2 3\nbtime %s\nprocesses 9\n' $BTIME >"$tmp/proc/stat"
	printf '[    0.100000] Linux version x\n[   12.500000] vfsfast: version 9.8.7 loaded for 6.12.99\n' >"$tmp/log"
}

# run ARGS...: the command against the stand-in, output in out and err.
run() {
	VFSFAST_SYSFS=$tmp/vf VFSFAST_KERNEL_LOG=$tmp/log VFSFAST_PROC=$tmp/proc \
		$SH "$VFSFAST" "$@" >"$tmp/out" 2>"$tmp/err"
}
# as_nobody ARGS...: the same as uid 65534.
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups env VFSFAST_SYSFS=$tmp/vf \
		VFSFAST_KERNEL_LOG=$tmp/log VFSFAST_PROC=$tmp/proc $SH "$VFSFAST" "$@" \
		>"$tmp/out" 2>"$tmp/err"
}
schema_ok() {
	/usr/bin/python3 -c '
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
jsonschema.Draft202012Validator(schema).validate(json.load(sys.stdin))' "$SCHEMA" <"$tmp/out" >"$tmp/schema.err" 2>&1
}
# json_has FIELDS: the JSON (out) has exactly this object for one
# optimization, compared after parsing.
json_opt() {
	/usr/bin/python3 -c '
import json, sys
doc = json.load(open(sys.argv[1]))
want = json.loads(sys.argv[2])
got = [o for o in doc["optimizations"] if o["name"] == want["name"]]
sys.exit(0 if got == [want] else 1)' "$tmp/out" "$1"
}
promtool_ok() {
	promtool check metrics <"$tmp/out" >"$tmp/promtool.out" 2>&1
}
# series NAME{LABELS}: its value in out, or "absent".
series() {
	awk -v s="$1" 'index($0, s " ") == 1 { print $NF; f = 1 } END { if (!f) print "absent" }' "$tmp/out"
}

suite() {
	fake
	run --help
	check "--help: exit 0, documents status and metrics" \
		sh -c "[ $? = 0 ] && grep -q '^usage: vfsfast check' '$tmp/out' && grep -q '^       vfsfast status \[--json | --schema\]' '$tmp/out' && grep -q '^       vfsfast metrics \[--output FILE\]' '$tmp/out' && grep -q '^metrics The same in Prometheus' '$tmp/out'"
	run status --schema
	check "status --schema: exit 0, Documentation/vfsfast-status.schema.json byte for byte" \
		sh -c "[ $? = 0 ] && cmp -s '$tmp/out' '$SCHEMA'"
	run status --bogus
	check "status --bogus: exit 2, names the argument" \
		sh -c "[ $? = 2 ] && grep -q \"vfsfast: status: unknown argument '--bogus'\" '$tmp/err'"
	run metrics --output
	check "metrics --output without a file: exit 2" \
		sh -c "[ $? = 2 ] && grep -q 'vfsfast: --output needs a file' '$tmp/err'"

	# The table.
	run status
	rc=$?
	check "status: exit 0, version, running kernel, the release built for, backends" \
		sh -c "[ $rc = 0 ] && head -n1 '$tmp/out' | grep -q '^vfsfast 9.8.7 on $(uname -r) (built for 6.12.99-test-amd64), backends: direct ftrace$'"
	check "status: the load time, from the kernel log's load line and btime" \
		grep -q "^loaded at 1800000012.500 " "$tmp/out"
	check "status: a row per optimization: state, backend, hits, fallbacks, upstream" sh -c "
		grep -q '^readlink  *active  *direct  *1234567  *89  *none$' '$tmp/out' &&
		grep -q '^kernfs  *unsupported  *none  *0  *0  *negative dentries and per-root rwsem (kernfs_elem_dir.rev)$' '$tmp/out' &&
		grep -q '^access_creds  *conflict  *none  *7  *1  *none$' '$tmp/out' &&
		grep -q '^close_sync  *off  *none  *0  *0  *none$' '$tmp/out' &&
		grep -q '^lookup_exec  *off  *none  *0  *0  *none$' '$tmp/out'"
	check "status: the reasons under the table, stderr empty" sh -c "
		grep -q '^access_creds: conflict: do_faccessat: held by another ftrace user' '$tmp/out' &&
		grep -q '^kernfs: unsupported: the kernel has it upstream (kernfs_elem_dir.rev, 5.15): nothing to replace$' '$tmp/out' &&
		[ \$(sed 1d '$tmp/out' | grep -c ': ') = 3 ] && [ ! -s '$tmp/err' ]"
	check "status: why enable=auto leaves one off, under the table" \
		grep -qx 'lookup_exec: enable=auto leaves it off: an ftrace trip costs more than it saves a call' "$tmp/out"

	# The JSON.
	run status --json
	rc=$?
	check "status --json: exit 0, valid against vfsfast-status.schema.json" sh -c "[ $rc = 0 ]" && check \
		"status --json: the schema accepts it" schema_ok
	check "status --json: an entry with every field of the tree (active)" json_opt \
		'{"name": "readlink", "state": "active", "reason": null, "upstream": "none", "requested": "on", "error": null, "enabled": true, "passthrough": false, "backend": "direct", "hits": 1234567, "fallbacks": 89, "auto_off": null}'
	check "status --json: an entry in conflict, with its reason and error" json_opt \
		'{"name": "access_creds", "state": "conflict", "reason": "do_faccessat: held by another ftrace user, or ftrace_enabled is 0 (direct -16, ftrace -16)", "upstream": "none", "requested": "on", "error": -16, "enabled": false, "passthrough": false, "backend": "none", "hits": 7, "fallbacks": 1, "auto_off": null}'
	check "status --json: why enable=auto leaves one off (auto_off)" json_opt \
		'{"name": "lookup_exec", "state": "off", "reason": null, "upstream": "none", "requested": "off", "error": null, "enabled": false, "passthrough": false, "backend": "none", "hits": 0, "fallbacks": 0, "auto_off": "an ftrace trip costs more than it saves a call"}'
	check "status --json: the module, and nothing unreadable" /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["loaded"] and d["module"] == {"version": "9.8.7", "built_for": "6.12.99-test-amd64",
	"backends": ["direct", "ftrace"], "load_time": 1800000012.5} and d["unreadable"] == []
	and len(d["optimizations"]) == 5 else 1)' "$tmp/out"

	# The metrics.
	run metrics
	rc=$?
	check "metrics: exit 0, promtool check metrics accepts it" sh -c "[ $rc = 0 ]" && check \
		"metrics: promtool check metrics says nothing" sh -c "promtool check metrics <'$tmp/out' >'$tmp/promtool.out' 2>&1 && [ ! -s '$tmp/promtool.out' ]"
	check "metrics: loaded, info, load time" sh -c "
		[ \"\$(awk -v s='vfsfast_module_loaded' 'index(\$0, s \" \") == 1 { print \$2 }' '$tmp/out')\" = 1 ] &&
		grep -qx 'vfsfast_module_info{version=\"9.8.7\",built_for=\"6.12.99-test-amd64\",kernel=\"$(uname -r)\"} 1' '$tmp/out' &&
		grep -qx 'vfsfast_module_load_time_seconds 1800000012.500' '$tmp/out'"
	n1=$(grep -c '^vfsfast_optimization_state{.*} 1$' "$tmp/out")
	n0=$(grep -c '^vfsfast_optimization_state{.*} 0$' "$tmp/out")
	check "metrics: one state series per state and optimization, 1 for its state only" sh -c "
		[ $n1 = 5 ] && [ $n0 = 35 ] &&
		grep -qx 'vfsfast_optimization_state{optimization=\"readlink\",state=\"active\"} 1' '$tmp/out' &&
		grep -qx 'vfsfast_optimization_state{optimization=\"kernfs\",state=\"unsupported\"} 1' '$tmp/out' &&
		grep -qx 'vfsfast_optimization_state{optimization=\"access_creds\",state=\"conflict\"} 1' '$tmp/out' &&
		grep -qx 'vfsfast_optimization_state{optimization=\"close_sync\",state=\"off\"} 1' '$tmp/out'"
	check "metrics: counters with the tree's values, _total, TYPE counter" sh -c "
		[ '$(series 'vfsfast_optimization_hits_total{optimization="readlink"}')' = 1234567 ] &&
		[ '$(series 'vfsfast_optimization_fallbacks_total{optimization="readlink"}')' = 89 ] &&
		[ '$(series 'vfsfast_optimization_hits_total{optimization="access_creds"}')' = 7 ] &&
		[ \$(grep -c '^vfsfast_optimization_\(hits\|fallbacks\)_total{' '$tmp/out') = 10 ] &&
		grep -qx '# TYPE vfsfast_optimization_hits_total counter' '$tmp/out' &&
		grep -qx '# TYPE vfsfast_optimization_fallbacks_total counter' '$tmp/out'"
	check "metrics: upstream (with what the kernel has), requested, backend" sh -c "
		[ '$(series 'vfsfast_optimization_upstream{optimization="readlink",feature=""}')' = 0 ] &&
		[ '$(series 'vfsfast_optimization_upstream{optimization="kernfs",feature="negative dentries and per-root rwsem (kernfs_elem_dir.rev)"}')' = 1 ] &&
		[ '$(series 'vfsfast_optimization_requested{optimization="access_creds"}')' = 1 ] &&
		[ '$(series 'vfsfast_optimization_requested{optimization="kernfs"}')' = 0 ] &&
		[ '$(series 'vfsfast_optimization_backend_info{optimization="readlink",backend="direct"}')' = 1 ] &&
		[ \$(grep -c '^vfsfast_optimization_backend_info{' '$tmp/out') = 5 ]"

	# The load time: only while the last load line is not followed by an
	# unload; the last load's.
	printf '[   12.500000] vfsfast: version 9.8.7 loaded for x\n[   20.000000] vfsfast: unloaded\n' >"$tmp/log"
	run metrics
	check "metrics: no load time when the log's last load was unloaded" sh -c "! grep -q '^vfsfast_module_load_time_seconds' '$tmp/out'"
	printf '[   12.500000] vfsfast: version 9.8.7 loaded for x\n[   20.000000] vfsfast: unloaded\n[  300.250000] vfsfast: version 9.8.7 loaded for x\n' >"$tmp/log"
	run metrics
	check "metrics: the last load's time" grep -qx 'vfsfast_module_load_time_seconds 1800000300.250' "$tmp/out"
	# The module's own load_time file, where it has one, before the log.
	echo 1800000400 >"$tmp/vf/load_time"
	run metrics
	check "metrics: the module's load_time file before the log" grep -qx 'vfsfast_module_load_time_seconds 1800000400' "$tmp/out"
	rm "$tmp/vf/load_time"
	: >"$tmp/log"
	run status --json
	check "status --json: load_time null when the log holds no load line" sh -c "grep -q '\"load_time\": null' '$tmp/out'" &&
		check "status --json: the schema accepts a null load_time" schema_ok
	fake

	# A plain user, with the counters root-only (0400) as a review asks.
	chmod 0400 "$tmp/vf/readlink/stats/hits" "$tmp/vf/readlink/stats/fallbacks"
	as_nobody status
	rc=$?
	check "status as uid 65534, counters 0400: exit 0, '-' for them, the files named on stderr" sh -c "
		[ $rc = 0 ] && grep -q '^readlink  *active  *direct  *-  *-  *none$' '$tmp/out' &&
		grep -q '^access_creds  *conflict  *none  *7  *1  *none$' '$tmp/out' &&
		grep -q '^vfsfast: could not read 2 file(s) (the counters may be root-only: run as root):$' '$tmp/err' &&
		[ \"\$(sed -n 's/^    //p' '$tmp/err' | tr '\n' ' ')\" = '$tmp/vf/readlink/stats/hits $tmp/vf/readlink/stats/fallbacks ' ]"
	as_nobody status --json
	rc=$?
	check "status --json as uid 65534: exit 0, null counters, the files in unreadable" sh -c "[ $rc = 0 ]" && check \
		"status --json as uid 65534: the schema accepts it" schema_ok && check \
		"status --json as uid 65534: its values" /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = [o for o in d["optimizations"] if o["name"] == "readlink"][0]
sys.exit(0 if r["hits"] is None and r["fallbacks"] is None and r["state"] == "active"
	and d["unreadable"] == [sys.argv[2] + "/readlink/stats/hits", sys.argv[2] + "/readlink/stats/fallbacks"]
	else 1)' "$tmp/out" "$tmp/vf"
	as_nobody metrics
	rc=$?
	check "metrics as uid 65534: exit 0, no readlink counters, the rest, promtool accepts it" sh -c "
		[ $rc = 0 ] && [ '$(series 'vfsfast_optimization_hits_total{optimization="readlink"}')' = absent ] &&
		[ '$(series 'vfsfast_optimization_hits_total{optimization="access_creds"}')' = 7 ] &&
		grep -q 'readlink/stats/hits' '$tmp/err' && promtool check metrics <'$tmp/out' >/dev/null 2>&1"
	fake

	# --output: replaced whole, by a rename; a directory it cannot write.
	mkdir -p "$tmp/tf"
	echo "old 1" >"$tmp/tf/vfsfast.prom"
	run metrics --output "$tmp/tf/vfsfast.prom"
	rc=$?
	check "metrics --output: exit 0, the file replaced (mode 0644), nothing else in the directory" sh -c "
		[ $rc = 0 ] && ! grep -q '^old' '$tmp/tf/vfsfast.prom' &&
		grep -qx 'vfsfast_module_loaded 1' '$tmp/tf/vfsfast.prom' &&
		[ \"\$(stat -c %a '$tmp/tf/vfsfast.prom')\" = 644 ] && [ \"\$(ls -A '$tmp/tf')\" = vfsfast.prom ] &&
		[ ! -s '$tmp/out' ]"
	ino=$(stat -c %i "$tmp/tf/vfsfast.prom")
	run metrics --output "$tmp/tf/vfsfast.prom"
	check "metrics --output: a new file each time (renamed over, not rewritten in place)" \
		[ "$(stat -c %i "$tmp/tf/vfsfast.prom")" != "$ino" ]
	chmod 0555 "$tmp/tf"
	as_nobody metrics --output "$tmp/tf/vfsfast.prom"
	rc=$?
	check "metrics --output into a directory it cannot write: exit 1, said, the old file kept" sh -c "
		[ $rc = 1 ] && grep -q '^vfsfast: could not write $tmp/tf/vfsfast.prom: ' '$tmp/err' &&
		grep -qx 'vfsfast_module_loaded 1' '$tmp/tf/vfsfast.prom' && [ \"\$(ls -A '$tmp/tf')\" = vfsfast.prom ]"
	chmod 0755 "$tmp/tf"
	run metrics --output "$tmp/none/vfsfast.prom"
	check "metrics --output into a missing directory: exit 1, said" sh -c "
		[ $? = 1 ] && grep -q '^vfsfast: could not write $tmp/none/vfsfast.prom: ' '$tmp/err'"

	# The module not loaded.
	rm -rf "$tmp/vf"
	run status
	rc=$?
	check "status, module not loaded: exit 1, says the kernel runs stock" sh -c "
		[ $rc = 1 ] && [ ! -s '$tmp/out' ] &&
		grep -qx 'vfsfast: not loaded: the kernel ($(uname -r)) runs stock.' '$tmp/err'"
	run status --json
	rc=$?
	check "status --json, module not loaded: exit 1, loaded false" sh -c "[ $rc = 1 ]" && check \
		"status --json, module not loaded: the schema accepts it" schema_ok && check \
		"status --json, module not loaded: no module, no optimization" /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["loaded"] is False and d["module"] is None and d["optimizations"] == [] else 1)' "$tmp/out"
	run metrics
	rc=$?
	check "metrics, module not loaded: exit 0, vfsfast_module_loaded 0 and no other series, promtool accepts it" sh -c "
		[ $rc = 0 ] && [ \"\$(grep -v '^#' '$tmp/out')\" = 'vfsfast_module_loaded 0' ] &&
		promtool check metrics <'$tmp/out' >/dev/null 2>&1"
}

if [ "$(id -u)" != 0 ]; then
	echo "fleet_test: needs root (to run as a plain user too)"
	echo "0 passed, 1 failed"
	exit 1
fi
missing=
command -v promtool >/dev/null 2>&1 || missing="$missing prometheus (promtool)"
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null || missing="$missing python3-jsonschema"
command -v setpriv >/dev/null 2>&1 || missing="$missing util-linux (setpriv)"
if [ -n "$missing" ]; then
	echo "fleet_test: missing:$missing (scripts/lab-packages)"
	echo "0 passed, 1 failed"
	exit 1
fi
each_shell suite
