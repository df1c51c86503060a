/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A zone file read with both readers (zscanner, ldns) and compared; zones written back. */
#include "config.h"

#include <ldns/ldns.h>
#include <libzscanner/error.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "tests/fuzz/fuzz_file.h"
#include "tests/fuzz/zone_diff.h"
#include "zone/load.h"
#include "zone/write.h"

void zone_diff_check_store(const zone_t *z)
{
	zone_iter_t it;
	const znode_t *prev = NULL;
	size_t count = 0;
	if (zone_first(z, &it) != z->apex || zone_parent(z, z->apex) != NULL)
		abort();
	for (const znode_t *n = zone_first(z, &it); n; prev = n, n = zone_next(&it), count++) {
		const uint8_t *name = znode_name(n);
		if (name_length(name) != n->name_len || name_labels(name) != n->labels)
			abort();
		if (prev && name_compare(znode_name(prev), name) >= 0)
			abort();
		if (zone_lookup(z, name) != n || zone_find_le(z, name) != n)
			abort();
		const znode_t *p = zone_parent(z, n);
		if (prev && (p == NULL || p->labels + 1 != n->labels ||
			     !name_equal(znode_name(p), name_parent(name))))
			abort();
	}
	if (count != z->node_count)
		abort();
}

static bool same_wire(const rrset_wire_t *x, const rrset_wire_t *y)
{
	if (!x || !y)
		return x == y;
	return x->type == y->type && x->rr_count == y->rr_count && x->data_len == y->data_len &&
	       memcmp(x->data, y->data, x->data_len) == 0;
}

bool zone_diff_same(const zone_t *a, const zone_t *b)
{
	if (a->node_count != b->node_count || a->rr_count != b->rr_count ||
	    a->serial != b->serial || a->denial != b->denial ||
	    !same_wire(&a->neg_soa, &b->neg_soa) || !same_wire(a->neg_soa_sigs, b->neg_soa_sigs))
		return false;
	zone_iter_t ia, ib;
	for (const znode_t *x = zone_first(a, &ia), *y = zone_first(b, &ib); x && y;
	     x = zone_next(&ia), y = zone_next(&ib)) {
		if (x->name_len != y->name_len ||
		    memcmp(znode_name(x), znode_name(y), x->name_len) != 0 ||
		    x->rrset_count != y->rrset_count || (x->flags ^ y->flags) & ZNODE_ANSWER_FLAGS)
			return false;
		for (uint16_t k = 0; k < x->rrset_count; k++)
			if (!same_wire(&znode_rrsets(x)[k].set, &znode_rrsets(y)[k].set) ||
			    !same_wire(znode_rrsets(x)[k].sigs, znode_rrsets(y)[k].sigs))
				return false;
	}
	return true;
}

/*
 * The messages of one load, each "E FILE:LINE: text" or "W ...": as they
 * are compared (a reader's words for text it cannot read made "a syntax
 * error"), and leniently (a known type's RDATA refused by the builder
 * made one too).
 */
typedef struct msg_list {
	char **text, **lenient;
	size_t count, cap;
	bool syntax; /* a reader refused some text */
} msg_list_t;

/*
 * The words a reader uses for text it cannot read: the scanner's, ldns',
 * and the ldns reader's own for what ldns let through.
 */
static bool reader_words(const char *text)
{
	static const char *const own[] = { "the owner is not a domain name",
					   "RDATA longer than 65535 octets",
					   "cannot seek in the file",
					   "$INCLUDE without a file name",
					   "$INCLUDE origin must be an absolute domain name" };
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strcmp(text, own[i]) == 0)
			return true;
	for (int code = ZS_EINVAL; code <= ZS_FILE_ACCESS; code++)
		if (strcmp(text, zs_strerror(code)) == 0)
			return true;
	for (const ldns_lookup_table *t = ldns_error_str; t->name; t++)
		if (strcmp(text, t->name) == 0)
			return true;
	return false;
}

