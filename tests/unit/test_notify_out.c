/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/events/notify_out.c: a signed NOTIFY on a loop, a secondary on loopback. */
#include "config.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <urcu.h>
#include <uv.h>

#include "proto/error.h"
#include "proto/tsig.h"
#include "proto/wire.h"
#include "server/conf/conf.h"
#include "server/events/notify_out.h"
#include "tests/unit/conf_text.h"
#include "unit.h"

/* How long anything may take: generous, never reached when all goes well. */
#define WAIT_MS 10000
#define SECRET  "c2hvYWwgbm90aWZ5IG91dCB0ZXN0IGtleSAwMTIzNDU2"

/*
 * A secondary on 127.0.0.1 that answers each NOTIFY NOERROR, signed with
 * the key; the first answer only once the test says so (go), after saying
 * the NOTIFY came (got).
 */
typedef struct secondary {
	int udp, got[2], go[2], quit[2];
	uint16_t port;
	tsig_key_t key;
	int notifies;
	int errors; /* its own checks that failed: asserted once it is joined */
	pthread_t thread;
} secondary_t;

/* Wait for fd to be readable, or quit: true for fd. */
static bool wait_for(secondary_t *s, int fd)
{
	struct pollfd pf[2] = { { .fd = fd, .events = POLLIN },
				{ .fd = s->quit[0], .events = POLLIN } };
	return poll(pf, 2, WAIT_MS) > 0 && (pf[0].revents & POLLIN);
}

/* The answer to NOTIFY q: its header and question, QR and AA, signed (RFC 1996 4.7). */
static size_t answer(secondary_t *s, const uint8_t *q, size_t qlen, uint8_t *out, size_t cap)
{
	tsig_ctx_t t;
	tsig_init(&t, &s->key, TSIG_FUDGE_DEFAULT);
	s->errors += tsig_verify(&t, q, qlen, NULL, (uint64_t)time(NULL)) != 0;
	wire_t w;
	wire_init_read(&w, q, qlen);
	wire_skip(&w, DNS_HEADER_SIZE);
	name_skip(&w);
	wire_skip(&w, 4);
	memcpy(out, q, w.pos);
	memset(out + 6, 0, 6);
	out[2] |= 0x84; /* QR, AA */
	int n = tsig_sign(&t, out, w.pos, cap, (uint64_t)time(NULL));
	s->errors += n <= 0;
	return n > 0 ? (size_t)n : 0;
}

static void *secondary_main(void *arg)
{
	secondary_t *s = arg;
	uint8_t q[4096], a[4096];
	while (wait_for(s, s->udp)) {
		struct sockaddr_in from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(s->udp, q, sizeof(q), 0, (struct sockaddr *)&from, &flen);
		if (n <= 0)
			break;
		size_t len = answer(s, q, (size_t)n, a, sizeof(a));
		if (++s->notifies == 1) {
			char c = 0;
			(void)!write(s->got[1], "g", 1);
			if (!wait_for(s, s->go[0]) || read(s->go[0], &c, 1) != 1)
				break;
		}
		(void)!sendto(s->udp, a, len, 0, (struct sockaddr *)&from, flen);
	}
	return NULL;
}

static int secondary_start(secondary_t *s)
{
	struct sockaddr_in in = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(in);
	memset(s, 0, sizeof(*s));
	if (tsig_key_init(&s->key, "notify-key", "hmac-sha256", SECRET) < 0)
		return -1;
	s->udp = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->udp < 0 || bind(s->udp, (struct sockaddr *)&in, len) < 0 ||
	    getsockname(s->udp, (struct sockaddr *)&in, &len) < 0 || pipe(s->got) < 0 ||
	    pipe(s->go) < 0 || pipe(s->quit) < 0)
		return -1;
	s->port = ntohs(in.sin_port);
	return pthread_create(&s->thread, NULL, secondary_main, s) == 0 ? 0 : -1;
}

