/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing a zone as a master file: lines from proto/rrtext.c, temp file + fsync + rename. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/rrtext.h"
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
		err = out_set(&o, z->apex->name, &znode_rrset(z->apex, DNS_TYPE_SOA)->set);
	for (size_t i = 0; err == 0 && i < z->node_count; i++) {
		const znode_t *n = &z->nodes[i];
		for (uint16_t k = 0; err == 0 && k < n->rrset_count; k++) {
			const rrset_wire_t *set = &znode_rrsets(n)[k].set;
			if (n != z->apex || set->type != DNS_TYPE_SOA)
				err = out_set(&o, n->name, set);
		}
	}
	if (err == 0)
		err = out_flush(&o);
	free(o.buf);
	return err;
}

/* A new file beside path, named path.XXXXXX (mkstemp); its descriptor, or -errno. */
static int make_temp(const char *path, char *tmp, size_t cap)
{
	if (snprintf(tmp, cap, "%s.XXXXXX", path) >= (int)cap)
		return -ENAMETOOLONG;
	int fd = mkstemp(tmp);
	return fd < 0 ? -errno : fd;
}

/* Give fd the permissions of the file at path, or 0644 when there is none; 0 or -errno. */
static int keep_mode(int fd, const char *path)
{
	struct stat st;
	mode_t mode = stat(path, &st) == 0 ? st.st_mode & 07777 : 0644;
	return fchmod(fd, mode) == 0 ? 0 : -errno;
}

/* Make the rename itself durable: sync the folder that holds path; 0 or -errno. */
static int sync_folder(const char *path)
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

int zone_write(const zone_t *z, const char *path, const char *comment)
{
	char tmp[4096];
	int fd = make_temp(path, tmp, sizeof(tmp));
	if (fd < 0)
		return fd;
	int err = keep_mode(fd, path);
	if (err == 0)
		err = write_zone(fd, z, comment);
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
	return sync_folder(path);
}
