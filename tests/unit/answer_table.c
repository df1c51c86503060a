/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Cases of zone/answer.c as rows of a text table (the format is described
 * at the head of tests/unit/test_zone_answer.txt): reading the rows, asking
 * each with a query built by ldns, and checking its answer, parsed by ldns,
 * field by field, each check a CUnit assertion at the row's line.
 */
#include "config.h"

/* before ldns, whose common.h would otherwise make bool a signed char */
#include <stdbool.h>

#include <CUnit/CUnit.h>
#include <ctype.h>
#include <ldns/ldns.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/wire.h"
#include "tests/unit/answer_table.h"
#include "zone/answer.h"

#define TABLE_MAX    (256 * 1024) /* octets: the table is read whole */
#define ROWS_MAX     256
#define PATTERNS_MAX 512
#define COUNTS_MAX   6
#define QUERY_ID     0x4242

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* What a row may name: header flags, sections (answer, authority, additional). */
static const char *const flag_names[] = { "qr", "aa", "tc", "rd", "ra", "ad", "cd" };
static const uint16_t flag_bits[] = { DNS_FLAG_QR, DNS_FLAG_AA, DNS_FLAG_TC, DNS_FLAG_RD,
				      DNS_FLAG_RA, DNS_FLAG_AD, DNS_FLAG_CD };
static const char *const section_names[] = { "an", "ns", "ar" };

static const uint8_t nsid_value[] = ANSWER_TABLE_NSID;

/* The index of the first len octets of tok among names (all of tok when len is 0), or -1. */
static int lookup(const char *const *names, size_t n, const char *tok, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (len ? strncmp(tok, names[i], len) == 0 && !names[i][len]
			: strcmp(tok, names[i]) == 0)
			return (int)i;
	return -1;
}

static ldns_rr_list *section(const ldns_pkt *p, int s)
{
	return s == 0   ? ldns_pkt_answer(p)
	       : s == 1 ? ldns_pkt_authority(p)
			: ldns_pkt_additional(p);
}

/* A record the answer must (or, absent, must not) have in a section. */
typedef struct pattern {
	int section;
	bool absent;
	const char *text;
} pattern_t;

/* A bound on a section's count: an=2, ar<18. */
typedef struct count {
	int section;
	char op; /* '=', '<' or '>' */
	unsigned n;
} count_t;

/* One case: the query to ask and what its answer must be. */
typedef struct row {
	const char *file;
	int line;
	/* the query */
	const char *name;
	uint16_t qtype, qclass;
	uint8_t opcode;
	bool edns, do_bit, nsid, tcp;
	uint16_t bufsize;
	uint8_t version;
	const zonedb_t *db;
	/* the answer */
	int rcode; /* extended rcodes included */
	uint16_t flags;
	count_t counts[COUNTS_MAX];
	size_t n_counts;
	uint16_t opt_size; /* 0: no OPT */
	bool opt_do, opt_nsid;
	size_t len; /* 0: any */
	size_t first_pattern, n_patterns;
} row_t;

/* The rows of one [group]: one unit case. */
typedef struct group {
	const char *name;
	size_t first_row, n_rows;
} group_t;

static const char *table_name; /* as messages name it */
static char *table_text;       /* the table, its lines cut in place */
static const answer_zones_t *zone_sets;
static size_t n_zone_sets;
static row_t rows[ROWS_MAX];
static size_t n_rows;
static pattern_t patterns[PATTERNS_MAX];
static size_t n_patterns;
static group_t groups[ANSWER_TABLE_GROUPS_MAX];
static size_t n_groups;

/* ---- reading the table ---- */

/* Say what is wrong at file:line; returns -1. */
static int table_error(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s:%d: ", file, line);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return -1;
}

/* A token "PREFIXN" with N a decimal number up to max; false when tok is not one. */
static bool number_token(const char *tok, const char *prefix, unsigned long max, unsigned *n)
{
	size_t plen = strlen(prefix);
	if (strncmp(tok, prefix, plen) != 0 || !isdigit((unsigned char)tok[plen]))
		return false;
	char *end;
	unsigned long v = strtoul(tok + plen, &end, 10);
	*n = (unsigned)v;
	return !*end && v <= max;
}

