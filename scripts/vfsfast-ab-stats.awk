# SPDX-License-Identifier: GPL-2.0
#
# vfsfast-ab-stats.awk: the statistics of vfsfast-ab, in portable awk
# (POSIX awk, mawk, gawk and busybox awk built without math support: no
# exp/log/sqrt/^ is used; they are computed here).
#
# The one statistics implementation of the project: vfsfast-ab's reports
# and the lab's `vfsfast-lab bench` tables (which run vfsfast-ab in the
# guest and only format what this computes: medians, spreads, ratios,
# intervals, p-values, and the share of upstream's saving recovered on
# the legacy kernel) both come from here.  Why awk, not Python: vfsfast-ab
# runs on users' hosts and in the lab's busybox guests, where there is no
# Python, and one implementation has to run in both places
# (Documentation/ab-methodology.md, "One implementation").
#
# usage: awk -f vfsfast-ab-stats.awk [-v VAR=VALUE ...] raw.csv
#        awk -f vfsfast-ab-stats.awk -v recovery=1 rounds.csv
#
# raw.csv, one line per measured run, with a header line:
#   run,pair,kind,slot,arm,metric,value
#   run    1, 2, ... in the order the runs happened
#   pair   pair number; kind AB (knob off vs on) or AA (off vs off)
#   slot   1 or 2: the position of the run inside its pair
#   arm    off|on|passthrough for AB pairs (each B arm against off: on/off,
#          passthrough/off), a|b for AA pairs (ratio b/a)
#   metric name of the metric (ns_per_op, runtime_s, instructions_per_op...)
#   value  the number
#
# Variables (-v):
#   alpha=0.05      significance level for the marker
#   effect=1        effect size in percent the "pairs needed" advice is for
#   out=DIR         also write DIR/summary.json, DIR/table.txt,
#                   DIR/chart.txt and DIR/chart.svg
#   width=48        text chart width
#   title, opts, workload, seed, extra   copied into summary.json
#   better=lower    lower|higher: which direction of a metric is a gain
#                   (for the words only; metrics named *per_sec*, *ops_s*,
#                   *throughput* are higher-is-better whatever this says)
#
# Per arm, median and spread = (max - min) / median over the pairs, in
# percent (summary.json: off_spread_pct, on_spread_pct; and diff_median =
# on median - off median).
#
# recovery=1: input lines "side,backend,workload,value", side legacy_off,
# legacy_on or ref_off (the rounds of the legacy kernel with the knobs off
# and on, and of legacy-ref, the same build without the revert, off).
# Prints one tab-separated line per (backend, workload) that has all
# three: backend, workload, legacy off median, legacy on median,
# legacy-ref off median, upstream saving (legacy off - legacy-ref off),
# knob saving (legacy off - legacy on), recovered percent (knob saving /
# upstream saving * 100, or "-") and why there is none ("-" when there
# is): where upstream saves under 0.5% of legacy off, or no more than
# either kernel's off rounds spread over (max - min), the ratio of two
# numbers within the noise would mean nothing.
#
# Per pair the ratio on/off (AA: b/a) is taken; the report gives the
# geometric mean of the ratios with a t-based 95% interval on the log
# ratios, and a two-sided Wilcoxon signed-rank p-value on the log ratios
# (zeros dropped, Wilcoxon's method; exact distribution, ties included,
# for up to 40 non-zero pairs, else the normal approximation with tie
# correction and continuity correction).  Marker: "=" when every pair is
# exactly equal (p is "-": there is nothing to test), "*" when p < alpha,
# "~" otherwise.

function fabs(x) { return x < 0 ? -x : x }

function ln(x,    k, m, y, y2, s, t, j) {
	if (x <= 0)
		return "nan"
	k = 0
	while (x >= 2) { x /= 2; k++ }
	while (x < 1) { x *= 2; k-- }
	y = (x - 1) / (x + 1)
	y2 = y * y
	s = 0
	t = y
	for (j = 1; j < 80; j += 2) {
		s += t / j
		t *= y2
		if (t < 1e-30)
			break
	}
	return 2 * s + k * LN2
}

