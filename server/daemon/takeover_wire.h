/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The socket takeover's wire protocol: a running shoald gives its sockets to a new one. */
#ifndef SHOAL_SERVER_DAEMON_TAKEOVER_WIRE_H
#define SHOAL_SERVER_DAEMON_TAKEOVER_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "server/net/socket.h"

/*
 * On the control socket (shoald(8), TAKEOVER):
 *   taker: "takeover 1\n"
 *   giver: "error\n" and a reason, then closes; or "ok\n", then records:
 *          a two-octet length (network order) and that many octets of text,
 *          each record sent alone, with at most one descriptor (SCM_RIGHTS):
 *            "shoald VERSION pid PID mode MODE threads N"
 *            "udp WORKER ADDR@PORT" + the socket    (every socket of the set,
 *            "tcp WORKER ADDR@PORT" + the listener   in socket_set_entry order)
 *            "control PATH" + the control socket    (when there is one)
 *            "end COUNT"                            (COUNT socket records)
 *   taker: (its workers run on the sockets) "go\n" or "go control\n" (it
 *          serves the control socket it was given from now on)
 *   giver: "ok\n"; it then stops reading and accepting, finishes what it
 *          holds and exits, which closes the connection: the taker's sign
 *          that the old process and the sockets it retired are gone.
 * Anything else, or silence past the deadlines, ends the takeover and the
 * giver serves on as before.
 */
#define TAKEOVER_WIRE_VERSION 1

/* Socket records one takeover may carry: every socket of the largest set. */
#define TAKEOVER_WIRE_SOCKETS_MAX (2u * 256u * 16u)

/* How long either side waits for the other within one step. */
#define TAKEOVER_WIRE_STEP_MS 10000

/* What a taker received. */
typedef struct takeover_wire_taken {
	int fd;                 /* the connection to the giver: kept until the giver is gone */
	pid_t giver_pid;        /* from the connection's credentials (SO_PEERCRED) */
	char giver_version[32]; /* the giver's PACKAGE_VERSION */
	enum socket_mode mode;  /* the giver's socket mode */
	unsigned threads;       /* the giver's worker count */
	socket_given_t *given;  /* n_given sockets; socket_set_adopt takes them */
	size_t n_given;
	int control_fd;         /* the giver's control socket, or -1 */
	char control_path[108]; /* where the giver bound it, as it wrote it (a sun_path) */
} takeover_wire_taken_t;

/*
 * Giver: answer a taker on the connected stream socket fd (the request line
 * already read): "ok", then every socket of s and the control socket
 * control_fd bound at control_path (-1 and NULL for none), as records.
 * Blocks at most TAKEOVER_WIRE_STEP_MS per record. Nothing is closed: the
 * descriptors stay the caller's. Returns 0, or a negative error with err
 * (the taker went away: -EPIPE). Main thread.
 */
int takeover_wire_send(int fd, const socket_set_t *s, unsigned threads, int control_fd,
		       const char *control_path, char *err, size_t errlen);

/*
 * Giver: read the taker's "go" line from fd (non-blocking; call when it is
 * readable). Returns 1 with *keep_control when the line is whole, 0 when
 * more must come (buf/len keep the part read, len starts at 0), or a
 * negative error with err: the taker closed (SHOAL_EIO) or sent something
 * else (SHOAL_EMALFORMED). Main thread.
 */
int takeover_wire_read_go(int fd, char *buf, size_t cap, size_t *len, bool *keep_control, char *err,
			  size_t errlen);

/*
 * Taker: connect to the control socket at path, ask, and receive every
 * record into *t (caller memory, set up here). The giver must run as root
 * or as this process's user (SO_PEERCRED); nothing is asked of another.
 * Returns 0, or a negative error with err: cannot connect, a giver of
 * another user, the giver's refusal (its reason in err), a malformed or
 * truncated stream. On error nothing is left open.
 * Main thread, before the workers start.
 */
int takeover_wire_connect(const char *path, takeover_wire_taken_t *t, char *err, size_t errlen);

/*
 * Taker: the request and the records on a connected stream socket fd
 * (takeover_wire_connect after connecting; the tests on a socket pair). Takes
 * fd: on error it is closed.
 */
int takeover_wire_receive(int fd, takeover_wire_taken_t *t, char *err, size_t errlen);

/*
 * Taker: tell the giver to go ("go control" when this process serves the
 * control socket it was given) and read its "ok". Returns 0, or a negative
 * error with err (the giver refused or is gone: both may serve now, or
 * only this one). t->fd stays open. Main thread.
 */
int takeover_wire_go(takeover_wire_taken_t *t, bool keep_control, char *err, size_t errlen);

/* Close whatever t still holds (sockets not adopted, the control socket, the connection). */
void takeover_wire_taken_clear(takeover_wire_taken_t *t);

#endif
