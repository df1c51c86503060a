/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The Prometheus endpoint: a small HTTP/1.1 responder for GET /metrics, bounded in clients, size,
 * time, and open to the clients metrics-allow lists. */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/addr.h"
#include "server/common/log.h"
#include "server/ctl/metrics.h"
#include "server/net/acceptor.h"

#define METRICS_BACKLOG 16

/*
 * One connection: it sends one request head within METRICS_HEAD_TIMEOUT_MS
 * of being accepted, then gets one answer and the connection's end
 * (RFC 9112 9.6, "Connection: close") within METRICS_TIMEOUT_MS.
 */
typedef struct metrics_client {
	uv_tcp_t tcp;
	uv_timer_t timer;
	uv_write_t write_req;
	uv_shutdown_t shutdown_req;
	metrics_t *m;
	struct metrics_client *next;
	char head[METRICS_REQUEST_MAX + 1];
	size_t len;
	bool answered; /* the answer is queued: what is read now is dropped */
	bool writing;  /* the answer is being written: not idle */
	bool closing;
	uint8_t closes_pending;
	uint8_t ip_len; /* the client's address: 4 or 16 octets of ip */
	uint8_t ip[16];
	char *reply;
} metrics_client_t;

struct metrics {
	metrics_env_t env;
	acceptor_t accept;
	bool accepting; /* accept is initialised */
	bool pause_logged;
	char text[sizeof(((listen_addr_t *)0)->text)];
	addr_prefix_list_t allow;  /* the clients answered (metrics-allow, or loopback) */
	metrics_client_t *clients; /* the newest first */
	size_t client_count;       /* in the list, closing or not */
	size_t closing;            /* of them, closing: their slots come back soon */
};

static void on_client_closed(uv_handle_t *h)
{
	metrics_client_t *c = h->data;
	metrics_t *m = c->m;
	if (--c->closes_pending > 0)
		return;
	for (metrics_client_t **p = &m->clients; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	m->client_count--;
	m->closing--;
	free(c->reply);
	free(c);
	if (m->accepting)
		acceptor_resume(&m->accept); /* a connection may wait for the slot */
}

static void client_close(metrics_client_t *c)
{
	if (c->closing)
		return;
	c->closing = true;
	c->m->closing++;
	uv_close((uv_handle_t *)&c->tcp, on_client_closed);
	uv_close((uv_handle_t *)&c->timer, on_client_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
	(void)req;
	(void)status; /* the client closes on our FIN; the timer bounds the wait */
}

static void on_written(uv_write_t *req, int status)
{
	metrics_client_t *c = req->data;
	c->writing = false;
	if (status < 0 || c->closing) {
		client_close(c);
		return;
	}
	/* our FIN; read on (and drop) until the client's, so nothing resets the answer */
	c->shutdown_req.data = c;
	if (uv_shutdown(&c->shutdown_req, (uv_stream_t *)&c->tcp, on_shutdown) < 0)
		client_close(c);
}

/*
 * Queue the answer: status line, the header fields, and body[0..len) unless
 * head_only (HEAD). The client's read goes on only to see its end.
 */
static void respond(metrics_client_t *c, const char *status, const char *extra, const char *body,
		    size_t len, bool head_only)
{
	c->answered = true;
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %s\r\nContent-Type: " METRICS_CONTENT_TYPE
			 "\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
			 status, len, extra);
	size_t total = (size_t)n + (head_only ? 0 : len);
	if (!(c->reply = malloc(total))) {
		client_close(c);
		return;
	}
	memcpy(c->reply, head, (size_t)n);
	if (!head_only)
		memcpy(c->reply + n, body, len);
	uv_buf_t buf = uv_buf_init(c->reply, (unsigned)total);
	c->write_req.data = c;
	c->writing = true;
	if (uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &buf, 1, on_written) < 0)
		client_close(c);
}

/* An error answer: the status line's text is also the body. */
static void respond_error(metrics_client_t *c, const char *status, const char *extra)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%s\n", status);
	c->answered = true;
	char head[256];
	int h = snprintf(head, sizeof(head),
			 "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s"
			 "Connection: close\r\n\r\n%s",
			 status, n, extra, body);
	if (!(c->reply = strdup(head))) {
		client_close(c);
		return;
	}
	uv_buf_t buf = uv_buf_init(c->reply, (unsigned)h);
	c->write_req.data = c;
	c->writing = true;
	if (uv_write(&c->write_req, (uv_stream_t *)&c->tcp, &buf, 1, on_written) < 0)
		client_close(c);
}

