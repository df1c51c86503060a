/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Inside server/events/: a secondary zone's entry and a refresh's job, the scheduler's and
 * secondary.c's. */
#ifndef SHOAL_SERVER_EVENTS_INTERNAL_H
#define SHOAL_SERVER_EVENTS_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <urcu.h>

#include "server/common/heap.h"
#include "server/events/sched.h"

/* What a zone wants done (sec_zone_t.want), set by any thread, taken when its refresh starts. */
enum {
	SEC_WANT_NOTIFY = 1,     /* a NOTIFY with a serial (sec_zone_t.notify_serial) */
	SEC_WANT_NOTIFY_ANY = 2, /* a NOTIFY without one */
	SEC_WANT_REFRESH = 4,    /* shoalctl refresh */
	SEC_WANT_RETRANSFER = 8, /* shoalctl retransfer: the whole zone, whatever its serial */
};

/* A secondary zone's timers and version, as its SOA says and bounded by the configuration. */
typedef struct sec_timers {
	bool have;       /* a version is served */
	uint32_t serial; /* the version served */
	/* a NOTIFY's serial must pass it: serial, or a signing zone's primary's (sign_upstream) */
	uint32_t notify_from;
	uint32_t soa_refresh, soa_retry, soa_expire;
	uint32_t refresh, retry, expire; /* seconds, bounded (sec_bound_timers) */
} sec_timers_t;

/*
 * One secondary zone, for as long as the configurations name it: a
 * reconfig keeps the same entry (its timers, flags and status go on), so
 * it is named by apex, never by an index into a configuration.
 */
typedef struct sec_zone {
	heap_node_t due;    /* the scheduler's: when to refresh next (ms), unless running */
	heap_node_t expiry; /* the scheduler's: when the version served expires (ms) */
	heap_node_t flush;  /* the scheduler's: when its file is written next (ms) */
	/* atomic: a new version was published since the flush was planned (any thread sets it) */
	int flush_wanted;
	/* atomic: a write waits in the flush thread's queue (it writes the newest version then) */
	int flush_queued;
	/* handed to the scheduler by any thread (sched_notify, sched_refresh) */
	struct sec_zone *inbox_next;
	int queued;             /* atomic: in the inbox */
	unsigned want;          /* atomic: SEC_WANT_* */
	uint32_t notify_serial; /* atomic: the newest serial a NOTIFY named */
	/* the scheduler thread's */
	bool running;               /* a pool thread refreshes it */
	bool fresh;                 /* made by a reconfig, not taken over by the scheduler yet */
	struct sec_zone *gone_next; /* sched_table_drop_fresh's list of entries to free */
	bool retired;               /* gone from the configuration: freed when no longer running */
	size_t index;               /* in the configuration of the table worked on */
	int64_t refresh_at;         /* ms, wall clock: the refresh its timers plan */
	int64_t started_at;         /* ms: when its last refresh started */
	/*
	 * The running refresh's, else the scheduler's; have, serial and
	 * expire_at also under the zone's publication lock (sched.pub_locks),
	 * as the scheduler expires a zone whose refresh runs.
	 */
	sec_timers_t t;
	int64_t expire_at; /* ms, wall clock (t.have) */
	/* zone-status: atomics, and the strings under sched.status_lock */
	int64_t shown_next;    /* atomic: seconds, the next refresh */
	int64_t shown_expires; /* atomic: seconds, 0: nothing served */
	time_t last_refresh;   /* status_lock: the last successful one */
	time_t last_failure;   /* status_lock: the last refresh that failed */
	/* atomic: its file does not hold the version served (a save failed, or it moved) */
	int unsaved;
	char *save_error;             /* status_lock: why the last save failed, or NULL */
	char *source;                 /* status_lock: "file", "primary ADDR", "none" */
	char *last_error;             /* status_lock: why the last refresh failed, or NULL */
	struct sec_zone *prev, *next; /* every entry, for sched_free (sched.all_lock) */
	uint8_t apex_len;
	uint8_t apex[]; /* lowercase wire */
} sec_zone_t;

/*
 * The secondary zones of one configuration, with a copy of it of their own,
 * and an index by apex. Made on the main thread; the scheduler adopts it;
 * freed by the scheduler once no refresh uses it (refs).
 */
