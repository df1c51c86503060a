/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Answering one query from a zone set: the whole packet-in, packet-out step. */
#ifndef SHOAL_ZONE_ANSWER_H
#define SHOAL_ZONE_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/cookie.h"
#include "proto/name.h"
#include "zone/zonedb.h"

struct answer_ctx;

/*
 * Whether the client of ctx may query a zone whose policy (hung on the set
 * with zonedb_set_policies) is `policy`: the server's allow-query check.
 * Called on the query path: allocates nothing, takes no lock.
 */
typedef bool (*answer_allow_fn)(const void *policy, const struct answer_ctx *ctx);

/*
 * What the transport tells the answer logic. Set up once per worker; the
 * transport sets now and the client's address before each query.
 */
typedef struct answer_ctx {
	/* what every answer reads first, so that it shares a cache line */
	uint16_t edns_size; /* payload size the server advertises (1232) */
	bool tcp;           /* TCP: answers up to 65535, no UDP truncation */
	/* BADCOOKIE (RFC 7873 5.2.3) to a UDP query with a client cookie but no valid server cookie
	 */
	bool cookie_required;
	uint16_t nsid_len;
	uint8_t client_ip_len;
	uint8_t identity_len;
	/*
	 * DNS cookies (RFC 7873, server cookies as RFC 9018 makes them): the
	 * secrets, read only while the query is answered (NULL: COOKIE options
	 * are ignored, as by a server without cookies); the time in seconds
	 * since the epoch; the client's address, 4 or 16 octets in network
	 * order (client_ip_len), which the server cookie is bound to.
	 */
	uint32_t now;
	const cookie_secrets_t *cookies;
	const uint8_t *client_ip;
	const uint8_t *nsid; /* NSID payload (RFC 5001), or NULL for none */
	/*
	 * CHAOS TXT answers: id.server and hostname.bind give the identity
	 * (identity_len octets), version.server and version.bind the version;
	 * NULL refuses them. At most 255 octets each (one TXT character-string).
	 */
	const uint8_t *identity;
	const uint8_t *version;
	uint8_t version_len;
	/*
	 * Zones with a policy are answered only to clients allow says yes to,
	 * others get REFUSED (RFC 1035 4.1.1 rcode 5); with allow NULL, no
	 * client may query them. tsig_key: the index of the key the query was
	 * verified with, or -1 (unsigned, or not verified yet).
	 */
	answer_allow_fn allow;
	int tsig_key;
} answer_ctx_t;

/*
 * The kind of an answer: response rate limiting counts each kind apart
 * (so that a flood of one kind does not limit the others).
 */
enum answer_kind {
	ANSWER_POSITIVE = 0, /* the records asked for, or a CNAME or DNAME chain */
	ANSWER_NODATA,       /* the name exists without the type (RFC 2308 2.2) */
	ANSWER_NXDOMAIN,
	ANSWER_REFERRAL,
	ANSWER_ERROR, /* any rcode but NOERROR and NXDOMAIN */
	ANSWER_KIND_COUNT,
};

/* What the query's COOKIE option (RFC 7873) proved. */
enum answer_cookie {
	ANSWER_COOKIE_NONE = 0, /* no COOKIE option, or cookies off */
	ANSWER_COOKIE_CLIENT,   /* a client cookie alone: a server cookie was sent */
	ANSWER_COOKIE_INVALID,  /* a server cookie that is not valid: a fresh one was sent */
	ANSWER_COOKIE_VALID,    /* a valid server cookie: the client receives at its address */
};

/* What happened, for the statistics and response rate limiting. */
typedef struct answer_info {
	int rcode;          /* rcode sent (extended rcodes included) */
	bool dropped;       /* no answer was sent */
	bool malformed;     /* FORMERR, or dropped as malformed */
	bool truncated;     /* TC set */
	bool edns;          /* the query had EDNS */
	bool dnssec_ok;     /* ... with the DO bit */
	bool tsig;          /* the query carries a TSIG RR: the answer is left unsigned here */
	uint16_t qtype;     /* 0 when the query had no question */
	uint32_t zone_slot; /* the answering zone's slot (zonedb_zone_slot), 0 for none */
	enum answer_kind kind;
	enum answer_cookie cookie;
	/*
	 * The name rate limiting accounts the answer to (lowercase wire, 0
	 * octets for errors): the query name; for NXDOMAIN its closest
	 * encloser, for a referral the zone cut, for an answer from a wildcard
	 * the wildcard's parent, so that made-up names share one account
	 * (like BIND's and Knot's RRL). Last: it is written, not cleared.
	 */
	uint8_t name_len;
	uint8_t name[NAME_MAXLEN];
} answer_info_t;

/* Clear everything in info but the name, which is only ever written with its length. */
static inline void answer_info_clear(answer_info_t *info)
{
	memset(info, 0, offsetof(answer_info_t, name));
}

/*
 * Answer the message pkt[0..len) from db into out[0..cap): RFC 1034 4.3.2
 * with RFC 4592 wildcards, CNAME and DNAME, delegations, EDNS (RFC 6891),
 * NSID, truncation, the CHAOS identity names. cap must be at least 65535 when ctx->tcp, else at
 * least the UDP size used. db may be NULL (nothing is served: REFUSED). Returns the answer's
 * length, or 0 when nothing is to be sent. Allocates nothing and takes no lock; any number of
 * threads may call it at once on the same db (inside rcu_read_lock).
 */
size_t answer_query(const zonedb_t *db, const uint8_t *pkt, size_t len, uint8_t *out, size_t cap,
		    const answer_ctx_t *ctx, answer_info_t *info);

#endif
