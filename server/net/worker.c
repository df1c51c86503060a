/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Worker threads: each a uv loop for TCP and a receiver thread per UDP socket. */
#include "config.h"

#include <assert.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <urcu.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "proto/hot.h"
#include "server/common/addr.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/common/thread.h"
#include "server/events/jread.h"
#include "server/net/udp.h"
#include "server/net/worker.h"

QUERY_PATH void worker_client_ip(answer_ctx_t *ctx, const struct sockaddr *peer)
{
	ctx->client_ip_len = (uint8_t)addr_octets(peer, &ctx->client_ip);
}

/*
 * TCP and TLS: the same answer path as UDP, with the TCP context (no
 * truncation to 512, cookies answered but never required, no rate
 * limiting); arg is the server's side (worker_side_t).
 */
static size_t worker_tcp_answer(void *arg, const struct sockaddr *peer, const uint8_t *q,
				size_t len, uint8_t *out, size_t cap)
{
	const worker_side_t *side = arg;
	worker_t *w = side->w;
	answer_ctx_t *ctx = &w->ctx_tcp;
	answer_info_t info;
	answer_info_clear(&info); /* a responder need not set every field */
	ctx->now = (uint32_t)time(NULL);
	worker_client_ip(ctx, peer);
	dnstap_query_t tap = { .peer = peer, .tcp = true, .query = q, .query_len = len };
	bool tapped = w->tap && dnstap_sampled(w->tap);
	if (tapped)
		clock_gettime(CLOCK_REALTIME, &tap.query_time);
	zonedb_read_lock();
	ctx->cookies = cookies_read(&w->all->cookies);
	size_t n = w->responder->answer(zonedb_current(w->zones), q, len, out, cap, ctx, &info);
	ctx->cookies = NULL;
	cookies_read_done(&w->all->cookies);
	zonedb_read_unlock(w->zones);
	if (tapped) {
		tap.response = out;
		tap.response_len = n;
		dnstap_log(w->tap, &tap);
	}
	stats_count_tcp(w->stats, side->conn, n > 0, &info);
	stats_count_zone(w->zone_stats, w->all->zone_slots, n > 0, &info);
	return n;
}

/* TCP and TLS: zone transfers and NOTIFY first (they need the client, and may stream). */
static int worker_tcp_special(void *arg, const acl_client_t *client, const uint8_t *q, size_t len,
			      uint8_t *out, size_t cap, tcp_stream_t **stream)
{
	const worker_side_t *side = arg;
	return transfer_tcp(&side->w->xfr, client, q, len, out, cap, stream);
}

static void on_handle_closed(uv_handle_t *h)
{
	(void)h;
}

static void on_tcp_stopped(void *arg)
{
	worker_t *w = arg;
	w->tcp = NULL;
}

static void on_tls_stopped(void *arg)
{
	worker_t *w = arg;
	w->tls = NULL;
}

/* A stream's next message is ready (another thread rang): its connection goes on. */
static void on_wake(void *arg)
{
	worker_t *w = arg;
	tcp_server_resume(w->tcp);
	tcp_server_resume(w->tls);
}

/* Stop: close every handle (the receivers have stopped before). */
static void on_stop(uv_async_t *a)
{
	worker_t *w = a->data;
	/* streams still waiting are cut by the stops below; a ring after this runs nothing */
	w->xfr.waker = NULL;
	if (w->waker)
		waker_close(w->waker);
	w->waker = NULL;
	if (w->tcp)
		tcp_server_stop(w->tcp, on_tcp_stopped, w);
	if (w->tls)
		tcp_server_stop(w->tls, on_tls_stopped, w);
	uv_close((uv_handle_t *)&w->stop_async, on_handle_closed);
}

static void set_started(worker_t *w, int state)
{
	pthread_mutex_lock(&w->all->start_lock);
	w->started = state;
	pthread_cond_broadcast(&w->all->start_cond);
	pthread_mutex_unlock(&w->all->start_lock);
}

/*
 * One of worker w's servers on its listeners of kind: TCP's, or TLS's
 * (tls set). Returns 0, or a negative error (logged).
 */
