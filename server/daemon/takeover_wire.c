/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The socket takeover's records: sockets with SCM_RIGHTS on the control socket, both sides. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/common/mainthread.h"
#include "server/conf/conf.h"
#include "server/daemon/takeover_wire.h"

/* A record's text: an address, a worker, a control path (a sun_path, 108 octets at most). */
#define RECORD_MAX 512
static_assert(RECORD_MAX <= UINT16_MAX, "a record's length fits its two octets");
static_assert(RECORD_MAX > sizeof("control ") + sizeof(((struct sockaddr_un *)0)->sun_path),
	      "a control record fits");

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until fd is ready for `events`, at most until deadline. Returns 0 or -errno. */
static int wait_ready(int fd, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd p = { fd, events, 0 };
		int n = poll(&p, 1, (int)left);
		if (n > 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Send all of buf, with pass (>= 0) attached to its first octet. Returns 0 or -errno. */
static int send_whole(int fd, const void *buf, size_t len, int pass, int64_t deadline)
{
	const char *p = buf;
	while (len > 0) {
		union {
			struct cmsghdr h;
			char space[CMSG_SPACE(sizeof(int))];
		} ctl;
		struct iovec iov = { (void *)p, len };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
		if (pass >= 0) {
			memset(&ctl, 0, sizeof(ctl));
			m.msg_control = ctl.space;
			m.msg_controllen = sizeof(ctl.space);
			struct cmsghdr *c = CMSG_FIRSTHDR(&m);
			c->cmsg_level = SOL_SOCKET;
			c->cmsg_type = SCM_RIGHTS;
			c->cmsg_len = CMSG_LEN(sizeof(int));
			memcpy(CMSG_DATA(c), &pass, sizeof(int));
		}
		ssize_t n = sendmsg(fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			pass = -1; /* the descriptor went with the first octets */
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int rc = wait_ready(fd, POLLOUT, deadline);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * Receive exactly len octets into buf. A descriptor that comes with them is
 * stored in *got (when got is not NULL and none is stored yet) and closed
 * otherwise: nothing received is left open by accident. Returns 0, SHOAL_EIO
 * at the end of the stream, or -errno.
 */
static int recv_whole(int fd, void *buf, size_t len, int *got, int64_t deadline)
{
	char *p = buf;
	while (len > 0) {
		union {
			struct cmsghdr h;
			char space[CMSG_SPACE(4 * sizeof(int))];
		} ctl;
		struct iovec iov = { p, len };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = ctl.space,
				    .msg_controllen = sizeof(ctl.space) };
		ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (n > 0) {
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
				if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
					continue;
				size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				for (size_t i = 0; i < count; i++) {
					int d;
					memcpy(&d, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
					if (got && *got < 0)
						*got = d;
					else
						close(d);
				}
			}
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0)
			return SHOAL_EIO;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int rc = wait_ready(fd, POLLIN, deadline);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One record: its length, its text, and pass (>= 0) with them. */
static int send_record(int fd, int pass, int64_t deadline, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int send_record(int fd, int pass, int64_t deadline, const char *fmt, ...)
{
	char rec[2 + RECORD_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(rec + 2, RECORD_MAX, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= RECORD_MAX)
		return SHOAL_ESPACE;
	rec[0] = (char)(n >> 8);
	rec[1] = (char)n;
	return send_whole(fd, rec, 2 + (size_t)n, pass, deadline);
}

int takeover_wire_send(int fd, const socket_set_t *s, unsigned threads, int control_fd,
		       const char *control_path, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	int64_t deadline = now_ms() + TAKEOVER_WIRE_STEP_MS;
	int rc = send_whole(fd, "ok\n", 3, -1, deadline);
	if (rc == 0)
		rc = send_record(fd, -1, deadline, "shoald %s pid %ld mode %s threads %u",
				 PACKAGE_VERSION, (long)getpid(),
				 socket_mode_names[socket_set_mode(s)], threads);
	socket_entry_t e;
	size_t count = 0;
	for (; rc == 0 && socket_set_entry(s, count, &e); count++) {
		deadline = now_ms() + TAKEOVER_WIRE_STEP_MS;
		rc = send_record(fd, e.fd, deadline, "%s %u %s", socket_kind_names[e.kind],
				 e.worker, e.addr->text);
	}
	if (rc == 0 && control_fd >= 0)
		rc = send_record(fd, control_fd, deadline, "control %s", control_path);
	if (rc == 0)
		rc = send_record(fd, -1, deadline, "end %zu", count);
	if (rc < 0)
		snprintf(err, errlen, "sending the sockets: %s", shoal_strerror(rc));
	return rc;
}

int takeover_wire_read_go(int fd, char *buf, size_t cap, size_t *len, bool *keep_control, char *err,
			  size_t errlen)
{
	MAIN_THREAD_ONLY();
	assert(cap >= 2 && *len < cap); /* room for an octet and the terminating zero */
	while (*len + 1 < cap) {
		ssize_t n = recv(fd, buf + *len, 1, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0) {
			snprintf(err, errlen,
				 "the new process closed the connection before \"go\"%s",
				 n < 0 ? " (error)" : "");
			return SHOAL_EIO;
		}
		if (buf[*len] == '\n') {
			buf[*len] = '\0';
			if (!strcmp(buf, "go") || !strcmp(buf, "go control")) {
				*keep_control = buf[2] != '\0';
				return 1;
			}
			break;
		}
		(*len)++;
	}
	buf[*len < cap ? *len : cap - 1] = '\0';
	snprintf(err, errlen, "the new process sent \"%.40s\", not \"go\"", buf);
	return SHOAL_EMALFORMED;
}

/* Read one line (at most cap - 1 octets, newline dropped) octet by octet, so no record is read. */
static int recv_line(int fd, char *buf, size_t cap, int64_t deadline)
{
	size_t len = 0;
	for (;;) {
		char c;
		int rc = recv_whole(fd, &c, 1, NULL, deadline);
		if (rc < 0)
			return rc;
		if (c == '\n')
			break;
		if (len + 1 >= cap)
			return SHOAL_EMALFORMED;
		buf[len++] = c;
	}
	buf[len] = '\0';
	return 0;
}

/* The giver's refusal: "error\n" and the rest of the stream, read into err. */
static void read_refusal(int fd, char *err, size_t errlen, int64_t deadline)
{
	char why[512];
	size_t len = 0;
	while (len + 1 < sizeof(why) && recv_whole(fd, why + len, 1, NULL, deadline) == 0)
		len++;
	while (len > 0 && why[len - 1] == '\n')
		len--;
	why[len] = '\0';
	snprintf(err, errlen, "the running server refused: %s", len ? why : "(no reason given)");
}

/* One socket record's text ("udp 0 127.0.0.1@53") into g. */
static int parse_socket(const char *text, socket_given_t *g)
{
	char kind[8], addr[sizeof(g->addr.text)];
	unsigned worker;
	static_assert(sizeof(addr) == 80, "%79s reads what addr holds");
	if (sscanf(text, "%7s %u %79s", kind, &worker, addr) != 3 ||
	    conf_parse_listen(addr, &g->addr) < 0)
		return SHOAL_EMALFORMED;
	for (int k = 0; socket_kind_names[k]; k++)
		if (!strcmp(kind, socket_kind_names[k])) {
			g->kind = (enum socket_kind)k;
			g->worker = worker;
			return 0;
		}
	return SHOAL_EMALFORMED;
}

/* The first record: "shoald VERSION pid PID mode MODE threads N". */
static int parse_header(const char *text, takeover_wire_taken_t *t)
{
	char mode[16];
	long pid;
	static_assert(sizeof(t->giver_version) == 32, "%31s reads what giver_version holds");
	if (sscanf(text, "shoald %31s pid %ld mode %15s threads %u", t->giver_version, &pid, mode,
		   &t->threads) != 4)
		return SHOAL_EMALFORMED;
	for (unsigned m = 0; socket_mode_names[m]; m++)
		if (!strcmp(mode, socket_mode_names[m])) {
			t->mode = (enum socket_mode)m;
			return 0;
		}
	return SHOAL_EMALFORMED;
}

/*
 * Read records until "end". Returns 0, or a negative error with err. What
 * was received is in t (takeover_wire_taken_clear closes it).
 */
static int receive_records(takeover_wire_taken_t *t, char *err, size_t errlen)
{
	char text[RECORD_MAX + 1];
	size_t records = 0;
	for (;; records++) {
		int64_t deadline = now_ms() + TAKEOVER_WIRE_STEP_MS;
		uint8_t head[2];
		int pass = -1;
		int rc = recv_whole(t->fd, head, 2, &pass, deadline);
		size_t len = (size_t)head[0] << 8 | head[1];
		if (rc == 0 && len > RECORD_MAX)
			rc = SHOAL_EMALFORMED;
		if (rc == 0)
			rc = recv_whole(t->fd, text, len, &pass, deadline);
		if (rc < 0) {
			if (pass >= 0)
				close(pass);
			snprintf(err, errlen, "record %zu: %s", records, shoal_strerror(rc));
			return rc;
		}
		text[len] = '\0';
		if (records == 0) {
			rc = pass < 0 ? parse_header(text, t) : SHOAL_EMALFORMED;
		} else if (!strncmp(text, "end ", 4)) {
			unsigned long count = strtoul(text + 4, NULL, 10);
			if (pass < 0 && count == t->n_given)
				return 0;
			rc = SHOAL_EMALFORMED;
		} else if (!strncmp(text, "control ", 8) && pass >= 0 && t->control_fd < 0) {
			snprintf(t->control_path, sizeof(t->control_path), "%.*s",
				 (int)sizeof(t->control_path) - 1, text + 8);
			t->control_fd = pass;
			continue;
		} else if (pass < 0 || t->n_given == TAKEOVER_WIRE_SOCKETS_MAX) {
			rc = SHOAL_EMALFORMED;
		} else {
			socket_given_t *g = &t->given[t->n_given];
			rc = parse_socket(text, g);
			if (rc == 0) {
				g->fd = pass;
				t->n_given++;
				continue;
			}
		}
		if (pass >= 0)
			close(pass);
		if (rc < 0) {
			snprintf(err, errlen, "record %zu is not understood: \"%.80s\"", records,
				 text);
			return rc;
		}
	}
}

/*
 * The giver's credentials (SO_PEERCRED: of the process that made its
 * socket listen) must be root's or this process's user's: sockets and a
 * control socket from any other user's process could be that user's,
 * who would then share the port's groups with this server or read what
 * shoalctl sends. Sets t->giver_pid. Returns 0, or SHOAL_ECONFIG with err.
 */
static int giver_trusted(int fd, takeover_wire_taken_t *t, char *err, size_t errlen)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		snprintf(err, errlen, "cannot tell who the running server is (SO_PEERCRED: %s)",
			 strerror(errno));
		return SHOAL_ECONFIG;
	}
	t->giver_pid = cred.pid;
	if (cred.uid == 0 || cred.uid == geteuid())
		return 0;
	snprintf(err, errlen,
		 "the process at the other end (pid %ld) runs as uid %u, not as root or as this "
		 "process's user (uid %u): its sockets are not taken",
		 (long)cred.pid, (unsigned)cred.uid, (unsigned)geteuid());
	return SHOAL_ECONFIG;
}

int takeover_wire_receive(int fd, takeover_wire_taken_t *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->fd = fd;
	t->control_fd = -1;
	t->giver_pid = -1;
	int rc = giver_trusted(fd, t, err, errlen);
	if (rc < 0)
		goto done;
	rc = SHOAL_ENOMEM;
	if (!(t->given = calloc(TAKEOVER_WIRE_SOCKETS_MAX, sizeof(*t->given)))) {
		snprintf(err, errlen, "out of memory");
		goto done;
	}
	int64_t deadline = now_ms() + TAKEOVER_WIRE_STEP_MS;
	char line[32];
	rc = send_whole(fd, "takeover 1\n", 11, -1, deadline);
	if (rc == 0)
		rc = recv_line(fd, line, sizeof(line), deadline);
	if (rc < 0) {
		snprintf(err, errlen, "no answer from the running server: %s", shoal_strerror(rc));
		goto done;
	}
	if (!strcmp(line, "error")) {
		read_refusal(fd, err, errlen, deadline);
		rc = SHOAL_ECONFIG;
		goto done;
	}
	if (strcmp(line, "ok")) {
		snprintf(err, errlen, "the running server answered \"%.20s\", not \"ok\"", line);
		rc = SHOAL_EMALFORMED;
		goto done;
	}
	rc = receive_records(t, err, errlen);
done:
	if (rc < 0)
		takeover_wire_taken_clear(t);
	return rc;
}

int takeover_wire_connect(const char *path, takeover_wire_taken_t *t, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return SHOAL_ECONFIG;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int rc = -errno;
		snprintf(err, errlen, "cannot reach the running server at %s: %s", path,
			 shoal_strerror(rc));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return takeover_wire_receive(fd, t, err, errlen);
}

int takeover_wire_go(takeover_wire_taken_t *t, bool keep_control, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	int64_t deadline = now_ms() + TAKEOVER_WIRE_STEP_MS;
	const char *go = keep_control ? "go control\n" : "go\n";
	char line[32];
	int rc = send_whole(t->fd, go, strlen(go), -1, deadline);
	if (rc == 0)
		rc = recv_line(t->fd, line, sizeof(line), deadline);
	if (rc < 0) {
		snprintf(err, errlen, "no answer to \"go\" from pid %ld: %s", (long)t->giver_pid,
			 shoal_strerror(rc));
		return rc;
	}
	if (strcmp(line, "ok")) {
		read_refusal(t->fd, err, errlen, deadline);
		return SHOAL_ECONFIG;
	}
	return 0;
}

void takeover_wire_taken_clear(takeover_wire_taken_t *t)
{
	for (size_t i = 0; t->given && i < t->n_given; i++)
		if (t->given[i].fd >= 0)
			close(t->given[i].fd);
	free(t->given);
	t->given = NULL;
	t->n_given = 0;
	if (t->control_fd >= 0)
		close(t->control_fd);
	t->control_fd = -1;
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
}