static void secondary_stop(secondary_t *s)
{
	(void)!write(s->quit[1], "q", 1);
	pthread_join(s->thread, NULL);
	int *fds[] = { &s->udp,   &s->got[0],  &s->got[1], &s->go[0],
		       &s->go[1], &s->quit[0], &s->quit[1] };
	for (size_t k = 0; k < sizeof(fds) / sizeof(fds[0]); k++)
		close(*fds[k]);
}

/* The primary's configuration: zone n.test from zone_file, notifying s with the key. */
static int conf_make(conf_t *c, const secondary_t *s, const char *zone_file)
{
	char text[1024];
	int len = snprintf(text, sizeof(text),
			   "keys:\n  - name: notify-key\n    algorithm: hmac-sha256\n"
			   "    secret: \"%s\"\nzones:\n  - name: n.test\n    file: %s\n"
			   "    notify: [\"127.0.0.1@%u notify-key\"]\n",
			   SECRET, zone_file, (unsigned)s->port);
	return unit_conf_text(c, text, (size_t)len);
}

/* The case: the loop, the notifier, the configurations before and after a reconfig. */
typedef struct world {
	secondary_t s;
	char zone_file[64];
	conf_t *was, *now;
	zonedb_ref_t zones;
	uv_loop_t loop;
	uv_poll_t got;
	uv_timer_t check;
	uint64_t started;
	notify_out_t *n;
	stats_notify_out_t st; /* the notifier's counters: it writes, this thread reads */
} world_t;

static void quiet(void *arg, bool is_error, const char *msg)
{
	(void)arg;
	if (is_error)
		fprintf(stderr, "  %s\n", msg);
}

static int world_start(world_t *w)
{
	static const char zone[] = "$ORIGIN n.test.\n$TTL 300\n"
				   "@ IN SOA ns1 hostmaster 1 3600 600 86400 60\n"
				   "@ IN NS ns1\nns1 IN A 192.0.2.1\n";
	memset(w, 0, sizeof(*w));
	snprintf(w->zone_file, sizeof(w->zone_file), "/tmp/shoal-test-n.test.XXXXXX");
	w->was = calloc(1, sizeof(conf_t));
	w->now = calloc(1, sizeof(conf_t));
	zonedb_t *db = NULL;
	if (!w->was || !w->now || secondary_start(&w->s) < 0 ||
	    unit_temp_file(w->zone_file, zone, sizeof(zone) - 1) < 0 ||
	    conf_make(w->was, &w->s, w->zone_file) < 0 ||
	    conf_make(w->now, &w->s, w->zone_file) < 0 ||
	    unit_conf_build(w->was, NULL, quiet, &db) < 0)
		return -1;
	zonedb_publish(&w->zones, db);
	if (uv_loop_init(&w->loop) < 0 ||
	    notify_out_new(&w->loop, w->was, &w->zones, NULL, &w->st, &w->n) < 0)
		return -1;
	w->started = uv_now(&w->loop);
	return 0;
}

/* A configuration freed as the server frees one. */
static void conf_free(conf_t *c)
{
	if (c)
		conf_clear(c);
	free(c);
}

static void world_stop(world_t *w)
{
	if (!uv_is_closing((uv_handle_t *)&w->got))
		uv_close((uv_handle_t *)&w->got, NULL);
	uv_close((uv_handle_t *)&w->check, NULL);
	notify_out_close(w->n);
	uv_run(&w->loop, UV_RUN_DEFAULT); /* the close callbacks */
	notify_out_free(w->n);
	CU_ASSERT_EQUAL(uv_loop_close(&w->loop), 0);
	secondary_stop(&w->s);
	zonedb_publish(&w->zones, NULL);
	conf_free(w->was);
	conf_free(w->now);
	unlink(w->zone_file);
}

/*
 * The NOTIFY came to the secondary, its answer held: a reconfig that keeps
 * the zone and its notify list alike comes, and the configuration it
 * replaces is freed, as the server does; then the answer goes.
 */