static int server_start(worker_t *w, enum socket_kind kind, const tcp_tls_t *tls,
			tcp_server_t **srv)
{
	socket_set_t *sockets = w->all->sockets;
	bool is_tls = kind == SOCKET_TLS;
	size_t n = is_tls ? socket_set_tls_addresses(sockets) : socket_set_addresses(sockets);
	worker_side_t *side = is_tls ? &w->side_tls : &w->side_tcp;
	assert(n <= CONF_LISTEN_MAX); /* the listen lists' bound (conf) */
	if (!n)
		return 0;
	int fds[CONF_LISTEN_MAX];
	for (size_t i = 0; i < n; i++)
		fds[i] = is_tls ? socket_set_tls(sockets, w->index, i)
				: socket_set_tcp(sockets, w->index, i);
	int rc = tcp_server_start(&w->loop, fds, n, &w->all->cfg->tcp, worker_tcp_answer, side,
				  side->conn, tls, srv);
	/* on a system error (-errno) tcp_server_start has closed them */
	if (rc == 0 || shoal_error_is_system(rc))
		socket_set_handed(sockets, kind, w->index);
	if (rc < 0) {
		log_error("worker %u: %s: %s", w->index, socket_kind_names[kind],
			  shoal_strerror(rc));
		return rc;
	}
	if (w->responder->zones)
		tcp_server_set_special(*srv, worker_tcp_special);
	tcp_server_limit_addresses(*srv, is_tls ? w->all->tls_addresses : w->all->tcp_addresses);
	return 0;
}

static int worker_setup(worker_t *w)
{
	int rc = uv_loop_init(&w->loop);
	if (rc < 0) {
		log_error("worker %u: uv_loop_init: %s", w->index, uv_strerror(rc));
		return rc; /* libuv's: -errno */
	}
	w->loop_ready = true;
	w->stop_async.data = w;
	if ((rc = uv_async_init(&w->loop, &w->stop_async, on_stop)) < 0)
		goto done;
	w->async_ready = true;
	if (!(w->waker = waker_new(&w->loop, on_wake, w))) {
		log_error("worker %u: out of memory", w->index);
		return SHOAL_ENOMEM;
	}
	w->xfr.waker = w->waker;
	rc = server_start(w, SOCKET_TCP, NULL, &w->tcp);
	tcp_tls_t tls = { .ctx = w->all->tls, .stats = &w->stats->tls };
	if (rc == 0)
		rc = server_start(w, SOCKET_TLS, &tls, &w->tls);
	return rc;
done:
	log_error("worker %u: libuv: %s", w->index, uv_strerror(rc));
	return rc;
}

static void *worker_main(void *arg)
{
	worker_t *w = arg;
	/* once per thread, before any rcu_read_lock (liburcu memb flavour) */
	rcu_register_thread();
	int rc = worker_setup(w);
	set_started(w, rc < 0 ? rc : 1);
	if (rc == 0)
		log_debug("worker %u: serving on %zu UDP socket(s)", w->index, w->udp_count);
	/* on failure too: wait for the main thread's stop, then close what was opened */
	if (w->loop_ready) {
		uv_run(&w->loop, UV_RUN_DEFAULT);
		int crc = uv_loop_close(&w->loop);
		if (crc < 0)
			log_warning("worker %u: loop not closed cleanly: %s", w->index,
				    uv_strerror(crc));
	}
	rcu_unregister_thread();
	return NULL;
}

static void nsid_init(worker_t *w, const conf_t *cfg)
{
	if (!cfg->nsid)
		return;
	int n = cfg->nsid_thread ? snprintf(w->nsid, sizeof(w->nsid), "%s/%u", cfg->nsid, w->index)
				 : snprintf(w->nsid, sizeof(w->nsid), "%s", cfg->nsid);
	size_t len = n < 0 ? 0 : (size_t)n >= sizeof(w->nsid) ? sizeof(w->nsid) - 1 : (size_t)n;
	w->ctx_udp.nsid = w->ctx_tcp.nsid = (const uint8_t *)w->nsid;
	w->ctx_udp.nsid_len = w->ctx_tcp.nsid_len = (uint16_t)len;
}

/*
 * The CHAOS TXT texts (id.server, version.server): the configured identity
 * or else the host name, as NSD and Knot default to; the version only when
 * set, so that it stays hidden unless the operator wants it known.
 */
static void chaos_init(worker_t *w, const conf_t *cfg, const char *hostname)
{
	const char *id = cfg->identity ? cfg->identity : hostname;
	size_t len = strlen(id);
	if (len > 0 && len <= UINT8_MAX) {
		w->ctx_udp.identity = w->ctx_tcp.identity = (const uint8_t *)id;
		w->ctx_udp.identity_len = w->ctx_tcp.identity_len = (uint8_t)len;
	}
	len = cfg->version ? strlen(cfg->version) : 0;
	if (len > 0 && len <= UINT8_MAX) {
		w->ctx_udp.version = w->ctx_tcp.version = (const uint8_t *)cfg->version;
		w->ctx_udp.version_len = w->ctx_tcp.version_len = (uint8_t)len;
	}
}

