/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The IXFR history of a zone: a bounded list of changesets under a mutex, and its file. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "zone/internal.h"
#include "zone/jfile.h"
#include "zone/journal.h"

/*
 * One change of the history: the changeset in memory, or, once the file
 * holds it, only where (a few words, not the changeset: an IXFR reads it
 * back).
 */
typedef struct jentry {
	const changeset_t *cs; /* NULL: in the file alone */
	uint32_t from, to;
	size_t octets; /* the changeset's, in memory or not: what max_octets bounds */
	jfile_span_t at;
} jentry_t;

struct journal {
	pthread_mutex_t lock; /* the list, for readers and the writer */
	unsigned refs;        /* atomic */
	size_t max_octets, octets;
	jentry_t *sets; /* oldest first */
	size_t count, cap;
	/* the file, for writers alone (readers never wait on a sync): */
	pthread_mutex_t file_lock;
	char *path;               /* NULL, or the file the history is kept in too */
	bool on_disk;             /* path is written (journal_drop_file ends it; path stays) */
	size_t file_octets;       /* its size, as counted in budget (atomic: journal_get_info) */
	journal_budget_t *budget; /* NULL, or the bound of every zone's files together */
};

/* Count delta octets more (or fewer) against b. */
static void budget_count(journal_budget_t *b, size_t old, size_t now)
{
	if (b && now >= old)
		__atomic_add_fetch(&b->used, now - old, __ATOMIC_RELAXED);
	else if (b)
		__atomic_sub_fetch(&b->used, old - now, __ATOMIC_RELAXED);
}

/*
 * Reserve rec octets of b for a file of mine octets that grows by them;
 * returns how big that file may be after (SIZE_MAX: no bound): the
 * newest records within it stay, the oldest go first, so one zone never
 * takes another's history. Counted at once, so writers of other zones
 * see the room taken.
 */
static size_t budget_reserve(journal_budget_t *b, size_t mine, size_t rec)
{
	if (!b)
		return SIZE_MAX;
	size_t used = __atomic_add_fetch(&b->used, rec, __ATOMIC_RELAXED);
	if (used <= b->max)
		return SIZE_MAX;
	size_t over = used - b->max;
	return mine + rec > over ? mine + rec - over : 0;
}

journal_t *journal_new(size_t max_octets)
{
	journal_t *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	if (pthread_mutex_init(&j->lock, NULL) != 0) {
		free(j);
		return NULL;
	}
	if (pthread_mutex_init(&j->file_lock, NULL) != 0) {
		pthread_mutex_destroy(&j->lock);
		free(j);
		return NULL;
	}
	j->refs = 1;
	j->max_octets = max_octets;
	return j;
}

journal_t *journal_ref(journal_t *j)
{
	unsigned was = __atomic_fetch_add(&j->refs, 1, __ATOMIC_RELAXED);
	assert(was > 0); /* the caller holds one */
	(void)was;
	return j;
}

/* Drop the oldest n changesets. Lock held. */
static void drop_oldest(journal_t *j, size_t n)
{
	assert(n <= j->count);
	if (n == 0)
		return; /* sets may be NULL */
	for (size_t i = 0; i < n; i++) {
		assert(j->sets[i].octets <= j->octets); /* octets is the sum of the sets' */
		j->octets -= j->sets[i].octets;
		changeset_unref(j->sets[i].cs);
	}
	memmove(j->sets, j->sets + n, (j->count - n) * sizeof(*j->sets));
	j->count -= n;
}

/* The oldest go until the rest fit. Lock held. */
static void trim(journal_t *j)
{
	size_t n = 0, octets = j->octets;
	while (n < j->count && octets > j->max_octets)
		octets -= j->sets[n++].octets;
	drop_oldest(j, n);
}

void journal_unref(journal_t *j)
{
	if (!j)
		return;
	unsigned was = __atomic_fetch_sub(&j->refs, 1, __ATOMIC_ACQ_REL);
	assert(was > 0); /* one more unref than refs: freed already */
	if (was != 1)
		return;
	drop_oldest(j, j->count);
	free(j->sets);
	free(j->path);
	pthread_mutex_destroy(&j->file_lock);
	pthread_mutex_destroy(&j->lock);
	free(j);
}

