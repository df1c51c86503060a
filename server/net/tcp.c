/* SPDX-License-Identifier: GPL-3.0-or-later */
/* DNS over TCP for one worker: the listeners, the connection pool, accepting, eviction, start and
 * stop. */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/net/internal.h"

static void server_serve_waiting(tcp_server_t *t);
static void server_maybe_finish(tcp_server_t *t);

/* ---- the pool ---- */

static tcp_conn_t *pool_take(tcp_server_t *t)
{
	tcp_conn_t *c = t->free_list;
	if (c) {
		assert(t->in_use < t->lim.max_connections);
		t->free_list = c->next;
		c->next = NULL;
		t->in_use++;
	}
	return c;
}

void tcp_pool_release(tcp_conn_t *c)
{
	tcp_server_t *t = c->srv;
	/* back only once closed, both handles (tcp_conn_close counted it closing) */
	assert(c->closing && c->closes_pending == 0);
	assert(t->in_use > 0 && t->closing > 0);
	for (int i = 0; i < 2; i++) {
		c->out[i].len = 0;
		c->out[i].answers = 0;
	}
	c->in_len = 0;
	tcp_conn_trim(c);
	c->flight = 0;
	c->writing = c->reading = c->eof = c->timing_message = false;
	c->shut = c->closing = c->got_input = c->stop_grace = c->opened = c->io_open = false;
	if (c->counted)
		addrlimit_give(t->addresses, (const struct sockaddr *)&c->peer);
	c->counted = false;
	c->next = t->free_list;
	t->free_list = c;
	t->in_use--;
	t->closing--;
	if (t->stopping)
		server_maybe_finish(t);
	else
		server_serve_waiting(t);
}

/* ---- accepting ---- */

/* fd, from peer, was accepted into slot c: set the slot up and start serving it. */
static void conn_accept(tcp_server_t *t, tcp_conn_t *c, int fd, const struct sockaddr_storage *peer,
			bool counted)
{
	c->peer = *peer;
	c->client = (acl_client_t){ .addr = (const struct sockaddr *)&c->peer };
	c->counted = counted;
	uv_timer_init(t->loop, &c->timer);
	c->timer.data = c;
	c->write_req.data = c;
	c->shutdown_req.data = c;
	tcp_active_append(t, c);
	if (!c->in && (c->in = malloc(TCP_BUF_KEEP)) != NULL)
		c->in_cap = TCP_BUF_KEEP;
	stats_add(&t->stats->accepted, 1);
	if (!c->in) {
		close(fd);
		tcp_conn_close(c,
			       NULL); /* no I/O handle yet: the timer's close releases the slot */
		return;
	}
	/* the I/O handle is made by open, which closes fd and the connection on failure */
	t->io->open(c, fd);
}

/*
 * Make room for the waiting listeners: close the connection idle the longest,
 * else the least recently active one. Their slots come back in the close
 * callbacks (next loop turn), which hand them to the waiting listeners.
 */
static void server_make_room(tcp_server_t *t)
{
	while (t->closing < t->waiting) {
		tcp_conn_t *victim = NULL;
		for (tcp_conn_t *c = t->active_head; c; c = c->next)
			if (tcp_conn_idle(c)) {
				victim = c;
				break;
			}
		if (!victim)
			victim = t->active_head;
		if (!victim)
			return;
		tcp_conn_close(victim, &t->stats->closed_limit);
	}
}

/* Slots are free: hand them to the listeners holding a connection. */
static void server_serve_waiting(tcp_server_t *t)
{
	for (size_t i = 0; i < t->n_listeners && t->waiting > 0 && t->free_list; i++) {
		tcp_listener_t *l = &t->listeners[i];
		if (!l->waiting)
			continue;
		l->waiting = false;
		t->waiting--;
		acceptor_resume(&l->acc); /* takes a slot in on_accepted */
	}
	server_make_room(t);
}

