/* SPDX-License-Identifier: GPL-3.0-or-later */
/* TSIG (RFC 8945): keys, and signing and verifying messages and message streams. */
#ifndef SHOAL_PROTO_TSIG_H
#define SHOAL_PROTO_TSIG_H

#include <nettle/hmac.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/dns.h"
#include "proto/name.h"

/*
 * The algorithms are those of RFC 8945 6 but HMAC-MD5 (which it says must
 * not be used): HMAC-SHA1 (mandatory to implement, NOT RECOMMENDED, and
 * what many existing primaries still sign with), HMAC-SHA224, HMAC-SHA256
 * (mandatory, RECOMMENDED: BIND's tsig-keygen and Knot's keymgr make it by
 * default), HMAC-SHA384 and HMAC-SHA512; computed by nettle, GnuTLS's own
 * crypto library, whose HMAC states are plain structs: a keyed state is
 * copied, never allocated (see proto/tsig.c).
 *
 * Nothing here allocates or keeps global state: keys, parsed records and
 * contexts live in caller memory, so threads share keys (read only) and
 * give each transaction its own context. Times are seconds since the epoch
 * (time(NULL)); TSIG carries them in 48 bits.
 */
enum tsig_alg {
	TSIG_HMAC_SHA256 = 1,
	TSIG_HMAC_SHA512 = 2,
	TSIG_HMAC_SHA1 = 3,
	TSIG_HMAC_SHA224 = 4,
	TSIG_HMAC_SHA384 = 5,
};

#define TSIG_MAC_MAX       64   /* HMAC-SHA512 */
#define TSIG_FUDGE_DEFAULT 300  /* seconds, as BIND, Knot and ldns sign */
#define TSIG_UNSIGNED_MAX  99   /* RFC 8945 5.3.1: unsigned messages in a row */
#define TSIG_SECRET_MAX    1024 /* octets a base64 secret may decode to */

/*
 * The longest TSIG RR tsig_sign appends: the longest key name as owner;
 * type, class, TTL, RDLENGTH; the longest algorithm name (an error answer
 * echoes the request's); Time Signed, Fudge, MAC Size, the longest MAC,
 * Original ID, Error, Other Len and the 6 octets of a BADTIME's Other Data
 * (RFC 8945 4.2). At least tsig_space of any context.
 */
#define TSIG_RR_MAX (NAME_MAXLEN + 10 + NAME_MAXLEN + 10 + TSIG_MAC_MAX + 6 + 6)

/*
 * An HMAC state keyed with a secret, for any algorithm (nettle's:
 * HMAC-SHA224 runs on the SHA-256 state, HMAC-SHA384 on the SHA-512 one).
 */
typedef union tsig_hmac {
	struct hmac_sha1_ctx sha1;
	struct hmac_sha256_ctx sha256;
	struct hmac_sha512_ctx sha512;
} tsig_hmac_t;

/*
 * A shared secret (RFC 8945 2). The secret itself is not kept: `keyed` is
 * the HMAC state after the secret went in (its ipad and opad blocks), which
 * is all a MAC needs and takes any secret length. It is as secret as the
 * secret: clear it with tsig_key_clear. Read only once set up, so any
 * number of threads may use one key at once.
 */
typedef struct tsig_key {
	uint8_t name[NAME_MAXLEN]; /* key name, wire form, lowercased */
	uint8_t name_len;
	enum tsig_alg alg;
	uint8_t mac_len; /* the algorithm's full MAC length: 20, 28, 32, 48 or 64 */
	/*
	 * Local policy of RFC 8945 5.2.4: the shortest MAC accepted. Set to
	 * mac_len (no truncation) by tsig_key_init; a caller may lower it, down
	 * to the floor of RFC 8945 5.2.2.1 (max(10, mac_len / 2)).
	 */
	uint8_t mac_min;
	tsig_hmac_t keyed;
} tsig_key_t;

/*
 * Parse an algorithm name, "hmac-sha1", "hmac-sha224", "hmac-sha256",
 * "hmac-sha384" or "hmac-sha512", with or without the final dot, in any
 * case. Returns the enum tsig_alg value, or SHOAL_EUNSUPPORTED for any
 * other name (hmac-md5 included).
 */
int tsig_alg_from_text(const char *text);

/* The algorithm's name as in configuration ("hmac-sha256"); static storage. */
const char *tsig_alg_name(enum tsig_alg alg);

/*
 * Set up key from configuration text: name ("xfr-key" or "xfr-key."),
 * algorithm (as tsig_alg_from_text) and the secret in base64 (RFC 4648,
 * padded; spaces and line ends are ignored). Returns 0; SHOAL_ENAME for a
 * bad name, SHOAL_EUNSUPPORTED for an unknown algorithm, SHOAL_ESYNTAX for
 * a secret that is not base64, SHOAL_EINVAL for an empty secret or one of
 * more than TSIG_SECRET_MAX octets. On error key is cleared. The decoded
 * secret is wiped before returning.
 */