typedef struct sec_table {
	conf_t cfg;
	size_t count;
	sec_zone_t **zones; /* in cfg's order */
	size_t *index;      /* zones[k] is cfg's zone index[k] */
	size_t *slots;      /* open addressing by apex, a power of two: a place in zones + 1 */
	size_t cap;
	unsigned refs;             /* the scheduler's: refreshes running with it, and work */
	struct sec_table *skipped; /* tables posted before it and never adopted */
	/*
	 * Derived from `base` by one zone added or removed (change; else
	 * ZONEDB_REBUILD and base NULL): adopted after base, it looks at that
	 * zone only. base is compared, never read: it may be freed by then.
	 */
	const struct sec_table *base;
	enum zonedb_change change;
	sec_zone_t *gone; /* ZONEDB_REMOVED: base's entry of the zone removed, or NULL */
	size_t removed;   /* ZONEDB_REMOVED: the zone's index in base's configuration */
} sec_table_t;

/* One pool thread and the refresh it runs. */
typedef struct sec_job {
	sched_t *s;
	unsigned number; /* its thread's: shoald-xfr-N */
	pthread_t thread;
	sem_t go;
	/* the refresh: set by the scheduler under flight_lock, then the thread's */
	sec_zone_t *z;
	const sec_table_t *table;
	size_t index;         /* z's in table->cfg */
	bool forced;          /* retransfer */
	int give_up;          /* atomic: a reconfig changed or removed the zone */
	bool ok;              /* a primary answered: with the zone, or that it is current */
	struct sec_job *next; /* in the idle list or the done list */
} sec_job_t;

/*
 * A zone's file to write, handed by the scheduler to the flush thread: a
 * copy of what the write needs, so the entry may go meanwhile (a reconfig).
 */
typedef struct sec_flush_job {
	struct sec_flush_job *next;
	zone_limits_t limits; /* the zone's, that its next start reads the file with */
	char *file;
	char *name;        /* as configured */
	char comment[200]; /* where the version came from */
	uint8_t apex[];
} sec_flush_job_t;

/*
 * A signing zone's re-sign event (resign.c): when its next batch of
 * signatures falls due. The scheduler's, but for next_ms, which the sign
 * thread writes while it holds the entry (running).
 */
typedef struct resign_zone {
	heap_node_t due;          /* the scheduler's: when the next batch is due (ms) */
	bool running;             /* handed to the sign thread, not back yet */
	bool retired;             /* gone from the configuration: freed once back */
	bool listed;              /* the scheduler's: the configuration adopted has it */
	int64_t next_ms;          /* the batch's answer: when the next is due (ms) */
	struct resign_zone *next; /* in the sign thread's queue or its done list */
	uint8_t apex_len;
	uint8_t apex[]; /* lowercase wire */
} resign_zone_t;

/* Never: a due time past every other. */
#define SCHED_NEVER INT64_MAX
/* The entry whose heap node `field` node is. */
#define ZONE_OF(node, field) ((sec_zone_t *)((char *)(node)-offsetof(sec_zone_t, field)))

/* Transfers in at once at most: transfers-in's bound. */
#define SCHED_POOL_MAX 256
/* Publication locks, shared by zones by the hash of their apex. */
#define SCHED_PUB_LOCKS 64

