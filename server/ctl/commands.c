/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The control socket's commands: the table shoalctl's words are looked up in, and each command. */
#include "config.h"

#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/common/log.h"
#include "server/common/timestamp.h"
#include "server/ctl/control.h"
#include "server/ctl/internal.h"
#include "zone/journal.h"
#include "zone/zone.h"

/* The first size of a reply that grows (zone-status); it grows past it. */
#define CONTROL_REPLY_MAX (64 * 1024)

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
	if (workers_stats_render(env->workers, env->zones, env->counters, f, &body, &len) < 0) {
		control_reply(c, false, "out of memory\n");
		return;
	}
	control_reply(c, true, body);
	free(body);
}

/* Append line to *body (grown as needed). Returns false when out of memory. */
static bool body_append(char **body, size_t *len, size_t *cap, const char *line)
{
	size_t add = strlen(line);
	if (*len + add + 1 > *cap) {
		size_t want = *cap ? *cap * 2 : CONTROL_REPLY_MAX;
		if (want < *len + add + 1)
			want = *len + add + 1;
		char *p = realloc(*body, want);
		if (!p)
			return false;
		*body = p;
		*cap = want;
	}
	memcpy(*body + *len, line, add + 1);
	*len += add;
	return true;
}

/* Zones written per read section: a million zones never hold a grace period up for long. */
#define ZONE_STATUS_CHUNK 1024

/* Zone i of db as zone-status shows it, one line into line[0..cap). In a read section of db. */
static void zone_status_line(const control_env_t *env, const zonedb_t *db, size_t i, char *line,
			     size_t cap)
{
	zone_info_t info;
	zonedb_zone_info(db, i, &info);
	char when[TIMESTAMP_TEXT_MAX];
	timestamp_text(info.loaded_at, -1, when, sizeof(when));
	/* the IXFR history: how far back a secondary can be brought by changes */
	char hist[128] = "";
	const zone_t *z = zonedb_zone(db, i);
	journal_t *j = z ? zonedb_journal(db, znode_name(z->apex)) : NULL;
	if (j) {
		journal_info_t ji;
		journal_get_info(j, &ji);
		if (ji.depth)
			snprintf(hist, sizeof(hist), " journal %zu changes %zu octets from %u",
				 ji.depth, ji.octets, (unsigned)ji.oldest);
		else
			snprintf(hist, sizeof(hist), " journal 0 changes");
		if (ji.file_octets) /* what a restart would read back */
			snprintf(hist + strlen(hist), sizeof(hist) - strlen(hist), " on-disk %zu",
				 ji.file_octets);
	} else if (z) {
		snprintf(hist, sizeof(hist), " journal 0 changes"); /* none kept yet */
	}
	char sec[512];
	uint8_t apex[NAME_MAXLEN];
	if (name_from_text(info.name, NULL, apex) < 0)
		sec[0] = '\0';
	else
		sched_status(env->sched, apex, sec, sizeof(sec));
	snprintf(line, cap, "%s serial %u rrs %zu loaded %s file %s%s%s%s%s\n", info.name,
		 (unsigned)info.serial, info.rr_count, info.loaded ? when : "no",
		 info.file ? info.file : "-", hist, sec, info.last_error[0] ? " error " : "",
		 info.last_error);
}

/*
 * What zone-status was asked: every zone (from 0, count SIZE_MAX), one
 * zone by name (`one`), or a page "FROM COUNT" of the set's order. False
 * for an argument that is none of these.
 */
static bool zone_status_arg(const char *arg, size_t *from, size_t *count, const char **one)
{
	*from = 0;
	*count = SIZE_MAX;
	*one = NULL;
	if (!arg || !*arg)
		return true;
	char *end;
	unsigned long long f = strtoull(arg, &end, 10);
	if (end == arg || *end != ' ') {
		*one = arg;
		return !strchr(arg, ' ');
	}
	const char *rest = end + 1;
	unsigned long long n = strtoull(rest, &end, 10);
	if (end == rest || *end || n == 0)
		return false;
	*from = (size_t)f;
	*count = (size_t)n;
	return true;
}

/*
 * Lines for the zones from..from+count of the set served into the body,
 * ZONE_STATUS_CHUNK per read section (between two, a reload may publish:
 * each line is of the set served when it was written); a last line
 * "next N" when a page ends before the set. False when out of memory.
 */
