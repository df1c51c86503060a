/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/daemon/takeover_wire.c: the takeover's records over a socket pair. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/daemon/fdbudget.h"
#include "server/daemon/takeover_wire.h"
#include "tests/unit/loopback.h"
#include "unit.h"

/*
 * 127.0.0.1 on a port free right now for UDP and for TCP, into *a: a
 * record names a real port. False when the port the kernel gave for UDP
 * is taken for TCP (the tests run beside others): open_set tries again.
 */
static bool loopback_any(listen_addr_t *a)
{
	*a = unit_loopback(0);
	int u = socket(AF_INET, SOCK_DGRAM, 0);
	int t = socket(AF_INET, SOCK_STREAM, 0);
	socklen_t len = a->addr_len;
	CU_ASSERT_FATAL(u >= 0 && t >= 0 &&
			bind(u, (struct sockaddr *)&a->addr, a->addr_len) == 0 &&
			getsockname(u, (struct sockaddr *)&a->addr, &len) == 0);
	bool free_tcp = bind(t, (struct sockaddr *)&a->addr, a->addr_len) == 0;
	close(u);
	close(t);
	snprintf(a->text, sizeof(a->text), "127.0.0.1@%u",
		 (unsigned)ntohs(((struct sockaddr_in *)&a->addr)->sin_port));
	return free_tcp;
}

/*
 * A set of 2 workers on a free loopback port, into *a and *s. Another
 * program may take the port before the set binds it: another is tried.
 */
static void open_set(listen_addr_t *a, socket_set_t **s)
{
	char err[512] = "";
	int rc = -EADDRINUSE;
	for (int tries = 0; tries < 50 && rc == -EADDRINUSE; tries++)
		rc = loopback_any(a) ? socket_set_open(a, 1, NULL, 0, 2, SOCKET_MODE_REUSEPORT, s,
						       err, sizeof(err))
				     : -EADDRINUSE;
	if (rc < 0)
		fprintf(stderr, "\n  socket_set_open: %s\n", err);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
}

static ino_t inode(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/* A connected pair: [0] the giver's end, [1] the taker's. */
static void pair(int sv[2])
{
	CU_ASSERT_EQUAL_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
}

/* Every socket of a set, and the control socket, arrive with their descriptions. */
static void test_round_trip(void)
{
	listen_addr_t a;
	socket_set_t *s = NULL;
	char err[512] = "";
	open_set(&a, &s);
	int control = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int sv[2];
	pair(sv);
	/* the records fit the pair's buffer: send them all, then receive */
	CU_ASSERT_EQUAL_FATAL(
		takeover_wire_send(sv[0], s, 2, control, "/run/x y.ctl", err, sizeof(err)), 0);
	takeover_wire_taken_t t;
	int rc = takeover_wire_receive(sv[1], &t, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "\n  %s\n", err);
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(t.giver_pid, getpid());
	CU_ASSERT_STRING_EQUAL(t.giver_version, PACKAGE_VERSION);
	CU_ASSERT_EQUAL(t.mode, SOCKET_MODE_REUSEPORT);
	CU_ASSERT_EQUAL(t.threads, 2);
	CU_ASSERT_EQUAL_FATAL(t.n_given, 4);
	socket_entry_t e;
	for (size_t i = 0; socket_set_entry(s, i, &e); i++) {
		CU_ASSERT_EQUAL(t.given[i].kind, e.kind);
		CU_ASSERT_EQUAL(t.given[i].worker, e.worker);
		CU_ASSERT_STRING_EQUAL(t.given[i].addr.text, a.text);
		CU_ASSERT_EQUAL(inode(t.given[i].fd), inode(e.fd));
		CU_ASSERT_NOT_EQUAL(t.given[i].fd, e.fd);
	}
	CU_ASSERT_EQUAL(inode(t.control_fd), inode(control));
	CU_ASSERT_STRING_EQUAL(t.control_path, "/run/x y.ctl");
	/* the request line waits on the giver's side, as the control socket reads it */
	char line[16] = "";
	CU_ASSERT_EQUAL(recv(sv[0], line, sizeof(line) - 1, MSG_DONTWAIT), 11);
	CU_ASSERT_STRING_EQUAL(line, "takeover 1\n");
	takeover_wire_taken_clear(&t);
	close(sv[0]);
	close(control);
	socket_set_close(s);
}

/* The giver's "error" and reason reach the taker's message. */
static void test_refusal(void)
{
	int sv[2];
	pair(sv);
	const char *no = "error\nthe previous takeover is still finishing\n";
	CU_ASSERT_EQUAL(write(sv[0], no, strlen(no)), (ssize_t)strlen(no));
	shutdown(sv[0], SHUT_WR); /* the request can still be written */
	takeover_wire_taken_t t;
	char err[512] = "";
	CU_ASSERT_EQUAL(takeover_wire_receive(sv[1], &t, err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "refused: the previous takeover is still finishing"));
	close(sv[0]);
}

/* Write one record as a giver does: length, text, and pass (>= 0) attached. */
static void put(int fd, const char *text, int pass)
{
	char rec[256];
	size_t len = strlen(text);
	rec[0] = (char)(len >> 8);
	rec[1] = (char)len;
	memcpy(rec + 2, text, len);
	union {
		struct cmsghdr h;
		char space[CMSG_SPACE(sizeof(int))];
	} ctl;
	memset(&ctl, 0, sizeof(ctl));
	struct iovec iov = { rec, len + 2 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (pass >= 0) {
		m.msg_control = ctl.space;
		m.msg_controllen = sizeof(ctl.space);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &pass, sizeof(int));
	}
	CU_ASSERT_EQUAL(sendmsg(fd, &m, 0), (ssize_t)len + 2);
}

/*
 * "ok", the header, one UDP socket record, then `last` (a record, with a
 * socket when `with_socket`, or nothing: the stream ends): refused, and
 * nothing received is left open.
 */
static void refused_after(const char *last, bool with_socket)
{
	int64_t open_before = fdbudget_count_open();
	int sv[2];
	pair(sv);
	int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_EQUAL(write(sv[0], "ok\n", 3), 3);
	put(sv[0], "shoald 0 pid 1 mode reuseport threads 1", -1);
	put(sv[0], "udp 0 127.0.0.1@53", u);
	if (last)
		put(sv[0], last, with_socket ? u : -1);
	close(sv[0]);
	close(u);
	takeover_wire_taken_t t;
	char err[512] = "";
	CU_ASSERT_TRUE(takeover_wire_receive(sv[1], &t, err, sizeof(err)) < 0);
	CU_ASSERT_NOT_EQUAL(err[0], '\0');
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before);
}