struct sched {
	zonedb_ref_t *zones;
	reload_t *reload;
	state_t *state;
	void (*published)(void *arg);
	void *published_arg;
	stats_xfr_in_t *xfr_in; /* the caller's */
	stats_sched_t *counters;
	tls_ctx_t *tls;    /* sessions to TLS primaries */
	unsigned pool_max; /* transfers-in of the start: threads at most */
	uint8_t key[16];   /* the tables' hash key */
	/*
	 * The scheduler works on `work`; others look zones up in `shown` (RCU).
	 * A reconfig shows its table at once and posts it in `pending`; the
	 * scheduler adopts it between two events.
	 */
	sec_table_t *work;
	sec_table_t *shown;
	/* ThreadSanitizer builds: read sections' ends released here, acquired before a free (a
	 * place of its own: the atomic stores to shown would overwrite what they released) */
	char tsan_sections;
	sec_table_t *pending; /* atomic exchange: main posts, the scheduler takes */
	/* the scheduler thread's */
	heap_t due, expiry, flush;
	sec_job_t *idle;  /* pool threads waiting for a refresh */
	unsigned running; /* refreshes running */
	unsigned threads; /* pool threads started */
	int64_t tokens;   /* serial-query-rate's bucket, in thousandths of a query */
	int64_t tokens_at;
	int64_t save_at;     /* ms: the next save of the state, when it changed */
	int64_t save_gap_ms; /* between two saves: grows with what one costs */
	bool waiting_rate;   /* refreshes due wait for serial-query-rate (counted once) */
	/* the inbox: zones handed over by any thread, a lock-free stack */
	sec_zone_t *inbox;
	/* refreshes ended, handed back by the pool */
	pthread_mutex_t done_lock;
	sec_job_t *done;
	/* the refreshes running, for a reconfig that gives one up */
	pthread_mutex_t flight_lock;
	sec_job_t jobs[SCHED_POOL_MAX];
	pthread_mutex_t pub_locks[SCHED_PUB_LOCKS];
	pthread_mutex_t status_lock;
	pthread_mutex_t all_lock;
	sec_zone_t *all; /* every entry made */
	pthread_t thread;
	bool started;
	int stop; /* atomic */
	sem_t wake;
	/* the flush thread's queue: the scheduler posts, sched_free drains (flush.c) */
	pthread_mutex_t flush_lock;
	pthread_cond_t flush_cond;
	sec_flush_job_t *flush_head, *flush_tail; /* flush_lock */
	bool flush_stop;                          /* flush_lock: leave once the queue is empty */
	pthread_t flush_thread;
	bool flush_started;
	/* re-sign events (resign.c): the signing zones sorted by apex and their heap, the
	 * scheduler's; the sign thread's queue and what it handed back, under sign_lock */
	heap_t resign;
	resign_zone_t **signing;
	size_t signing_count, signing_cap;
	pthread_mutex_t sign_lock;
	pthread_cond_t sign_cond;
	resign_zone_t *sign_head, *sign_tail, *sign_done; /* sign_lock */
	bool sign_stop;                                   /* sign_lock */
	pthread_t sign_thread;
	bool sign_started;
};

/*
 * sched_table.c: entries and tables. An entry for apex (lowercased), fresh,
 * on the list of every entry; NULL when out of memory. Main thread.
 */
sec_zone_t *sched_entry_new(sched_t *s, const uint8_t *apex);

/* Free entry z, off the list: no thread may reach it any more (no table shown, no inbox). */
void sched_entry_free(sched_t *s, sec_zone_t *z);

/*
 * The secondary zones of cfg with a copy of it: the entries of `from` (the
 * table shown) for the zones it has, fresh ones for the others. When cfg
 * is from's configuration with one change (zone-add: its last zone new;
 * zone-remove: from's zone `removed` gone), from's table with the indices
 * moved and the one zone looked at, at the cost of the secondaries, not
 * of every zone. NULL when out of memory (the fresh ones made are freed).
 * Main thread.
 */
sec_table_t *sched_table_new(sched_t *s, const conf_t *cfg, const sec_table_t *from,
			     enum zonedb_change change, size_t removed);

/* The place of apex's entry in t->zones, or -1 (t may be NULL). Any thread that holds t. */
long sched_table_pos(const sched_t *s, const sec_table_t *t, const uint8_t *apex);

/* The entry of apex in t, or NULL. */
sec_zone_t *sched_table_find(const sched_t *s, const sec_table_t *t, const uint8_t *apex);

/*
 * Free the fresh entries of t and of the tables it skipped that keep does
 * not have (keep NULL: all of them), each once. The scheduler thread, or
 * the main loop for a table never posted.
 */
void sched_table_drop_fresh(sched_t *s, sec_table_t *t, const sec_table_t *keep);

/* Free table t, not its entries. NULL is fine. */
void sched_table_free(sec_table_t *t);

/* The scheduler: t lost a user (a refresh, or the work); freed with the last. */
void sched_table_unref(sec_table_t *t);

/* Now on the wall clock, in ms: timers mean the same after a restart. */
int64_t sched_now_ms(void);

/* The publication lock of zone z. */
pthread_mutex_t *sched_pub_lock(sched_t *s, const sec_zone_t *z);

/*
 * secondary.c: what a refresh does. Ask the primaries of job->z in order
 * (an SOA query over UDP first, then IXFR or AXFR over TCP), publish and
 * save a new version, update z's timers, version and status. Returns true
 * when a primary answered. A pool thread, with job->z running.
 */
bool sec_refresh(sec_job_t *job);

