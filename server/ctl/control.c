/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The control socket: a unix stream socket, one text command per connection, for shoalctl. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/ctl/client.h"
#include "server/ctl/control.h"
#include "server/ctl/internal.h"

/*
 * Protocol (shoalctl(8)): the client sends one line, "COMMAND [ARG]\n";
 * the server answers "ok\n" or "error\n", then the body, and closes. The
 * line is at most CONTROL_LINE_MAX (control.h).
 */
#define CONTROL_BACKLOG 16
/* A client has this long to send its command line, and again to read the
 * reply once it is ready (a reload's reply waits for the reload). */
#define CONTROL_TIMEOUT_MS 10000

struct control_client {
	client_t
		base; /* first; its timer: the command line must arrive, the reply leave, in time */
	control_t *ctl;
	char line[CONTROL_LINE_MAX];
	size_t len;
	bool answered;
};

struct control {
	control_env_t env;
	int listen_fd;        /* the bound socket (what a takeover gives), or -1 */
	client_set_t clients; /* accepts on a duplicate of listen_fd */
	bool owns_path;       /* close removes the file: it is this process's */
	char *path;
	int file_fd; /* O_PATH descriptor of the socket file, or -1 */
};

static void on_written(uv_write_t *req, int status)
{
	client_close(req->data);
}

static void on_client_timeout(uv_timer_t *t);

void control_reply(control_client_t *c, bool ok, const char *body)
{
	if (c->answered)
		return;
	c->answered = true;
	size_t blen = strlen(body);
	char *text = malloc(blen + 8);
	int n = text ? snprintf(text, blen + 8, "%s\n%s", ok ? "ok" : "error", body) : 0;
	if (client_send(&c->base, text, (size_t)n, on_written) < 0)
		return;
	/* a client that does not read its reply must not keep its slot */
	uv_timer_start(&c->base.timer, on_client_timeout, CONTROL_TIMEOUT_MS, 0);
}

void control_set_zones(control_t *ctl, const conf_t *cfg, notify_out_t *notifier, sched_t *sched)
{
	MAIN_THREAD_ONLY();
	if (!ctl)
		return;
	ctl->env.cfg = cfg;
	ctl->env.notifier = notifier;
	ctl->env.sched = sched;
}

const control_env_t *control_client_env(const control_client_t *c)
{
	return &c->ctl->env;
}

int control_client_detach(control_client_t *c)
{
	uv_os_fd_t fd;
	int e = uv_fileno((uv_handle_t *)&c->base.conn, &fd);
	if (e < 0)
		return e;
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dup_fd < 0)
		return -errno;
	c->answered = true;
	client_close(&c->base);
	return dup_fd;
}

/* The line is whole: the command's name, and its argument with the spaces around it cut. */
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
	commands_run(c, cmd, arg);
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
			client_close(&c->base);
		return;
	}
	c->len += (size_t)n;
	c->line[c->len] = '\0';
	char *nl = memchr(c->line, '\n', c->len);
	if (!nl && c->len < sizeof(c->line) - 1)
		return;
	uv_read_stop(s);
	uv_timer_stop(&c->base.timer);
	if (!nl) {
		control_reply(c, false, "command line too long\n");
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
		client_close(&c->base); /* the reply was not read in time */
		return;
	}
	uv_read_stop(&c->base.conn.stream); /* no command may start after this reply */
	control_reply(c, false, "no command line received in time\n");
}

/* At most CONTROL_CLIENTS_MAX clients at once; the next waits in the acceptor. */
static bool on_client_accepted(acceptor_t *a, int fd)
{
	client_set_t *set = a->data;
	if (set->count >= CONTROL_CLIENTS_MAX)
		return false;
	control_client_t *c = (control_client_t *)client_add(set, fd);
	if (!c)
		return true;
	c->ctl = set->data;
	if (uv_read_start(&c->base.conn.stream, on_alloc, on_read) < 0) {
		client_close(&c->base);
		return true;
	}
	uv_timer_start(&c->base.timer, on_client_timeout, CONTROL_TIMEOUT_MS, 0);
	return true;
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
	if (e == 0)
		e = client_set_listen(&ctl->clients, fd, on_client_accepted);
	if (e < 0)
		close(fd);
	return e;
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
	char name[sizeof(ctl->clients.name)];
	snprintf(name, sizeof(name), "control %s", path);
	client_set_init(&ctl->clients, env->loop, CLIENT_PIPE, sizeof(control_client_t), name, ctl);
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
	MAIN_THREAD_ONLY();
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "control %s: path too long", path);
		return SHOAL_ECONFIG;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	/*
	 * The socket's own folder, made when missing (one level, as root
	 * before the drop, or as the user started when its parent lets it):
	 * where systemd's RuntimeDirectory= does not make it, a server started
	 * by hand still finds its default path. One it may not make stops the
	 * start with what to do, not with bind's bare "No such file".
	 */
	char folder[sizeof(sun.sun_path)];
	snprintf(folder, sizeof(folder), "%s", path);
	char *slash = strrchr(folder, '/');
	if (slash && slash != folder) {
		*slash = '\0';
		if (mkdir(folder, 0755) == 0) {
			log_info("control: made the folder %s", folder);
		} else if (errno != EEXIST) {
			snprintf(err, errlen,
				 "control %s: cannot make the folder %s: %s; make it, owned by uid "
				 "%u, or let the unit's RuntimeDirectory= make it",
				 path, folder, strerror(errno), (unsigned)geteuid());
			return SHOAL_ECONFIG;
		}
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
	MAIN_THREAD_ONLY();
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
	MAIN_THREAD_ONLY();
	ctl->owns_path = true;
}

int control_listen_fd(const control_t *ctl)
{
	MAIN_THREAD_ONLY();
	return ctl->listen_fd;
}

const char *control_path(const control_t *ctl)
{
	return ctl->path;
}

/* Accept no more clients and close this process's listening descriptors. */
static void control_unlisten(control_t *ctl)
{
	client_set_unlisten(&ctl->clients);
	if (ctl->listen_fd >= 0)
		close(ctl->listen_fd);
	ctl->listen_fd = -1;
}

void control_taken_over(control_t *ctl, bool taken)
{
	MAIN_THREAD_ONLY();
	control_unlisten(ctl);
	if (taken)
		ctl->owns_path = false;
}

int control_chown(control_t *ctl, uid_t uid, gid_t gid, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
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
	MAIN_THREAD_ONLY();
	if (!ctl)
		return;
	client_set_close(&ctl->clients);
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
