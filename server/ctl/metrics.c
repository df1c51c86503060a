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
#include "server/common/mainthread.h"
#include "server/ctl/client.h"
#include "server/ctl/metrics.h"

#define METRICS_BACKLOG 16

/*
 * One connection: it sends one request head within METRICS_HEAD_TIMEOUT_MS
 * of being accepted, then gets one answer and the connection's end
 * (RFC 9112 9.6, "Connection: close") within METRICS_TIMEOUT_MS.
 */
typedef struct metrics_client {
	client_t base; /* first: the handles' data */
	uv_shutdown_t shutdown_req;
	metrics_t *m;
	char head[METRICS_REQUEST_MAX + 1];
	size_t len;
	bool answered;  /* the answer is queued: what is read now is dropped */
	bool writing;   /* the answer is being written: not idle */
	uint8_t ip_len; /* the client's address: 4 or 16 octets of ip */
	uint8_t ip[16];
} metrics_client_t;

struct metrics {
	metrics_env_t env;
	char text[sizeof(((listen_addr_t *)0)->text)];
	addr_prefix_list_t allow; /* the clients answered (metrics-allow, or loopback) */
	client_set_t clients;     /* the newest first */
};

static void on_shutdown(uv_shutdown_t *req, int status)
{
	(void)req;
	(void)status; /* the client closes on our FIN; the timer bounds the wait */
}

static void on_written(uv_write_t *req, int status)
{
	metrics_client_t *c = req->data;
	c->writing = false;
	if (status < 0 || c->base.closing) {
		client_close(&c->base);
		return;
	}
	/* our FIN; read on (and drop) until the client's, so nothing resets the answer */
	c->shutdown_req.data = c;
	if (uv_shutdown(&c->shutdown_req, &c->base.conn.stream, on_shutdown) < 0)
		client_close(&c->base);
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
	char *reply = malloc(total);
	if (reply) {
		memcpy(reply, head, (size_t)n);
		if (!head_only)
			memcpy(reply + n, body, len);
	}
	c->writing = true;
	client_send(&c->base, reply, total, on_written);
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
	c->writing = true;
	client_send(&c->base, strdup(head), (size_t)h, on_written);
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
	const metrics_env_t *env = &c->m->env;
	if (workers_stats_render(env->workers, env->zones, env->counters, sched_secondaries,
				 env->sched, STATS_FORMAT_PROMETHEUS, &body, &len) < 0) {
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
		client_close(&c->base); /* the client's end, or an error */
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
	uv_timer_start(&c->base.timer, on_client_timeout, METRICS_TIMEOUT_MS, 0);
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
	for (client_t *b = m->clients.clients; b; b = b->next) {
		metrics_client_t *c = (metrics_client_t *)b;
		if (b->closing)
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
	return m->clients.count >= METRICS_CLIENTS_MAX ? any_idle : NULL;
}

/*
 * A client not on the allow list is closed at once; one over its
 * address's share or past every slot first makes room (make_room), and
 * waits in the acceptor for the slot its victim leaves.
 */
static bool on_client_accepted(acceptor_t *a, int fd)
{
	client_set_t *set = a->data;
	metrics_t *m = set->data;
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
	if (victim || set->count >= METRICS_CLIENTS_MAX) {
		/* one slot at a time: the next victim once this one's slot is back */
		if (victim && !set->closing)
			client_close(&victim->base);
		return false;
	}
	metrics_client_t *c = (metrics_client_t *)client_add(set, fd);
	if (!c)
		return true;
	c->m = m;
	memcpy(c->ip, ip, ip_len);
	c->ip_len = ip_len;
	uv_timer_start(&c->base.timer, on_client_timeout, METRICS_HEAD_TIMEOUT_MS, 0);
	if (uv_read_start(&c->base.conn.stream, on_alloc, on_read) < 0)
		client_close(&c->base);
	return true;
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
	MAIN_THREAD_ONLY();
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
	char name[sizeof(m->clients.name)];
	snprintf(name, sizeof(name), "metrics %s", addr->text);
	client_set_init(&m->clients, env->loop, CLIENT_TCP, sizeof(metrics_client_t), name, m);
	*out = m;
	int fd = listen_on(addr);
	if (fd < 0) {
		snprintf(err, errlen, "metrics %s: %s", addr->text, shoal_strerror(fd));
		return fd;
	}
	int rc = client_set_listen(&m->clients, fd, on_client_accepted);
	if (rc < 0) {
		close(fd);
		snprintf(err, errlen, "metrics %s: %s", addr->text, shoal_strerror(rc));
		return rc;
	}
	log_info("metrics: GET /metrics on %s (TCP)", addr->text);
	return 0;
}

void metrics_warn_reach(const listen_addr_t *addr, const addr_prefix_list_t *allow)
{
	MAIN_THREAD_ONLY();
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
	MAIN_THREAD_ONLY();
	if (!m)
		return;
	client_set_close(&m->clients);
}

void metrics_free(metrics_t *m)
{
	free(m);
}
