/* Unit tests for server/socket.c: the socket set's layout, and errors that keep their errno. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/fdbudget.h"
#include "server/socket.h"
#include "unit.h"

/* 127.0.0.1@port; port 0 lets every socket take an ephemeral port of its own. */
static listen_addr_t loopback(uint16_t port)
{
	listen_addr_t a;
	memset(&a, 0, sizeof(a));
	struct sockaddr_in *in = (struct sockaddr_in *)&a.addr;
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.addr_len = sizeof(*in);
	snprintf(a.text, sizeof(a.text), "127.0.0.1@%u", (unsigned)port);
	return a;
}

/* Reuseport: each worker its own UDP socket and TCP listener per address. */
static void test_reuseport_layout(void)
{
	listen_addr_t addrs[2] = { loopback(0), loopback(0) };
	int64_t open_before = fdbudget_count_open();
	socket_set_t *s = NULL;
	char err[256] = "";
	CU_ASSERT_EQUAL_FATAL(
		socket_set_open(addrs, 2, 3, SOCKET_MODE_REUSEPORT, &s, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(socket_set_mode(s), SOCKET_MODE_REUSEPORT);
	CU_ASSERT_EQUAL(socket_set_addresses(s), 2);
	/* 3 workers x 2 addresses x (UDP + TCP), every one its own */
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before + 12);
	for (unsigned w = 0; w < 3; w++)
		for (size_t a = 0; a < 2; a++) {
			CU_ASSERT_TRUE(socket_set_udp(s, w, a) >= 0);
			CU_ASSERT_TRUE(socket_set_tcp(s, w, a) >= 0);
			if (w > 0)
				CU_ASSERT_NOT_EQUAL(socket_set_udp(s, w, a),
						    socket_set_udp(s, 0, a));
		}
	socket_set_close(s);
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before);
}

/* Shared: one UDP socket per address, the same for every worker; TCP stays per worker. */
static void test_shared_layout(void)
{
	listen_addr_t addrs[1] = { loopback(0) };
	int64_t open_before = fdbudget_count_open();
	socket_set_t *s = NULL;
	char err[256] = "";
	CU_ASSERT_EQUAL_FATAL(
		socket_set_open(addrs, 1, 3, SOCKET_MODE_SHARED, &s, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before + 1 + 3);
	CU_ASSERT_EQUAL(socket_set_udp(s, 1, 0), socket_set_udp(s, 0, 0));
	CU_ASSERT_EQUAL(socket_set_udp(s, 2, 0), socket_set_udp(s, 0, 0));
	CU_ASSERT_NOT_EQUAL(socket_set_tcp(s, 1, 0), socket_set_tcp(s, 0, 0));
	socket_set_close(s);
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before);
}

/*
 * A port held by a socket without SO_REUSEPORT: the set cannot join it,
 * returns the bind's errno as the error, and leaves nothing open.
 */
static void test_busy_port_keeps_errno(void)
{
	int held = socket(AF_INET, SOCK_DGRAM, 0);
	CU_ASSERT_FATAL(held >= 0);
	listen_addr_t a = loopback(0);
	CU_ASSERT_EQUAL_FATAL(bind(held, (struct sockaddr *)&a.addr, a.addr_len), 0);
	socklen_t len = a.addr_len;
	CU_ASSERT_EQUAL_FATAL(getsockname(held, (struct sockaddr *)&a.addr, &len), 0);
	snprintf(a.text, sizeof(a.text), "127.0.0.1@%u",
		 (unsigned)ntohs(((struct sockaddr_in *)&a.addr)->sin_port));
	int64_t open_before = fdbudget_count_open();
	socket_set_t *s = NULL;
	char err[256] = "";
	int rc = socket_set_open(&a, 1, 2, SOCKET_MODE_REUSEPORT, &s, err, sizeof(err));
	CU_ASSERT_EQUAL(rc, -EADDRINUSE);
	CU_ASSERT_TRUE(shoal_error_is_system(rc));
	CU_ASSERT_PTR_NULL(s);
	CU_ASSERT_NOT_EQUAL(err[0], '\0');
	CU_ASSERT_EQUAL(fdbudget_count_open(), open_before);
	close(held);
}

int main(int argc, char **argv)
{
	static const unit_test_t tests[] = {
		UNIT_TEST(test_reuseport_layout),
		UNIT_TEST(test_shared_layout),
		UNIT_TEST(test_busy_port_keeps_errno),
		UNIT_END,
	};
	return unit_run(argc, argv, "socket", tests);
}