/*
 * The changes the file held alone go, and with them every older one:
 * the history has no holes. file_lock held.
 */
static void forget_file(journal_t *j)
{
	pthread_mutex_lock(&j->lock);
	size_t n = j->count;
	while (n > 0 && j->sets[n - 1].cs)
		n--;
	drop_oldest(j, n);
	pthread_mutex_unlock(&j->lock);
}

/* Count the file as gone, and what it held alone. file_lock held. */
static void file_drop_count(journal_t *j)
{
	budget_count(j->budget, j->file_octets, 0);
	__atomic_store_n(&j->file_octets, 0, __ATOMIC_RELAXED);
	forget_file(j);
}

/*
 * The file is `size` octets, its last records the newest changes (the
 * writer appends the list's changes and compaction keeps the newest):
 * each change it holds gets its place there and leaves memory. Older
 * ones it holds no longer go, unless memory has them (written when the
 * file could not be). Lock held.
 */
static void settle(journal_t *j, size_t size)
{
	size_t end = size;
	for (size_t i = j->count; i-- > 0;) {
		jentry_t *e = &j->sets[i];
		if (e->at.len <= end) {
			end -= e->at.len;
			e->at.off = end;
			changeset_unref(e->cs);
			e->cs = NULL;
		} else if (!e->cs) {
			drop_oldest(j, i + 1);
			return;
		} else {
			end = 0; /* older ones: not in the file */
		}
	}
}

/* Remove the file (history on disk starts again with the next change). file_lock held. */
static void file_drop(journal_t *j)
{
	if (!j->on_disk)
		return;
	jfile_remove(j->path, true);
	file_drop_count(j);
}

void journal_drop_file(journal_t *j)
{
	pthread_mutex_lock(&j->file_lock);
	if (j->on_disk) {
		/* a reconfig may drop many: a file a power cut brings back, the next start sweeps
		 */
		jfile_remove(j->path, false);
		file_drop_count(j);
	}
	j->on_disk = false; /* path stays: a writer may be naming it in a message */
	pthread_mutex_unlock(&j->file_lock);
}

void journal_set_max(journal_t *j, size_t max_octets)
{
	pthread_mutex_lock(&j->lock);
	j->max_octets = max_octets;
	trim(j);
	bool empty = j->count == 0;
	pthread_mutex_unlock(&j->lock);
	/* a smaller file waits for the next change (jfile_append compacts); none goes now */
	if (empty) {
		pthread_mutex_lock(&j->file_lock);
		file_drop(j);
		pthread_mutex_unlock(&j->file_lock);
	}
}

int journal_set_file(journal_t *j, const char *path, journal_budget_t *budget)
{
	assert(!j->path);
	j->path = strdup(path);
	j->on_disk = j->path != NULL;
	j->budget = budget;
	return j->path ? 0 : SHOAL_ENOMEM;
}

const char *journal_file(const journal_t *j)
{
	return j->path;
}

/*
 * Write sets[0..n) to the file before the memory has them, so the file
 * never lacks a change a secondary was sent: the file follows what
 * list_add does to the list (a new start when they do not follow, none
 * of those up to one too big to keep), within what the budget leaves it,
 * in one write and one sync. A failed write removes
 * the file: a restart then starts the history afresh instead of reading
 * one with a hole. file_lock held, not the list's: the sync may take
 * milliseconds, and readers go on meanwhile.
 */