/*
 * The request head is whole: its request line (RFC 9112 3) decides.
 * Header fields are not needed and not read.
 */
static void on_request(metrics_client_t *c)
{
	char *line = c->head;
	line[strcspn(line, "\r\n")] = '\0';
	char *method = strtok(line, " "), *target = strtok(NULL, " ");
	char *version = strtok(NULL, " "), *more = strtok(NULL, " ");
	if (!method || !target || !version || more || strncmp(version, "HTTP/1.", 7)) {
		respond_error(c, "400 Bad Request", "");
		return;
	}
	bool head_only = !strcmp(method, "HEAD");
	if (strcmp(method, "GET") && !head_only) {
		respond_error(c, "405 Method Not Allowed", "Allow: GET, HEAD\r\n");
		return;
	}
	target[strcspn(target, "?")] = '\0'; /* a query string changes nothing */
	if (strcmp(target, "/metrics")) {
		respond_error(c, "404 Not Found", "");
		return;
	}
	char *body = NULL;
	size_t len = 0;
	if (workers_stats_render(c->m->env.workers, c->m->env.zones, STATS_FORMAT_PROMETHEUS, &body,
				 &len) < 0) {
		respond_error(c, "503 Service Unavailable", "");
		return;
	}
	respond(c, "200 OK", "", body, len, head_only);
	free(body);
}

static void on_client_timeout(uv_timer_t *t);

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)suggested;
	metrics_client_t *c = h->data;
	if (c->answered)
		c->len = 0; /* after the answer, reads are only dropped */
	*buf = uv_buf_init(c->head + c->len, (unsigned)(METRICS_REQUEST_MAX - c->len));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	(void)buf;
	metrics_client_t *c = s->data;
	if (n < 0) {
		client_close(c); /* the client's end, or an error */
		return;
	}
	if (c->answered || n == 0)
		return;
	c->len += (size_t)n;
	c->head[c->len] = '\0';
	bool whole = strstr(c->head, "\r\n\r\n") || strstr(c->head, "\n\n");
	if (!whole && c->len < METRICS_REQUEST_MAX)
		return;
	/* the head is in: the answer and the connection's end have their own time */
	uv_timer_start(&c->timer, on_client_timeout, METRICS_TIMEOUT_MS, 0);
	if (whole)
		on_request(c);
	else
		respond_error(c, "431 Request Header Fields Too Large", "");
}

static void on_client_timeout(uv_timer_t *t)
{
	client_close(t->data);
}

/* The peer's address of the connection fd, as addr_octets gives it. Returns false when it is gone.
 */
static bool peer_ip(int fd, uint8_t ip[16], uint8_t *ip_len)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	const uint8_t *octets;
	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
		return false;
	*ip_len = (uint8_t)addr_octets((const struct sockaddr *)&ss, &octets);
	memcpy(ip, octets, *ip_len);
	return true;
}

/*
 * The client that gives way to a new one from ip, or NULL when none has
 * to. One address may hold METRICS_PER_ADDRESS_MAX slots: past them its
 * own client idle the longest gives way (*refuse when none is idle: the
 * new one is refused). With every slot taken, the client idle the longest
 * gives way (none idle: the new one waits). Idle: not writing an answer.
 */
static metrics_client_t *make_room(metrics_t *m, const uint8_t *ip, size_t ip_len, bool *refuse)
{
	size_t same = 0;
	metrics_client_t *own_idle = NULL, *any_idle = NULL;
	*refuse = false;
	/* the list is newest first: the last idle one seen is the oldest */
	for (metrics_client_t *c = m->clients; c; c = c->next) {
		if (c->closing)
			continue;
		bool ours = c->ip_len == ip_len && !memcmp(c->ip, ip, ip_len);
		same += ours;
		if (!c->writing && ours)
			own_idle = c;
		if (!c->writing)
			any_idle = c;
	}
	if (same >= METRICS_PER_ADDRESS_MAX) {
		*refuse = !own_idle;
		return own_idle;
	}
	return m->client_count >= METRICS_CLIENTS_MAX ? any_idle : NULL;
}

/*
 * A client not on the allow list is closed at once; one over its
 * address's share or past every slot first makes room (make_room), and
 * waits in the acceptor for the slot its victim leaves.
 */
