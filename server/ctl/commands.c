/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The control socket's commands: the table shoalctl's words are looked up in, and each command. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/common/log.h"
#include "server/common/sbuf.h"
#include "server/common/timestamp.h"
#include "server/ctl/control.h"
#include "server/ctl/internal.h"
#include "zone/journal.h"
#include "zone/write.h"
#include "zone/zone.h"

static void cmd_status(control_client_t *c, const char *arg)
{
	const control_env_t *env = control_client_env(c);
	char body[512];
	snprintf(body, sizeof(body),
		 "version %s\npid %ld\nthreads %zu\nsocket-mode %s\nuptime %ld\nzones %zu\n"
		 "reloading %s\n",
		 PACKAGE_VERSION, (long)getpid(), env->workers->count,
		 socket_mode_names[socket_set_mode(env->workers->sockets)],
		 (long)(time(NULL) - env->started_at), env->cfg->zone_count,
		 env->reload->abandoned ? "abandoned"
		 : env->reload->running ? "yes"
					: "no");
	control_reply(c, true, body);
}

static void cmd_stats(control_client_t *c, const char *arg)
{
	const control_env_t *env = control_client_env(c);
	enum stats_format f = STATS_FORMAT_TEXT;
	if (arg) {
		size_t i = 0;
		while (stats_format_names[i] && strcmp(stats_format_names[i], arg))
			i++;
		if (!stats_format_names[i]) {
			control_reply(c, false, "stats: the format is text, json or prometheus\n");
			return;
		}
		f = (enum stats_format)i;
	}
	/* sized for the threads and zones: a fixed size failed past about 100 threads */
	char *body = NULL;
	size_t len;
	if (workers_stats_render(env->workers, env->zones, env->counters, sched_secondaries,
				 &env->sched, f, &body, &len) < 0) {
		control_reply(c, false, "out of memory\n");
		return;
	}
	control_reply(c, true, body);
	free(body);
}

/* Zones written per read section: a million zones never hold a grace period up for long. */
#define ZONE_STATUS_CHUNK 1024

/* The most zones one zone-status names (the control's line holds fewer anyway). */
#define ZONE_STATUS_NAMES 256

/* What zone-status was asked: every zone, a page of the set's order, or zones by name. */
typedef struct zone_status_ask {
	bool json;                           /* --json: one JSON object */
	size_t from, count;                  /* the page: count SIZE_MAX for every zone */
	size_t names;                        /* zones named, or 0 */
	const char *name[ZONE_STATUS_NAMES]; /* into the argument's copy */
} zone_status_ask_t;

/* A time of zone-status: RFC 3339 text, or "-" for none. */
static void format_time(time_t t, char *buf, size_t cap)
{
	if (!t || !timestamp_text(t, -1, buf, cap))
		snprintf(buf, cap, "-");
}

/* A time in zone-status --json: seconds since the epoch, or null for none. */
static void json_time(sbuf_t *b, const char *key, time_t t)
{
	if (t)
		sbuf_put(b, ",\"%s\":%lld", key, (long long)t);
	else
		sbuf_put(b, ",\"%s\":null", key);
}

/* ,"key":"text" (escaped), or nothing when text is "" and `always` is false. */
static void json_text(sbuf_t *b, const char *key, const char *text, bool always)
{
	if (!always && !text[0])
		return;
	sbuf_put(b, ",\"%s\":\"", key);
	sbuf_put_escaped(b, text, true);
	sbuf_put(b, "\"");
}