/*
 * Reserve *slots zones' counters, zeroed, no page touched; *slots drops to
 * WORKER_ZONE_SLOTS_LOW (for this and every later set) when the kernel
 * refuses the reservation. NULL when it refuses that too.
 */
static zone_stats_t *zone_stats_map(size_t *slots)
{
	const uintptr_t huge = 2u << 20;
	for (;;) {
		size_t len = *slots * sizeof(zone_stats_t);
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED && *slots == WORKER_ZONE_SLOTS_LOW)
			return NULL;
		if (p == MAP_FAILED) {
			*slots = WORKER_ZONE_SLOTS_LOW;
			continue;
		}
		/*
		 * Past the first 2 MiB (131,072 zones, which stay on 4 KiB pages
		 * that only counted zones back), a million zones' counters are
		 * touched at random: huge pages, one TLB entry per 131,072 zones
		 * where a 4 KiB page took one per 256, a page walk an answer.
		 */
		uintptr_t from = ((uintptr_t)p + 2 * huge - 1) & ~(huge - 1);
		if (from < (uintptr_t)p + len)
			(void)madvise((void *)from, (uintptr_t)p + len - from, MADV_HUGEPAGE);
		return p;
	}
}

/* The dnstap writer, when dnstap-file or dnstap-socket is set: an input per counter part. */
static int dnstap_start(workers_t *ws, char *err, size_t errlen)
{
	const conf_t *cfg = ws->cfg;
	if (!cfg->dnstap_file && !cfg->dnstap_socket)
		return 0;
	dnstap_conf_t c = { .file = cfg->dnstap_file,
			    .socket = cfg->dnstap_socket,
			    .sample = cfg->dnstap_sample,
			    .identity = cfg->identity ? cfg->identity : ws->hostname,
			    .version = PACKAGE_NAME " " PACKAGE_VERSION,
			    .producers = (unsigned)(ws->count * ws->parts) };
	return dnstap_new(&c, &ws->dnstap, err, errlen);
}

/* Part `part` of worker i's dnstap input, counting into that part's counters; NULL when off. */
static dnstap_producer_t *part_tap(workers_t *ws, size_t i, size_t part)
{
	worker_stats_t *s = &ws->stats[i * ws->parts + part];
	return dnstap_producer(ws->dnstap, (unsigned)(i * ws->parts + part),
			       &s->query.dnstap_queued, &s->query.dnstap_dropped);
}

