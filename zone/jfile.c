/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The journal's file: changeset records encoded, appended and synced, read back, compacted. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "zone/internal.h"
#include "zone/jfile.h"

#define REC_MAGIC  "SJR1"
#define REC_HEAD   32 /* magic, length, from, to, hash */
#define REC_HASHED 16 /* the octets before the hash, hashed with the body */
#define REC_HASH   16
#define RR_FIXED   10 /* type, class, TTL, RDLENGTH */

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Octets of the record at rr (type, class, TTL, RDLENGTH, RDATA). */
static size_t rr_size(const uint8_t *rr)
{
	return RR_FIXED + ((size_t)rr[8] << 8 | rr[9]);
}

/* Octets one side's records take in a body; or, with dst, writes them there and returns the end. */
static size_t side_encode(const xfr_part_t *p, uint8_t *dst)
{
	size_t at = 0, run_at = 0;
	xfr_run_t one;
	while (xfr_part_next(p, &run_at, &one)) {
		const xfr_run_t *run = &one;
		size_t owner_len = name_length(run->owner), off = 0;
		for (uint16_t k = 0; k < run->set.rr_count; k++) {
			size_t n = rr_size(run->set.data + off);
			if (dst) {
				memcpy(dst + at, run->owner, owner_len);
				memcpy(dst + at + owner_len, run->set.data + off, n);
			}
			at += owner_len + n;
			off += n;
		}
	}
	return at;
}

size_t jfile_record_size(const changeset_t *cs)
{
	return REC_HEAD + 8 + side_encode(&cs->del, NULL) + side_encode(&cs->add, NULL);
}

/* The hash of a record: its first REC_HASHED octets and its body. */
static void record_hash(const uint8_t *rec, const uint8_t *body, size_t body_len,
			uint8_t out[REC_HASH])
{
	crypto_generichash_state st;
	crypto_generichash_init(&st, NULL, 0, REC_HASH);
	crypto_generichash_update(&st, rec, REC_HASHED);
	crypto_generichash_update(&st, body, body_len);
	crypto_generichash_final(&st, out, REC_HASH);
}

/* cs as one record at rec, of len octets (jfile_record_size). */
static void record_encode(const changeset_t *cs, uint8_t *rec, size_t len)
{
	uint8_t *body = rec + REC_HEAD;
	size_t body_len = len - REC_HEAD;
	memcpy(rec, REC_MAGIC, 4);
	put32(rec + 4, (uint32_t)body_len);
	put32(rec + 8, cs->from);
	put32(rec + 12, cs->to);
	put32(body, (uint32_t)cs->del.rr_count);
	put32(body + 4, (uint32_t)cs->add.rr_count);
	size_t at = 8 + side_encode(&cs->del, body + 8);
	side_encode(&cs->add, body + at);
	record_hash(rec, body, body_len, rec + REC_HASHED);
}

/* sets[0..n) as records one after the other in a new buffer of *len octets; NULL on ENOMEM. */
static uint8_t *records_encode(const changeset_t *const *sets, size_t n, size_t *len)
{
	*len = 0;
	for (size_t i = 0; i < n; i++)
		*len += jfile_record_size(sets[i]);
	uint8_t *out = malloc(*len ? *len : 1);
	for (size_t i = 0, at = 0; out && i < n; i++) {
		size_t one = jfile_record_size(sets[i]);
		record_encode(sets[i], out + at, one);
		at += one;
	}
	return out;
}

/* Write all of data[0..len) to fd; 0 or -errno. */
static int write_all(int fd, const uint8_t *data, size_t len)
{
	for (size_t done = 0; done < len;) {
		ssize_t n = write(fd, data + done, len - done);
		if (n < 0 && errno != EINTR)
			return -errno;
		done += n > 0 ? (size_t)n : 0;
	}
	return 0;
}

/* The crash tests' hook (jfile.h): write `cut` octets of the record, then end as a crash would. */
static void test_crash(int fd, const uint8_t *rec, size_t len)
{
	const char *at = getenv("SHOAL_TEST_JOURNAL_EXIT");
	if (!at || !*at)
		return;
	size_t cut = strtoul(at, NULL, 10);
	(void)write_all(fd, rec, cut < len ? cut : len);
	_exit(75);
}

int jfile_append(const char *path, const changeset_t *const *sets, size_t n, size_t max_octets,
		 size_t *size)
{
	size_t len;
	uint8_t *rec = records_encode(sets, n, &len);
	if (!rec)
		return SHOAL_ENOMEM;
	int err = 0;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		goto done;
	}
	test_crash(fd, rec, len);
	err = write_all(fd, rec, len);
	/* the records must be on disk before the version they lead to is published */
	if (err == 0 && fdatasync(fd) != 0)
		err = -errno;
	struct stat st;
	if (err == 0 && fstat(fd, &st) != 0)
		err = -errno;
	if (close(fd) != 0 && err == 0)
		err = -errno;
	if (err == 0)
		*size = (size_t)st.st_size;
	/* a new file: its name must survive a power cut as its first records do */
	if (err == 0 && *size == len)
		err = zone_sync_folder(path);
	/*
	 * Past the bound, down to three quarters of it: the next changes
	 * append without a rewrite, so a zone that changes often rewrites
	 * three octets for each one it appends, not its whole file each time.
	 */
	if (err == 0 && *size > max_octets)
		err = jfile_compact(path, max_octets / 4 * 3, size);
