/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Accepting on a listening socket without ever spinning: a shortage of descriptors or memory pauses
 * it. */
#ifndef SHOAL_SERVER_NET_ACCEPTOR_H
#define SHOAL_SERVER_NET_ACCEPTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

/* How long a listener rests after accept failed for want of descriptors or memory. */
#define ACCEPTOR_PAUSE_MS 100u

/* Connections accepted per wake-up, so the loop's other sockets get a turn. */
#define ACCEPTOR_BATCH 32

typedef struct acceptor acceptor_t;

/*
 * A new connection: fd is non-blocking and close-on-exec. Return true when
 * the callee took fd (it owns it then); false when it has no room now: the
 * acceptor keeps fd, stops accepting, and offers it again at
 * acceptor_resume. Loop thread.
 */
typedef bool (*acceptor_fn)(acceptor_t *a, int fd);

/*
 * accept(2) failed with err (a negative errno: UV_EMFILE, UV_ENFILE,
 * UV_ENOBUFS, UV_ENOMEM, or one not expected at all); the acceptor rests
 * ACCEPTOR_PAUSE_MS before it tries again. Loop thread.
 */
typedef void (*acceptor_pause_fn)(acceptor_t *a, int err);

/*
 * libuv's uv_listen is not used: when accept fails with EMFILE, libuv
 * closes a spare descriptor, accepts and closes what is queued, and opens
 * the spare again; another thread may take the freed descriptor first, and
 * from then on libuv calls accept in a loop that never returns to the event
 * loop, so the connections that hold the descriptors are never read to
 * their end and never closed. Here the listener is read with uv_poll and
 * accept4, and every failure that is not about one connection pauses it.
 * The fields are the acceptor's own; callers use `data`.
 */
struct acceptor {
	uv_poll_t poll;
	uv_timer_t pause_timer;
	int fd;   /* the listening socket */
	int held; /* accepted, not taken by `accepted` yet; or -1 */
	acceptor_fn accepted;
	acceptor_pause_fn paused;
	void (*closed)(acceptor_t *a);
	void *data; /* the caller's */
	uint8_t handles_open;
	bool reading; /* the poll handle is started */
	bool resting; /* the pause timer runs */
	bool closing;
};

/*
 * Start accepting on the listening socket fd (non-blocking) on loop: each
 * connection goes to accepted; paused may be NULL. a is caller memory that
 * must stay until acceptor_close's callback. Returns 0, and fd belongs to
 * the acceptor (acceptor_close closes it); or a system error (-errno)
 * with nothing to close and fd still the caller's. Loop thread.
 */
int acceptor_init(acceptor_t *a, uv_loop_t *loop, int fd, acceptor_fn accepted,
		  acceptor_pause_fn paused);

/*
 * The callee that said "no room" has room now: offer the held connection
 * again, then go on accepting (unless resting). Loop thread.
 */
void acceptor_resume(acceptor_t *a);

/*
 * Stop: close the listening socket and a held connection at once, then the
 * handles; closed(a) (may be NULL) runs when both are closed, after which a
 * may be freed. Loop thread.
 */
void acceptor_close(acceptor_t *a, void (*closed)(acceptor_t *a));

#endif