function ex(x,    k, r, s, t, j) {
	if (x > 700)
		x = 700
	if (x < -700)
		return 0
	k = int(x / LN2 + (x < 0 ? -0.5 : 0.5))
	r = x - k * LN2
	s = 1
	t = 1
	for (j = 1; j < 40; j++) {
		t = t * r / j
		s += t
		if (fabs(t) < 1e-30)
			break
	}
	while (k > 0) { s *= 2; k-- }
	while (k < 0) { s /= 2; k++ }
	return s
}

function sq(x,    g, j) {
	if (x <= 0)
		return 0
	g = ex(0.5 * ln(x))
	for (j = 0; j < 4; j++)
		g = 0.5 * (g + x / g)
	return g
}

function ceil(x) { return x == int(x) ? x : (x > 0 ? int(x) + 1 : int(x)) }

# Upper tail of the standard normal, Q(z) = 1 - Phi(z), z >= 0
# (Abramowitz and Stegun 26.2.17, error < 7.5e-8).
function qnorm_upper(z,    t, poly) {
	if (z < 0)
		return 1 - qnorm_upper(-z)
	t = 1 / (1 + 0.2316419 * z)
	poly = t * (0.319381530 + t * (-0.356563782 + t * (1.781477937 + \
	       t * (-1.821255978 + t * 1.330274429))))
	return ex(-z * z / 2) / 2.5066282746310002 * poly
}

# Two-sided 95% quantile of Student's t; between table rows the smaller
# df is used (a slightly wider, conservative interval).
function t975(df,    d) {
	if (df < 1)
		return "nan"
	if (df <= 30)
		return TQ[df]
	if (df < 40) return TQ[30]
	if (df < 60) return 2.021
	if (df < 120) return 2.000
	return 1.980
}

function init_tables() {
	split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 " \
	      "2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 " \
	      "2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", TQ, " ")
}

# sort a[1..n] ascending (insertion sort: n is small).
function sort_num(a, n,    i, j, v) {
	for (i = 2; i <= n; i++) {
		v = a[i]
		for (j = i - 1; j >= 1 && a[j] > v; j--)
			a[j + 1] = a[j]
		a[j + 1] = v
	}
}

function median(a, n,    b, i) {
	for (i = 1; i <= n; i++)
		b[i] = a[i]
	sort_num(b, n)
	if (n % 2)
		return b[(n + 1) / 2]
	return (b[n / 2] + b[n / 2 + 1]) / 2
}

function mean(a, n,    i, s) {
	s = 0
	for (i = 1; i <= n; i++)
		s += a[i]
	return n ? s / n : 0
}

function sdev(a, n,    i, m, s) {
	if (n < 2)
		return 0
	m = mean(a, n)
	s = 0
	for (i = 1; i <= n; i++)
		s += (a[i] - m) * (a[i] - m)
	return sq(s / (n - 1))
}

# Two-sided Wilcoxon signed-rank p-value for d[1..n] against 0.
# Sets W_PLUS, W_N (non-zero count), W_METHOD ("exact"|"normal"|"none").
function wilcoxon(d, n,    i, j, k, m, ab, idx, rk, r2, tot, cnt, smax, s, w, plo, phi, \
		  tie, mu, var, z, cc, v) {
	m = 0
	for (i = 1; i <= n; i++)
		if (d[i] != 0) {
			m++
			ab[m] = fabs(d[i])
			idx[m] = i
		}
	W_N = m
	W_PLUS = 0
	if (m == 0) {
		W_METHOD = "none"
		return 1
	}
	# ranks of |d| with midranks for ties
	for (i = 1; i <= m; i++) {
		k = 0
		j = 0
		for (s = 1; s <= m; s++) {
			if (ab[s] < ab[i]) k++
			else if (ab[s] == ab[i]) j++
		}
		r2[i] = 2 * k + j + 1		# twice the midrank: an integer
	}
	w = 0
	for (i = 1; i <= m; i++)
		if (d[idx[i]] > 0)
			w += r2[i]
	W_PLUS = w / 2
	if (m <= 40) {
		W_METHOD = "exact"
		smax = m * (m + 1)
		for (s = 0; s <= smax; s++)
			cnt[s] = 0
		cnt[0] = 1
		for (i = 1; i <= m; i++)
			for (s = smax; s >= r2[i]; s--)
				cnt[s] += cnt[s - r2[i]]
		tot = 0
		plo = 0
		phi = 0
		for (s = 0; s <= smax; s++) {
			tot += cnt[s]
			if (s <= w) plo += cnt[s]
			if (s >= w) phi += cnt[s]
		}
		v = 2 * (plo < phi ? plo : phi) / tot
		return v > 1 ? 1 : v
	}
	W_METHOD = "normal"
	tie = 0
	for (i = 1; i <= m; i++) {
		j = 0
		for (s = 1; s <= m; s++)
			if (ab[s] == ab[i]) j++
		tie += (j * j * j - j) / j	# each tie group counted once overall
	}
	mu = m * (m + 1) / 4
	var = m * (m + 1) * (2 * m + 1) / 24 - tie / 48
	if (var <= 0)
		return 1
	cc = W_PLUS > mu ? 0.5 : (W_PLUS < mu ? -0.5 : 0)
	z = (W_PLUS - mu - cc) / sq(var)
	v = 2 * qnorm_upper(fabs(z))
	return v > 1 ? 1 : v
}