static void on_got(uv_poll_t *h, int status, int events)
{
	world_t *w = h->data;
	char c;
	(void)status;
	(void)events;
	if (read(w->s.got[0], &c, 1) != 1)
		return;
	CU_ASSERT_EQUAL(notify_out_reconfig(w->n, w->now), 0);
	conf_free(w->was);
	w->was = NULL;
	(void)!write(w->s.go[1], "g", 1);
	uv_close((uv_handle_t *)h, NULL);
}

/* Until the NOTIFY was answered or given up. */
static void on_check(uv_timer_t *t)
{
	world_t *w = t->data;
	if (w->st.answered || w->st.refused || w->st.unanswered ||
	    uv_now(&w->loop) > w->started + WAIT_MS)
		uv_stop(&w->loop);
}

/*
 * A signed NOTIFY's answer that comes after a reconfig verifies: the key
 * it was sent with is the send's own, not the freed configuration's. The
 * answer to the first send is taken: one send, no retry.
 */
static void test_answer_after_reconfig(void)
{
	world_t w;
	CU_ASSERT_EQUAL_FATAL(world_start(&w), 0);
	CU_ASSERT_EQUAL(notify_out_zone(w.n, 0), 1);
	uv_poll_init(&w.loop, &w.got, w.s.got[0]);
	w.got.data = &w;
	uv_poll_start(&w.got, UV_READABLE, on_got);
	uv_timer_init(&w.loop, &w.check);
	w.check.data = &w;
	uv_timer_start(&w.check, on_check, 20, 20);
	uv_run(&w.loop, UV_RUN_DEFAULT);
	world_stop(&w);
	CU_ASSERT_EQUAL(w.st.answered, 1);
	CU_ASSERT_EQUAL(w.st.sent, 1);
	CU_ASSERT_EQUAL(w.s.notifies, 1);
	CU_ASSERT_EQUAL(w.s.errors, 0);
}

/* zone `name`'s file at `serial`, into path (a name from mkstemp's template, made once). */
static int zone_file(char *path, const char *name, unsigned serial, bool made)
{
	char text[256];
	int len = snprintf(text, sizeof(text),
			   "$ORIGIN %s.\n$TTL 300\n@ IN SOA ns1 hostmaster %u 3600 600 86400 60\n"
			   "@ IN NS ns1\nns1 IN A 192.0.2.1\n",
			   name, serial);
	if (!made)
		return unit_temp_file(path, text, (size_t)len);
	FILE *f = fopen(path, "w");
	bool ok = f && fwrite(text, 1, (size_t)len, f) == (size_t)len;
	return (f && fclose(f) == 0 && ok) ? 0 : -1;
}

/* The loop runs until a NOTIFY was answered or given up, or WAIT_MS. */
typedef struct until_answered {
	stats_notify_out_t *st;
	uint64_t started;
} until_answered_t;

static void on_until(uv_timer_t *t)
{
	until_answered_t *u = t->data;
	if (u->st->answered || u->st->unanswered || uv_now(t->loop) > u->started + WAIT_MS)
		uv_stop(t->loop);
}

/*
 * A zone-remove moves the serials seen with their zones
 * (notify_out_reconfig_one, by index, no name looked up): n.test, after
 * a.test that goes, keeps the serial seen, so the publication that
 * follows sends nothing; one with its serial moved sends one NOTIFY.
 */
