/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/ctl/client.c: room in the set, a reply sent, an accept pause logged once.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "server/ctl/client.h"
#include "unit.h"

static char dir[] = "/tmp/shoal-client.XXXXXX";

/* A loop, a set of pipe clients on a listening unix socket, and what its accept callback saw. */
typedef struct fixture {
	uv_loop_t loop;
	client_set_t set;
	struct sockaddr_un sun;
	size_t room; /* the most clients the callback takes */
	int taken;   /* connections it took */
	int refused; /* times it said "no room" */
	int written; /* client_send's callbacks, */
	int status;  /* the last one's status */
} fixture_t;

static bool on_accepted(acceptor_t *a, int fd)
{
	client_set_t *set = a->data;
	fixture_t *f = set->data;
	if (set->count >= f->room) {
		f->refused++;
		return false;
	}
	if (client_add(set, fd))
		f->taken++;
	return true;
}

static void fixture_init(fixture_t *f, size_t room)
{
	memset(f, 0, sizeof(*f));
	f->room = room;
	CU_ASSERT_EQUAL_FATAL(uv_loop_init(&f->loop), 0);
	client_set_init(&f->set, &f->loop, CLIENT_PIPE, sizeof(client_t), "test", f);
	f->sun.sun_family = AF_UNIX;
	snprintf(f->sun.sun_path, sizeof(f->sun.sun_path), "%s/sock", dir);
	unlink(f->sun.sun_path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(bind(fd, (struct sockaddr *)&f->sun, sizeof(f->sun)), 0);
	CU_ASSERT_EQUAL_FATAL(listen(fd, 8), 0);
	CU_ASSERT_EQUAL_FATAL(client_set_listen(&f->set, fd, on_accepted), 0);
}

static void fixture_done(fixture_t *f)
{
	client_set_close(&f->set);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	CU_ASSERT_EQUAL(f->set.count, 0);
	CU_ASSERT_EQUAL(f->set.closing, 0);
	CU_ASSERT_EQUAL(uv_loop_close(&f->loop), 0);
	unlink(f->sun.sun_path);
}

/* A peer's socket, not connected yet. */
static int peer_socket(void)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT(fd >= 0);
	return fd;
}

static int peer_connect(fixture_t *f, int fd)
{
	CU_ASSERT_EQUAL(connect(fd, (struct sockaddr *)&f->sun, sizeof(f->sun)), 0);
	return fd;
}