/* The index of the zone set called tok, or -1. */
static int zone_set(const char *tok)
{
	for (size_t i = 0; i < n_zone_sets; i++)
		if (strcmp(tok, zone_sets[i].name) == 0)
			return (int)i;
	return -1;
}

/* NAME TYPE [-c CLASS] [+OPTION...] [@ZONES], as the table's head describes. */
static int parse_query(row_t *r, char *text)
{
	char *save = NULL, *tok;
	ldns_rdf *dname = NULL;
	r->name = strtok_r(text, " \t", &save);
	tok = strtok_r(NULL, " \t", &save);
	if (!tok || ldns_str2rdf_dname(&dname, r->name) != LDNS_STATUS_OK ||
	    !(r->qtype = (uint16_t)ldns_get_rr_type_by_name(tok)))
		return table_error(r->file, r->line, "a query starts with a name and a type");
	ldns_rdf_deep_free(dname);
	r->qclass = DNS_CLASS_IN;
	r->db = zone_sets[0].db;
	unsigned v;
	int i;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		ldns_lookup_table *op = strncmp(tok, "+opcode=", 8) == 0
						? ldns_lookup_by_name(ldns_opcodes, tok + 8)
						: NULL;
		if (strcmp(tok, "-c") == 0) {
			tok = strtok_r(NULL, " \t", &save);
			if (!tok || !(r->qclass = (uint16_t)ldns_get_rr_class_by_name(tok)))
				return table_error(r->file, r->line, "-c without a class");
		} else if (number_token(tok, "+bufsize=", UINT16_MAX, &v)) {
			r->edns = true;
			r->bufsize = (uint16_t)v;
		} else if (number_token(tok, "+edns=", UINT8_MAX, &v)) {
			r->edns = true;
			r->version = (uint8_t)v;
		} else if (strcmp(tok, "+dnssec") == 0) {
			r->edns = r->do_bit = true;
		} else if (strcmp(tok, "+nsid") == 0) {
			r->edns = r->nsid = true;
		} else if (strcmp(tok, "+tcp") == 0) {
			r->tcp = true;
		} else if (op) {
			r->opcode = (uint8_t)op->id;
		} else if ((i = zone_set(tok)) >= 0) {
			r->db = zone_sets[i].db;
		} else {
			return table_error(r->file, r->line, "unknown in a query: %s", tok);
		}
	}
	if (r->edns && !r->bufsize)
		r->bufsize = DNS_EDNS_DEFAULT;
	return 0;
}

/* RCODE FLAG... COUNT... [edns=N] [do] [nsid] [len=N], as the table's head describes. */
static int parse_result(row_t *r, char *text)
{
	char *save = NULL;
	char *tok = strtok_r(text, " \t", &save);
	ldns_lookup_table *rc = tok ? ldns_lookup_by_name(ldns_rcodes, tok) : NULL;
	if (tok && strcmp(tok, "BADVERS") == 0)
		r->rcode = DNS_RCODE_BADVERS;
	else if (rc)
		r->rcode = rc->id;
	else
		return table_error(r->file, r->line, "a result starts with an rcode");
	bool counted[3] = { false, false, false };
	unsigned v;
	int f, s;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		if ((f = lookup(flag_names, COUNT_OF(flag_names), tok, 0)) >= 0) {
			r->flags |= flag_bits[f];
		} else if (strcmp(tok, "do") == 0) {
			r->opt_do = true;
		} else if (strcmp(tok, "nsid") == 0) {
			r->opt_nsid = true;
		} else if (number_token(tok, "edns=", UINT16_MAX, &v) && v > 0) {
			r->opt_size = (uint16_t)v;
		} else if (number_token(tok, "len=", DNS_TCP_MAX, &v)) {
			r->len = v;
		} else if ((s = lookup(section_names, 3, tok, 2)) >= 0 && strchr("=<>", tok[2]) &&
			   number_token(tok + 3, "", UINT16_MAX, &v) && r->n_counts < COUNTS_MAX) {
			r->counts[r->n_counts++] = (count_t){ .section = s, .op = tok[2], .n = v };
			counted[s] = true;
		} else {
			return table_error(r->file, r->line, "unknown in a result: %s", tok);
		}
	}
	for (s = 0; s < 3; s++)
		if (!counted[s])
			return table_error(r->file, r->line, "the result has no %s= count",
					   section_names[s]);
	return 0;
}