static int file_add(journal_t *j, const changeset_t *const *sets, size_t n)
{
	pthread_mutex_lock(&j->lock);
	bool follows = j->count && j->sets[j->count - 1].to == sets[0]->from;
	size_t max = j->max_octets;
	pthread_mutex_unlock(&j->lock);
	/* what list_add keeps of them: those after the last one too big to keep */
	size_t first = 0, rec = 0, mine = j->file_octets;
	for (size_t i = 0; i < n; i++)
		first = sets[i]->octets > max ? i + 1 : first;
	if (!follows || first)
		file_drop(j);
	if (first == n)
		return 0;
	for (size_t i = first; i < n; i++)
		rec += jfile_record_size(sets[i]);
	size_t fit = budget_reserve(j->budget, mine, rec);
	if (fit < jfile_record_size(sets[n - 1])) {
		/* not even the newest fits in what the other zones leave: none on disk */
		budget_count(j->budget, mine + rec, mine);
		file_drop(j);
		return SHOAL_ESPACE;
	}
	size_t size = mine;
	int err = jfile_append(j->path, sets + first, n - first, fit < max ? fit : max, &size);
	budget_count(j->budget, mine + rec, size);
	__atomic_store_n(&j->file_octets, size, __ATOMIC_RELAXED);
	if (err < 0)
		file_drop(j);
	return err;
}

/* journal_add in memory (settle then moves what the file holds), its record len octets. */
static void list_add(journal_t *j, const changeset_t *cs, size_t len)
{
	pthread_mutex_lock(&j->lock);
	if (j->count && j->sets[j->count - 1].to != cs->from)
		drop_oldest(j, j->count);
	if (cs->octets > j->max_octets || j->count == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 8;
		jentry_t *sets =
			cs->octets > j->max_octets ? NULL : realloc(j->sets, cap * sizeof(*sets));
		if (!sets) {
			/* too big to keep (or no memory): the history ends here */
			drop_oldest(j, j->count);
			pthread_mutex_unlock(&j->lock);
			changeset_unref(cs);
			return;
		}
		j->sets = sets;
		j->cap = cap;
	}
	j->sets[j->count++] = (jentry_t){
		.cs = cs, .from = cs->from, .to = cs->to, .octets = cs->octets, .at.len = len
	};
	j->octets += cs->octets;
	trim(j);
	pthread_mutex_unlock(&j->lock);
}

int journal_add_all(journal_t *j, const changeset_t *const *sets, size_t n)
{
	if (n == 0)
		return 0;
	pthread_mutex_lock(&j->file_lock);
	int err = j->on_disk ? file_add(j, sets, n) : 0;
	for (size_t i = 0; i < n; i++)
		list_add(j, changeset_ref(sets[i]), j->on_disk ? jfile_record_size(sets[i]) : 0);
	if (j->on_disk) {
		pthread_mutex_lock(&j->lock);
		settle(j, __atomic_load_n(&j->file_octets, __ATOMIC_RELAXED));
		pthread_mutex_unlock(&j->lock);
	}
	pthread_mutex_unlock(&j->file_lock);
	return err;
}

int journal_add(journal_t *j, const changeset_t *cs)
{
	int err = journal_add_all(j, &cs, 1);
	changeset_unref(cs);
	return err;
}

void journal_report(const journal_t *j, int err, zone_msg_fn msg, void *msg_arg)
{
	if (err == SHOAL_ESPACE)
		zone_report(msg, msg_arg, false, j->path, 0,
			    "ixfr-journal-total is reached: this change is kept in memory only, "
			    "and after a restart secondaries behind it transfer the whole zone");
	else if (err < 0)
		zone_report(msg, msg_arg, false, j->path, 0,
			    "cannot write the IXFR journal: %s: it starts again after a restart",
			    shoal_strerror(err));
}

void journal_clear(journal_t *j)
{
	pthread_mutex_lock(&j->file_lock);
	file_drop(j);
	pthread_mutex_unlock(&j->file_lock);
	pthread_mutex_lock(&j->lock);
	drop_oldest(j, j->count);
	pthread_mutex_unlock(&j->lock);
}

