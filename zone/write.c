/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing a zone as a master file: a temporary file, read back and compared, then renamed. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rrtext.h"
#include "zone/internal.h"
#include "zone/write.h"

#define WRITE_BUFFER (1u << 20) /* octets of lines gathered for each write() */
_Static_assert(WRITE_BUFFER >= 2 * RRTEXT_MAX, "a line always fits after a flush");

/* A file being written: lines gathered in buf, written out when it fills. */
typedef struct out {
	int fd;
	char *buf;
	size_t len;
} out_t;

/* Write out what is gathered; 0 or -errno. */
static int out_flush(out_t *o)
{
	for (size_t done = 0; done < o->len;) {
		ssize_t n = write(o->fd, o->buf + done, o->len - done);
		if (n < 0 && errno != EINTR)
			return -errno;
		done += n > 0 ? (size_t)n : 0;
	}
	o->len = 0;
	return 0;
}

/* Room for `need` more octets in the buffer: flushed first when there is not. */
static int out_room(out_t *o, size_t need)
{
	return WRITE_BUFFER - o->len < need ? out_flush(o) : 0;
}

/* comment, each of its lines as a ';' comment line. */
static int out_comment(out_t *o, const char *comment)
{
	for (const char *p = comment; p && *p;) {
		size_t n = strcspn(p, "\n");
		size_t take = n < WRITE_BUFFER - 3 ? n : WRITE_BUFFER - 3;
		int err = out_room(o, take + 3);
		if (err < 0)
			return err;
		o->len += (size_t)sprintf(o->buf + o->len, "; %.*s\n", (int)take, p);
		p += n + (p[n] == '\n');
	}
	return 0;
}

/* The records of set, with owner, one line each. */
static int out_set(out_t *o, const uint8_t *owner, const rrset_wire_t *set)
{
	const uint8_t *end = set->data + set->data_len;
	for (const uint8_t *rec = set->data; rec + 10 <= end; rec += 10 + wire_get_u16(rec + 8)) {
		int n = out_room(o, RRTEXT_MAX);
		if (n == 0)
			n = rrtext_write(o->buf + o->len, owner, rec);
		if (n < 0)
			return n;
		o->len += (size_t)n;
		assert(o->len <= WRITE_BUFFER); /* a line is at most RRTEXT_MAX */
	}
	return 0;
}

/* The whole zone to fd: the comment, the SOA, every other record in canonical order. */
static int write_zone(int fd, const zone_t *z, const char *comment)
{
	out_t o = { .fd = fd, .buf = malloc(WRITE_BUFFER) };
	if (!o.buf)
		return SHOAL_ENOMEM;
	int err = out_comment(&o, comment);
	if (err == 0)
		err = out_set(&o, znode_name(z->apex), &znode_rrset(z->apex, DNS_TYPE_SOA)->set);
	zone_iter_t it;
	for (const znode_t *n = zone_first(z, &it); err == 0 && n; n = zone_next(&it)) {
		for (uint16_t k = 0; err == 0 && k < n->rrset_count; k++) {
			const rrset_wire_t *set = &znode_rrsets(n)[k].set;
			if (n != z->apex || set->type != DNS_TYPE_SOA)
				err = out_set(&o, znode_name(n), set);
		}
	}
	if (err == 0)
		err = out_flush(&o);
	free(o.buf);
	return err;
}

int zone_write_fd(const zone_t *z, int fd)
{
	return write_zone(fd, z, NULL);
}

/*
 * Whether a and b hold the same records: the same names, RRsets and
 * octets. When not, why says where they part first.
 */
