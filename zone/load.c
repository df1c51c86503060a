/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Reading RFC 1035 master files into the store builder: the files, their
 * limits and $INCLUDE here, with one of two readers (zone_load_set_reader):
 * Knot's zone scanner (zone/load_zs.c) or ldns, record by record, here.
 */
#include "config.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ldns/ldns.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "zone/internal.h"

/* ldns's common.h turns bool into signed char when config.h lacks HAVE_STDBOOL_H */
_Static_assert((bool)0x100, "bool must be C's _Bool, not ldns's signed char");

#define LOAD_INCLUDE_DEPTH 8          /* $INCLUDE nesting; deeper is most likely a loop */
#define LOAD_READ_CHUNK    (4u << 20) /* octets per read(): a cancel is seen between two */

/* What stops loads in progress (zone_load_cancel; any thread, hence atomic). */
static bool load_cancelled;
static enum zone_reader load_reader = ZONE_READER_ZSCANNER;

void zone_load_cancel(bool cancel)
{
	__atomic_store_n(&load_cancelled, cancel, __ATOMIC_RELAXED);
}

void zone_load_set_reader(enum zone_reader reader)
{
	load_reader = reader;
}

bool zload_cancelled(void)
{
	return __atomic_load_n(&load_cancelled, __ATOMIC_RELAXED);
}

const bool *zload_cancel_flag(void)
{
	return &load_cancelled;
}

/* Where a file was named: the zone's own file has no includer (file NULL). */
typedef struct include_site {
	const char *file;
	unsigned line;
} include_site_t;

static int load_file(loader_t *L, const char *file, const uint8_t *origin, int depth,
		     include_site_t from);

void zload_error(loader_t *L, const char *file, unsigned line, const char *text)
{
	zone_report(L->msg, L->msg_arg, true, file, line, "%s", text);
	L->errors++;
	zbuild_fail(L->b);
}

/* Convert one ldns RR (first line `text`) to wire form and hand it to the builder. */
static int add_rr(loader_t *L, const char *file, unsigned line, const char *text, const ldns_rr *rr)
{
	const ldns_rdf *owner = ldns_rr_owner(rr);
	if (!owner || ldns_rdf_get_type(owner) != LDNS_RDF_TYPE_DNAME) {
		zload_error(L, file, line, "the owner is not a domain name");
		return 0;
	}
	ldns_buffer_clear(L->rdata);
	if (ldns_rr_rdata2buffer_wire(L->rdata, rr) != LDNS_STATUS_OK)
		return SHOAL_ENOMEM;
	size_t rdlen = ldns_buffer_position(L->rdata);
	if (rdlen > UINT16_MAX) {
		zload_error(L, file, line, "RDATA longer than 65535 octets");
		return 0;
	}
	int err = zbuild_add(L->b, file, line, text, ldns_rdf_data(owner),
			     (uint16_t)ldns_rr_get_type(rr), (uint16_t)ldns_rr_get_class(rr),
			     ldns_rr_ttl(rr), ldns_buffer_begin(L->rdata), (uint16_t)rdlen);
	if (err == SHOAL_EZONE)
		L->errors++;
	return err == SHOAL_ENOMEM ? err : 0;
}

int zload_include(loader_t *L, const char *file, unsigned line, const char *path,
		  const uint8_t *origin, int depth)
{
	if (depth >= LOAD_INCLUDE_DEPTH) {
		zload_error(L, file, line, "$INCLUDE nested too deep (a loop?)");
		return 0;
	}
	/* a few octets of $INCLUDEs nested a few deep ask for 10^5 reads: count them */
	if (__atomic_add_fetch(&L->budget->includes, 1, __ATOMIC_RELAXED) >
	    L->limits.max_includes) {
		zone_report(L->msg, L->msg_arg, true, file, line,
			    "more than %u $INCLUDE directives in the zone (max-zone-includes)",
			    (unsigned)L->limits.max_includes);
		L->errors++;
		zbuild_fail(L->b);
		return 0;
	}
	int err = load_file(L, path, origin, depth + 1, (include_site_t){ file, line });
	if (err == SHOAL_EIO) {
		L->errors++;
		return 0;
	}
	return err;
}