/* A secondary's transfer state: text words, or JSON members (times as numbers). */
static void zone_status_secondary(sbuf_t *b, const sched_state_t *st, bool json)
{
	if (json) {
		json_text(b, "source", st->source, true);
		json_time(b, "last_refresh", st->last_refresh);
		json_time(b, "last_failure", st->last_failure);
		json_time(b, "next_refresh", st->next_refresh);
		json_time(b, "expires", st->expires);
		json_text(b, "last_error", st->last_error, false);
		json_text(b, "save_error", st->save_error, false);
		return;
	}
	char last[TIMESTAMP_TEXT_MAX], next[TIMESTAMP_TEXT_MAX], expires[TIMESTAMP_TEXT_MAX];
	format_time(st->last_refresh, last, sizeof(last));
	format_time(st->next_refresh, next, sizeof(next));
	format_time(st->expires, expires, sizeof(expires));
	sbuf_put(b, " source %s last-refresh %s next-refresh %s expires %s%s%s%s%s", st->source,
		 last, next, expires, st->last_error[0] ? " last-error " : "", st->last_error,
		 st->save_error[0] ? " save-error " : "", st->save_error);
}

/* The IXFR history of zone z: how far back a secondary can be brought by changes. */
static void zone_status_journal(sbuf_t *b, const zonedb_t *db, const zone_t *z, bool json)
{
	journal_t *j = z ? zonedb_journal(db, znode_name(z->apex)) : NULL;
	journal_info_t ji = { 0 };
	if (j)
		journal_get_info(j, &ji);
	if (json)
		sbuf_put(b, ",\"journal_changes\":%zu,\"journal_bytes\":%zu", ji.depth, ji.octets);
	else if (ji.depth)
		sbuf_put(b, " journal %zu changes %zu octets from %u", ji.depth, ji.octets,
			 (unsigned)ji.oldest);
	else if (z)
		sbuf_put(b, " journal 0 changes"); /* none kept yet */
	if (json && ji.depth)
		sbuf_put(b, ",\"journal_oldest\":%u", (unsigned)ji.oldest);
	/* what a restart would read back */
	if (json)
		sbuf_put(b, ",\"journal_disk_bytes\":%zu", ji.file_octets);
	else if (ji.file_octets)
		sbuf_put(b, " on-disk %zu", ji.file_octets);
}

/* The catalog zone (RFC 9432) a member is listed in, and its group; nothing for another zone. */
static void zone_status_catalog(sbuf_t *b, const conf_t *cfg, const char *name, bool json)
{
	long i = conf_zone_index(cfg, name);
	const conf_member_t *m = i < 0 ? NULL : conf_zone_xfr(cfg, i)->member;
	if (!m)
		return;
	if (json) {
		json_text(b, "catalog", m->catalog, true);
		json_text(b, "catalog_group", m->group ? m->group : "", false);
	} else {
		sbuf_put(b, " catalog %s%s%s", m->catalog, m->group ? " group " : "",
			 m->group ? m->group : "");
	}
}

/*
 * Zone i of db as zone-status shows it: one line, or one JSON object
 * (`sep` before it). In a read section of db.
 */
static void zone_status_zone(const control_env_t *env, const zonedb_t *db, size_t i, sbuf_t *b,
			     bool json, const char *sep)
{
	zone_info_t info;
	zonedb_zone_info(db, i, &info);
	if (json) {
		sbuf_put(b, "%s{\"name\":\"", sep);
		sbuf_put_escaped(b, info.name, true);
		sbuf_put(b, "\",\"serial\":%u,\"records\":%zu", (unsigned)info.serial,
			 info.rr_count);
		json_time(b, "loaded", info.loaded ? info.loaded_at : 0);
		if (info.file && info.file[0])
			json_text(b, "file", info.file, true);
	} else {
		char when[TIMESTAMP_TEXT_MAX];
		timestamp_text(info.loaded_at, -1, when, sizeof(when));
		sbuf_put(b, "%s serial %u rrs %zu loaded %s file %s", info.name,
			 (unsigned)info.serial, info.rr_count, info.loaded ? when : "no",
			 info.file && info.file[0] ? info.file : "-");
	}
	zone_status_catalog(b, env->cfg, info.name, json);
	char catalog[NAME_TEXT_MAX];
	if (env->catalogs &&
	    catalogs_member_of(env->catalogs, info.name, catalog, sizeof(catalog))) {
		/* a member of a consumer catalog (RFC 9432): where it came from */
		if (json)
			json_text(b, "catalog", catalog, true);
		else
			sbuf_put(b, " catalog %s", catalog);
	}
	zone_status_journal(b, db, zonedb_zone(db, i), json);
	sched_state_t st;
	uint8_t apex[NAME_MAXLEN];
	if (name_from_text(info.name, NULL, apex) >= 0 && sched_state(env->sched, apex, &st))
		zone_status_secondary(b, &st, json);
	if (json)
		json_text(b, "error", info.last_error, false);
	else
		sbuf_put(b, "%s%s\n", info.last_error[0] ? " error " : "", info.last_error);
	if (json)
		sbuf_put(b, "}");
}

