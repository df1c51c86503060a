/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Zone loads: the first one at start-up, reloads on their own thread, published with RCU. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/common/systemd.h"
#include "server/common/thread.h"
#include "server/common/timestamp.h"
#include "server/events/reload.h"
#include "zone/changeset.h"
#include "zone/zone.h"

/*
 * How long stopping waits for a reload thread that was told to stop. A
 * load sees the cancel between two records or two reads, so only a thread
 * blocked in the kernel (a file system that does not answer) takes longer:
 * it is left behind and the process exits without it.
 */
#define RELOAD_STOP_GRACE_MS 3000

/* A text that grows line by line; a line that finds no memory is left out (the log has it). */
typedef struct text {
	char *p;
	size_t len, cap;
} text_t;

struct reload_job {
	reload_t *r;
	char *only; /* zone to reload, NULL for all */
	/* with only: the changes applied to it instead of reading its file (reload_apply) */
	const changeset_t *changes;
	conf_t *cfg;      /* a reconfig's configuration, NULL for a reload */
	bool check_files; /* a reconfig's: read the kept zones whose file changed on disk */
	/* a zone-add's or zone-remove's: the set derived from the one served (zonedb_build_t) */
	enum zonedb_change change;
	size_t removed;
	const char *what; /* "reload", "reconfig" or "first load", for the log */
	bool first;       /* the first load's zones, read into the set published at start */
	bool published;   /* the set built was published */
	reload_done_fn done;
	void *arg;
	int rc;
	text_t errors;   /* error lines */
	text_t warnings; /* "warning: " lines */
	text_t changed;  /* the zones whose version changed, RELOAD_CHANGED_NAMED by name */
	size_t changed_count;
	size_t *reread; /* a reconfig's kept zones read again (check_files), cfg's indices */
	size_t reread_count;
	time_t started_at;
	/* under r->lock: */
	bool cancel;     /* past reload-timeout, or stopping: publish nothing */
	bool publishing; /* past the point where cancel is seen */
	bool finished;   /* the thread is done with r but for the join */
};

/* Append s to t, as room can be found. */
static void text_add(text_t *t, const char *s)
{
	size_t add = strlen(s);
	if (t->len + add + 1 > t->cap) {
		size_t cap = (t->len + add + 1) * 2;
		char *p = realloc(t->p, cap);
		if (!p)
			return;
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, add + 1);
	t->len += add;
}

/* Collect the loader's lines for the reply (and log every one). Loading thread. */
static void collect_msg(void *arg, bool is_error, const char *msg)
{
	reload_job_t *job = arg;
	if (is_error)
		log_error("%s", msg);
	else
		log_warning("%s", msg);
	if (!job)
		return;
	text_t *t = is_error ? &job->errors : &job->warnings;
	if (!is_error)
		text_add(t, "warning: ");
	text_add(t, msg);
	text_add(t, "\n");
}

/*
 * Zone `name` of db (its index i) went from version o (NULL: none served)
 * to z: named in the reply when it serves a new serial, or serves at all.
 * Reload thread.
 */
static void note_change(reload_job_t *job, const zonedb_t *db, size_t i, const zone_t *o,
			const zone_t *z)
{
	if (!z || o == z || (o && o->serial == z->serial))
		return;
	if (job->changed_count++ >= RELOAD_CHANGED_NAMED)
		return; /* counted: "and N more" */
	char name[NAME_TEXT_MAX], line[NAME_TEXT_MAX + 64];
	zonedb_zone_name(db, i, name, sizeof(name));
	if (o)
		snprintf(line, sizeof(line), "%s%s (serial %u -> %u)", job->changed.len ? ", " : "",
			 name, (unsigned)o->serial, (unsigned)z->serial);
	else
		snprintf(line, sizeof(line), "%s%s (loaded, serial %u)",
			 job->changed.len ? ", " : "", name, (unsigned)z->serial);
	text_add(&job->changed, line);
}

/* The version old serves of the zone whose apex is z's, or NULL. */
static const zone_t *old_version(const zonedb_t *old, const zone_t *z)
{
	long i = zonedb_index(old, znode_name(z->apex));
	return i < 0 ? NULL : zonedb_zone(old, (size_t)i);
}

/*
 * Before db replaces old: the zones read whose serial moved, for the reply;
 * a reload's every zone, a reconfig's those read again for their file
 * (job->reread: the zones it adds or whose configuration changed are named
 * by the caller). Reload thread, under writer_lock.
 */
