/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The control socket: a unix stream socket, one text command per connection, for shoalctl. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "proto/name.h"
#include "server/common/log.h"
#include "server/ctl/control.h"
#include "server/net/acceptor.h"
#include "zone/journal.h"
#include "zone/zone.h"

/*
 * Protocol (shoalctl(8)): the client sends one line, "COMMAND [ARG]\n";
 * the server answers "ok\n" or "error\n", then the body, and closes.
 */
#define CONTROL_LINE_MAX  1024
#define CONTROL_REPLY_MAX (64 * 1024) /* a first size; replies grow past it */
#define CONTROL_BACKLOG   16
/* A client has this long to send its command line, and again to read the
 * reply once it is ready (a reload's reply waits for the reload). */
#define CONTROL_TIMEOUT_MS 10000

typedef struct control_client {
	uv_pipe_t pipe;
	uv_timer_t timer; /* the command line must arrive, and the reply leave, in time */
	control_t *ctl;
	struct control_client *next;
	char line[CONTROL_LINE_MAX];
	size_t len;
	bool answered;
	bool closing;
	uint8_t closes_pending;
	uv_write_t write_req;
	char *reply;
} control_client_t;

struct control {
	control_env_t env;
	int listen_fd;     /* the bound socket (what a takeover gives), or -1 */
	acceptor_t accept; /* accepts on a duplicate of listen_fd */
	bool accepting;    /* accept is initialised */
	bool pause_logged;
	bool owns_path; /* close removes the file: it is this process's */
	char *path;
	int file_fd; /* O_PATH descriptor of the socket file, or -1 */
	control_client_t *clients;
	size_t client_count;
};

