/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What the zone transfer tests share: zones, requests, and record sets compared through ldns. */
#ifndef SHOAL_TESTS_XFR_TEST_H
#define SHOAL_TESTS_XFR_TEST_H

#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/query.h"
#include "tests/unit/unit.h"
#include "zone/load.h"
#include "zone/zone.h"

/* Messages of a load or a transfer: printed, the errors counted, the last one kept. */
typedef struct xt_msgs {
	int errors, warnings;
	char last[1024];
} xt_msgs_t;

static inline void xt_msg(void *arg, bool is_error, const char *msg)
{
	xt_msgs_t *m = arg;
	if (m) {
		m->errors += is_error;
		m->warnings += !is_error;
		snprintf(m->last, sizeof(m->last), "%s", msg);
	}
	if (is_error || getenv("XT_VERBOSE"))
		fprintf(stderr, "  %s: %s\n", is_error ? "error" : "warning", msg);
}

/* Remove a test's temporary folder; the exit status rc, made a failure if that fails. */
static inline int xt_remove_dir(const char *dir, int rc)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) != 0 && rc == 0 ? 1 : rc;
}

/* A file of the source tree, by its path from the top. */
static inline const char *xt_src(const char *rel)
{
	static char path[4][4096];
	static int k;
	k = (k + 1) % 4;
	return unit_src_path(path[k], sizeof(path[k]), rel);
}

static inline zone_t *xt_load(const char *path, const char *origin)
{
	uint8_t wire[NAME_MAXLEN];
	zone_t *z = NULL;
	if (name_from_text(origin, NULL, wire) < 0)
		return NULL;
	int err = zone_load(path, wire, NULL, xt_msg, NULL, &z);
	if (err < 0)
		fprintf(stderr, "  load %s: %s\n", path, shoal_strerror(err));
	return z;
}

/*
 * A request for origin of qtype into buf (at least 512 octets), with the
 * client's SOA serial in the authority section for IXFR (RFC 1995 3).
 * Returns its length.
 */
static inline size_t xt_request(uint8_t *buf, uint16_t id, const char *origin, uint16_t qtype,
				uint32_t serial)
{
	uint8_t name[NAME_MAXLEN];
	int n = name_from_text(origin, NULL, name);
	wire_t w;
	wire_init_write(&w, buf, 512);
	wire_write_u16(&w, id);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, 1);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, qtype == DNS_TYPE_IXFR);
	wire_write_u16(&w, 0);
	wire_write_bytes(&w, name, (size_t)n);
	wire_write_u16(&w, qtype);
	wire_write_u16(&w, DNS_CLASS_IN);
	if (qtype == DNS_TYPE_IXFR) {
		/* the client's SOA: only the serial counts */
		wire_write_u16(&w, 0xc00c);
		wire_write_u16(&w, DNS_TYPE_SOA);
		wire_write_u16(&w, DNS_CLASS_IN);
		wire_write_u32(&w, 0);
		wire_write_u16(&w, 22);
		wire_write_u8(&w, 0);
		wire_write_u8(&w, 0);
		wire_write_u32(&w, serial);
		for (int i = 0; i < 4; i++)
			wire_write_u32(&w, 0);
	}
	return w.pos;
}

/*
 * Version v (1 to 7) of a small zone j.test. in dir: each version changes a
 * few kinds of things. Returns its path.
 */
static inline const char *xt_write_version(const char *dir, int v)
{
	static char path[8][4096];
	snprintf(path[v], sizeof(path[v]), "%s/v%d.zone", dir, v);
	FILE *f = fopen(path[v], "w");
	if (!f)
		return NULL;
	fprintf(f,
		"$ORIGIN j.test.\n$TTL 300\n@ SOA ns1 hm %d 3600 900 604800 300\n@ NS ns1\n"
		"ns1 A 192.0.2.1\n",
		v);
	/* from v2: the set's TTL changes, and one of its records */
	fprintf(f, "www %d A 192.0.2.80\n", v >= 2 ? 600 : 300);
	fprintf(f, "www %d A 192.0.2.%d\n", v >= 2 ? 600 : 300, v >= 2 ? 82 : 81);
	if (v == 1 || v == 3)
		fprintf(f, "gone.a.b A 192.0.2.9\n"); /* a name and its ENTs */
	if (v == 2)
		fprintf(f, "new MX 10 mail.new\nmail.new AAAA 2001:db8::25\n");
	fprintf(f, "txt TXT \"%s\"\n", v == 3 ? "three" : "one");
	fprintf(f, "same A 192.0.2.7\nsame TXT \"unchanged\"\n");
	fclose(f);
	return path[v];
}

/* The records of a master file as ldns reads it (SOA first). */
static inline ldns_rr_list *xt_file_rrs(const char *path, const char *origin)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	ldns_rdf *o = ldns_dname_new_frm_str(origin);
	ldns_zone *zn = NULL;
	int line = 0;
	ldns_status s = ldns_zone_new_frm_fp_l(&zn, f, o, 3600, LDNS_RR_CLASS_IN, &line);
	fclose(f);
	ldns_rdf_deep_free(o);
	if (s != LDNS_STATUS_OK) {
		fprintf(stderr, "  ldns cannot read %s (line %d): %s\n", path, line,
			ldns_get_errorstr_by_id(s));
		return NULL;
	}
	ldns_rr_list *l = ldns_rr_list_new();
	ldns_rr_list_push_rr(l, ldns_rr_clone(ldns_zone_soa(zn)));
	for (size_t i = 0; i < ldns_rr_list_rr_count(ldns_zone_rrs(zn)); i++)
		ldns_rr_list_push_rr(l, ldns_rr_clone(ldns_rr_list_rr(ldns_zone_rrs(zn), i)));
	ldns_zone_deep_free(zn);
	return l;
}

