/* SPDX-License-Identifier: GPL-3.0-or-later */
/* shoald start-up and shutdown: zones, sockets, control, privilege drop, workers, signals. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <urcu.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/common/path.h"
#include "server/common/systemd.h"
#include "server/ctl/control.h"
#include "server/ctl/metrics.h"
#include "server/daemon/fdbudget.h"
#include "server/daemon/instance.h"
#include "server/daemon/server.h"
#include "server/daemon/takeover.h"
#include "server/daemon/takeover_wire.h"
#include "server/daemon/tls_setup.h"
#include "server/events/catalog.h"
#include "server/events/notify_out.h"
#include "server/events/producer.h"
#include "server/events/reload.h"
#include "server/events/sched.h"
#include "server/events/state.h"
#include "server/events/update.h"
#include "server/net/socket.h"
#include "server/net/worker.h"
#include "zone/journal.h"

/*
 * After handing its sockets over, a process serves on this long beside the
 * new one before it stops: what the kernel queued on sockets it retires,
 * and connections whose handshake was under way when the new process
 * steered traffic away from them, arrive and are answered meanwhile.
 */
#define HANDED_OVERLAP_MS 500

/* The running daemon: what server_run sets up, in that order, and tears down. */
typedef struct server {
	conf_t *cfg;
	const responder_t *responder;
	zonedb_ref_t zones;    /* what workers read (RCU) */
	reload_t reload;       /* loads and publishes the zones */
	uv_loop_t *loop;       /* main loop: signals, control, reload results; NULL until made */
	instance_t *instance;  /* this process's claim on its addresses, taken before binding */
	socket_set_t *sockets; /* every listening socket, made before the privilege drop */
	workers_t workers;
	stats_groups_t counters; /* those kept outside the workers: NOTIFY out, transfers in */
	bool workers_run;        /* workers_start was called: stop them */
	control_t *control;
	notify_out_t *notifier; /* NOTIFY out, after each reload */
	sched_t *sched;         /* secondary zones' events: NULL without secondary zones */
	updater_t *updater;     /* dynamic updates (RFC 2136): the update thread */
	state_t *state;         /* what survives a restart (state-dir) */
	producer_t *producer;   /* the catalogs made here, as made last (NULL: none yet) */
	char journal_dir[4096]; /* "" or state-dir/journal: the zones' IXFR journals (reload's) */
	journal_budget_t journal_budget; /* their bound together, ixfr-journal-total */
	uv_async_t transferred;          /* a transfer thread published a zone: NOTIFY out */
	catalogs_t *catalogs;            /* consumer catalog zones' members (RFC 9432) */
	bool transferred_on;
	takeover_t *takeover; /* giving the sockets away, restarting, the old process watched */
	takeover_wire_taken_t taken; /* --takeover: what the running server gave, until "go" */
	bool taking;                 /* taken holds a takeover */
	bool control_taken;          /* the control socket is the one taken over */
	bool handed;                 /* this process gave its sockets away: it stops soon */
	pid_t taker;                 /* ... to this one */
	uv_timer_t overlap;          /* then serves on beside it for HANDED_OVERLAP_MS */
	metrics_t *metrics;          /* the Prometheus endpoint, or NULL */
	/* TLS: what every session starts from (made at start; credentials when TLS is used) */
	tls_ctx_t *tls;
	/*
	 * The configuration of the zones served (their files, lists, keys):
	 * cfg at start, then the last one a reconfig, zone-add or zone-remove
	 * published (heap, freed when the next replaces it). cfg stays the
	 * rest's: workers, sockets and what needs a restart.
	 */
	conf_t *zcfg;
	conf_t *orphan;           /* a reconfig's, abandoned at reload-timeout: freed later */
	uint32_t tcp_max_as_read; /* tcp-max-connections before the descriptor budget */
	unsigned runtime_changes; /* zone-add and zone-remove since the last reconfig */
	bool hup_pending;         /* SIGHUP during a reload: its reconfig runs after */
	uv_signal_t sig_term, sig_int, sig_hup, sig_usr1;
	bool stopping;
	time_t started_at;
	uv_loop_t loop_mem; /* the main loop, once made */
	uid_t uid;          /* the user and group to drop to (cfg->user), looked up first */
	gid_t gid;
} server_t;

/* Stop: end the main loop, after which server_run stops the workers. Main thread. */
static void server_request_stop(void *arg)
{
	server_t *srv = arg;
	if (srv->stopping)
		return;
	srv->stopping = true;
	reload_stopping(&srv->reload);
	if (srv->takeover)
		takeover_stopping(srv->takeover);
	if (!srv->handed) /* the taker is the service now */
		systemd_stopping();
	log_info("stopping");
	uv_stop(srv->loop);
}

static void hup_reconfig(server_t *srv);
static void catalog_step(server_t *srv);

/*
 * A reload ended: NOTIFY the secondaries of zones whose serial changed,
 * and run the reconfig of a SIGHUP that came meanwhile. Main thread.
 */
static void on_published(void *arg)
{
	server_t *srv = arg;
	notify_out_published(srv->notifier);
	if (srv->hup_pending && !srv->stopping)
		hup_reconfig(srv);
	catalog_step(srv);
}

/* A transfer thread published a transferred zone: NOTIFY our own secondaries. */
static void on_transferred(uv_async_t *a)
{
	server_t *srv = a->data;
	notify_out_published(srv->notifier);
	catalog_step(srv); /* a catalog transferred: its members follow */
}

/* On a transfer thread: wake the main loop for on_transferred. */
static void transferred(void *arg)
{
	server_t *srv = arg;
	uv_async_send(&srv->transferred);
}

/*
 * On a worker: a NOTIFY was let in for secondary zone `apex`. By name: the
 * worker's set may follow a configuration the scheduler does not have
 * yet (a reconfig published, not applied), whose zone indexes differ.
 * Returns whether it made the zone's refresh due.
 */
static bool notify_in(void *arg, unsigned worker, const uint8_t *apex, bool has_serial,
		      uint32_t serial, const struct sockaddr *peer)
{
	server_t *srv = arg;
	(void)worker;
	(void)peer;
	/* inside the worker's read section: a reconfig frees the one it replaces after a grace
	 * period */
	return sched_notify(__atomic_load_n(&srv->sched, __ATOMIC_ACQUIRE), apex, has_serial,
			    serial);
}

/*
 * The scheduler and its transfer threads stop for good, and srv->sched is
 * NULL: workers hand NOTIFY to it inside their read section, so it is
 * freed after a grace period. Main thread.
 */
static void sched_retire(server_t *srv)
{
	sched_t *sec = srv->sched;
	if (!sec)
		return;
	__atomic_store_n(&srv->sched, NULL, __ATOMIC_RELEASE);
	synchronize_rcu();
	sched_free(sec);
}

/*
 * The update thread stops (its files written), after the workers stopped
 * handing it UPDATEs: they do inside their read section, so it is freed
 * after a grace period. Main thread.
 */
static void updater_retire(server_t *srv)
{
	if (!srv->updater)
		return;
	workers_set_updater(&srv->workers, NULL);
	synchronize_rcu();
	updater_free(srv->updater);
	srv->updater = NULL;
}

/* What the scheduler works with: the daemon's, and the transfers-in of the start. */
static void sched_env(server_t *srv, sched_env_t *env)
{
	*env = (sched_env_t){
		.zones = &srv->zones,
		.reload = &srv->reload,
		.state = srv->state,
		.published = transferred,
		.published_arg = srv,
		.xfr_in = &srv->counters.xfr_in,
		.counters = &srv->counters.sched,
		.transfers_in = srv->cfg->transfers_in,
		.tls = srv->tls,
	};
}

static void on_signal(uv_signal_t *h, int signum)
{
	server_t *srv = h->data;
	if (signum == SIGUSR1) {
		/* logrotate's: what shoalctl log-reopen does */
		char text[PATH_MAX + 128];
		if (log_file_reopen(text, sizeof(text)) < 0)
			log_error("SIGUSR1: %s", text);
		return;
	}
	if (signum == SIGHUP) {
		hup_reconfig(srv);
		return;
	}
	server_request_stop(srv);
}

/* ---- reconfig, zone-add, zone-remove ---- */

/* Zone names for a reply, as many as fit, then "and N more". */
typedef struct names {
	char text[512];
	size_t more;
} names_t;

static void names_add(names_t *n, const char *name)
{
	size_t len = strlen(n->text);
	if (len + strlen(name) + 3 < sizeof(n->text))
		snprintf(n->text + len, sizeof(n->text) - len, "%s%s", len ? ", " : "", name);
	else
		n->more++;
}

/* The names as a reply lists them ("-" for none), into buf. */
static const char *names_text(const names_t *n, char *buf, size_t cap)
{
	if (!n->text[0])
		return "-";
	if (!n->more)
		return n->text;
	snprintf(buf, cap, "%s and %zu more", n->text, n->more);
	return buf;
}

