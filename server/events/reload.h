/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Zone loads and the set they publish: the first at start-up, reloads on a thread of their own. */
#ifndef SHOAL_SERVER_EVENTS_RELOAD_H
#define SHOAL_SERVER_EVENTS_RELOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "server/conf/conf.h"
#include "zone/zonedb.h"

typedef struct reload_job reload_job_t;

/*
 * Reloads and the zone set they publish: the served set is *zones (RCU;
 * workers read it), and reload owns it. The main thread may read
 * `running`, `abandoned` and `note` (for status and zone-status); every
 * other field is the module's.
 */
typedef struct reload {
	const conf_t *cfg;
	zonedb_ref_t *zones; /* where sets are published */
	zonedb_t *writer;    /* the published set, for the one writer */
	uv_loop_t *loop;     /* the main loop: results and reload-timeout */
	uv_async_t done;     /* the reload thread has finished */
	uv_timer_t timer;    /* reload-timeout of the running reload */
	uv_timer_t progress; /* the first load's STATUS= each second */
	pthread_t thread;
	bool running;         /* a reload thread exists (joined in on_reload_done) */
	bool abandoned;       /* the running one passed reload-timeout and was answered */
	bool stopping;        /* the server stops: no reload starts again by itself */
	reload_job_t *job;    /* the one running */
	char note[320];       /* "" or what became of the last abandoned reload */
	pthread_mutex_t lock; /* the job's cancel, publishing and finished */
	pthread_cond_t cond;  /* signalled when the job has finished */
	bool sync_ready;      /* lock and cond initialised */
	/*
	 * The first load's progress: zones done (loaded, kept or failed;
	 * raised atomically by the load threads) of `loading`. Any thread
	 * reads `loaded` with an atomic load.
	 */
	size_t loaded;
	size_t loading;
	bool first_loading;            /* the first load's zones are being read (main thread's) */
	void (*first_done)(void *arg); /* reload_load_rest's, on the main loop */
	void *first_done_arg;
	/*
	 * Called with every set built, on the thread that publishes it, just
	 * before it is published (the server zeroes the counters of the zones
	 * new to it); NULL for nothing. Set before the first load.
	 */
	void (*prepare)(void *arg, const zonedb_t *db);
	void *prepare_arg;
	void (*published)(void *arg); /* after each reload, on the main loop (reload_on_publish) */
	void *published_arg;
	/* NULL, or the folder of the zones' IXFR journal files (zonedb_build_t); before the first
	 * load */
	const char *journal_dir;
	struct journal_budget *journal_budget; /* their bound together, or NULL */
} reload_t;

/*
 * Set r up in caller memory to load cfg's zones and publish them in
 * *zones; nothing is loaded or started yet. cfg and zones must outlive r.
 * Main thread.
 */
void reload_init(reload_t *r, const conf_t *cfg, zonedb_ref_t *zones);

/*
 * The first load, on the main thread before workers start: builds every
 * zone and publishes the set. A zone that fails stops start-up: returns a
 * negative error with the first "FILE:LINE: reason" in err, nothing
 * published. Returns 0 otherwise. With defer, no zone file is read: the
 * set of every configured zone is published serving nothing (SERVFAIL,
 * as NSD and Knot answer a configured zone not loaded), and
 * reload_load_rest reads them once the workers answer; only a name that
 * is no zone name (or one configured twice) stops start-up then.
 */
int reload_load(reload_t *r, bool defer, char *err, size_t errlen);

/*
 * After a deferred reload_load, once r is attached and the workers
 * answer: read the zones on the reload thread's load threads, each
 * answering as soon as it has loaded; "STATUS=loading zones: N of M"
 * each second, READY=1 when every zone was read (loaded or failed: a
 * zone that fails serves nothing and zone-status says why), then
 * done(arg) on the main loop. Reloads and reconfigs answer busy until
 * then; reload-timeout applies. Returns 0 or a negative error. Main
 * thread.
 */
int reload_load_rest(reload_t *r, void (*done)(void *arg), void *arg);

/*
 * Whether the first load is reading zones; *done of *total zones read so
 * far (loaded, kept or failed). Main thread.
 */
bool reload_loading(const reload_t *r, size_t *done, size_t *total);

/*
 * Give r its handles on the main loop (the thread's results, the
 * reload-timeout timer) before reloads may start. Returns 0 or a system
 * error (-errno); reload_close undoes what was done either way. Main
 * thread.
 */
int reload_attach(reload_t *r, uv_loop_t *loop);

/*
 * What a reload or reconfig ended with, for its client's reply; the
 * strings are valid only during the call of reload_done_fn.
 */
typedef struct reload_result {
	int rc;               /* 0, or a negative error: SHOAL_EZONE, a zone failed (it keeps
				 its version), SHOAL_ETIMEOUT, SHOAL_ENOMEM... */
	const char *errors;   /* the error lines, "FILE:LINE: reason\n"..., "" when none */
	const char *warnings; /* the warning lines, each "warning: ...\n", "" when none */
	/*
	 * The zones whose version served changed, "a.test. (serial 1 -> 2),
	 * b.test. (loaded, serial 5)", the first RELOAD_CHANGED_NAMED by name,
	 * then "and N more"; "" when none. A zone read again whose serial did
	 * not move is not one (a warning says so when its records changed).
	 */
	const char *changed;
} reload_result_t;

#define RELOAD_CHANGED_NAMED 20

/* Called on the main loop when a reload or reconfig ends. */
typedef void (*reload_done_fn)(void *arg, const reload_result_t *res);