done:
	free(rec);
	return err;
}

/* A name at data[0..len): its length (labels and the root), or 0 when it does not fit or end. */
static size_t owner_length(const uint8_t *data, size_t len)
{
	size_t at = 0;
	while (at < len && at < NAME_MAXLEN) {
		uint8_t l = data[at];
		if (l == 0)
			return at + 1;
		if (l > 63)
			return 0;
		at += 1 + (size_t)l;
	}
	return 0;
}

/* Add the n records of one side at body[*at..len) to cs; 0 or a negative error. */
static int side_decode(changeset_t *cs, bool add, uint32_t n, const uint8_t *body, size_t len,
		       size_t *at)
{
	for (uint32_t i = 0; i < n; i++) {
		size_t owner_len = owner_length(body + *at, len - *at);
		size_t rr = *at + owner_len;
		if (owner_len == 0 || len - rr < RR_FIXED || len - rr < rr_size(body + rr))
			return SHOAL_EMALFORMED;
		const uint8_t *p = body + rr;
		int err = changeset_add(cs, add, body + *at, (uint16_t)(p[0] << 8 | p[1]),
					get32(p + 4), p + RR_FIXED, (uint16_t)(p[8] << 8 | p[9]));
		if (err < 0)
			return err;
		*at = rr + rr_size(p);
	}
	return 0;
}

/* The changeset of one record (whole, its hash checked) into *out; 0 or a negative error. */
static int record_decode(const uint8_t *rec, size_t body_len, changeset_t **out)
{
	const uint8_t *body = rec + REC_HEAD;
	if (body_len < 8)
		return SHOAL_EMALFORMED;
	changeset_t *cs = changeset_new();
	if (!cs)
		return SHOAL_ENOMEM;
	size_t at = 8;
	int err = side_decode(cs, false, get32(body), body, body_len, &at);
	if (err == 0)
		err = side_decode(cs, true, get32(body + 4), body, body_len, &at);
	if (err == 0 && at != body_len)
		err = SHOAL_EMALFORMED;
	if (err == 0)
		err = changeset_seal(cs);
	if (err == 0 && (cs->from != get32(rec + 8) || cs->to != get32(rec + 12)))
		err = SHOAL_EMALFORMED;
	if (err < 0) {
		changeset_unref(cs);
		return err == SHOAL_ENOMEM ? err : SHOAL_EMALFORMED;
	}
	*out = cs;
	return 0;
}

/*
 * The length of the record at data[0..len) when it is whole and its hash
 * matches; 0 when not.
 */
static size_t record_length(const uint8_t *data, size_t len)
{
	if (len < REC_HEAD || memcmp(data, REC_MAGIC, 4) != 0)
		return 0;
	size_t body_len = get32(data + 4);
	if (body_len > len - REC_HEAD)
		return 0;
	uint8_t hash[REC_HASH];
	record_hash(data, data + REC_HEAD, body_len, hash);
	return sodium_memcmp(hash, data + REC_HASHED, REC_HASH) == 0 ? REC_HEAD + body_len : 0;
}

int jfile_parse(const uint8_t *data, size_t len, xfr_changes_t *out, size_t *good)
{
	memset(out, 0, sizeof(*out));
	*good = 0;
	size_t cap = 0;
	while (*good < len) {
		size_t n = record_length(data + *good, len - *good);
		changeset_t *cs = NULL;
		int err = n ? record_decode(data + *good, n - REC_HEAD, &cs) : SHOAL_EMALFORMED;
		if (err == SHOAL_ENOMEM ||
		    (err == 0 &&
		     !zone_grow((void **)&out->sets, &cap, out->count + 1, sizeof(*out->sets)))) {
			changeset_unref(cs);
			xfr_changes_clear(out);
			*good = 0;
			return SHOAL_ENOMEM;
		}
		if (err < 0 || (out->count && out->sets[out->count - 1]->to != cs->from)) {
			changeset_unref(cs);
			break; /* torn, damaged, or not following: what came before stands */
		}
		out->sets[out->count++] = cs;
		*good += n;
	}
	return 0;
}