/* Run the loop until *counter reaches want, 2 s at most. Returns whether it did. */
static bool run_until(fixture_t *f, const int *counter, int want)
{
	for (int ms = 0; ms < 2000 && *counter < want; ms++) {
		uv_run(&f->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
	return *counter >= want;
}

/* Run the loop for about ms milliseconds. */
static void run_for(fixture_t *f, int ms)
{
	for (int i = 0; i < ms; i++) {
		uv_run(&f->loop, UV_RUN_NOWAIT);
		usleep(1000);
	}
}

/*
 * With no room, a connection waits in the acceptor, unaccepted; when a
 * client's handles are closed, it leaves the list and the waiting one is
 * taken.
 */
static void test_room(void)
{
	fixture_t f;
	fixture_init(&f, 1);
	int a = peer_connect(&f, peer_socket()), b = peer_connect(&f, peer_socket());
	CU_ASSERT_FATAL(run_until(&f, &f.refused, 1));
	CU_ASSERT_EQUAL(f.taken, 1);
	CU_ASSERT_EQUAL(f.set.count, 1);
	client_t *first = f.set.clients;
	CU_ASSERT_PTR_NOT_NULL_FATAL(first);
	client_close(first);
	client_close(first); /* twice is harmless */
	CU_ASSERT_EQUAL(f.set.closing, 1);
	CU_ASSERT(run_until(&f, &f.taken, 2));
	CU_ASSERT_EQUAL(f.set.count, 1);
	CU_ASSERT_EQUAL(f.set.closing, 0);
	CU_ASSERT_PTR_NOT_NULL(f.set.clients);
	CU_ASSERT_PTR_NULL(f.set.clients ? f.set.clients->next : NULL);
	fixture_done(&f);
	close(a);
	close(b);
}

static void on_written(uv_write_t *req, int status)
{
	client_t *c = req->data;
	fixture_t *f = c->set->data;
	f->written++;
	f->status = status;
	client_close(c);
}

/* client_send writes what it is given and calls back; without a buffer it closes the client. */
static void test_send(void)
{
	fixture_t f;
	fixture_init(&f, 4);
	int a = peer_connect(&f, peer_socket());
	CU_ASSERT_FATAL(run_until(&f, &f.taken, 1));
	CU_ASSERT_EQUAL(client_send(f.set.clients, strdup("ok\nhello\n"), 9, on_written), 0);
	CU_ASSERT(run_until(&f, &f.written, 1));
	CU_ASSERT_EQUAL(f.status, 0);
	char buf[32] = "";
	CU_ASSERT_EQUAL(read(a, buf, sizeof(buf) - 1), 9);
	CU_ASSERT_STRING_EQUAL(buf, "ok\nhello\n");
	int b = peer_connect(&f, peer_socket());
	CU_ASSERT_FATAL(run_until(&f, &f.taken, 2));
	CU_ASSERT(client_send(f.set.clients, NULL, 9, on_written) < 0);
	CU_ASSERT_TRUE(f.set.clients->closing);
	fixture_done(&f);
	CU_ASSERT_EQUAL(f.written, 1);
	close(a);
	close(b);
}

/* Lines of the file at path holding needle. */
static int lines_with(const char *path, const char *needle)
{
	FILE *in = fopen(path, "r");
	int n = 0;
	char line[512];
	while (in && fgets(line, sizeof(line), in))
		n += strstr(line, needle) != NULL;
	if (in)
		fclose(in);
	return n;
}

/*
 * accept(2) without descriptors (RLIMIT_NOFILE) pauses the acceptor and
 * logs it, once however often it tries again, and once more after a
 * client got in in between.
 */
static void test_pause_logged_once(void)
{
	fixture_t f;
	fixture_init(&f, 4);
	char log[sizeof(dir) + 8];
	snprintf(log, sizeof(log), "%s/log", dir);
	int saved = dup(STDERR_FILENO), out = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(saved >= 0 && out >= 0);
	dup2(out, STDERR_FILENO);
	close(out);
	struct rlimit old, tight;
	CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_NOFILE, &old), 0);
	int a = peer_socket(), b = peer_socket(), c = peer_socket();
	for (int round = 0; round < 2; round++) {
		int lowest = dup(STDIN_FILENO); /* the descriptor accept would take: none left */
		close(lowest);
		tight = old;
		tight.rlim_cur = (rlim_t)lowest;
		CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_NOFILE, &tight), 0);
		peer_connect(&f, round ? b : a);
		run_for(&f, 3 * ACCEPTOR_PAUSE_MS + 50); /* tries again 3 times */
		CU_ASSERT_EQUAL(f.taken, round);
		CU_ASSERT_EQUAL(setrlimit(RLIMIT_NOFILE, &old), 0);
		CU_ASSERT(run_until(&f, &f.taken, round + 1));
	}
	peer_connect(&f, c); /* descriptors enough: no pause */
	CU_ASSERT(run_until(&f, &f.taken, 3));
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	CU_ASSERT_EQUAL(lines_with(log, "test: accept: too many open files; trying again every"),
			2);
	unlink(log);
	fixture_done(&f);
	close(a);
	close(b);
	close(c);
}

int main(int argc, char **argv)
{
	if (!mkdtemp(dir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_room),
		UNIT_TEST(test_send),
		UNIT_TEST(test_pause_logged_once),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "client", tests);
	rmdir(dir);
	return rc;
}