static void note_changes(reload_job_t *job, const zonedb_t *old, const zonedb_t *db)
{
	size_t n = job->cfg ? job->reread_count : zonedb_zone_count(db);
	for (size_t k = 0; k < n; k++) {
		size_t i = job->cfg ? job->reread[k] : k;
		const zone_t *z = zonedb_zone(db, i);
		if (z)
			note_change(job, db, i, old_version(old, z), z);
	}
}

/* The version db serves of the zone called name, or NULL. */
static const zone_t *served_version(const zonedb_t *db, const char *name)
{
	uint8_t apex[NAME_MAXLEN];
	if (name_from_text(name, NULL, apex) < 0)
		return NULL;
	name_lower(apex);
	long i = zonedb_index(db, apex);
	return i < 0 ? NULL : zonedb_zone(db, (size_t)i);
}

/*
 * A reconfig's primary zones whose data its configuration keeps but whose
 * file changed on disk since the version served was loaded (a modification
 * time not older: one within the second of the load is read again, at
 * worst once too often), or that serve nothing: read again, their keep
 * cleared, and listed in job->reread. As Knot's reload, which reads a zone
 * file whose time changed; an $INCLUDEd file changed alone is read by
 * `shoalctl reload ZONE`. A secondary's version is its primaries', never
 * its file's. Reload thread, under writer_lock. Returns 0 or SHOAL_ENOMEM.
 */
static int mark_changed_files(reload_job_t *job)
{
	conf_t *cfg = job->cfg;
	job->reread = malloc((cfg->zone_count ? cfg->zone_count : 1) * sizeof(*job->reread));
	if (!job->reread)
		return SHOAL_ENOMEM;
	for (size_t j = 0; j < cfg->zone_count; j++) {
		const zone_spec_t *spec = conf_zone_spec(cfg, j);
		if (!spec->keep || spec->secondary)
			continue;
		const zone_t *z = served_version(job->r->writer, spec->name);
		struct stat st;
		if (z && stat(spec->file, &st) == 0 && st.st_mtime < z->loaded_at)
			continue;
		zone_spec_t *own = conf_zone_spec_mut(cfg, j); /* a copy when cfg shares it */
		if (!own)
			return SHOAL_ENOMEM;
		own->keep = false;
		job->reread[job->reread_count++] = j;
	}
	return 0;
}

/*
 * One line for zone i of db: its name and serial when it loaded, or the
 * serial it keeps serving when it did not (the reason is in the reload's
 * messages).
 */
static void log_zone(const zonedb_t *db, size_t i)
{
	zone_info_t info;
	zonedb_zone_info(db, i, &info);
	if (!info.loaded)
		log_warning("zone %s not loaded: %s", info.name,
			    info.last_error[0] ? info.last_error
					       : "nothing saved yet; its first transfer follows");
	else if (info.last_error[0])
		log_warning("zone %s keeps serial %u: %s", info.name, (unsigned)info.serial,
			    info.last_error);
	else
		log_info("zone %s serial %u loaded, %zu records", info.name, (unsigned)info.serial,
			 info.rr_count);
}

/* A line for every zone of db: one per zone up to ZONES_LOGGED_MAX, then a summary. */
#define ZONES_LOGGED_MAX 1000

static void log_zones(const zonedb_t *db)
{
	size_t n = zonedb_zone_count(db), loaded = 0, failed = 0;
	for (size_t i = 0; i < n; i++) {
		if (n <= ZONES_LOGGED_MAX) {
			log_zone(db, i);
			continue;
		}
		/* a million lines would say less than the counts: failures alone, by name */
		loaded += zonedb_zone(db, i) != NULL;
		if (zonedb_zone_error(db, i)[0] && failed++ < ZONES_LOGGED_MAX)
			log_zone(db, i);
	}
	if (n > ZONES_LOGGED_MAX)
		log_info("%zu of %zu zones serve a version, %zu with an error", loaded, n, failed);
}

/* Threads a build reads zone files on: one per CPU the process may run on. */
static unsigned reload_threads(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	return 1;
}

void reload_init(reload_t *r, const conf_t *cfg, zonedb_ref_t *zones)
{
	MAIN_THREAD_ONLY();
	memset(r, 0, sizeof(*r));
	r->cfg = cfg;
	r->zones = zones;
}

