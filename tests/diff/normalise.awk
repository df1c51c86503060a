# SPDX-License-Identifier: GPL-3.0-or-later
# tests/diff/normalise.awk: turn the output of one `dig -f BATCH` run into
# one line per case, in batch order, so answers of different servers can be
# compared with a string comparison.
#
# Output line: CASE <TAB> MAIN <TAB> ADDITIONAL <TAB> QUERY, where
#   MAIN = opcode, rcode, flags (qr aa tc rd ra ad cd, as dig prints them),
#          QDCOUNT, EDNS (present or not, version, DO; the UDP size and the
#          options such as NSID, cookies and EDE are not compared: each server
#          advertises its own), the question exactly as received (0x20 case
#          kept: RFC 1035 7.3 wants it back byte for byte),
#          then the answer and authority sections as sorted record sets;
#   ADDITIONAL = the additional section, sorted (compared separately).
# Records are "owner ttl class type rdata" with single spaces; the owner is
# lowercased, and so is the rdata of the types whose rdata is mostly domain
# names (NS CNAME DNAME PTR MX SOA SRV ... NSEC): servers copy the query's
# case into compressed names differently. Other rdata is kept as dig prints
# it (base64 in RRSIG and DNSKEY is case-sensitive; text in TXT is data).
# Fields inside MAIN are joined with " | ".
# QUERY = the batch line as dig echoes it, so compare.awk can check that
# the output is in step with the corpus.
# A case without an answer is "NOANSWER" (timeout, no server), a refused
# zone transfer "TRANSFER FAILED".
#
# mawk-compatible (Debian's default awk): no asort, no gensub.

function flush(   s) {
	if (ncase == 0)
		return
	if (transfer_failed)
		main = "TRANSFER FAILED"
	else if (status == "")
		main = "NOANSWER"
	else
		main = "opcode " opcode " | rcode " status " | flags " flags " | qd " qdcount \
			" | " edns " | q " question " | an " joined("an") " | au " joined("au")
	printf "%d\t%s\t%s\t%s\n", ncase, main, "ad " joined("ad"), cmd
}

function reset() {
	status = ""; opcode = ""; flags = ""; qdcount = ""; question = "-"
	edns = "edns none"; section = ""; transfer_failed = 0
	n["an"] = 0; n["au"] = 0; n["ad"] = 0
}

# joined SECTION: the section's records sorted (insertion sort: sections are
# small) and joined with " ; ".
function joined(sec,   i, j, k, tmp, out) {
	k = n[sec]
	for (i = 2; i <= k; i++) {
		tmp = rr[sec, i]
		for (j = i - 1; j >= 1 && rr[sec, j] > tmp; j--)
			rr[sec, j + 1] = rr[sec, j]
		rr[sec, j + 1] = tmp
	}
	out = ""
	for (i = 1; i <= k; i++)
		out = out (i > 1 ? " ; " : "") rr[sec, i]
	return k == 0 ? "-" : out
}

# record LINE: one RR line of dig output in the normal form described above.
function record(line,   f, nf, i, type, rdata) {
	nf = split(line, f, /[ \t]+/)
	type = f[4]
	# rdata is everything after the fourth field, as dig printed it.
	rdata = line
	for (i = 1; i <= 4; i++)
		sub(/^[^ \t]+[ \t]+/, "", rdata)
	if (nf < 5)
		rdata = ""
	if (type ~ /^(NS|CNAME|DNAME|PTR|MX|SOA|SRV|RP|AFSDB|KX|RT|PX|MINFO|MB|MG|MR|NSEC)$/)
		rdata = tolower(rdata)
	return tolower(f[1]) " " f[2] " " f[3] " " type " " rdata
}

BEGIN { ncase = 0; reset() }

/^; <<>> DiG / {
	flush()
	ncase++
	reset()
	# ; <<>> DiG 9.18.x <<>> NAME TYPE OPTIONS
	cmd = $0
	sub(/^; <<>> DiG [^ ]* <<>> */, "", cmd)
	gsub(/[ \t]+/, " ", cmd)
	next
}

/^;; ->>HEADER<<-/ {
	# ;; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 123
	line = $0
	sub(/.*opcode: /, "", line); opcode = line; sub(/,.*/, "", opcode)
	line = $0
	sub(/.*status: /, "", line); status = line; sub(/,.*/, "", status)
	next
}

/^;; flags:/ {
	# ;; flags: qr aa; QUERY: 1, ANSWER: 1, AUTHORITY: 0, ADDITIONAL: 1
	line = $0
	sub(/^;; flags: */, "", line)
	flags = line; sub(/;.*/, "", flags)
	if (flags == "") flags = "-"
	# The Z bit (RFC 1035 4.1.1: zero in all queries and responses).
	if (line ~ /MBZ: /) {
		mbz = line; sub(/.*MBZ: /, "", mbz); sub(/[;,].*/, "", mbz)
		flags = flags " mbz " mbz
	}
	qdcount = line; sub(/.*QUERY: /, "", qdcount); sub(/,.*/, "", qdcount)
	next
}

/^; EDNS: version:/ {
	# ; EDNS: version: 0, flags: do; udp: 1232  (the size is not compared)
	line = $0
	sub(/^; EDNS: version: /, "", line)
	v = line; sub(/,.*/, "", v)
	ef = line; sub(/^[^,]*, flags:/, "", ef); sub(/;.*/, "", ef)
	gsub(/^ +| +$/, "", ef)
	edns = "edns v" v " flags " (ef == "" ? "-" : ef)
	# Unknown EDNS flags (RFC 6891 6.1.4: zero when sent) are compared.
	if (line ~ /MBZ: /) {
		mbz = line; sub(/.*MBZ: /, "", mbz); sub(/[,;].*/, "", mbz)
		edns = edns " mbz " mbz
	}
	next
}

# A zone transfer that cannot connect prints no header, only this line: it
# starts a case of its own, whose query is unknown ("?").
/^;; Connection to .* failed/ {
	flush()
	ncase++
	reset()
	cmd = "?"
	next
}

# dig's word for a refused or failed AXFR/IXFR (it shows no rcode).
/^; Transfer failed\./ { transfer_failed = 1; next }

/^;; QUESTION SECTION:/ { section = "q"; next }
/^;; ANSWER SECTION:/ { section = "an"; next }
/^;; AUTHORITY SECTION:/ { section = "au"; next }
/^;; ADDITIONAL SECTION:/ { section = "ad"; next }
/^;; OPT PSEUDOSECTION:/ { section = "opt"; next }
/^$/ { section = ""; next }

section == "q" && /^;/ {
	line = substr($0, 2)
	gsub(/[ \t]+/, " ", line)
	question = (question == "-" ? "" : question " ; ") line
	next
}

(section == "an" || section == "au" || section == "ad") && !/^;/ {
	rr[section, ++n[section]] = record($0)
	next
}

END { flush() }
