/* SPDX-License-Identifier: GPL-3.0-or-later */
/* How a worker turns a query into an answer: one small table, chosen when the server starts. */
#ifndef SHOAL_SERVER_QUERY_RESPONDER_H
#define SHOAL_SERVER_QUERY_RESPONDER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/conf/acl.h"
#include "zone/answer.h"

struct sockaddr;

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

/*
 * An answer of many messages (a zone transfer). The connection asks for
 * one message at a time, when the one before has been handed to the
 * socket: one message per turn of the loop, so the worker's other
 * connections are served in between, and none while the peer does not
 * read (its idle timeout then closes the connection). Queries pipelined
 * behind a stream wait until it ends.
 * next: write the next message into out[0..cap) (cap is 65535); return
 *   its length, 0 when the stream is over, TCP_STREAM_WAIT when the
 *   next message is not ready yet (an UPDATE's answer, an IXFR's changes
 *   read from the journal file: made on another thread, which then rings
 *   the loop's waker, server/common/waker.h, and the connection asks
 *   again; no timer runs meanwhile), or a negative error, which closes
 *   the connection.
 * end: called once when the stream is over, complete (next returned 0)
 *   or not (an error, the connection closed, the server stopping); frees
 *   the stream.
 * Both on the loop's thread.
 */
typedef struct tcp_stream tcp_stream_t;
struct tcp_stream {
	int (*next)(tcp_stream_t *s, uint8_t *out, size_t cap);
	void (*end)(tcp_stream_t *s, bool complete);
};

/* From a stream's next: not ready yet, ask again once the loop's waker rang. */
#define TCP_STREAM_WAIT (-EAGAIN)

/* From a tcp_special_fn: let the answer function answer this message. */
#define TCP_SPECIAL_PASS (-1)

/*
 * Messages whose answer depends on who asks or takes many messages (zone
 * transfers, NOTIFY), set with tcp_server_set_special: called with the
 * client (its address; TLS, and its certificate, when the connection is
 * DNS over TLS) for every whole message before the answer function.
 * Returns TCP_SPECIAL_PASS to leave the message to the answer function;
 * otherwise the length of the answer written to out[0..cap) (0: none) and,
 * when it sets *stream, the stream's messages follow that answer. On the
 * loop's thread.
 */
typedef int (*tcp_special_fn)(void *arg, const acl_client_t *client, const uint8_t *q, size_t len,
			      uint8_t *out, size_t cap, tcp_stream_t **stream);

#endif
