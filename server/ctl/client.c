/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Bounded clients of a stream listener: the list, the counts, two handles closed, accept resumed.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "server/common/log.h"
#include "server/ctl/client.h"

void client_set_init(client_set_t *set, uv_loop_t *loop, enum client_stream stream,
		     size_t client_size, const char *name, void *data)
{
	*set = (client_set_t){
		.loop = loop, .stream = stream, .client_size = client_size, .data = data
	};
	snprintf(set->name, sizeof(set->name), "%s", name);
}

static void on_accept_paused(acceptor_t *a, int err)
{
	client_set_t *set = a->data;
	if (set->pause_logged)
		return;
	set->pause_logged = true; /* once until a client gets in again */
	log_warning("%s: accept: %s; trying again every %u ms", set->name, uv_strerror(err),
		    ACCEPTOR_PAUSE_MS);
}

int client_set_listen(client_set_t *set, int fd, acceptor_fn accepted)
{
	set->accept.data = set;
	int rc = acceptor_init(&set->accept, set->loop, fd, accepted, on_accept_paused);
	if (rc == 0)
		set->accepting = true;
	return rc;
}

/* Both handles closed: out of the list, freed, and its room offered to the acceptor. */
static void on_client_closed(uv_handle_t *h)
{
	client_t *c = h->data;
	client_set_t *set = c->set;
	if (--c->closes_pending > 0)
		return;
	for (client_t **p = &set->clients; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	set->count--;
	set->closing--;
	free(c->reply);
	free(c);
	if (set->accepting)
		acceptor_resume(&set->accept); /* a connection may wait for the room */
}

void client_close(client_t *c)
{
	if (c->closing)
		return;
	c->closing = true;
	c->set->closing++;
	uv_close((uv_handle_t *)&c->conn, on_client_closed);
	uv_close((uv_handle_t *)&c->timer, on_client_closed);
}

client_t *client_add(client_set_t *set, int fd)
{
	set->pause_logged = false;
	client_t *c = calloc(1, set->client_size);
	if (!c) {
		close(fd);
		return NULL;
	}
	c->set = set;
	c->conn.stream.data = c;
	c->timer.data = c;
	if (set->stream == CLIENT_PIPE)
		uv_pipe_init(set->loop, &c->conn.pipe, 0);
	else
		uv_tcp_init(set->loop, &c->conn.tcp);
	uv_timer_init(set->loop, &c->timer);
	c->closes_pending = 2;
	c->next = set->clients;
	set->clients = c;
	set->count++;
	int rc = set->stream == CLIENT_PIPE ? uv_pipe_open(&c->conn.pipe, fd)
					    : uv_tcp_open(&c->conn.tcp, fd);
	if (rc < 0) {
		close(fd); /* the handle did not take it */
		client_close(c);
		return NULL;
	}
	return c;
}

int client_send(client_t *c, char *buf, size_t len, uv_write_cb written)
{
	if (!buf) {
		client_close(c);
		return UV_ENOMEM;
	}
	c->reply = buf;
	uv_buf_t b = uv_buf_init(buf, (unsigned)len);
	c->write_req.data = c;
	int rc = uv_write(&c->write_req, &c->conn.stream, &b, 1, written);
	if (rc < 0)
		client_close(c);
	return rc;
}

void client_set_unlisten(client_set_t *set)
{
	if (set->accepting)
		acceptor_close(&set->accept, NULL);
	set->accepting = false;
}

void client_set_close(client_set_t *set)
{
	for (client_t *c = set->clients; c; c = c->next)
		client_close(c);
	client_set_unlisten(set);
}