int reload_load(reload_t *r, bool defer, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	const conf_t *cfg = r->cfg;
	zonedb_t *db = NULL;
	reload_job_t job = { 0 };
	zonedb_build_t b = { .spec_of = conf_spec_of,
			     .spec_arg = cfg,
			     .n = cfg->zone_count,
			     .msg = collect_msg,
			     .msg_arg = &job,
			     .threads = reload_threads(),
			     .loaded = &r->loaded,
			     .defer = defer,
			     .journal_dir = r->journal_dir,
			     .journal_budget = r->journal_budget };
	r->loading = cfg->zone_count;
	int rc = zonedb_build_with(&b, &db);
	if (rc < 0) {
		/* the first error line is the one to show at start-up */
		size_t first = job.errors.p ? strcspn(job.errors.p, "\n") : 0;
		if (first)
			snprintf(err, errlen, "%.*s", (int)first, job.errors.p);
		else
			snprintf(err, errlen, "loading zones: %s", shoal_strerror(rc));
		free(job.errors.p);
		free(job.warnings.p);
		if (db)
			zonedb_free(db);
		return rc;
	}
	free(job.errors.p);
	free(job.warnings.p);
	if (zonedb_set_policies(db, conf_zone_allow_query, cfg) < 0) {
		/* no set without its allow-query lists: they would let everyone in */
		snprintf(err, errlen, "loading zones: %s", shoal_strerror(SHOAL_ENOMEM));
		zonedb_free(db);
		return SHOAL_ENOMEM;
	}
	if (!defer)
		log_zones(db);
	zonedb_set_owner(db, cfg);
	r->writer = db;
	if (r->prepare)
		r->prepare(r->prepare_arg, db);
	zonedb_publish(r->zones, db);
	if (defer)
		log_info("%zu zone(s) configured, %zu to read", zonedb_zone_count(db),
			 zonedb_pending(db));
	else
		log_info("%zu zone(s) loaded", zonedb_zone_count(db));
	return 0;
}

bool reload_loading(const reload_t *r, size_t *done, size_t *total)
{
	MAIN_THREAD_ONLY();
	*done = __atomic_load_n(&r->loaded, __ATOMIC_RELAXED);
	*total = r->loading;
	return r->first_loading;
}

/* Main loop, each second of the first load: how far it is, for the service manager. */
static void on_load_progress(uv_timer_t *t)
{
	MAIN_THREAD_ONLY();
	reload_t *r = t->data;
	size_t done, total;
	if (!reload_loading(r, &done, &total))
		return;
	/* each second extends the start's time limit by ten while the load goes on */
	char state[128];
	snprintf(state, sizeof(state),
		 "STATUS=loading zones: %zu of %zu\nEXTEND_TIMEOUT_USEC=10000000", done, total);
	systemd_send(state);
}

/*
 * The writer's set (r->writer) has two writers, the reload thread and the
 * secondary thread: each holds this from reading it to publishing the next,
 * so a reload never publishes a set built before a transfer's (undoing it)
 * nor the other way round.
 */
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;

/* Take writer_lock, giving up with false once *stop is set (looked at every 200 ms). */
static bool writer_lock_until(const int *stop)
{
	struct timespec d;
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &d);
		d.tv_nsec += 200 * 1000000L;
		d.tv_sec += d.tv_nsec / 1000000000L;
		d.tv_nsec %= 1000000000L;
		if (pthread_mutex_timedlock(&writer_lock, &d) == 0)
			return true;
		if (stop && __atomic_load_n(stop, __ATOMIC_ACQUIRE))
			return false;
	}
}

/* Zone i of the writer's set serves z from now on; under writer_lock. */
static int swap_in(reload_t *r, long i, const struct zone *z, const char *error)
{
	zonedb_retired_t retired;
	int rc = i < 0 ? SHOAL_ENOTFOUND : zonedb_swap(r->writer, (size_t)i, z, error, &retired);
	if (rc == 0) {
		/* in place: the set, its other zones and the zone's counters stay */
		zonedb_synchronize(r->zones);
		zonedb_retired_free(&retired);
	}
	return rc;
}

int reload_replace_zone(reload_t *r, const uint8_t *apex, const struct zone *z, const char *error,
			const int *stop)
{
	if (!writer_lock_until(stop))
		return SHOAL_ETIMEOUT;
	/* by apex: a reconfig may have moved the zone since the caller looked */
	int rc = swap_in(r, zonedb_index(r->writer, apex), z, error);
	pthread_mutex_unlock(&writer_lock);
	return rc;
}

