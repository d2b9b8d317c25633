#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Write vfsfast_targets.h, what the module needs to know of all its
# optimizations at once, from the optimization files themselves: each
# module/opt_*.c is run through the C preprocessor with the module's own
# flags and VFSFAST_GEN defined, so that its VFSFAST_FUNCS() and
# VFSFAST_OPTIMIZATION() (include/vfsfast.h) expand to marker tokens
# instead of code, with the compat probes' verdicts applied.  Nothing of
# the C is parsed here.
#
#   VFSFAST_TARGETS_ALL(X)     X(<function>) for every target this kernel
#                              builds, for tramp.S's stubs
#   vfsfast_opt_<opt>          extern, for each optimization
#   VFSFAST_OPT_LIST           &vfsfast_opt_<opt>, ... in file order
#   VFSFAST_OPT_NAMES          "a, b, ..." for the parameter docs
#   VFSFAST_FUNCTIONS_<opt>    "f1,f2": every function it takes over,
#                              built or not, for modinfo
#   VFSFAST_BUILT_INFO_<opt>   " built=no" where this kernel builds none
#                              of them, else "", for modinfo
#
# usage: gen-targets.sh OUTPUT OPT.c... -- CC [CFLAGS...]
set -eu
out=$1
shift
files=
while [ "$1" != "--" ]; do
	files="$files $1"
	shift
done
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in $files; do
	"$@" -E -P -DVFSFAST_GEN "$f" -o "$tmp/pp"
	grep -o 'vfsfast_gen_[a-z]*([A-Za-z0-9_]*' "$tmp/pp" | tr '(' ' ' \
		>>"$tmp/tokens" || :
done
awk '
	$1 == "vfsfast_gen_target" && !($2 in stub) {
		stub[$2] = 1
		targets = targets " X(" $2 ")"
	}
	$1 == "vfsfast_gen_nofuncs" { nofuncs[$2] = 1 }
	$1 == "vfsfast_gen_opt" {
		opt = $2
		list = list (list == "" ? "" : ", ") "&vfsfast_opt_" opt
		names = names (names == "" ? "" : ", ") opt
		order[++n] = opt
	}
	$1 == "vfsfast_gen_function" {
		funcs[opt] = funcs[opt] (funcs[opt] == "" ? "" : ",") $2
	}
	END {
		print "/* Generated from the optimization files: do not edit. */"
		print "#define VFSFAST_TARGETS_ALL(X)" targets
		print "#define VFSFAST_OPT_NAMES \"" names "\""
		print "#ifndef __ASSEMBLY__"
		for (i = 1; i <= n; i++)
			print "extern struct vfsfast_opt vfsfast_opt_" order[i] ";"
		print "#define VFSFAST_OPT_LIST " list
		print "#endif"
		for (i = 1; i <= n; i++) {
			print "#define VFSFAST_FUNCTIONS_" order[i] " \"" funcs[order[i]] "\""
			print "#define VFSFAST_BUILT_INFO_" order[i] \
				(order[i] in nofuncs ? " \" built=no\"" : " \"\"")
		}
	}' "$tmp/tokens" >"$tmp/out.h"
mv "$tmp/out.h" "$out"