function fmtv(x,    a) {
	if (x == "" || x == "nan")
		return "-"
	a = fabs(x)
	if (a >= 100000) return sprintf("%.0f", x)
	if (a >= 1000) return sprintf("%.1f", x)
	if (a >= 10) return sprintf("%.2f", x)
	return sprintf("%.4g", x)
}

function fmtp(p) {
	if (p == "-") return "-"
	if (p < 0.0001) return sprintf("%.1e", p)
	return sprintf("%.4f", p)
}

function jstr(s) {
	gsub(/\\/, "\\\\", s)
	gsub(/"/, "\\\"", s)
	gsub(/\t/, " ", s)
	return "\"" s "\""
}

function jnum(x) {
	if (x == "" || x == "-" || x == "nan")
		return "null"
	return sprintf("%.10g", x)
}

function higher_better(m) {
	return better == "higher" || m ~ /per_sec|ops_s|throughput/
}

function amin(a, n,    i, v) { v = a[1]; for (i = 2; i <= n; i++) if (a[i] < v) v = a[i]; return v }
function amax(a, n,    i, v) { v = a[1]; for (i = 2; i <= n; i++) if (a[i] > v) v = a[i]; return v }

# (max - min) / median of a[1..n], in percent
function spread(a, n,    md) {
	md = median(a, n)
	return md ? (amax(a, n) - amin(a, n)) / md * 100 : 0
}

# Analyse one (metric, kind, arm y against arm x): fills R[key, field].
function analyse(mt, kind, xa, ya, key,    n, i, p, x, y, lr, xs, ys, m, sd, t, cv, need, eq, pv, eff) {
	n = 0
	for (p = 1; p <= maxpair; p++) {
		if (!((p, mt, xa) in V) || !((p, mt, ya) in V) || KIND[p] != kind)
			continue
		n++
		xs[n] = V[p, mt, xa]
		ys[n] = V[p, mt, ya]
	}
	R[key, "n"] = n
	if (n == 0)
		return 0
	eq = 1
	for (i = 1; i <= n; i++) {
		if (xs[i] <= 0 || ys[i] <= 0) {
			BAD = BAD sprintf("%s: value <= 0 in pair data; ratios need positive values\n", mt)
			return 0
		}
		if (xs[i] != ys[i])
			eq = 0
		lr[i] = xs[i] == ys[i] ? 0 : ln(ys[i] / xs[i])
	}
	m = mean(lr, n)
	sd = sdev(lr, n)
	R[key, "gm"] = ex(m)
	R[key, "delta"] = (ex(m) - 1) * 100
	if (n >= 2) {
		t = t975(n - 1)
		R[key, "lo"] = (ex(m - t * sd / sq(n)) - 1) * 100
		R[key, "hi"] = (ex(m + t * sd / sq(n)) - 1) * 100
		R[key, "xci"] = t * sdev(xs, n) / sq(n)
		R[key, "yci"] = t * sdev(ys, n) / sq(n)
	} else {
		R[key, "lo"] = R[key, "hi"] = R[key, "xci"] = R[key, "yci"] = "nan"
	}
	R[key, "xmed"] = median(xs, n)
	R[key, "ymed"] = median(ys, n)
	R[key, "xspread"] = spread(xs, n)
	R[key, "yspread"] = spread(ys, n)
	R[key, "cv"] = n >= 2 ? sd * 100 : "nan"
	if (eq) {
		R[key, "p"] = "-"
		R[key, "mark"] = "="
		R[key, "method"] = "none"
		R[key, "need"] = 1
	} else {
		pv = wilcoxon(lr, n)
		R[key, "p"] = pv
		R[key, "method"] = W_METHOD
		R[key, "w"] = W_PLUS
		R[key, "mark"] = pv < alpha ? "*" : "~"
		eff = effect / 100
		need = n >= 2 ? ceil(16 * (sd / eff) * (sd / eff)) : 6
		# fewer than 6 non-zero pairs can never give p < 0.05
		if (need < 6)
			need = 6
		R[key, "need"] = need
	}
	return n
}