/* The one running: reload_reconfig lets no second one start. */
typedef struct reconfig_req {
	server_t *srv;
	conf_t *cfg;            /* the configuration to serve, published or freed */
	tls_creds_t *creds;     /* its TLS credentials, read anew (NULL: no TLS) */
	const char *what;       /* reconfig, zone-add, zone-remove */
	const char *from;       /* the log lines' start: "SIGHUP: " or "" */
	control_reply_fn reply; /* NULL: SIGHUP's, the log alone */
	void *client;
	/* "zones: N; added: A; removed: R; options: O", and the zones whose file or limits changed
	 */
	char summary[2048];
	names_t files;
	char notes[1400]; /* lines after it: what needs a restart, zone-add/zone-remove replaced */
	enum zonedb_change change; /* zone-add, zone-remove: the one change (reload_change_one) */
	size_t removed;
	/* zone-add --catalog, zone-remove of a member: the catalog made again after it, or "" */
	char catalog[NAME_TEXT_MAX + 2];
	char member[NAME_TEXT_MAX + 2]; /* the zone added to it or taken from it */
	bool member_added;
	char *held; /* the reply, held while that catalog changes */
	bool held_ok;
	bool reread;             /* the change did not apply: the catalog's file read again */
	bool catalog_step;       /* a catalog's step (catalogs_step): committed when done */
	char catalog_what[1100]; /* what: "catalog example." */
} reconfig_req_t;

static void conf_free(conf_t *cfg)
{
	if (!cfg)
		return;
	conf_clear(cfg);
	free(cfg);
}

/*
 * Mark the zones of `now` whose data `was` serves already (kept: not read
 * again unless its file changed on disk, which the reload thread sees),
 * and say how they differ: the zones added, removed, those whose settings
 * alone changed (options: transfer and NOTIFY lists, keys, primaries,
 * journal) into req->summary, and those whose file or limits changed into
 * req->files.
 */
static void zones_compare(const conf_t *was, conf_t *now, reconfig_req_t *req)
{
	names_t added = { .more = 0 }, removed = { .more = 0 }, options = { .more = 0 };
	for (size_t j = 0; j < now->zone_count; j++) {
		long i = conf_zone_index(was, conf_zone_spec(now, j)->name);
		if (i >= 0 && conf_zone_same_data(was, (size_t)i, now, j)) {
			/* now was just read: its zones are its own, changed in place */
			zone_spec_t *z = conf_zone_spec_mut(now, j);
			assert(z);
			z->keep = true;
		}
		if (i < 0)
			names_add(&added, conf_zone_spec(now, j)->name);
		else if (!conf_zone_spec(now, j)->keep)
			names_add(&req->files, conf_zone_spec(now, j)->name);
		else if (!conf_zone_same_settings(was, (size_t)i, now, j))
			names_add(&options, conf_zone_spec(now, j)->name);
	}
	for (size_t i = 0; i < was->zone_count; i++)
		if (conf_zone_index(now, conf_zone_spec(was, i)->name) < 0)
			names_add(&removed, conf_zone_spec(was, i)->name);
	char a[600], r[600], o[600];
	snprintf(req->summary, sizeof(req->summary),
		 "zones: %zu; added: %s; removed: %s; options: %s", now->zone_count,
		 names_text(&added, a, sizeof(a)), names_text(&removed, r, sizeof(r)),
		 names_text(&options, o, sizeof(o)));
}

/*
 * The scheduler for req->cfg: the running one reconfigured, or stopped
 * when no secondary is left, or one started for the first secondary.
 * Returns it (NULL: none). Main thread.
 */
static sched_t *reconfig_sched(server_t *srv, const reconfig_req_t *req)
{
	const conf_t *cfg = req->cfg;
	sched_env_t env;
	sched_env(srv, &env);
	sched_t *sec = srv->sched;
	/* without a scheduler, a zone-add of a primary that does not sign or a zone-remove
	 * brings no zone event */
	const zone_spec_t *added =
		req->change == ZONEDB_ADDED ? conf_zone_spec(cfg, cfg->zone_count - 1) : NULL;
	bool none_new =
		req->change == ZONEDB_REMOVED || (added && !added->secondary && !added->sign);
	if (!sec && none_new) {
		/* nothing to start: the scheduler's count of cfg's secondaries is a pass over all
		 */
	} else if (sec && !sched_wanted(cfg)) {
		sched_retire(srv);
		sec = NULL;
		log_info("reconfig: no secondary or signing zone left: the zone-event threads "
			 "stopped");
	} else if (sec) {
		if (sched_reconfig_one(sec, cfg, req->change, req->removed) < 0)
			log_error("reconfig: out of memory: the secondary zones keep the "
				  "previous configuration's transfer settings; a zone it did "
				  "not have as a secondary is not refreshed");
	} else if (sched_new(cfg, &env, &sec) < 0) {
		log_error("reconfig: out of memory: secondary zones are not refreshed");
	} else if (sec && sched_start(sec) < 0) {
		log_error("reconfig: cannot start the transfer threads");
		sched_free(sec);
		sec = NULL;
	} else if (sec) {
		log_info("reconfig: the transfer threads started for %zu secondary zone(s)",
			 conf_secondary_count(cfg));
	}
	return sec;
}

/*
 * The set of req->cfg is served: the notifier, the secondary zones and
 * the control's commands follow it, and the configuration it replaces is
 * freed once nothing uses it. A zone-add or zone-remove (req->change)
 * marked no zone keep and moves the rest by index. Main thread.
 */
static void reconfig_apply(server_t *srv, const reconfig_req_t *req)
{
	conf_t *cfg = req->cfg;
	bool marked = req->change == ZONEDB_REBUILD;
	assert(cfg != srv->zcfg && cfg != srv->cfg); /* a new one: the one it replaces is freed */
	for (size_t i = 0; marked && i < cfg->zone_count; i++) {
		/* a later reload reads every zone (a zone cfg shares is copied: out of memory,
		 * kept) */
		zone_spec_t *z = conf_zone_spec(cfg, i)->keep ? conf_zone_spec_mut(cfg, i) : NULL;
		if (z)
			z->keep = false;
	}
	if (cfg->log_level != srv->zcfg->log_level) {
		/* said under the old threshold, which the reader of the log has set */
		log_notice("log-level %s from now on", log_level_names[cfg->log_level]);
		log_set_level(cfg->log_level);
	}
	if (notify_out_reconfig_one(srv->notifier, cfg, req->change, req->removed) < 0)
		log_error("reconfig: out of memory: NOTIFY out keeps the previous zones' lists");
	/*
	 * The secondary zones follow: those kept with the same primaries keep
	 * their timers and their transfer in flight (no burst of SOA queries at
	 * each reconfig); those added or changed are refreshed soon. Without a
	 * scheduler yet, one starts; without a secondary zone any more, it stops
	 * (a later reconfig that adds one starts another).
	 */
	if (req->change == ZONEDB_REBUILD)
		state_retain(srv->state, cfg);
	else if (req->change == ZONEDB_REMOVED) /* srv->zcfg is the one it was removed from */
		state_forget(srv->state, conf_zone_spec(srv->zcfg, req->removed)->name);
	sched_t *sec = reconfig_sched(srv, req);
	__atomic_store_n(&srv->sched, sec, __ATOMIC_RELEASE);
	control_set_zones(srv->control, cfg, srv->notifier, sec);
	if (srv->zcfg != srv->cfg)
		conf_free(srv->zcfg);
	srv->zcfg = cfg;
}

/* Answer req's client, if any (SIGHUP has none: its outcome is in the log). */
static void reconfig_reply(const reconfig_req_t *req, bool ok, const char *body)
{
	if (req->reply)
		req->reply(req->client, ok, body);
}

/*
 * The reply's "zones: ...; file: ..." line into line: the summary, then
 * the zones whose file or limits changed in the configuration and those
 * read again whose serial moved (res->changed).
 */
static void reconfig_line(const reconfig_req_t *req, const reload_result_t *res, char *line,
			  size_t cap)
{
	char files[600];
	const char *f = names_text(&req->files, files, sizeof(files));
	bool both = req->files.text[0] && res->changed[0];
	snprintf(line, cap, "%s; file: %s%s%s", req->summary, res->changed[0] && !both ? "" : f,
		 both ? ", " : "", res->changed);
}

/* The catalog req changed has been read again: the reply held, and how that went. */
static void on_catalog_done(void *arg, const reload_result_t *res)
{
	reconfig_req_t *req = arg;
	/*
	 * the change did not apply to the version served (a reconfig refused after
	 * the catalog was made): read its file, which holds what was made, whole
	 */
	if (res->rc < 0 && !req->reread &&
	    reload_start(&req->srv->reload, req->catalog, on_catalog_done, req) == 0) {
		log_warning("%s%s: catalog %s: the change did not apply (%s); its file read again",
			    req->from, req->what, req->catalog, shoal_strerror(res->rc));
		req->reread = true;
		return;
	}
	char line[1400];
	snprintf(line, sizeof(line), "catalog %s: %s%s\n", req->catalog,
		 res->rc ? "not read again: " : "", res->rc ? shoal_strerror(res->rc) : "updated");
	if (res->rc)
		log_error("%s%s %s", req->from, req->what, line);
	size_t len = strlen(req->held) + strlen(line) + strlen(res->errors) + 1;
	char *body = malloc(len);
	if (body)
		snprintf(body, len, "%s%s%s", req->held, line, res->errors);
	reconfig_reply(req, req->held_ok && res->rc == 0, body ? body : req->held);
	free(body);
	free(req->held);
	free(req);
}

/*
 * After a zone-add --catalog or a zone-remove of a member, published: the
 * catalog made again and read again (producer_follow), the reply (body)
 * held until then, so a script's next zone-add does not find the reload
 * busy. True when the reply is held (on_catalog_done frees req); false
 * when the catalog did not change, or could not be made (logged): the
 * caller replies.
 */