/* "QUERY -> RESULT" into r (text is cut in place and must outlive r). */
static int parse_row(row_t *r, const char *file, int line, char *text)
{
	memset(r, 0, sizeof(*r));
	r->file = file;
	r->line = line;
	r->first_pattern = n_patterns;
	char *arrow = strstr(text, " -> ");
	if (!arrow)
		return table_error(file, line, "a case is QUERY -> RESULT");
	*arrow = 0;
	return parse_query(r, text) || parse_result(r, arrow + 4) ? -1 : 0;
}

/* "[!]an|ns|ar TEXT": a record of the row above. */
static int parse_pattern(row_t *r, int line, char *text)
{
	pattern_t *pt = &patterns[n_patterns];
	pt->absent = *text == '!';
	text += pt->absent;
	pt->section = lookup(section_names, 3, text, 2);
	pt->text = text + 2 + strspn(text + 2, " \t");
	if (pt->section < 0 || !strchr(" \t", text[2]) || !*pt->text)
		return table_error(table_name, line, "a record line is [!]an|ns|ar TEXT");
	if (n_patterns == PATTERNS_MAX - 1)
		return table_error(table_name, line, "more than %d record lines", PATTERNS_MAX - 1);
	n_patterns++;
	r->n_patterns++;
	return 0;
}

int answer_table_load(const char *path, const char *name, const answer_zones_t *sets, size_t n)
{
	table_name = name;
	zone_sets = sets;
	n_zone_sets = n;
	FILE *f = fopen(path, "r");
	table_text = malloc(TABLE_MAX + 1);
	size_t len = f && table_text ? fread(table_text, 1, TABLE_MAX + 1, f) : 0;
	if (f)
		fclose(f);
	if (len == 0 || len > TABLE_MAX)
		return table_error(path, 0, "cannot read it, or it is empty or past %d octets",
				   TABLE_MAX);
	table_text[len] = 0;
	row_t *r = NULL;
	int line = 0;
	for (char *s = table_text, *next; s; s = next) {
		next = strchr(s, '\n');
		if (next)
			*next++ = 0;
		line++;
		size_t end = strlen(s);
		while (end > 0 && strchr(" \t\r", s[end - 1]))
			s[--end] = 0;
		char *t = s + strspn(s, " \t");
		if (!*t || *t == '#')
			continue;
		if (s[0] == '[' && s[end - 1] == ']') {
			s[end - 1] = 0;
			for (size_t g = 0; g < n_groups; g++)
				if (strcmp(groups[g].name, s + 1) == 0)
					return table_error(table_name, line, "a second [%s]",
							   s + 1);
			if (n_groups == ANSWER_TABLE_GROUPS_MAX)
				return table_error(table_name, line, "more than %d groups",
						   ANSWER_TABLE_GROUPS_MAX);
			groups[n_groups++] = (group_t){ .name = s + 1, .first_row = n_rows };
			r = NULL;
		} else if (t != s) {
			if (!r)
				return table_error(table_name, line,
						   "a record line with no case above");
			if (parse_pattern(r, line, t) != 0)
				return -1;
		} else {
			if (n_groups == 0 || n_rows == ROWS_MAX)
				return table_error(table_name, line,
						   "a case outside a [group], or past %d",
						   ROWS_MAX);
			r = &rows[n_rows++];
			if (parse_row(r, table_name, line, t) != 0)
				return -1;
			groups[n_groups - 1].n_rows++;
		}
	}
	return 0;
}

/* ---- asking and checking ---- */

/*
 * One check of a row: an assertion CUnit counts, whose failure names the
 * row's file and line and says what differs. Returns ok.
 */
static bool expect(const row_t *r, bool ok, const char *fmt, ...)
{
	char msg[512] = "";
	if (!ok) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
	}
	CU_assertImplementation(ok, (unsigned)r->line, msg, r->file, "", CU_FALSE);
	return ok;
}