/*
 * secondary.c: expire z, called name, when its version is still due to (RFC 1035
 * 3.3.13): publish nothing for it (SERVFAIL). Returns when the version
 * served expires now (a refresh running may have put it off), or 0 when
 * none is served any more. The scheduler thread.
 */
int64_t sec_expire(sched_t *s, sec_zone_t *z, const char *name, int64_t now);

/* Hand z to the scheduler (once until it takes it) and wake it. Any thread; no lock. */
void sched_kick(sched_t *s, sec_zone_t *z);

/*
 * z's file is to hold the version just published (or served, when a save
 * failed): the scheduler plans its write (zonefile-sync). Any thread.
 */
void sched_want_flush(sched_t *s, sec_zone_t *z);

/* The entry of zone `apex` in the table shown, or NULL. Any thread, in an RCU read section. */
sec_zone_t *sched_zone_of(sched_t *s, const uint8_t *apex);

/*
 * A read section of the table shown (sched_zone_of and what it gives):
 * liburcu's, whose end ThreadSanitizer builds also mark as a release that
 * the scheduler acquires before it frees what a section could see. Any
 * thread registered with liburcu.
 */
void sched_read_lock(void);
void sched_read_unlock(sched_t *s);

/*
 * flush.c: start the flush thread (shoald-flush). 0 or -errno. Main
 * thread, once, with sched_start.
 */
int sched_flush_start(sched_t *s);

/*
 * flush.c: z's file is due for a write zonefile-sync from now, unless one
 * is planned already: changes until it fires go with it (one write per
 * zonefile-sync at most, as Knot's zonefile-sync). The scheduler.
 */
void sched_flush_plan(sched_t *s, sec_zone_t *z, int64_t now);

/* flush.c: hand the writes due to the flush thread. Returns when the next is due. The scheduler. */
int64_t sched_flush_due_now(sched_t *s, int64_t now);

/*
 * flush.c: hand z's write to the flush thread, by the configuration t
 * (z's file, limits): nothing when one waits already (that one writes the
 * newest version); a zone without a file is saved at once. The scheduler
 * thread, or the main thread once the scheduler has stopped.
 */
void sched_flush_post(sched_t *s, sec_zone_t *z, const sec_table_t *t);

/*
 * flush.c: the writes planned and not due yet are queued, those queued
 * are done, then the flush thread stops: a stop loses no version that
 * zonefile-sync delayed. Main thread (sched_free), after the scheduler
 * and the pool have stopped and their inbox was taken.
 */
void sched_flush_stop(sched_t *s);

/*
 * resign.c: the signing zones of t (those whose spec has sign) made the
 * scheduler's: those kept keep their due time, those new are due now
 * (their first batch finds when the next is), those gone are retired. A
 * table derived by one zone added or removed looks at that zone alone.
 * The scheduler, in adopt, with old the table it replaces (or NULL).
 */
void sched_sign_adopt(sched_t *s, const sec_table_t *old, const sec_table_t *t);

/*
 * resign.c: the batches the sign thread finished re-armed, those due
 * handed to it. Returns when the next is due. The scheduler.
 */
int64_t sched_sign_due_now(sched_t *s, int64_t now);

/* resign.c: start the sign thread (shoald-sign). 0 or -errno. Main thread, with sched_start. */
int sched_sign_start(sched_t *s);

/*
 * resign.c: stop the sign thread (the batch it runs ends first) and free
 * the entries. Main thread (sched_free), after the scheduler stopped.
 */
void sched_sign_stop(sched_t *s);

/* secondary.c: z's timers from zone's SOA (NULL: nothing served), bounded by cfg. */
struct zone;
void sec_timers_from(const conf_t *cfg, const struct zone *zone, sec_timers_t *t);

/* secondary.c: the SOA's timers bounded by cfg's min- and max- options. */
void sec_bound_timers(const conf_t *cfg, sec_timers_t *t);

/* secondary.c: set z's status strings (NULL leaves one as it was; "" clears last_error). */
void sec_set_status(sched_t *s, sec_zone_t *z, const char *source, const char *last_error);

/*
 * Whether z's file holds the version served: z->unsaved, the scheduler's
 * gauge of such zones and its save error (error NULL: saved) kept
 * together. Any thread.
 */
void sec_set_saved(sched_t *s, sec_zone_t *z, bool saved, const char *error);

#endif