/*
 * $INCLUDE <file> [<origin>] (RFC 1035 5.1) read by the ldns reader. A
 * relative path is taken from the including file's folder, as Knot does.
 * The origin given (absolute, or else the current one) holds inside the
 * included file only.
 */
static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * The next word of an $INCLUDE line from *p on, or NULL at its end: a
 * quoted string or a run of octets up to a blank, ';' (a comment, RFC
 * 1035 5.1) ending the line outside quotes. With decode, its escapes are
 * replaced in place by what they stand for (\X is X, \DDD the octet DDD),
 * as the scanner reads a file name; a domain name keeps them for
 * name_from_text. The word is NUL-terminated in place.
 */
static char *include_word(char **p, bool decode)
{
	char *s = *p;
	while (blank(*s))
		s++;
	if (!*s || *s == ';')
		return NULL;
	bool quoted = *s == '"';
	s += quoted;
	char *word = s, *out = s;
	while (*s && (quoted ? *s != '"' : !blank(*s) && *s != ';')) {
		if (*s != '\\' || !s[1]) {
			*out++ = *s++;
		} else if (!decode) {
			*out++ = *s++;
			*out++ = *s++;
		} else if (isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[2]) &&
			   isdigit((unsigned char)s[3]) &&
			   (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0') <= 255) {
			*out++ = (char)((s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0'));
			s += 4;
		} else {
			*out++ = s[1];
			s += 2;
		}
	}
	/* past a closing quote or a blank; a ';' (or the NUL put over it) ends the next word */
	*p = *s && *s != ';' ? s + 1 : s;
	*out = '\0';
	return word;
}

static int do_include(loader_t *L, const char *file, unsigned line, char *text,
		      const ldns_rdf *origin, int depth)
{
	char *p = text + 8; /* past "$INCLUDE" */
	char *path = include_word(&p, true);
	char *org = path ? include_word(&p, false) : NULL;
	if (!path) {
		zload_error(L, file, line, "$INCLUDE without a file name");
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
	uint8_t inc_origin[NAME_MAXLEN];
	if (org) {
		/* NSD and Knot both insist on an absolute origin here */
		size_t len = strlen(org); /* a quoted word may be empty */
		if (len == 0 || org[len - 1] != '.' || name_from_text(org, NULL, inc_origin) < 0) {
			zload_error(L, file, line,
				    "$INCLUDE origin must be an absolute domain name");
			return 0;
		}
	}
	return zload_include(L, file, line, full, org ? inc_origin : ldns_rdf_data(origin), depth);
}

/* What a file that is not a regular one is, for the message that refuses it. */
static const char *file_kind(mode_t mode)
{
	return S_ISFIFO(mode)   ? "a FIFO"
	       : S_ISCHR(mode)  ? "a character device"
	       : S_ISBLK(mode)  ? "a block device"
	       : S_ISDIR(mode)  ? "a directory"
	       : S_ISSOCK(mode) ? "a socket"
				: "not a file";
}

/*
 * The whole file in memory (NUL-terminated), so the loader's look at each
 * line and the step back before handing the record to ldns cost no system
 * call: with a FILE on disk each step back re-read the buffer.
 *
 * Only a regular file is read, and at most `room` octets of it: a FIFO
 * would hold open() until a writer comes (it is opened without blocking,
 * so open() returns and fstat() refuses it), a device such as /dev/zero
 * never ends, and a file's size is known before reading it. The reads
 * come in chunks with a look at the cancel flag between them.
 * Returns the text, or NULL with the reason in why.
 */
static char *read_whole(const char *file, uint64_t room, size_t *size, char *why, size_t whylen)
{
	char *buf = NULL;
	bool ok = false;
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(why, whylen, "cannot open: %s", strerror(errno));
		goto done;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file (%s)", file_kind(st.st_mode));
		goto done;
	}
	if ((uint64_t)st.st_size > room) {
		snprintf(why, whylen,
			 "%llu octets, more than the %llu left for the zone's files "
			 "(max-zone-file-size)",
			 (unsigned long long)st.st_size, (unsigned long long)room);
		goto done;
	}
	/* one octet more than the size, to see a file that grows while it is read */
	size_t cap = (size_t)st.st_size + 1, len = 0;
	if (!(buf = malloc(cap + 1))) {
		snprintf(why, whylen, "cannot read: %s", strerror(ENOMEM));
		goto done;
	}
	zone_huge_pages(buf, cap + 1);
	for (;;) {
		if (zload_cancelled()) {
			snprintf(why, whylen, "loading cancelled");
			goto done;
		}
		size_t want = cap - len < LOAD_READ_CHUNK ? cap - len : LOAD_READ_CHUNK;
		ssize_t n = read(fd, buf + len, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(why, whylen, "cannot read: %s", strerror(errno));
			goto done;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > room) {
			snprintf(why, whylen,
				 "grew past the %llu octets left for the zone's files while read "
				 "(max-zone-file-size)",
				 (unsigned long long)room);
			goto done;
		}
		if (len == cap) {
			/* it grew: room for more, never past room + 1 (len <= room here) */
			size_t bigger = (uint64_t)cap * 2 > room + 1 ? (size_t)room + 1 : cap * 2;
			char *p = realloc(buf, bigger + 1);
			if (!p) {
				snprintf(why, whylen, "cannot read: %s", strerror(ENOMEM));
				goto done;
			}
			buf = p;
			cap = bigger;
		}
	}
	buf[len] = '\0';
	*size = len;
	ok = true;
done:
	if (!ok) {
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
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
 * Read text[0..size) of `file`, record by record, so every error names its
 * line (first_line: the lines before text). ldns skips blank lines inside
 * its own count, so the loader consumes blank lines and $INCLUDE itself and
 * lets ldns start on a record's first line. *orig and *ttl are the $ORIGIN
 * and $TTL in force, updated as the text sets them; origin is the file's
 * own, taken back when a $ORIGIN cannot be read.
 */
static int load_text(loader_t *L, const char *file, char *text, size_t size, int first_line,
		     ldns_rdf **origp, uint32_t *ttlp, const ldns_rdf *origin, int depth)
{
	/* an empty stretch has no records; fmemopen wants at least one octet */
	if (size == 0)
		return 0;
	FILE *f = fmemopen(text, size, "r");
	if (!f)
		return SHOAL_ENOMEM;
	/*
	 * ldns reads a character at a time with getc, which locks the FILE on
	 * every call; only this thread uses f, so take the lock off (a quarter
	 * of the load time of a signed zone went to that locking).
	 */
	__fsetlocking(f, FSETLOCKING_BYCALLER);
	int err = 0, line = first_line;
	uint32_t ttl = *ttlp;
	ldns_rdf *orig = *origp;
	ldns_rdf *prev = NULL;
	char *buf = NULL;
	size_t cap = 0;
	while (L->errors < LOAD_MAX_ERRORS) {
		if (zload_cancelled()) {
			err = SHOAL_ETIMEOUT;
			break;
		}
		long pos = ftell(f);
		ssize_t got = getline(&buf, &cap, f);
		if (got < 0)
			break;
		if (memchr(buf, '\0', (size_t)got)) {
			/* C strings end there: what follows would be read as another line */
			line++;
			zload_error(L, file, (unsigned)line, "a NUL octet in the line");
			continue;
		}
		if (blank_line(buf)) {
			line++;
			continue;
		}
		if (strncasecmp(buf, "$INCLUDE", 8) == 0 && isspace((unsigned char)buf[8])) {
			line++;
			if ((err = do_include(L, file, (unsigned)line, buf, orig, depth)) < 0)
				break;
			continue;
		}
		if (fseek(f, pos, SEEK_SET) != 0) {
			zload_error(L, file, (unsigned)line, "cannot seek in the file");
			break;
		}
		ldns_rr *rr = NULL;
		unsigned at = (unsigned)line + 1;
		uint32_t ttl_was = ttl;
		ldns_status s = ldns_rr_new_frm_fp_l(&rr, f, &ttl, &orig, &prev, &line);
		long end = ftell(f);
		const char *range = NULL;
		if ((s == LDNS_STATUS_OK && rr) || s == LDNS_STATUS_SYNTAX_TTL)
			range = zload_range_error(text + pos, end > pos ? (size_t)(end - pos) : 0,
						  s == LDNS_STATUS_SYNTAX_TTL,
						  rr ? (uint16_t)ldns_rr_get_type(rr) : 0);
		if (range) {
			/* refused as the scanner does, rather than read wrapped */
			ldns_rr_free(rr);
			rr = NULL;
			ttl = ttl_was;
			zload_error(L, file, at, range);
			s = LDNS_STATUS_SYNTAX_EMPTY;
		}
		/* a $ORIGIN ldns could not read leaves none: go on with the file's (the error is
		 * reported) */
		if (!orig)
			orig = ldns_rdf_clone(origin);
		if (s == LDNS_STATUS_OK && rr) {
			err = add_rr(L, file, at, buf, rr);
			ldns_rr_free(rr);
			if (err < 0)
				break;
		} else if (s != LDNS_STATUS_SYNTAX_TTL && s != LDNS_STATUS_SYNTAX_ORIGIN &&
			   s != LDNS_STATUS_SYNTAX_EMPTY) {
			ldns_rr_free(rr);
			zload_error(L, file, at, ldns_get_errorstr_by_id(s));
		}
		if (ftell(f) == pos)
			break; /* nothing consumed: do not spin */
	}
	free(buf);
	ldns_rdf_deep_free(prev);
	fclose(f);
	*origp = orig;
	*ttlp = ttl;
	return err;
}

/*
 * Big files are read by several threads, with either reader: reading and
 * adding the records is the biggest part of the load (most of it with
 * ldns' tokenizer, half of it with the scanner). The text after the last
 * directive ($ORIGIN, $TTL, $INCLUDE) is cut into stretches at lines that
 * start a record with its own owner name outside parentheses, so each
 * stretch reads alone with the origin and default TTL the directives
 * left; each thread fills its own builder and keeps its messages, and
 * both are taken over in file order, so the zone and the messages are
 * those of a reading in one go.
 */
#define LOAD_SPLIT_MIN (4u << 20) /* octets after the directives worth splitting */

/*
 * Messages of one stretch, kept until they can be passed on in order: no
 * more of each kind than the whole load shows, the rest only counted.
 */
typedef struct msg_list {
	char **text;
	bool *is_error;
	size_t count, cap;
	unsigned kept[2];   /* by is_error */
	unsigned unkept[2]; /* beyond the bound */
	bool lost;          /* out of memory: some were dropped */
} msg_list_t;

static void keep_msg(void *arg, bool is_error, const char *msg)
{
	msg_list_t *m = arg;
	if (m->kept[is_error] >= LOAD_MAX_ERRORS) {
		m->unkept[is_error]++;
		return;
	}
	if (m->count == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		char **t = realloc(m->text, cap * sizeof(*t));
		if (t)
			m->text = t;
		bool *e = t ? realloc(m->is_error, cap * sizeof(*e)) : NULL;
		if (e)
			m->is_error = e;
		if (!t || !e) {
			m->lost = true;
			return;
		}
		m->cap = cap;
	}
	if (!(m->text[m->count] = strdup(msg))) {
		m->lost = true;
		return;
	}
	m->is_error[m->count++] = is_error;
	m->kept[is_error]++;
}

/* One stretch and the thread reading it. */
typedef struct stretch {
	loader_t L;
	msg_list_t msgs;
	const char *file;
	char *text;
	size_t size;
	int first_line;
	ldns_rdf *orig; /* the ldns reader's */
	uint32_t ttl;
	const ldns_rdf *origin;
	uint8_t zorigin[NAME_MAXLEN]; /* the scanner's */
	int err;
	unsigned index; /* its place in the file: helper thread `index` reads it */
	pthread_t thread;
	bool started;
} stretch_t;

static void *read_stretch(void *arg)
{
	stretch_t *st = arg;
	if (load_reader == ZONE_READER_ZSCANNER)
		st->err = zload_zs(&st->L, st->file, st->text, st->size, (unsigned)st->first_line,
				   st->zorigin, &st->ttl, 0);
	else
		st->err = load_text(&st->L, st->file, st->text, st->size, st->first_line, &st->orig,
				    &st->ttl, st->origin, 0);
	return NULL;
}

/* A stretch on a helper thread of its own. */
static void *stretch_thread(void *arg)
{
	zone_thread_name(((stretch_t *)arg)->index);
	return read_stretch(arg);
}

static int load_threads_set; /* zone_load_set_threads; 0: the CPUs online */
static size_t load_split_min = LOAD_SPLIT_MIN;

void zone_load_set_threads(int n, size_t split_min)
{
	load_threads_set = n;
	load_split_min = split_min ? split_min : LOAD_SPLIT_MIN;
}

/* Where a scan of master file text is: inside parentheses, a quote, a comment. */
typedef struct scan {
	int depth;
	bool quote, comment, line_start;
	bool odd; /* a quote past a line end, a ')' without '(': do not cut */
	size_t lines;
} scan_t;

/*
 * Advance over text[*i] (over both octets of an escape, moving *i on); true
 * when it starts a line outside parentheses and quotes.
 */
static bool scan_step(scan_t *sc, const char *text, size_t size, size_t *i)
{
	if (!sc->comment && text[*i] == '\\' && *i + 1 < size) {
		sc->line_start = false;
		++*i; /* an escaped octet: no quote, parenthesis or comment */
		sc->lines += text[*i] == '\n'; /* but an escaped line end is a line */
		return false;
	}
	char c = text[*i];
	bool at_start = sc->line_start && sc->depth == 0 && !sc->quote;
	sc->line_start = false;
	if (c == '\n') {
		/*
		 * A quote that runs past the end of its line (an unterminated one,
		 * most likely) is read by ldns in ways a cut could change: such a
		 * file is read in one go.
		 */
		sc->odd |= sc->quote;
		sc->lines++;
		sc->comment = false;
		sc->line_start = true;
	} else if (sc->comment) {
		/* nothing counts inside a comment */
	} else if (sc->quote) {
		if (c == '"')
			sc->quote = false;
	} else if (c == '"') {
		sc->quote = true;
	} else if (c == ';') {
		sc->comment = true;
	} else if (c == '(') {
		sc->depth++;
	} else if (c == ')') {
		/* ldns' line count goes astray after a stray ')': keep its count */
		sc->odd |= sc->depth == 0;
		sc->depth -= sc->depth > 0;
	}
	return at_start;
}

/*
 * The first octet from text[i] on that scan_step must see: it passes over
 * the others without a change of state (inside a comment all but the line
 * end; elsewhere all but escapes, quotes, parentheses, ';' and line ends,
 * once past a line's first octet). A quarter of a big load went to
 * stepping over every octet.
 */
static size_t skip_plain(const scan_t *sc, const char *text, size_t size, size_t i)
{
	static const bool special[256] = {
		['\\'] = true, ['"'] = true, [';'] = true, ['('] = true, [')'] = true, ['\n'] = true
	};
	if (sc->line_start || i >= size)
		return i;
	if (sc->comment) {
		const char *nl = memchr(text + i, '\n', size - i);
		return nl ? (size_t)(nl - text) : size;
	}
	while (i < size && !special[(unsigned char)text[i]])
		i++;
	return i;
}

/*
 * The line (from 1) of a quoted string still open at the end of text, or 0.
 * ldns reads such a string on to the end of the file and takes every line
 * after it as text, so the records there vanish without a word; NSD calls
 * it "EOF inside quoted string". The reader's own check, kept apart so
 * another reader can keep it or drop it.
 */
static unsigned unclosed_quote_line(const char *text, size_t size)
{
	scan_t sc = { .line_start = true };
	size_t opened = 0;
	for (size_t i = 0; (i = skip_plain(&sc, text, size, i)) < size; i++) {
		bool was_open = sc.quote;
		scan_step(&sc, text, size, &i);
		if (sc.quote && !was_open)
			opened = sc.lines + 1;
	}
	return sc.quote ? (unsigned)opened : 0;
}

/* A record line with its own owner: not blank, a comment, a directive or a continuation. */
static bool owner_line(char c)
{
	return c != ' ' && c != '\t' && c != ';' && c != '$' && c != '\n' && c != '\r' &&
	       c != '(' && c != '\0';
}

/*
 * Plan the stretches: cut[0] is where the directives end (the line after
 * the last one starting with '$'), cut[1..n-1] the record lines nearest the
 * equal shares after it, and lines[k] the lines before cut[k]. Returns n
 * (1: read in one go, for a small or unbalanced text or one CPU).
 */
static int plan_stretches(const char *text, size_t size, int threads, size_t cut[], int lines[])
{
	scan_t sc = { .line_start = true };
	size_t dir_end = 0;
	int dir_line = 0;
	assert(threads <= LOAD_THREADS_MAX); /* cut and lines hold LOAD_THREADS_MAX + 1 */
	if (threads < 2 || size < load_split_min)
		return 1;
	for (size_t i = 0; (i = skip_plain(&sc, text, size, i)) < size; i++) {
		bool start = scan_step(&sc, text, size, &i);
		if (start && text[i] == '$') {
			size_t eol = i;
			while (eol < size && text[eol] != '\n')
				eol++;
			dir_end = eol < size ? eol + 1 : size;
			dir_line = (int)sc.lines + 1;
		}
	}
	cut[0] = dir_end;
	lines[0] = dir_line;
	if (threads < 2 || size - dir_end < load_split_min || sc.odd || sc.quote || sc.depth)
		return 1;
	int n = 1;
	size_t share = (size - dir_end) / (size_t)threads;
	sc = (scan_t){ .line_start = true, .lines = (size_t)dir_line };
	for (size_t i = dir_end; (i = skip_plain(&sc, text, size, i)) < size && n < threads; i++) {
		bool start = scan_step(&sc, text, size, &i);
		if (start && i >= dir_end + (size_t)n * share && owner_line(text[i])) {
			cut[n] = i;
			lines[n] = (int)sc.lines;
			n++;
		}
	}
	if (sc.quote || sc.depth)
		n = 1; /* unbalanced text: let the reader report it, reading in one go */
	return n;
}

int zload_threads(void)
{
	/* read once: sysconf reads a file each time, three times per zone of a million */
	static long online;
	long cpus = __atomic_load_n(&online, __ATOMIC_RELAXED);
	if (!cpus) {
		cpus = sysconf(_SC_NPROCESSORS_ONLN);
		__atomic_store_n(&online, cpus, __ATOMIC_RELAXED);
	}
	long n = load_threads_set ? load_threads_set : cpus;
	return n < 1 ? 1 : n > LOAD_THREADS_MAX ? LOAD_THREADS_MAX : (int)n;
}

/* Pass on a stretch's messages and take over its records. */
static int take_stretch(loader_t *L, stretch_t *st)
{
	for (size_t i = 0; i < st->msgs.count; i++) {
		if (L->msg)
			L->msg(L->msg_arg, st->msgs.is_error[i], st->msgs.text[i]);
		free(st->msgs.text[i]);
	}
	free(st->msgs.text);
	free(st->msgs.is_error);
	for (int e = 0; e < 2; e++)
		if (L->msgs)
			zone_msgs_skip(L->msgs, e, st->msgs.unkept[e]);
	if (st->msgs.lost)
		zone_report(L->msg, L->msg_arg, false, st->file, 0,
			    "out of memory: some messages about this file were lost");
	L->errors += st->L.errors;
	ldns_rdf_deep_free(st->orig);
	if (st->L.rdata)
		ldns_buffer_free(st->L.rdata);
	int err = st->err;
	if (st->L.b) {
		int m = zbuild_merge(L->b, st->L.b);
		err = err < 0 ? err : m;
	}
	return err;
}

/*
 * Read the stretches cut[1..n] on threads, each with the state after
 * cut[0]: the origin in force (orig for ldns, zorig in wire form for the
 * scanner) and the default TTL.
 */
static int load_parallel(loader_t *L, const char *file, char **textp, const size_t cut[],
			 const int lines[], int n, const ldns_rdf *orig, uint32_t ttl,
			 const ldns_rdf *origin, const uint8_t *zorig)
{
	char *text = *textp;
	bool ldns = load_reader == ZONE_READER_LDNS;
	stretch_t st[LOAD_THREADS_MAX];
	int err = 0;
	assert(n > 1 && n <= LOAD_THREADS_MAX); /* plan_stretches' count */
	for (int k = 0; k < n; k++) {
		assert(cut[k] <= cut[k + 1]); /* cut in order, cut[n] the end */
		st[k] = (stretch_t){ .file = file,
				     .text = text + cut[k],
				     .size = cut[k + 1] - cut[k],
				     .first_line = lines[k],
				     .orig = ldns ? ldns_rdf_clone(orig) : NULL,
				     .ttl = ttl,
				     .origin = origin,
				     .index = (unsigned)k };
		st[k].L = (loader_t){ .msg = keep_msg,
				      .msg_arg = &st[k].msgs,
				      .b = zbuild_new(file, zbuild_origin(L->b), keep_msg,
						      &st[k].msgs),
				      .rdata = ldns ? ldns_buffer_new(1024) : NULL,
				      .limits = L->limits,
				      .budget = L->budget };
		if (!ldns)
			memcpy(st[k].zorigin, zorig, name_length(zorig));
		if ((ldns && (!st[k].orig || !st[k].L.rdata)) || !st[k].L.b)
			st[k].err = SHOAL_ENOMEM;
		else
			st[k].started = zone_thread_start(&st[k].thread, stretch_thread, &st[k]);
		if (!st[k].err && !st[k].started)
			read_stretch(&st[k]); /* no thread to be had: read it here */
	}
	for (int k = 0; k < n; k++)
		if (st[k].started)
			pthread_join(st[k].thread, NULL);
	/* read: the text goes before the stretches' records are taken over */
	free(text);
	*textp = NULL;
	for (int k = 0; k < n; k++) {
		int e = take_stretch(L, &st[k]);
		if (e < 0 && err == 0)
			err = e;
	}
	return err;
}

/*
 * Read `file` (named by $INCLUDE at `from`, or the zone's own file) within
 * what is left of the zone's octets. A file that cannot be read is
 * reported at the $INCLUDE's line: SHOAL_EIO.
 */
static int load_file(loader_t *L, const char *file, const uint8_t *origin, int depth,
		     include_site_t from)
{
	uint64_t used = __atomic_load_n(&L->budget->octets, __ATOMIC_RELAXED);
	uint64_t room = used < L->limits.max_octets ? L->limits.max_octets - used : 0;
	size_t size = 0;
	char why[256];
	char *text = read_whole(file, room, &size, why, sizeof(why));
	if (!text && zload_cancelled())
		return SHOAL_ETIMEOUT; /* zone_load says so once */
	if (!text) {
		if (from.file)
			zone_report(L->msg, L->msg_arg, true, from.file, from.line,
				    "$INCLUDE %s: %s", file, why);
		else
			zone_report(L->msg, L->msg_arg, true, file, 0, "%s", why);
		zbuild_fail(L->b);
		return SHOAL_EIO;
	}
	__atomic_add_fetch(&L->budget->octets, (uint64_t)size, __ATOMIC_RELAXED);
	unsigned open_line = unclosed_quote_line(text, size);
	if (open_line) {
		zload_error(L, file, open_line,
			    "a quoted string opened here is not closed before the end of the file");
		free(text);
		return SHOAL_EZONE;
	}
	int err = SHOAL_ENOMEM;
	ldns_rdf *orig = NULL, *org = NULL;
	uint32_t ttl = LOAD_DEFAULT_TTL;
	size_t cut[LOAD_THREADS_MAX + 1];
	int lines[LOAD_THREADS_MAX + 1];
	int n = depth == 0 ? plan_stretches(text, size, zload_threads(), cut, lines) : 1;
	if (load_reader == ZONE_READER_ZSCANNER) {
		uint8_t zorig[NAME_MAXLEN];
		memcpy(zorig, origin, name_length(origin));
		err = zload_zs(L, file, text, n == 1 ? size : cut[0], 0, zorig, &ttl, depth);
		if (n > 1 && err == 0 && L->errors < LOAD_MAX_ERRORS) {
			cut[n] = size;
			err = load_parallel(L, file, &text, cut, lines, n, NULL, ttl, NULL, zorig);
		}
		goto done;
	}
	org = ldns_dname_new_frm_data((uint16_t)name_length(origin), origin);
	if (!org || !(orig = ldns_rdf_clone(org)))
		goto done;
	if (!L->rdata && !(L->rdata = ldns_buffer_new(1024)))
		goto done;
	if (n == 1) {
		err = load_text(L, file, text, size, 0, &orig, &ttl, org, depth);
		goto done;
	}
	/* the directives first, here; then the records after them on n threads */
	err = load_text(L, file, text, cut[0], 0, &orig, &ttl, org, depth);
	if (err == 0 && L->errors < LOAD_MAX_ERRORS) {
		cut[n] = size;
		err = load_parallel(L, file, &text, cut, lines, n, orig, ttl, org, NULL);
	}
done:
	ldns_rdf_deep_free(orig);
	ldns_rdf_deep_free(org);
	free(text);
	return err;
}

/*
 * Read zone file `file` of origin into a builder, then hand it to
 * finish(b, arg), which frees it: zbuild_finish for a whole zone, or the
 * diff of a reload. Messages bounded as one load's.
 */
static int load_with(const char *file, const uint8_t *origin, const zone_limits_t *limits,
		     zone_msg_fn msg, void *msg_arg, int (*finish)(zbuild_t *b, void *arg),
		     void *arg)
{
	char text[NAME_TEXT_MAX];
	if (name_to_text(origin, text, sizeof(text)) < 0)
		return SHOAL_EINVAL;
	load_budget_t budget = { 0 };
	zone_msgs_t msgs;
	zone_msgs_init(&msgs, msg, msg_arg);
	loader_t L = { .msg = zone_msgs_pass,
		       .msg_arg = &msgs,
		       .msgs = &msgs,
		       .limits = limits ? *limits : (zone_limits_t)ZONE_LIMITS_DEFAULT,
		       .budget = &budget };
	L.b = zbuild_new(file, origin, zone_msgs_pass, &msgs);
	int err = SHOAL_ENOMEM;
	if (!L.b)
		goto done;
	zbuild_set_limits(L.b, &L.limits);
	zbuild_watch(L.b, zload_cancel_flag());
	err = load_file(&L, file, origin, 0, (include_site_t){ NULL, 0 });
	if (err == SHOAL_ETIMEOUT)
		zone_report(msg, msg_arg, true, file, 0, "loading cancelled");
	if (err == SHOAL_EIO || err == SHOAL_ENOMEM || err == SHOAL_ETIMEOUT)
		goto done;
	if (L.errors)
		zbuild_fail(L.b);
	err = finish(L.b, arg);
	L.b = NULL;
	if (err == SHOAL_ETIMEOUT)
		zone_report(msg, msg_arg, true, file, 0, "loading cancelled");
done:
	zone_msgs_end(&msgs, file);
	zbuild_free(L.b);
	if (L.rdata)
		ldns_buffer_free(L.rdata);
	return err;
}

static int finish_whole(zbuild_t *b, void *arg)
{
	return zbuild_finish(b, arg);
}

int zone_load(const char *file, const uint8_t *origin, const zone_limits_t *limits, zone_msg_fn msg,
	      void *msg_arg, zone_t **out)
{
	return load_with(file, origin, limits, msg, msg_arg, finish_whole, out);
}

/* What a reload's read diffs against, and into. */
typedef struct diff_job {
	const zone_t *served;
	size_t max_octets;
	changeset_t **out;
} diff_job_t;

static int finish_diff(zbuild_t *b, void *arg)
{
	const diff_job_t *job = arg;
	return zbuild_diff(b, job->served, job->max_octets, job->out);
}

int zone_load_changes(const char *file, const zone_t *served, const zone_limits_t *limits,
		      zone_msg_fn msg, void *msg_arg, size_t max_octets, changeset_t **out)
{
	diff_job_t job = { served, max_octets, out };
	return load_with(file, znode_name(served->apex), limits, msg, msg_arg, finish_diff, &job);
}