int reload_change_zone(reload_t *r, const uint8_t *apex, reload_change_fn fn, void *arg,
		       const int *stop)
{
	if (!writer_lock_until(stop))
		return SHOAL_ETIMEOUT;
	long i = zonedb_index(r->writer, apex);
	struct zone *next = NULL;
	int rc = i < 0 ? SHOAL_ENOTFOUND : fn(arg, r->writer, (size_t)i, &next);
	if (rc == 0 && next) {
		const char *error = zonedb_zone_error(r->writer, (size_t)i);
		char *keep = error && *error ? strdup(error) : NULL;
		rc = swap_in(r, i, next, keep);
		free(keep);
		zone_unref(next);
	}
	pthread_mutex_unlock(&writer_lock);
	return rc;
}

/*
 * Whether a primary zone new to db (a fresh statistics slot: one the set
 * it was built over did not have; or no zone name at all) failed to load: a reconfig that adds a
 * broken zone is refused like a broken configuration file. job->cfg:
 * the configuration db was built from, index for index.
 */
static bool new_zone_failed(const reload_job_t *job, const zonedb_t *db)
{
	const conf_t *now = job->cfg;
	size_t n = zonedb_zone_count(db);
	/* derived from the set served: the zone added is the one new, the last */
	size_t i = job->change == ZONEDB_ADDED ? n - 1 : 0;
	if (job->change == ZONEDB_REMOVED)
		return false;
	for (; i < now->zone_count && i < n; i++) {
		bool fresh;
		/* slot 0: no zone name (bad, or twice), which a running configuration never has */
		uint32_t slot = zonedb_zone_slot(db, i, &fresh);
		if ((fresh || !slot) && !conf_zone_spec(now, i)->secondary && !zonedb_zone(db, i))
			return true;
	}
	return false;
}

/* The reload thread's last step: tell the main loop (and reload_close) it is done. */
static void reload_finished(reload_job_t *job)
{
	reload_t *r = job->r;
	pthread_mutex_lock(&r->lock);
	job->finished = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	/* the last use of r: the main thread joins before closing the handle */
	uv_async_send(&r->done);
}

/*
 * Whether the job may publish: not cancelled. From here on a timeout no
 * longer cancels it (it ends in a moment with its own report).
 */
static bool job_publishing(reload_job_t *job)
{
	reload_t *r = job->r;
	pthread_mutex_lock(&r->lock);
	bool cancel = job->cancel;
	job->publishing = !cancel;
	pthread_mutex_unlock(&r->lock);
	return !cancel;
}

/*
 * A reload of one zone (job->only), in place: read it, swap its version
 * into the served set (zonedb_swap), wait a grace period, drop the old
 * version. Nothing else of the set is touched, so it costs that zone
 * alone however many the set holds. Reload thread, under writer_lock.
 * Returns 0, SHOAL_EZONE (the zone keeps its version, the error shown),
 * SHOAL_ETIMEOUT or SHOAL_ENOMEM.
 */
static int reload_one(reload_job_t *job)
{
	reload_t *r = job->r;
	const conf_t *cfg = r->cfg;
	long c = conf_zone_index(cfg, job->only);
	uint8_t apex[NAME_MAXLEN];
	char text[NAME_TEXT_MAX + 2];
	size_t len = strlen(job->only);
	snprintf(text, sizeof(text), "%s%s", job->only,
		 len && job->only[len - 1] == '.' ? "" : ".");
	long i = -1;
	if (c >= 0 && name_from_text(text, NULL, apex) > 0) {
		name_lower(apex);
		i = zonedb_index(r->writer, apex);
	}
	if (i < 0) {
		char line[600];
		snprintf(line, sizeof(line), "%s: no such zone is configured", job->only);
		collect_msg(job, true, line);
		return SHOAL_ENOTFOUND;
	}
	zone_t *z = NULL;
	char error[512];
	int rc = job->changes ? zonedb_apply_zone(r->writer, (size_t)i, conf_zone_spec(cfg, c),
						  job->changes, collect_msg, job, &z, error,
						  sizeof(error))
			      : zonedb_load_zone(r->writer, (size_t)i, conf_zone_spec(cfg, c),
						 collect_msg, job, &z, error, sizeof(error));
	if (rc == 1)
		return 0; /* a secondary: its version is the last transfer's */
	if (rc == 0)
		note_change(job, r->writer, (size_t)i, zonedb_zone(r->writer, (size_t)i), z);
	if (!job_publishing(job)) {
		zone_unref(z);
		return SHOAL_ETIMEOUT;
	}
	if (rc == SHOAL_ENOMEM || rc == SHOAL_ETIMEOUT)
		return rc;
	zonedb_retired_t retired;
	const zone_t *serve = rc == 0 ? z : zonedb_zone(r->writer, (size_t)i);
	int src = zonedb_swap(r->writer, (size_t)i, serve, rc == 0 ? NULL : error, &retired);
	zone_unref(z);
	if (src < 0)
		return src;
	job->published = true;
	zonedb_synchronize(r->zones);
	zonedb_retired_free(&retired);
	log_zone(r->writer, (size_t)i);
	return rc == 0 ? 0 : SHOAL_EZONE;
}