static bool catalog_follow(reconfig_req_t *req, const char *body, bool ok)
{
	server_t *srv = req->srv;
	char err[512] = "";
	req->held = strdup(body);
	int rc = req->held ? producer_follow(srv->producer, &srv->reload, req->cfg, req->catalog,
					     req->member, req->member_added, on_catalog_done, req,
					     err, sizeof(err))
			   : SHOAL_ENOMEM;
	if (rc == 1) {
		req->held_ok = ok;
		return true;
	}
	if (rc < 0)
		log_error("%s%s: catalog %s not updated: %s", req->from, req->what, req->catalog,
			  err[0] ? err : shoal_strerror(rc));
	free(req->held);
	req->held = NULL;
	return false;
}

/*
 * A reconfig refused after it made the catalogs from its configuration:
 * made again from the one served, so no member it did not serve stays
 * listed in their files (their serial moves on; the next change reads the
 * file, as on_catalog_done does).
 */
static void catalogs_back(server_t *srv, const reconfig_req_t *req)
{
	char err[512];
	if (!strcmp(req->what, "reconfig") &&
	    producer_make(srv->producer, srv->zcfg, time(NULL), err, sizeof(err)) < 0)
		log_error("%s%s: %s", req->from, req->what, err);
}

/* The reload thread is done with a reconfig: apply and answer. Main loop. */
static void on_reconfig_done(void *arg, const reload_result_t *res)
{
	reconfig_req_t *req = arg;
	server_t *srv = req->srv;
	bool published = srv->reload.cfg == req->cfg;
	char head[256], line[3200];
	if (srv->stopping) {
		/*
		 * reload_close joined it: nothing follows the set any more. One
		 * published is freed at the end, after the configuration it is built
		 * from; the orphan before, if any, belongs to a thread long ended.
		 */
		if (published) {
			conf_free(srv->orphan);
			srv->orphan = req->cfg;
		} else {
			conf_free(req->cfg);
		}
		log_notice("%s%s not applied: shoald is stopping", req->from, req->what);
		snprintf(head, sizeof(head), "%s not applied: shoald is stopping\n", req->what);
		reconfig_reply(req, false, head);
		tls_creds_unref(req->creds);
		free(req);
		return;
	}
	line[0] = '\0';
	if (req->catalog_step)
		catalogs_commit(srv->catalogs, published);
	if (published) {
		reconfig_apply(srv, req);
		if (req->creds) {
			/* new sessions take them; those under way keep theirs */
			tls_ctx_set_creds(srv->tls, req->creds);
			req->creds = NULL;
		}
		/* a zone that failed keeps its version: the rest is applied, and the exit says so
		 */
		snprintf(head, sizeof(head), "%s done%s\n", req->what,
			 res->rc ? "; zones that failed keep their previous version" : "");
		reconfig_line(req, res, line, sizeof(line));
		log_msg(res->rc ? LOG_LEVEL_WARNING : LOG_LEVEL_INFO, "%s%.*s: %s", req->from,
			(int)strcspn(head, "\n;"), head, line);
	} else {
		/* a zone that did not load says why (a file missing...), not "zone content error"
		 */
		int first = res->rc == SHOAL_EZONE ? (int)strcspn(res->errors, "\n") : 0;
		snprintf(head, sizeof(head), "%s refused (%.*s): nothing changed\n", req->what,
			 first ? first : (int)strlen(shoal_strerror(res->rc)),
			 first ? res->errors : shoal_strerror(res->rc));
		log_error("%s%.*s", req->from, (int)strcspn(head, "\n"), head);
		catalogs_back(srv, req);
		if (res->rc == SHOAL_ETIMEOUT && srv->reload.running)
			srv->orphan = req->cfg; /* the abandoned thread still reads it */
		else
			conf_free(req->cfg);
	}
	tls_creds_unref(req->creds);
	size_t len = strlen(head) + strlen(line) + strlen(req->notes) + strlen(res->errors) +
		     strlen(res->warnings) + 4;
	char *body = malloc(len);
	if (body)
		snprintf(body, len, "%s%s%s%s%s%s", head, line, line[0] ? "\n" : "",
			 published ? req->notes : "", res->errors, res->warnings);
	if (published && req->catalog[0] && catalog_follow(req, body ? body : head, res->rc == 0)) {
		free(body);
		return; /* replied to when the catalog is read again */
	}
	reconfig_reply(req, published && res->rc == 0, body ? body : head);
	free(body);
	free(req);
}