static bool on_accepted(acceptor_t *a, int fd)
{
	tcp_listener_t *l = a->data;
	tcp_server_t *t = l->srv;
	struct sockaddr_storage peer;
	socklen_t plen = sizeof(peer);
	if (getpeername(fd, (struct sockaddr *)&peer, &plen) != 0) {
		close(fd); /* gone already (ENOTCONN) */
		return true;
	}
	/* an address at its limit takes no slot and closes no one else's connection */
	bool counted = t->addresses != NULL;
	if (counted && !addrlimit_take(t->addresses, (const struct sockaddr *)&peer)) {
		close(fd);
		stats_add(&t->stats->refused_per_address, 1);
		return true;
	}
	tcp_conn_t *c = pool_take(t);
	if (c) {
		conn_accept(t, c, fd, &peer, counted);
		return true;
	}
	/* offered again when a slot frees: counted again then */
	if (counted)
		addrlimit_give(t->addresses, (const struct sockaddr *)&peer);
	/* The acceptor keeps the connection and stops accepting until a slot
	 * frees (server_serve_waiting). */
	if (!l->waiting) {
		l->waiting = true;
		t->waiting++;
	}
	server_make_room(t);
	return false;
}

/* accept failed for want of descriptors or memory: the listener rests. */
static void on_accept_paused(acceptor_t *a, int err)
{
	tcp_listener_t *l = a->data;
	(void)err;
	stats_add(&l->srv->stats->accept_paused, 1);
}

/* ---- the server ---- */

static void server_free(tcp_server_t *t)
{
	if (t->conns) {
		for (size_t i = 0; i < t->lim.max_connections; i++) {
			free(t->conns[i].in);
			free(t->conns[i].out[0].data);
			free(t->conns[i].out[1].data);
		}
	}
	free(t->conns);
	free(t->listeners);
	free(t->scratch);
	free(t);
}

static void server_handle_closed(tcp_server_t *t)
{
	assert(t->handles_open > 0);
	t->handles_open--;
	server_maybe_finish(t);
}

static void on_stop_timer_closed(uv_handle_t *h)
{
	server_handle_closed(h->data);
}

static void on_listener_closed(acceptor_t *a)
{
	tcp_listener_t *l = a->data;
	server_handle_closed(l->srv);
}

/* When stopping: once every connection is gone, close the stop timer; once
 * every handle is closed, free and report. */
static void server_maybe_finish(tcp_server_t *t)
{
	if (!t->stopping || t->in_use > 0)
		return;
	if (!t->stop_timer_closing) {
		t->stop_timer_closing = true;
		uv_close((uv_handle_t *)&t->stop_timer, on_stop_timer_closed);
		return;
	}
	if (t->handles_open > 0)
		return;
	void (*done)(void *) = t->done;
	void *arg = t->done_arg;
	server_free(t);
	if (done)
		done(arg);
}

static int limits_check(tcp_limits_t *lim, bool tls)
{
	if (lim->max_connections == 0 || lim->max_pipelined == 0 || lim->idle_timeout_ms == 0 ||
	    lim->message_timeout_ms == 0)
		return SHOAL_EINVAL;
	if (tls && (lim->handshake_timeout_ms == 0 || lim->max_handshakes == 0))
		return SHOAL_EINVAL;
	/* one whole answer must always fit in the queue */
	if (lim->max_output < TCP_FRAME_MAX)
		lim->max_output = TCP_FRAME_MAX;
	return 0;
}

/* A socket we can serve: a listening TCP stream socket. */
static int listener_fd_check(int fd)
{
	int type = 0, listening = 0;
	socklen_t len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
		return SHOAL_EINVAL;
	len = sizeof(listening);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
		return SHOAL_EINVAL;
	return 0;
}