static void test_zone_remove_moves_serials(void)
{
	secondary_t s;
	CU_ASSERT_EQUAL_FATAL(secondary_start(&s), 0);
	(void)!write(s.go[1], "g", 1); /* the first answer goes at once */
	char a_file[64] = "/tmp/shoal-test-a.test.XXXXXX", n_file[64] = "/tmp/shoal-test-n.XXXXXX";
	CU_ASSERT_EQUAL_FATAL(zone_file(a_file, "a.test", 1, false), 0);
	CU_ASSERT_EQUAL_FATAL(zone_file(n_file, "n.test", 1, false), 0);
	char text[1024];
	int len = snprintf(text, sizeof(text),
			   "keys:\n  - name: notify-key\n    algorithm: hmac-sha256\n"
			   "    secret: \"%s\"\nzones:\n  - name: a.test\n    file: %s\n"
			   "  - name: n.test\n    file: %s\n"
			   "    notify: [\"127.0.0.1@%u notify-key\"]\n",
			   SECRET, a_file, n_file, (unsigned)s.port);
	conf_t *was = calloc(1, sizeof(*was)), *now = calloc(1, sizeof(*now));
	CU_ASSERT_PTR_NOT_NULL_FATAL(now);
	CU_ASSERT_EQUAL_FATAL(unit_conf_text(was, text, (size_t)len), 0);
	zonedb_ref_t zones = { 0 };
	zonedb_t *db = NULL, *db2 = NULL, *db3 = NULL;
	CU_ASSERT_EQUAL_FATAL(unit_conf_build(was, NULL, quiet, &db), 0);
	zonedb_set_owner(db, was);
	zonedb_publish(&zones, db);
	uv_loop_t loop;
	stats_notify_out_t st = { 0 };
	notify_out_t *n = NULL;
	CU_ASSERT_EQUAL_FATAL(uv_loop_init(&loop), 0);
	CU_ASSERT_EQUAL_FATAL(notify_out_new(&loop, was, &zones, NULL, &st, &n), 0);
	notify_out_published(n); /* the serials at start: nothing to tell */

	/* zone-remove a.test: n.test moves from 1 to 0 */
	CU_ASSERT_EQUAL_FATAL(conf_copy(now, was), 0);
	conf_zone_remove(now, 0);
	zonedb_build_t b = { .spec_of = conf_spec_of,
			     .spec_arg = now,
			     .n = 1,
			     .old = db,
			     .msg = quiet,
			     .change = ZONEDB_REMOVED,
			     .removed = 0 };
	CU_ASSERT_EQUAL_FATAL(zonedb_build_with(&b, &db2), 0);
	zonedb_set_owner(db2, now);
	zonedb_publish(&zones, db2);
	CU_ASSERT_EQUAL(notify_out_reconfig_one(n, now, ZONEDB_REMOVED, 0), 0);
	conf_free(was);
	notify_out_published(n);
	CU_ASSERT_EQUAL(st.sent, 0);

	/* its serial moves: one NOTIFY, answered */
	CU_ASSERT_EQUAL_FATAL(zone_file(n_file, "n.test", 2, true), 0);
	CU_ASSERT_EQUAL_FATAL(unit_conf_build(now, db2, quiet, &db3), 0);
	zonedb_set_owner(db3, now);
	zonedb_publish(&zones, db3);
	notify_out_published(n);
	uv_timer_t check;
	until_answered_t u = { &st, uv_now(&loop) };
	uv_timer_init(&loop, &check);
	check.data = &u;
	uv_timer_start(&check, on_until, 20, 20);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_close((uv_handle_t *)&check, NULL);
	notify_out_close(n);
	uv_run(&loop, UV_RUN_DEFAULT);
	notify_out_free(n);
	CU_ASSERT_EQUAL(uv_loop_close(&loop), 0);
	secondary_stop(&s);
	CU_ASSERT_EQUAL(st.sent, 1);
	CU_ASSERT_EQUAL(st.answered, 1);
	CU_ASSERT_EQUAL(s.notifies, 1);
	zonedb_publish(&zones, NULL);
	conf_free(now);
	unlink(a_file);
	unlink(n_file);
}

static const unit_test_t tests[] = {
	UNIT_TEST(test_answer_after_reconfig),
	UNIT_TEST(test_zone_remove_moves_serials),
	UNIT_END,
};

int main(int argc, char **argv)
{
	if (sodium_init() < 0)
		return 99;
	rcu_register_thread();
	int rc = unit_run(argc, argv, "notify_out", tests);
	rcu_unregister_thread();
	return rc;
}