int tsig_key_init(tsig_key_t *key, const char *name, const char *alg, const char *secret_b64);

/*
 * Set up key from binary parts: name in uncompressed wire form, the
 * algorithm, and secret_len octets of secret (any length above 0). Returns
 * 0, or SHOAL_EINVAL (unknown algorithm, empty secret).
 */
int tsig_key_set(tsig_key_t *key, const uint8_t *name, enum tsig_alg alg, const uint8_t *secret,
		 size_t secret_len);

/* Wipe a key (sodium_memzero), so no copy of the keyed state is left. */
void tsig_key_clear(tsig_key_t *key);

/*
 * The key called name (uncompressed wire form, any case) among keys[0..count),
 * or NULL. Keys are told apart by name only: RFC 8945 5.2 advises one
 * algorithm per key name.
 */
const tsig_key_t *tsig_key_find(const tsig_key_t *keys, size_t count, const uint8_t *name);

/*
 * A TSIG RR found in a received message (RFC 8945 4.2). The MAC and Other
 * Data point into the message, which must outlive the struct.
 */
typedef struct tsig_rr {
	size_t offset;                 /* where the RR starts: the message without it */
	uint8_t name[NAME_MAXLEN];     /* key name, uncompressed, lowercased */
	uint8_t alg_name[NAME_MAXLEN]; /* algorithm name, lowercased */
	uint64_t time_signed;          /* 48 bits */
	uint16_t fudge;
	uint16_t mac_len;
	const uint8_t *mac;
	uint16_t original_id;
	uint16_t error; /* enum dns_tsig_error */
	uint16_t other_len;
	const uint8_t *other;
} tsig_rr_t;

/*
 * Find the TSIG RR of msg[0..len) and parse it into rr. RFC 8945 5.2: a
 * TSIG RR must be the last record of the additional section and there must
 * be only one; its class is ANY and its TTL 0 (4.2). The owner name may be
 * compressed; the algorithm name may not (4.2). Every read is bounds
 * checked, whatever the counts in the header claim.
 * Returns 0 when found; SHOAL_ENOTFOUND when the message has no TSIG RR
 * (bytes after the counted records are then ignored, as query_parse does);
 * SHOAL_EMALFORMED when the message does not parse, a TSIG RR is anywhere
 * but last, or it is malformed or followed by more bytes: the caller
 * answers FORMERR (RFC 8945 5.2).
 */
int tsig_find(const uint8_t *msg, size_t len, tsig_rr_t *rr);

/* Where a transaction is (see tsig_ctx_t). */
enum tsig_phase {
	TSIG_PHASE_REQUEST = 0, /* nothing signed or verified yet */
	TSIG_PHASE_FIRST = 1,   /* the request is done: next is the first response */
	TSIG_PHASE_NEXT = 2,    /* a response is done: next is a following message */
};

/*
 * One TSIG transaction: a request and its responses, one message or a
 * stream of them (a zone transfer, RFC 8945 5.3.1), signed on one side and
 * verified on the other with the same key. Lives in caller memory (1.2 KB),
 * one per transaction; not shared between threads. The digest chain is:
 *   request:           request message | TSIG variables        (4.3.1, 4.3.3)
 *   first response:    request MAC | response | TSIG variables (4.3.2)
 *   following:         prior MAC | messages since | TSIG timers (5.3.1)
 *
 * Server: tsig_find, look the key up by rr.name (tsig_key_find or its own
 * table), tsig_init(ctx, key or NULL, fudge), tsig_verify; then write the
 * answer (with RCODE NOTAUTH when ctx->error is set) and tsig_sign it, and
 * tsig_sign every further message of a transfer. After SHOAL_EMALFORMED
 * (from either) the answer is FORMERR without a TSIG RR.
 * Client: tsig_init, tsig_sign the request; tsig_verify each message of
 * the response, then tsig_verify_end.
 */
typedef struct tsig_ctx {
	const tsig_key_t *key; /* NULL: the request named no key we have */
	uint16_t fudge;        /* written into the RRs this context signs */
	enum tsig_phase phase;
	/* after a failed tsig_verify (SHOAL_ETSIG): enum dns_tsig_error */
	uint16_t error;
	bool peer_error;                   /* error came in the peer's answer, not from our check */
	uint8_t unsigned_run;              /* unsigned messages since the last signed one */
	uint64_t request_time;             /* Time Signed of the request (BADTIME answers) */
	uint8_t request_name[NAME_MAXLEN]; /* the request's key and algorithm */
	uint8_t request_alg[NAME_MAXLEN];  /* names, for BADKEY answers */
	/* keyed, then the prior MAC (the request's, then the last one) and what followed it */
	tsig_hmac_t running;
} tsig_ctx_t;