/*
 * The first load's zones, read into the set published at start on the
 * load threads, each answering as soon as it has loaded. Reload thread,
 * under writer_lock. Returns zonedb_load_pending's result.
 */
static int first_load(reload_job_t *job)
{
	reload_t *r = job->r;
	zonedb_build_t b = { .spec_of = conf_spec_of,
			     .spec_arg = r->cfg,
			     .n = r->cfg->zone_count,
			     .msg = collect_msg,
			     .msg_arg = job,
			     .threads = reload_threads(),
			     .loaded = &r->loaded };
	int rc = zonedb_load_pending(r->writer, &b);
	job->published = true;
	job_publishing(job);
	log_zones(r->writer);
	return rc;
}

/* The reload thread: build beside the served set, swap, wait a grace period, free the old. */
static void *reload_main(void *arg)
{
	reload_job_t *job = arg;
	reload_t *r = job->r;
	const conf_t *cfg = job->cfg ? job->cfg : r->cfg;
	zonedb_t *db = NULL;
	pthread_mutex_lock(&writer_lock);
	if (job->first) {
		job->rc = first_load(job);
		pthread_mutex_unlock(&writer_lock);
		reload_finished(job);
		return NULL;
	}
	if (job->only && !job->cfg) {
		job->rc = reload_one(job);
		pthread_mutex_unlock(&writer_lock);
		reload_finished(job);
		return NULL;
	}
	/* the writer's set is only touched by this thread while a reload runs */
	if (job->check_files && mark_changed_files(job) < 0) {
		job->rc = SHOAL_ENOMEM;
		pthread_mutex_unlock(&writer_lock);
		reload_finished(job);
		return NULL;
	}
	zonedb_build_t b = { .spec_of = conf_spec_of,
			     .spec_arg = cfg,
			     .n = cfg->zone_count,
			     .old = r->writer,
			     .msg = collect_msg,
			     .msg_arg = job,
			     .threads = reload_threads(),
			     .journal_dir = r->journal_dir,
			     .journal_budget = r->journal_budget,
			     .change = job->change,
			     .removed = job->removed };
	int rc = zonedb_build_with(&b, &db);
	if (db && job->cfg && new_zone_failed(job, db)) {
		/* a zone the reconfig adds does not load: refuse it whole, as a bad file */
		zonedb_free(db);
		db = NULL;
		rc = SHOAL_EZONE;
	}
	/*
	 * A zone-add's or zone-remove's set takes the served set's lists (its
	 * configuration shares every other zone, lists included): the change's
	 * cost, not a pass over every zone's settings.
	 */
	const conf_t *was = zonedb_owner(r->writer);
	if (db && (job->change == ZONEDB_REBUILD || !was
			   ? zonedb_set_policies(db, conf_zone_allow_query, cfg)
			   : zonedb_derive_policies(db, conf_allow_query_global(was),
						    conf_allow_query_global(cfg),
						    conf_zone_allow_query, cfg)) < 0) {
		zonedb_free(db);
		db = NULL;
		rc = SHOAL_ENOMEM;
	}
	if (!job_publishing(job)) {
		/* abandoned: the client was told the served zones stay, so they do */
		if (db)
			zonedb_free(db);
		job->rc = SHOAL_ETIMEOUT;
	} else if (rc == SHOAL_ENOMEM || rc == SHOAL_ETIMEOUT || !db) {
		job->rc = rc < 0 ? rc : SHOAL_ENOMEM;
	} else {
		if (job->change == ZONEDB_REBUILD)
			log_zones(db);
		else if (job->change == ZONEDB_ADDED)
			log_zone(db, zonedb_zone_count(db) - 1); /* the others are as they were */
		note_changes(job, r->writer, db);
		zonedb_set_owner(db, cfg);
		job->published = true;
		/* a reconfig that removes a zone removes its history on disk */
		if (job->change == ZONEDB_REBUILD)
			zonedb_remove_journals(r->writer, db);
		else if (job->change == ZONEDB_REMOVED)
			zonedb_remove_journal_at(r->writer, job->removed);
		r->writer = db;
		if (r->prepare)
			r->prepare(r->prepare_arg, db);
		zonedb_publish(r->zones, db); /* synchronize_rcu, then frees the old set */
		job->rc = job->errors.len ? SHOAL_EZONE : 0;
	}
	pthread_mutex_unlock(&writer_lock);
	reload_finished(job);
	return NULL;
}