static bool zone_status_range(const control_env_t *env, size_t from, size_t count, char **body,
			      size_t *len, size_t *cap)
{
	bool ok = true;
	char line[NAME_TEXT_MAX + 512 + PATH_MAX + 1024];
	size_t i = from, end = count == SIZE_MAX ? SIZE_MAX : from + count;
	for (bool more = true; ok && more;) {
		zonedb_read_lock();
		const zonedb_t *db = zonedb_current(env->zones);
		size_t n = db ? zonedb_zone_count(db) : 0;
		size_t stop = i + ZONE_STATUS_CHUNK < end ? i + ZONE_STATUS_CHUNK : end;
		for (; i < n && i < stop && ok; i++) {
			zone_status_line(env, db, i, line, sizeof(line));
			ok = body_append(body, len, cap, line);
		}
		more = i < n && i < end;
		if (ok && !more && i < n && count != SIZE_MAX) {
			snprintf(line, sizeof(line), "next %zu\n", i);
			ok = body_append(body, len, cap, line);
		}
		zonedb_read_unlock(env->zones);
	}
	return ok;
}

/* The one zone named `name`, or false when the set has none of that name. */
static bool zone_status_one(const control_env_t *env, const char *name, char **body, size_t *len,
			    size_t *cap, bool *ok)
{
	uint8_t apex[NAME_MAXLEN];
	char text[NAME_TEXT_MAX + 2];
	size_t n = strlen(name);
	snprintf(text, sizeof(text), "%s%s", name, n && name[n - 1] == '.' ? "" : ".");
	if (name_from_text(text, NULL, apex) < 0)
		return false;
	name_lower(apex);
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(env->zones);
	long i = zonedb_index(db, apex);
	if (i >= 0) {
		char line[NAME_TEXT_MAX + 512 + PATH_MAX + 1024];
		zone_status_line(env, db, (size_t)i, line, sizeof(line));
		*ok = body_append(body, len, cap, line);
	}
	zonedb_read_unlock(env->zones);
	return i >= 0;
}

static void cmd_zone_status(control_client_t *c, const char *arg)
{
	const control_env_t *env = control_client_env(c);
	size_t from, count;
	const char *one;
	if (!zone_status_arg(arg, &from, &count, &one)) {
		control_reply(c, false, "usage: zone-status [ZONE | FROM COUNT]\n");
		return;
	}
	char *body = NULL;
	size_t len = 0, cap = 0;
	bool ok = body_append(&body, &len, &cap, "");
	if (ok && one && !zone_status_one(env, one, &body, &len, &cap, &ok)) {
		free(body);
		char reply[NAME_TEXT_MAX + 64];
		snprintf(reply, sizeof(reply), "no zone %.*s is configured\n", NAME_TEXT_MAX, one);
		control_reply(c, false, reply);
		return;
	}
	/* every zone, however many: the reply grows (it once stopped at 64 KiB) */
	if (ok && !one)
		ok = zone_status_range(env, from, count, &body, &len, &cap);
	size_t done, total;
	if (ok && reload_loading(env->reload, &done, &total)) {
		char line[96];
		snprintf(line, sizeof(line), "loading: %zu of %zu zones read\n", done, total);
		ok = body_append(&body, &len, &cap, line);
	}
	if (ok && env->reload->note[0]) {
		char note[sizeof(env->reload->note) + 2];
		snprintf(note, sizeof(note), "%s\n", env->reload->note);
		ok = body_append(&body, &len, &cap, note);
	}
	control_reply(c, ok, ok ? body : "out of memory\n");
	free(body);
}

/* Called on the main loop when the reload thread is done. */
static void on_reload_reply(void *arg, int rc, const char *messages)
{
	control_client_t *c = arg;
	if (rc == 0) {
		control_reply(c, true, "reloaded\n");
		return;
	}
	char head[128];
	snprintf(head, sizeof(head), "reload failed: %s; the previous data is still served\n",
		 shoal_strerror(rc));
	size_t len = strlen(head) + strlen(messages) + 1;
	char *body = malloc(len);
	if (!body) {
		control_reply(c, false, head);
		return;
	}
	snprintf(body, len, "%s%s", head, messages);
	control_reply(c, false, body);
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
	int rc = i < 0 || name_from_text(env->cfg->zones[i].name, NULL, apex) < 0
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
