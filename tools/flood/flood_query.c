/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoal-flood's query list: read "name type" lines, build every message once at start. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ldns/ldns.h>

#include "proto/dns.h"
#include "proto/name.h"
#include "proto/wire.h"
#include "tools/flood/flood.h"

/* Header + longest name + QTYPE/QCLASS + OPT with an empty NSID option and a COOKIE. */
#define QUERY_MAX (DNS_HEADER_SIZE + 255 + 4 + 11 + 4 + 4 + 40)

/* Growing list while loading; the packets live in one arena. */
typedef struct loader {
	flood_queries_t *qs;
	size_t cap;
	size_t arena_used, arena_cap;
	size_t *offsets;
} loader_t;

/*
 * Encode one query into dst: ID 0 (patched per send), every flag clear
 * (RD clear: this is an authoritative server), one question, and with EDNS
 * an OPT record (RFC 6891 6.1.2) with the DO bit (RFC 3225), an empty
 * NSID option (RFC 5001 2.3) and a COOKIE option (RFC 7873 4) as asked.
 */
static int build_query(const flood_opts_t *o, const uint8_t *name, size_t name_len, uint16_t type,
		       uint8_t dst[QUERY_MAX])
{
	wire_t w;
	wire_init_write(&w, dst, QUERY_MAX);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, 1);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, 0);
	wire_write_u16(&w, o->edns ? 1 : 0);
	wire_write_bytes(&w, name, name_len);
	wire_write_u16(&w, type);
	wire_write_u16(&w, DNS_CLASS_IN);
	if (o->edns) {
		wire_write_u8(&w, 0); /* owner: the root */
		wire_write_u16(&w, DNS_TYPE_OPT);
		wire_write_u16(&w, (uint16_t)o->edns);
		wire_write_u16(&w, 0); /* extended RCODE, version 0 */
		wire_write_u16(&w, o->dnssec_ok ? DNS_EDNS_DO : 0);
		wire_write_u16(&w, (uint16_t)((o->nsid ? 4 : 0) +
					      (o->cookie_len ? 4 + o->cookie_len : 0)));
		if (o->nsid) {
			wire_write_u16(&w, DNS_EDNS_NSID);
			wire_write_u16(&w, 0);
		}
		if (o->cookie_len) {
			wire_write_u16(&w, DNS_EDNS_COOKIE);
			wire_write_u16(&w, o->cookie_len);
			wire_write_bytes(&w, o->cookie, o->cookie_len);
		}
	}
	return w.err ? w.err : (int)w.pos;
}

/* Add one "name type" query; `where` names the source for error messages. */
static int add_query(loader_t *l, const flood_opts_t *o, const char *name_text,
		     const char *type_text, const char *where)
{
	uint8_t name[NAME_MAXLEN];
	/* Without an origin, a name without a final dot is absolute, as dnsperf reads it. */
	int name_len = name_from_text(name_text, NULL, name);
	if (name_len < 0) {
		fprintf(stderr, "shoal-flood: %s: bad name '%s'\n", where, name_text);
		return -1;
	}
	ldns_rr_type type = ldns_get_rr_type_by_name(type_text);
	if (type == 0) {
		fprintf(stderr, "shoal-flood: %s: unknown type '%s'\n", where, type_text);
		return -1;
	}
	if (l->qs->count == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 1024;
		size_t *off = realloc(l->offsets, cap * sizeof(*off));
		if (!off)
			goto done;
		l->offsets = off;
		l->cap = cap;
	}
	if (l->arena_used + QUERY_MAX > l->arena_cap) {
		size_t cap = l->arena_cap ? l->arena_cap * 2 : 64 * QUERY_MAX;
		uint8_t *a = realloc(l->qs->arena, cap);
		if (!a)
			goto done;
		l->qs->arena = a;
		l->arena_cap = cap;
	}
	int len = build_query(o, name, (size_t)name_len, (uint16_t)type,
			      l->qs->arena + l->arena_used);
	if (len < 0) {
		fprintf(stderr, "shoal-flood: %s: query too long\n", where);
		return -1;
	}
	l->offsets[l->qs->count++] = l->arena_used;
	l->arena_used += (size_t)len;
	return 0;
done:
	fprintf(stderr, "shoal-flood: out of memory\n");
	return -1;
}

static int load_file(loader_t *l, const flood_opts_t *o)
{
	FILE *f = fopen(o->datafile, "r");
	if (!f) {
		fprintf(stderr, "shoal-flood: %s: %s\n", o->datafile, strerror(errno));
		return -1;
	}
	char line[1024], where[1100];
	unsigned lineno = 0;
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		lineno++;
		char *save = NULL;
		char *name = strtok_r(line, " \t\r\n", &save);
		if (!name || name[0] == '#' || name[0] == ';')
			continue;
		char *type = strtok_r(NULL, " \t\r\n", &save);
		snprintf(where, sizeof(where), "%s line %u", o->datafile, lineno);
		rc = add_query(l, o, name, type ? type : "A", where);
	}
	fclose(f);
	if (rc == 0 && l->qs->count == 0) {
		fprintf(stderr, "shoal-flood: %s: no queries\n", o->datafile);
		rc = -1;
	}
	return rc;
}

int flood_queries_load(flood_queries_t *qs, const flood_opts_t *o)
{
	memset(qs, 0, sizeof(*qs));
	loader_t l = { .qs = qs };
	int rc = o->datafile ? load_file(&l, o) : add_query(&l, o, o->qname, o->qtype, "-q");
	if (rc == 0) {
		qs->q = calloc(qs->count, sizeof(*qs->q));
		if (!qs->q) {
			fprintf(stderr, "shoal-flood: out of memory\n");
			rc = -1;
		}
	}
	/* Offsets became pointers only now: the arena moved while it grew. */
	for (size_t i = 0; rc == 0 && i < qs->count; i++) {
		size_t end = i + 1 < qs->count ? l.offsets[i + 1] : l.arena_used;
		qs->q[i].pkt = qs->arena + l.offsets[i];
		qs->q[i].len = (uint16_t)(end - l.offsets[i]);
	}
	free(l.offsets);
	if (rc != 0)
		flood_queries_free(qs);
	return rc;
}

void flood_queries_free(flood_queries_t *qs)
{
	free(qs->q);
	free(qs->arena);
	memset(qs, 0, sizeof(*qs));
}