int jfile_read_span(int fd, const jfile_span_t *span, changeset_t **out)
{
	*out = NULL;
	if (span->len < REC_HEAD)
		return SHOAL_EIO;
	uint8_t *rec = malloc(span->len);
	if (!rec)
		return SHOAL_ENOMEM;
	size_t done = 0;
	while (done < span->len) {
		ssize_t n = pread(fd, rec + done, span->len - done, (off_t)(span->off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	int err = done == span->len && record_length(rec, span->len) == span->len &&
				  get32(rec + 8) == span->from && get32(rec + 12) == span->to
			  ? record_decode(rec, span->len - REC_HEAD, out)
			  : SHOAL_EIO;
	free(rec);
	return err == SHOAL_EMALFORMED ? SHOAL_EIO : err;
}

/* The whole file at path into *data (*len octets; free it); 0 or a negative error. */
static int read_whole(const char *path, uint8_t **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = 0;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		err = -errno;
		goto done;
	}
	*data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!*data) {
		err = SHOAL_ENOMEM;
		goto done;
	}
	while (*len < (size_t)st.st_size) {
		ssize_t n = read(fd, *data + *len, (size_t)st.st_size - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break; /* shorter than it was: what was read is the file */
		*len += (size_t)n;
	}
done:
	close(fd);
	if (err < 0) {
		free(*data);
		*data = NULL;
	}
	return err;
}

int jfile_read(const char *path, xfr_changes_t *out, size_t *cut)
{
	memset(out, 0, sizeof(*out));
	*cut = 0;
	uint8_t *data;
	size_t len, good;
	int err = read_whole(path, &data, &len);
	if (err == 0)
		err = jfile_parse(data, len, out, &good);
	free(data);
	if (err < 0)
		return err;
	*cut = len - good;
	/* the next record must follow the last good one, not a torn tail */
	if (*cut && truncate(path, (off_t)good) != 0) {
		xfr_changes_clear(out);
		return -errno;
	}
	return 0;
}

/* The offset in data[0..len) (whole records) from which the records fit in max (the last kept). */
static size_t newest_start(const uint8_t *data, size_t len, size_t max)
{
	size_t at = 0, last = 0;
	while (at < len) {
		size_t n = len - at < REC_HEAD ? len - at : REC_HEAD + get32(data + at + 4);
		if (n > len - at)
			break;
		if (len - at <= max)
			return at;
		last = at;
		at += n;
	}
	return last;
}

int jfile_compact(const char *path, size_t max_octets, size_t *size)
{
	uint8_t *data;
	size_t len;
	int err = read_whole(path, &data, &len);
	if (err < 0)
		return err;
	size_t from = newest_start(data, len, max_octets);
	char tmp[4096];
	int fd = from ? zone_make_temp(path, tmp, sizeof(tmp)) : 0;
	if (fd < 0)
		err = fd;
	if (from && err == 0)
		err = zone_temp_commit(fd, tmp, path, write_all(fd, data + from, len - from));
	if (err == 0)
		*size = len - from;
	free(data);
	return err;
}

int jfile_keep(const char *path, const changeset_t *const *sets, size_t n)
{
	off_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += (off_t)jfile_record_size(sets[i]);
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = ftruncate(fd, len) == 0 && fdatasync(fd) == 0 ? 0 : -errno;
	close(fd);
	return err;
}

int jfile_remove(const char *path, bool durable)
{
	if (unlink(path) != 0)
		return errno == ENOENT ? 0 : -errno;
	return durable ? zone_sync_folder(path) : 0;
}

/* The value of hex digit c, or -1. */
static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int jfile_apex(const char *file, uint8_t apex[NAME_MAXLEN])
{
	size_t len = strlen(file), suffix = sizeof(".journal") - 1, at = 0;
	if (len < suffix || strcmp(file + len - suffix, ".journal") != 0)
		return SHOAL_ENAME;
	const char *p = file, *end = file + len - suffix;
	while (p < end) {
		if (at >= NAME_MAXLEN - 1)
			return SHOAL_ENAME;
		size_t label = at++;
		apex[label] = 0;
		for (; p < end && *p != '.'; apex[label]++) {
			int c = (uint8_t)*p++;
			if (c == '%') {
				if (end - p < 2 || hex_value(p[0]) < 0 || hex_value(p[1]) < 0)
					return SHOAL_ENAME;
				c = hex_value(p[0]) << 4 | hex_value(p[1]);
				p += 2;
			}
			if (apex[label] == 63 || at >= NAME_MAXLEN - 1)
				return SHOAL_ENAME;
			apex[at++] = (uint8_t)c;
		}
		/* an empty label: two dots, or one at either end */
		if (apex[label] == 0 || (p < end && ++p == end))
			return SHOAL_ENAME;
	}
	apex[at++] = 0;
	return (int)at;
}

int jfile_path(const char *dir, const uint8_t *apex, char *dst, size_t cap)
{
	return zone_apex_path(dir, apex, ".journal", dst, cap);
}

int zone_apex_path(const char *dir, const uint8_t *apex, const char *suffix, char *dst, size_t cap)
{
	size_t at = (size_t)snprintf(dst, cap, "%s/", dir);
	for (const uint8_t *l = apex; at < cap && *l; l += 1 + *l) {
		for (uint8_t i = 1; i <= *l && at < cap; i++) {
			uint8_t c = l[i];
			bool plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
				     c == '_' || (c >= 'A' && c <= 'Z');
			at += plain ? (size_t)snprintf(dst + at, cap - at, "%c", c)
				    : (size_t)snprintf(dst + at, cap - at, "%%%02X", c);
		}
		if (at < cap && l[1 + *l])
			at += (size_t)snprintf(dst + at, cap - at, ".");
	}
	if (at < cap)
		at += (size_t)snprintf(dst + at, cap - at, "%s", suffix);
	return at < cap ? 0 : SHOAL_ESPACE;
}
