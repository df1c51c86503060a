/* SPDX-License-Identifier: GPL-3.0-or-later */
/* One RRset signed: its canonical form (RFC 4034 6) and the RRSIG RDATA a key makes of it. */
#include "config.h"

#include <libdnssec/binary.h>
#include <libdnssec/error.h>
#include <libdnssec/key.h>
#include <libdnssec/sign.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/name.h"
#include "proto/rdata.h"
#include "proto/wire.h"
#include "zone/sign_ossl.h"
#include "zone/sign_rrset.h"

/* RFC 4034 3.1: type covered, algorithm, labels, TTL, expiration, inception, key tag. */
#define RRSIG_FIXED 18

/* One record of the RRset, its RDATA copied into the canonical buffer. */
typedef struct canon_rr {
	const uint8_t *rdata;
	uint16_t rdlen;
} canon_rr_t;

/* RFC 4034 6.3: RDATA as left-justified octet strings, a shorter prefix first. */
static int canon_cmp(const void *a, const void *b)
{
	const canon_rr_t *x = a, *y = b;
	size_t n = x->rdlen < y->rdlen ? x->rdlen : y->rdlen;
	int c = memcmp(x->rdata, y->rdata, n);
	return c ? c : (int)x->rdlen - (int)y->rdlen;
}

/*
 * rs's records into rr[0..count) over a copy of their RDATA in buf (of
 * rs->data_len octets), each in canonical form, sorted. Returns 0 or
 * SHOAL_EMALFORMED.
 */
static int canon_records(const rrset_wire_t *rs, canon_rr_t *rr, uint8_t *buf)
{
	wire_t w;
	wire_init_read(&w, rs->data, rs->data_len);
	size_t at = 0;
	for (uint16_t i = 0; i < rs->rr_count; i++) {
		wire_skip(&w, 8); /* type, class, TTL */
		uint16_t len = wire_read_u16(&w);
		const uint8_t *rdata = wire_read_ptr(&w, len);
		if (w.err)
			return SHOAL_EMALFORMED;
		memcpy(buf + at, rdata, len);
		if (rdata_canonical(rs->type, buf + at, len) < 0)
			return SHOAL_EMALFORMED;
		rr[i] = (canon_rr_t){ .rdata = buf + at, .rdlen = len };
		at += len;
	}
	qsort(rr, rs->rr_count, sizeof(*rr), canon_cmp);
	return 0;
}

/* The RRSIG RDATA without its signature (RFC 4034 3.1) into w. */
static void put_header(wire_t *w, const sign_key_t *k, const uint8_t *apex, const uint8_t *owner,
		       const rrset_wire_t *rs, sign_times_t times)
{
	int labels = name_labels(owner);
	/* RFC 4034 3.1.3: a wildcard owner's "*" is not counted */
	if (owner[0] == 1 && owner[1] == '*')
		labels--;
	wire_write_u16(w, rs->type);
	wire_write_u8(w, k->algorithm);
	wire_write_u8(w, (uint8_t)labels);
	wire_write_u32(w, wire_get_u32(rs->data + 4)); /* the original TTL: the first record's */
	wire_write_u32(w, times.expiration);
	wire_write_u32(w, times.inception);
	wire_write_u16(w, k->tag);
	wire_write_bytes(w, apex, name_length(apex));
}

/*
 * RFC 4034 3.1.8.1's signed data into w: the header, then each record
 * (duplicates once: RFC 2181 5 makes an RRset a set).
 */
static void put_signed_data(wire_t *w, const uint8_t *owner, const rrset_wire_t *rs,
			    const canon_rr_t *rr)
{
	uint8_t lower[NAME_MAXLEN];
	size_t owner_len = name_length(owner);
	memcpy(lower, owner, owner_len);
	name_lower(lower);
	for (uint16_t i = 0; i < rs->rr_count; i++) {
		if (i && !canon_cmp(&rr[i - 1], &rr[i]))
			continue;
		wire_write_bytes(w, lower, owner_len);
		wire_write_u16(w, rs->type);
		wire_write_bytes(w, rs->data + 2, 2); /* the class, as the record has it */
		wire_write_bytes(w, rs->data + 4, 4); /* the original TTL */
		wire_write_u16(w, rr[i].rdlen);
		wire_write_bytes(w, rr[i].rdata, rr[i].rdlen);
	}
}

/* k's signature of data[0..len) appended to w: P-256 through OpenSSL, the rest libdnssec. */
static int put_signature(wire_t *w, const sign_key_t *k, const uint8_t *data, size_t len)
{
	if (k->ossl) {
		uint8_t rs[SIGN_OSSL_SIG_LEN];
		int rc = sign_ossl_sign(k->ossl, data, len, rs);
		if (rc == 0)
			wire_write_bytes(w, rs, sizeof(rs));
		return rc ? rc : w->err;
	}
	dnssec_sign_ctx_t *ctx = NULL;
	dnssec_binary_t in = { .data = (uint8_t *)data, .size = len }, sig = { 0 };
	if (!dnssec_key_can_sign(k->key))
		return SHOAL_EINVAL;
	int r = dnssec_sign_new(&ctx, k->key);
	if (r == DNSSEC_EOK)
		r = dnssec_sign_init(ctx);
	if (r == DNSSEC_EOK)
		r = dnssec_sign_add(ctx, &in);
	if (r == DNSSEC_EOK)
		r = dnssec_sign_write(ctx, DNSSEC_SIGN_NORMAL, &sig);
	dnssec_sign_free(ctx);
	if (r != DNSSEC_EOK)
		return r == DNSSEC_ENOMEM ? SHOAL_ENOMEM : SHOAL_EINVAL;
	wire_write_bytes(w, sig.data, sig.size);
	dnssec_binary_free(&sig);
	return w->err;
}

int sign_rrset(const sign_key_t *k, const uint8_t *apex, const uint8_t *owner,
	       const rrset_wire_t *rs, sign_times_t times, uint8_t *out, size_t cap)
{
	if (rs->rr_count == 0 || rs->data_len < 10)
		return SHOAL_EMALFORMED;
	/* each record: the owner and 10 octets beside its RDATA */
	size_t data_cap = RRSIG_FIXED + NAME_MAXLEN + rs->rr_count * (size_t)(NAME_MAXLEN + 10) +
			  rs->data_len;
	canon_rr_t *rr = malloc(rs->rr_count * sizeof(*rr));
	uint8_t *rdata = malloc(rs->data_len), *data = malloc(data_cap);
	int rc = rr && rdata && data ? canon_records(rs, rr, rdata) : SHOAL_ENOMEM;
	wire_t w;
	if (rc == 0) {
		wire_init_write(&w, data, data_cap);
		put_header(&w, k, apex, owner, rs, times);
		size_t header = w.pos;
		put_signed_data(&w, owner, rs, rr);
		rc = w.err;
		wire_t o;
		wire_init_write(&o, out, cap);
		wire_write_bytes(&o, data, header);
		if (rc == 0)
			rc = put_signature(&o, k, data, w.pos);
		if (rc == 0)
			rc = (int)o.pos;
	}
	free(rr);
	free(rdata);
	free(data);
	return rc;
}