static void on_client_closed(uv_handle_t *h)
{
	control_client_t *c = h->data;
	control_t *ctl = c->ctl;
	if (--c->closes_pending > 0)
		return;
	for (control_client_t **p = &ctl->clients; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	ctl->client_count--;
	free(c->reply);
	free(c);
	if (ctl->accepting)
		acceptor_resume(&ctl->accept); /* a connection may wait for the slot */
}

static void client_close(control_client_t *c)
{
	if (c->closing)
		return;
	c->closing = true;
	uv_close((uv_handle_t *)&c->pipe, on_client_closed);
	uv_close((uv_handle_t *)&c->timer, on_client_closed);
}

static void on_written(uv_write_t *req, int status)
{
	client_close(req->data);
}

static void on_client_timeout(uv_timer_t *t);

/* Send "ok\n"/"error\n" and body, then close. Takes ownership of nothing. */
static void reply(control_client_t *c, bool ok, const char *body)
{
	if (c->answered)
		return;
	c->answered = true;
	size_t blen = strlen(body);
	c->reply = malloc(blen + 8);
	if (!c->reply) {
		client_close(c);
		return;
	}
	int n = snprintf(c->reply, blen + 8, "%s\n%s", ok ? "ok" : "error", body);
	uv_buf_t buf = uv_buf_init(c->reply, (unsigned)n);
	c->write_req.data = c;
	if (uv_write(&c->write_req, (uv_stream_t *)&c->pipe, &buf, 1, on_written) < 0) {
		client_close(c);
		return;
	}
	/* a client that does not read its reply must not keep its slot */
	uv_timer_start(&c->timer, on_client_timeout, CONTROL_TIMEOUT_MS, 0);
}

static void cmd_status(control_client_t *c, const char *arg)
{
	const control_env_t *env = &c->ctl->env;
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
	reply(c, true, body);
}

/* One counter of NOTIFY out or transfers in, in format f, appended to add at *k. */
static void put_counter(char *add, size_t cap, int *k, enum stats_format f, const char *group,
			const char *name, const char *help, uint64_t v, const char **sep)
{
	size_t at = (size_t)*k < cap ? (size_t)*k : cap;
	if (f == STATS_FORMAT_JSON)
		*k += snprintf(add + at, cap - at, "%s\"%s\": %llu", *sep, name,
			       (unsigned long long)v);
	else if (f == STATS_FORMAT_PROMETHEUS)
		*k += snprintf(add + at, cap - at,
			       "# HELP " STATS_METRIC_PREFIX
			       "%s_%s_total %s\n# TYPE " STATS_METRIC_PREFIX
			       "%s_%s_total counter\n" STATS_METRIC_PREFIX "%s_%s_total %llu\n",
			       group, name, help, group, name, group, name, (unsigned long long)v);
	else
		*k += snprintf(add + at, cap - at, "%s %s  %llu\n", group, name,
			       (unsigned long long)v);
	*sep = ", ";
}

/*
 * Add the counters of NOTIFY out and transfers in (kept by the main and the
 * transfer thread, not the workers) to a rendered *body of *len octets: in
 * JSON "notify_out" and "xfr_in" before its last brace, else after it.
 * Returns 0, or SHOAL_ENOMEM.
 */
static int transfer_counters(const control_env_t *env, enum stats_format f, char **body,
			     size_t *len)
{
	notify_out_stats_t no = { 0 };
	secondary_stats_t in;
	if (env->notifier)
		notify_out_stats(env->notifier, &no);
	secondary_stats(env->secondary, &in);
	char add[4096];
	int k = 0;
	const char *sep = "";
	bool json = f == STATS_FORMAT_JSON;
	if (json)
		k += snprintf(add, sizeof(add), ",\n \"notify_out\": {");
#define NOTIFY_PUT(name, help) \
	put_counter(add, sizeof(add), &k, f, "notify_out", #name, help, no.name, &sep);
	NOTIFY_STATS(NOTIFY_PUT)
#undef NOTIFY_PUT
	if (json)
		k += snprintf(add + k, sizeof(add) - (size_t)k, "},\n \"xfr_in\": {");
	sep = "";
#define SECONDARY_PUT(name, help) \
	put_counter(add, sizeof(add), &k, f, "xfr_in", #name, help, in.name, &sep);
	SECONDARY_STATS(SECONDARY_PUT)
#undef SECONDARY_PUT
	if (json)
		k += snprintf(add + k, sizeof(add) - (size_t)k, "}}\n");
	if (k < 0 || (size_t)k >= sizeof(add))
		return SHOAL_ENOMEM;
	char *end = json ? strrchr(*body, '}') : NULL;
	size_t at = end ? (size_t)(end - *body) : *len;
	char *p = realloc(*body, at + (size_t)k + 1);
	if (!p)
		return SHOAL_ENOMEM;
	memcpy(p + at, add, (size_t)k + 1);
	*body = p;
	*len = at + (size_t)k;
	return 0;
}

static void cmd_stats(control_client_t *c, const char *arg)
{
	const control_env_t *env = &c->ctl->env;
	enum stats_format f = STATS_FORMAT_TEXT;
	if (arg) {
		size_t i = 0;
		while (stats_format_names[i] && strcmp(stats_format_names[i], arg))
			i++;
		if (!stats_format_names[i]) {
			reply(c, false, "stats: the format is text, json or prometheus\n");
			return;
		}
		f = (enum stats_format)i;
	}
	/* sized for the threads and zones: a fixed size failed past about 100 threads */
	char *body = NULL;
	size_t len;
	if (workers_stats_render(env->workers, env->zones, f, &body, &len) < 0 ||
	    transfer_counters(env, f, &body, &len) < 0) {
		reply(c, false, "out of memory\n");
		return;
	}
	reply(c, true, body);
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

static void cmd_zone_status(control_client_t *c, const char *arg)
{
	const control_env_t *env = &c->ctl->env;
	char *body = NULL;
	size_t len = 0, cap = 0;
	bool ok = body_append(&body, &len, &cap, "");
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(env->zones);
	size_t n = db ? zonedb_zone_count(db) : 0;
	/* every zone, however many: the reply grows (it once stopped at 64 KiB) */
	for (size_t i = 0; i < n && ok; i++) {
		zone_info_t info;
		zonedb_zone_info(db, i, &info);
		char when[32] = "-";
		struct tm tm;
		if (info.loaded && gmtime_r(&info.loaded_at, &tm))
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		/* the IXFR history: how far back a secondary can be brought by changes */
		char hist[128] = "";
		const zone_t *z = zonedb_zone(db, i);
		journal_t *j = z ? zonedb_journal(db, znode_name(z->apex)) : NULL;
		if (j) {
			journal_info_t ji;
			journal_get_info(j, &ji);
			if (ji.depth)
				snprintf(hist, sizeof(hist),
					 " journal %zu changes %zu octets from %u", ji.depth,
					 ji.octets, (unsigned)ji.oldest);
			else
				snprintf(hist, sizeof(hist), " journal 0 changes");
		}
		char sec[512];
		uint8_t apex[NAME_MAXLEN];
		if (name_from_text(info.name, NULL, apex) < 0)
			sec[0] = '\0';
		else
			secondary_status(env->secondary, apex, sec, sizeof(sec));
		char line[sizeof(info.name) + sizeof(info.last_error) + PATH_MAX + 1024];
		snprintf(line, sizeof(line), "%s serial %u rrs %zu loaded %s file %s%s%s%s%s\n",
			 info.name, (unsigned)info.serial, info.rr_count, info.loaded ? when : "no",
			 info.file ? info.file : "-", hist, sec,
			 info.last_error[0] ? " error " : "", info.last_error);
		ok = body_append(&body, &len, &cap, line);
	}
	zonedb_read_unlock(env->zones);
	if (ok && env->reload->note[0]) {
		char note[sizeof(env->reload->note) + 2];
		snprintf(note, sizeof(note), "%s\n", env->reload->note);
		ok = body_append(&body, &len, &cap, note);
	}
	reply(c, ok, ok ? body : "out of memory\n");
	free(body);
}

/* Called on the main loop when the reload thread is done. */
static void on_reload_reply(void *arg, int rc, const char *messages)
{
	control_client_t *c = arg;
	if (rc == 0) {
		reply(c, true, "reloaded\n");
		return;
	}
	char head[128];
	snprintf(head, sizeof(head), "reload failed: %s; the previous data is still served\n",
		 shoal_strerror(rc));
	size_t len = strlen(head) + strlen(messages) + 1;
	char *body = malloc(len);
	if (!body) {
		reply(c, false, head);
		return;
	}
	snprintf(body, len, "%s%s", head, messages);
	reply(c, false, body);
	free(body);
}

static void cmd_reload(control_client_t *c, const char *arg)
{
	reload_t *r = c->ctl->env.reload;
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
	reply(c, false, body);
}

static void cmd_notify(control_client_t *c, const char *arg)
{
	const control_env_t *env = &c->ctl->env;
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
	reply(c, rc > 0, body);
}

/* refresh and retransfer: the transfer thread does the work; the reply says it started. */
static void refresh_reply(control_client_t *c, const char *arg, bool whole)
{
	const control_env_t *env = &c->ctl->env;
	char body[1200];
	long i = conf_zone_index(env->cfg, arg);
	uint8_t apex[NAME_MAXLEN];
	int rc = i < 0 || name_from_text(env->cfg->zones[i].name, NULL, apex) < 0
			 ? SHOAL_ENOTFOUND
			 : secondary_refresh(env->secondary, apex, whole);
	if (i < 0)
		snprintf(body, sizeof(body), "no zone %s is configured\n", arg);
	else if (rc < 0)
		snprintf(body, sizeof(body), "zone %s is not a secondary (it has no primaries)\n",
			 arg);
	else
		snprintf(body, sizeof(body), "%s of %s started; see zone-status\n",
			 whole ? "transfer" : "refresh", arg);
	reply(c, rc == 0, body);
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
		reply(c, false, "the secret must be 32 hex digits\n");
		return;
	}
	int rc = cookies_rotate(&c->ctl->env.workers->cookies, arg ? secret : NULL);
	sodium_memzero(secret, sizeof(secret));
	if (rc < 0) {
		char body[128];
		snprintf(body, sizeof(body), "%s\n", shoal_strerror(rc));
		reply(c, false, body);
		return;
	}
	log_notice("control: cookie secret rotated; the previous one is the staging secret");
	reply(c, true,
	      "cookie secret rotated; the previous one is accepted until the next rotation\n");
}

/* The server's later answer to restart or upgrade. */
static void on_restart_reply(void *client, bool ok, const char *body)
{
	reply(client, ok, body);
}

static void cmd_restart(control_client_t *c, const char *arg)
{
	const control_env_t *env = &c->ctl->env;
	if (!env->restart) {
		reply(c, false, "this server cannot restart itself\n");
		return;
	}
	env->restart(env->takeover_arg, arg, on_restart_reply, c);
}

/* reconfig, zone-add, zone-remove: the server does the work and replies. */
static void reconfig_command(control_client_t *c, const char *name, const char *arg)
{
	const control_env_t *env = &c->ctl->env;
	if (!env->reconfig) {
		reply(c, false, "this server cannot change its zones at runtime\n");
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

void control_set_zones(control_t *ctl, const conf_t *cfg, notify_out_t *notifier,
		       secondary_t *secondary)
{
	if (!ctl)
		return;
	ctl->env.cfg = cfg;
	ctl->env.notifier = notifier;
	ctl->env.secondary = secondary;
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
	const control_env_t *env = &c->ctl->env;
	uv_os_fd_t fd;
	int dup_fd = -1;
	if (!env->takeover) {
		reply(c, false, "this server cannot hand its sockets over\n");
		return;
	}
	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) == 0)
		dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0) {
		reply(c, false, "cannot keep the connection for the takeover\n");
		return;
	}
	c->answered = true;
	client_close(c);
	env->takeover(env->takeover_arg, dup_fd, arg);
}

static void cmd_stop(control_client_t *c, const char *arg)
{
	reply(c, true, "stopping\n");
	c->ctl->env.stop(c->ctl->env.stop_arg);
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
	reply(c, false, body);
}

static void run_command(control_client_t *c)
{
	char *cmd = c->line, *arg = NULL;
	while (*cmd == ' ')
		cmd++;
	char *sp = strchr(cmd, ' ');
	if (sp) {
		*sp = '\0';
		arg = sp + 1;
		while (*arg == ' ')
			arg++;
		char *end = arg + strlen(arg);
		while (end > arg && end[-1] == ' ')
			*--end = '\0';
		if (!*arg)
			arg = NULL;
	}
	log_debug("control: %s%s%s", cmd, arg ? " " : "", arg ? arg : "");
	const command_t *k = command_find(cmd, arg);
	if (k)
		k->run(c, arg);
	else
		reply_unknown(c);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	control_client_t *c = h->data;
	size_t room = sizeof(c->line) - 1 - c->len;
	*buf = uv_buf_init(c->line + c->len, (unsigned)room);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	control_client_t *c = s->data;
	if (n < 0) {
		if (!c->answered)
			client_close(c);
		return;
	}
	c->len += (size_t)n;
	c->line[c->len] = '\0';
	char *nl = memchr(c->line, '\n', c->len);
	if (!nl && c->len < sizeof(c->line) - 1)
		return;
	uv_read_stop(s);
	uv_timer_stop(&c->timer);
	if (!nl) {
		reply(c, false, "command line too long\n");
		return;
	}
	*nl = '\0';
	if (nl > c->line && nl[-1] == '\r')
		nl[-1] = '\0';
	run_command(c);
}

static void on_client_timeout(uv_timer_t *t)
{
	control_client_t *c = t->data;
	if (c->answered) {
		client_close(c); /* the reply was not read in time */
		return;
	}
	uv_read_stop((uv_stream_t *)&c->pipe); /* no command may start after this reply */
	reply(c, false, "no command line received in time\n");
}

/* At most CONTROL_CLIENTS_MAX clients at once; the next waits in the acceptor. */
static bool on_client_accepted(acceptor_t *a, int fd)
{
	control_t *ctl = a->data;
	if (ctl->client_count >= CONTROL_CLIENTS_MAX)
		return false;
	ctl->pause_logged = false;
	control_client_t *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return true;
	}
	c->ctl = ctl;
	c->pipe.data = c;
	c->timer.data = c;
	uv_pipe_init(ctl->env.loop, &c->pipe, 0);
	uv_timer_init(ctl->env.loop, &c->timer);
	c->closes_pending = 2;
	c->next = ctl->clients;
	ctl->clients = c;
	ctl->client_count++;
	if (uv_pipe_open(&c->pipe, fd) < 0) {
		close(fd); /* the handle did not take it */
		client_close(c);
		return true;
	}
	if (uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) < 0) {
		client_close(c);
		return true;
	}
	uv_timer_start(&c->timer, on_client_timeout, CONTROL_TIMEOUT_MS, 0);
	return true;
}

