/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A takeover on the main loop: sockets given to a taker, restarts, the old process watched. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/common/systemd.h"
#include "server/daemon/takeover.h"
#include "server/daemon/takeover_wire.h"

/* One connection of a takeover on the main loop: to a taker, or to the giver. */
typedef struct hconn {
	uv_poll_t poll;
	takeover_t *h;
	int fd;
	pid_t pid;    /* the process at the other end */
	char buf[32]; /* the taker's "go" line as it arrives */
	size_t len;
	bool polling;
} hconn_t;

struct takeover {
	takeover_env_t env;
	control_t *control;
	char exe[PATH_MAX]; /* the binary this process was started from */
	bool stopping;
	hconn_t *taker; /* a taker was given the sockets; NULL while none */
	bool handed;    /* the taker said "go" */
	hconn_t *giver; /* this process took over from it, and it has not exited yet */
	uv_timer_t go_timer;
	/* a restart or upgrade: at most one at a time */
	bool restarting;
	bool restart_waits; /* for the giver to exit before the new process starts */
	char *restart_binary;
	control_reply_fn reply;
	void *client;
	uv_timer_t restart_timer;
	pid_t child;  /* the restart's process */
	int child_fd; /* its pidfd, readable once it has exited */
	uv_poll_t child_poll;
	bool child_running; /* child_poll is open (until the exit is reaped and it closed) */
	uint8_t timers_open;
};

static void on_conn_closed(uv_handle_t *handle)
{
	free(handle->data);
}

/* Stop watching c and close its descriptor; c is freed by the loop. */
static void conn_close(hconn_t *c)
{
	if (!c)
		return;
	if (c->polling)
		uv_close((uv_handle_t *)&c->poll, on_conn_closed);
	/* uv_close took the descriptor out of epoll at once, so it may close now */
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	if (!c->polling)
		free(c);
}

static hconn_t *conn_new(takeover_t *h, int fd, pid_t pid, uv_poll_cb cb)
{
	hconn_t *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->h = h;
	c->fd = fd;
	c->pid = pid;
	c->poll.data = c;
	if (uv_poll_init_socket(h->env.loop, &c->poll, fd) == 0) {
		c->polling = true;
		if (uv_poll_start(&c->poll, UV_READABLE, cb) == 0)
			return c;
	}
	conn_close(c);
	return NULL;
}

static pid_t peer_pid(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 ? cred.pid : -1;
}