static void test_refused_records(void)
{
	refused_after(NULL, false);                 /* cut short before "end" */
	refused_after("udp 1 127.0.0.1@53", false); /* a socket record without its socket */
	refused_after("end 9", false);              /* a count that does not match */
	refused_after("frobnicate 1 2 3", true);    /* not a record */
	refused_after("udp 1 nowhere@53", true);    /* not an address */
	refused_after("control /x", false);         /* a control record without its socket */
}

/* "go" both ways: the taker's line, the giver's "ok". */
static void test_go(void)
{
	int sv[2];
	pair(sv);
	takeover_wire_taken_t t = { .fd = sv[1], .control_fd = -1 };
	char err[256] = "";
	CU_ASSERT_EQUAL(write(sv[0], "ok\n", 3), 3);
	CU_ASSERT_EQUAL(takeover_wire_go(&t, true, err, sizeof(err)), 0);
	char buf[32];
	size_t len = 0;
	bool keep = false;
	CU_ASSERT_EQUAL(
		takeover_wire_read_go(sv[0], buf, sizeof(buf), &len, &keep, err, sizeof(err)), 1);
	CU_ASSERT_TRUE(keep);
	/* a line in two parts, then one that is not "go", then the end */
	CU_ASSERT_EQUAL(write(sv[1], "g", 1), 1);
	len = 0;
	CU_ASSERT_EQUAL(
		takeover_wire_read_go(sv[0], buf, sizeof(buf), &len, &keep, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(write(sv[1], "o\n", 2), 2);
	CU_ASSERT_EQUAL(
		takeover_wire_read_go(sv[0], buf, sizeof(buf), &len, &keep, err, sizeof(err)), 1);
	CU_ASSERT_FALSE(keep);
	CU_ASSERT_EQUAL(write(sv[1], "stop\n", 5), 5);
	len = 0;
	CU_ASSERT_EQUAL(
		takeover_wire_read_go(sv[0], buf, sizeof(buf), &len, &keep, err, sizeof(err)),
		SHOAL_EMALFORMED);
	close(sv[1]);
	len = 0;
	CU_ASSERT_EQUAL(
		takeover_wire_read_go(sv[0], buf, sizeof(buf), &len, &keep, err, sizeof(err)),
		SHOAL_EIO);
	close(sv[0]);
	/* a giver that refuses "go" */
	pair(sv);
	t.fd = sv[1];
	const char *no = "error\nstopping\n";
	CU_ASSERT_EQUAL(write(sv[0], no, strlen(no)), (ssize_t)strlen(no));
	shutdown(sv[0], SHUT_WR);
	CU_ASSERT_EQUAL(takeover_wire_go(&t, false, err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "stopping"));
	close(sv[0]);
	close(sv[1]);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_round_trip),
		UNIT_TEST(test_refusal),
		UNIT_TEST(test_refused_records),
		UNIT_TEST(test_go),
		UNIT_END,
	};
	return unit_run(argc, argv, "takeover", tests);
}