static bool same_records(const zone_t *a, const zone_t *b, char *why, size_t cap)
{
	if (a->serial != b->serial || a->rr_count != b->rr_count ||
	    a->node_count != b->node_count) {
		snprintf(why, cap, "serial %u, %zu records, %zu names instead of %u, %zu, %zu",
			 b->serial, b->rr_count, b->node_count, a->serial, a->rr_count,
			 a->node_count);
		return false;
	}
	zone_iter_t ia, ib;
	for (const znode_t *x = zone_first(a, &ia), *y = zone_first(b, &ib); x && y;
	     x = zone_next(&ia), y = zone_next(&ib)) {
		const zrrset_t *s = znode_rrsets(x), *t = znode_rrsets(y);
		uint16_t k = 0;
		bool same = x->name_len == y->name_len &&
			    memcmp(znode_name(x), znode_name(y), x->name_len) == 0 &&
			    x->rrset_count == y->rrset_count;
		for (; same && k < x->rrset_count; k++)
			same = s[k].set.type == t[k].set.type &&
			       s[k].set.data_len == t[k].set.data_len &&
			       memcmp(s[k].set.data, t[k].set.data, s[k].set.data_len) == 0;
		if (!same) {
			char name[NAME_TEXT_MAX];
			name_to_text(znode_name(x), name, sizeof(name));
			snprintf(why, cap, "%.400s differs (%s)", name,
				 k ? "an RRset's records" : "its name or its RRsets");
			return false;
		}
	}
	return true;
}

/* The first error of a load: the one message that says why a file is not replaced. */
static void keep_first_error(void *arg, bool is_error, const char *msg)
{
	char *first = arg;
	if (is_error && !first[0])
		snprintf(first, 512, "%s", msg);
}

/*
 * Read tmp back as the zone z, as the next start reads path: 0 when it
 * gives the same records, else SHOAL_EZONE (said once through msg as
 * "path: ...") or SHOAL_ENOMEM.
 */
static int read_back(const zone_t *z, const char *tmp, const char *path,
		     const zone_limits_t *limits, zone_msg_fn msg, void *msg_arg)
{
	char first[512] = "", why[640];
	zone_t *back = NULL;
	int err = zone_load(tmp, znode_name(z->apex), limits, keep_first_error, first, &back);
	if (err == SHOAL_ENOMEM)
		return err;
	if (err < 0)
		snprintf(why, sizeof(why), "%s", first[0] ? first : shoal_strerror(err));
	else if (!same_records(z, back, why, sizeof(why)))
		err = SHOAL_EZONE;
	zone_unref(back);
	if (err < 0) {
		zone_report(msg, msg_arg, true, path, 0,
			    "not replaced: the zone written does not read back as it is: %s", why);
		return SHOAL_EZONE;
	}
	return 0;
}

int zone_make_temp(const char *path, char *tmp, size_t cap)
{
	for (int tries = 0; tries < 100; tries++) {
		if (snprintf(tmp, cap, "%s.%08x", path, (unsigned)randombytes_random()) >= (int)cap)
			return -ENAMETOOLONG;
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* Give fd the permissions of the file at path, when there is one; 0 or -errno. */
static int keep_mode(int fd, const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	return fchmod(fd, st.st_mode & 07777) == 0 ? 0 : -errno;
}

int zone_sync_folder(const char *path)
{
	char copy[4096];
	snprintf(copy, sizeof(copy), "%s", path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int err = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	return err;
}

int zone_temp_commit(int fd, const char *tmp, const char *path, int err)
{
	if (err == 0 && fsync(fd) != 0)
		err = -errno;
	if (close(fd) != 0 && err == 0)
		err = -errno;
	if (err == 0 && rename(tmp, path) != 0)
		err = -errno;
	if (err < 0) {
		unlink(tmp);
		return err;
	}
	/* renamed: the new file is in place whatever the folder's sync says */
	return zone_sync_folder(path);
}

int zone_write(const zone_t *z, const char *path, const char *comment, const zone_limits_t *limits,
	       zone_msg_fn msg, void *msg_arg)
{
	char tmp[4096];
	int fd = zone_make_temp(path, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	int err = keep_mode(fd, path);
	if (err == 0)
		err = write_zone(fd, z, comment);
	if (err == 0)
		err = read_back(z, tmp, path, limits, msg, msg_arg);
	return zone_temp_commit(fd, tmp, path, err);
}