int tcp_server_start(uv_loop_t *loop, const int *fds, size_t n, const tcp_limits_t *limits,
		     tcp_answer_fn answer, void *arg, tcp_stats_t *stats, const tcp_tls_t *tls,
		     tcp_server_t **out)
{
	if (!loop || (!fds && n > 0) || !limits || !answer || !stats || !out ||
	    (tls && (!tls->ctx || !tls->stats)))
		return SHOAL_EINVAL;
	tcp_limits_t lim = *limits;
	int err = limits_check(&lim, tls != NULL);
	for (size_t i = 0; err == 0 && i < n; i++)
		err = listener_fd_check(fds[i]);
	if (err)
		return err;

	tcp_server_t *t = calloc(1, sizeof(*t));
	if (!t)
		return SHOAL_ENOMEM;
	t->loop = loop;
	t->io = tls ? &tcp_io_tls : &tcp_io_tcp;
	t->tls = tls ? tls->ctx : NULL;
	t->tls_stats = tls ? tls->stats : NULL;
	t->lim = lim;
	t->answer = answer;
	t->arg = arg;
	t->stats = stats;
	t->conns = calloc(lim.max_connections, sizeof(*t->conns));
	t->listeners = calloc(n ? n : 1, sizeof(*t->listeners));
	t->scratch = malloc(TCP_FRAME_MAX);
	if (!t->conns || !t->listeners || !t->scratch) {
		server_free(t);
		return SHOAL_ENOMEM;
	}
	for (size_t i = lim.max_connections; i-- > 0;) {
		t->conns[i].srv = t;
		t->conns[i].next = t->free_list;
		t->free_list = &t->conns[i];
	}

	uv_timer_init(loop, &t->stop_timer);
	t->stop_timer.data = t;
	t->handles_open = 1;
	for (size_t i = 0; i < n; i++) {
		tcp_listener_t *l = &t->listeners[i];
		l->srv = t;
		l->acc.data = l;
		err = acceptor_init(&l->acc, loop, fds[i], on_accepted, on_accept_paused);
		if (err) {
			fprintf(stderr, "tcp: cannot serve socket %d\n", fds[i]);
			for (size_t j = i; j < n; j++)
				close(fds[j]);
			break;
		}
		t->handles_open++;
		t->n_listeners++;
	}
	if (err) {
		/* The handles exist, so they must close before the memory goes:
		 * a stop with no connections does exactly that. */
		tcp_server_stop(t, NULL, NULL);
		return err;
	}
	*out = t;
	return 0;
}

/* The stop took too long: close what is left, answered or not. */
static void on_stop_timer(uv_timer_t *timer)
{
	tcp_server_t *t = timer->data;
	while (t->active_head)
		tcp_conn_close(t->active_head, NULL);
}

void tcp_server_stop(tcp_server_t *t, void (*done)(void *arg), void *arg)
{
	if (!t || t->stopping)
		return;
	t->stopping = true;
	t->done = done;
	t->done_arg = arg;
	for (size_t i = 0; i < t->n_listeners; i++)
		acceptor_close(&t->listeners[i].acc, on_listener_closed);
	t->waiting = 0;
	/* Connections finish what they have read, then shut down; the stop
	 * timer bounds a peer that keeps sending or never reads. A TLS
	 * connection still in its handshake goes on with it: its client
	 * connected to this process and will ask here (a takeover loses
	 * nothing); once open, it is served as tcp_conn_open says. */
	for (tcp_conn_t *c = t->active_head, *next; c; c = next) {
		next = c->next;
		if (c->opened)
			tcp_conn_advance(c, false);
	}
	if (t->in_use > 0)
		uv_timer_start(&t->stop_timer, on_stop_timer,
			       t->lim.message_timeout_ms < TCP_STOP_MAX_MS
				       ? t->lim.message_timeout_ms
				       : TCP_STOP_MAX_MS,
			       0);
	server_maybe_finish(t);
}

void tcp_server_resume(tcp_server_t *t)
{
	/* each once: one that waits again goes to the tail, one that closes leaves the list */
	for (size_t n = t ? t->streams_waiting : 0; n > 0 && t->wait_head; n--) {
		tcp_conn_t *c = t->wait_head;
		tcp_waiting_remove(t, c);
		tcp_conn_advance(c, false);
	}
}

void tcp_server_set_special(tcp_server_t *t, tcp_special_fn fn)
{
	t->special = fn;
}

void tcp_server_limit_addresses(tcp_server_t *t, addrlimit_t *a)
{
	t->addresses = a;
}

size_t tcp_server_connections(const tcp_server_t *t)
{
	return t ? t->in_use - t->closing : 0;
}

int tcp_migrate_req_state(void)
{
	/* Linux 5.14+, per network namespace (ip-sysctl.rst, tcp_migrate_req) */
	int fd = open("/proc/sys/net/ipv4/tcp_migrate_req", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return SHOAL_ENOTFOUND;
	char b[8] = { 0 };
	ssize_t r = read(fd, b, sizeof(b) - 1);
	close(fd);
	if (r <= 0)
		return SHOAL_EIO;
	return b[0] == '0' ? 0 : 1;
}