BEGIN {
	FS = ","
	LN2 = 0.69314718055994530942
	init_tables()
	if (alpha == "") alpha = 0.05
	if (effect == "") effect = 1
	if (width == "") width = 48
	nmet = 0
	maxpair = 0
	nrun = 0
}

recovery { recovery_line(); next }
NR == 1 && $1 == "run" { next }
/^[ \t]*$/ { next }
{
	if (NF < 7 || ($3 != "AB" && $3 != "AA") || $7 !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) {
		BAD = BAD sprintf("raw line %d malformed: %s\n", NR, $0)
		next
	}
	run = $1 + 0; p = $2 + 0; kind = $3; arm = $5; mt = $6; v = $7 + 0
	if (!(mt in SEEN)) {
		SEEN[mt] = 1
		MET[++nmet] = mt
	}
	KIND[p] = kind
	if (p > maxpair) maxpair = p
	if (kind == "AB" && arm != "off" && !(arm in ARMSEEN)) {
		ARMSEEN[arm] = 1
		ARM[++narm] = arm
	}
	V[p, mt, arm] = v
	# chronological series for the charts
	k = ++NRUN[mt]
	CR[mt, k] = run; CP[mt, k] = p; CA[mt, k] = arm; CV[mt, k] = v
}

# The comparisons, in report order: each B arm against off, then A/A.
# Fills CMPK[i] (kind), CMPX[i], CMPY[i] (arms), CMPN[i] (the name in
# summary.json: on/off, passthrough/off, aa), CMPT[i] (in the table).
function comparisons(    i, a, n) {
	n = 0
	# "on" first, then the other B arms as they came
	for (i = 0; i <= narm; i++) {
		a = i == 0 ? "on" : ARM[i]
		if (i > 0 && a == "on")
			continue
		n++
		CMPK[n] = "AB"; CMPX[n] = "off"; CMPY[n] = a; CMPN[n] = a "/off"; CMPT[n] = a "/off"
	}
	n++
	CMPK[n] = "AA"; CMPX[n] = "a"; CMPY[n] = "b"; CMPN[n] = "aa"; CMPT[n] = "A/A b/a"
	return n
}

function table_line(mt, cmp, key,    s) {
	s = sprintf("%-22s %-8s %20s %20s %28s %9s %5d  %s", mt, cmp,
		    fmtv(R[key, "xmed"]) " ± " fmtv(R[key, "xci"]),
		    fmtv(R[key, "ymed"]) " ± " fmtv(R[key, "yci"]),
		    sprintf("%+.2f%% [%s, %s]", R[key, "delta"],
			    R[key, "lo"] == "nan" ? "-" : sprintf("%+.2f", R[key, "lo"]),
			    R[key, "hi"] == "nan" ? "-" : sprintf("%+.2f", R[key, "hi"])),
		    fmtp(R[key, "p"]), R[key, "n"], R[key, "mark"])
	return s
}

function emit(s) {
	print s
	if (out != "")
		print s > (out "/table.txt")
}

function emit_chart(s) {
	print s
	if (out != "")
		print s > (out "/chart.txt")
}

