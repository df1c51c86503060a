/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The daemon's side of a takeover: giving its sockets, restarting itself, seeing the old one go. */
#ifndef SHOAL_SERVER_DAEMON_TAKEOVER_H
#define SHOAL_SERVER_DAEMON_TAKEOVER_H

#include <stdbool.h>
#include <sys/types.h>
#include <uv.h>

#include "server/conf/conf.h"
#include "server/ctl/control.h"
#include "server/net/socket.h"

/* A taker that has its sockets has this long to say "go". */
#define TAKEOVER_GO_TIMEOUT_MS 30000

/*
 * A restart's new process has this long (after reload-timeout, which
 * bounds its zone loading) to ask for the sockets.
 */
#define TAKEOVER_START_SLACK_MS 30000

/* A restart asked while the previous takeover still finishes waits this long for it. */
#define TAKEOVER_SETTLE_WAIT_MS 30000

typedef struct takeover takeover_t;

/* What the takeover reads and whom it tells. Copied by takeover_new. */
typedef struct takeover_env {
	uv_loop_t *loop;       /* the main loop */
	const conf_t *cfg;     /* argv and the control path for a restart, reload-timeout */
	socket_set_t *sockets; /* given to a taker */
	unsigned threads;      /* this process's workers */
	/* the taker said "go": this process must stop (kept: it serves the control socket) */
	void (*handed)(void *arg, pid_t taker, bool kept_control);
	/* the process this one took over from has exited (its retired sockets are closed) */
	void (*giver_gone)(void *arg, pid_t giver);
	void *arg;
} takeover_env_t;

/*
 * Set up the takeover. Reads /proc/self/exe now, so that a restart starts
 * the file this process was started from even after a package replaced
 * it. Returns 0 and *out, or SHOAL_ENOMEM. Main thread.
 */
int takeover_new(takeover_t **out, const takeover_env_t *env);

/* The control socket given with the sockets (NULL: none). Main thread. */
void takeover_set_control(takeover_t *h, control_t *control);

/*
 * This process is stopping: refuse takers and restarts from now on. Main
 * thread.
 */
void takeover_stopping(takeover_t *h);

/*
 * A taker asked on the control socket (control_env_t.takeover): fd is the
 * connection, the takeover's now. Refused with a reason (and fd closed)
 * when this process is stopping, gives its sockets already, or still waits
 * for the process it took over from; else every socket is sent and "go"
 * awaited. Main thread.
 */
void takeover_give(void *h, int fd, const char *version);

/*
 * Restart (control_env_t.restart): start `binary` (NULL: this process's
 * own) with this process's arguments and --takeover CONTROL, wait until it
 * has taken over (reply ok, naming it) or failed (reply error: it exited,
 * or did not ask in time; this process serves on). Main thread.
 */
void takeover_restart(void *h, const char *binary, control_reply_fn reply, void *client);

/*
 * This process took over from giver_pid over fd (the connection, the
 * takeover's now): watch it; its end means the giver has exited, then
 * env->giver_gone runs. Until then a restart waits and a taker is refused.
 * Main thread.
 */
void takeover_watch_giver(takeover_t *h, int fd, pid_t giver_pid);

/*
 * Close every handle and descriptor; the taker's connection last, since
 * its end tells the taker that this process's sockets are closed: call it
 * after socket_set_close. h is freed once the loop has run the close
 * callbacks (takeover_free). Main thread.
 */
void takeover_close(takeover_t *h);
void takeover_free(takeover_t *h);

#endif
