/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The state-dir file: zones' timers and last NOTIFYs by apex, read at start, saved atomically. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/events/state.h"

/* One zone's record: what is kept, by its apex (lowercase wire). */
typedef struct state_rec {
	state_zone_t z;
	bool keep; /* state_retain: the configuration has it */
	uint8_t len;
	uint8_t apex[];
} state_rec_t;

struct state {
	char *dir; /* NULL: nothing is kept */
	pthread_mutex_t lock;
	state_rec_t **slots; /* open addressing, a power of two, at most half full */
	size_t cap, count;
	uint8_t key[crypto_shorthash_KEYBYTES];
	bool dirty;
};

/* The slot of apex in st: its record's, or the empty one where it would go. Under lock. */
static state_rec_t **slot_of(state_t *st, const uint8_t *apex)
{
	size_t i = (size_t)name_hash(apex, st->key) & (st->cap - 1);
	while (st->slots[i] && !name_equal(st->slots[i]->apex, apex))
		i = (i + 1) & (st->cap - 1);
	return &st->slots[i];
}

/* Room for one more record (the table doubled when half full). Under lock. */
static int make_room(state_t *st)
{
	if (2 * (st->count + 1) <= st->cap)
		return 0;
	size_t cap = st->cap ? 2 * st->cap : 64;
	state_rec_t **old = st->slots;
	size_t old_cap = st->cap;
	st->slots = calloc(cap, sizeof(*st->slots));
	if (!st->slots) {
		st->slots = old;
		return SHOAL_ENOMEM;
	}
	st->cap = cap;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i])
			*slot_of(st, old[i]->apex) = old[i];
	free(old);
	return 0;
}

/* The record of apex, made (empty) when there is none; NULL when out of memory. Under lock. */
static state_rec_t *rec_get(state_t *st, const uint8_t *apex)
{
	if (make_room(st) < 0)
		return NULL;
	state_rec_t **s = slot_of(st, apex);
	if (*s)
		return *s;
	size_t len = name_length(apex);
	state_rec_t *r = calloc(1, sizeof(*r) + len);
	if (!r)
		return NULL;
	r->len = (uint8_t)len;
	memcpy(r->apex, apex, len);
	name_lower(r->apex);
	*s = r;
	st->count++;
	return r;
}

/* A number field: "-" for none (*set false), or decimal. False when it is neither. */
static bool read_field(const char *text, bool *set, int64_t *v)
{
	*set = strcmp(text, "-") != 0;
	*v = 0;
	if (!*set)
		return true;
	char *end;
	errno = 0;
	long long n = strtoll(text, &end, 10);
	*v = n;
	return !errno && end != text && !*end;
}

/* One line "SERIAL REFRESH_AT EXPIRE_AT NOTIFIED NAME" into st. False when it does not read. */
static bool read_line(state_t *st, char *line)
{
	char f[4][24];
	int name_at = 0;
	line[strcspn(line, "\n")] = '\0';
	if (sscanf(line, "%23s %23s %23s %23s %n", f[0], f[1], f[2], f[3], &name_at) != 4 ||
	    !name_at)
		return false;
	bool set[4];
	int64_t v[4];
	for (int k = 0; k < 4; k++)
		if (!read_field(f[k], &set[k], &v[k]) || v[k] < 0)
			return false;
	uint8_t apex[NAME_MAXLEN];
	/* a version served has its expiry and its timers; no version, neither expiry nor serial */
	if (name_from_text(line + name_at, NULL, apex) < 0 || v[0] > UINT32_MAX ||
	    v[3] > UINT32_MAX || set[0] != set[2] || (set[0] && !set[1]))
		return false;
	state_rec_t *r = rec_get(st, apex);
	if (!r)
		return false;
	r->z.timers = set[1];
	r->z.have = set[0];
	r->z.serial = (uint32_t)v[0];
	r->z.refresh_at = set[1] ? v[1] : 0;
	r->z.expire_at = set[2] ? v[2] : 0;
	r->z.notified_set = set[3];
	r->z.notified = (uint32_t)v[3];
	return true;
}