/*
 * Do a and b hold the same records (owner, class, type, TTL, RDATA), in
 * any order? Both are put in canonical form and sorted; the first
 * difference is printed.
 */
static inline bool xt_same_rrs(ldns_rr_list *a, ldns_rr_list *b)
{
	for (size_t i = 0; i < ldns_rr_list_rr_count(a); i++)
		ldns_rr2canonical(ldns_rr_list_rr(a, i));
	for (size_t i = 0; i < ldns_rr_list_rr_count(b); i++)
		ldns_rr2canonical(ldns_rr_list_rr(b, i));
	ldns_rr_list_sort(a);
	ldns_rr_list_sort(b);
	size_t na = ldns_rr_list_rr_count(a), nb = ldns_rr_list_rr_count(b);
	for (size_t i = 0; i < na && i < nb; i++) {
		ldns_rr *x = ldns_rr_list_rr(a, i), *y = ldns_rr_list_rr(b, i);
		if (ldns_rr_compare(x, y) != 0 || ldns_rr_ttl(x) != ldns_rr_ttl(y)) {
			char *sx = ldns_rr2str(x), *sy = ldns_rr2str(y);
			fprintf(stderr, "  record %zu differs:\n    %s    %s", i, sx, sy);
			free(sx);
			free(sy);
			return false;
		}
	}
	if (na != nb)
		fprintf(stderr, "  %zu records against %zu\n", na, nb);
	return na == nb;
}

/* One record, owner and wire form (type, class, TTL, RDLENGTH, RDATA), as an ldns RR. */
static inline ldns_rr *xt_rr(const uint8_t *owner, const uint8_t *rec)
{
	uint8_t buf[NAME_MAXLEN + 10 + 65535];
	size_t olen = name_length(owner), rdlen = wire_get_u16(rec + 8);
	memcpy(buf, owner, olen);
	memcpy(buf + olen, rec, 10 + rdlen);
	ldns_rr *rr = NULL;
	size_t pos = 0;
	if (ldns_wire2rr(&rr, buf, olen + 10 + rdlen, &pos, LDNS_SECTION_ANSWER) != LDNS_STATUS_OK)
		return NULL;
	return rr;
}

/* Push every record of set, with owner, onto l. */
static inline void xt_push_set(ldns_rr_list *l, const uint8_t *owner, const rrset_wire_t *set)
{
	for (const uint8_t *rec = set->data; rec < set->data + set->data_len;
	     rec += 10 + wire_get_u16(rec + 8))
		ldns_rr_list_push_rr(l, xt_rr(owner, rec));
}

/* Every record of a compiled zone. */
static inline ldns_rr_list *xt_zone_rrs(const zone_t *z)
{
	ldns_rr_list *l = ldns_rr_list_new();
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); n; n = zone_next(&it))
		for (uint16_t k = 0; k < n->rrset_count; k++)
			xt_push_set(l, znode_name(n), &znode_rrsets(n)[k].set);
	return l;
}

/* Take the record equal to rr (TTL aside) out of l; false when it is not there. */
static inline bool xt_remove(ldns_rr_list *l, const ldns_rr *rr)
{
	size_t n = ldns_rr_list_rr_count(l);
	for (size_t i = 0; i < n; i++) {
		ldns_rr *x = ldns_rr_list_rr(l, i);
		if (ldns_rr_compare(x, rr) == 0) {
			ldns_rr_list_set_rr(l, ldns_rr_list_rr(l, n - 1), i);
			ldns_rr_list_set_rr_count(l, n - 1);
			ldns_rr_free(x);
			return true;
		}
	}
	return false;
}

/*
 * Apply an IXFR answer's records (RFC 1995 4: SOA, then per changeset the
 * old SOA, deletions, the new SOA, additions; the SOA again) to zone, a
 * list of every record with its SOA. False when the shape is wrong or a
 * deletion is not in the zone.
 */
static inline bool xt_apply_ixfr(ldns_rr_list *zone, const ldns_rr_list *stream)
{
	size_t n = ldns_rr_list_rr_count(stream);
	if (n < 2)
		return false;
	const ldns_rr *last = ldns_rr_list_rr(stream, n - 1);
	bool adding = true;
	for (size_t i = 1; i + 1 < n; i++) {
		ldns_rr *rr = ldns_rr_list_rr(stream, i);
		if (ldns_rr_get_type(rr) == LDNS_RR_TYPE_SOA)
			adding = !adding;
		if (!adding && !xt_remove(zone, rr))
			return false;
		if (adding)
			ldns_rr_list_push_rr(zone, ldns_rr_clone(rr));
	}
	return adding && ldns_rr_compare(ldns_rr_list_rr(stream, 0), last) == 0;
}

#endif