int workers_create(workers_t *ws, const conf_t *cfg, const responder_t *responder,
		   zonedb_ref_t *zones, socket_set_t *sockets, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	memset(ws, 0, sizeof(*ws));
	ws->cfg = cfg;
	ws->responder = responder;
	ws->zones = zones;
	ws->sockets = sockets;
	pthread_mutex_init(&ws->start_lock, NULL);
	pthread_cond_init(&ws->start_cond, NULL);
	ws->sync_ready = true;
	ws->count = cfg->threads;
	/* the loop's counters, then each receiver's: one writer each */
	assert(socket_set_addresses(sockets) <= CONF_LISTEN_MAX); /* w->udp's size */
	ws->parts = 1 + socket_set_addresses(sockets);
	size_t sets = ws->count * ws->parts;
	ws->w = calloc(ws->count, sizeof(worker_t));
	ws->stats = aligned_alloc(64, sets * sizeof(worker_stats_t));
	if (!ws->w || !ws->stats) {
		snprintf(err, errlen, "out of memory for %zu workers", ws->count);
		return SHOAL_ENOMEM;
	}
	memset(ws->stats, 0, sets * sizeof(worker_stats_t));
	int rc = rrl_new(&cfg->rrl, &ws->rrl);
	if (rc < 0) {
		snprintf(err, errlen, "rate limiting: %s", shoal_strerror(rc));
		return rc;
	}
	if (cookies_init(&ws->cookies, cfg->cookie_secret.set ? cfg->cookie_secret.value : NULL,
			 cfg->cookie_secret_staging.set ? cfg->cookie_secret_staging.value : NULL) <
	    0) {
		snprintf(err, errlen, "out of memory for the cookie secrets");
		return SHOAL_ENOMEM;
	}
	ws->cookies_ready = true;
	if (addrlimit_new(cfg->tcp.max_per_address, &ws->tcp_addresses) < 0 ||
	    (socket_set_tls_addresses(sockets) &&
	     addrlimit_new(cfg->tcp.max_per_address, &ws->tls_addresses) < 0)) {
		snprintf(err, errlen, "out of memory for the TCP address counts");
		return SHOAL_ENOMEM;
	}
	ws->zone_stats = calloc(sets, sizeof(zone_stats_t *));
	if (!ws->zone_stats) {
		snprintf(err, errlen, "out of memory for %zu workers", ws->count);
		return SHOAL_ENOMEM;
	}
	if (gethostname(ws->hostname, sizeof(ws->hostname) - 1) < 0)
		ws->hostname[0] = '\0'; /* no identity then: id.server is REFUSED */
	if ((rc = dnstap_start(ws, err, errlen)) < 0)
		return rc;
	size_t answer_cap = cfg->edns_size > DNS_UDP_MIN ? cfg->edns_size : DNS_UDP_MIN;
	ws->zone_slots = WORKER_ZONE_SLOTS;
	for (size_t k = 0; k < sets; k++) {
		/* each its own mapping: page-aligned, no line shared, pages touched by traffic */
		if (!(ws->zone_stats[k] = zone_stats_map(&ws->zone_slots))) {
			snprintf(err, errlen, "out of memory for zone counters");
			return SHOAL_ENOMEM;
		}
	}
	for (size_t i = 0; i < ws->count; i++) {
		worker_t *w = &ws->w[i];
		w->all = ws;
		w->index = (unsigned)i;
		w->responder = responder;
		w->zones = zones;
		w->stats = &ws->stats[i * ws->parts];
		w->side_tcp = (worker_side_t){ .w = w, .conn = &w->stats->tcp };
		w->side_tls = (worker_side_t){ .w = w, .conn = &w->stats->tls.conn };
		w->zone_stats = ws->zone_stats[i * ws->parts];
		w->tap = part_tap(ws, i, 0);
		/* allow-query: unsigned here; a signed query is checked again once verified */
		w->ctx_udp = (answer_ctx_t){ .edns_size = (uint16_t)cfg->edns_size,
					     .cookie_required = cfg->cookie_require,
					     .allow = acl_allow_query,
					     .tsig_key = ACL_NOKEY };
		w->ctx_tcp = (answer_ctx_t){ .edns_size = (uint16_t)cfg->edns_size,
					     .tcp = true,
					     .allow = acl_allow_query,
					     .tsig_key = ACL_NOKEY };
		nsid_init(w, cfg);
		transfer_init(&w->xfr, cfg, zones, &w->stats->xfr, w->index, &w->ctx_udp,
			      &w->ctx_tcp, NULL, NULL);
		chaos_init(w, cfg, ws->hostname);
		for (size_t a = 0; a + 1 < ws->parts; a++) {
			udp_receiver_t *r = &w->udp[a];
			r->w = w;
			r->answer = responder->answer;
			r->zones = responder->zones;
			r->fd = socket_set_udp(sockets, w->index, a);
			r->ctx = w->ctx_udp;
			r->stats = &ws->stats[i * ws->parts + 1 + a];
			r->zone_stats = ws->zone_stats[i * ws->parts + 1 + a];
			r->zone_slots = (uint32_t)ws->zone_slots;
			r->tap = part_tap(ws, i, 1 + a);
			transfer_init(&r->xfr, cfg, zones, &r->stats->xfr, w->index, &r->ctx,
				      &w->ctx_tcp, NULL, NULL);
			r->xfr.udp_fd = r->fd;
			if (!(r->batch = udp_batch_new(answer_cap))) {
				snprintf(err, errlen, "out of memory for worker buffers");
				return SHOAL_ENOMEM;
			}
			w->udp_count++;
		}
	}
	return 0;
}

void workers_set_tls(workers_t *ws, tls_ctx_t *ctx)
{
	MAIN_THREAD_ONLY();
	ws->tls = ctx;
}

void workers_set_updater(workers_t *ws, struct updater *u)
{
	MAIN_THREAD_ONLY();
	for (size_t i = 0; i < ws->count; i++) {
		worker_t *w = &ws->w[i];
		__atomic_store_n(&w->xfr.updater, u, __ATOMIC_RELEASE);
		for (size_t a = 0; a < w->udp_count; a++)
			__atomic_store_n(&w->udp[a].xfr.updater, u, __ATOMIC_RELEASE);
	}
}