/* The query of a row in wire form (caller frees), or NULL. */
static uint8_t *row_query(const row_t *r, size_t *len)
{
	ldns_rdf *qname = ldns_dname_new_frm_str(r->name);
	ldns_pkt *q = qname ? ldns_pkt_query_new(qname, (ldns_rr_type)r->qtype,
						 (ldns_rr_class)r->qclass, 0)
			    : NULL;
	if (!q)
		return NULL;
	ldns_pkt_set_id(q, QUERY_ID);
	ldns_pkt_set_opcode(q, (ldns_pkt_opcode)r->opcode);
	if (r->edns) {
		ldns_pkt_set_edns_udp_size(q, r->bufsize);
		ldns_pkt_set_edns_do(q, r->do_bit);
		ldns_pkt_set_edns_version(q, r->version);
		if (r->nsid) /* an empty NSID option (RFC 5001 2.3) */
			ldns_pkt_set_edns_data(
				q, ldns_rdf_new_frm_data(LDNS_RDF_TYPE_UNKNOWN, 4, "\0\x03\0\0"));
	}
	uint8_t *wire = NULL;
	if (ldns_pkt2wire(&wire, q, len) != LDNS_STATUS_OK)
		wire = NULL;
	ldns_pkt_free(q);
	return wire;
}

/* An RR as ldns prints it, tabs as spaces, without the newline (caller frees). */
static char *rr_text(const ldns_rr *rr)
{
	char *t = ldns_rr2str(rr);
	for (char *c = t; c && *c; c++)
		if (*c == '\t' || *c == '\n')
			*c = *c == '\t' ? ' ' : 0;
	return t;
}

/* Does some RR of the list print as text containing `needle`? */
static bool has_rr(const ldns_rr_list *l, const char *needle)
{
	bool hit = false;
	for (size_t i = 0; i < ldns_rr_list_rr_count(l) && !hit; i++) {
		char *t = rr_text(ldns_rr_list_rr(l, i));
		hit = t && strstr(t, needle) != NULL;
		free(t);
	}
	return hit;
}

static const char *rcode_name(int rcode)
{
	static char other[16];
	ldns_lookup_table *rc = ldns_lookup_by_id(ldns_rcodes, rcode);
	if (rcode == DNS_RCODE_BADVERS)
		return "BADVERS";
	if (rc)
		return rc->name;
	snprintf(other, sizeof(other), "RCODE%d", rcode);
	return other;
}

/* The answer's rcode, the OPT's upper bits with the header's lower four (RFC 6891 6.1.3). */
static int full_rcode(const ldns_pkt *p, const uint8_t *out)
{
	return ldns_pkt_edns_extended_rcode(p) << 4 | (out[3] & DNS_RCODE_MASK);
}

/* Are the OPT's options the NSID option with the test identity, alone (RFC 5001 2.3)? */
static bool nsid_alone(const ldns_rdf *data)
{
	uint8_t want[4 + sizeof(nsid_value) - 1] = { 0, DNS_EDNS_NSID, 0, sizeof(nsid_value) - 1 };
	memcpy(want + 4, nsid_value, sizeof(nsid_value) - 1);
	return data && ldns_rdf_size(data) == sizeof(want) &&
	       memcmp(ldns_rdf_data(data), want, sizeof(want)) == 0;
}

/*
 * The answer as a row prints it, with its records below, on stderr: what to
 * compare a failed row with, or to paste as a new one once checked.
 */
static void print_answer(const row_t *r, const ldns_pkt *p, const uint8_t *out, size_t len)
{
	uint16_t flags = wire_get_u16(out + 2);
	fprintf(stderr, "%s:%d: the answer is: %s", r->file, r->line,
		rcode_name(full_rcode(p, out)));
	for (size_t f = 0; f < COUNT_OF(flag_names); f++)
		if (flags & flag_bits[f])
			fprintf(stderr, " %s", flag_names[f]);
	for (int s = 0; s < 3; s++)
		fprintf(stderr, " %s=%zu", section_names[s], ldns_rr_list_rr_count(section(p, s)));
	if (ldns_pkt_edns(p))
		fprintf(stderr, " edns=%u", ldns_pkt_edns_udp_size(p));
	if (ldns_pkt_edns_do(p))
		fprintf(stderr, " do");
	if (ldns_pkt_edns_data(p))
		fprintf(stderr, nsid_alone(ldns_pkt_edns_data(p)) ? " nsid" : " (other options)");
	fprintf(stderr, " len=%zu\n", len);
	for (int s = 0; s < 3; s++)
		for (size_t i = 0; i < ldns_rr_list_rr_count(section(p, s)); i++) {
			char *t = rr_text(ldns_rr_list_rr(section(p, s), i));
			fprintf(stderr, "\t%s %s\n", section_names[s], t ? t : "?");
			free(t);
		}
}

