/* Zone loads and the set they publish: the first at start-up, reloads on a thread of their own. */
#ifndef SHOAL_SERVER_RELOAD_H
#define SHOAL_SERVER_RELOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "server/conf.h"
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
	pthread_t thread;
	bool running;         /* a reload thread exists (joined in on_reload_done) */
	bool again;           /* SIGHUP during a reload: run once more after it */
	bool abandoned;       /* the running one passed reload-timeout and was answered */
	bool stopping;        /* the server stops: no reload starts again by itself */
	reload_job_t *job;    /* the one running */
	char note[320];       /* "" or what became of the last abandoned reload */
	pthread_mutex_t lock; /* the job's cancel, publishing and finished */
	pthread_cond_t cond;  /* signalled when the job has finished */
	bool sync_ready;      /* lock and cond initialised */
	/*
	 * Called with every set built, on the thread that publishes it, just
	 * before it is published (the server zeroes the counters of the zones
	 * new to it); NULL for nothing. Set before the first load.
	 */
	void (*prepare)(void *arg, const zonedb_t *db);
	void *prepare_arg;
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
 * published. Returns 0 otherwise.
 */
int reload_load(reload_t *r, char *err, size_t errlen);

/*
 * Give r its handles on the main loop (the thread's results, the
 * reload-timeout timer) before reloads may start. Returns 0 or a system
 * error (-errno); reload_close undoes what was done either way. Main
 * thread.
 */
int reload_attach(reload_t *r, uv_loop_t *loop);

/*
 * Called on the main loop when a reload ends: rc 0, or a negative error;
 * messages holds the error lines ("FILE:LINE: reason\n"...), valid only
 * during the call.
 */
typedef void (*reload_done_fn)(void *arg, int rc, const char *messages);

/*
 * Start reloading `only` (NULL: all zones) on a reload thread that builds
 * the new set beside the served one and publishes it; done(arg, ...) runs
 * on the main loop afterwards (done may be NULL: a signal). A reload still
 * running after reload-timeout is abandoned: its loads are cancelled,
 * nothing it built is published, done gets SHOAL_ETIMEOUT at once, and no
 * other reload starts until its thread has ended. Main thread.
 * Returns 0; SHOAL_EEXIST when one is running (with done NULL, it runs
 * again after); SHOAL_ENOTFOUND when `only` is not configured;
 * SHOAL_ENOMEM or a system error (-errno).
 */
int reload_start(reload_t *r, const char *only, reload_done_fn done, void *arg);

/* The server is stopping: a reload asked for during the running one no longer starts. Main thread.
 */
void reload_stopping(reload_t *r);

/*
 * At stop: cancel a running reload and join it, waiting a bounded grace
 * time, then close the handles. Returns true when the thread did not end
 * in it and was left running: it may still use r, the zone sets and the
 * loop, so the caller must exit the process without freeing them. Main
 * thread.
 */
bool reload_close(reload_t *r);

/* Unpublish the served set; it is freed after a grace period. Main thread, at the end. */
void reload_clear(reload_t *r);

#endif
