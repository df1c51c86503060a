/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The control socket: shoalctl's commands on a unix stream socket, served on the main loop. */
#ifndef SHOAL_SERVER_CTL_CONTROL_H
#define SHOAL_SERVER_CTL_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>
#include <uv.h>

#include "server/conf/conf.h"
#include "server/events/catalog.h"
#include "server/events/notify_out.h"
#include "server/events/reload.h"
#include "server/events/sched.h"
#include "server/net/worker.h"
#include "zone/zonedb.h"

/* Control clients served at once; more wait, unaccepted, until one leaves. */
#define CONTROL_CLIENTS_MAX 8

/* A command line is shorter than this, its newline counted: zone-status names many zones. */
#define CONTROL_LINE_MAX 8192

/* What a command takes after its name. */
enum control_arg {
	CONTROL_ARG_NONE,     /* nothing */
	CONTROL_ARG_OPTIONAL, /* an argument or nothing */
	CONTROL_ARG_REQUIRED, /* an argument */
};

/*
 * Every command, in the order shoalctl --help lists them, as
 * X(id, name, argument rule, argument's name or NULL, help line). The
 * server dispatches on it (server/ctl/commands.c: id runs cmd_<id>), its "unknown
 * command" reply and shoalctl --help list it, and tests/unit/test_control.c
 * checks it against man/shoalctl.8: a command is one line here.
 */
#define CONTROL_COMMANDS(X)                                                       \
	X(status, "status", CONTROL_ARG_NONE, NULL,                               \
	  "version, threads, socket mode, uptime, zones")                         \
	X(stats, "stats", CONTROL_ARG_OPTIONAL, "FORMAT",                         \
	  "counters per thread: text (a table), json or prometheus")              \
	X(reload, "reload", CONTROL_ARG_OPTIONAL, "ZONE",                         \
	  "reload every zone, or ZONE; errors name FILE:LINE")                    \
	X(reconfig, "reconfig", CONTROL_ARG_NONE, NULL,                           \
	  "read the configuration file again and apply what changed")             \
	X(zone_add, "zone-add", CONTROL_ARG_REQUIRED, "NAME FILE [--catalog C]",  \
	  "serve NAME, a primary zone, from FILE until reconfig; in catalog C")   \
	X(zone_remove, "zone-remove", CONTROL_ARG_REQUIRED, "NAME",               \
	  "stop serving NAME until reconfig")                                     \
	X(zone_status, "zone-status", CONTROL_ARG_OPTIONAL, "ZONE...|FROM COUNT", \
	  "each zone's serial, records, errors, refresh, expiry; --json")         \
	X(zone_read, "zone-read", CONTROL_ARG_REQUIRED, "ZONE",                   \
	  "the records ZONE serves, one master file line each")                   \
	X(keys, "keys", CONTROL_ARG_REQUIRED, "ZONE",                             \
	  "ZONE's DNSSEC keys: tag, role, algorithm, state, times")               \
	X(ds, "ds", CONTROL_ARG_REQUIRED, "ZONE",                                 \
	  "the DS records of ZONE's KSKs, for its parent zone")                   \
	X(notify, "notify", CONTROL_ARG_REQUIRED, "ZONE",                         \
	  "send NOTIFY for ZONE to its secondaries now")                          \
	X(refresh, "refresh", CONTROL_ARG_REQUIRED, "ZONE",                       \
	  "ask the primaries of ZONE for a newer serial now")                     \
	X(retransfer, "retransfer", CONTROL_ARG_REQUIRED, "ZONE",                 \
	  "transfer ZONE whole from its primaries now")                           \
	X(cookie_rotate, "cookie-rotate", CONTROL_ARG_OPTIONAL, "HEX",            \
	  "new DNS cookie secret (random, or HEX); old one staged")               \
	X(log_reopen, "log-reopen", CONTROL_ARG_NONE, NULL,                       \
	  "open log-file anew, after logrotate moved it (as SIGUSR1)")            \
	X(tls_pin, "tls-pin", CONTROL_ARG_NONE, NULL,                             \
	  "the TLS certificate's SPKI pin (kdig +tls-pin), subject, file")        \
	X(restart, "restart", CONTROL_ARG_NONE, NULL,                             \
	  "start this binary anew; it takes the sockets over")                    \
	X(upgrade, "upgrade", CONTROL_ARG_REQUIRED, "PATH",                       \
	  "as restart, with the shoald binary at PATH")                           \
	X(takeover, "takeover", CONTROL_ARG_REQUIRED, "VERSION",                  \
	  "hand the sockets over (shoald --takeover asks this)")                  \
	X(stop, "stop", CONTROL_ARG_NONE, NULL, "stop the server")

/*
 * How a command is written, into buf[0..len): "stats", "reload [ZONE]"
 * (optional argument) or "name ARG" (required). Returns what snprintf
 * returns. Any thread.
 */
