/* SPDX-License-Identifier: GPL-3.0-or-later */
/* TSIG (RFC 8945): keys, finding the TSIG RR, the digest chain, sign and verify. */
#include <assert.h>
#include <nettle/sha1.h>
#include <nettle/sha2.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "proto/dns.h"
#include "proto/tsig.h"

#define TSIG_TIMERS_LEN 8 /* Time Signed (48 bits) and Fudge */

/*
 * The HMACs come from nettle, not from a hand-written hash: libsodium,
 * which Shoal uses for the rest, has HMAC-SHA256 and HMAC-SHA512 alone.
 * nettle rather than GnuTLS's gnutls_hmac: GnuTLS's state is an opaque
 * handle it allocates, and a copy of a keyed state (what every TSIG
 * transaction starts from, tsig_init) would be an allocation that can fail
 * and must be freed; nettle's states are plain structs, copied as
 * libsodium's were, with no error path. nettle is GnuTLS's own crypto
 * library, kept by the same people, and already in the dependency tree of
 * libknot-dev (libknot13 -> libgnutls30 -> libnettle8).
 *
 * X(enum, name, nettle's hmac_<name>_ functions, member of tsig_hmac_t,
 * MAC length): the algorithms of RFC 8945 6 but HMAC-MD5, one line each.
 */
#define TSIG_ALGORITHMS(X)                                                         \
	X(TSIG_HMAC_SHA1, "\x09hmac-sha1", sha1, sha1, SHA1_DIGEST_SIZE)           \
	X(TSIG_HMAC_SHA224, "\x0bhmac-sha224", sha224, sha256, SHA224_DIGEST_SIZE) \
	X(TSIG_HMAC_SHA256, "\x0bhmac-sha256", sha256, sha256, SHA256_DIGEST_SIZE) \
	X(TSIG_HMAC_SHA384, "\x0bhmac-sha384", sha384, sha512, SHA384_DIGEST_SIZE) \
	X(TSIG_HMAC_SHA512, "\x0bhmac-sha512", sha512, sha512, SHA512_DIGEST_SIZE)

/* nettle's functions of one algorithm, on the member of tsig_hmac_t it uses */
#define ALG_FUNCTIONS(id, wire, fn, member, size)                                  \
	static void tsig_##fn##_key(tsig_hmac_t *h, const uint8_t *key, size_t n)  \
	{                                                                          \
		hmac_##fn##_set_key(&h->member, n, key);                           \
	}                                                                          \
	static void tsig_##fn##_update(tsig_hmac_t *h, const uint8_t *p, size_t n) \
	{                                                                          \
		hmac_##fn##_update(&h->member, n, p);                              \
	}                                                                          \
	static void tsig_##fn##_digest(tsig_hmac_t *h, uint8_t mac[TSIG_MAC_MAX])  \
	{                                                                          \
		hmac_##fn##_digest(&h->member, size, mac);                         \
	}                                                                          \
	static_assert(size <= TSIG_MAC_MAX, "every MAC fits mac[TSIG_MAC_MAX]");
TSIG_ALGORITHMS(ALG_FUNCTIONS)
#undef ALG_FUNCTIONS

/* One algorithm: its name in wire form (RFC 8945 6, table 3), MAC length and HMAC. */
typedef struct tsig_algorithm {
	const uint8_t *wire;
	uint8_t mac_len;
	void (*key)(tsig_hmac_t *h, const uint8_t *key, size_t n);
	void (*update)(tsig_hmac_t *h, const uint8_t *p, size_t n);
	void (*digest)(tsig_hmac_t *h, uint8_t mac[TSIG_MAC_MAX]);
} tsig_algorithm_t;

