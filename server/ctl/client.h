/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Bounded clients of a stream listener on the main loop: the control socket's, the metrics'. */
#ifndef SHOAL_SERVER_CTL_CLIENT_H
#define SHOAL_SERVER_CTL_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "server/net/acceptor.h"

/* The kind of connection a set's clients are: a unix or a TCP stream. */
enum client_stream {
	CLIENT_PIPE,
	CLIENT_TCP,
};

typedef struct client_set client_set_t;

/*
 * One connection and its timer, the first member of the user's own client
 * (control_client_t, metrics_client_t), so that the handles' data, which
 * point to the client_t, point to the user's client too. The user starts
 * timer with its own callback and timeout, reads conn, set, next (to walk
 * the set) and closing; the rest is the set's.
 */
typedef struct client {
	union {
		uv_stream_t stream;
		uv_pipe_t pipe;
		uv_tcp_t tcp;
	} conn;
	uv_timer_t timer;
	uv_write_t write_req;
	client_set_t *set;
	struct client *next; /* the set's next client, older */
	char *reply;         /* what client_send writes; freed with the client */
	bool closing;
	uint8_t closes_pending;
} client_t;

/*
 * The clients of one listener: a list (the newest first), how many there
 * are, and the acceptor, which waits with a connection while the user
 * has no room for it and is resumed as each client's handles are closed.
 * The fields are the set's; the user reads clients, count and closing.
 */
struct client_set {
	uv_loop_t *loop;
	enum client_stream stream;
	size_t client_size; /* the user's client, client_t first */
	void *data;         /* the user's */
	acceptor_t accept;
	bool accepting; /* accept is initialised */
	bool pause_logged;
	char name[160]; /* who the log names: "control PATH", "metrics ADDR" */
	client_t *clients;
	size_t count;   /* in the list, closing or not */
	size_t closing; /* of them, closing: their room comes back soon */
};

/*
 * Set up an empty set in caller memory: its clients are `stream`s on
 * loop, each client_size octets (at least sizeof(client_t)), data the
 * user's; name is copied for the log. Main thread.
 */
void client_set_init(client_set_t *set, uv_loop_t *loop, enum client_stream stream,
		     size_t client_size, const char *name, void *data);

/*
 * Accept on the listening socket fd (non-blocking): each connection goes
 * to accepted (acceptor_fn: its acceptor's data is the set), which takes
 * it with client_add, closes it, or says it has no room now. A pause for
 * want of descriptors is logged once until a client gets in again.
 * Returns 0 and fd is the set's; or a system error (-errno) and fd is
 * still the caller's. Main thread.
 */
int client_set_listen(client_set_t *set, int fd, acceptor_fn accepted);

/*
 * A new client (zeroed, client_size octets) for the connection fd, which
 * it takes, also on failure: its handles are initialised and it is first
 * in the list. Returns it, or NULL (fd closed; out of memory, or the
 * handle did not take fd). Main thread.
 */
client_t *client_add(client_set_t *set, int fd);

/*
 * Write buf[0..len) (malloc'd: the client takes it, also on failure, and
 * frees it with itself) on c's connection; written(req, status) follows,
 * with req->data c. Returns 0; or a negative error, with c closed (also
 * when buf is NULL: out of memory). Main thread.
 */
int client_send(client_t *c, char *buf, size_t len, uv_write_cb written);

/*
 * Close c's connection and timer; once both are closed, c leaves the list
 * and is freed, and the acceptor is offered its room. Twice is harmless.
 * Main thread.
 */
void client_close(client_t *c);

/* Accept no more: close the acceptor (and its listening socket). Main thread. */
void client_set_unlisten(client_set_t *set);

/*
 * Close every client and the acceptor; the memory of the set may go once
 * the loop has run the close callbacks. Main thread.
 */
void client_set_close(client_set_t *set);

#endif