/* journal_restore (ahead: journal_restore_ahead), file_lock held. */
static int restore(journal_t *j, uint32_t serial, bool ahead, journal_restored_t *r)
{
	file_drop_count(j); /* what was counted for the file is counted again below */
	xfr_changes_t c;
	int err = jfile_read(j->path, &c, &r->cut);
	if (err == -ENOENT)
		return 0;
	if (err == 0 && c.count) {
		r->oldest = c.sets[0]->from;
		r->newest = c.sets[c.count - 1]->to;
		r->found = c.count;
	}
	/*
	 * History that does not lead to the version loaded cannot answer IXFR
	 * for it. One that leads past it keeps what leads to it: a secondary
	 * writes a change here before it publishes and saves the zone, so a
	 * crash between leaves the journal ahead of the saved zone (the
	 * newest changeset of that serial: serials wrap in a long history);
	 * journal_restore_ahead keeps the rest for the caller to apply.
	 */
	size_t lead = c.count, octets = 0;
	while (lead > 0 && c.sets[lead - 1]->to != serial)
		lead--;
	/* ahead: those past it are kept too, to be applied onto the zone saved; the first may
	 * leave it (the zone came whole, then changed) */
	bool joins = lead > 0 || (c.count && c.sets[0]->from == serial);
	size_t keep = ahead && joins ? c.count : lead;
	r->ahead = keep ? c.count - lead : 0;
	if (err == 0 && keep && keep < c.count)
		err = jfile_keep(j->path, (const changeset_t *const *)c.sets, keep);
	if (err < 0 || !keep) {
		jfile_remove(j->path, true);
		xfr_changes_clear(&c);
		return err < 0 ? err : r->found ? 1 : 0;
	}
	pthread_mutex_lock(&j->lock);
	drop_oldest(j, j->count);
	pthread_mutex_unlock(&j->lock);
	for (size_t i = 0; i < keep; i++) {
		size_t len = jfile_record_size(c.sets[i]);
		octets += len;
		list_add(j, changeset_ref(c.sets[i]), len); /* the file has them */
	}
	budget_count(j->budget, 0, octets);
	__atomic_store_n(&j->file_octets, octets, __ATOMIC_RELAXED);
	pthread_mutex_lock(&j->lock);
	settle(j, octets);
	pthread_mutex_unlock(&j->lock);
	xfr_changes_clear(&c);
	return 0;
}

/* journal_restore or journal_restore_ahead. */
static int restore_locked(journal_t *j, uint32_t serial, bool ahead, journal_restored_t *r)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_lock(&j->file_lock);
	int rc = j->on_disk ? restore(j, serial, ahead, r) : 0;
	pthread_mutex_unlock(&j->file_lock);
	return rc;
}

int journal_restore(journal_t *j, uint32_t serial, journal_restored_t *r)
{
	return restore_locked(j, serial, false, r);
}

int journal_restore_ahead(journal_t *j, uint32_t serial, journal_restored_t *r)
{
	return restore_locked(j, serial, true, r);
}

void journal_get_info(journal_t *j, journal_info_t *info)
{
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&j->lock);
	info->depth = j->count;
	info->octets = j->octets;
	info->max_octets = j->max_octets;
	info->file_octets = __atomic_load_n(&j->file_octets, __ATOMIC_RELAXED);
	if (j->count) {
		info->oldest = j->sets[0].from;
		info->newest = j->sets[j->count - 1].to;
	}
	pthread_mutex_unlock(&j->lock);
}

/* The oldest and newest changes that lead from `from` to `to`; false when none do. Lock held. */
static bool find_span(const journal_t *j, uint32_t from, uint32_t to, size_t *first, size_t *last)
{
	/*
	 * Serials may repeat in a long history (they wrap): the newest
	 * changeset leaving `from` is the one that leads to the present.
	 */
	*first = *last = j->count;
	for (size_t i = j->count; i-- > 0;) {
		if (*last == j->count && j->sets[i].to == to)
			*last = i;
		if (*last != j->count && j->sets[i].from == from) {
			*first = i;
			break;
		}
	}
	return *first < j->count && from != to;
}

/*
 * The changes from..to into out (count set, sets[i] NULL for those the
 * file holds alone: their places in spans, the file opened in *fd while
 * the places are the file's). Lock held. 0, SHOAL_ENOTFOUND, SHOAL_ENOMEM,
 * SHOAL_EIO (the file cannot be opened).
 */