#define ALG_ENTRY(id, wire, fn, member, size)                                      \
	[id] = { (const uint8_t *)wire, size, tsig_##fn##_key, tsig_##fn##_update, \
		 tsig_##fn##_digest },
static const tsig_algorithm_t algorithms[] = { TSIG_ALGORITHMS(ALG_ENTRY) };
#undef ALG_ENTRY
#define ALG_LAST ((int)(sizeof(algorithms) / sizeof(algorithms[0])) - 1)

/* The entry of alg, which a key holds and so is one of the table. */
static const tsig_algorithm_t *algorithm(enum tsig_alg alg)
{
	assert((int)alg >= 1 && (int)alg <= ALG_LAST && algorithms[alg].wire);
	return &algorithms[alg];
}

static const uint8_t *alg_wire(enum tsig_alg alg)
{
	return algorithm(alg)->wire;
}

static void mac_update(enum tsig_alg alg, tsig_hmac_t *h, const uint8_t *p, size_t n)
{
	algorithm(alg)->update(h, p, n);
}

static void mac_final(enum tsig_alg alg, tsig_hmac_t *h, uint8_t mac[TSIG_MAC_MAX])
{
	algorithm(alg)->digest(h, mac);
}

static void put_u48(uint8_t *p, uint64_t v)
{
	for (int i = 5; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

int tsig_alg_from_text(const char *text)
{
	size_t n = strlen(text);
	if (n > 0 && text[n - 1] == '.')
		n--;
	for (int a = 1; a <= ALG_LAST; a++) {
		const uint8_t *w = algorithms[a].wire;
		if (w && n == w[0] && strncasecmp(text, (const char *)w + 1, n) == 0)
			return a;
	}
	return SHOAL_EUNSUPPORTED;
}

const char *tsig_alg_name(enum tsig_alg alg)
{
	/* the wire form's one label, NUL-ended by the root label after it */
	return (const char *)alg_wire(alg) + 1;
}

int tsig_key_set(tsig_key_t *key, const uint8_t *name, enum tsig_alg alg, const uint8_t *secret,
		 size_t secret_len)
{
	sodium_memzero(key, sizeof(*key));
	if ((int)alg < 1 || (int)alg > ALG_LAST || !algorithms[alg].wire || secret_len == 0)
		return SHOAL_EINVAL;
	size_t n = name_length(name);
	memcpy(key->name, name, n);
	name_lower(key->name);
	key->name_len = (uint8_t)n;
	key->alg = alg;
	/* HMAC (RFC 2104) hashes a secret longer than a block first: any length works */
	algorithm(alg)->key(&key->keyed, secret, secret_len);
	key->mac_len = algorithm(alg)->mac_len;
	key->mac_min = key->mac_len;
	return 0;
}

int tsig_key_init(tsig_key_t *key, const char *name, const char *alg, const char *secret_b64)
{
	uint8_t wire_name[NAME_MAXLEN];
	uint8_t secret[TSIG_SECRET_MAX];
	size_t secret_len = 0, digits = 0;
	int ret;

	sodium_memzero(key, sizeof(*key));
	if (name_from_text(name, NULL, wire_name) < 0)
		return SHOAL_ENAME;
	int a = tsig_alg_from_text(alg);
	if (a < 0)
		return a;
	for (const char *p = secret_b64; *p; p++)
		digits += strchr(" \t\r\n", *p) == NULL;
	/* four base64 digits make three octets: refuse what cannot fit first */
	if (digits / 4 * 3 > TSIG_SECRET_MAX) {
		ret = SHOAL_EINVAL;
		goto done;
	}
	if (sodium_base642bin(secret, sizeof(secret), secret_b64, strlen(secret_b64), " \t\r\n",
			      &secret_len, NULL, sodium_base64_VARIANT_ORIGINAL) != 0) {
		ret = SHOAL_ESYNTAX;
		goto done;
	}
	ret = tsig_key_set(key, wire_name, (enum tsig_alg)a, secret, secret_len);
done:
	sodium_memzero(secret, sizeof(secret));
	return ret;
}

void tsig_key_clear(tsig_key_t *key)
{
	sodium_memzero(key, sizeof(*key));
}

const tsig_key_t *tsig_key_find(const tsig_key_t *keys, size_t count, const uint8_t *name)
{
	for (size_t i = 0; i < count; i++)
		if (name_equal(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/*
 * Read an uncompressed name (RFC 8945 4.2: the algorithm name must not be
 * compressed, as RFC 3597 4 asks of names in new RDATA) into dst, lowercased.
 */
static int read_plain_name(wire_t *w, uint8_t dst[NAME_MAXLEN])
{
	size_t out = 0;
	for (;;) {
		uint8_t c = wire_read_u8(w);
		const uint8_t *label = wire_read_ptr(w, c & 0x3f);
		if (w->err || (c & 0xc0) || out + 1 + c > NAME_MAXLEN)
			return SHOAL_EMALFORMED;
		dst[out++] = c;
		memcpy(dst + out, label, c);
		out += c;
		if (c == 0)
			break;
	}
	name_lower(dst);
	return 0;
}

/* Parse the TSIG RR at msg[start..len), which the caller found to be the last record. */
static int parse_tsig(const uint8_t *msg, size_t len, size_t start, tsig_rr_t *rr)
{
	wire_t w;
	wire_init_read(&w, msg, len);
	wire_seek(&w, start);
	rr->offset = start;
	/* the owner is an ordinary owner name: compression allowed (ldns does compress it) */
	if (name_unpack(&w, rr->name, true) < 0)
		return SHOAL_EMALFORMED;
	wire_skip(&w, 2); /* the type, TSIG */
	uint16_t rrclass = wire_read_u16(&w);
	uint32_t ttl = wire_read_u32(&w);
	uint16_t rdlen = wire_read_u16(&w);
	const uint8_t *rdata = wire_read_ptr(&w, rdlen);
	/* RFC 8945 4.2: class ANY, TTL 0; nothing may follow, unsigned, after it */
	if (w.err || rrclass != DNS_CLASS_ANY || ttl != 0 || w.pos != len)
		return SHOAL_EMALFORMED;

	wire_t rd;
	wire_init_read(&rd, rdata, rdlen);
	if (read_plain_name(&rd, rr->alg_name) < 0)
		return SHOAL_EMALFORMED;
	uint64_t time_high = wire_read_u16(&rd);
	rr->time_signed = time_high << 32 | wire_read_u32(&rd);
	rr->fudge = wire_read_u16(&rd);
	rr->mac_len = wire_read_u16(&rd);
	rr->mac = wire_read_ptr(&rd, rr->mac_len);
	rr->original_id = wire_read_u16(&rd);
	rr->error = wire_read_u16(&rd);
	rr->other_len = wire_read_u16(&rd);
	rr->other = wire_read_ptr(&rd, rr->other_len);
	if (rd.err || wire_left(&rd) != 0)
		return SHOAL_EMALFORMED;
	return 0;
}

int tsig_find(const uint8_t *msg, size_t len, tsig_rr_t *rr)
{
	wire_t w;
	wire_init_read(&w, msg, len);
	wire_skip(&w, 4); /* ID, flags */
	uint16_t qdcount = wire_read_u16(&w);
	uint32_t records = wire_read_u16(&w);
	records += wire_read_u16(&w);
	uint16_t arcount = wire_read_u16(&w);
	records += arcount;
	for (uint16_t i = 0; i < qdcount && !w.err; i++) {
		name_skip(&w);
		wire_skip(&w, 4);
	}
	for (uint32_t i = 0; i < records; i++) {
		size_t start = w.pos;
		name_skip(&w);
		uint16_t type = wire_read_u16(&w);
		wire_skip(&w, 6); /* class, TTL */
		uint16_t rdlen = wire_read_u16(&w);
		wire_skip(&w, rdlen);
		if (w.err)
			return SHOAL_EMALFORMED;
		if (type == DNS_TYPE_TSIG) {
			/* RFC 8945 5.2: one TSIG RR, the last of the additional section */
			if (i + 1 != records || arcount == 0)
				return SHOAL_EMALFORMED;
			return parse_tsig(msg, len, start, rr);
		}
	}
	return w.err ? SHOAL_EMALFORMED : SHOAL_ENOTFOUND;
}

void tsig_init(tsig_ctx_t *ctx, const tsig_key_t *key, uint16_t fudge)
{
	memset(ctx, 0, sizeof(*ctx));
	ctx->key = key;
	ctx->fudge = fudge;
	if (key)
		ctx->running = key->keyed;
}

/*
 * Digest a message as it is without its TSIG RR (RFC 8945 4.3.3): msg[0..end)
 * with the Original ID for the ID and the ARCOUNT that does not count the TSIG.
 */
static void digest_message(enum tsig_alg alg, tsig_hmac_t *h, const uint8_t *msg, size_t end,
			   uint16_t id, uint16_t arcount)
{
	assert(end >= DNS_HEADER_SIZE); /* the TSIG RR follows a header */
	uint8_t header[DNS_HEADER_SIZE];
	memcpy(header, msg, sizeof(header));
	header[0] = (uint8_t)(id >> 8);
	header[1] = (uint8_t)id;
	header[10] = (uint8_t)(arcount >> 8);
	header[11] = (uint8_t)arcount;
	mac_update(alg, h, header, sizeof(header));
	mac_update(alg, h, msg + DNS_HEADER_SIZE, end - DNS_HEADER_SIZE);
}

/* The TSIG fields a digest covers: all variables (RFC 8945 4.3.3), or the timers only (5.3.1). */
typedef struct tsig_vars {
	const uint8_t *name;
	const uint8_t *alg_name;
	uint64_t time_signed;
	uint16_t fudge;
	uint16_t error;
	uint16_t other_len;
	const uint8_t *other;
} tsig_vars_t;

static void digest_vars(enum tsig_alg alg, tsig_hmac_t *h, const tsig_vars_t *v, bool timers_only)
{
	uint8_t buf[2 * NAME_MAXLEN + 18]; /* both names, class, TTL, timers, error, other len */
	wire_t w;
	wire_init_write(&w, buf, sizeof(buf));
	if (!timers_only) {
		/* names in canonical form (RFC 4034 6.2): both are kept lowercased */
		wire_write_bytes(&w, v->name, name_length(v->name));
		wire_write_u16(&w, DNS_CLASS_ANY);
		wire_write_u32(&w, 0); /* TTL */
		wire_write_bytes(&w, v->alg_name, name_length(v->alg_name));
	}
	wire_write_u16(&w, (uint16_t)(v->time_signed >> 32));
	wire_write_u32(&w, (uint32_t)v->time_signed);
	wire_write_u16(&w, v->fudge);
	if (!timers_only) {
		wire_write_u16(&w, v->error);
		wire_write_u16(&w, v->other_len);
	}
	assert(!w.err); /* buf holds two names and the fixed fields */
	mac_update(alg, h, buf, w.pos);
	if (!timers_only && v->other_len)
		mac_update(alg, h, v->other, v->other_len);
}

/* Take mac as the prior MAC of what follows: the running digest starts with it (5.3.1). */
static void chain(tsig_ctx_t *ctx, const uint8_t *mac, uint16_t mac_len)
{
	assert(ctx->key && mac_len <= TSIG_MAC_MAX);
	uint8_t len[2] = { (uint8_t)(mac_len >> 8), (uint8_t)mac_len };
	ctx->running = ctx->key->keyed;
	mac_update(ctx->key->alg, &ctx->running, len, 2);
	mac_update(ctx->key->alg, &ctx->running, mac, mac_len);
	ctx->unsigned_run = 0;
	ctx->phase = ctx->phase == TSIG_PHASE_REQUEST ? TSIG_PHASE_FIRST : TSIG_PHASE_NEXT;
}

static int fail(tsig_ctx_t *ctx, uint16_t error, bool peer)
{
	ctx->error = error;
	ctx->peer_error = peer;
	return SHOAL_ETSIG;
}

/* A message without TSIG: part of the next signed message's digest (5.3.1). */
static int absorb_unsigned(tsig_ctx_t *ctx, const uint8_t *msg, size_t len)
{
	if (ctx->phase != TSIG_PHASE_NEXT || ctx->unsigned_run >= TSIG_UNSIGNED_MAX)
		return fail(ctx, DNS_TSIG_BADSIG, false);
	assert(ctx->key); /* past the first signed message: verified with it */
	mac_update(ctx->key->alg, &ctx->running, msg, len);
	ctx->unsigned_run++;
	return 0;
}

int tsig_verify(tsig_ctx_t *ctx, const uint8_t *msg, size_t len, const tsig_rr_t *rr, uint64_t now)
{
	tsig_rr_t found;
	ctx->error = DNS_TSIG_NOERROR;
	ctx->peer_error = false;
	if (!rr) {
		int ret = tsig_find(msg, len, &found);
		if (ret == SHOAL_ENOTFOUND)
			return absorb_unsigned(ctx, msg, len);
		if (ret < 0)
			return ret;
		rr = &found;
	}
	if (rr->offset < DNS_HEADER_SIZE || rr->offset > len)
		return SHOAL_EINVAL; /* rr is not this message's */
	bool request = ctx->phase == TSIG_PHASE_REQUEST;
	if (request) {
		/* kept for the answer's TSIG RR, which an unknown key cannot sign */
		memcpy(ctx->request_name, rr->name, name_length(rr->name));
		memcpy(ctx->request_alg, rr->alg_name, name_length(rr->alg_name));
		ctx->request_time = rr->time_signed;
	}

	/* RFC 8945 5.2.1: a key we have, under its own algorithm */
	const tsig_key_t *key = ctx->key;
	if (!key || !name_equal(rr->name, key->name) ||
	    !name_equal(rr->alg_name, alg_wire(key->alg)))
		return fail(ctx, DNS_TSIG_BADKEY, false);
	/*
	 * 5.3.2: a peer's error answer about our key or MAC comes unsigned, and
	 * one about the time or truncation may (SHOULD be signed, not MUST)
	 */
	if (!request && rr->mac_len == 0 && rr->error != DNS_TSIG_NOERROR)
		return fail(ctx, rr->error, true);
	/* 5.2.2.1: longer than the hash, or shorter than max(10, half of it): FORMERR */
	unsigned shortest = key->mac_len / 2 > 10 ? key->mac_len / 2 : 10;
	if (rr->mac_len > key->mac_len || rr->mac_len < shortest)
		return SHOAL_EMALFORMED;

	/* 5.2.2: the MAC, over the octets sent when truncated (5.2.2.1 rule 4) */
	tsig_hmac_t h = ctx->running;
	digest_message(key->alg, &h, msg, rr->offset, rr->original_id,
		       (uint16_t)(wire_get_u16(msg + 10) - 1));
	tsig_vars_t v = { rr->name,  rr->alg_name,  rr->time_signed, rr->fudge,
			  rr->error, rr->other_len, rr->other };
	digest_vars(key->alg, &h, &v, ctx->phase == TSIG_PHASE_NEXT);
	uint8_t mac[TSIG_MAC_MAX];
	mac_final(key->alg, &h, mac);
	int differ = sodium_memcmp(mac, rr->mac, rr->mac_len);
	sodium_memzero(&h, sizeof(h));
	if (differ)
		return fail(ctx, DNS_TSIG_BADSIG, false);
	chain(ctx, rr->mac, rr->mac_len);

	/* a signed error answer (BADTIME, BADTRUNC) reports the peer's finding */
	if (!request && rr->error != DNS_TSIG_NOERROR)
		return fail(ctx, rr->error, true);
	/* 5.2.3: now within Time Signed +- Fudge */
	uint64_t skew = now > rr->time_signed ? now - rr->time_signed : rr->time_signed - now;
	if (skew > rr->fudge)
		return fail(ctx, DNS_TSIG_BADTIME, false);
	/* 5.2.4: a truncation RFC 8945 allows, but our policy does not */
	if (rr->mac_len < key->mac_min)
		return fail(ctx, DNS_TSIG_BADTRUNC, false);
	return 0;
}

int tsig_verify_end(tsig_ctx_t *ctx)
{
	if (ctx->phase != TSIG_PHASE_NEXT || ctx->unsigned_run > 0)
		return fail(ctx, DNS_TSIG_BADSIG, false);
	return 0;
}

/* 5.3.2: errors about the key or the MAC are answered with an unsigned TSIG RR. */
static bool unsigned_error(const tsig_ctx_t *ctx)
{
	return ctx->error == DNS_TSIG_BADKEY || ctx->error == DNS_TSIG_BADSIG;
}

size_t tsig_space(const tsig_ctx_t *ctx)
{
	bool bare = unsigned_error(ctx) || !ctx->key;
	const uint8_t *name = bare ? ctx->request_name : ctx->key->name;
	const uint8_t *alg = bare ? ctx->request_alg : alg_wire(ctx->key->alg);
	/* owner, type, class, TTL, RDLENGTH; algorithm, timers, MAC size,
	 * MAC, Original ID, Error, Other Len and 6 octets of Other Data */
	return name_length(name) + 10 + name_length(alg) + 8 + 2 + (bare ? 0 : ctx->key->mac_len) +
	       6 + 6;
}

int tsig_sign(tsig_ctx_t *ctx, uint8_t *msg, size_t len, size_t cap, uint64_t now)
{
	bool bare = unsigned_error(ctx);
	if (len < DNS_HEADER_SIZE || len > cap || (!bare && !ctx->key))
		return SHOAL_EINVAL;
	uint16_t id = wire_get_u16(msg);
	uint16_t arcount = wire_get_u16(msg + 10);
	if (arcount == UINT16_MAX)
		return SHOAL_EINVAL;

	uint8_t other[6];
	tsig_vars_t v = { bare ? ctx->request_name : ctx->key->name,
			  bare ? ctx->request_alg : alg_wire(ctx->key->alg),
			  now,
			  ctx->fudge,
			  ctx->error,
			  0,
			  other };
	if (ctx->error == DNS_TSIG_BADTIME) {
		/* 5.2.3: the request's time, so the client can verify; ours in Other Data */
		v.time_signed = ctx->request_time;
		put_u48(other, now);
		v.other_len = sizeof(other);
	}
	uint8_t mac[TSIG_MAC_MAX];
	uint16_t mac_len = 0;
	if (!bare) {
		tsig_hmac_t h = ctx->running;
		digest_message(ctx->key->alg, &h, msg, len, id, arcount);
		digest_vars(ctx->key->alg, &h, &v, ctx->phase == TSIG_PHASE_NEXT);
		mac_final(ctx->key->alg, &h, mac);
		sodium_memzero(&h, sizeof(h));
		mac_len = ctx->key->mac_len;
	}

	wire_t w;
	wire_init_write(&w, msg + len, cap - len);
	/* written uncompressed, as BIND and Knot write it */
	wire_write_bytes(&w, v.name, name_length(v.name));
	wire_write_u16(&w, DNS_TYPE_TSIG);
	wire_write_u16(&w, DNS_CLASS_ANY);
	wire_write_u32(&w, 0);
	size_t rdlen_at = w.pos;
	wire_write_u16(&w, 0);
	wire_write_bytes(&w, v.alg_name, name_length(v.alg_name));
	wire_write_u16(&w, (uint16_t)(v.time_signed >> 32));
	wire_write_u32(&w, (uint32_t)v.time_signed);
	wire_write_u16(&w, v.fudge);
	wire_write_u16(&w, mac_len);
	wire_write_bytes(&w, mac, mac_len);
	wire_write_u16(&w, id);
	wire_write_u16(&w, v.error);
	wire_write_u16(&w, v.other_len);
	wire_write_bytes(&w, other, v.other_len);
	wire_put_u16_at(&w, rdlen_at, (uint16_t)(w.pos - rdlen_at - 2));
	if (w.err)
		return SHOAL_ESPACE;
	msg[10] = (uint8_t)((arcount + 1) >> 8);
	msg[11] = (uint8_t)(arcount + 1);
	if (!bare)
		chain(ctx, mac, mac_len);
	return (int)(len + w.pos);
}

const char *tsig_answer_text(const uint8_t *msg, size_t len, char buf[TSIG_ANSWER_TEXT_MAX])
{
	char rt[DNS_RCODE_TEXT_MAX], et[DNS_RCODE_TEXT_MAX];
	const char *rcode =
		len >= DNS_HEADER_SIZE ? dns_rcode_name(msg[3] & DNS_RCODE_MASK, rt) : "?";
	tsig_rr_t rr;
	if (tsig_find(msg, len, &rr) == 0 && rr.error != DNS_TSIG_NOERROR)
		snprintf(buf, TSIG_ANSWER_TEXT_MAX, "%s, TSIG error %s", rcode,
			 dns_tsig_error_name(rr.error, et));
	else
		snprintf(buf, TSIG_ANSWER_TEXT_MAX, "%s", rcode);
	return buf;
}

const char *tsig_verify_text(const tsig_ctx_t *ctx, int err, char buf[DNS_RCODE_TEXT_MAX])
{
	if (err == SHOAL_EMALFORMED)
		return "malformed";
	return dns_tsig_error_name(ctx->error, buf);
}