/* Read dir/STATE_FILE into st, if there is one. 0, or -errno with err. */
static int load(state_t *st, char *err, size_t errlen)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", st->dir, STATE_FILE);
	/* the folder is this user's alone; no link is followed out of it */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;
	FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f) {
		int e = -errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, errlen, "%s: %s", path, shoal_strerror(e));
		return e;
	}
	char line[NAME_TEXT_MAX + 128];
	size_t bad = 0, read = 0;
	bool format = false;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#')
			continue;
		if (!format) {
			format = !strncmp(line, STATE_FORMAT, strlen(STATE_FORMAT));
			if (!format)
				break;
			continue;
		}
		if (read_line(st, line))
			read++;
		else
			bad++;
	}
	fclose(f);
	if (!format)
		log_warning("%s: not a file of format \"%s\": not read (the zones start afresh)",
			    path, STATE_FORMAT);
	if (bad)
		log_warning("%s: %zu lines not read", path, bad);
	log_info("%s: the timers of %zu zones read", path, read);
	st->dirty = false;
	return 0;
}

int state_open(const char *dir, state_t **out, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	*out = NULL;
	state_t *st = calloc(1, sizeof(*st));
	if (!st || (dir && !(st->dir = strdup(dir)))) {
		free(st);
		snprintf(err, errlen, "state-dir: out of memory");
		return SHOAL_ENOMEM;
	}
	pthread_mutex_init(&st->lock, NULL);
	randombytes_buf(st->key, sizeof(st->key));
	int rc = dir ? load(st, err, errlen) : 0;
	if (rc < 0) {
		state_free(st);
		return rc;
	}
	*out = st;
	return 0;
}

const char *state_dir(const state_t *st)
{
	return st ? st->dir : NULL;
}

bool state_get(state_t *st, const uint8_t *apex, state_zone_t *out)
{
	if (!st || !st->dir)
		return false;
	pthread_mutex_lock(&st->lock);
	state_rec_t *r = st->cap ? *slot_of(st, apex) : NULL;
	if (r)
		*out = r->z;
	pthread_mutex_unlock(&st->lock);
	return r != NULL;
}

void state_set_timers(state_t *st, const uint8_t *apex, const state_zone_t *z)
{
	if (!st || !st->dir)
		return;
	pthread_mutex_lock(&st->lock);
	state_rec_t *r = rec_get(st, apex);
	if (r) {
		r->z.timers = z->timers;
		r->z.have = z->have;
		r->z.serial = z->serial;
		r->z.refresh_at = z->refresh_at;
		r->z.expire_at = z->expire_at;
		r->keep = true;
		st->dirty = true;
	}
	pthread_mutex_unlock(&st->lock);
}

void state_set_notified(state_t *st, const uint8_t *apex, uint32_t serial)
{
	if (!st || !st->dir)
		return;
	pthread_mutex_lock(&st->lock);
	state_rec_t *r = rec_get(st, apex);
	if (r && (!r->z.notified_set || r->z.notified != serial)) {
		r->z.notified_set = true;
		r->z.notified = serial;
		r->keep = true;
		st->dirty = true;
	}
	pthread_mutex_unlock(&st->lock);
}

void state_retain(state_t *st, const conf_t *cfg)
{
	if (!st || !st->dir)
		return;
	pthread_mutex_lock(&st->lock);
	for (size_t i = 0; i < st->cap; i++)
		if (st->slots[i])
			st->slots[i]->keep = false;
	for (size_t i = 0; i < cfg->zone_count && st->cap; i++) {
		uint8_t apex[NAME_MAXLEN];
		state_rec_t *r = name_from_text(conf_zone_spec(cfg, i)->name, NULL, apex) < 0
					 ? NULL
					 : *slot_of(st, apex);
		if (r)
			r->keep = true;
	}
	/* the records kept, placed anew: open addressing has no holes to leave */
	state_rec_t **old = st->slots;
	size_t old_cap = st->cap;
	st->slots = old_cap ? calloc(old_cap, sizeof(*st->slots)) : NULL;
	if (old_cap && !st->slots) {
		st->slots = old; /* out of memory: everything stays, which is harmless */
		pthread_mutex_unlock(&st->lock);
		return;
	}
	st->count = 0;
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i] && old[i]->keep) {
			*slot_of(st, old[i]->apex) = old[i];
			st->count++;
		} else if (old[i]) {
			free(old[i]);
			st->dirty = true;
		}
	}
	free(old);
	pthread_mutex_unlock(&st->lock);
}

