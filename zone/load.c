/* Reading RFC 1035 master files with ldns, record by record, into the store builder. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <ldns/ldns.h>
#include <libgen.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/error.h"
#include "zone/internal.h"

#define LOAD_INCLUDE_DEPTH 8   /* $INCLUDE nesting; deeper is most likely a loop */
#define LOAD_MAX_ERRORS 50     /* stop reading a hopeless file after this many */
#define LOAD_DEFAULT_TTL 3600  /* without $TTL, as NSD does */

typedef struct loader {
	zbuild_t *b;
	zone_msg_fn msg;
	void *msg_arg;
	ldns_buffer *rdata;
	int errors;
} loader_t;

static int load_file(loader_t *L, const char *file, const ldns_rdf *origin, int depth);

static void load_error(loader_t *L, const char *file, unsigned line, const char *text)
{
	zone_report(L->msg, L->msg_arg, true, file, line, "%s", text);
	L->errors++;
	zbuild_fail(L->b);
}

/* Convert one ldns RR to wire form and hand it to the builder. */
static int add_rr(loader_t *L, const char *file, unsigned line, const ldns_rr *rr)
{
	const ldns_rdf *owner = ldns_rr_owner(rr);
	if (!owner || ldns_rdf_get_type(owner) != LDNS_RDF_TYPE_DNAME) {
		load_error(L, file, line, "the owner is not a domain name");
		return 0;
	}
	ldns_buffer_clear(L->rdata);
	if (ldns_rr_rdata2buffer_wire(L->rdata, rr) != LDNS_STATUS_OK)
		return SHOAL_ENOMEM;
	size_t rdlen = ldns_buffer_position(L->rdata);
	if (rdlen > UINT16_MAX) {
		load_error(L, file, line, "RDATA longer than 65535 octets");
		return 0;
	}
	int err = zbuild_add(L->b, file, line, ldns_rdf_data(owner), (uint16_t)ldns_rr_get_type(rr),
			     (uint16_t)ldns_rr_get_class(rr), ldns_rr_ttl(rr),
			     ldns_buffer_begin(L->rdata), (uint16_t)rdlen);
	if (err == SHOAL_EZONE)
		L->errors++;
	return err == SHOAL_ENOMEM ? err : 0;
}

/*
 * $INCLUDE <file> [<origin>] (RFC 1035 5.1). A relative path is taken from
 * the including file's folder, as Knot does. The origin given (absolute,
 * or else the current one) holds inside the included file only.
 */
static int do_include(loader_t *L, const char *file, unsigned line, char *text,
		      const ldns_rdf *origin, int depth)
{
	char *save = NULL;
	strtok_r(text, " \t\r\n", &save); /* "$INCLUDE" */
	char *path = strtok_r(NULL, " \t\r\n", &save);
	char *org = strtok_r(NULL, " \t\r\n", &save);
	if (org && org[0] == ';')
		org = NULL;
	if (!path) {
		load_error(L, file, line, "$INCLUDE without a file name");
		return 0;
	}
	if (depth >= LOAD_INCLUDE_DEPTH) {
		load_error(L, file, line, "$INCLUDE nested too deep (a loop?)");
		return 0;
	}
	char full[4096];
	if (path[0] == '/') {
		snprintf(full, sizeof(full), "%s", path);
	} else {
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", file);
		snprintf(full, sizeof(full), "%s/%s", dirname(dir), path);
	}
	ldns_rdf *inc_origin = NULL;
	if (org) {
		/* NSD and Knot both insist on an absolute origin here */
		size_t len = strlen(org);
		if (org[len - 1] != '.' || !(inc_origin = ldns_dname_new_frm_str(org))) {
			load_error(L, file, line, "$INCLUDE origin must be an absolute domain name");
			return 0;
		}
	}
	int err = load_file(L, full, inc_origin ? inc_origin : origin, depth + 1);
	ldns_rdf_deep_free(inc_origin);
	if (err == SHOAL_EIO) {
		L->errors++;
		return 0;
	}
	return err;
}

/*
 * The whole file in memory (NUL-terminated), so the loader's look at each
 * line and the step back before handing the record to ldns cost no system
 * call: with a FILE on disk each step back re-read the buffer. NULL with
 * errno set when the file cannot be read.
 */
static char *read_whole(const char *file, size_t *size)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap + 1);
	errno = 0;
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			char *bigger = realloc(buf, 2 * cap + 1);
			if (!bigger) {
				free(buf);
				buf = NULL;
				errno = ENOMEM;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	if (buf && ferror(f)) {
		int saved = errno ? errno : EIO; /* fread set it: EISDIR for a folder */
		free(buf);
		buf = NULL;
		errno = saved;
	}
	fclose(f);
	if (buf) {
		buf[len] = '\0';
		*size = len;
	}
	return buf;
}