/* Read the configuration again, from the file and the command line the server started with. */
static conf_t *conf_reread(const server_t *srv, char *err, size_t errlen)
{
	conf_t *cfg = calloc(1, sizeof(*cfg));
	/* getopt reorders what it parses: a copy of the command line */
	char **argv = calloc((size_t)srv->cfg->argc + 1, sizeof(char *));
	int rc = SHOAL_ENOMEM;
	if (cfg && argv && conf_init(cfg) == 0) {
		for (int i = 0; i < srv->cfg->argc; i++)
			argv[i] = srv->cfg->argv[i];
		rc = conf_parse_args(cfg, srv->cfg->argc, argv, stderr, err, errlen);
		if (rc == 0)
			rc = conf_validate(cfg, err, errlen);
	}
	if (rc == SHOAL_ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(argv);
	if (rc != 0 && cfg) {
		conf_clear(cfg);
		free(cfg);
		cfg = NULL;
	}
	if (cfg) {
		cfg->argc = srv->cfg->argc; /* the command line stays the server's */
		cfg->argv = srv->cfg->argv;
	}
	return cfg;
}

/*
 * zone-add's "--catalog CATALOG NAME FILE" (shoalctl's "NAME FILE
 * --catalog CATALOG"): the catalog's name into req->catalog, the rest
 * returned; "NAME FILE" returned as it is. NULL with err when the
 * catalog is not a name.
 */
static const char *catalog_arg(const char *arg, reconfig_req_t *req, char *err, size_t errlen)
{
	static const char flag[] = "--catalog ";
	if (strncmp(arg, flag, sizeof(flag) - 1))
		return arg;
	arg += sizeof(flag) - 1;
	size_t len = strcspn(arg, " ");
	char typed[NAME_TEXT_MAX + 2];
	if (len >= sizeof(typed) ||
	    (snprintf(typed, sizeof(typed), "%.*s", (int)len, arg),
	     name_zone_text(typed, req->catalog, sizeof(req->catalog)) <= 0)) {
		snprintf(err, errlen, "usage: zone-add NAME FILE --catalog CATALOG");
		return NULL;
	}
	arg += len;
	while (*arg == ' ')
		arg++;
	return arg;
}

/*
 * A new configuration for the zones from the one served: reconfig reads
 * the file again, zone-add and zone-remove change one zone of it. Returns
 * it, or NULL with the reason in err.
 */
static conf_t *reconfig_build(server_t *srv, const char *command, const char *arg,
			      reconfig_req_t *req, char *err, size_t errlen)
{
	if (!strcmp(command, "reconfig")) {
		conf_t *cfg = conf_reread(srv, err, errlen);
		if (!cfg)
			return NULL;
		/* the catalogs' members, which no file lists, stay while their catalog does */
		if (catalogs_into(srv->catalogs, cfg, srv->zcfg) < 0) {
			snprintf(err, errlen, "out of memory");
			conf_free(cfg);
			return NULL;
		}
		/* a catalog whose members changed gets a newer file: the reload reads it */
		if (producer_make(srv->producer, cfg, time(NULL), err, errlen) < 0) {
			conf_free(cfg);
			return NULL;
		}
		/* what the running server holds, as read (the descriptor budget lowers one) */
		conf_t running = *srv->cfg;
		running.tcp.max_connections = srv->tcp_max_as_read;
		char names[1024];
		size_t n = conf_restart_changes(&running, cfg, names, sizeof(names));
		cfg->threads = srv->cfg->threads; /* what runs, for the service manager's status */
		/* keys-dir needs a restart: the zones' keys stay where they are */
		if (conf_keys_dir_keep(cfg, srv->cfg) < 0) {
			snprintf(err, errlen, "out of memory");
			conf_free(cfg);
			return NULL;
		}
		zones_compare(srv->zcfg, cfg, req);
		size_t used = 0;
		if (srv->runtime_changes)
			used += (size_t)snprintf(req->notes, sizeof(req->notes),
						 "%u zone-add/zone-remove change(s) since the last "
						 "reconfig replaced by the file's zones\n",
						 srv->runtime_changes);
		if (n) {
			snprintf(req->notes + used, sizeof(req->notes) - used,
				 "needs a restart (not applied): %s\n", names);
			log_warning("%sreconfig: changed, need a restart, not applied: %s",
				    req->from, names);
		}
		/* the key and certificate read again: a renewed certificate without a restart */
		if ((tls_setup_wanted(cfg) || srv->cfg->listen_tls_count) &&
		    tls_setup_creds(cfg, state_dir(srv->state), "reconfig", &req->creds, err,
				    errlen) < 0) {
			conf_free(cfg);
			return NULL;
		}
		return cfg;
	}
	char name[NAME_TEXT_MAX + 2];
	const char *file = NULL;
	if (!strcmp(command, "zone-add") && !(arg = catalog_arg(arg, req, err, errlen)))
		return NULL;
	size_t nlen = strcspn(arg, " ");
	if (!strcmp(command, "zone-add")) {
		file = arg + nlen;
		while (*file == ' ')
			file++;
		if (!*file) {
			snprintf(err, errlen, "usage: zone-add NAME FILE");
			return NULL;
		}
		if (strlen(file) >= PATH_MAX) {
			snprintf(err, errlen, "FILE is longer than %d octets", PATH_MAX - 1);
			return NULL;
		}
	} else if (arg[nlen]) {
		snprintf(err, errlen, "usage: zone-remove NAME");
		return NULL;
	}
	if (nlen >= NAME_TEXT_MAX) {
		snprintf(err, errlen, "NAME is longer than %d octets", NAME_TEXT_MAX - 1);
		return NULL;
	}
	snprintf(name, sizeof(name), "%.*s", (int)nlen, arg);
	long i = conf_zone_index(srv->zcfg, name);
	if (file && i >= 0) {
		snprintf(err, errlen, "zone %s is already served", name);
		return NULL;
	}
	if (!file && i < 0) {
		snprintf(err, errlen, "no zone %s is served", name);
		return NULL;
	}
	conf_t *cfg = calloc(1, sizeof(*cfg));
	if (!cfg || conf_copy(cfg, srv->zcfg) < 0) {
		free(cfg);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	int rc = 0;
	const conf_member_t *member = file ? NULL : conf_zone_xfr(cfg, (size_t)i)->member;
	if (member) /* the catalog that lists it loses a member */
		snprintf(req->catalog, sizeof(req->catalog), "%s", member->catalog);
	/* as the configuration spells it, as the catalog's PTR names it */
	snprintf(req->member, sizeof(req->member), "%s",
		 file ? "" : conf_zone_spec(cfg, (size_t)i)->name);
	if (file)
		rc = conf_zone_add(cfg, name, file);
	else
		rc = conf_zone_remove(cfg, (size_t)i);
	if (rc == 0 && file && req->catalog[0]) {
		rc = conf_zone_set_catalog(cfg, cfg->zone_count - 1, req->catalog, err, errlen);
		snprintf(req->member, sizeof(req->member), "%s",
			 conf_zone_spec(cfg, cfg->zone_count - 1)->name);
		req->member_added = true;
	}
	if (rc == SHOAL_EINVAL) {
		conf_free(cfg);
		return NULL;
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s", shoal_strerror(rc));
		conf_free(cfg);
		return NULL;
	}
	/* one zone added or removed: the set is derived, no zone compared by name nor marked */
	req->change = file ? ZONEDB_ADDED : ZONEDB_REMOVED;
	req->removed = file ? 0 : (size_t)i;
	snprintf(req->summary, sizeof(req->summary),
		 "zones: %zu; added: %.600s; removed: %.600s; options: -", cfg->zone_count,
		 file ? name : "-", file ? "-" : name);
	srv->runtime_changes++;
	return cfg;
}

/*
 * Start a reconfig, zone-add or zone-remove (command, with cmd_arg) for
 * reply's client, or for SIGHUP (from "SIGHUP: ", reply NULL: the log says
 * how it went). Main loop.
 */
static void reconfig_begin(server_t *srv, const char *command, const char *cmd_arg,
			   const char *from, control_reply_fn reply, void *client)
{
	char err[1400] = "", body[1500];
	if (srv->orphan && !srv->reload.running) {
		conf_free(srv->orphan);
		srv->orphan = NULL;
	}
	if (srv->reload.running) {
		snprintf(body, sizeof(body),
			 "busy: a reload or reconfig is running; nothing changed, try again\n");
		if (reply)
			reply(client, false, body);
		return;
	}
	reconfig_req_t *req = calloc(1, sizeof(*req));
	if (!req) {
		if (reply)
			reply(client, false, "out of memory\n");
		log_error("%s%s: out of memory", from, command);
		return;
	}
	*req = (reconfig_req_t){
		.srv = srv, .what = command, .from = from, .reply = reply, .client = client
	};
	log_info("%s%s%s%s: requested", from, command, cmd_arg ? " " : "", cmd_arg ? cmd_arg : "");
	unsigned changes = srv->runtime_changes;
	req->cfg = reconfig_build(srv, command, cmd_arg ? cmd_arg : "", req, err, sizeof(err));
	int rc = req->cfg ? 0 : SHOAL_ECONFIG;
	/*
	 * reconfig reads again the kept zones whose file changed; one zone
	 * added or removed derives the set from the one served, touching no
	 * other zone
	 */
	if (rc == 0 && req->change != ZONEDB_REBUILD)
		rc = reload_change_one(&srv->reload, req->cfg, req->change, req->removed,
				       on_reconfig_done, req);
	else if (rc == 0)
		rc = reload_reconfig(&srv->reload, req->cfg, true, on_reconfig_done, req);
	if (rc < 0) {
		srv->runtime_changes = changes;
		if (req->cfg)
			snprintf(err, sizeof(err), "%s", shoal_strerror(rc));
		log_error("%s%s refused: %s; nothing changed", from, command, err);
		catalogs_back(srv, req);
		snprintf(body, sizeof(body), "%s refused: %s; nothing changed\n", command, err);
		reconfig_reply(req, false, body);
		conf_free(req->cfg);
		tls_creds_unref(req->creds);
		free(req);
		return;
	}
	if (!strcmp(command, "reconfig"))
		srv->runtime_changes = 0;
}

/* control's reconfig, zone-add and zone-remove. Main loop. */
static void reconfig_command(void *arg, const char *command, const char *cmd_arg,
			     control_reply_fn reply, void *client)
{
	reconfig_begin(arg, command, cmd_arg, "", reply, client);
}

/*
 * SIGHUP (systemctl reload): what shoalctl reconfig does, as Knot's and
 * BIND's reload re-read their configuration: the file read again, a zone
 * added served, a zone file changed on disk read again, a broken file
 * refused with nothing changed; the outcome in the log. During a reload
 * or reconfig, it follows that one. Main loop.
 */
static void hup_reconfig(server_t *srv)
{
	if (srv->reload.running) {
		srv->hup_pending = true;
		log_info("SIGHUP: a reload or reconfig is running: the reconfig follows it");
		return;
	}
	srv->hup_pending = false;
	reconfig_begin(srv, "reconfig", NULL, "SIGHUP: ", NULL, NULL);
}

/*
 * The next consumer catalog whose version changed: its members' change
 * made into one new configuration and published as a reconfig is (one
 * member: derived as zone-add or zone-remove derive the set; more: one
 * rebuild that keeps every other zone), then committed in
 * on_reconfig_done. Runs after each publication, one catalog at a time;
 * nothing while a reload or reconfig runs (its end runs this again).
 * Main loop.
 */
static void catalog_step(server_t *srv)
{
	if (!srv->catalogs || srv->stopping || srv->reload.running)
		return;
	reconfig_req_t *req = calloc(1, sizeof(*req));
	if (!req) {
		log_error("catalog: out of memory: members are not applied");
		return;
	}
	*req = (reconfig_req_t){ .srv = srv, .from = "", .catalog_step = true };
	req->what = req->catalog_what;
	int rc = catalogs_step(srv->catalogs, srv->zcfg, &srv->zones, &req->cfg, &req->change,
			       &req->removed, req->catalog_what, sizeof(req->catalog_what));
	if (rc == 1 && req->change == ZONEDB_REBUILD) {
		zones_compare(srv->zcfg, req->cfg, req);
		rc = reload_reconfig(&srv->reload, req->cfg, false, on_reconfig_done, req);
	} else if (rc == 1) {
		bool added = req->change == ZONEDB_ADDED;
		const char *name = added ? conf_zone_spec(req->cfg, req->cfg->zone_count - 1)->name
					 : conf_zone_spec(srv->zcfg, req->removed)->name;
		snprintf(req->summary, sizeof(req->summary),
			 "zones: %zu; added: %.600s; removed: %.600s; options: -",
			 req->cfg->zone_count, added ? name : "-", added ? "-" : name);
		rc = reload_change_one(&srv->reload, req->cfg, req->change, req->removed,
				       on_reconfig_done, req);
	}
	if (rc == 0 && req->cfg)
		return; /* started: on_reconfig_done commits it and frees req */
	if (rc < 0) {
		log_error("%s: %s: its members' change is not applied", req->catalog_what,
			  shoal_strerror(rc));
		catalogs_commit(srv->catalogs, false);
	}
	conf_free(req->cfg);
	free(req);
}

/* Reload's prepare: the zones new to a set count from zero. The publishing thread. */
static void prepare_zone_set(void *arg, const zonedb_t *db)
{
	server_t *srv = arg;
	workers_zone_slots_reset(srv->workers.zone_stats ? &srv->workers : NULL, db);
}

/* The uid and gid of cfg->user and cfg->group. Returns 0 or SHOAL_ECONFIG with err. */
static int lookup_user(const conf_t *cfg, uid_t *uid, gid_t *gid, char *err, size_t errlen)
{
	struct passwd *pw = getpwnam(cfg->user);
	if (!pw) {
		snprintf(err, errlen, "user \"%s\" does not exist", cfg->user);
		return SHOAL_ECONFIG;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	if (cfg->group) {
		struct group *gr = getgrnam(cfg->group);
		if (!gr) {
			snprintf(err, errlen, "group \"%s\" does not exist", cfg->group);
			return SHOAL_ECONFIG;
		}
		*gid = gr->gr_gid;
	}
	return 0;
}

/*
 * Whether the zones are read after the workers answer (each answering as
 * soon as it has loaded) rather than before: on a start of its own. A
 * check reads them all to say what is wrong, and a takeover must not take
 * the sockets with a zone that fails (the server it replaces serves on).
 */
static bool zones_deferred(const server_t *srv)
{
	return srv->responder->zones && !srv->cfg->check && !srv->cfg->takeover;
}

/*
 * The first load's zones have all been read (reload_load_rest): NOTIFY out
 * takes the serials as they are (those changed since the last NOTIFY kept
 * are told), and the scheduler starts now that each secondary's saved
 * copy, if any, is served. Main loop.
 */
static void first_load_done(void *arg)
{
	server_t *srv = arg;
	notify_out_published(srv->notifier);
	/* made now: its timers start from the versions the saved copies gave */
	sched_env_t env;
	sched_env(srv, &env);
	sched_t *sec = NULL;
	if (sched_new(srv->zcfg, &env, &sec) < 0) {
		log_error("out of memory: secondary zones are not refreshed");
		return;
	}
	int se = sched_start(sec);
	if (se < 0) {
		log_error(
			"cannot start the transfer threads: %s: secondary zones are not refreshed",
			shoal_strerror(se));
		sched_free(sec);
		return;
	}
	__atomic_store_n(&srv->sched, sec, __ATOMIC_RELEASE);
	control_set_zones(srv->control, srv->zcfg, srv->notifier, sec);
	if (srv->hup_pending && !srv->stopping)
		hup_reconfig(srv); /* a SIGHUP during the first load */
	catalog_step(srv);         /* the catalogs as loaded: their members are added */
}

/*
 * Whether the secondary zones can save their transfers, as the service
 * user: --check fails when one cannot; a start says so and serves on (a
 * transfer is then served from memory alone, and zone-status and the
 * metrics say so after each save that fails).
 */
static int check_saves(const server_t *srv, char *err, size_t errlen)
{
	char why[PATH_MAX + 512];
	int rc = sched_check_files(srv->cfg, why, sizeof(why));
	if (rc == 0)
		return 0;
	if (srv->cfg->check) {
		snprintf(err, errlen, "%.*s", (int)(errlen ? errlen - 1 : 0), why);
		return SHOAL_ECONFIG;
	}
	log_error("%s: its transfers are served, not kept across a restart", why);
	return 0;
}

/*
 * What the service user reads and writes first: the catalogs it makes,
 * the zones, and the secondaries' folders.
 */
static int service_user_files(server_t *srv, char *err, size_t errlen)
{
	int rc = SHOAL_ENOMEM;
	if (!srv->producer && !(srv->producer = producer_new()))
		snprintf(err, errlen, "out of memory");
	else
		rc = producer_make(srv->producer, srv->cfg, time(NULL), err, errlen);
	if (rc == 0)
		rc = reload_load(&srv->reload, zones_deferred(srv), err, errlen);
	return rc == 0 ? check_saves(srv, err, errlen) : rc;
}

/*
 * The first load of the zones, with the rights every reload will have:
 * reloads run after the privilege drop, so a file only root may read would
 * load at start and then never again; and the secondaries' folders, which
 * the transfer threads write as that user. As root with a user to become,
 * both run with that user's effective ids and no supplementary groups (as
 * after the drop), then take root's back to bind the sockets.
 */
static int load_zones_as(server_t *srv, bool as_user, uid_t uid, gid_t gid, char *err,
			 size_t errlen)
{
	if (!as_user || geteuid() != 0 || uid == 0)
		return service_user_files(srv, err, errlen);
	gid_t egid = getegid();
	int rc;
	if (setgroups(0, NULL) < 0 || setegid(gid) < 0 || seteuid(uid) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot take the ids of %s to load the zones: %s",
			 srv->cfg->user, shoal_strerror(rc));
	} else {
		rc = service_user_files(srv, err, errlen);
	}
	/* root's ids back (a no-op for those that did not change) */
	if (seteuid(0) < 0 || setegid(egid) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot take back root's ids after loading the zones: %s",
			 shoal_strerror(rc));
	}
	return rc;
}

/*
 * Drop to uid/gid after every socket is bound: the sockets keep the
 * uid they were made with, so a process of another user cannot join their
 * SO_REUSEPORT group (doc/design.md, "Sockets"). The control socket is
 * handed over first, through its descriptor.
 */
static int drop_privileges(server_t *srv, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	const conf_t *cfg = srv->cfg;
	if (!cfg->user)
		return 0;
	if (geteuid() != 0) {
		if (geteuid() == uid)
			return 0; /* already that user */
		snprintf(err, errlen, "cannot become user \"%s\": not running as root", cfg->user);
		return SHOAL_ECONFIG;
	}
	int rc = srv->control ? control_chown(srv->control, uid, gid, err, errlen) : 0;
	if (rc < 0)
		return rc;
	if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot drop privileges to %s: %s", cfg->user,
			 shoal_strerror(rc));
		return rc;
	}
	/* setuid(0) must now fail, or the drop did not take: how the system is set up */
	if (uid != 0 && setuid(0) == 0) {
		snprintf(err, errlen, "privileges could be regained after the drop");
		return SHOAL_ECONFIG;
	}
	log_info("running as user %s (uid %u, gid %u)", cfg->user, (unsigned)uid, (unsigned)gid);
	return 0;
}

