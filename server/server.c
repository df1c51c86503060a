/* shoald start-up and shutdown: zones, sockets, control, privilege drop, workers, signals. */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <urcu.h>

#include "proto/error.h"
#include "server/control.h"
#include "server/fdbudget.h"
#include "server/instance.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/notify.h"
#include "server/reload.h"
#include "server/server.h"
#include "server/socket.h"
#include "server/worker.h"

/* The running daemon: what server_run sets up, in that order, and tears down. */
typedef struct server {
	conf_t *cfg;
	const responder_t *responder;
	zonedb_ref_t zones;    /* what workers read (RCU) */
	reload_t reload;       /* loads and publishes the zones */
	uv_loop_t *loop;       /* main loop: signals, control, reload results */
	instance_t *instance;  /* this process's claim on its addresses, taken before binding */
	socket_set_t *sockets; /* every listening socket, made before the privilege drop */
	workers_t workers;
	control_t *control;
	metrics_t *metrics; /* the Prometheus endpoint, or NULL */
	uv_signal_t sig_term, sig_int, sig_hup;
	bool stopping;
	time_t started_at;
} server_t;

/* Stop: end the main loop, after which server_run stops the workers. Main thread. */
static void server_request_stop(void *arg)
{
	server_t *srv = arg;
	if (srv->stopping)
		return;
	srv->stopping = true;
	reload_stopping(&srv->reload);
	notify_stopping();
	log_info("stopping");
	uv_stop(srv->loop);
}