# The text chart, one line per pair: "pair  N KK |   o    x   | v1 v2".
function text_chart2(mt,    k, lo, hi, i, pos, sym, p, span, c, row, pv, s) {
	lo = hi = CV[mt, 1]
	for (k = 1; k <= NRUN[mt]; k++) {
		if (CV[mt, k] < lo) lo = CV[mt, k]
		if (CV[mt, k] > hi) hi = CV[mt, k]
	}
	span = hi - lo
	emit_chart(sprintf("%s per run, pairs in run order (o = off, x = on%s; A/A pairs: a, b; " \
			   "# = both)%s", mt, (narm > 1 || (narm == 1 && ARM[1] != "on") ? ", p = passthrough" : ""), (higher_better(mt) ? "; higher is better" : "; lower is better")))
	s = sprintf("%14s%s", "", fmtv(lo))
	while (length(s) < 14 + width - length(fmtv(hi)))
		s = s " "
	emit_chart(s fmtv(hi))
	for (p = 1; p <= maxpair; p++) {
		row = ""
		for (i = 0; i < width; i++) row = row " "
		pv = ""
		c = 0
		for (k = 1; k <= NRUN[mt]; k++) {
			if (CP[mt, k] != p) continue
			c++
			pos = span > 0 ? int((CV[mt, k] - lo) / span * (width - 1) + 0.5) : int(width / 2)
			sym = CA[mt, k] == "off" ? "o" : CA[mt, k] == "on" ? "x" : substr(CA[mt, k], 1, 1)
			if (substr(row, pos + 1, 1) != " ") sym = "#"
			row = substr(row, 1, pos) sym substr(row, pos + 2)
			pv = pv sprintf(" %s=%s", CA[mt, k], fmtv(CV[mt, k]))
		}
		if (c)
			emit_chart(sprintf("pair %3d %-2s |%s|%s", p, KIND[p], row, pv))
	}
	emit_chart("")
}

function svg_chart(mt, y0, f,    k, lo, hi, span, w, h, x, y, col, pad, n, i, tick, lab) {
	w = 720; h = 220; pad = 60
	lo = hi = CV[mt, 1]
	for (k = 1; k <= NRUN[mt]; k++) {
		if (CV[mt, k] < lo) lo = CV[mt, k]
		if (CV[mt, k] > hi) hi = CV[mt, k]
	}
	span = hi - lo
	if (span == 0) { lo -= 1; hi += 1; span = 2 }
	n = NRUN[mt]
	printf "<g transform=\"translate(0,%d)\">\n", y0 > f
	printf "<text x=\"%d\" y=\"18\" font-size=\"14\">%s per run (%s is better): " \
	       "<tspan fill=\"#1f77b4\">● off</tspan> <tspan fill=\"#d62728\">■ on</tspan> " \
	       "<tspan fill=\"#7f7f7f\">◆ A/A</tspan></text>\n", pad, mt,
	       (higher_better(mt) ? "higher" : "lower") > f
	printf "<rect x=\"%d\" y=\"30\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n",
	       pad, w - 2 * pad + 20, h - 60 > f
	for (i = 0; i <= 4; i++) {
		tick = lo + span * i / 4
		y = 30 + (h - 60) - (h - 60) * i / 4
		printf "<text x=\"%d\" y=\"%.1f\" font-size=\"10\" text-anchor=\"end\">%s</text>\n",
		       pad - 4, y + 3, fmtv(tick) > f
		printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>\n",
		       pad, w - pad + 20, y, y > f
	}
	for (k = 1; k <= n; k++) {
		x = pad + 10 + (n > 1 ? (w - 2 * pad) * (k - 1) / (n - 1) : 0)
		y = 30 + (h - 60) - (h - 60) * (CV[mt, k] - lo) / span
		if (k > 1 && CP[mt, k] == CP[mt, k - 1])
			printf "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#bbb\"/>\n",
			       PX, x, PY, y > f
		if (CA[mt, k] == "off")
			printf "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#1f77b4\"/>\n", x, y > f
		else if (CA[mt, k] == "on")
			printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"#d62728\"/>\n",
			       x - 4, y - 4 > f
		else if (CA[mt, k] == "passthrough")
			printf "<rect x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" fill=\"#2ca02c\"/>\n",
			       x - 4, y - 4 > f
		else
			printf "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#7f7f7f\"/>\n",
			       x, y - 5, x + 5, y, x, y + 5, x - 5, y > f
		PX = x; PY = y
	}
	printf "<text x=\"%d\" y=\"%d\" font-size=\"10\">run 1 .. %d, in the order they ran (lines join the two runs of a pair)</text>\n",
	       pad, h - 12, n > f
	print "</g>" > f
}