/*
 * Start reloading `only` (NULL: all zones) on a reload thread that builds
 * the new set beside the served one and publishes it; done(arg, ...) runs
 * on the main loop afterwards (done may be NULL). A reload still
 * running after reload-timeout is abandoned: its loads are cancelled,
 * nothing it built is published, done gets SHOAL_ETIMEOUT at once, and no
 * other reload starts until its thread has ended. Main thread.
 * Returns 0; SHOAL_EEXIST when one is running; SHOAL_ENOTFOUND when `only`
 * is not configured;
 * SHOAL_ENOMEM or a system error (-errno).
 */
int reload_start(reload_t *r, const char *only, reload_done_fn done, void *arg);

/*
 * reload_start of `only` with the changes cs (one from its serial served)
 * applied to its version instead of reading its file
 * (zonedb_apply_zone): journalled, published, NOTIFY after, at the cost
 * of the changes. Takes a reference on cs. Returns as reload_start. Main
 * thread.
 */
struct changeset;
int reload_apply(reload_t *r, const char *only, const struct changeset *cs, reload_done_fn done,
		 void *arg);

/*
 * Call fn(arg) on the main loop after every reload that ends (whatever
 * it published; the callee compares), so NOTIFY can follow new serials.
 * Main thread.
 */
void reload_on_publish(reload_t *r, void (*fn)(void *arg), void *arg);

/*
 * Start a reconfiguration to cfg, as reload_start: the reload thread
 * builds the set of cfg's zones (a zone whose spec says keep shares the
 * version served; the others are read) and publishes it with cfg as its
 * owner (zonedb_owner). With check_files (reconfig, SIGHUP), a primary
 * zone whose spec says keep is read all the same when its file changed on
 * disk since its version was loaded (its modification time not older) or
 * when it serves nothing: the thread clears its keep (cfg is the job's
 * until done). The result's `changed` names those whose serial moved. A primary zone that cfg adds
 * and that does not load refuses the whole: nothing is published, done gets SHOAL_EZONE with its
 * "FILE:LINE: reason". When the set was published, r->cfg is cfg from the call of done on (the
 * caller frees the configuration it replaces once nothing else uses it); otherwise r->cfg is
 * unchanged. cfg must outlive its use. Returns 0, SHOAL_EEXIST when a reload or reconfig runs,
 * SHOAL_ENOMEM or -errno. Main thread.
 */
int reload_reconfig(reload_t *r, conf_t *cfg, bool check_files, reload_done_fn done, void *arg);

/*
 * A reconfiguration to cfg, the configuration served with one zone added
 * (change ZONEDB_ADDED: cfg's last) or zone `removed` taken out
 * (ZONEDB_REMOVED), as zone-add and zone-remove make it: as
 * reload_reconfig without check_files, but the set is derived from the
 * one served (zonedb_build_t.change), at the cost of that zone and a copy
 * of the set's pointers and hash, whatever the count of zones. Main
 * thread.
 */
int reload_change_one(reload_t *r, conf_t *cfg, enum zonedb_change change, size_t removed,
		      reload_done_fn done, void *arg);

/*
 * Publish a set like the one served with the zone whose apex is `apex`
 * (lowercase wire) serving z (NULL: nothing,
 * SERVFAIL) and its last error set to error (zonedb_replace): a transfer
 * in, or an expiry. It waits for a reload running to publish first (so
 * neither undoes the other), giving up with SHOAL_ETIMEOUT when *stop
 * becomes non-zero. Returns 0, SHOAL_ENOTFOUND when the set no longer
 * has the zone (a reconfig removed it), or a negative error. Any thread but a
 * worker or the main loop (it waits for a grace period).
 */
int reload_replace_zone(reload_t *r, const uint8_t *apex, const struct zone *z, const char *error,
			const int *stop);

/*
 * What reload_change_zone runs: from db (the set served, its owner
 * configuration zonedb_owner(db)) and its zone i, the version to serve
 * next into *next (one reference, handed over; NULL: nothing changes).
 * Returns 0, or a negative error (then *next is ignored).
 */
typedef int (*reload_change_fn)(void *arg, const zonedb_t *db, size_t i, struct zone **next);

/*
 * Change the zone whose apex is `apex` (lowercase wire) in one step no
 * reload, transfer or other change of the set can come between: fn reads
 * the version served and makes the next one, which is published (its
 * last error kept) before the lock is let go. Waits as reload_replace_zone
 * does. Returns 0; SHOAL_ENOTFOUND when the set has no such zone; fn's
 * error; or another negative error. Any thread but a worker or the main
 * loop (it waits for a grace period).
 */
int reload_change_zone(reload_t *r, const uint8_t *apex, reload_change_fn fn, void *arg,
		       const int *stop);

/* The server is stopping: a reload asked for during the running one no longer starts. Main thread.
 */
void reload_stopping(reload_t *r);

/*
 * At stop: cancel a running reload and join it, waiting a bounded grace
 * time, then close the handles. A reload or reconfig joined here whose
 * done was not called yet gets it now (r->stopping is set): its rc, and
 * r->cfg is its configuration when the set was published, so the caller
 * frees what it owns exactly once whenever the thread ended. Returns true when the thread did not
 * end in it and was left running: it may still use r, the zone sets and the loop, so the caller
 * must exit the process without freeing them. Main thread.
 */
bool reload_close(reload_t *r);

/* Unpublish the served set; it is freed after a grace period. Main thread, at the end. */
void reload_clear(reload_t *r);

#endif