/*
 * The most octets the answer to r may take: over UDP 512 without EDNS (RFC
 * 1035 2.3.4), else the requester's size, counted as 512 when below (RFC 6891
 * 6.2.5) and cut to the server's own 1232.
 */
static size_t udp_limit(const row_t *r)
{
	if (r->tcp)
		return DNS_TCP_MAX;
	if (!r->edns || r->bufsize < DNS_UDP_MIN)
		return DNS_UDP_MIN;
	return r->bufsize < DNS_EDNS_DEFAULT ? r->bufsize : DNS_EDNS_DEFAULT;
}

/* ID, opcode, flags, rcode, counts and length. */
static void check_header(const row_t *r, const ldns_pkt *p, const uint8_t *out, size_t len)
{
	uint16_t flags = wire_get_u16(out + 2);
	unsigned opcode = (flags & DNS_OPCODE_MASK) >> DNS_OPCODE_SHIFT;
	expect(r, wire_get_u16(out) == QUERY_ID, "ID: want %u, got %u", QUERY_ID,
	       wire_get_u16(out));
	expect(r, opcode == r->opcode, "opcode: want %u, got %u", r->opcode, opcode);
	for (size_t f = 0; f < COUNT_OF(flag_names); f++) {
		bool want = (r->flags & flag_bits[f]) != 0, got = (flags & flag_bits[f]) != 0;
		expect(r, got == want, "flag %s: want %s, got %s", flag_names[f],
		       want ? "set" : "clear", got ? "set" : "clear");
	}
	int rcode = full_rcode(p, out);
	expect(r, rcode == r->rcode, "rcode: want %s, got %s", rcode_name(r->rcode),
	       rcode_name(rcode));
	for (size_t i = 0; i < r->n_counts; i++) {
		const count_t *c = &r->counts[i];
		size_t got = ldns_rr_list_rr_count(section(p, c->section));
		bool ok = c->op == '=' ? got == c->n : c->op == '<' ? got < c->n : got > c->n;
		expect(r, ok, "%s%c%u: got %zu", section_names[c->section], c->op, c->n, got);
	}
	if (r->len)
		expect(r, len == r->len, "len=%zu: got %zu", r->len, len);
	size_t limit = udp_limit(r);
	expect(r, len <= limit, "%zu octets, more than the %zu allowed", len, limit);
}

/* The question comes back as asked, the name's case kept. */
static void check_question(const row_t *r, const ldns_pkt *p)
{
	const ldns_rr_list *q = ldns_pkt_question(p);
	size_t n = ldns_rr_list_rr_count(q);
	if (!expect(r, n == 1, "questions: want 1, got %zu", n))
		return;
	const ldns_rr *rr = ldns_rr_list_rr(q, 0);
	char *owner = ldns_rdf2str(ldns_rr_owner(rr));
	size_t nlen = strlen(r->name);
	bool same = owner && strncmp(owner, r->name, nlen) == 0 &&
		    (!owner[nlen] || (owner[nlen] == '.' && !owner[nlen + 1]));
	expect(r, same, "question name: want %s, got %s", r->name, owner ? owner : "?");
	free(owner);
	expect(r, ldns_rr_get_type(rr) == r->qtype, "question type: want %u, got %u", r->qtype,
	       ldns_rr_get_type(rr));
	expect(r, ldns_rr_get_class(rr) == r->qclass, "question class: want %u, got %u", r->qclass,
	       ldns_rr_get_class(rr));
}

/* The OPT record: there or not, its size, version, DO bit and options. */
static void check_opt(const row_t *r, const ldns_pkt *p)
{
	bool has = ldns_pkt_edns(p);
	if (!expect(r, has == (r->opt_size != 0),
		    has ? "OPT: want none, got one" : "OPT: want one, got none") ||
	    !has)
		return;
	expect(r, ldns_pkt_edns_udp_size(p) == r->opt_size, "edns=%u: got %u", r->opt_size,
	       ldns_pkt_edns_udp_size(p));
	expect(r, ldns_pkt_edns_version(p) == 0, "EDNS version: want 0, got %u",
	       ldns_pkt_edns_version(p));
	expect(r, ldns_pkt_edns_do(p) == r->opt_do, "DO: want %s, got %s",
	       r->opt_do ? "set" : "clear", ldns_pkt_edns_do(p) ? "set" : "clear");
	const ldns_rdf *data = ldns_pkt_edns_data(p);
	if (!r->opt_nsid) {
		expect(r, !data, "EDNS options: want none, got some");
		return;
	}
	expect(r, nsid_alone(data), "EDNS options: want the NSID %s alone", nsid_value);
}