# ---- recovery=1: the share of upstream's saving won back on legacy ----------

function recovery_line(    b, w) {
	if (NR == 1 && $1 == "side") return
	if ($0 ~ /^[ \t]*$/) return
	if (NF != 4 || ($1 != "legacy_off" && $1 != "legacy_on" && $1 != "ref_off") ||
	    $4 !~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) {
		BAD = BAD sprintf("recovery line %d malformed: %s\n", NR, $0)
		return
	}
	b = $2; w = $3
	if (!((b, w) in RKEY)) {
		RKEY[b, w] = 1
		RB[++nrk] = b; RW[nrk] = w
	}
	k = ++RN[$1, b, w]
	RV[$1, b, w, k] = $4 + 0
}

# median and (max - min) of side s's rounds of (b, w): RMED, RRANGE
function rounds_of(s, b, w,    a, n, i) {
	n = RN[s, b, w]
	for (i = 1; i <= n; i++)
		a[i] = RV[s, b, w, i]
	RMED = median(a, n)
	RRANGE = amax(a, n) - amin(a, n)
}

function recovery_end(    i, b, w, l_off, l_on, r_off, up, knob, noise, pct, why) {
	for (i = 1; i <= nrk; i++) {
		b = RB[i]; w = RW[i]
		if (!RN["legacy_off", b, w] || !RN["legacy_on", b, w] || !RN["ref_off", b, w])
			continue
		rounds_of("legacy_off", b, w); l_off = RMED; noise = RRANGE
		rounds_of("ref_off", b, w); r_off = RMED; if (RRANGE > noise) noise = RRANGE
		rounds_of("legacy_on", b, w); l_on = RMED
		up = l_off - r_off
		knob = l_off - l_on
		pct = "-"; why = "-"
		if (up <= 0.005 * l_off)
			why = "upstream saves < 0.5%"
		else if (up <= noise)
			why = sprintf("upstream saving within the rounds' spread of %.0f", noise)
		else
			pct = sprintf("%.10g", knob / up * 100)
		printf "%s\t%s\t%.10g\t%.10g\t%.10g\t%.10g\t%.10g\t%s\t%s\n", b, w, l_off, l_on, r_off,
		       up, knob, pct, why
	}
}