static void log_migrate_req(void)
{
	/* said once at start-up, and only when it costs something */
	int state = tcp_migrate_req_state();
	if (state == 0)
		log_notice("net.ipv4.tcp_migrate_req=0: TCP connections queued at a worker's "
			   "stop are reset, not migrated");
	else
		log_debug("net.ipv4.tcp_migrate_req: %s", state > 0 ? "1" : "unreadable");
}

/*
 * The descriptor budget, before any socket is made: raise the soft
 * RLIMIT_NOFILE to the hard limit, then derive the TCP connections per
 * worker from what is left after every socket, loop and reserve, so
 * accepted connections cannot use up the descriptors; tcp-max-connections
 * is the upper bound. A configuration that cannot fit stops start-up.
 */
static int descriptors_plan(conf_t *cfg, char *err, size_t errlen)
{
	uint64_t before, limit;
	int rc = fdbudget_raise(&before, &limit);
	if (rc < 0)
		log_warning("cannot raise the descriptor limit (RLIMIT_NOFILE) from %llu: %s",
			    (unsigned long long)before, shoal_strerror(rc));
	int64_t open = fdbudget_count_open();
	fdbudget_in_t in = {
		.limit = limit,
		.open = open < 0 ? 3 : (uint64_t)open,
		.threads = cfg->threads,
		.addresses = cfg->listen_count,
		.tls_addresses = cfg->listen_tls_count,
		.shared_udp = cfg->socket_mode == SOCKET_MODE_SHARED,
		.control = cfg->control != NULL,
		.metrics = cfg->metrics.addr_len != 0,
		.max_connections = cfg->tcp.max_connections,
		.transfers_in = cfg->transfers_in,
	};
	fdbudget_t b;
	if (fdbudget_plan(&in, &b) < 0) {
		snprintf(err, errlen,
			 "descriptors: RLIMIT_NOFILE is %llu; %u thread(s) x %zu address(es) need "
			 "%llu for sockets, loops and reserve, which leaves room for %llu TCP "
			 "connection(s) per worker, fewer than %u; raise the limit (ulimit -n, "
			 "LimitNOFILE=) or use fewer threads or addresses",
			 (unsigned long long)limit, cfg->threads, cfg->listen_count,
			 (unsigned long long)b.fixed, (unsigned long long)b.per_worker_room,
			 cfg->tcp.max_connections < FDBUDGET_TCP_MIN ? cfg->tcp.max_connections
								     : FDBUDGET_TCP_MIN);
		return SHOAL_ECONFIG;
	}
	log_info("descriptors: RLIMIT_NOFILE %llu (soft limit was %llu), %llu for sockets, loops "
		 "and reserve; TCP connections per worker: %u (tcp-max-connections %u)",
		 (unsigned long long)limit, (unsigned long long)before, (unsigned long long)b.fixed,
		 b.per_worker, cfg->tcp.max_connections);
	if (b.per_worker < cfg->tcp.max_connections)
		log_notice(
			"tcp-max-connections %u lowered to %u per worker to fit RLIMIT_NOFILE %llu",
			cfg->tcp.max_connections, b.per_worker, (unsigned long long)limit);
	cfg->tcp.max_connections = b.per_worker;
	return 0;
}

/*
 * The files others could reach: the control socket, the pid file, the
 * socket a takeover asks: none under a folder every user may write (any of
 * them could put their own there). Returns 0 or SHOAL_ECONFIG with err.
 */
static int paths_check(const conf_t *cfg, char *err, size_t errlen)
{
	int rc = 0;
	if (cfg->control)
		rc = path_check_folders("control", cfg->control, err, errlen);
	if (rc == 0 && cfg->pid_file)
		rc = path_check_folders("pid-file", cfg->pid_file, err, errlen);
	if (rc == 0 && cfg->takeover)
		rc = path_check_folders("takeover", cfg->takeover, err, errlen);
	return rc;
}

/* Whether cfg has a zone whose timers or NOTIFYs are worth keeping across restarts. */
static bool state_wanted(const conf_t *cfg)
{
	for (size_t i = 0; i < cfg->zone_count; i++)
		if (conf_zone_xfr(cfg, i)->primaries.count || conf_zone_xfr(cfg, i)->notify.count)
			return true;
	return false;
}

/*
 * The folder of the zones' IXFR journals, state-dir/journal, made as a
 * folder of uid that no one else may write (as state-dir itself), and
 * handed to the reloads with the bound of its files (none with an
 * ixfr-journal-total of 0: journals in memory only). Main thread, before the privilege drop and the
 * first load. Returns 0 or a negative error with err.
 */
