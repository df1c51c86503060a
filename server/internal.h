/* What the files of server/ share: the server and its workers. */
#ifndef SHOAL_SERVER_INTERNAL_H
#define SHOAL_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#include "server/conf.h"
#include "server/reload.h"
#include "server/responder.h"
#include "server/socket.h"
#include "server/stats.h"
#include "server/tcp.h"
#include "server/worker.h"
#include "zone/answer.h"
#include "zone/zonedb.h"

typedef struct server server_t;

struct server {
	conf_t *cfg;
	const responder_t *responder;
	socket_set_t *sockets; /* every listening socket, made before the privilege drop */
	workers_t workers;
	zonedb_ref_t zones; /* what workers read (RCU) */
	reload_t reload;    /* loads and publishes the zones */
	uv_loop_t *loop;    /* main loop: signals, control, reload results */
	uv_signal_t sig_term, sig_int, sig_hup;
	struct control *control;
	struct control *control_closed; /* closed, freed after the close callbacks */
	bool stopping;
	time_t started_at;
};

/* Control clients served at once; more wait, unaccepted, until one leaves. */
#define CONTROL_CLIENTS_MAX 8

/*
 * Control socket (server/control.c), on the main loop.
 * control_check_path: refuse a path under a folder every user may write
 *   without the sticky bit (any of them could replace the socket), and
 *   warn about one in a sticky world-writable folder. Before binding, also
 *   for --check. Returns 0 or SHOAL_ECONFIG with err.
 * control_open: bind a unix stream socket at path, mode 0600 from the
 *   start, replacing a stale socket file but not a live one, and hold the
 *   new file by an O_PATH descriptor. Returns 0 or a negative error with err.
 * control_chown: hand the socket file to uid/gid through that descriptor
 *   (never by name: a name swapped for a symbolic link would hand over its
 *   target); fails, with err, when the name no longer leads to it.
 * control_close: close the listener and clients, unlink the file.
 * control_free: after the loop ran the close callbacks, free the rest.
 */
int control_check_path(const char *path, char *err, size_t errlen);
int control_open(server_t *srv, const char *path, char *err, size_t errlen);
int control_chown(server_t *srv, uid_t uid, gid_t gid, char *err, size_t errlen);
void control_close(server_t *srv);
void control_free(server_t *srv);

/* Stop the server: end the main loop; server_run then stops the workers. Main thread. */
void server_request_stop(server_t *srv);

#endif
