/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal reader: IXFR out's changes read from journal files off the workers' loops. */
#ifndef SHOAL_SERVER_EVENTS_JREAD_H
#define SHOAL_SERVER_EVENTS_JREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/common/waker.h"
#include "zone/journal.h"

/*
 * One thread (shoald-jread) that reads the changes an IXFR out sends
 * from the zone's journal file (journal_changes: a pread and a decode per
 * change), so a big history or a slow disk stalls no worker's loop: the
 * worker posts the read, its stream waits (TCP_STREAM_WAIT), and the
 * reader rings the worker's waker when the changes are there. At most
 * `max` reads queued (past it jread_post says SHOAL_ESPACE: the request
 * gets SERVFAIL).
 */
typedef struct jread jread_t;

/* One read: the worker's and the reader's references. */
typedef struct jread_job jread_job_t;

/* Start the thread, at most max reads queued (>= 1). Returns it, or NULL (logged). Main thread. */
jread_t *jread_start(size_t max);

/*
 * Stop: the read under way finishes, those queued end with SHOAL_ETIMEOUT
 * (nobody waits for them: the workers stopped first), the thread is joined,
 * r freed. NULL is fine. Main thread.
 */
void jread_stop(jread_t *r);

/*
 * Queue the read of j's changes from `from` to `to`, condensed (RFC 1995
 * 6), as journal_changes; j and waker are referenced until it is done,
 * then waker is rung. Returns the job (the caller's reference), or NULL
 * with *err: SHOAL_ESPACE (max queued), SHOAL_ENOMEM. A worker's thread.
 */
jread_job_t *jread_post(jread_t *r, journal_t *j, uint32_t from, uint32_t to, waker_t *waker,
			int *err);

/*
 * Whether job is done; then *rc is journal_changes' result and *out its
 * changes (moved: the caller clears them). Once it said true, ask no more.
 * The posting worker's thread.
 */
bool jread_done(jread_job_t *job, int *rc, xfr_changes_t *out);

/* Drop the caller's reference (done or not: a read under way goes on, its result dropped). */
void jread_job_unref(jread_job_t *job);

#endif
