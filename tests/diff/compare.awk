# SPDX-License-Identifier: GPL-3.0-or-later
# tests/diff/compare.awk: compare the normalised answers (normalise.awk) of
# NSD, Knot DNS and, when given, Shoal, case by case, and print the figures.
#
# Variables: cases (the corpus lines, comments removed, one per case), nsd,
# knot, shoal (normalised files; shoal may be empty: then only NSD against
# Knot is reported), verbose (1: also list the cases where NSD and Knot
# differ), min_pct (the pass mark).
# Rule: a case agrees when Shoal's MAIN part equals NSD's or
# Knot's; where NSD and Knot agree with each other that means equal to both,
# where they differ either one is fine. Those cases are also counted
# separately. The additional section is compared the same way but counted
# on its own and does not decide pass or fail; where the rest of a case
# agrees and the additional section does not, the case is listed.
# Exit status: 0 at or above min_pct, 1 below.

function field(main, name,   parts, np, i) {
	np = split(main, parts, / \| /)
	for (i = 1; i <= np; i++)
		if (index(parts[i], name " ") == 1)
			return parts[i]
	return ""
}

# differs A B: the names of the parts of MAIN that differ, for the classes.
function differs(a, b,   names, nn, i, out) {
	if (a == "NOANSWER" || b == "NOANSWER")
		return "noanswer"
	nn = split("opcode rcode flags qd edns q an au", names, " ")
	out = ""
	for (i = 1; i <= nn; i++)
		if (field(a, names[i]) != field(b, names[i]))
			out = out (out == "" ? "" : "+") names[i]
	return out == "" ? "?" : out
}

function show(label, main, add,   parts, np, i) {
	np = split(main, parts, / \| /)
	printf "    %-6s", label
	for (i = 1; i <= np; i++)
		printf "%s%s\n", (i > 1 ? "           " : ""), parts[i]
	printf "           %s\n", add
}

# brief SHOAL NSD KNOT: only the parts where Shoal differs from NSD, each
# as Shoal, NSD and (when it differs from NSD) Knot have it.
function brief(s, n, k,   names, nn, i, f) {
	if (s == "NOANSWER" || n == "NOANSWER" || k == "NOANSWER") {
		printf "    shoal  %s\n    nsd    %s\n    knot   %s\n", s, n, k
		return
	}
	nn = split("opcode rcode flags qd edns q an au", names, " ")
	for (i = 1; i <= nn; i++) {
		f = field(s, names[i])
		if (f == field(n, names[i]))
			continue
		printf "    shoal  %s\n    nsd    %s\n", f, field(n, names[i])
		if (field(k, names[i]) != field(n, names[i]))
			printf "    knot   %s\n", field(k, names[i])
	}
}

# instep ECHOED CASE: dig echoed this case's query ("?": a transfer that
# could not connect, whose query dig does not echo).
function instep(echoed, c) {
	return echoed == c || echoed == "?"
}

function readnorm(file, idx,   line, f) {
	if ((getline line < file) <= 0)
		return 0
	split(line, f, "\t")
	cur_main[idx] = f[2]
	cur_add[idx] = f[3]
	cur_cmd[idx] = f[4]
	return 1
}

BEGIN {
	have_shoal = (shoal != "")
	total = 0; agree = 0; nk_same = 0; nk_diff = 0; diff_agree = 0
	ad_total = 0; ad_agree = 0; nk_ad_same = 0
	while ((getline c < cases) > 0) {
		total++
		if (!readnorm(nsd, "n") || !readnorm(knot, "k") || (have_shoal && !readnorm(shoal, "s"))) {
			print "diff: the servers' outputs have fewer cases than the corpus (" total ")"
			exit 2
		}
		# dig prints a header per case, answered or not; a missing one
		# would shift every later case, so check each server kept step.
		cc = c; gsub(/[ \t]+/, " ", cc)
		if (!instep(cur_cmd["n"], cc) || !instep(cur_cmd["k"], cc) || (have_shoal && !instep(cur_cmd["s"], cc))) {
			printf "diff: dig output out of step with the corpus at case %d (%s)\n", total, c
			exit 2
		}
		nm = cur_main["n"]; km = cur_main["k"]
		na = cur_add["n"]; ka = cur_add["k"]
		same = (nm == km)
		if (same) nk_same++; else { nk_diff++; nkclass[differs(nm, km)]++ }
		if (na == ka) nk_ad_same++
		if (!same && (verbose || !have_shoal)) {
			printf "NSD/Knot differ, case %d: %s [%s]\n", total, c, differs(nm, km)
			if (verbose) { show("nsd", nm, na); show("knot", km, ka) }
		}
		if (!have_shoal)
			continue
		sm = cur_main["s"]; sa = cur_add["s"]
		if (sm == nm || sm == km) {
			agree++
			if (!same) diff_agree++
		} else {
			cls = differs(sm, nm)
			sclass[cls]++
			printf "DISAGREE case %d: %s [%s]\n", total, c, cls
			if (verbose) {
				show("shoal", sm, sa)
				show("nsd", nm, na)
				if (!same) show("knot", km, ka)
			} else
				brief(sm, nm, km)
		}
		ad_total++
		if (sa == na || sa == ka)
			ad_agree++
		else if (sm == nm || sm == km) {
			# Listed only where the rest agrees: otherwise it says nothing new.
			printf "ADDITIONAL differs, case %d: %s\n    shoal  %s\n    nsd    %s\n", total, c, sa, na
			if (ka != na)
				printf "    knot   %s\n", ka
		}
	}
	if (total == 0) {
		print "diff: no cases"
		exit 2
	}
	printf "NSD and Knot agree on %d of %d (%.1f%%); additional section alike in %d\n", \
		nk_same, total, 100 * nk_same / total, nk_ad_same
	for (k in nkclass)
		printf "  NSD/Knot differ in %s: %d\n", k, nkclass[k]
	if (!have_shoal)
		exit 0
	for (k in sclass)
		printf "  Shoal differs in %s: %d\n", k, sclass[k]
	pct = 100 * agree / total
	printf "agree %d of %d (%.1f%%), of which %d where NSD and Knot differ\n", agree, total, pct, diff_agree
	printf "additional section agrees %d of %d (%.1f%%, not counted in pass/fail)\n", \
		ad_agree, ad_total, 100 * ad_agree / ad_total
	printf "diff: %d passed, %d failed\n", agree, total - agree
	exit (pct >= min_pct ? 0 : 1)
}
