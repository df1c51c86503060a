/* Answering one query from a zone set: the whole packet-in, packet-out step. */
#ifndef SHOAL_ZONE_ANSWER_H
#define SHOAL_ZONE_ANSWER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/zonedb.h"

/* What the transport tells the answer logic. Set up once per worker. */
typedef struct answer_ctx {
	uint16_t edns_size;  /* payload size the server advertises (1232) */
	bool tcp;            /* TCP: answers up to 65535, no UDP truncation */
	const uint8_t *nsid; /* NSID payload (RFC 5001), or NULL for none */
	uint16_t nsid_len;
	/*
	 * CHAOS TXT answers: id.server and hostname.bind give the identity,
	 * version.server and version.bind the version; NULL refuses them.
	 * At most 255 octets each (one TXT character-string).
	 */
	const uint8_t *identity;
	uint8_t identity_len;
	const uint8_t *version;
	uint8_t version_len;
} answer_ctx_t;

/* What happened, for the statistics. */
typedef struct answer_info {
	int rcode;          /* rcode sent (extended rcodes included) */
	bool dropped;       /* no answer was sent */
	bool malformed;     /* FORMERR, or dropped as malformed */
	bool truncated;     /* TC set */
	bool edns;          /* the query had EDNS */
	bool dnssec_ok;     /* ... with the DO bit */
	uint16_t qtype;     /* 0 when the query had no question */
	uint32_t zone_slot; /* the answering zone's slot (zonedb_zone_slot), 0 for none */
} answer_info_t;

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