/*
 * Read zone-status's argument (copied into buf, which `ask` then points
 * into): "--json" anywhere; nothing else (every zone), "FROM COUNT" (a
 * page), or zone names. False for a page of no zones or too many names.
 */
static bool zone_status_arg(char *buf, zone_status_ask_t *ask)
{
	*ask = (zone_status_ask_t){ .count = SIZE_MAX };
	const char *word[ZONE_STATUS_NAMES + 1];
	size_t n = 0;
	for (char *save = NULL, *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (!strcmp(w, "--json"))
			ask->json = true;
		else if (n == ZONE_STATUS_NAMES)
			return false;
		else
			word[n++] = w;
	}
	char *end1 = NULL, *end2 = NULL;
	unsigned long long f = n == 2 ? strtoull(word[0], &end1, 10) : 0;
	unsigned long long c = n == 2 ? strtoull(word[1], &end2, 10) : 0;
	if (n == 2 && end1 != word[0] && !*end1 && end2 != word[1] && !*end2) {
		ask->from = (size_t)f;
		ask->count = (size_t)c;
		return c > 0;
	}
	memcpy(ask->name, word, n * sizeof(word[0]));
	ask->names = n;
	return true;
}

/*
 * The zones from..from+count of the set served, ZONE_STATUS_CHUNK per
 * read section (between two, a reload may publish: each zone is shown as
 * the set served it when it was written); then, when a page ends before
 * the set, where the next starts: a line "next N", or "next" in JSON.
 */
static void zone_status_range(const control_env_t *env, const zone_status_ask_t *ask, sbuf_t *b)
{
	size_t i = ask->from, end = ask->count == SIZE_MAX ? SIZE_MAX : ask->from + ask->count;
	bool json = ask->json, more = true;
	while (more && !b->failed) {
		zonedb_read_lock();
		const zonedb_t *db = zonedb_current(env->zones);
		size_t n = db ? zonedb_zone_count(db) : 0;
		size_t stop = i + ZONE_STATUS_CHUNK < end ? i + ZONE_STATUS_CHUNK : end;
		for (; i < n && i < stop; i++)
			zone_status_zone(env, db, i, b, json, i > ask->from ? "," : "");
		more = i < n && i < end;
		if (!more && i < n && ask->count != SIZE_MAX)
			sbuf_put(b, json ? "],\"next\":%zu" : "next %zu\n", i);
		else if (!more && json)
			sbuf_put(b, "]");
		zonedb_read_unlock(env->zones);
	}
}

/* name, a zone's name as typed (final dot or not), to its apex in lowercase wire form. */
static bool apex_from_arg(const char *name, uint8_t *apex)
{
	char text[NAME_TEXT_MAX + 2];
	size_t n = strlen(name);
	if (n > NAME_TEXT_MAX)
		return false;
	snprintf(text, sizeof(text), "%s%s", name, n && name[n - 1] == '.' ? "" : ".");
	if (name_from_text(text, NULL, apex) < 0)
		return false;
	name_lower(apex);
	return true;
}

/*
 * The zones ask names, in its order, into b; each that no zone of the
 * set has, "no zone NAME is configured", into missing. In one read section.
 */