static int take_changes(journal_t *j, uint32_t from, uint32_t to, xfr_changes_t *out,
			jfile_span_t **spans, int *fd)
{
	size_t first, last;
	if (!find_span(j, from, to, &first, &last))
		return SHOAL_ENOTFOUND;
	assert(first <= last && last < j->count); /* last was found first, walking back */
	size_t count = last - first + 1;
	out->sets = calloc(count, sizeof(*out->sets));
	*spans = calloc(count, sizeof(**spans));
	if (!out->sets || !*spans)
		return SHOAL_ENOMEM;
	out->count = count;
	bool read = false;
	for (size_t i = 0; i < count; i++) {
		const jentry_t *e = &j->sets[first + i];
		if (e->cs)
			out->sets[i] = changeset_ref(e->cs);
		(*spans)[i] = (jfile_span_t){ e->at.off, e->cs ? 0 : e->at.len, e->from, e->to };
		read |= !e->cs;
	}
	if (read && (*fd = open(j->path, O_RDONLY | O_CLOEXEC)) < 0)
		return SHOAL_EIO;
	return 0;
}

/* The tests' hold on file reads: at most this long (ms). */
#define READ_HOLD_MAX_MS 60000

/*
 * For the tests only: while the file SHOAL_TEST_JOURNAL_READ_HOLD names
 * exists (a minute at most), a read of the journal file waits, as one of
 * a long history on a slow disk would, and says so by making PATH.held:
 * tests/xfr/ixfr_read_wait.sh shows the worker that asked answers other
 * queries meanwhile.
 */
static void test_read_hold(void)
{
	const char *path = getenv("SHOAL_TEST_JOURNAL_READ_HOLD");
	struct timespec gap = { 0, 20 * 1000000L };
	char held[4096];
	if (path && *path && access(path, F_OK) == 0 &&
	    (size_t)snprintf(held, sizeof(held), "%s.held", path) < sizeof(held))
		close(open(held, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	for (int ms = 0; path && *path && ms < READ_HOLD_MAX_MS && access(path, F_OK) == 0;
	     ms += 20)
		nanosleep(&gap, NULL);
}

/* The changes from..to, those the file holds alone read back; retry: file_lock held. */
static int changes_of(journal_t *j, uint32_t from, uint32_t to, xfr_changes_t *out)
{
	jfile_span_t *spans = NULL;
	int fd = -1;
	pthread_mutex_lock(&j->lock);
	int err = take_changes(j, from, to, out, &spans, &fd);
	pthread_mutex_unlock(&j->lock);
	if (fd >= 0)
		test_read_hold();
	for (size_t i = 0; err == 0 && i < out->count; i++)
		if (!out->sets[i])
			err = jfile_read_span(fd, &spans[i], (changeset_t **)&out->sets[i]);
	if (fd >= 0)
		close(fd);
	free(spans);
	if (err < 0)
		xfr_changes_clear(out);
	return err;
}

/* The changes from..to as one changeset (RFC 1995 6), in place of out's. */
static int condense_changes(xfr_changes_t *out)
{
	changeset_t *one;
	int err = changeset_condense(out->sets, out->count, &one);
	xfr_changes_clear(out);
	if (err < 0)
		return err;
	out->sets = malloc(sizeof(*out->sets));
	if (!out->sets) {
		changeset_unref(one);
		return SHOAL_ENOMEM;
	}
	out->sets[0] = one;
	out->count = 1;
	return 0;
}

int journal_changes(journal_t *j, uint32_t from, uint32_t to, bool condense, xfr_changes_t *out)
{
	memset(out, 0, sizeof(*out));
	int err = changes_of(j, from, to, out);
	if (err == SHOAL_EIO) {
		/*
		 * A compaction renames a new file over the old one before it
		 * gives the changes their new places: read once more after it
		 * (the writer's lock, taken only here, where a file read failed).
		 */
		pthread_mutex_lock(&j->file_lock);
		err = changes_of(j, from, to, out);
		pthread_mutex_unlock(&j->file_lock);
	}
	if (err == 0 && condense && out->count > 1)
		err = condense_changes(out);
	return err;
}