END {
	if (recovery) {
		if (BAD != "") {
			printf "%s", BAD > "/dev/stderr"
			exit 2
		}
		recovery_end()
		exit 0
	}
	if (BAD != "") {
		printf "%s", BAD > "/dev/stderr"
		exit 2
	}
	if (nmet == 0) {
		print "vfsfast-ab-stats: no data" > "/dev/stderr"
		exit 2
	}
	ncmp = comparisons()
	for (i = 1; i <= nmet; i++) {
		mt = MET[i]
		for (c = 1; c <= ncmp; c++)
			analyse(mt, CMPK[c], CMPX[c], CMPY[c], mt SUBSEP CMPN[c])
	}
	if (BAD != "") {
		printf "%s", BAD > "/dev/stderr"
		exit 2
	}
	emit(sprintf("%-22s %-8s %20s %20s %28s %9s %5s  %s", "metric", "compare", "off median ±95%",
		     "on median ±95%", "delta % [95% CI]", "p", "pairs", "mark"))
	for (i = 1; i <= nmet; i++) {
		mt = MET[i]
		for (c = 1; c <= ncmp; c++)
			if (R[mt, CMPN[c], "n"] > 0)
				emit(table_line(mt, CMPT[c], mt SUBSEP CMPN[c]))
	}
	emit("")
	emit(sprintf("mark: * significant (Wilcoxon signed-rank p < %s), ~ not significant, " \
		     "= every pair exactly equal (no test)", alpha))
	for (i = 1; i <= nmet; i++) {
		mt = MET[i]
		for (c = 1; c <= ncmp; c++) {
			key = mt SUBSEP CMPN[c]
			cname = CMPK[c] == "AB" ? CMPN[c] : "A/A"
			if (R[key, "n"] == 0 || R[key, "mark"] == "=")
				continue
			if (R[key, "n"] < 2) {
				emit(sprintf("%s %s: 1 pair: no estimate of the noise", mt, cname))
				continue
			}
			s = sprintf("%s %s: noise %.3g%% per pair (sd of log ratio); a %s%% effect needs " \
				    "about %d pairs (16*(CV/effect)^2), this run has %d",
				    mt, cname, R[key, "cv"], effect, R[key, "need"], R[key, "n"])
			if (R[key, "n"] < R[key, "need"])
				s = s ": WARNING: too short to resolve a " effect "% effect"
			emit(s)
		}
		key = mt SUBSEP "on/off"
		if (R[key, "n"] > 0 && R[key, "mark"] == "*")
			emit(sprintf("%s: knob on is %s (%+.2f%%)", mt,
				     (R[key, "delta"] < 0) != higher_better(mt) ? "a GAIN" : "a LOSS",
				     R[key, "delta"]))
		key = mt SUBSEP "aa"
		if (R[key, "n"] > 0 && R[key, "mark"] == "*")
			emit(sprintf("%s: WARNING: the A/A pairs differ significantly: the " \
				     "measurement is not stable, distrust the A/B result", mt))
	}
	emit("")
	for (i = 1; i <= nmet; i++)
		text_chart2(MET[i])
	if (out != "") {
		f = out "/summary.json"
		printf "{\"tool\":\"vfsfast-ab\",\"title\":%s,\"opts\":%s,\"workload\":%s,\"seed\":%s," \
		       "\"alpha\":%s,\"effect_pct\":%s,%s\"results\":[\n", jstr(title), jstr(opts),
		       jstr(workload), jstr(seed), jnum(alpha), jnum(effect),
		       (extra == "" ? "" : extra ",") > f
		first = 1
		for (i = 1; i <= nmet; i++) {
			mt = MET[i]
			for (c = 1; c <= ncmp; c++) {
				key = mt SUBSEP CMPN[c]
				if (R[key, "n"] == 0)
					continue
				printf "%s{\"metric\":%s,\"compare\":%s,\"pairs\":%d,\"off_median\":%s," \
				       "\"off_ci95\":%s,\"on_median\":%s,\"on_ci95\":%s,\"ratio_gm\":%s," \
				       "\"delta_pct\":%s,\"delta_lo_pct\":%s,\"delta_hi_pct\":%s," \
				       "\"p\":%s,\"test\":%s,\"marker\":%s,\"noise_cv_pct\":%s," \
				       "\"pairs_needed\":%s,\"higher_is_better\":%s,\"off_spread_pct\":%s," \
				       "\"on_spread_pct\":%s,\"diff_median\":%s}", (first ? "" : ",\n"),
				       jstr(mt), jstr(CMPN[c]), R[key, "n"],
				       jnum(R[key, "xmed"]), jnum(R[key, "xci"]), jnum(R[key, "ymed"]),
				       jnum(R[key, "yci"]), jnum(R[key, "gm"]), jnum(R[key, "delta"]),
				       jnum(R[key, "lo"]), jnum(R[key, "hi"]), jnum(R[key, "p"]),
				       jstr(R[key, "method"]), jstr(R[key, "mark"]), jnum(R[key, "cv"]),
				       jnum(R[key, "need"]), (higher_better(mt) ? "true" : "false"),
				       jnum(R[key, "xspread"]), jnum(R[key, "yspread"]),
				       jnum(R[key, "ymed"] - R[key, "xmed"]) > f
				first = 0
			}
		}
		print "\n]}" > f
		f = out "/chart.svg"
		nh = 0
		for (i = 1; i <= nmet; i++) nh++
		printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"760\" height=\"%d\" " \
		       "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		       nh * 230 + 10 > f
		for (i = 1; i <= nmet; i++)
			svg_chart(MET[i], (i - 1) * 230, f)
		print "</svg>" > f
	}
}