static void zone_status_named(const control_env_t *env, const zone_status_ask_t *ask, sbuf_t *b,
			      sbuf_t *missing)
{
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(env->zones);
	const char *sep = "";
	for (size_t k = 0; k < ask->names; k++) {
		uint8_t apex[NAME_MAXLEN];
		long i = db && apex_from_arg(ask->name[k], apex) ? zonedb_index(db, apex) : -1;
		if (i < 0) {
			sbuf_put(missing, "no zone %.*s is configured\n", NAME_TEXT_MAX,
				 ask->name[k]);
			continue;
		}
		zone_status_zone(env, db, (size_t)i, b, ask->json, sep);
		sep = ",";
	}
	if (ask->json)
		sbuf_put(b, "]");
	zonedb_read_unlock(env->zones);
}

/* What follows the zones: a load under way, and the reload's note. */
static void zone_status_tail(const control_env_t *env, bool json, sbuf_t *b)
{
	size_t done, total;
	bool loading = reload_loading(env->reload, &done, &total);
	if (json) {
		if (loading)
			sbuf_put(b, ",\"loading\":{\"done\":%zu,\"total\":%zu}", done, total);
		json_text(b, "note", env->reload->note, false);
		sbuf_put(b, "}\n");
		return;
	}
	if (loading)
		sbuf_put(b, "loading: %zu of %zu zones read\n", done, total);
	if (env->reload->note[0])
		sbuf_put(b, "%s\n", env->reload->note);
}

static void cmd_zone_status(control_client_t *c, const char *arg)
{
	const control_env_t *env = control_client_env(c);
	char copy[CONTROL_LINE_MAX];
	snprintf(copy, sizeof(copy), "%s", arg ? arg : "");
	zone_status_ask_t ask;
	if (!zone_status_arg(copy, &ask)) {
		control_reply(c, false, "usage: zone-status [ZONE... | FROM COUNT] [--json]\n");
		return;
	}
	sbuf_t b = { 0 }, missing = { 0 };
	sbuf_put(&b, "%s", ask.json ? "{\"zones\":[" : "");
	sbuf_put(&missing, "%s", "");
	/* every zone, however many: the reply grows (it once stopped at 64 KiB) */
	if (ask.names)
		zone_status_named(env, &ask, &b, &missing);
	else
		zone_status_range(env, &ask, &b);
	zone_status_tail(env, ask.json, &b);
	if (b.failed || missing.failed)
		control_reply(c, false, "out of memory\n");
	else if (missing.len)
		control_reply(c, false, missing.p);
	else
		control_reply(c, true, b.p);
	free(b.p);
	free(missing.p);
}

/*
 * z's records as zone_write_fd writes them, into *text: a private map of
 * a memory file, NUL-terminated, *len octets with the NUL (the caller
 * unmaps it). Returns 0 or a negative error.
 */
static int zone_read_text(const zone_t *z, char **text, size_t *len)
{
	int fd = memfd_create("shoal-zone-read", MFD_CLOEXEC);
	int err = fd < 0 ? -errno : zone_write_fd(z, fd);
	off_t size = err == 0 ? lseek(fd, 0, SEEK_CUR) : 0;
	if (err == 0 && (size < 0 || ftruncate(fd, size + 1) < 0)) /* the NUL: a zero */
		err = -errno;
	if (err < 0)
		goto done;
	*len = (size_t)size + 1;
	*text = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (*text == MAP_FAILED) {
		err = -errno;
		*text = NULL;
	}
done:
	if (fd >= 0)
		close(fd);
	return err;
}

/*
 * zone-read ZONE: the records ZONE serves, one master file line each, as
 * zone_write writes its file (so that a diff against a zone file, or
 * another server's transfer, shows what differs). The lines are written to
 * a memory file from a reference to the version served, outside the read
 * section; the main loop waits while they are (1M records: about 0.4 s).
 */