static inline int control_usage(char *buf, size_t len, const char *name, enum control_arg rule,
				const char *arg)
{
	if (rule == CONTROL_ARG_NONE)
		return snprintf(buf, len, "%s", name);
	if (rule == CONTROL_ARG_OPTIONAL)
		return snprintf(buf, len, "%s [%s]", name, arg);
	return snprintf(buf, len, "%s %s", name, arg);
}

typedef struct control control_t;

/* A reply that comes later, once, on the main loop: ok or error, and the body. */
typedef void (*control_reply_fn)(void *client, bool ok, const char *body);

/*
 * What the commands report on and act upon. Copied by control_open; what
 * it points to must outlive the control. Only loop is needed to open,
 * hand over and close the socket.
 */
typedef struct control_env {
	uv_loop_t *loop;                /* the main loop: the socket and its clients */
	const conf_t *cfg;              /* status: the zones configured */
	workers_t *workers;             /* status, stats: threads, counters, sockets */
	const stats_groups_t *counters; /* stats: those kept outside the workers */
	reload_t *reload;               /* reload; its state for status and zone-status */
	zonedb_ref_t *zones;            /* zone-status, stats: the set served */
	notify_out_t *notifier;         /* notify */
	sched_t *sched;                 /* refresh, retransfer, zone-status; may be NULL */
	const catalogs_t *catalogs;     /* zone-status: a member's catalog; may be NULL */
	time_t started_at;              /* status: uptime */
	void (*stop)(void *arg);        /* stop: end the server, on the main loop */
	void *stop_arg;
	/*
	 * takeover: a new shoald asks for the sockets. fd is a duplicate of
	 * the client's connection, the callee's to answer on and to close;
	 * the control sends nothing on it. NULL: refused.
	 */
	void (*takeover)(void *arg, int fd, const char *version);
	/*
	 * restart, upgrade: start `binary` (NULL: this one) to take over; the
	 * callee calls reply(client, ...) once, later. NULL: refused.
	 */
	void (*restart)(void *arg, const char *binary, control_reply_fn reply, void *client);
	void *takeover_arg;
	/*
	 * reconfig, zone-add, zone-remove: command is the command's name, arg
	 * its argument (NULL for none); the callee calls reply(client, ...)
	 * once, now or later, and then updates the zone settings the control
	 * reads (control_set_zones). NULL: refused.
	 */
	void (*reconfig)(void *arg, const char *command, const char *cmd_arg,
			 control_reply_fn reply, void *client);
	void *reconfig_arg;
} control_env_t;

/*
 * A reconfig changed the configuration of the zones, the notifier or the
 * secondary zones: the commands use these from now on. Main thread.
 */
void control_set_zones(control_t *ctl, const conf_t *cfg, notify_out_t *notifier, sched_t *sched);

/*
 * Bind a unix stream socket at path, mode 0600 from the start, replacing
 * a stale socket file but not a live one, hold the new file by an O_PATH
 * descriptor, and serve commands on env->loop. Returns 0 or a negative
 * error with err. *out is set as soon as there is something to close,
 * also when the call then fails: control_close and control_free it. Main
 * thread.
 */
int control_open(control_t **out, const control_env_t *env, const char *path, char *err,
		 size_t errlen);

/*
 * Serve commands on a listening unix socket another process bound at path
 * and handed over (fd: the control takes it, also on error). The file is
 * held as by control_open but stays the giver's until control_claim: a
 * control closed before then leaves the file where it is. Returns 0 or a
 * negative error with err; *out as for control_open. Main thread.
 */
int control_adopt(control_t **out, const control_env_t *env, int fd, const char *path, char *err,
		  size_t errlen);

/* The path is this process's now: control_close removes it. Main thread. */
void control_claim(control_t *ctl);

/* The listening socket, to hand over (the control keeps it). Main thread. */
int control_listen_fd(const control_t *ctl);

/* The path as configured. */
const char *control_path(const control_t *ctl);

/*
 * The socket was handed over: accept no more clients (those connected get
 * their replies), close this process's descriptors, and remove the file
 * only when the taker does not serve it (`taken` false). Main thread.
 */
void control_taken_over(control_t *ctl, bool taken);

/*
 * Hand the socket file to uid/gid through the descriptor (never by name:
 * a name swapped for a symbolic link would hand over its target). Returns
 * 0; with err, a system error (-errno) when that fails, or SHOAL_ECONFIG
 * when the name no longer leads to the socket. Main thread, before the
 * privilege drop.
 */
int control_chown(control_t *ctl, uid_t uid, gid_t gid, char *err, size_t errlen);

/*
 * Close the listener and every client, and unlink the file; NULL does
 * nothing. The memory stays until control_free. Main thread.
 */
void control_close(control_t *ctl);

/* Free a closed control once the loop has run the close callbacks; NULL does nothing. */
void control_free(control_t *ctl);

#endif