void workers_set_notify(workers_t *ws, transfer_notify_fn fn, void *arg)
{
	MAIN_THREAD_ONLY();
	for (size_t i = 0; i < ws->count; i++) {
		worker_t *w = &ws->w[i];
		w->xfr.notify = fn;
		w->xfr.notify_arg = arg;
		for (size_t a = 0; a < w->udp_count; a++) {
			w->udp[a].xfr.notify = fn;
			w->udp[a].xfr.notify_arg = arg;
		}
	}
}

/*
 * cpu-affinity: the attributes that pin worker i's threads to the CPUs
 * (of those this process may use) whose number modulo the workers is i,
 * the CPUs whose datagrams the groups' program steers to its sockets.
 * Returns false, attr untouched, when there is no such CPU or pinning is
 * off: the threads then run where the scheduler puts them.
 */
static bool worker_pin_attr(const workers_t *ws, size_t i, pthread_attr_t *attr)
{
	cpu_set_t allowed, mine;
	if (!ws->cfg->cpu_affinity || sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return false;
	CPU_ZERO(&mine);
	for (size_t c = i; c < CPU_SETSIZE; c += ws->count)
		if (CPU_ISSET(c, &allowed))
			CPU_SET(c, &mine);
	if (CPU_COUNT(&mine) == 0 || pthread_attr_init(attr) != 0)
		return false;
	if (pthread_attr_setaffinity_np(attr, sizeof(mine), &mine) != 0) {
		pthread_attr_destroy(attr);
		return false;
	}
	return true;
}

/* thread_start, pinned as worker_pin_attr says for worker i. Returns 0 or -errno. */
static int worker_thread_create(const workers_t *ws, size_t i, pthread_t *t, void *(*fn)(void *),
				void *arg, const char *name)
{
	pthread_attr_t attr;
	bool pinned = worker_pin_attr(ws, i, &attr);
	int e = thread_start(t, pinned ? &attr : NULL, fn, arg, "%s", name);
	if (pinned)
		pthread_attr_destroy(&attr);
	return e;
}

int workers_start(workers_t *ws, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	int rc = 0;
	if (ws->responder->zones && !(ws->reader = jread_start(TRANSFER_JREAD_MAX))) {
		snprintf(err, errlen, "cannot start the journal reader");
		return SHOAL_ENOMEM;
	}
	for (size_t i = 0; i < ws->count; i++) {
		worker_t *w = &ws->w[i];
		w->xfr.reader = ws->reader;
		char name[32];
		snprintf(name, sizeof(name), "shoald-tcp-%zu", i); /* its loop: TCP */
		rc = worker_thread_create(ws, i, &w->thread, worker_main, w, name);
		if (rc) {
			snprintf(err, errlen, "cannot start worker %zu: %s", i, shoal_strerror(rc));
			break;
		}
		w->thread_started = true;
	}
	pthread_mutex_lock(&ws->start_lock);
	for (size_t i = 0; i < ws->count; i++) {
		worker_t *w = &ws->w[i];
		while (w->thread_started && w->started == 0)
			pthread_cond_wait(&ws->start_cond, &ws->start_lock);
		if (w->started < 0 && rc == 0) {
			snprintf(err, errlen, "worker %zu failed to start (see above)", i);
			rc = w->started;
		}
	}
	pthread_mutex_unlock(&ws->start_lock);
	if (rc == 0 && (rc = udp_wake_init()) < 0)
		snprintf(err, errlen, "UDP wake-up signal: %s", shoal_strerror(rc));
	/* the receivers last: a query is answered only once every worker runs */
	for (size_t i = 0; rc == 0 && i < ws->count; i++) {
		worker_t *w = &ws->w[i];
		for (size_t a = 0; rc == 0 && a < w->udp_count; a++) {
			udp_receiver_t *r = &w->udp[a];
			char name[48];
			snprintf(name, sizeof(name), "shoald-udp-%zu-%zu", i,
				 a); /* worker, address */
			rc = worker_thread_create(ws, i, &r->thread, udp_receiver_main, r, name);
			if (rc)
				snprintf(err, errlen, "cannot start worker %zu's UDP receiver: %s",
					 i, shoal_strerror(rc));
			r->thread_started = rc == 0;
		}
	}
	return rc;
}

/*
 * Stop r's thread and join it. The signal may come just before the thread
 * enters recvmmsg and be missed: it is sent again until the thread ends.
 */
static void receiver_stop(udp_receiver_t *r)
{
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	for (;;) {
		pthread_kill(r->thread, UDP_WAKE_SIGNAL);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 20 * 1000 * 1000;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (pthread_timedjoin_np(r->thread, NULL, &until) == 0)
			break;
	}
	r->thread_started = false;
}

void workers_stop(workers_t *ws)
{
	MAIN_THREAD_ONLY();
	for (size_t i = 0; i < ws->count; i++) {
		worker_t *w = &ws->w[i];
		for (size_t a = 0; a < w->udp_count; a++)
			if (w->udp[a].thread_started)
				receiver_stop(&w->udp[a]);
	}
	for (size_t i = 0; i < ws->count; i++) {
		worker_t *w = &ws->w[i];
		if (w->thread_started && w->async_ready)
			uv_async_send(&w->stop_async);
	}
	for (size_t i = 0; i < ws->count; i++) {
		worker_t *w = &ws->w[i];
		if (w->thread_started)
			pthread_join(w->thread, NULL);
		w->thread_started = false;
	}
	/* no worker posts any more: what is queued ends unread */
	jread_stop(ws->reader);
	ws->reader = NULL;
}

int workers_stats_render(workers_t *ws, zonedb_ref_t *zones, const stats_groups_t *groups,
			 stats_secondaries_fn secondaries, const void *from, enum stats_format f,
			 char **out, size_t *len)
{
	MAIN_THREAD_ONLY();
	for (size_t i = 0; i < ws->count; i++)
		__atomic_store_n(&ws->stats[i * ws->parts].rcvbuf_drops,
				 socket_set_udp_drops(ws->sockets, (unsigned)i), __ATOMIC_RELAXED);
	zonedb_read_lock();
	stats_source_t src = {
		.workers = ws->stats,
		.count = ws->count,
		.parts = ws->parts,
		.zones = ws->zone_stats,
		.zone_slots = ws->zone_slots,
		.db = zonedb_current(zones),
		.groups = groups,
		.secondaries = secondaries,
		.secondaries_from = from,
	};
	int rc = stats_render(&src, f, out, len);
	zonedb_read_unlock(zones);
	return rc;
}

void workers_zone_slots_reset(workers_t *ws, const zonedb_t *db)
{
	if (!ws || !ws->zone_stats)
		return;
	size_t n;
	const uint32_t *fresh = zonedb_fresh_slots(db, &n);
	for (size_t i = 0; i < n; i++) {
		uint32_t slot = fresh[i];
		if (slot >= ws->zone_slots)
			continue;
		for (size_t t = 0; t < ws->count * ws->parts; t++) {
			uint64_t *c = (uint64_t *)&ws->zone_stats[t][slot];
			/* read first: a page no query counted into stays untouched */
			for (size_t k = 0; k < sizeof(zone_stats_t) / sizeof(uint64_t); k++)
				if (__atomic_load_n(&c[k], __ATOMIC_RELAXED))
					__atomic_store_n(&c[k], 0, __ATOMIC_RELAXED);
		}
	}
}

void workers_destroy(workers_t *ws)
{
	MAIN_THREAD_ONLY();
	for (size_t i = 0; ws->w && i < ws->count; i++)
		for (size_t a = 0; a < CONF_LISTEN_MAX; a++)
			udp_batch_free(ws->w[i].udp[a].batch);
	for (size_t i = 0; ws->zone_stats && i < ws->count * ws->parts; i++)
		if (ws->zone_stats[i])
			munmap(ws->zone_stats[i], ws->zone_slots * sizeof(zone_stats_t));
	free(ws->zone_stats);
	free(ws->w);
	free(ws->stats);
	ws->w = NULL;
	ws->stats = NULL;
	/* the threads that logged have stopped: what they queued is written */
	dnstap_free(ws->dnstap);
	ws->dnstap = NULL;
	rrl_free(ws->rrl);
	ws->rrl = NULL;
	addrlimit_free(ws->tcp_addresses);
	ws->tcp_addresses = NULL;
	addrlimit_free(ws->tls_addresses);
	ws->tls_addresses = NULL;
	if (ws->cookies_ready)
		cookies_clear(&ws->cookies);
	ws->cookies_ready = false;
	ws->zone_stats = NULL;
	if (ws->sync_ready) {
		pthread_cond_destroy(&ws->start_cond);
		pthread_mutex_destroy(&ws->start_lock);
		ws->sync_ready = false;
	}
}