static void cmd_zone_read(control_client_t *c, const char *arg)
{
	const control_env_t *env = control_client_env(c);
	uint8_t apex[NAME_MAXLEN];
	long i = -1;
	const zone_t *z = NULL;
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(env->zones);
	if (db && apex_from_arg(arg, apex) && (i = zonedb_index(db, apex)) >= 0 &&
	    (z = zonedb_zone(db, (size_t)i)))
		zone_ref(z);
	zonedb_read_unlock(env->zones);
	char *text = NULL;
	size_t len = 0;
	int rc = z ? zone_read_text(z, &text, &len) : 0;
	zone_unref(z);
	char body[NAME_TEXT_MAX + 128];
	if (i < 0)
		snprintf(body, sizeof(body), "no zone %.*s is configured\n", NAME_TEXT_MAX, arg);
	else if (!z)
		snprintf(body, sizeof(body), "zone %.*s serves nothing (see zone-status)\n",
			 NAME_TEXT_MAX, arg);
	else if (rc < 0)
		snprintf(body, sizeof(body), "zone-read: %s\n", shoal_strerror(rc));
	control_reply(c, text != NULL, text ? text : body);
	if (text)
		munmap(text, len);
}

/*
 * Called on the main loop when the reload thread is done: what changed
 * (the zones whose serial moved), the warnings (a file changed whose
 * serial did not: secondaries will not see it), and on failure the errors.
 */
static void on_reload_reply(void *arg, const reload_result_t *res)
{
	control_client_t *c = arg;
	char head[256] = "reloaded\nfile: ";
	if (res->rc)
		snprintf(head, sizeof(head),
			 "reload failed: %s; the previous data is still served\n",
			 shoal_strerror(res->rc));
	const char *changed = res->rc ? "" : res->changed[0] ? res->changed : "-";
	size_t len =
		strlen(head) + strlen(changed) + strlen(res->errors) + strlen(res->warnings) + 2;
	char *body = malloc(len);
	if (body)
		snprintf(body, len, "%s%s%s%s%s", head, changed, res->rc ? "" : "\n", res->errors,
			 res->warnings);
	control_reply(c, res->rc == 0, body ? body : head);
	free(body);
}

static void cmd_reload(control_client_t *c, const char *arg)
{
	reload_t *r = control_client_env(c)->reload;
	int rc = reload_start(r, arg, on_reload_reply, c);
	if (rc == 0)
		return; /* the reply comes when the reload thread is done */
	char body[1200];
	if (rc == SHOAL_ENOTFOUND)
		snprintf(body, sizeof(body), "no zone %s is configured\n", arg);
	else if (rc == SHOAL_EEXIST && r->abandoned)
		snprintf(
			body, sizeof(body),
			"the last reload was abandoned and its thread has not ended yet; no reload "
			"starts until it does (see the log)\n");
	else if (rc == SHOAL_EEXIST)
		snprintf(body, sizeof(body), "a reload is already running\n");
	else
		snprintf(body, sizeof(body), "%s\n", shoal_strerror(rc));
	control_reply(c, false, body);
}

static void cmd_notify(control_client_t *c, const char *arg)
{
	const control_env_t *env = control_client_env(c);
	char body[1200];
	long i = conf_zone_index(env->cfg, arg);
	int rc = i < 0 || !env->notifier ? SHOAL_EINVAL : notify_out_zone(env->notifier, (size_t)i);
	if (i < 0)
		snprintf(body, sizeof(body), "no zone %s is configured\n", arg);
	else if (rc == SHOAL_ENOTFOUND)
		snprintf(body, sizeof(body), "zone %s serves nothing yet\n", arg);
	else if (rc == 0)
		snprintf(body, sizeof(body), "zone %s has no notify list\n", arg);
	else if (rc > 0)
		snprintf(body, sizeof(body), "NOTIFY sent to %d secondaries\n", rc);
	else
		snprintf(body, sizeof(body), "%s\n", shoal_strerror(rc));
	control_reply(c, rc > 0, body);
}