static void on_accept_paused(acceptor_t *a, int err)
{
	control_t *ctl = a->data;
	if (ctl->pause_logged)
		return;
	ctl->pause_logged = true; /* once until a client gets in again */
	log_warning("control %s: accept: %s; trying again every %u ms", ctl->path, uv_strerror(err),
		    ACCEPTOR_PAUSE_MS);
}

/*
 * Accept with the acceptor, not uv_listen, whose accept loop can spin for
 * good when descriptors run out (see server/net/acceptor.h). listen_fd stays
 * the control's (a takeover gives it); the acceptor reads a duplicate.
 * Returns 0 or -errno.
 */
static int control_listen(control_t *ctl)
{
	int fd = fcntl(ctl->listen_fd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int e = listen(fd, CONTROL_BACKLOG) < 0 ? -errno : 0;
	ctl->accept.data = ctl;
	if (e == 0)
		e = acceptor_init(&ctl->accept, ctl->env.loop, fd, on_client_accepted,
				  on_accept_paused);
	if (e < 0) {
		close(fd);
		return e;
	}
	ctl->accepting = true;
	return 0;
}

/* A control with nothing open yet; *out is set so that control_close can run. */
static int control_new(control_t **out, const control_env_t *env, const char *path, char *err,
		       size_t errlen)
{
	control_t *ctl = calloc(1, sizeof(*ctl));
	if (!ctl || !(ctl->path = strdup(path))) {
		free(ctl);
		snprintf(err, errlen, "out of memory");
		return SHOAL_ENOMEM;
	}
	ctl->env = *env;
	ctl->file_fd = -1;
	ctl->listen_fd = -1;
	*out = ctl;
	return 0;
}

/* A socket file left by a daemon that is gone may be replaced; a live one may not. */
static int clear_stale(const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "control %s: exists and is not a socket", path);
		return SHOAL_ECONFIG;
	}
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		close(fd);
		snprintf(err, errlen, "control %s: another daemon is listening there", path);
		return SHOAL_ECONFIG;
	}
	if (fd >= 0)
		close(fd);
	unlink(path);
	return 0;
}