/* Write a short line on a connection that has room for it (best effort). */
static void say(int fd, const char *text)
{
	if (send(fd, text, strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("takeover: cannot write to the other process: %s", strerror(errno));
}

/* ---- restart ---- */

static void restart_done(takeover_t *h, bool ok, const char *body)
{
	if (!h->restarting)
		return;
	assert(h->reply); /* takeover_restart set it with restarting */
	h->restarting = false;
	h->restart_waits = false;
	uv_timer_stop(&h->restart_timer);
	free(h->restart_binary);
	h->restart_binary = NULL;
	h->reply(h->client, ok, body);
}

static void on_child_closed(uv_handle_t *handle)
{
	takeover_t *h = handle->data;
	close(h->child_fd);
	h->child_fd = -1;
	h->child_running = false;
}

/* The restart's process has exited (its pidfd is readable): reap it. */
static void on_child_exit(uv_poll_t *poll, int status, int events)
{
	takeover_t *h = poll->data;
	int st = 0;
	pid_t got = waitpid(h->child, &st, WNOHANG);
	if (got == 0)
		return;
	if (got == h->child && h->restarting) {
		char body[256];
		bool sig = WIFSIGNALED(st);
		snprintf(body, sizeof(body),
			 "the new process (pid %d) exited with %s %d before taking over (see its "
			 "log); pid %d serves on\n",
			 (int)h->child, sig ? "signal" : "status",
			 sig ? WTERMSIG(st) : WEXITSTATUS(st), (int)getpid());
		log_warning("restart: %.*s", (int)strlen(body) - 1, body);
		restart_done(h, false, body);
	}
	uv_close((uv_handle_t *)poll, on_child_closed);
}

static void on_restart_timer(uv_timer_t *t)
{
	takeover_t *h = t->data;
	char body[256];
	if (h->restart_waits) {
		snprintf(body, sizeof(body),
			 "the previous takeover has not finished in %d s (pid %d still exits); "
			 "try again later\n",
			 TAKEOVER_SETTLE_WAIT_MS / 1000, h->giver ? (int)h->giver->pid : 0);
	} else {
		snprintf(body, sizeof(body),
			 "the new process (pid %d) did not take over in time and was stopped; pid "
			 "%d serves on\n",
			 (int)h->child, (int)getpid());
		if (h->child_running)
			kill(h->child, SIGTERM);
	}
	log_warning("restart: %.*s", (int)strlen(body) - 1, body);
	restart_done(h, false, body);
}

/* This process's arguments, less any --takeover, then --takeover CONTROL; NULL-terminated. */
static char **restart_args(const takeover_t *h, const char *binary)
{
	const conf_t *cfg = h->env.cfg;
	char **args = calloc((size_t)cfg->argc + 3, sizeof(char *));
	if (!args)
		return NULL;
	size_t n = 0;
	args[n++] = (char *)binary;
	for (int i = 1; i < cfg->argc; i++) {
		if (!strcmp(cfg->argv[i], "--takeover")) {
			i++;
			continue;
		}
		if (!strncmp(cfg->argv[i], "--takeover=", 11))
			continue;
		args[n++] = cfg->argv[i];
	}
	args[n++] = "--takeover";
	args[n++] = cfg->control;
	return args;
}

static void restart_spawn(takeover_t *h)
{
	assert(h->restarting); /* a restart's step: takeover_restart, or the giver gone */
	const char *binary = h->restart_binary ? h->restart_binary : h->exe;
	char body[PATH_MAX + 128];
	h->restart_waits = false;
	if (h->child_running) {
		snprintf(body, sizeof(body), "the last restart's process has not ended yet\n");
		restart_done(h, false, body);
		return;
	}
	char **args = restart_args(h, binary);
	if (!args) {
		restart_done(h, false, "out of memory\n");
		return;
	}
	/*
	 * posix_spawn, not uv_spawn: libuv closes its exec-error pipe with a
	 * raw system call, so a thread sanitizer sees the descriptor number a
	 * worker's accept4 gets next as a race. The new process writes where
	 * this one does (descriptors 0-2; every other one is close-on-exec),
	 * with default signal handling and no signal blocked.
	 */
	posix_spawnattr_t attr;
	sigset_t none, dflt;
	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	posix_spawnattr_setsigmask(&attr, &none);
	posix_spawnattr_setsigdefault(&attr, &dflt);
	pid_t pid;
	int rc = posix_spawn(&pid, binary, NULL, &attr, args, environ);
	posix_spawnattr_destroy(&attr);
	free(args);
	int pfd = -1;
	if (rc == 0 && (pfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
		rc = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	h->child_poll.data = h;
	if (rc == 0 && (rc = -uv_poll_init(h->env.loop, &h->child_poll, pfd)) == 0 &&
	    (rc = -uv_poll_start(&h->child_poll, UV_READABLE, on_child_exit)) != 0)
		uv_close((uv_handle_t *)&h->child_poll, NULL);
	if (rc != 0) {
		if (pfd >= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			close(pfd);
		}
		snprintf(body, sizeof(body), "cannot start %s: %s\n", binary, strerror(rc));
		log_warning("restart: %s", body);
		restart_done(h, false, body);
		return;
	}
	h->child = pid;
	h->child_fd = pfd;
	h->child_running = true;
	log_info("restart: started %s as pid %d to take over", binary, (int)pid);
	uv_timer_start(&h->restart_timer, on_restart_timer,
		       (uint64_t)h->env.cfg->reload_timeout * 1000 + TAKEOVER_START_SLACK_MS, 0);
}

void takeover_restart(void *arg, const char *binary, control_reply_fn reply, void *client)
{
	MAIN_THREAD_ONLY();
	takeover_t *h = arg;
	const char *why = NULL;
	if (h->stopping)
		why = "the server is stopping\n";
	else if (h->restarting)
		why = "a restart is already under way\n";
	else if (h->taker)
		why = "the sockets are being handed over already\n";
	else if (!h->env.cfg->control || !h->env.cfg->argv)
		why = "a restart needs the control socket and the command line\n";
	if (why) {
		reply(client, false, why);
		return;
	}
	h->restart_binary = binary ? strdup(binary) : NULL;
	if (binary && !h->restart_binary) {
		reply(client, false, "out of memory\n");
		return;
	}
	h->restarting = true;
	h->reply = reply;
	h->client = client;
	if (h->giver) {
		/* the groups must hold only this process's sockets before a new one joins */
		log_info("restart: waiting for pid %d, which this process took over from, to exit",
			 (int)h->giver->pid);
		h->restart_waits = true;
		uv_timer_start(&h->restart_timer, on_restart_timer, TAKEOVER_SETTLE_WAIT_MS, 0);
		return;
	}
	restart_spawn(h);
}

/* ---- giving ---- */

static void give_abandon(takeover_t *h, const char *why)
{
	hconn_t *c = h->taker;
	assert(c && !h->handed); /* only a taker that has not said "go" is abandoned */
	log_warning("takeover by pid %d abandoned: %s; this process serves on as before",
		    (int)c->pid, why);
	uv_timer_stop(&h->go_timer);
	if (h->restarting && h->child_running && h->child == c->pid) {
		char body[600];
		snprintf(body, sizeof(body),
			 "the new process (pid %d) did not take over: %s; pid %d "
			 "serves on\n",
			 (int)c->pid, why, (int)getpid());
		restart_done(h, false, body);
	}
	conn_close(c);
	h->taker = NULL;
}

static void on_go_timer(uv_timer_t *t)
{
	give_abandon(t->data, "no \"go\" in time");
}

static void on_taker_readable(uv_poll_t *poll, int status, int events)
{
	hconn_t *c = poll->data;
	takeover_t *h = c->h;
	char err[256];
	bool kept = false;
	int rc = status < 0 ? SHOAL_EIO
			    : takeover_wire_read_go(c->fd, c->buf, sizeof(c->buf), &c->len, &kept,
						    err, sizeof(err));
	assert(h->taker == c && !h->handed); /* polled only until its "go" */
	if (rc == 0)
		return;
	if (rc < 0) {
		give_abandon(h, status < 0 ? uv_strerror(status) : err);
		return;
	}
	uv_timer_stop(&h->go_timer);
	uv_poll_stop(poll);
	if (h->stopping) {
		say(c->fd, "error\nthe server is stopping\n");
		give_abandon(h, "this process is stopping");
		return;
	}
	say(c->fd, "ok\n");
	h->handed = true;
	log_notice("handed over to pid %d; stopping once what this process holds is answered",
		   (int)c->pid);
	char text[64];
	snprintf(text, sizeof(text), "MAINPID=%d", (int)c->pid);
	if (systemd_send(text) < 0)
		log_warning("cannot tell the service manager \"%s\"", text);
	if (h->restarting) {
		char body[160];
		bool ours = h->child_running && h->child == c->pid;
		snprintf(body, sizeof(body), "%s pid %d serves now; pid %d stops\n",
			 ours ? "restarted:" : "another process took over first:", (int)c->pid,
			 (int)getpid());
		restart_done(h, ours, body);
	}
	h->env.handed(h->env.arg, c->pid, kept);
}

void takeover_give(void *arg, int fd, const char *version)
{
	MAIN_THREAD_ONLY();
	takeover_t *h = arg;
	char why[256] = "";
	pid_t pid = peer_pid(fd);
	if (strcmp(version, "1"))
		snprintf(why, sizeof(why), "takeover protocol %.20s is not spoken here (1 is)",
			 version);
	else if (h->stopping || h->handed)
		snprintf(why, sizeof(why), "the server is stopping");
	else if (h->taker)
		snprintf(why, sizeof(why), "the sockets are being handed to pid %d already",
			 (int)h->taker->pid);
	else if (h->giver)
		snprintf(why, sizeof(why),
			 "pid %d, which this server took over from, has not exited yet; try again "
			 "in a few seconds",
			 (int)h->giver->pid);
	if (why[0]) {
		char line[300];
		snprintf(line, sizeof(line), "error\n%s\n", why);
		say(fd, line);
		close(fd);
		log_notice("takeover by pid %d refused: %s", (int)pid, why);
		return;
	}
	log_info("takeover: pid %d asks for the sockets", (int)pid);
	char err[256];
	int cfd = h->control ? control_listen_fd(h->control) : -1;
	int rc = takeover_wire_send(fd, h->env.sockets, h->env.threads, cfd,
				    cfd >= 0 ? control_path(h->control) : NULL, err, sizeof(err));
	if (rc == 0 && !(h->taker = conn_new(h, fd, pid, on_taker_readable))) {
		snprintf(err, sizeof(err), "cannot watch the connection");
		rc = SHOAL_ENOMEM;
		fd = -1; /* conn_new closed it */
	}
	if (rc < 0) {
		log_warning("takeover by pid %d abandoned: %s; this process serves on", (int)pid,
			    err);
		if (fd >= 0)
			close(fd);
		return;
	}
	uv_timer_start(&h->go_timer, on_go_timer, TAKEOVER_GO_TIMEOUT_MS, 0);
}

/* ---- the giver's end ---- */

static void on_giver_readable(uv_poll_t *poll, int status, int events)
{
	hconn_t *c = poll->data;
	takeover_t *h = c->h;
	char b[64];
	ssize_t n = status < 0 ? -1 : recv(c->fd, b, sizeof(b), MSG_DONTWAIT);
	if (n > 0 || (n < 0 && status == 0 && (errno == EAGAIN || errno == EINTR)))
		return; /* nothing is expected; its end is what counts */
	assert(h->giver == c);
	pid_t pid = c->pid;
	conn_close(c);
	h->giver = NULL;
	log_info("takeover: pid %d has exited; its sockets are closed", (int)pid);
	h->env.giver_gone(h->env.arg, pid);
	if (h->restarting && h->restart_waits) {
		uv_timer_stop(&h->restart_timer);
		restart_spawn(h);
	}
}

void takeover_watch_giver(takeover_t *h, int fd, pid_t giver_pid)
{
	MAIN_THREAD_ONLY();
	assert(!h->giver); /* one takeover per process start */
	h->giver = conn_new(h, fd, giver_pid, on_giver_readable);
	if (!h->giver) {
		log_warning("takeover: cannot watch pid %d: treated as gone", (int)giver_pid);
		h->env.giver_gone(h->env.arg, giver_pid);
	}
}

/* ---- the whole ---- */

int takeover_new(takeover_t **out, const takeover_env_t *env)
{
	MAIN_THREAD_ONLY();
	takeover_t *h = calloc(1, sizeof(*h));
	if (!h)
		return SHOAL_ENOMEM;
	h->env = *env;
	ssize_t n = readlink("/proc/self/exe", h->exe, sizeof(h->exe) - 1);
	if (n <= 0 || (size_t)n >= sizeof(h->exe) - 1)
		snprintf(h->exe, sizeof(h->exe), "%s",
			 env->cfg->argv && env->cfg->argv[0] ? env->cfg->argv[0] : "shoald");
	else
		h->exe[n] = '\0';
	uv_timer_init(env->loop, &h->go_timer);
	uv_timer_init(env->loop, &h->restart_timer);
	h->go_timer.data = h->restart_timer.data = h;
	h->timers_open = 2;
	*out = h;
	return 0;
}

void takeover_set_control(takeover_t *h, control_t *control)
{
	MAIN_THREAD_ONLY();
	h->control = control;
}

void takeover_stopping(takeover_t *h)
{
	MAIN_THREAD_ONLY();
	h->stopping = true;
	if (h->restarting && !h->handed)
		restart_done(h, false, "the server is stopping\n");
}

static void on_timer_closed(uv_handle_t *handle)
{
	takeover_t *h = handle->data;
	assert(h->timers_open > 0);
	h->timers_open--;
}

void takeover_close(takeover_t *h)
{
	MAIN_THREAD_ONLY();
	if (!h)
		return;
	h->stopping = true;
	if (h->restarting)
		restart_done(h, false, "the server is stopping\n");
	conn_close(h->taker);
	h->taker = NULL;
	conn_close(h->giver);
	h->giver = NULL;
	/* a restart's process that took over runs on; one that did not exits by itself */
	if (h->child_running && !uv_is_closing((uv_handle_t *)&h->child_poll))
		uv_close((uv_handle_t *)&h->child_poll, on_child_closed);
	uv_close((uv_handle_t *)&h->go_timer, on_timer_closed);
	uv_close((uv_handle_t *)&h->restart_timer, on_timer_closed);
}

void takeover_free(takeover_t *h)
{
	free(h);
}