static int journal_start(server_t *srv, const char *dir, uid_t uid, gid_t gid, char *err,
			 size_t errlen)
{
	if (srv->cfg->ixfr_journal_total_mib == 0)
		return 0; /* kept in memory only */
	if (snprintf(srv->journal_dir, sizeof(srv->journal_dir), "%s/journal", dir) >=
	    (int)sizeof(srv->journal_dir)) {
		snprintf(err, errlen, "state-dir %s: too long a path", dir);
		return SHOAL_ECONFIG;
	}
	int rc = path_own_folder("state-dir", srv->journal_dir, 0700, uid, gid, err, errlen);
	srv->journal_budget.max = (size_t)srv->cfg->ixfr_journal_total_mib << 20;
	if (rc == 0) {
		srv->reload.journal_dir = srv->journal_dir;
		srv->reload.journal_budget = &srv->journal_budget;
	}
	return rc;
}

/*
 * The state kept across restarts, from state-dir: one set there must be
 * (or be made as) a folder of the user shoald runs as, uid, that no one
 * else may write, or shoald does not start. The default is used only when
 * it exists (shoald never makes it: systemd's StateDirectory= or the
 * package does); else the timers start afresh at each start, said once.
 * Main thread, before the privilege drop.
 */
static int state_start(server_t *srv, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	const conf_t *cfg = srv->cfg;
	const char *dir = cfg->state_dir ? cfg->state_dir : CONF_STATE_DIR_DEFAULT;
	struct stat st;
	bool use = true;
	if (!cfg->state_dir && lstat(dir, &st) < 0 && errno == ENOENT) {
		use = false;
		if (state_wanted(cfg))
			log_notice("state-dir %s does not exist: zone timers and NOTIFYs are "
				   "not kept across restarts",
				   dir);
	} else if (path_own_folder("state-dir", dir, cfg->state_dir ? 0700 : 0, uid, gid, err,
				   errlen) < 0) {
		if (cfg->state_dir)
			return SHOAL_ECONFIG;
		log_warning("%s: zone timers and NOTIFYs are not kept across restarts", err);
		use = false;
	}
	if (use && journal_start(srv, dir, uid, gid, err, errlen) < 0) {
		if (cfg->state_dir)
			return SHOAL_ECONFIG;
		log_warning("%s: IXFR journals are kept in memory only", err);
	}
	return state_open(use ? dir : NULL, &srv->state, err, errlen);
}

/* What the state holds, saved at stop: the timers and NOTIFYs of the zones. Main thread. */
static void state_stop(server_t *srv)
{
	char err[512];
	if (srv->state && state_save(srv->state, err, sizeof(err)) < 0)
		log_error("state-dir: cannot save the zones' timers: %s", err);
	state_free(srv->state);
	srv->state = NULL;
}

/* a and b name the same file. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * The control socket, with what its commands report on and act upon. When
 * taking over, the running server's socket is served if it is the one
 * configured: shoalctl never finds the path without a server behind it.
 */
static int control_start(server_t *srv, char *err, size_t errlen)
{
	control_env_t env = {
		.loop = srv->loop,
		.cfg = srv->cfg,
		.workers = &srv->workers,
		.counters = &srv->counters,
		.reload = &srv->reload,
		.zones = &srv->zones,
		.notifier = srv->notifier,
		.sched = srv->sched,
		.catalogs = srv->catalogs,
		.started_at = srv->started_at,
		.stop = server_request_stop,
		.stop_arg = srv,
		.takeover = takeover_give,
		.restart = takeover_restart,
		.takeover_arg = srv->takeover,
		.reconfig = reconfig_command,
		.reconfig_arg = srv,
	};
	takeover_wire_taken_t *t = &srv->taken;
	int rc;
	if (srv->taking && t->control_fd >= 0 && same_file(srv->cfg->control, srv->cfg->takeover)) {
		rc = control_adopt(&srv->control, &env, t->control_fd, srv->cfg->control, err,
				   errlen);
		t->control_fd = -1;
		srv->control_taken = true;
	} else {
		rc = control_open(&srv->control, &env, srv->cfg->control, err, errlen);
	}
	if (srv->control)
		takeover_set_control(srv->takeover, srv->control);
	return rc;
}

/* --takeover: the running server's sockets, checked and taken, with new ones where needed. */
static int sockets_take(server_t *srv, char *err, size_t errlen)
{
	const conf_t *cfg = srv->cfg;
	takeover_wire_taken_t *t = &srv->taken;
	char why[1024] = "";
	int rc = takeover_wire_connect(cfg->takeover, t, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, errlen, "takeover: %s", why);
		return rc;
	}
	srv->taking = true;
	log_info("takeover: pid %d (shoald %s, %u threads, socket-mode %s) gave %zu sockets",
		 (int)t->giver_pid, t->giver_version, t->threads, socket_mode_names[t->mode],
		 t->n_given);
	if (t->mode != cfg->socket_mode) {
		snprintf(why, sizeof(why),
			 "the running server's socket-mode is %s, this configuration's %s (stop "
			 "and start to change it)",
			 socket_mode_names[t->mode], socket_mode_names[cfg->socket_mode]);
		rc = SHOAL_ECONFIG;
	} else {
		/* takes every given socket, whatever the outcome */
		rc = socket_set_adopt(cfg->listen, cfg->listen_count, cfg->listen_tls,
				      cfg->listen_tls_count, cfg->threads, cfg->socket_mode,
				      t->given, t->n_given, &srv->sockets, why, sizeof(why));
	}
	if (rc < 0) {
		snprintf(err, errlen, "takeover refused: %s; pid %d serves on", why,
			 (int)t->giver_pid);
		return rc;
	}
	if (socket_set_retiring(srv->sockets) > 0)
		log_info("takeover: %u sockets of pid %d are retired: steered away, drained by it",
			 socket_set_retiring(srv->sockets), (int)t->giver_pid);
	return 0;
}

/*
 * Every worker runs on the sockets: steer the groups away from the sockets
 * the old process retires, and tell it to go. From its "ok" on, this
 * process is the server.
 */
static int takeover_finish(server_t *srv, char *err, size_t errlen)
{
	takeover_wire_taken_t *t = &srv->taken;
	char why[512] = "";
	int rc = socket_set_steer(srv->sockets, true, why, sizeof(why));
	if (rc == 0)
		rc = takeover_wire_go(t, srv->control_taken, why, sizeof(why));
	if (rc < 0) {
		/* the old process serves on, with every socket of its groups */
		char ignored[256];
		socket_set_steer(srv->sockets, false, ignored, sizeof(ignored));
		snprintf(err, errlen, "takeover: %s", why);
		return rc;
	}
	if (srv->control_taken)
		control_claim(srv->control);
	takeover_watch_giver(srv->takeover, t->fd, t->giver_pid);
	t->fd = -1;
	log_notice("took over from pid %d", (int)t->giver_pid);
	takeover_wire_taken_clear(t);
	srv->taking = false;
	return 0;
}

static void on_overlap_over(uv_timer_t *timer)
{
	server_request_stop(timer->data);
}

/* The taker said "go": serve on beside it a moment, then stop. */
static void on_handed(void *arg, pid_t taker, bool kept_control)
{
	server_t *srv = arg;
	srv->handed = true;
	srv->taker = taker;
	instance_handed(srv->instance); /* the taker writes the pid file next */
	if (srv->control)
		control_taken_over(srv->control, kept_control);
	uv_timer_start(&srv->overlap, on_overlap_over, HANDED_OVERLAP_MS, 0);
}

static int metrics_start(server_t *srv, char *err, size_t errlen)
{
	metrics_env_t env = { .loop = srv->loop,
			      .workers = &srv->workers,
			      .counters = &srv->counters,
			      .zones = &srv->zones,
			      .sched = &srv->sched,
			      .allow = srv->cfg->metrics_allow };
	return metrics_open(&srv->metrics, &env, &srv->cfg->metrics, err, errlen);
}

/* The process this one took over from has exited: its sockets left the groups. */
static void on_giver_gone(void *arg, pid_t giver)
{
	server_t *srv = arg;
	char err[256];
	if (socket_set_steer(srv->sockets, false, err, sizeof(err)) < 0)
		log_warning("takeover: %s (the groups keep steering to %zu workers)", err,
			    srv->workers.count);
	/* the giver emptied its pid file and gave up its lock before it closed the connection */
	if (srv->cfg->pid_file && instance_pid_file_take(srv->instance, err, sizeof(err)) < 0)
		log_warning("takeover: %s", err);
	if (srv->cfg->metrics.addr_len && !srv->metrics && metrics_start(srv, err, sizeof(err)) < 0)
		log_warning("takeover: %s", err);
	(void)giver;
}

static int takeover_start(server_t *srv)
{
	takeover_env_t env = {
		.loop = srv->loop,
		.cfg = srv->cfg,
		.sockets = srv->sockets,
		.threads = srv->cfg->threads,
		.handed = on_handed,
		.giver_gone = on_giver_gone,
		.arg = srv,
	};
	uv_timer_init(srv->loop, &srv->overlap);
	srv->overlap.data = srv;
	return takeover_new(&srv->takeover, &env);
}

