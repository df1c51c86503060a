/* Zone loads: the first one at start-up, reloads on their own thread, published with RCU. */
#include "config.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/error.h"
#include "server/internal.h"
#include "server/log.h"

struct reload_job {
	server_t *srv;
	char *only;                 /* zone to reload, NULL for all */
	reload_done_fn done;
	void *arg;
	int rc;
	char *messages;             /* error lines, "" when none */
	size_t len, cap;
	zonedb_t *built;
};

/* Collect the loader's error lines (and log every line). Loading thread. */
static void collect_msg(void *arg, bool is_error, const char *msg)
{
	reload_job_t *job = arg;
	if (is_error)
		log_error("%s", msg);
	else
		log_warning("%s", msg);
	if (!is_error || !job)
		return;
	size_t add = strlen(msg) + 1;
	if (job->len + add + 1 > job->cap) {
		size_t cap = (job->len + add + 1) * 2;
		char *p = realloc(job->messages, cap);
		if (!p)
			return; /* the line is logged; the reply only misses it */
		job->messages = p;
		job->cap = cap;
	}
	memcpy(job->messages + job->len, msg, add - 1);
	job->len += add;
	job->messages[job->len - 1] = '\n';
	job->messages[job->len] = '\0';
}

int server_load_zones(server_t *srv, char *err, size_t errlen)
{
	const conf_t *cfg = srv->cfg;
	zonedb_t *db = NULL;
	reload_job_t job = { 0 };
	int rc = zonedb_build(cfg->zones, cfg->zone_count, NULL, NULL, collect_msg, &job, &db);
	if (rc < 0) {
		/* the first error line is the one to show at start-up */
		size_t first = job.messages ? strcspn(job.messages, "\n") : 0;
		if (first)
			snprintf(err, errlen, "%.*s", (int)first, job.messages);
		else
			snprintf(err, errlen, "loading zones: %s", shoal_strerror(rc));
		free(job.messages);
		if (db)
			zonedb_free(db);
		return rc;
	}
	free(job.messages);
	srv->zones_writer = db;
	zonedb_publish(&srv->zones, db);
	log_info("%zu zone(s) loaded", zonedb_zone_count(db));
	return 0;
}

/* The reload thread: build beside the served set, swap, wait a grace period, free the old. */
static void *reload_main(void *arg)
{
	reload_job_t *job = arg;
	server_t *srv = job->srv;
	const conf_t *cfg = srv->cfg;
	zonedb_t *db = NULL;
	/* zones_writer is only touched by this thread while a reload runs */
	int rc = zonedb_build(cfg->zones, cfg->zone_count, srv->zones_writer, job->only,
			      collect_msg, job, &db);
	if (rc == SHOAL_ENOMEM || !db) {
		job->rc = rc < 0 ? rc : SHOAL_ENOMEM;
	} else {
		srv->zones_writer = db;
		zonedb_publish(&srv->zones, db); /* synchronize_rcu, then frees the old set */
		job->rc = job->len ? SHOAL_EZONE : 0;
	}
	uv_async_send(&srv->reload_done);
	return NULL;
}

/* Main loop: the reload thread has finished; report and maybe run the queued one. */
static void on_reload_done(uv_async_t *a)
{
	server_t *srv = a->data;
	reload_job_t *job = srv->reload_job;
	if (!job)
		return;
	pthread_join(srv->reload_thread, NULL);
	srv->reload_job = NULL;
	srv->reload_running = false;
	if (job->rc == 0)
		log_info("reload%s%s done", job->only ? " of " : "", job->only ? job->only : "");
	else
		log_error("reload%s%s failed (%s): zones that failed keep their previous version",
			  job->only ? " of " : "", job->only ? job->only : "", shoal_strerror(job->rc));
	if (job->done)
		job->done(job->arg, job->rc, job->messages ? job->messages : "");
	free(job->only);
	free(job->messages);
	free(job);
	if (srv->reload_again && !srv->stopping) {
		srv->reload_again = false;
		reload_start(srv, NULL, NULL, NULL);
	}
}

/* Zone names compare without case and without the final dot. */
static bool zone_name_eq(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 1 && a[la - 1] == '.')
		la--;
	if (lb > 1 && b[lb - 1] == '.')
		lb--;
	return la == lb && strncasecmp(a, b, la) == 0;
}

int reload_start(server_t *srv, const char *only, reload_done_fn done, void *arg)
{
	if (srv->reload_running) {
		if (!done)
			srv->reload_again = true; /* a signal: run again after this one */
		return SHOAL_EEXIST;
	}
	if (only) {
		bool found = false;
		for (size_t i = 0; i < srv->cfg->zone_count && !found; i++)
			found = zone_name_eq(srv->cfg->zones[i].name, only);
		if (!found)
			return SHOAL_ENOTFOUND;
	}
	reload_job_t *job = calloc(1, sizeof(*job));
	if (!job || (only && !(job->only = strdup(only)))) {
		free(job);
		return SHOAL_ENOMEM;
	}
	job->srv = srv;
	job->done = done;
	job->arg = arg;
	srv->reload_job = job;
	srv->reload_running = true;
	log_info("reload%s%s started", only ? " of " : "", only ? only : "");
	int e = pthread_create(&srv->reload_thread, NULL, reload_main, job);
	if (e) {
		log_error("cannot start the reload thread: %s", strerror(e));
		srv->reload_job = NULL;
		srv->reload_running = false;
		free(job->only);
		free(job);
		return SHOAL_ESYSTEM;
	}
	return 0;
}

int reload_init(server_t *srv)
{
	srv->reload_done.data = srv;
	return uv_async_init(srv->loop, &srv->reload_done, on_reload_done) < 0 ? SHOAL_ESYSTEM : 0;
}

void reload_close(server_t *srv)
{
	/* a reload still running finishes first: it owns zones_writer */
	if (srv->reload_running) {
		pthread_join(srv->reload_thread, NULL);
		srv->reload_running = false;
		free(srv->reload_job->only);
		free(srv->reload_job->messages);
		free(srv->reload_job);
		srv->reload_job = NULL;
	}
	if (srv->reload_done.loop)
		uv_close((uv_handle_t *)&srv->reload_done, NULL);
}