static void keep(void *arg, bool is_error, const char *msg)
{
	msg_list_t *m = arg;
	if (m->count == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		char **t = realloc(m->text, cap * sizeof(*t));
		if (!t)
			abort();
		m->text = t;
		if (!(t = realloc(m->lenient, cap * sizeof(*t))))
			abort();
		m->lenient = t;
		m->cap = cap;
	}
	/* "FILE:LINE: text": the text starts after the line number */
	const char *p = msg, *text = NULL;
	while ((p = strchr(p, ':'))) {
		const char *q = p + 1;
		while (*q >= '0' && *q <= '9')
			q++;
		if (q > p + 1 && q[0] == ':' && q[1] == ' ') {
			text = q + 2;
			break;
		}
		p++;
	}
	if (!text && (text = strstr(msg, ": ")))
		text += 2; /* "FILE: text", a message about the whole file */
	char *s = NULL, *l = NULL;
	char sev = is_error ? 'E' : 'W';
	int at = text ? (int)(text - msg) : 0;
	if (text && reader_words(text)) {
		m->syntax = true;
		if (asprintf(&s, "%c %.*sa syntax error", sev, at, msg) < 0)
			abort();
	} else if (asprintf(&s, "%c %s", sev, msg) < 0) {
		abort();
	}
	const char *bad = text ? strstr(text, ": bad ") : NULL;
	if (is_error && bad && strstr(bad, " RDATA (")) {
		if (asprintf(&l, "%c %.*sa syntax error", sev, at, msg) < 0)
			abort();
	} else if (!(l = strdup(s))) {
		abort();
	}
	m->text[m->count] = s;
	m->lenient[m->count++] = l;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_free(msg_list_t *m)
{
	for (size_t i = 0; i < m->count; i++) {
		free(m->text[i]);
		free(m->lenient[i]);
	}
	free(m->text);
	free(m->lenient);
}

/* The same messages, each list sorted. */
static bool same_list(char **a, char **b, size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (strcmp(a[i], b[i]) != 0)
			return false;
	return true;
}

/* Append both loads' messages to why. */
static void explain(char *why, size_t cap, const char *what, const msg_list_t *m)
{
	size_t len = strlen(why);
	snprintf(why + len, cap - len, "\n  %s:", what);
	for (size_t i = 0; i < m->count; i++) {
		len = strlen(why);
		snprintf(why + len, cap - len, "\n    %s", m->text[i]);
	}
}

void zone_diff_write_back(const zone_t *z)
{
	char path[8192];
	snprintf(path, sizeof(path), "%s", fuzz_file_write("saved.zone", (const uint8_t *)"", 0));
	int rc = zone_write(z, path, "fuzz", NULL, NULL, NULL);
	if (rc == SHOAL_ENOMEM)
		return;
	static const enum zone_reader reader[2] = { ZONE_READER_ZSCANNER, ZONE_READER_LDNS };
	for (int i = 0; rc == 0 && i < 2; i++) {
		zone_t *back = NULL;
		zone_load_set_reader(reader[i]);
		int lrc = zone_load(path, znode_name(z->apex), NULL, NULL, NULL, &back);
		zone_load_set_reader(ZONE_READER_ZSCANNER);
		/* ldns may refuse a file it cannot read; the scanner may not */
		if ((lrc == 0 && !zone_diff_same(z, back)) || (lrc != 0 && i == 0))
			rc = SHOAL_EZONE;
		zone_free(back);
	}
	if (rc != 0) {
		fprintf(stderr, "zone_diff: the zone written does not read back: %s\n",
			shoal_strerror(rc));
		abort();
	}
}

enum zone_diff zone_diff_file(const char *path, const uint8_t *origin, char *why, size_t cap)
{
	msg_list_t m[2] = { { 0 } };
	zone_t *z[2] = { NULL, NULL };
	int rc[2];
	static const enum zone_reader reader[2] = { ZONE_READER_ZSCANNER, ZONE_READER_LDNS };
	for (int i = 0; i < 2; i++) {
		zone_load_set_reader(reader[i]);
		rc[i] = zone_load(path, origin, NULL, keep, &m[i], &z[i]);
		if (m[i].count) {
			qsort(m[i].text, m[i].count, sizeof(char *), by_text);
			qsort(m[i].lenient, m[i].count, sizeof(char *), by_text);
		}
	}
	zone_load_set_reader(ZONE_READER_ZSCANNER);
	why[0] = '\0';
	if ((rc[0] == 0) != (rc[1] == 0))
		snprintf(why, cap, "%s: zscanner %s, ldns %s", path, shoal_strerror(rc[0]),
			 shoal_strerror(rc[1]));
	else if (rc[0] == 0 && !zone_diff_same(z[0], z[1]))
		snprintf(why, cap, "%s: the zones differ", path);
	/*
	 * ldns refuses a known type's generic RDATA ("A \# 3 ...") it cannot
	 * fit to the type's fields in its own words; the scanner's reader
	 * hands it to the builder, whose message says what is wrong: both
	 * refuse the record at its line.
	 */
	bool same_msgs = m[0].count == m[1].count &&
			 (same_list(m[0].text, m[1].text, m[0].count) ||
			  (rc[0] != 0 && same_list(m[0].lenient, m[1].lenient, m[0].count)));
	if (!why[0] && !same_msgs)
		snprintf(why, cap, "%s: the messages differ", path);
	if (why[0]) {
		explain(why, cap, "zscanner", &m[0]);
		explain(why, cap, "ldns", &m[1]);
	}
	enum zone_diff diff = !why[0]                      ? ZONE_DIFF_SAME
			      : m[0].syntax || m[1].syntax ? ZONE_DIFF_SYNTAX
							   : ZONE_DIFF_FOUND;
	for (int i = 0; i < 2; i++) {
		if (z[i]) {
			zone_diff_check_store(z[i]);
			zone_diff_write_back(z[i]);
		}
		list_free(&m[i]);
		zone_free(z[i]);
	}
	return diff;
}