static void on_signal(uv_signal_t *h, int signum)
{
	server_t *srv = h->data;
	if (signum == SIGHUP) {
		log_info("SIGHUP: reloading all zones");
		int rc = reload_start(&srv->reload, NULL, NULL, NULL);
		if (rc < 0 && rc != SHOAL_EEXIST)
			log_error("reload: %s", shoal_strerror(rc));
		return;
	}
	server_request_stop(srv);
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
 * The first load of the zones, with the rights every reload will have:
 * reloads run after the privilege drop, so a file only root may read would
 * load at start and then never again. As root with a user to become, the
 * load runs with that user's effective ids and no supplementary groups
 * (as after the drop), then takes root's back to bind the sockets.
 */
static int load_zones_as(server_t *srv, bool as_user, uid_t uid, gid_t gid, char *err,
			 size_t errlen)
{
	if (!as_user || geteuid() != 0 || uid == 0)
		return reload_load(&srv->reload, err, errlen);
	gid_t egid = getegid();
	int rc;
	if (setgroups(0, NULL) < 0 || setegid(gid) < 0 || seteuid(uid) < 0) {
		rc = -errno;
		snprintf(err, errlen, "cannot take the ids of %s to load the zones: %s",
			 srv->cfg->user, shoal_strerror(rc));
	} else {
		rc = reload_load(&srv->reload, err, errlen);
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
		.shared_udp = cfg->socket_mode == SOCKET_MODE_SHARED,
		.control = cfg->control != NULL,
		.metrics = cfg->metrics.addr_len != 0,
		.max_connections = cfg->tcp.max_connections,
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

/* The control socket, with what its commands report on and act upon. */
static int control_start(server_t *srv, char *err, size_t errlen)
{
	control_env_t env = {
		.loop = srv->loop,
		.cfg = srv->cfg,
		.workers = &srv->workers,
		.reload = &srv->reload,
		.zones = &srv->zones,
		.started_at = srv->started_at,
		.stop = server_request_stop,
		.stop_arg = srv,
	};
	return control_open(&srv->control, &env, srv->cfg->control, err, errlen);
}

static int signals_start(server_t *srv)
{
	uv_signal_t *sigs[] = { &srv->sig_term, &srv->sig_int, &srv->sig_hup };
	int nums[] = { SIGTERM, SIGINT, SIGHUP };
	for (size_t i = 0; i < 3; i++) {
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
	uv_signal_t *sigs[] = { &srv->sig_term, &srv->sig_int, &srv->sig_hup };
	for (size_t i = 0; i < 3; i++)
		if (sigs[i]->loop)
			uv_close((uv_handle_t *)sigs[i], NULL);
}

int server_run(conf_t *cfg, const responder_t *responder)
{
	server_t srv_mem = { 0 }, *srv = &srv_mem;
	uv_loop_t loop;
	char err[1024] = "";
	int status = 1;
	srv->cfg = cfg;
	srv->responder = responder;
	reload_init(&srv->reload, cfg, &srv->zones);
	srv->reload.prepare = prepare_zone_set;
	srv->reload.prepare_arg = srv;
	srv->started_at = time(NULL);
	signal(SIGPIPE, SIG_IGN);
	rcu_register_thread(); /* the main thread reads the zone set for zone-status */

	uid_t uid = 0;
	gid_t gid = 0;
	bool workers_run = false; /* workers_start was called: stop them */
	if (cfg->user && lookup_user(cfg, &uid, &gid, err, sizeof(err)) < 0)
		goto done;
	if (cfg->control && control_check_path(cfg->control, err, sizeof(err)) < 0)
		goto done;
	if (srv->responder->warning)
		log_warning("%s", srv->responder->warning);
	if (srv->responder->zones &&
	    load_zones_as(srv, cfg->user != NULL, uid, gid, err, sizeof(err)) < 0)
		goto done;
	if (descriptors_plan(cfg, err, sizeof(err)) < 0)
		goto done;
	if (cfg->check) {
		printf("%s: configuration and %zu zone(s) OK\n", cfg->file ? cfg->file : "shoald",
		       cfg->zone_count);
		status = 0;
		goto done;
	}
	if (!cfg->user && geteuid() == 0)
		log_warning("running as root with no user to drop to: every query is answered "
			    "by a process that may do anything; set user (--user)");
	log_migrate_req();
	if (uv_loop_init(&loop) < 0) {
		snprintf(err, sizeof(err), "cannot create the main loop");
		goto done;
	}
	srv->loop = &loop;
	/* no other server on these ports (unless asked): it would take part of the queries */
	if (instance_claim(cfg->listen, cfg->listen_count,
			   cfg->share_port ? INSTANCE_SHARE : INSTANCE_EXCLUSIVE, &srv->instance,
			   err, sizeof(err)) < 0)
		goto done;
	if (cfg->pid_file && instance_pid_file(srv->instance, cfg->pid_file, err, sizeof(err)) < 0)
		goto done;
	if (socket_set_open(cfg->listen, cfg->listen_count, cfg->threads, cfg->socket_mode,
			    &srv->sockets, err, sizeof(err)) < 0 ||
	    workers_create(&srv->workers, cfg, responder, &srv->zones, srv->sockets, err,
			   sizeof(err)) < 0)
		goto done;
	if (cfg->control && control_start(srv, err, sizeof(err)) < 0)
		goto done;
	metrics_env_t menv = { .loop = &loop, .workers = &srv->workers, .zones = &srv->zones };
	if (cfg->metrics.addr_len &&
	    metrics_open(&srv->metrics, &menv, &cfg->metrics, err, sizeof(err)) < 0)
		goto done;
	if (drop_privileges(srv, uid, gid, err, sizeof(err)) < 0)
		goto done;
	if (reload_attach(&srv->reload, &loop) < 0 || signals_start(srv) < 0) {
		snprintf(err, sizeof(err), "cannot set up signals");
		goto done;
	}
	workers_run = true;
	if (workers_start(&srv->workers, err, sizeof(err)) < 0)
		goto done;
	log_info("shoald %s: %zu worker(s), socket-mode %s, %zu address(es), first %s",
		 PACKAGE_VERSION, srv->workers.count, socket_mode_names[cfg->socket_mode],
		 cfg->listen_count, cfg->listen[0].text);
	/* zones loaded, every socket bound, workers answering: a Type=notify unit is up */
	if (notify_ready(cfg->zone_count, srv->workers.count) < 0)
		log_warning("NOTIFY_SOCKET: cannot tell the service manager that shoald is ready");
	uv_run(&loop, UV_RUN_DEFAULT);
	status = 0;

done:
	if (workers_run) {
		srv->stopping = true;
		reload_stopping(&srv->reload);
		workers_stop(&srv->workers);
	}
	if (srv->loop && reload_close(&srv->reload)) {
		/* the reload thread may still read the zone sets and signal the loop */
		control_close(srv->control);
		metrics_close(srv->metrics);
		if (status != 0 && err[0])
			log_error("%s", err);
		instance_release(srv->instance); /* the pid file goes */
		log_info("stopped");
		_exit(status);
	}
	if (srv->loop) {
		control_close(srv->control);
		metrics_close(srv->metrics);
		signals_close(srv);
		uv_run(&loop, UV_RUN_DEFAULT); /* let the close callbacks run */
		control_free(srv->control);
		srv->control = NULL;
		metrics_free(srv->metrics);
		srv->metrics = NULL;
		if (uv_loop_close(&loop) < 0)
			log_warning("main loop not closed cleanly");
		workers_destroy(&srv->workers);
		socket_set_close(srv->sockets);
	}
	instance_release(srv->instance);
	reload_clear(&srv->reload);
	rcu_unregister_thread();
	if (status != 0 && err[0])
		log_error("%s", err);
	if (status == 0 && !cfg->check)
		log_info("stopped");
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
	log_init(cfg.log_level, cfg.syslog);
	if (cfg.file_default_missing)
		log_notice("no configuration file %s (-c FILE names another): the command line "
			   "and the defaults apply",
			   CONF_FILE_DEFAULT);
	int status = server_run(&cfg, responder);
	conf_clear(&cfg);
	return status;
}
