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

/* A file of the source tree, by its path from the top. */
static inline const char *xt_src(const char *rel)
{
	static char path[4][4096];
	static int k;
	const char *src = getenv("SHOAL_SRCDIR");
	k = (k + 1) % 4;
	snprintf(path[k], sizeof(path[k]), "%s/%s", src ? src : ".", rel);
	return path[k];
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

#endif
