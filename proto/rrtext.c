/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Records as master file lines: presentation form where every reader agrees, else RFC 3597's. */
#include <arpa/inet.h>
#include <assert.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proto/dns.h"
#include "proto/rdata.h"
#include "proto/rrtext.h"
#include "proto/wire.h"

/* How a named type's RDATA is written. */
enum rd_form {
	RD_GENERIC, /* RFC 3597's generic form: no field form here both readers agree on */
	RD_FIELDS,  /* field by field as its layout (proto/rdata.c) lays it out, no opaque rest */
	RD_HEX,     /* the same, its opaque rest (a digest) in hexadecimal */
	RD_BASE64,  /* the same, its opaque rest (a key, a signature) in base64 */
};

/*
 * The types both readers know by name, by number: Knot's zone scanner
 * (libzscanner 3.2, which shoald starts with) knows fewer than ldns and
 * refuses a mnemonic it does not know, even before "\#". Every other type
 * is written TYPEnnn (RFC 3597 5). The forms are the RFCs' of each type.
 */
static const struct named {
	uint16_t type;
	uint8_t form; /* enum rd_form */
} named[] = {
	{ DNS_TYPE_A, RD_FIELDS },          { DNS_TYPE_NS, RD_FIELDS },
	{ DNS_TYPE_CNAME, RD_FIELDS },      { DNS_TYPE_SOA, RD_FIELDS },
	{ DNS_TYPE_PTR, RD_FIELDS },        { DNS_TYPE_HINFO, RD_FIELDS },
	{ DNS_TYPE_MINFO, RD_FIELDS },      { DNS_TYPE_MX, RD_FIELDS },
	{ DNS_TYPE_TXT, RD_FIELDS },        { DNS_TYPE_RP, RD_FIELDS },
	{ DNS_TYPE_AFSDB, RD_FIELDS },      { 21 /* RT */, RD_FIELDS },
	{ DNS_TYPE_KEY, RD_BASE64 },        { DNS_TYPE_AAAA, RD_FIELDS },
	{ DNS_TYPE_LOC, RD_GENERIC },       { DNS_TYPE_SRV, RD_FIELDS },
	{ DNS_TYPE_NAPTR, RD_FIELDS },      { DNS_TYPE_KX, RD_FIELDS },
	{ DNS_TYPE_CERT, RD_GENERIC },      { DNS_TYPE_DNAME, RD_FIELDS },
	{ 42 /* APL */, RD_GENERIC },       { DNS_TYPE_DS, RD_HEX },
	{ DNS_TYPE_SSHFP, RD_HEX },         { 45 /* IPSECKEY */, RD_GENERIC },
	{ DNS_TYPE_RRSIG, RD_BASE64 },      { DNS_TYPE_NSEC, RD_FIELDS },
	{ DNS_TYPE_DNSKEY, RD_BASE64 },     { 49 /* DHCID */, RD_BASE64 },
	{ DNS_TYPE_NSEC3, RD_FIELDS },      { DNS_TYPE_NSEC3PARAM, RD_FIELDS },
	{ DNS_TYPE_TLSA, RD_HEX },          { 53 /* SMIMEA */, RD_HEX },
	{ DNS_TYPE_CDS, RD_HEX },           { DNS_TYPE_CDNSKEY, RD_BASE64 },
	{ 61 /* OPENPGPKEY */, RD_BASE64 }, { 62 /* CSYNC */, RD_FIELDS },
	{ 63 /* ZONEMD */, RD_HEX },        { DNS_TYPE_SVCB, RD_GENERIC },
	{ DNS_TYPE_HTTPS, RD_GENERIC },     { 99 /* SPF */, RD_FIELDS },
	{ 104 /* NID */, RD_GENERIC },      { 105 /* L32 */, RD_GENERIC },
	{ 106 /* L64 */, RD_GENERIC },      { 107 /* LP */, RD_FIELDS },
	{ 108 /* EUI48 */, RD_GENERIC },    { 109 /* EUI64 */, RD_GENERIC },
	{ 256 /* URI */, RD_GENERIC },      { DNS_TYPE_CAA, RD_GENERIC },
};