static bool on_client_accepted(acceptor_t *a, int fd)
{
	metrics_t *m = a->data;
	uint8_t ip[16] = { 0 }, ip_len = 0;
	if (!peer_ip(fd, ip, &ip_len) || !addr_prefix_list_match(&m->allow, ip, ip_len)) {
		char text[INET6_ADDRSTRLEN];
		log_debug("metrics %s: a client from %s is not in metrics-allow: closed", m->text,
			  ip_len ? addr_ip_text(ip, ip_len, text, sizeof(text))
				 : "an address gone");
		close(fd);
		return true;
	}
	bool refuse;
	metrics_client_t *victim = make_room(m, ip, ip_len, &refuse);
	if (refuse) {
		close(fd); /* its address's share is busy answering */
		return true;
	}
	if (victim || m->client_count >= METRICS_CLIENTS_MAX) {
		/* one slot at a time: the next victim once this one's slot is back */
		if (victim && !m->closing)
			client_close(victim);
		return false;
	}
	m->pause_logged = false;
	metrics_client_t *c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return true;
	}
	c->m = m;
	c->tcp.data = c;
	c->timer.data = c;
	memcpy(c->ip, ip, ip_len);
	c->ip_len = ip_len;
	uv_tcp_init(m->env.loop, &c->tcp);
	uv_timer_init(m->env.loop, &c->timer);
	c->closes_pending = 2;
	c->next = m->clients;
	m->clients = c;
	m->client_count++;
	if (uv_tcp_open(&c->tcp, fd) < 0) {
		close(fd); /* the handle did not take it */
		client_close(c);
		return true;
	}
	uv_timer_start(&c->timer, on_client_timeout, METRICS_HEAD_TIMEOUT_MS, 0);
	if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0)
		client_close(c);
	return true;
}

static void on_accept_paused(acceptor_t *a, int err)
{
	metrics_t *m = a->data;
	if (m->pause_logged)
		return;
	m->pause_logged = true; /* once until a client gets in again */
	log_warning("metrics %s: accept: %s; trying again every %u ms", m->text, uv_strerror(err),
		    ACCEPTOR_PAUSE_MS);
}

/* A listening TCP socket on addr, non-blocking. Returns it, or -errno. */
static int listen_on(const listen_addr_t *addr)
{
	int fd = socket(addr->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	/* a restart binds again while the last connections are in TIME_WAIT */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&addr->addr, addr->addr_len) < 0 ||
	    listen(fd, METRICS_BACKLOG) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

int metrics_open(metrics_t **out, const metrics_env_t *env, const listen_addr_t *addr, char *err,
		 size_t errlen)
{
	metrics_t *m = calloc(1, sizeof(*m));
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return SHOAL_ENOMEM;
	}
	m->env = *env;
	m->allow = env->allow;
	if (!m->allow.count) {
		/* loopback only: 127.0.0.0/8 and ::1 */
		addr_prefix_parse("127.0.0.0/8", &m->allow.items[0]);
		addr_prefix_parse("::1", &m->allow.items[1]);
		m->allow.count = 2;
	}
	snprintf(m->text, sizeof(m->text), "%s", addr->text);
	*out = m;
	int fd = listen_on(addr);
	if (fd < 0) {
		snprintf(err, errlen, "metrics %s: %s", addr->text, shoal_strerror(fd));
		return fd;
	}
	m->accept.data = m;
	int rc = acceptor_init(&m->accept, env->loop, fd, on_client_accepted, on_accept_paused);
	if (rc < 0) {
		close(fd);
		snprintf(err, errlen, "metrics %s: %s", addr->text, shoal_strerror(rc));
		return rc;
	}
	m->accepting = true;
	log_info("metrics: GET /metrics on %s (TCP)", addr->text);
	return 0;
}

void metrics_warn_reach(const listen_addr_t *addr, const addr_prefix_list_t *allow)
{
	if (!addr->addr_len || addr_is_loopback((const struct sockaddr *)&addr->addr))
		return;
	char list[512] = "";
	for (size_t i = 0; i < allow->count; i++) {
		char one[INET6_ADDRSTRLEN + 8];
		addr_prefix_text(&allow->items[i], one, sizeof(one));
		size_t len = strlen(list);
		snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "", one);
	}
	if (allow->count)
		log_warning("metrics %s: reachable from other hosts; clients of %s are answered "
			    "(metrics-allow): the counters name the zones served",
			    addr->text, list);
	else
		log_warning("metrics %s: reachable from other hosts; only loopback clients are "
			    "answered until metrics-allow lists the scrapers' networks",
			    addr->text);
}

void metrics_close(metrics_t *m)
{
	if (!m)
		return;
	for (metrics_client_t *c = m->clients; c; c = c->next)
		client_close(c);
	if (m->accepting)
		acceptor_close(&m->accept, NULL);
	m->accepting = false;
}

void metrics_free(metrics_t *m)
{
	free(m);
}