/* refresh and retransfer: the transfer thread does the work; the reply says it started. */
static void refresh_reply(control_client_t *c, const char *arg, bool whole)
{
	const control_env_t *env = control_client_env(c);
	char body[1200];
	long i = conf_zone_index(env->cfg, arg);
	uint8_t apex[NAME_MAXLEN];
	int rc = i < 0 || name_from_text(conf_zone_spec(env->cfg, i)->name, NULL, apex) < 0
			 ? SHOAL_ENOTFOUND
			 : sched_refresh(env->sched, apex, whole);
	if (i < 0)
		snprintf(body, sizeof(body), "no zone %s is configured\n", arg);
	else if (rc < 0)
		snprintf(body, sizeof(body), "zone %s is not a secondary (it has no primaries)\n",
			 arg);
	else
		snprintf(body, sizeof(body), "%s of %s started; see zone-status\n",
			 whole ? "transfer" : "refresh", arg);
	control_reply(c, rc == 0, body);
}

static void cmd_refresh(control_client_t *c, const char *arg)
{
	refresh_reply(c, arg, false);
}

static void cmd_retransfer(control_client_t *c, const char *arg)
{
	refresh_reply(c, arg, true);
}

/*
 * RFC 9018 5: the new secret makes the cookies from now on; the one it
 * replaces is still accepted (staging) so that clients holding its
 * cookies are not refused until the next rotation.
 */
static void cmd_cookie_rotate(control_client_t *c, const char *arg)
{
	uint8_t secret[COOKIE_SECRET_LEN];
	if (arg && cookie_secret_from_hex(secret, arg) < 0) {
		control_reply(c, false, "the secret must be 32 hex digits\n");
		return;
	}
	int rc = cookies_rotate(&control_client_env(c)->workers->cookies, arg ? secret : NULL);
	sodium_memzero(secret, sizeof(secret));
	if (rc < 0) {
		char body[128];
		snprintf(body, sizeof(body), "%s\n", shoal_strerror(rc));
		control_reply(c, false, body);
		return;
	}
	log_notice("control: cookie secret rotated; the previous one is the staging secret");
	control_reply(
		c, true,
		"cookie secret rotated; the previous one is accepted until the next rotation\n");
}

/*
 * The pin clients configure (RFC 7858 4.2: base64 of SHA-256 of the
 * SubjectPublicKeyInfo, as kdig's +tls-pin and a zone's tls-pin read it),
 * alone on the first line, then where the certificate is from.
 */
static void cmd_tls_pin(control_client_t *c, const char *arg)
{
	(void)arg;
	tls_ctx_t *ctx = control_client_env(c)->workers->tls;
	tls_creds_t *creds = ctx ? tls_ctx_creds(ctx) : NULL;
	if (!creds) {
		control_reply(c, false,
			      "no TLS certificate: neither listen-tls nor a primary over TLS is "
			      "configured\n");
		return;
	}
	uint8_t pin[TLS_PIN_LEN];
	char text[TLS_PIN_TEXT_MAX], body[1024 + PATH_MAX];
	tls_creds_pin(creds, pin);
	snprintf(body, sizeof(body), "%s\nsubject %s\ncertificate %s\n", tls_pin_text(pin, text),
		 tls_creds_subject(creds), tls_creds_source(creds));
	tls_creds_unref(creds);
	control_reply(c, true, body);
}

/* logrotate's postrotate: the lines from now on go to a new file at log-file's path. */
static void cmd_log_reopen(control_client_t *c, const char *arg)
{
	char body[PATH_MAX + 128];
	int rc = log_file_reopen(body, sizeof(body) - 1);
	strcat(body, "\n");
	control_reply(c, rc >= 0, body);
}

/* The server's later answer to restart or upgrade. */
static void on_restart_reply(void *client, bool ok, const char *body)
{
	control_reply(client, ok, body);
}