static void job_free(reload_job_t *job)
{
	changeset_unref(job->changes);
	free(job->only);
	free(job->errors.p);
	free(job->warnings.p);
	free(job->changed.p);
	free(job->reread);
	free(job);
}

/* Tell the job's client how it ended (once). Main loop. */
static void job_reply(reload_job_t *job)
{
	if (!job->done)
		return;
	if (job->changed_count > RELOAD_CHANGED_NAMED) {
		char more[64];
		snprintf(more, sizeof(more), " and %zu more",
			 job->changed_count - RELOAD_CHANGED_NAMED);
		text_add(&job->changed, more);
	}
	reload_result_t res = { .rc = job->rc,
				.errors = job->errors.p ? job->errors.p : "",
				.warnings = job->warnings.p ? job->warnings.p : "",
				.changed = job->changed.p ? job->changed.p : "" };
	job->done(job->arg, &res);
	job->done = NULL;
}

/*
 * READY=1 to the service manager: the set served is complete. After the
 * first load, a NOTIFY_SOCKET that cannot be reached is said once.
 */
static void tell_ready(reload_t *r, bool first)
{
	if (systemd_ready(zonedb_zone_count(r->writer), r->cfg->threads) < 0 && first)
		log_warning("NOTIFY_SOCKET: cannot tell the service manager that shoald is ready");
}

/* Main loop: the reload thread has finished; report and maybe run the queued one. */
static void on_reload_done(uv_async_t *a)
{
	MAIN_THREAD_ONLY();
	reload_t *r = a->data;
	reload_job_t *job = r->job;
	if (!job)
		return;
	pthread_join(r->thread, NULL);
	uv_timer_stop(&r->timer);
	r->job = NULL;
	r->running = false;
	if (job->first) {
		uv_timer_stop(&r->progress);
		r->first_loading = false;
	}
	if (job->cfg && job->published)
		r->cfg = job->cfg; /* the set served now is built from it */
	if (r->abandoned) {
		/* answered at the timeout already; the loads may run again */
		log_notice("the abandoned %s%s%s has ended", job->what, job->only ? " of " : "",
			   job->only ? job->only : "");
		r->abandoned = false;
		zone_load_cancel(false);
	} else if (job->cfg) {
		/* a reconfig's outcome is its caller's line, with what changed or why not */
		r->note[0] = '\0';
	} else if (job->rc == 0) {
		log_info("%s%s%s done", job->what, job->only ? " of " : "",
			 job->only ? job->only : "");
		r->note[0] = '\0';
	} else {
		log_error("%s%s%s failed (%s): zones that failed %s", job->what,
			  job->only ? " of " : "", job->only ? job->only : "",
			  shoal_strerror(job->rc),
			  job->first ? "serve nothing (SERVFAIL); zone-status says why"
				     : "keep their previous version");
		r->note[0] = '\0';
	}
	/* RELOADING=1 was sent at the start (or this is the first load): every zone was read */
	tell_ready(r, job->first);
	job_reply(job);
	bool first = job->first;
	job_free(job);
	if (first && r->first_done)
		r->first_done(r->first_done_arg);
	else if (!first && r->published)
		r->published(r->published_arg);
}

/*
 * Main loop: the reload has run for reload-timeout. Tell its loads to stop
 * (they look between records and reads), answer its client now, and let
 * the thread end when it can: until then no other reload starts, as only
 * one thread may hold zones_writer.
 */