/* What answer_query says it did agrees with the answer. */
static void check_info(const row_t *r, const answer_info_t *info, const uint8_t *out)
{
	expect(r, info->rcode == r->rcode, "answer_info rcode: want %d, got %d", r->rcode,
	       info->rcode);
	expect(r, info->qtype == r->qtype, "answer_info qtype: want %u, got %u", r->qtype,
	       info->qtype);
	expect(r, info->edns == r->edns, "answer_info edns: want %d, got %d", r->edns, info->edns);
	bool tc = (wire_get_u16(out + 2) & DNS_FLAG_TC) != 0;
	expect(r, info->truncated == tc, "answer_info truncated: want %d, got %d", tc,
	       info->truncated);
	bool formerr = r->rcode == DNS_RCODE_FORMERR;
	expect(r, info->malformed == formerr, "answer_info malformed: want %d, got %d", formerr,
	       info->malformed);
}

/*
 * Answer the wire query q of row r and check the answer against the row,
 * every line of it and the checks every row has (the table's head lists them).
 */
static void check_answer(const row_t *r, const uint8_t *q, size_t qlen)
{
	static uint8_t out[DNS_TCP_MAX];
	answer_ctx_t ctx = { .edns_size = DNS_EDNS_DEFAULT,
			     .tcp = r->tcp,
			     .nsid = nsid_value,
			     .nsid_len = sizeof(nsid_value) - 1 };
	answer_info_t info;
	size_t len = answer_query(r->db, q, qlen, out, sizeof(out), &ctx, &info);
	ldns_pkt *p = NULL;
	if (!expect(r, len > 0 && !info.dropped, "no answer") ||
	    !expect(r, ldns_wire2pkt(&p, out, len) == LDNS_STATUS_OK, "the answer does not parse"))
		return;
	unsigned failures = CU_get_number_of_failures();
	check_header(r, p, out, len);
	check_question(r, p);
	check_opt(r, p);
	check_info(r, &info, out);
	for (size_t i = r->first_pattern; i < r->first_pattern + r->n_patterns; i++) {
		const pattern_t *pt = &patterns[i];
		bool hit = has_rr(section(p, pt->section), pt->text);
		expect(r, hit != pt->absent, "%s%s %s: %s record contains it",
		       pt->absent ? "!" : "", section_names[pt->section], pt->text,
		       hit ? "a" : "no");
	}
	if (CU_get_number_of_failures() != failures)
		print_answer(r, p, out, len);
	ldns_pkt_free(p);
}

static void check_row(const row_t *r)
{
	size_t qlen = 0;
	uint8_t *q = row_query(r, &qlen);
	if (expect(r, q != NULL, "the query cannot be built"))
		check_answer(r, q, qlen);
	free(q);
}

const char *answer_table_group(size_t i)
{
	return i < n_groups ? groups[i].name : NULL;
}

void answer_table_run(const char *group)
{
	for (size_t g = 0; g < n_groups; g++)
		if (strcmp(groups[g].name, group) == 0)
			for (size_t i = 0; i < groups[g].n_rows; i++)
				check_row(&rows[groups[g].first_row + i]);
}

void answer_table_check_wire(const char *file, int line, char *text, const uint8_t *q, size_t qlen)
{
	row_t r;
	size_t patterns_before = n_patterns;
	if (parse_row(&r, file, line, text) == 0)
		check_answer(&r, q, qlen);
	else
		CU_assertImplementation(CU_FALSE, (unsigned)line, "the row does not parse", file,
					"", CU_FALSE);
	n_patterns = patterns_before;
}

void answer_table_free(void)
{
	free(table_text);
	table_text = NULL;
	n_rows = n_patterns = n_groups = 0;
}
