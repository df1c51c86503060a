/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Accepting on a listening socket with uv_poll and accept4: pause on a shortage, never spin. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/net/acceptor.h"

static void on_readable(uv_poll_t *h, int status, int events);

static void set_reading(acceptor_t *a, bool want)
{
	if (want == a->reading)
		return;
	if (!want) {
		uv_poll_stop(&a->poll);
		a->reading = false;
		return;
	}
	if (uv_poll_start(&a->poll, UV_READABLE, on_readable) == 0)
		a->reading = true;
}

static void on_pause_over(uv_timer_t *t)
{
	acceptor_t *a = t->data;
	a->resting = false;
	if (a->held < 0)
		set_reading(a, true);
	else
		acceptor_resume(a);
}

/* The callee has no room for fd: keep it, and accept no more until acceptor_resume. */
static void hold(acceptor_t *a, int fd)
{
	if (a->closing) {
		close(fd); /* the callee closed us meanwhile */
		return;
	}
	assert(a->held < 0); /* one held at a time: nothing is accepted while one waits */
	a->held = fd;
	set_reading(a, false);
}

/* Rest a while: what failed was the process or the system, not a connection. */
static void rest(acceptor_t *a, int err)
{
	set_reading(a, false);
	a->resting = true;
	uv_timer_start(&a->pause_timer, on_pause_over, ACCEPTOR_PAUSE_MS, 0);
	if (a->paused)
		a->paused(a, err);
}

/*
 * Errors that belong to one connection and say nothing of the next:
 * accept(2) on Linux passes on network errors already pending on the new
 * socket, to be treated like EAGAIN; ECONNABORTED is a peer that gave up
 * while queued; EPERM is a firewall rule.
 */
static bool error_of_one_connection(int e)
{
	switch (e) {
	case EINTR:
	case ECONNABORTED:
	case EPROTO:
	case ENOPROTOOPT:
	case ENETDOWN:
	case ENETUNREACH:
	case EHOSTDOWN:
	case EHOSTUNREACH:
	case ENONET:
	case EOPNOTSUPP:
	case EPERM:
		return true;
	default:
		return false;
	}
}

static void on_readable(uv_poll_t *h, int status, int events)
{
	acceptor_t *a = h->data;
	(void)events;
	if (status < 0) {
		rest(a, status);
		return;
	}
	for (int i = 0; i < ACCEPTOR_BATCH && a->reading && !a->closing; i++) {
		int fd = accept4(a->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			if (!a->accepted(a, fd))
				hold(a, fd);
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (error_of_one_connection(errno))
			continue;
		/* EMFILE, ENFILE, ENOBUFS, ENOMEM, or worse: never retry at once */
		rest(a, -errno);
		return;
	}
}

int acceptor_init(acceptor_t *a, uv_loop_t *loop, int fd, acceptor_fn accepted,
		  acceptor_pause_fn paused)
{
	void *data = a->data;
	*a = (acceptor_t){
		.fd = fd, .held = -1, .accepted = accepted, .paused = paused, .data = data
	};
	int e = uv_poll_init_socket(loop, &a->poll, fd);
	if (e < 0)
		return e; /* libuv's: -errno */
	uv_timer_init(loop, &a->pause_timer);
	a->poll.data = a;
	a->pause_timer.data = a;
	a->handles_open = 2;
	set_reading(a, true);
	if (!a->reading)
		rest(a, UV_EINVAL); /* the timer tries again */
	return 0;
}

void acceptor_resume(acceptor_t *a)
{
	if (a->closing)
		return;
	if (a->held >= 0) {
		int fd = a->held;
		a->held = -1;
		if (!a->accepted(a, fd)) {
			hold(a, fd);
			return;
		}
	}
	if (!a->resting && !a->closing)
		set_reading(a, true);
}

static void on_handle_closed(uv_handle_t *h)
{
	acceptor_t *a = h->data;
	assert(a->handles_open > 0);
	if (--a->handles_open == 0 && a->closed)
		a->closed(a);
}

void acceptor_close(acceptor_t *a, void (*closed)(acceptor_t *a))
{
	if (a->closing)
		return;
	a->closing = true;
	a->closed = closed;
	/* uv_close takes the socket out of epoll at once, so it may close now */
	uv_close((uv_handle_t *)&a->poll, on_handle_closed);
	uv_close((uv_handle_t *)&a->pause_timer, on_handle_closed);
	close(a->fd);
	a->fd = -1;
	if (a->held >= 0)
		close(a->held);
	a->held = -1;
}