void state_forget(state_t *st, const char *zone)
{
	uint8_t apex[NAME_MAXLEN];
	if (!st || !st->dir || name_from_text(zone, NULL, apex) < 0)
		return;
	pthread_mutex_lock(&st->lock);
	state_rec_t **s = st->cap ? slot_of(st, apex) : NULL;
	if (s && *s) {
		free(*s);
		*s = NULL;
		st->count--;
		st->dirty = true;
		/* the records after it in its run, placed anew: open addressing leaves no hole */
		size_t mask = st->cap - 1;
		for (size_t j = ((size_t)(s - st->slots) + 1) & mask; st->slots[j];
		     j = (j + 1) & mask) {
			state_rec_t *r = st->slots[j];
			st->slots[j] = NULL;
			*slot_of(st, r->apex) = r;
		}
	}
	pthread_mutex_unlock(&st->lock);
}

bool state_dirty(state_t *st)
{
	if (!st || !st->dir)
		return false;
	pthread_mutex_lock(&st->lock);
	bool dirty = st->dirty;
	pthread_mutex_unlock(&st->lock);
	return dirty;
}

/* A number field as read_field reads it. */
static void field(FILE *f, bool set, int64_t v)
{
	if (set)
		fprintf(f, "%" PRId64 " ", v);
	else
		fputs("- ", f);
}

/* The file's text into a memory stream: *text, *len (the caller frees). 0 or SHOAL_ENOMEM. Under
 * lock. */
static int text_of(state_t *st, char **text, size_t *len)
{
	FILE *f = open_memstream(text, len);
	if (!f)
		return SHOAL_ENOMEM;
	fprintf(f,
		"# shoald's zone timers and last NOTIFYs, written by shoald: see shoald.conf(5), "
		"state-dir\n%s\n",
		STATE_FORMAT);
	for (size_t i = 0; i < st->cap; i++) {
		const state_rec_t *r = st->slots[i];
		char name[NAME_TEXT_MAX];
		if (!r || name_to_text(r->apex, name, sizeof(name)) < 0)
			continue;
		const state_zone_t *z = &r->z;
		field(f, z->timers && z->have, z->serial);
		field(f, z->timers, z->refresh_at);
		field(f, z->timers && z->have, z->expire_at);
		field(f, z->notified_set, z->notified);
		fprintf(f, "%s\n", name);
	}
	return fclose(f) == 0 ? 0 : SHOAL_ENOMEM;
}

/* Write text to path through a temporary file beside it, made durable. 0 or -errno. */
static int write_atomically(const char *dir, const char *path, const char *text, size_t len)
{
	char tmp[4300];
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int err = 0;
	for (size_t done = 0; done < len && !err;) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno != EINTR)
			err = -errno;
		else if (n > 0)
			done += (size_t)n;
	}
	if (!err && fsync(fd) != 0)
		err = -errno;
	if (close(fd) != 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) != 0)
		err = -errno;
	if (err) {
		unlink(tmp);
		return err;
	}
	/* the rename itself made durable */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	err = fsync(dfd) == 0 ? 0 : -errno;
	close(dfd);
	return err;
}

int state_save(state_t *st, char *err, size_t errlen)
{
	if (!st || !st->dir)
		return 0;
	char *text = NULL;
	size_t len = 0;
	pthread_mutex_lock(&st->lock);
	int rc = st->dirty ? text_of(st, &text, &len) : 0;
	bool wrote = st->dirty && rc == 0;
	st->dirty = st->dirty && rc < 0;
	pthread_mutex_unlock(&st->lock);
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", st->dir, STATE_FILE);
	if (wrote)
		rc = write_atomically(st->dir, path, text, len);
	free(text);
	if (rc < 0) {
		/* a later save tries again */
		pthread_mutex_lock(&st->lock);
		st->dirty = true;
		pthread_mutex_unlock(&st->lock);
		snprintf(err, errlen, "%s: %s", path, shoal_strerror(rc));
	}
	return rc;
}

void state_free(state_t *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->cap; i++)
		free(st->slots[i]);
	free(st->slots);
	pthread_mutex_destroy(&st->lock);
	free(st->dir);
	free(st);
}