/* What this process answered, for the log when it stops (a takeover's test sums them). */
static void log_answered(server_t *srv)
{
	worker_stats_t total, one;
	memset(&total, 0, sizeof(total));
	/* every thread's counters: each worker's loop and its receivers */
	for (size_t i = 0; i < srv->workers.count * srv->workers.parts; i++) {
		stats_read(&srv->workers.stats[i], &one);
		stats_sum(&total, &one);
	}
	uint64_t answers = 0;
	for (size_t r = 0; r < DNS_RCODE_MAX; r++)
		answers += total.answers[r];
	log_info("answered %llu of %llu UDP queries and %llu of %llu TCP queries%s",
		 (unsigned long long)answers, (unsigned long long)total.queries,
		 (unsigned long long)total.tcp.answers, (unsigned long long)total.tcp.queries,
		 srv->handed ? " before the takeover" : "");
}

static int signals_start(server_t *srv)
{
	uv_signal_t *sigs[] = { &srv->sig_term, &srv->sig_int, &srv->sig_hup, &srv->sig_usr1 };
	int nums[] = { SIGTERM, SIGINT, SIGHUP, SIGUSR1 };
	for (size_t i = 0; i < 4; i++) {
		sigs[i]->data = srv;
		int rc = uv_signal_init(srv->loop, sigs[i]);
		if (rc == 0)
			rc = uv_signal_start(sigs[i], on_signal, nums[i]);
		if (rc < 0)
			return rc; /* libuv's: -errno */
	}
	return 0;
}

static void signals_close(server_t *srv)
{
	uv_signal_t *sigs[] = { &srv->sig_term, &srv->sig_int, &srv->sig_hup, &srv->sig_usr1 };
	for (size_t i = 0; i < 4; i++)
		if (sigs[i]->loop)
			uv_close((uv_handle_t *)sigs[i], NULL);
}

/* What server_run starts from: the configuration, nothing open yet. */
static void server_init(server_t *srv, conf_t *cfg, const responder_t *responder)
{
	memset(srv, 0, sizeof(*srv));
	srv->cfg = cfg;
	srv->zcfg = cfg;
	srv->tcp_max_as_read = cfg->tcp.max_connections;
	srv->responder = responder;
	srv->taken.fd = srv->taken.control_fd = -1;
	reload_init(&srv->reload, cfg, &srv->zones);
	srv->reload.prepare = prepare_zone_set;
	srv->reload.prepare_arg = srv;
	srv->started_at = time(NULL);
	stats_set(&srv->counters.server.start_time, (uint64_t)srv->started_at);
}

/*
 * Start-up, before anything is bound: the user to become, the paths others
 * could reach, the zones (read with that user's rights), the descriptor
 * budget. Returns 0 or a negative error with err.
 */
static int server_prepare(server_t *srv, char *err, size_t errlen)
{
	conf_t *cfg = srv->cfg;
	int rc = 0;
	if (cfg->user)
		rc = lookup_user(cfg, &srv->uid, &srv->gid, err, errlen);
	if (rc == 0)
		rc = paths_check(cfg, err, errlen);
	if (rc == 0 && !cfg->check)
		rc = state_start(srv, cfg->user ? srv->uid : geteuid(),
				 cfg->user ? srv->gid : getegid(), err, errlen);
	/* before the first load: a consumer catalog's own file, which lists its members */
	if (rc == 0 && (catalogs_new(state_dir(srv->state), &srv->catalogs) < 0 ||
			catalogs_files(srv->catalogs, cfg) < 0)) {
		snprintf(err, errlen, "out of memory");
		rc = SHOAL_ENOMEM;
	}
	if (rc < 0)
		return rc;
	metrics_warn_reach(&cfg->metrics, &cfg->metrics_allow);
	if (srv->responder->warning)
		log_warning("%s", srv->responder->warning);
	if (srv->responder->zones)
		rc = load_zones_as(srv, cfg->user != NULL, srv->uid, srv->gid, err, errlen);
	if (rc == 0)
		rc = descriptors_plan(cfg, err, errlen);
	return rc;
}

/*
 * The pid file, opened now, before the privilege drop. A taker writes it
 * once the giver has gone, and serves on without it if it cannot open it.
 */
static int pid_file_open(server_t *srv, char *err, size_t errlen)
{
	const conf_t *cfg = srv->cfg;
	if (!cfg->pid_file)
		return 0;
	int rc =
		instance_pid_file(srv->instance, cfg->pid_file, cfg->takeover != NULL, err, errlen);
	if (rc < 0 && cfg->takeover) {
		log_warning("takeover: %s", err);
		rc = 0;
	}
	return rc;
}

/* Every listening socket: made, or taken from the running server (--takeover); then tuned. */
static int sockets_start(server_t *srv, char *err, size_t errlen)
{
	const conf_t *cfg = srv->cfg;
	int rc = cfg->takeover ? sockets_take(srv, err, errlen)
			       : socket_set_open(cfg->listen, cfg->listen_count, cfg->listen_tls,
						 cfg->listen_tls_count, cfg->threads,
						 cfg->socket_mode, &srv->sockets, err, errlen);
	if (rc < 0)
		return rc;
	socket_set_udp_buffers(srv->sockets, cfg->udp_receive_buffer, cfg->udp_send_buffer);
	if (cfg->cpu_affinity && cfg->socket_mode == SOCKET_MODE_REUSEPORT) {
		socket_set_steer_cpu(srv->sockets);
		/* a taker attaches it when it steers the groups (takeover_finish) */
		if (!cfg->takeover)
			rc = socket_set_steer(srv->sockets, false, err, errlen);
	}
	return rc;
}

/*
 * Start-up, as root: the main loop, the addresses claimed, the pid file,
 * every listening socket, and the takeover that may give them away.
 * Returns 0 or a negative error with err.
 */
static int server_bind(server_t *srv, char *err, size_t errlen)
{
	const conf_t *cfg = srv->cfg;
	int rc = uv_loop_init(&srv->loop_mem);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create the main loop");
		return rc;
	}
	srv->loop = &srv->loop_mem;
	/*
	 * No other server on these ports (unless asked): it would take part of
	 * the queries. A takeover shares them on purpose, with the process it
	 * takes them from; the pid file is written once that one has exited.
	 */
	rc = instance_claim(cfg->listen, cfg->listen_count, cfg->listen_tls, cfg->listen_tls_count,
			    cfg->share_port || cfg->takeover ? INSTANCE_SHARE : INSTANCE_EXCLUSIVE,
			    &srv->instance, err, errlen);
	if (rc == 0)
		rc = pid_file_open(srv, err, errlen);
	if (rc == 0)
		rc = sockets_start(srv, err, errlen);
	/* after the sockets: it gives them to a taker */
	if (rc == 0 && (rc = takeover_start(srv)) < 0)
		snprintf(err, errlen, "out of memory");
	return rc;
}

/*
 * The scheduler's part, made but not started: the scheduler and its
 * transfer threads (none without secondary zones) and the handle by which
 * they wake the main loop after a transfer. Returns 0 or SHOAL_ENOMEM with err.
 */
static int sched_make(server_t *srv, char *err, size_t errlen)
{
	sched_env_t env;
	sched_env(srv, &env);
	/* with the zones read after the workers start, the scheduler follows them */
	int rc = zones_deferred(srv) ? 0 : sched_new(srv->cfg, &env, &srv->sched);
	if (rc == 0)
		rc = uv_async_init(srv->loop, &srv->transferred, on_transferred);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		return SHOAL_ENOMEM;
	}
	srv->transferred.data = srv;
	srv->transferred_on = true;
	return 0;
}

/*
 * Start-up, still as root, nothing running yet: the workers made on the
 * sockets, NOTIFY out, the scheduler, the control socket and the
 * metrics endpoint. Returns 0 or a negative error with err.
 */
static int server_assemble(server_t *srv, char *err, size_t errlen)
{
	const conf_t *cfg = srv->cfg;
	int rc = workers_create(&srv->workers, cfg, srv->responder, &srv->zones, srv->sockets, err,
				errlen);
	if (rc < 0)
		return rc;
	/* always: a reconfig may add a primary over TLS; credentials come after the drop */
	if ((rc = tls_ctx_new(&srv->tls)) < 0) {
		snprintf(err, errlen, "TLS: %s", shoal_strerror(rc));
		return rc;
	}
	workers_set_tls(&srv->workers, srv->tls);
	/* the dnstap thread opens its file before or after the drop, and again after an error */
	if (cfg->user && cfg->dnstap_file && chown(cfg->dnstap_file, srv->uid, srv->gid) < 0) {
		snprintf(err, errlen, "dnstap-file: cannot give %s to %s: %s", cfg->dnstap_file,
			 cfg->user, strerror(errno));
		return SHOAL_ECONFIG;
	}
	if (notify_out_new(srv->loop, cfg, &srv->zones, srv->state, &srv->counters.notify_out,
			   &srv->notifier) < 0) {
		snprintf(err, errlen, "out of memory");
		return SHOAL_ENOMEM;
	}
	/* the serials at start: those changed since the last NOTIFY kept are told */
	if (!zones_deferred(srv))
		notify_out_published(srv->notifier);
	reload_on_publish(&srv->reload, on_published, srv);
	rc = sched_make(srv, err, errlen);
	if (rc < 0)
		return rc;
	workers_set_notify(&srv->workers, notify_in, srv);
	updater_env_t uenv = { .reload = &srv->reload,
			       .published = transferred,
			       .published_arg = srv };
	if ((rc = updater_new(&uenv, &srv->updater)) < 0) {
		snprintf(err, errlen, "cannot start the update thread: %s", shoal_strerror(rc));
		return rc;
	}
	workers_set_updater(&srv->workers, srv->updater);
	if (cfg->control && (rc = control_start(srv, err, errlen)) < 0)
		return rc;
	/* a taker binds it once the giver, which holds it, has exited (on_giver_gone) */
	if (cfg->metrics.addr_len && !cfg->takeover)
		rc = metrics_start(srv, err, errlen);
	return rc;
}