/*
 * Start a transaction with key (kept, not copied: it must outlive ctx; NULL
 * on a server whose lookup failed, which verifies to BADKEY) and the fudge
 * to sign with (TSIG_FUDGE_DEFAULT unless configured).
 */
void tsig_init(tsig_ctx_t *ctx, const tsig_key_t *key, uint16_t fudge);

/*
 * Verify the next received message of the transaction: the request on a
 * server, each message of the response on a client. rr is msg's TSIG RR
 * from tsig_find, or NULL to have it found here. Checks, in the order of
 * RFC 8945 5.2: the key (known, same name and algorithm: else BADKEY), the
 * MAC size (5.2.2.1: above the algorithm's or below max(10, half of it):
 * FORMERR), the MAC (compared in constant time over the octets sent: else
 * BADSIG), the time (now within Time Signed +- Fudge: else BADTIME), then
 * the local truncation policy (key->mac_min: else BADTRUNC). The MAC of the
 * request is kept for the answer's digest, truncated as it came (5.2.2.1).
 * After the first response, a message without TSIG is added to the digest
 * and accepted, up to TSIG_UNSIGNED_MAX in a row (5.3.1); following signed
 * messages are checked with the timers only.
 * Returns 0 when the message verified (or was an accepted unsigned one);
 * SHOAL_EMALFORMED when its TSIG RR is malformed or misplaced (answer
 * FORMERR); SHOAL_ETSIG when a check failed: ctx->error holds the TSIG
 * error, also for a first message without TSIG and for the 100th unsigned
 * one in a row (both BADSIG), and peer_error tells when it is the error a
 * response carried rather than our own finding (a peer's unsigned error
 * answer of MAC size 0 is reported so, not as FORMERR).
 * A server answers NOTAUTH after SHOAL_ETSIG and signs the answer with
 * tsig_sign, which makes the TSIG RR the error calls for (5.3.2): unsigned
 * for BADKEY and BADSIG, signed for BADTIME and BADTRUNC.
 */
int tsig_verify(tsig_ctx_t *ctx, const uint8_t *msg, size_t len, const tsig_rr_t *rr, uint64_t now);

/*
 * After the last message of a response stream: 0 when it was signed,
 * SHOAL_ETSIG (error BADSIG) when it was not or nothing verified yet
 * (RFC 8945 5.3.1: the first and last messages must carry a TSIG).
 */
int tsig_verify_end(tsig_ctx_t *ctx);

/*
 * Sign the next message of the transaction, msg[0..len) in a buffer of cap
 * octets, as the server's answer to a verified request (and every further
 * message of a stream) or as the client's request: append the TSIG RR and
 * add one to ARCOUNT. The Original ID is msg's ID. After a failed
 * tsig_verify the RR carries ctx->error: with MAC size 0 for BADKEY and
 * BADSIG; for BADTIME the request's Time Signed and our time in Other Data
 * (RFC 8945 5.2.3). Returns the new length; SHOAL_ESPACE when the RR does
 * not fit (msg is then unchanged; tsig_space says how much to keep free);
 * SHOAL_EINVAL when msg is shorter than a header or ARCOUNT is full, or a
 * client context has no key.
 */
int tsig_sign(tsig_ctx_t *ctx, uint8_t *msg, size_t len, size_t cap, uint64_t now);

/* The most octets the next tsig_sign(ctx, ...) appends. */
size_t tsig_space(const tsig_ctx_t *ctx);

/*
 * Why tsig_verify or tsig_verify_end returned err, for a log line: the
 * TSIG error found ("BADSIG", "BADTIME"...), or "malformed" for
 * SHOAL_EMALFORMED. Static storage or buf; any thread.
 */
const char *tsig_verify_text(const tsig_ctx_t *ctx, int err, char buf[DNS_RCODE_TEXT_MAX]);

/* Room for any text tsig_answer_text writes. */
#define TSIG_ANSWER_TEXT_MAX (2 * DNS_RCODE_TEXT_MAX + 16)

/*
 * What an answer says when it is an error, msg[0..len), for a log line:
 * the RCODE's name and, when the answer has a TSIG RR with an Error
 * (RFC 8945 5.3: a peer tells a TSIG failure there, with RCODE NOTAUTH),
 * that error's name: "NOTAUTH, TSIG error BADSIG". The TSIG RR is read,
 * not verified: it names what the peer says, nothing more. Written into
 * buf; returns buf. Any thread.
 */
const char *tsig_answer_text(const uint8_t *msg, size_t len, char buf[TSIG_ANSWER_TEXT_MAX]);

#endif