static void on_reload_timeout(uv_timer_t *t)
{
	MAIN_THREAD_ONLY();
	reload_t *r = t->data;
	reload_job_t *job = r->job;
	if (!job || r->abandoned)
		return;
	pthread_mutex_lock(&r->lock);
	bool publishing = job->publishing;
	job->cancel = !publishing;
	pthread_mutex_unlock(&r->lock);
	if (publishing)
		return; /* built already: it ends in a moment with its own report */
	r->abandoned = true;
	zone_load_cancel(true);
	char when[TIMESTAMP_TEXT_MAX];
	timestamp_text(job->started_at, -1, when, sizeof(when));
	snprintf(r->note, sizeof(r->note),
		 "%s%s%s started %s abandoned after %u s (reload-timeout): every zone keeps "
		 "the version it had",
		 job->what, job->only ? " of " : "", job->only ? job->only : "", when,
		 (unsigned)r->cfg->reload_timeout);
	log_error("%s; a file may be blocking the reload thread", r->note);
	systemd_ready(zonedb_zone_count(r->writer), r->cfg->threads); /* the zones stay */
	if (job->done) {
		char body[400];
		snprintf(body, sizeof(body), "%s\n", r->note);
		reload_result_t res = {
			.rc = SHOAL_ETIMEOUT, .errors = body, .warnings = "", .changed = ""
		};
		job->done(job->arg, &res);
		job->done = NULL;
	}
}

/*
 * What a job is: its zone (only), a reconfig's configuration, check_files
 * and change (with removed), the first load.
 */
typedef struct job_kind {
	const char *only;
	const changeset_t *changes;
	conf_t *cfg;
	bool check_files;
	enum zonedb_change change;
	size_t removed;
	bool first;
} job_kind_t;

static int job_start(reload_t *r, const job_kind_t *kind, reload_done_fn done, void *arg);

int reload_start(reload_t *r, const char *only, reload_done_fn done, void *arg)
{
	MAIN_THREAD_ONLY();
	if (r->running)
		return SHOAL_EEXIST;
	if (only && conf_zone_index(r->cfg, only) < 0)
		return SHOAL_ENOTFOUND;
	job_kind_t kind = { .only = only };
	return job_start(r, &kind, done, arg);
}

int reload_apply(reload_t *r, const char *only, const changeset_t *cs, reload_done_fn done,
		 void *arg)
{
	MAIN_THREAD_ONLY();
	if (r->running)
		return SHOAL_EEXIST;
	if (conf_zone_index(r->cfg, only) < 0)
		return SHOAL_ENOTFOUND;
	job_kind_t kind = { .only = only, .changes = cs };
	return job_start(r, &kind, done, arg);
}

int reload_reconfig(reload_t *r, conf_t *cfg, bool check_files, reload_done_fn done, void *arg)
{
	MAIN_THREAD_ONLY();
	if (r->running)
		return SHOAL_EEXIST;
	job_kind_t kind = { .cfg = cfg, .check_files = check_files };
	return job_start(r, &kind, done, arg);
}

int reload_change_one(reload_t *r, conf_t *cfg, enum zonedb_change change, size_t removed,
		      reload_done_fn done, void *arg)
{
	MAIN_THREAD_ONLY();
	if (r->running)
		return SHOAL_EEXIST;
	job_kind_t kind = { .cfg = cfg, .change = change, .removed = removed };
	return job_start(r, &kind, done, arg);
}

int reload_load_rest(reload_t *r, void (*done)(void *arg), void *arg)
{
	MAIN_THREAD_ONLY();
	r->first_done = done;
	r->first_done_arg = arg;
	if (!zonedb_pending(r->writer)) {
		log_info("first load done: no zone file to read");
		tell_ready(r, true);
		if (done)
			done(arg);
		return 0;
	}
	r->first_loading = true;
	job_kind_t kind = { .first = true };
	int rc = job_start(r, &kind, NULL, NULL);
	if (rc < 0) {
		r->first_loading = false;
		return rc;
	}
	on_load_progress(&r->progress);
	uv_timer_start(&r->progress, on_load_progress, 1000, 1000);
	return 0;
}

