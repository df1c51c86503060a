/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A zone's dynamic update settings: allow-update's rules, serial-policy, and what a rule allows. */
#ifndef SHOAL_SERVER_CONF_UPDATE_H
#define SHOAL_SERVER_CONF_UPDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "proto/name.h"
#include "server/common/addr.h"

/* How a rule's `names` pattern matches an owner (the zone's apex appended when relative). */
enum update_name_kind {
	UPDATE_NAME_EXACT,       /* "www": that name */
	UPDATE_NAME_BELOW,       /* "*.sub": any name below sub, not sub itself */
	UPDATE_NAME_FIRST_LABEL, /* "_acme-challenge.*": any name whose first label is that */
};

typedef struct update_name {
	uint8_t kind; /* enum update_name_kind */
	uint8_t len;
	uint8_t name[NAME_MAXLEN]; /* the name (EXACT, BELOW) or the one label (FIRST_LABEL) */
} update_name_t;

/*
 * One rule of allow-update: who (a key, an address prefix, or both: then
 * both must match), and what it may change: owners among names (none:
 * the whole zone) and types among types (none: any type but the SOA, NS
 * at the apex, and the types a signer owns: DNSKEY, RRSIG, NSEC, NSEC3,
 * NSEC3PARAM).
 */
typedef struct update_rule {
	int key;       /* a configured key's index, or ACL_NOKEY: any (then an address is set) */
	bool has_addr; /* net applies */
	addr_prefix_t net;
	update_name_t *names;
	size_t name_count;
	uint16_t *types;
	size_t type_count;
} update_rule_t;

/*
 * A zone's update settings, read once and then shared, read-only, by the
 * configurations copied from the one that read it (conf_update_ref).
 */
typedef struct conf_update {
	unsigned refs; /* atomic */
	update_rule_t *rules;
	size_t rule_count;
	uint8_t serial_policy; /* enum zone_serial_policy (zone/update.h) */
	bool forward;          /* update-forward: a secondary's updates go to its primaries */
} conf_update_t;

/* A new empty set (one reference), or NULL on ENOMEM. */
conf_update_t *conf_update_new(void);

/* Take a reference; any thread holding one. Returns u. */
conf_update_t *conf_update_ref(conf_update_t *u);

/* Drop one; the last frees. Any thread; NULL is fine. */
void conf_update_unref(conf_update_t *u);

/*
 * The first rule of u whose key and address match a request from peer
 * verified with key (ACL_NOKEY: unsigned), or NULL: the update is
 * refused. A rule of a key never matches an unsigned request, so an
 * unsigned one passes only by a rule of an address alone. Any thread.
 */
const update_rule_t *conf_update_rule(const conf_update_t *u, const struct sockaddr *peer, int key);

/*
 * Whether rule r lets an update touch owner's records of type (ANY: every
 * type of the name, allowed only by a rule without a types list) in the
 * zone apex. Any thread; no allocation.
 */
bool conf_update_allows(const update_rule_t *r, const uint8_t *apex, const uint8_t *owner,
			uint16_t type);

#endif
