/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Writing a zone as a master file: ldns formats each record, temp file + fsync + rename. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ldns/ldns.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "zone/write.h"

/* One record, owner and stored form (type, class, TTL, RDLENGTH, RDATA), as a line. */
static int write_rec(FILE *f, uint8_t *buf, const uint8_t *owner, const uint8_t *rec)
{
	size_t olen = name_length(owner), len = olen + 10 + wire_get_u16(rec + 8);
	memcpy(buf, owner, olen);
	memcpy(buf + olen, rec, len - olen);
	ldns_rr *rr = NULL;
	size_t pos = 0;
	if (ldns_wire2rr(&rr, buf, len, &pos, LDNS_SECTION_ANSWER) != LDNS_STATUS_OK) {
		errno = EINVAL;
		return SHOAL_EIO; /* the store holds only what ldns could read */
	}
	char *text = ldns_rr2str(rr);
	ldns_rr_free(rr);
	if (!text)
		return SHOAL_ENOMEM;
	/*
	 * The owner in Shoal's own escaping: ldns leaves '@' and '$' bare,
	 * and a line starting "@." or "$" reads back as the origin or a
	 * directive. ldns ends the owner with a tab (one in a name is \009).
	 */
	char owner_text[NAME_TEXT_MAX];
	const char *rest = strchr(text, '\t');
	int err = SHOAL_EIO;
	if (rest && name_to_text(owner, owner_text, sizeof(owner_text)) >= 0)
		err = fputs(owner_text, f) < 0 || fputs(rest, f) < 0 ? SHOAL_EIO : 0;
	else
		errno = EINVAL;
	free(text);
	return err;
}

/* The records of set, with owner. */
static int write_set(FILE *f, uint8_t *buf, const uint8_t *owner, const rrset_wire_t *set)
{
	const uint8_t *end = set->data + set->data_len;
	for (const uint8_t *rec = set->data; rec + 10 <= end; rec += 10 + wire_get_u16(rec + 8)) {
		int err = write_rec(f, buf, owner, rec);
		if (err < 0)
			return err;
	}
	return 0;
}

/* The whole zone: a comment, the SOA, every other record in canonical order. */
static int write_zone(FILE *f, const zone_t *z, const char *comment)
{
	for (const char *p = comment; p && *p;) {
		size_t n = strcspn(p, "\n");
		fprintf(f, "; %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
	uint8_t *buf = malloc(NAME_MAXLEN + 10 + UINT16_MAX);
	if (!buf)
		return SHOAL_ENOMEM;
	int err = write_set(f, buf, z->apex->name, &znode_rrset(z->apex, DNS_TYPE_SOA)->set);
	for (size_t i = 0; err == 0 && i < z->node_count; i++) {
		const znode_t *n = &z->nodes[i];
		for (uint16_t k = 0; err == 0 && k < n->rrset_count; k++) {
			const rrset_wire_t *set = &znode_rrsets(n)[k].set;
			if (n != z->apex || set->type != DNS_TYPE_SOA)
				err = write_set(f, buf, n->name, set);
		}
	}
	free(buf);
	return err;
}

/* Make the rename itself durable: sync the folder that holds path. */
static int sync_folder(const char *path)
{
	char copy[4096];
	snprintf(copy, sizeof(copy), "%s", path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return SHOAL_EIO;
	int rc = fsync(fd) == 0 ? 0 : SHOAL_EIO;
	close(fd);
	return rc;
}

int zone_write(const zone_t *z, const char *path, const char *comment)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return SHOAL_EIO;
	}
	int saved, fd = mkstemp(tmp);
	if (fd < 0)
		return SHOAL_EIO;
	struct stat st;
	mode_t mode = stat(path, &st) == 0 ? st.st_mode & 07777 : 0644;
	FILE *f = fdopen(fd, "w");
	int err = SHOAL_EIO;
	if (!f) {
		close(fd);
		goto done;
	}
	err = write_zone(f, z, comment);
	if (err == 0 && (fflush(f) != 0 || ferror(f) || fchmod(fd, mode) != 0 || fsync(fd) != 0))
		err = SHOAL_EIO;
	saved = errno;
	if (fclose(f) != 0 && err == 0) {
		err = SHOAL_EIO;
		saved = errno;
	}
	errno = saved;
	if (err < 0)
		goto done;
	if (rename(tmp, path) != 0) {
		err = SHOAL_EIO;
		goto done;
	}
	/* renamed: the new file is in place whatever the folder's sync says */
	return sync_folder(path);
done:
	saved = errno;
	unlink(tmp);
	errno = saved;
	return err;
}