static int job_start(reload_t *r, const job_kind_t *kind, reload_done_fn done, void *arg)
{
	const char *only = kind->only;
	bool first = kind->first;
	/* the zone named as every log line names it: "example.com." */
	char canonical[NAME_TEXT_MAX + 2];
	if (only && name_zone_text(only, canonical, sizeof(canonical)) > 0)
		only = canonical;
	reload_job_t *job = calloc(1, sizeof(*job));
	if (!job || (only && !(job->only = strdup(only)))) {
		free(job);
		return SHOAL_ENOMEM;
	}
	job->r = r;
	job->changes = kind->changes ? changeset_ref(kind->changes) : NULL;
	job->cfg = kind->cfg;
	job->check_files = kind->check_files;
	job->change = kind->change;
	job->removed = kind->removed;
	job->what = first ? "first load" : kind->cfg ? "reconfig" : "reload";
	job->first = first;
	job->done = done;
	job->arg = arg;
	job->started_at = time(NULL);
	r->job = job;
	r->running = true;
	zone_load_cancel(false);
	log_info("%s%s%s started", job->what, only ? " of " : "", only ? only : "");
	int e = thread_start(&r->thread, NULL, reload_main, job, "shoald-reload");
	if (e) {
		log_error("cannot start the reload thread: %s", shoal_strerror(e));
		r->job = NULL;
		r->running = false;
		job_free(job);
		return e;
	}
	/*
	 * The first load has no reload-timeout: abandoned, it would leave every
	 * zone not read yet unserved for good, where a slow start is only slow
	 * (a zone answers SERVFAIL until it is read; a stop cancels it).
	 */
	if (!first) {
		uv_timer_start(&r->timer, on_reload_timeout,
			       (uint64_t)r->cfg->reload_timeout * 1000, 0);
		systemd_reloading();
	}
	return 0;
}

void reload_on_publish(reload_t *r, void (*fn)(void *arg), void *arg)
{
	MAIN_THREAD_ONLY();
	r->published = fn;
	r->published_arg = arg;
}

void reload_stopping(reload_t *r)
{
	MAIN_THREAD_ONLY();
	r->stopping = true;
}

int reload_attach(reload_t *r, uv_loop_t *loop)
{
	MAIN_THREAD_ONLY();
	pthread_condattr_t attr;
	r->loop = loop;
	int e = pthread_condattr_init(&attr);
	if (e != 0)
		return -e;
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	e = pthread_cond_init(&r->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (e != 0)
		return -e;
	pthread_mutex_init(&r->lock, NULL);
	r->sync_ready = true;
	r->done.data = r;
	r->timer.data = r;
	r->progress.data = r;
	e = uv_async_init(loop, &r->done, on_reload_done);
	if (e == 0)
		e = uv_timer_init(loop, &r->timer);
	if (e == 0)
		e = uv_timer_init(loop, &r->progress);
	return e; /* libuv's: 0 or -errno */
}

/* Wait up to ms for the reload thread's last step. True when it came. */
static bool wait_finished(reload_t *r, unsigned ms)
{
	struct timespec deadline;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += ms / 1000;
	deadline.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (deadline.tv_nsec >= 1000000000L) {
		deadline.tv_sec++;
		deadline.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->lock);
	int e = 0;
	while (!r->job->finished && e != ETIMEDOUT)
		e = pthread_cond_timedwait(&r->cond, &r->lock, &deadline);
	bool finished = r->job->finished;
	pthread_mutex_unlock(&r->lock);
	return finished;
}

bool reload_close(reload_t *r)
{
	MAIN_THREAD_ONLY();
	if (r->running) {
		/* its loads stop at the next record or read; publishing finishes first */
		pthread_mutex_lock(&r->lock);
		r->job->cancel = !r->job->publishing;
		pthread_mutex_unlock(&r->lock);
		zone_load_cancel(true);
		if (!wait_finished(r, RELOAD_STOP_GRACE_MS)) {
			/* it still owns the writer's set and the handles it signals: keep them */
			log_error("the reload thread did not stop within %u ms (blocked reading a "
				  "file?): exiting without it",
				  RELOAD_STOP_GRACE_MS);
			return true;
		}
		pthread_join(r->thread, NULL);
		reload_job_t *job = r->job;
		r->running = false;
		r->job = NULL;
		if (job->cfg && job->published)
			r->cfg = job->cfg; /* the set served is built from it, as on_reload_done */
		/* the caller's request is answered once, here or at the timeout: it owns what the
		 * job carries (a reconfig's configuration) and frees it */
		job_reply(job);
		job_free(job);
	}
	if (r->done.loop)
		uv_close((uv_handle_t *)&r->done, NULL);
	if (r->timer.loop)
		uv_close((uv_handle_t *)&r->timer, NULL);
	if (r->progress.loop)
		uv_close((uv_handle_t *)&r->progress, NULL);
	if (r->sync_ready) {
		pthread_cond_destroy(&r->cond);
		pthread_mutex_destroy(&r->lock);
		r->sync_ready = false;
	}
	return false;
}

void reload_clear(reload_t *r)
{
	MAIN_THREAD_ONLY();
	if (r->writer)
		zonedb_publish(r->zones, NULL); /* frees the set after a grace period */
	r->writer = NULL;
}