int control_open(control_t **out, const control_env_t *env, const char *path, char *err,
		 size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "control %s: path too long", path);
		return SHOAL_ECONFIG;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	/*
	 * The socket's own folder, made when missing (one level, as root
	 * before the drop would): where systemd's RuntimeDirectory= does not
	 * make it, a server started by hand still finds its default path.
	 */
	char folder[sizeof(sun.sun_path)];
	snprintf(folder, sizeof(folder), "%s", path);
	char *slash = strrchr(folder, '/');
	if (slash && slash != folder) {
		*slash = '\0';
		if (mkdir(folder, 0755) == 0)
			log_info("control: made the folder %s", folder);
	}
	int rc = clear_stale(path, err, errlen);
	if (rc == 0)
		rc = control_new(out, env, path, err, errlen);
	if (rc < 0)
		return rc;
	control_t *ctl = *out;
	int e = 0;
	if ((ctl->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0)
		e = -errno;
	/* created 0600 from the start: no window in which others may connect */
	mode_t old = umask(0177);
	if (e == 0 && bind(ctl->listen_fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		e = -errno;
	umask(old);
	if (e == 0) {
		ctl->owns_path = true;
		e = control_listen(ctl);
	}
	if (e < 0) {
		snprintf(err, errlen, "control %s: %s", path, shoal_strerror(e));
		return e;
	}
	/*
	 * Hold the file just made by a descriptor, never following a link:
	 * what is done to it later (its owner) reaches this file even if the
	 * name is made to point elsewhere. Still ours: a socket of our uid
	 * with one name (a hard link to another's socket has two).
	 */
	struct stat st;
	ctl->file_fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (ctl->file_fd < 0 || fstat(ctl->file_fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    st.st_uid != geteuid() || st.st_nlink != 1) {
		snprintf(err, errlen,
			 "control %s: replaced as soon as it was made: who else may "
			 "write its folder?",
			 path);
		if (ctl->file_fd >= 0)
			close(ctl->file_fd);
		ctl->file_fd = -1;
		return SHOAL_ECONFIG;
	}
	log_info("control socket %s", path);
	return 0;
}

int control_adopt(control_t **out, const control_env_t *env, int fd, const char *path, char *err,
		  size_t errlen)
{
	int rc = control_new(out, env, path, err, errlen);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	control_t *ctl = *out;
	ctl->listen_fd = fd;
	/* the file as control_open holds it (for control_chown); the giver made it */
	struct stat st;
	ctl->file_fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (ctl->file_fd < 0 || fstat(ctl->file_fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "control %s: not the socket the running server gave", path);
		return SHOAL_ECONFIG;
	}
	int e = control_listen(ctl);
	if (e < 0) {
		snprintf(err, errlen, "control %s: %s", path, shoal_strerror(e));
		return e;
	}
	log_info("control socket %s (taken over)", path);
	return 0;
}

void control_claim(control_t *ctl)
{
	ctl->owns_path = true;
}

int control_listen_fd(const control_t *ctl)
{
	return ctl->listen_fd;
}

const char *control_path(const control_t *ctl)
{
	return ctl->path;
}

/* Accept no more clients and close this process's listening descriptors. */
static void control_unlisten(control_t *ctl)
{
	if (ctl->accepting)
		acceptor_close(&ctl->accept, NULL);
	ctl->accepting = false;
	if (ctl->listen_fd >= 0)
		close(ctl->listen_fd);
	ctl->listen_fd = -1;
}

void control_taken_over(control_t *ctl, bool taken)
{
	control_unlisten(ctl);
	if (taken)
		ctl->owns_path = false;
}

int control_chown(control_t *ctl, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	/* through the descriptor: a name swapped for a link cannot redirect it */
	if (fchownat(ctl->file_fd, "", uid, gid, AT_EMPTY_PATH) < 0) {
		int e = -errno;
		snprintf(err, errlen, "control %s: cannot hand it to uid %u: %s", ctl->path,
			 (unsigned)uid, shoal_strerror(e));
		return e;
	}
	/* and the name must still lead to it, or shoalctl would talk to another file */
	struct stat a, b;
	if (lstat(ctl->path, &a) < 0 || fstat(ctl->file_fd, &b) < 0 || a.st_dev != b.st_dev ||
	    a.st_ino != b.st_ino) {
		snprintf(err, errlen,
			 "control %s: the socket was replaced by another file: who "
			 "else may write its folder?",
			 ctl->path);
		return SHOAL_ECONFIG;
	}
	return 0;
}

void control_close(control_t *ctl)
{
	if (!ctl)
		return;
	for (control_client_t *c = ctl->clients; c; c = c->next)
		client_close(c);
	control_unlisten(ctl);
	/* may fail after the privilege drop (directory not writable): harmless */
	if (ctl->owns_path && unlink(ctl->path) < 0)
		log_debug("control %s: not removed: %s", ctl->path, strerror(errno));
	if (ctl->file_fd >= 0)
		close(ctl->file_fd);
	ctl->file_fd = -1;
	/* freed after the loop ran the close callbacks: see control_free */
	free(ctl->path);
	ctl->path = NULL;
}

void control_free(control_t *ctl)
{
	free(ctl);
}