/*
 * Start-up, last: privileges dropped, signals and reload results on the
 * main loop, the workers and the transfer threads running, a takeover
 * completed, the service manager told. Returns 0 or a negative error with
 * err.
 */
static int server_go(server_t *srv, char *err, size_t errlen)
{
	const conf_t *cfg = srv->cfg;
	int rc = drop_privileges(srv, srv->uid, srv->gid, err, errlen);
	if (rc < 0)
		return rc;
	/* read with the rights a reconfig will have; kept in state-dir when self-signed */
	tls_creds_t *creds = NULL;
	if (tls_setup_wanted(cfg) &&
	    (rc = tls_setup_creds(cfg, state_dir(srv->state), "start", &creds, err, errlen)) < 0)
		return rc;
	tls_ctx_set_creds(srv->tls, creds);
	rc = reload_attach(&srv->reload, srv->loop);
	if (rc == 0)
		rc = signals_start(srv);
	if (rc < 0) {
		snprintf(err, errlen, "cannot set up signals");
		return rc;
	}
	srv->workers_run = true;
	rc = workers_start(&srv->workers, err, errlen);
	if (rc < 0)
		return rc;
	rc = zones_deferred(srv) ? 0 : sched_start(srv->sched);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start the transfer threads: %s", shoal_strerror(rc));
		return rc;
	}
	if (srv->taking && (rc = takeover_finish(srv, err, errlen)) < 0)
		return rc;
	log_info("shoald %s: %zu worker(s), socket-mode %s, %zu address(es), first %s",
		 PACKAGE_VERSION, srv->workers.count, socket_mode_names[cfg->socket_mode],
		 cfg->listen_count, cfg->listen[0].text);
	/*
	 * Every socket bound, workers answering: the zones are read now, each
	 * answering as it loads, and READY=1 follows the last (as Knot signals
	 * ready once its zones are loaded). A takeover read them before.
	 */
	if (zones_deferred(srv)) {
		rc = reload_load_rest(&srv->reload, first_load_done, srv);
		if (rc < 0) {
			snprintf(err, errlen, "cannot start reading the zones: %s",
				 shoal_strerror(rc));
			return rc;
		}
	} else {
		if (systemd_ready(cfg->zone_count, srv->workers.count) < 0)
			log_warning("NOTIFY_SOCKET: cannot tell the service manager that shoald is "
				    "ready");
		catalog_step(srv); /* a takeover read the catalogs before: their members now */
	}
	return 0;
}

/*
 * Start-up in the order doc/design.md gives (Threads, Sockets), each step
 * needing the ones before it. Returns 0 with every thread answering (with
 * --check: the configuration and the zones checked, nothing bound), or a
 * negative error with err; server_stop undoes what was done either way.
 */
static int server_start(server_t *srv, char *err, size_t errlen)
{
	const conf_t *cfg = srv->cfg;
	int rc = server_prepare(srv, err, errlen);
	if (rc < 0)
		return rc;
	if (cfg->check) {
		printf("%s: configuration and %zu zone(s) OK\n", cfg->file ? cfg->file : "shoald",
		       cfg->zone_count);
		return 0;
	}
	if (!cfg->user && geteuid() == 0)
		log_warning("running as root with no user to drop to: every query is answered "
			    "by a process that may do anything; set user (--user)");
	log_migrate_req();
	rc = server_bind(srv, err, errlen);
	if (rc == 0)
		rc = server_assemble(srv, err, errlen);
	if (rc == 0)
		rc = server_go(srv, err, errlen);
	return rc;
}

/*
 * Stop every thread that serves: the transfer threads first (they publish,
 * and wake the main loop), then the workers, whose counts are logged.
 */
static void threads_stop(server_t *srv)
{
	sched_retire(srv);
	updater_retire(srv);
	if (!srv->workers_run)
		return;
	srv->stopping = true;
	reload_stopping(&srv->reload);
	takeover_stopping(srv->takeover);
	workers_stop(&srv->workers);
	log_answered(srv);
}

/*
 * A reload thread that did not end in time may still read the zone sets
 * and signal the loop: nothing it uses is freed, the process ends here
 * with status, once the paths others reach are gone.
 */
static _Noreturn void exit_beside_reload(server_t *srv, int status, const char *err)
{
	control_close(srv->control);
	metrics_close(srv->metrics);
	if (status != 0 && err[0])
		log_error("%s", err);
	state_stop(srv); /* the reload thread never touches it */
	log_info("stopped");
	log_file_close(); /* the lines queued for log-file, before the exit */
	_exit(status);
}

/* Close the main loop's handles, let their callbacks run, free what they served. */
static void loop_close(server_t *srv)
{
	control_close(srv->control);
	notify_out_close(srv->notifier);
	if (srv->transferred_on)
		uv_close((uv_handle_t *)&srv->transferred, NULL);
	metrics_close(srv->metrics); /* before the taker hears this process is gone */
	takeover_close(srv->takeover);
	takeover_wire_taken_clear(&srv->taken);
	if (srv->takeover)
		uv_close((uv_handle_t *)&srv->overlap, NULL);
	signals_close(srv);
	uv_run(srv->loop, UV_RUN_DEFAULT); /* let the close callbacks run */
	control_free(srv->control);
	srv->control = NULL;
	notify_out_free(srv->notifier);
	srv->notifier = NULL;
	takeover_free(srv->takeover);
	srv->takeover = NULL;
	metrics_free(srv->metrics);
	srv->metrics = NULL;
	if (uv_loop_close(srv->loop) < 0)
		log_warning("main loop not closed cleanly");
	srv->loop = NULL;
	workers_destroy(&srv->workers);
}

/*
 * Undo what server_start did, as far as it got, in the order a takeover
 * relies on; err is why it failed (status 1). Returns status.
 */
static int server_stop(server_t *srv, int status, const char *err)
{
	threads_stop(srv);
	/*
	 * The sockets close before the takeover's connections: a taker reads
	 * the end of its connection as "the retired sockets are gone".
	 */
	socket_set_close(srv->sockets);
	srv->sockets = NULL;
	/* and the pid file goes before them too: a taker writes its own then */
	instance_release(srv->instance);
	srv->instance = NULL;
	if (srv->loop && reload_close(&srv->reload))
		exit_beside_reload(srv, status, err);
	if (srv->loop)
		loop_close(srv);
	catalogs_free(srv->catalogs); /* made before the loop, used on it */
	srv->catalogs = NULL;
	state_stop(srv);
	reload_clear(&srv->reload);
	producer_free(srv->producer);
	srv->producer = NULL;
	tls_ctx_free(srv->tls); /* no session starts any more: workers and transfers are gone */
	srv->tls = NULL;
	if (srv->zcfg != srv->cfg)
		conf_free(srv->zcfg);
	conf_free(srv->orphan);
	if (status != 0 && err[0])
		log_error("%s", err);
	if (status == 0 && !srv->cfg->check)
		log_info("stopped");
	return status;
}

int server_run(conf_t *cfg, const responder_t *responder)
{
	server_t srv;
	char err[1024] = "";
	main_thread_set(); /* before any other thread: the one MAIN_THREAD_ONLY lets in */
	server_init(&srv, cfg, responder);
	signal(SIGPIPE, SIG_IGN);
	/* logrotate's SIGUSR1 while the zones load must not end the process (its default) */
	signal(SIGUSR1, SIG_IGN);
	rcu_register_thread(); /* the main thread reads the zone set for zone-status */
	int rc = server_start(&srv, err, sizeof(err));
	if (rc == 0 && !cfg->check)
		uv_run(srv.loop, UV_RUN_DEFAULT);
	int status = server_stop(&srv, rc < 0 ? 1 : 0, err);
	rcu_unregister_thread();
	return status;
}

int server_main(int argc, char **argv, const responder_t *responder)
{
	conf_t cfg;
	char err[1024] = "";
	conf_init(&cfg);
	int rc = conf_parse_args(&cfg, argc, argv, stdout, err, sizeof(err));
	if (rc == 0)
		rc = conf_validate(&cfg, err, sizeof(err));
	if (rc != 0) {
		if (rc < 0)
			fprintf(stderr, "shoald: %s\n", err);
		conf_clear(&cfg);
		/* 2: the command line is wrong; 1: the configuration is */
		return rc == SHOAL_EINVAL ? 2 : rc < 0 ? 1 : 0;
	}
	log_init(cfg.log_level, cfg.syslog, cfg.takeover != NULL);
	/* as root still, before any other thread: --check keeps its lines on stderr */
	if (cfg.log_file && !cfg.check && log_file_open(cfg.log_file, err, sizeof(err)) < 0) {
		fprintf(stderr, "shoald: %s\n", err);
		conf_clear(&cfg);
		return 1;
	}
	if (cfg.file_default_missing)
		log_notice("no configuration file %s (-c FILE names another): the command line "
			   "and the defaults apply",
			   CONF_FILE_DEFAULT);
	if (cfg.check)
		conf_dnssec_check_only(&cfg);
	int status = server_run(&cfg, responder);
	log_file_close();
	conf_clear(&cfg);
	return status;
}