/* True for a line that holds only blanks and maybe a comment. */
static bool blank_line(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == ';' || *s == '\n' || *s == '\r' || *s == '\0';
}

/*
 * Read one file record by record, so every error names its line. ldns
 * skips blank lines inside its own count, so the loader consumes blank
 * lines and $INCLUDE itself and lets ldns start on a record's first line.
 */
static int load_file(loader_t *L, const char *file, const ldns_rdf *origin, int depth)
{
	size_t size = 0;
	char *text = read_whole(file, &size);
	if (!text) {
		zone_report(L->msg, L->msg_arg, true, file, 0, "cannot open: %s", strerror(errno));
		zbuild_fail(L->b);
		return SHOAL_EIO;
	}
	/* an empty file has no records; fmemopen wants at least one octet */
	FILE *f = size ? fmemopen(text, size, "r") : NULL;
	if (!f) {
		free(text);
		return size ? SHOAL_ENOMEM : 0;
	}
	/*
	 * ldns reads a character at a time with getc, which locks the FILE on
	 * every call; only this thread uses f, so take the lock off (a quarter
	 * of the load time of a signed zone went to that locking).
	 */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	int err = 0, line = 0;
	uint32_t ttl = LOAD_DEFAULT_TTL;
	ldns_rdf *orig = ldns_rdf_clone(origin);
	ldns_rdf *prev = NULL;
	char buf[4096];
	while (L->errors < LOAD_MAX_ERRORS) {
		long pos = ftell(f);
		if (!fgets(buf, sizeof(buf), f))
			break;
		bool whole = strchr(buf, '\n') != NULL || feof(f);
		if (blank_line(buf)) {
			int c = 0;
			while (!whole && (c = fgetc(f)) != EOF && c != '\n')
				;
			line++;
			continue;
		}
		if (strncasecmp(buf, "$INCLUDE", 8) == 0 && isspace((unsigned char)buf[8])) {
			line++;
			if (!whole) {
				load_error(L, file, (unsigned)line, "$INCLUDE line too long");
				break;
			}
			if ((err = do_include(L, file, (unsigned)line, buf, orig, depth)) < 0)
				break;
			continue;
		}
		if (fseek(f, pos, SEEK_SET) != 0) {
			load_error(L, file, (unsigned)line, "cannot seek in the file");
			break;
		}
		ldns_rr *rr = NULL;
		unsigned at = (unsigned)line + 1;
		ldns_status s = ldns_rr_new_frm_fp_l(&rr, f, &ttl, &orig, &prev, &line);
		/* a $ORIGIN ldns could not read leaves none: go on with the file's (the error is reported) */
		if (!orig)
			orig = ldns_rdf_clone(origin);
		if (s == LDNS_STATUS_OK && rr) {
			err = add_rr(L, file, at, rr);
			ldns_rr_free(rr);
			if (err < 0)
				break;
		} else if (s != LDNS_STATUS_SYNTAX_TTL && s != LDNS_STATUS_SYNTAX_ORIGIN &&
			   s != LDNS_STATUS_SYNTAX_EMPTY) {
			ldns_rr_free(rr);
			load_error(L, file, at, ldns_get_errorstr_by_id(s));
		}
		if (ftell(f) == pos)
			break; /* nothing consumed: do not spin */
	}
	ldns_rdf_deep_free(orig);
	ldns_rdf_deep_free(prev);
	fclose(f);
	free(text);
	return err;
}

int zone_load(const char *file, const uint8_t *origin, zone_msg_fn msg,
	      void *msg_arg, zone_t **out)
{
	char text[NAME_TEXT_MAX];
	if (name_to_text(origin, text, sizeof(text)) < 0)
		return SHOAL_EINVAL;
	loader_t L = { .msg = msg, .msg_arg = msg_arg };
	ldns_rdf *org = ldns_dname_new_frm_str(text);
	L.b = zbuild_new(file, origin, msg, msg_arg);
	L.rdata = ldns_buffer_new(1024);
	int err = SHOAL_ENOMEM;
	if (!org || !L.b || !L.rdata)
		goto done;
	err = load_file(&L, file, org, 0);
	if (err == SHOAL_EIO || err == SHOAL_ENOMEM)
		goto done;
	if (L.errors)
		zbuild_fail(L.b);
	err = zbuild_finish(L.b, out);
	L.b = NULL;
done:
	zbuild_free(L.b);
	ldns_rdf_deep_free(org);
	if (L.rdata)
		ldns_buffer_free(L.rdata);
	return err;
}
