/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Address lists of zone transfers and NOTIFY: who may ask, whom to tell, each with its key. */
#ifndef SHOAL_SERVER_CONF_ACL_H
#define SHOAL_SERVER_CONF_ACL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "server/common/addr.h"
#include "server/common/tls.h"

/* An entry's key: the index of a configured TSIG key, or ACL_NOKEY (unsigned). */
#define ACL_NOKEY (-1)

/* The longest entry as written: an IPv6 address, a prefix or port, a key name. */
#define ACL_TEXT_MAX 320

/*
 * What an entry names: a block of addresses allowed to ask (provide-xfr,
 * allow-notify: "ADDR[/PREFIX] KEY|NOKEY"), or one server to talk to
 * (notify, primaries: "ADDR[@PORT] KEY|NOKEY", port 53 by default). After
 * the key, "tls" asks for TLS (RFC 9103): a transfer allowed only over
 * TLS, a primary asked over TLS (port 853 by default); after it, a block's
 * entry may ask for the client's certificate (mutual TLS, RFC 9103 9.3.3):
 * "tls PIN" (its key's SPKI pin, base64) or "tls ca" (signed by a CA of
 * tls-ca-file).
 */
enum acl_kind {
	ACL_MATCH,
	ACL_TARGET,
};

/*
 * One entry. For ACL_MATCH, addr holds the network (port 0) and net the
 * prefix peers must lie in; for ACL_TARGET, addr is the server's address
 * and port, net the whole address. key is resolved by the caller from the
 * name acl_entry_parse gives back.
 */
/* What an entry asks of the connection besides the address and the key. */
enum acl_tls {
	ACL_TLS_NONE, /* any transport */
	ACL_TLS,      /* TLS */
	ACL_TLS_PIN,  /* TLS, the client's certificate's key with the entry's pin */
	ACL_TLS_CA,   /* TLS, the client's certificate signed by a CA of tls-ca-file */
};

typedef struct acl_entry {
	struct sockaddr_storage addr;
	socklen_t addr_len;
	addr_prefix_t net;
	int key;
	uint8_t tls; /* enum acl_tls */
	uint8_t pin[TLS_PIN_LEN];
	char text[ACL_TEXT_MAX]; /* the address part as written ("192.0.2.1@5300"), for logs */
} acl_entry_t;

/* A list of entries, tried in order. Owned: acl_clear frees it. */
typedef struct acl {
	acl_entry_t *entries;
	size_t count;
} acl_t;

/*
 * Parse one entry, "ADDR[/PREFIX] KEY" or "ADDR[@PORT] KEY" by kind (the
 * address as addr_parse reads it: IPv6 in brackets or not, IPv4-mapped as
 * IPv4), KEY being a key name or NOKEY (any case). Sets *e (key ACL_NOKEY)
 * and copies the key name into key_name[0..key_cap) ("" for NOKEY), for
 * the caller to resolve. Returns 0, or SHOAL_ESYNTAX with the reason in
 * err: not an address, a prefix or port out of range, a prefix with host
 * bits set, no key word, words after it.
 */
int acl_entry_parse(const char *text, enum acl_kind kind, acl_entry_t *e, char *key_name,
		    size_t key_cap, char *err, size_t errlen);

/* Append a copy of e. Returns 0 or SHOAL_ENOMEM. */
int acl_add(acl_t *a, const acl_entry_t *e);

/* Free the entries and zero the list; a zeroed list is fine. */
void acl_clear(acl_t *a);

/*
 * Whether peer's address lies within e's (prefix bits; ports are not
 * compared). An IPv4 peer seen on an IPv6 socket (::ffff:a.b.c.d) matches
 * IPv4 entries.
 */
bool acl_entry_matches(const acl_entry_t *e, const struct sockaddr *peer);

/*
 * The first entry of a that matches peer and key: key is the index of
 * the key the request was verified with, or ACL_NOKEY for an unsigned
 * request (which only NOKEY entries admit, and a signed one only entries
 * of its own key, as NSD decides), over a connection without TLS (an
 * entry that asks for TLS does not match). NULL when none does. Any
 * thread; reads only.
 */
const acl_entry_t *acl_find(const acl_t *a, const struct sockaddr *peer, int key);

/* What a client's connection showed, for the entries that ask for TLS. */
typedef struct acl_client {
	const struct sockaddr *addr;
	bool tls;  /* it came over TLS */
	bool cert; /* it showed a certificate whose key it holds (the handshake proved it) */
	bool ca;   /* ... signed by a CA of tls-ca-file */
	uint8_t pin[TLS_PIN_LEN]; /* ... with this key */
} acl_client_t;

/*
 * As acl_find, for client c: the first entry that matches its address
 * and key and whose TLS its connection meets. When none does, *unmet (may
 * be NULL) is the first that matched the address and key but asked for
 * more of the connection (to say why in the refusal), or NULL.
 */
const acl_entry_t *acl_find_client(const acl_t *a, const acl_client_t *c, int key,
				   const acl_entry_t **unmet);

/* What entry e asks for that c's connection lacks, in words ("TLS"), for a refusal's log line. */
const char *acl_tls_unmet(const acl_entry_t *e, const acl_client_t *c);

/* acl_find for a peer given as its address octets (ip_len 4 or 16, as addr_octets gives). */
const acl_entry_t *acl_find_ip(const acl_t *a, const uint8_t *ip, size_t ip_len, int key);

struct answer_ctx;

/*
 * allow-query (an answer_allow_fn): whether the client of ctx, with the
 * key its query was verified with (ctx->tsig_key), is in the list policy
 * (an acl_t). Worker threads, on the query path: no allocation, no lock.
 */
bool acl_allow_query(const void *policy, const struct answer_ctx *ctx);

#endif
