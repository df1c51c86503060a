/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How a worker turns a query into an answer: one small table, chosen when the server starts. */
#ifndef SHOAL_SERVER_RESPONDER_H
#define SHOAL_SERVER_RESPONDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "zone/answer.h"

/*
 * Answer the message q[0..len) into out[0..cap) from db (NULL when no zone
 * is served), for the transport ctx, and describe what was done in info
 * for the statistics. Returns the answer's length, or 0 to send nothing.
 * Worker thread, inside a zone read section (zonedb_read_lock): allocates
 * nothing and takes no lock.
 */
typedef size_t (*responder_fn)(const zonedb_t *db, const uint8_t *q, size_t len, uint8_t *out,
			       size_t cap, const answer_ctx_t *ctx, answer_info_t *info);

typedef struct responder {
	responder_fn answer; /* UDP and TCP alike */
	bool zones;          /* the configured zones are loaded, served and reloaded */
	const char *warning; /* logged once at start-up, or NULL */
} responder_t;

/* The daemon's: answer_query over the zones served. */
extern const responder_t responder_zones;

#endif