static int by_type(const void *key, const void *elem)
{
	uint16_t a = *(const uint16_t *)key, b = ((const struct named *)elem)->type;
	return (a > b) - (a < b);
}

static const struct named *find_named(uint16_t type)
{
	return bsearch(&type, named, sizeof(named) / sizeof(named[0]), sizeof(named[0]), by_type);
}

/* A line being written: like the wire cursor, running out of room is recorded once. */
typedef struct text {
	char *p;
	size_t len, cap;
	bool full;
} text_t;

/* Room for n more octets; records `full` when there is none. */
static bool room(text_t *t, size_t n)
{
	if (!t->full && n > t->cap - t->len)
		t->full = true;
	return !t->full;
}

static void put(text_t *t, const char *s, size_t n)
{
	if (room(t, n)) {
		memcpy(t->p + t->len, s, n);
		t->len += n;
	}
}

static void put_char(text_t *t, char c)
{
	put(t, &c, 1);
}

static void put_u32(text_t *t, uint32_t v)
{
	char digits[10];
	size_t n = 0;
	do {
		digits[sizeof(digits) - ++n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put(t, digits + sizeof(digits) - n, n);
}

static void put_hex(text_t *t, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	if (room(t, 2 * n))
		for (size_t i = 0; i < n; i++) {
			t->p[t->len++] = digits[p[i] >> 4];
			t->p[t->len++] = digits[p[i] & 15];
		}
}

/* A name in Shoal's escaping (name_to_text), which every reader reads back. */
static void put_name(text_t *t, const uint8_t *name)
{
	int n = room(t, 1) ? name_to_text(name, t->p + t->len, t->cap - t->len) : -1;
	if (n < 0)
		t->full = true;
	else
		t->len += (size_t)n;
}

/* A type by its name when both readers know it, else TYPEnnn (RFC 3597 5). */
static void put_type(text_t *t, uint16_t type)
{
	const rdata_desc_t *d = find_named(type) ? rdata_desc(type) : NULL;
	if (d) {
		put(t, d->name, strlen(d->name));
	} else {
		put(t, "TYPE", 4);
		put_u32(t, type);
	}
}

/*
 * A <character-string> in quotes (RFC 1035 5.1): '"' and '\' as \X,
 * octets that are not printable as \DDD, the rest as they are.
 */
static void put_string(text_t *t, const uint8_t *s, size_t n)
{
	put_char(t, '"');
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		if (c == '"' || c == '\\') {
			put_char(t, '\\');
			put_char(t, (char)c);
		} else if (c < 0x20 || c >= 0x7f) {
			char ddd[4] = { '\\', (char)('0' + c / 100), (char)('0' + c / 10 % 10),
					(char)('0' + c % 10) };
			put(t, ddd, sizeof(ddd));
		} else {
			put_char(t, (char)c);
		}
	}
	put_char(t, '"');
}

/* Base64 (RFC 4648 4), as keys and signatures are written (RFC 4034 2.2, 3.2). */
static void put_base64(text_t *t, const uint8_t *p, size_t n)
{
	size_t need = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
	if (room(t, need)) {
		sodium_bin2base64(t->p + t->len, need, p, n, sodium_base64_VARIANT_ORIGINAL);
		t->len += need - 1; /* not its NUL */
	}
}

/* Base32 with the extended hex alphabet, unpadded (RFC 4648 7, RFC 5155 3.3). */
static void put_base32hex(text_t *t, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuv";
	uint32_t bits = 0;
	int have = 0;
	for (size_t i = 0; i < n; i++) {
		bits = bits << 8 | p[i];
		for (have += 8; have >= 5; have -= 5)
			put_char(t, digits[(bits >> (have - 5)) & 31]);
	}
	if (have > 0)
		put_char(t, digits[(bits << (5 - have)) & 31]);
}

/* An RRSIG time as YYYYMMDDHHmmSS (RFC 4034 3.2), which both readers read. */
static void put_time(text_t *t, uint32_t v)
{
	time_t when = (time_t)v;
	struct tm tm;
	char text[32];
	gmtime_r(&when, &tm);
	int n = snprintf(text, sizeof(text), "%04d%02d%02d%02d%02d%02d", tm.tm_year + 1900,
			 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	put(t, text, (size_t)n);
}

/*
 * Type bit maps (RFC 4034 4.1.2) as the types they hold. A reader writes
 * each window as short as its last type allows, so a window that ends in
 * a zero octet (or holds none) would come back other: false. So for none
 * at all: ldns wants a type after CSYNC's fields.
 */
static bool put_bitmap(text_t *t, wire_t *r)
{
	if (wire_left(r) == 0)
		return false;
	while (wire_left(r) > 0) {
		uint8_t window = wire_read_u8(r), n = wire_read_u8(r);
		const uint8_t *bits = wire_read_ptr(r, n);
		if (!bits || n == 0 || bits[n - 1] == 0)
			return false;
		for (unsigned i = 0; i < (unsigned)n * 8; i++)
			if (bits[i / 8] & (0x80 >> (i % 8))) {
				put_char(t, ' ');
				put_type(t, (uint16_t)(window << 8 | i));
			}
	}
	return !r->err;
}

/* A one-octet length and that many octets: an NSEC3 salt in hex, "-" for none (RFC 5155 3.3). */
static bool put_salt(text_t *t, wire_t *r)
{
	uint8_t n = wire_read_u8(r);
	const uint8_t *p = wire_read_ptr(r, n);
	if (!p)
		return false;
	if (n == 0)
		put_char(t, '-');
	put_hex(t, p, n);
	return true;
}

/* The rest of the RDATA in the type's form: at least one octet, as readers want a digit. */
static bool put_rest(text_t *t, wire_t *r, uint8_t form)
{
	size_t n = wire_left(r);
	const uint8_t *p = wire_read_ptr(r, n);
	if (!p || n == 0 || (form != RD_HEX && form != RD_BASE64))
		return false;
	if (form == RD_HEX)
		put_hex(t, p, n);
	else
		put_base64(t, p, n);
	return true;
}

/* One character-string, or (STRINGS) all up to the end with blanks between. */
static bool put_strings(text_t *t, wire_t *r, bool all)
{
	do {
		uint8_t n = wire_read_u8(r);
		const uint8_t *p = wire_read_ptr(r, n);
		if (!p)
			return false;
		put_string(t, p, n);
		if (all && wire_left(r) > 0)
			put_char(t, ' ');
	} while (all && wire_left(r) > 0);
	return true;
}

static bool put_name_field(text_t *t, wire_t *r)
{
	int n = rdata_name_length(r->buf, r->len, r->pos);
	if (n < 0)
		return false;
	put_name(t, r->buf + r->pos);
	wire_skip(r, (size_t)n);
	return true;
}

static bool put_address(text_t *t, wire_t *r, int family, size_t n)
{
	const uint8_t *p = wire_read_ptr(r, n);
	char text[INET6_ADDRSTRLEN];
	if (!p || !inet_ntop(family, p, text, sizeof(text)))
		return false;
	put(t, text, strlen(text));
	return true;
}

/*
 * Field `index` of type's RDATA, of kind f, at r. False when it has no
 * form both readers read back as the same octets (or is of a kind no
 * type written field by field has).
 */
static bool put_field(text_t *t, wire_t *r, uint16_t type, int index, enum rdata_field f,
		      uint8_t form)
{
	/* RFC 4034 3.2: an RRSIG's type covered by name, its two times as dates */
	bool rrsig = type == DNS_TYPE_RRSIG;
	switch (f) {
	case RDATA_U8:
		put_u32(t, wire_read_u8(r));
		return true;
	case RDATA_U16:
		if (rrsig && index == 0)
			put_type(t, wire_read_u16(r));
		else
			put_u32(t, wire_read_u16(r));
		return true;
	case RDATA_U32:
		if (rrsig && (index == 4 || index == 5))
			put_time(t, wire_read_u32(r));
		else
			put_u32(t, wire_read_u32(r));
		return true;
	case RDATA_A:
		return put_address(t, r, AF_INET, 4);
	case RDATA_AAAA:
		return put_address(t, r, AF_INET6, 16);
	case RDATA_NAME_C:
	case RDATA_NAME:
		return put_name_field(t, r);
	case RDATA_STRING:
	case RDATA_STRINGS:
		return put_strings(t, r, f == RDATA_STRINGS);
	case RDATA_SALT:
		return put_salt(t, r);
	case RDATA_HASH: {
		/* the scanner reads base32 in whole groups of 8 digits: 5 octets each */
		uint8_t n = wire_read_u8(r);
		const uint8_t *p = wire_read_ptr(r, n);
		if (p && n && n % 5 == 0)
			put_base32hex(t, p, n);
		return p && n && n % 5 == 0;
	}
	case RDATA_REST:
		return put_rest(t, r, form);
	case RDATA_BITMAP:
		return put_bitmap(t, r);
	default:
		return false;
	}
}

/* The RDATA field by field; false when some field has no form here. */
static bool put_fields(text_t *t, uint16_t type, uint8_t form, const uint8_t *rdata, uint16_t len)
{
	const rdata_desc_t *d = rdata_desc(type);
	wire_t r;
	wire_init_read(&r, rdata, len);
	for (int i = 0; d && i < RDATA_FIELDS_MAX && d->fields[i] != RDATA_END; i++) {
		/* a blank between fields; a bit map puts one before each of its types */
		if (i > 0 && d->fields[i] != RDATA_BITMAP)
			put_char(t, ' ');
		if (!put_field(t, &r, type, i, (enum rdata_field)d->fields[i], form))
			return false;
	}
	return d && !r.err && wire_left(&r) == 0 && !t->full;
}

/* RFC 3597 5: "\# N" and the octets in hex, a blank every RRTEXT_HEX_RUN octets. */
static void put_generic(text_t *t, const uint8_t *rdata, uint16_t len)
{
	put(t, "\\# ", 3);
	put_u32(t, len);
	for (size_t i = 0; i < len; i += RRTEXT_HEX_RUN) {
		put_char(t, ' ');
		put_hex(t, rdata + i, len - i < RRTEXT_HEX_RUN ? len - i : RRTEXT_HEX_RUN);
	}
}

int rrtext_write(char *dst, const uint8_t *owner, const uint8_t *rec)
{
	uint16_t type = wire_get_u16(rec), rclass = wire_get_u16(rec + 2);
	uint16_t len = wire_get_u16(rec + 8);
	const uint8_t *rdata = rec + 10;
	if (rdata_walk(type, rdata, len, NULL, 0, NULL) < 0)
		return SHOAL_EMALFORMED;
	text_t t = { .p = dst, .cap = RRTEXT_MAX };
	put_name(&t, owner);
	put_char(&t, '\t');
	put_u32(&t, wire_get_u32(rec + 4));
	if (rclass == DNS_CLASS_IN) {
		put(&t, "\tIN\t", 4);
	} else {
		put(&t, "\tCLASS", 6);
		put_u32(&t, rclass);
		put_char(&t, '\t');
	}
	put_type(&t, type);
	put_char(&t, '\t');
	size_t mark = t.len;
	const struct named *n = find_named(type);
	if (!n || n->form == RD_GENERIC || !put_fields(&t, type, n->form, rdata, len)) {
		/* back to the mark: the generic form always fits (RRTEXT_MAX) */
		t.len = mark;
		t.full = false;
		put_generic(&t, rdata, len);
	}
	put_char(&t, '\n');
	assert(!t.full);
	return (int)t.len;
}