static void cmd_restart(control_client_t *c, const char *arg)
{
	const control_env_t *env = control_client_env(c);
	if (!env->restart) {
		control_reply(c, false, "this server cannot restart itself\n");
		return;
	}
	env->restart(env->takeover_arg, arg, on_restart_reply, c);
}

/* reconfig, zone-add, zone-remove: the server does the work and replies. */
static void reconfig_command(control_client_t *c, const char *name, const char *arg)
{
	const control_env_t *env = control_client_env(c);
	if (!env->reconfig) {
		control_reply(c, false, "this server cannot change its zones at runtime\n");
		return;
	}
	env->reconfig(env->reconfig_arg, name, arg, on_restart_reply, c);
}

static void cmd_reconfig(control_client_t *c, const char *arg)
{
	reconfig_command(c, "reconfig", arg);
}

static void cmd_zone_add(control_client_t *c, const char *arg)
{
	reconfig_command(c, "zone-add", arg);
}

static void cmd_zone_remove(control_client_t *c, const char *arg)
{
	reconfig_command(c, "zone-remove", arg);
}

static void cmd_upgrade(control_client_t *c, const char *arg)
{
	cmd_restart(c, arg);
}

/*
 * A new shoald asks for the sockets: the takeover goes on over this
 * connection (server/daemon/takeover_wire.h), on a descriptor of its own, so the
 * client is closed here without a reply of ours.
 */
static void cmd_takeover(control_client_t *c, const char *arg)
{
	const control_env_t *env = control_client_env(c);
	if (!env->takeover) {
		control_reply(c, false, "this server cannot hand its sockets over\n");
		return;
	}
	int fd = control_client_detach(c);
	if (fd < 0) {
		control_reply(c, false, "cannot keep the connection for the takeover\n");
		return;
	}
	env->takeover(env->takeover_arg, fd, arg);
}

static void cmd_stop(control_client_t *c, const char *arg)
{
	const control_env_t *env = control_client_env(c);
	control_reply(c, true, "stopping\n");
	env->stop(env->stop_arg);
}

/* The commands (control.h lists them) and what runs each. */
typedef struct command {
	const char *name;
	enum control_arg rule;
	const char *arg;
	void (*run)(control_client_t *c, const char *arg); /* arg NULL when none was given */
} command_t;

static const command_t commands[] = {
#define COMMAND(id, name, rule, arg, help) { name, rule, arg, cmd_##id },
	CONTROL_COMMANDS(COMMAND)
#undef COMMAND
};

#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

/* The command called name that takes arg (or no argument, when NULL), or NULL. */
static const command_t *command_find(const char *name, const char *arg)
{
	for (size_t i = 0; i < COMMAND_COUNT; i++) {
		const command_t *k = &commands[i];
		if (strcmp(k->name, name))
			continue;
		if ((arg && k->rule == CONTROL_ARG_NONE) ||
		    (!arg && k->rule == CONTROL_ARG_REQUIRED))
			return NULL;
		return k;
	}
	return NULL;
}

/* "unknown command (status, stats, reload [ZONE], ...)\n": every command, as written. */
static void reply_unknown(control_client_t *c)
{
	char body[1024] = "unknown command (", usage[64];
	for (size_t i = 0; i < COMMAND_COUNT; i++) {
		const command_t *k = &commands[i];
		control_usage(usage, sizeof(usage), k->name, k->rule, k->arg);
		size_t len = strlen(body);
		snprintf(body + len, sizeof(body) - len, "%s%s", i ? ", " : "", usage);
	}
	size_t len = strlen(body);
	snprintf(body + len, sizeof(body) - len, ")\n");
	control_reply(c, false, body);
}

void commands_run(control_client_t *c, const char *name, const char *arg)
{
	const command_t *k = command_find(name, arg);
	if (k)
		k->run(c, arg);
	else
		reply_unknown(c);
}
