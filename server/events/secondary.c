/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Secondary zones: SOA timers, NOTIFY in, IXFR with AXFR fallback, saving, expiry; one thread. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <urcu.h>

#include "proto/error.h"
#include "proto/name.h"
#include "proto/request.h"
#include "proto/serial.h"
#include "proto/tsig.h"
#include "proto/wire.h"
#include "server/common/log.h"
#include "server/common/thread.h"
#include "server/common/timestamp.h"
#include "server/events/requestor.h"
#include "server/events/secondary.h"
#include "zone/journal.h"
#include "zone/write.h"
#include "zone/xfr_in.h"
#include "zone/zone.h"

/* How often the thread looks at the stop flag and the clock, at most, in ms. */
#define SECONDARY_TICK_MS 500

/* A secondary zone's timers and version: the transfer thread's alone. */
typedef struct sec_timers {
	bool have;       /* a version is served */
	uint32_t serial; /* the version served */
	uint32_t refresh, retry, expire;
	time_t next_check; /* when to ask the primaries next */
	time_t expire_at;  /* when the version served expires (have) */
} sec_timers_t;

/* What zone-status shows of it: under status_lock. */
typedef struct sec_status {
	char source[128];    /* "file", or "primary ADDR" */
	time_t last_refresh; /* the last successful check */
	time_t next_refresh;
	char last_error[256]; /* "" or why the last refresh failed */
} sec_status_t;

typedef struct sec_zone {
	size_t index; /* in the table's cfg */
	char name[NAME_TEXT_MAX];
	uint8_t apex[NAME_MAXLEN];
	int notified; /* atomic: a NOTIFY came in */
	int forced;   /* atomic: 1 refresh, 2 retransfer */
	sec_timers_t t;
	sec_status_t st;
} sec_zone_t;

/*
 * The secondary zones of one configuration, with a copy of it of their
 * own (the server frees its configurations at its pace). Immutable but for
 * the zones' atomics and status fields once published.
 */
typedef struct sec_table {
	conf_t cfg;
	size_t count;
	sec_zone_t z[];
} sec_table_t;

struct secondary {
	zonedb_ref_t *zones;
	reload_t *reload;
	void (*published)(void *arg);
	void *published_arg;
	/*
	 * The thread works on `work`; others look zones up in `shown` (RCU:
	 * workers within their read section, the main thread within one of its
	 * own). A reconfig shows its table at once and posts it in `pending`;
	 * the thread adopts it between two zones, carrying over the state of
	 * the zones it keeps, and frees the one it replaces after a grace
	 * period.
	 */
	sec_table_t *work;
	sec_table_t *shown;
	sec_table_t *pending; /* atomic exchange: main posts, the thread takes */
	/* the zone whose transfer runs, and whether a reconfig gives it up */
	pthread_mutex_t flight_lock;
	const sec_zone_t *in_flight; /* of work, under flight_lock */
	int give_up;                 /* atomic */
	pthread_t thread;
	bool started;
	int stop; /* atomic */
	sem_t wake;
	pthread_mutex_t status_lock;
	stats_xfr_in_t *stats; /* the caller's */
};

/* The largest request, signed with the longest key name, fits a message (requestor_init). */
_Static_assert(REQUEST_MAX + TSIG_RR_MAX <= DNS_TCP_MAX, "a request fits");

/* The timers of z's SOA (RFC 1035 3.3.13), bounded by the configuration. */
static void soa_timers(const conf_t *cfg, const zone_t *z, sec_zone_t *sz)
{
	const zrrset_t *soa = znode_rrset(z->apex, DNS_TYPE_SOA);
	uint32_t refresh = 3600, retry = 600, expire = 86400;
	if (soa && soa->set.data_len > 10) {
		wire_t w;
		wire_init_read(&w, soa->set.data, soa->set.data_len);
		wire_skip(&w, 10);
		name_skip(&w);
		name_skip(&w);
		wire_skip(&w, 4); /* serial */
		uint32_t a = wire_read_u32(&w), b = wire_read_u32(&w), c = wire_read_u32(&w);
		if (!w.err) {
			refresh = a;
			retry = b;
			expire = c;
		}
	}
#define CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))
	sz->t.refresh = CLAMP(refresh, cfg->min_refresh_time, cfg->max_refresh_time);
	sz->t.retry = CLAMP(retry, cfg->min_retry_time, cfg->max_retry_time);
	sz->t.expire = CLAMP(expire, cfg->min_expire_time, cfg->max_expire_time);
#undef CLAMP
	sz->t.serial = z->serial;
}

static void table_free(sec_table_t *t)
{
	if (!t)
		return;
	conf_clear(&t->cfg);
	free(t);
}

/*
 * The secondary zones of cfg, each due for a check now, from the versions
 * *zones serves. NULL when out of memory. Main thread.
 */
static sec_table_t *table_new(const conf_t *cfg, zonedb_ref_t *zones)
{
	size_t n = conf_secondary_count(cfg);
	sec_table_t *t = calloc(1, sizeof(*t) + n * sizeof(t->z[0]));
	if (!t)
		return NULL;
	if (conf_copy(&t->cfg, cfg) < 0) {
		free(t);
		return NULL;
	}
	time_t now = time(NULL);
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(zones);
	for (size_t i = 0; i < cfg->zone_count; i++) {
		if (!conf_zone_is_secondary(cfg, i))
			continue;
		sec_zone_t *sz = &t->z[t->count++];
		sz->index = i;
		snprintf(sz->name, sizeof(sz->name), "%s", cfg->zones[i].name);
		name_from_text(cfg->zones[i].name, NULL, sz->apex);
		long at = zonedb_index(db, sz->apex);
		const zone_t *z = at < 0 ? NULL : zonedb_zone(db, (size_t)at);
		if (z) {
			/* the saved copy answers at once; it lasts expire from now */
			soa_timers(cfg, z, sz);
			sz->t.have = true;
			sz->t.expire_at = now + sz->t.expire;
			snprintf(sz->st.source, sizeof(sz->st.source), "file");
		} else {
			/* nothing to serve: ask again at the shortest bounds until a primary
			 * answers */
			sz->t.refresh = cfg->min_refresh_time;
			sz->t.retry = cfg->min_retry_time;
			sz->t.expire = cfg->min_expire_time;
			snprintf(sz->st.source, sizeof(sz->st.source), "none");
		}
		sz->t.next_check = now;
		sz->st.next_refresh = now;
	}
	zonedb_read_unlock(zones);
	return t;
}

/* The entry of the zone called `name` in t, or NULL. */
static sec_zone_t *table_find(sec_table_t *t, const char *name)
{
	long i = conf_zone_index(&t->cfg, name);
	for (size_t k = 0; i >= 0 && k < t->count; k++)
		if (t->z[k].index == (size_t)i)
			return &t->z[k];
	return NULL;
}

/*
 * The zones of `to` that `from` has alike (the same name and transfer
 * settings) take what `from` knew of them: the status zone-status shows,
 * and with `timers` their timers and served version too. Under
 * status_lock. Returns how many were carried over.
 */
static size_t table_carry(sec_table_t *from, sec_table_t *to, bool timers)
{
	size_t kept = 0;
	for (size_t k = 0; k < to->count; k++) {
		sec_zone_t *b = &to->z[k], *a = table_find(from, b->name);
		if (!a || !conf_zone_same_transfer_in(&from->cfg, a->index, &to->cfg, b->index))
			continue;
		if (timers)
			b->t = a->t;
		b->st = a->st;
		kept++;
	}
	return kept;
}

/* The NOTIFYs and forced refreshes of `from`'s zones, moved to the same zones of `to`. */
static void table_move_flags(sec_table_t *from, sec_table_t *to)
{
	for (size_t k = 0; k < from->count; k++) {
		sec_zone_t *a = &from->z[k], *b = table_find(to, a->name);
		int notified = __atomic_exchange_n(&a->notified, 0, __ATOMIC_ACQ_REL);
		int forced = __atomic_exchange_n(&a->forced, 0, __ATOMIC_ACQ_REL);
		if (!b)
			continue;
		if (notified)
			__atomic_store_n(&b->notified, 1, __ATOMIC_RELEASE);
		if (forced > __atomic_load_n(&b->forced, __ATOMIC_ACQUIRE))
			__atomic_store_n(&b->forced, forced, __ATOMIC_RELEASE);
	}
}

int secondary_new(const conf_t *cfg, zonedb_ref_t *zones, reload_t *r, void (*published)(void *arg),
		  void *arg, stats_xfr_in_t *counters, secondary_t **out)
{
	*out = NULL;
	if (!conf_secondary_count(cfg))
		return 0;
	secondary_t *s = calloc(1, sizeof(*s));
	if (!s || !(s->work = table_new(cfg, zones))) {
		free(s);
		return SHOAL_ENOMEM;
	}
	s->shown = s->work;
	s->zones = zones;
	s->reload = r;
	s->published = published;
	s->published_arg = arg;
	s->stats = counters;
	sem_init(&s->wake, 0, 0);
	pthread_mutex_init(&s->status_lock, NULL);
	pthread_mutex_init(&s->flight_lock, NULL);
	*out = s;
	return 0;
}

int secondary_reconfig(secondary_t *s, const conf_t *cfg)
{
	sec_table_t *t = table_new(cfg, s->zones);
	if (!t)
		return SHOAL_ENOMEM;
	/* zone-status shows the state of the zones kept until the thread carries it over */
	pthread_mutex_lock(&s->status_lock);
	table_carry(s->shown, t, false);
	pthread_mutex_unlock(&s->status_lock);
	/* a transfer in flight for a zone this configuration changes or removes is given up */
	pthread_mutex_lock(&s->flight_lock);
	const sec_zone_t *f = s->in_flight;
	if (f) {
		const sec_zone_t *b = table_find(t, f->name);
		if (!b || !conf_zone_same_transfer_in(&s->work->cfg, f->index, cfg, b->index))
			__atomic_store_n(&s->give_up, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&s->flight_lock);
	rcu_assign_pointer(s->shown, t);
	sec_table_t *was = __atomic_exchange_n(&s->pending, t, __ATOMIC_ACQ_REL);
	if (was) {
		/* posted before and never adopted: the thread never saw it, readers may have */
		synchronize_rcu();
		table_move_flags(was, t);
		table_free(was);
	}
	sem_post(&s->wake);
	return 0;
}

/*
 * Take the table a reconfig posted, if any: its zones that the one worked
 * on keeps alike take over their timers and served version; the others
 * are checked at once. The secondary thread, between two zones.
 */
static void adopt(secondary_t *s)
{
	sec_table_t *t = __atomic_exchange_n(&s->pending, NULL, __ATOMIC_ACQ_REL);
	if (!t)
		return;
	sec_table_t *old = s->work;
	/* no reader holds the tables shown before t after this: their flags are final */
	synchronize_rcu();
	pthread_mutex_lock(&s->status_lock);
	size_t kept = table_carry(old, t, true);
	pthread_mutex_unlock(&s->status_lock);
	table_move_flags(old, t);
	s->work = t;
	log_info("secondary zones: %zu kept with their timers, %zu checked anew", kept,
		 t->count - kept);
	table_free(old);
}

/* ---- one transfer ---- */

typedef struct attempt {
	secondary_t *s;
	sec_zone_t *sz;
	xfr_in_t *x;      /* the answer being checked */
	bool forced;      /* shoalctl retransfer: the whole zone, whatever its serial */
	bool unreachable; /* the primary did not take the connection */
	char err[256];    /* the first error message of the transfer */
} attempt_t;

/* The checks' messages: the first error is kept for the one line that says the transfer failed. */
static void on_msg(void *arg, bool is_error, const char *msg)
{
	attempt_t *a = arg;
	if (is_error && !a->err[0])
		snprintf(a->err, sizeof(a->err), "%s", msg);
	else if (!is_error)
		log_info("zone %s: %s", a->sz->name, msg);
}

/* Each message of the answer, its TSIG verified by the requestor: to the transfer's checks. */
static int on_xfr_message(void *arg, const uint8_t *msg, size_t len)
{
	attempt_t *a = arg;
	return xfr_in_feed(a->x, msg, len);
}

/* A transfer running is given up when the server stops, or a reconfig changes or removes its zone.
 */
static bool given_up(void *arg)
{
	const secondary_t *s = arg;
	return __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&s->give_up, __ATOMIC_ACQUIRE);
}

/*
 * The exchange with the primary brought no zone (res): why, into a->err
 * unless the transfer's checks said it first. Returns the error, or the
 * positive rcode the primary answered with.
 */
static int exchange_failed(attempt_t *a, const char *label, const requestor_result_t *res)
{
	const conf_t *cfg = &a->s->work->cfg;
	char why[256];
	a->unreachable = res->error < 0 && res->stage == REQUESTOR_CONNECT;
	if (!res->error) { /* REFUSED, NOTAUTH... RFC 8945 5.3: with the TSIG RR's Error */
		snprintf(a->err, sizeof(a->err), "%s answered %s", label, res->answer);
		return res->rcode;
	}
	if (a->err[0])
		return res->error; /* the transfer's checks said why first */
	if (res->error == SHOAL_ETIMEOUT && res->stage == REQUESTOR_RECEIVE)
		snprintf(a->err, sizeof(a->err),
			 "%s: no message within %u s, or the transfer took over %u s "
			 "(xfr-message-timeout, xfr-timeout)",
			 label, cfg->xfr_message_timeout, cfg->xfr_timeout);
	else if (res->error == SHOAL_EMALFORMED && res->stage == REQUESTOR_RECEIVE)
		snprintf(a->err, sizeof(a->err), "%s: the transfer stopped before its end", label);
	else
		snprintf(a->err, sizeof(a->err), "%s: %s", label,
			 requestor_result_text(res, why, sizeof(why)));
	/* messages of another ID or question are passed over: say so, or the wait looks idle */
	size_t used = strlen(a->err);
	if (res->ignored)
		snprintf(a->err + used, sizeof(a->err) - used,
			 " (%u messages ignored: another ID or question)", res->ignored);
	return res->error;
}

/*
 * The primary's version is not newer than the one served (RFC 1982 3.2),
 * said as Knot says it; or it is 2^31 away, where neither is newer.
 */
static void outdated_text(attempt_t *a, const char *label, uint32_t remote, uint32_t served)
{
	if (serial_compare(remote, served) == SERIAL_UNDEFINED)
		snprintf(a->err, sizeof(a->err),
			 "%s: remote serial %u is 2^31 from the zone's %u: neither is newer "
			 "(RFC 1982 3.2)",
			 label, (unsigned)remote, (unsigned)served);
	else
		snprintf(a->err, sizeof(a->err),
			 "%s: remote serial %u, remote is outdated (the zone has %u)", label,
			 (unsigned)remote, (unsigned)served);
}

/*
 * Transfer zone sz from primary p with qtype (IXFR from current, or AXFR):
 * returns 0 and *out (NULL: up to date, or *kind XFR_IN_OUTDATED with
 * a->err set: a primary behind the version served, unless a->forced), a
 * negative error with a->err set, or a positive rcode the primary
 * answered with.
 */
static int transfer(attempt_t *a, const acl_entry_t *p, uint16_t qtype, const zone_t *current,
		    journal_t *journal, zone_t **out, enum xfr_in_kind *kind)
{
	secondary_t *s = a->s;
	const conf_t *cfg = &s->work->cfg;
	sec_zone_t *sz = a->sz;
	uint8_t query[REQUEST_MAX];
	requestor_t req;
	bool made = false;
	int rc;
	*out = NULL;
	/* first: every failure below names the primary with it */
	char label[160];
	snprintf(label, sizeof(label), "primary %.140s", p->text);
	const zrrset_t *soa = current ? znode_rrset(current->apex, DNS_TYPE_SOA) : NULL;
	/* room for the longest SOA names and key name: a zone's own must never stop its refresh */
	rc = request_write(query, sizeof(query), 0, DNS_OPCODE_QUERY, 0, sz->apex, qtype,
			   DNS_SECTION_AUTHORITY,
			   qtype == DNS_TYPE_IXFR && soa ? soa->set.data : NULL);
	if (rc < 0)
		goto done;
	requestor_params_t rp = {
		.peer = (const struct sockaddr *)&p->addr,
		.peer_len = p->addr_len,
		.query = query,
		.query_len = (size_t)rc,
		.key = p->key != ACL_NOKEY ? &cfg->keys[p->key] : NULL,
		.transport = REQUESTOR_TCP,
		.connect_ms = cfg->xfr_message_timeout * 1000u,
		.message_ms = cfg->xfr_message_timeout * 1000u,
		.total_ms = cfg->xfr_timeout * 1000u,
		.on_response = on_xfr_message,
		.arg = a,
		.label = label,
	};
	rc = requestor_init(&req, &rp);
	if (rc < 0)
		goto done;
	made = true;
	xfr_in_limits_t limits = { .max_octets = cfg->max_zone_size };
	/* current for an AXFR too: the journal gets the diff, so IXFR out still reaches back */
	a->x = xfr_in_new(sz->apex, qtype, requestor_id(&req), current, &limits,
			  &cfg->zones[sz->index].limits, label, on_msg, a);
	if (!a->x) {
		rc = SHOAL_ENOMEM;
		goto done;
	}
	if (a->forced)
		xfr_in_take_any_serial(a->x);
	rc = requestor_run(&req, given_up, s);
	stats_add(&s->stats->bytes_in, req.result.octets);
	if (rc < 0 || req.result.rcode > 0) {
		rc = exchange_failed(a, label, &req.result);
		goto done;
	}
	*kind = xfr_in_kind(a->x);
	rc = xfr_in_finish(a->x, journal, out);
	if (rc == 0 && *kind == XFR_IN_OUTDATED)
		outdated_text(a, label, xfr_in_serial(a->x), current->serial);
done:
	if (made)
		requestor_clear(&req);
	xfr_in_free(a->x);
	a->x = NULL;
	if (rc < 0 && !a->err[0])
		snprintf(a->err, sizeof(a->err), "%s: %s", label, shoal_strerror(rc));
	return rc;
}

/* Publish z (or nothing: NULL) for sz with error, then tell who follows. */
static int publish(secondary_t *s, sec_zone_t *sz, const zone_t *z, const char *error)
{
	int rc = reload_replace_zone(s->reload, sz->apex, z, error, &s->stop);
	if (rc < 0)
		log_error("zone %s: cannot publish the new version: %s", sz->name,
			  shoal_strerror(rc));
	else if (z && s->published)
		s->published(s->published_arg);
	return rc;
}

/*
 * Ask primary p: IXFR from current (AXFR when nothing is served or the
 * transfer is forced), then AXFR when the IXFR failed for any reason but
 * a primary out of reach (RFC 1995 4), a local failure too: a request
 * that cannot be made must not stop every refresh. Returns as transfer.
 */
static int ask_primary(attempt_t *a, const acl_entry_t *p, zone_t *current, journal_t *journal,
		       zone_t **got, enum xfr_in_kind *kind)
{
	secondary_t *s = a->s;
	uint16_t qtype = current && !a->forced ? DNS_TYPE_IXFR : DNS_TYPE_AXFR;
	a->err[0] = '\0';
	a->unreachable = false;
	int rc = transfer(a, p, qtype, current, journal, got, kind);
	if (rc == 0 || qtype != DNS_TYPE_IXFR || a->unreachable ||
	    __atomic_load_n(&s->stop, __ATOMIC_ACQUIRE) ||
	    __atomic_load_n(&s->give_up, __ATOMIC_ACQUIRE))
		return rc;
	log_notice("zone %s: IXFR from %s failed (%s): trying AXFR", a->sz->name, p->text, a->err);
	a->err[0] = '\0';
	return transfer(a, p, DNS_TYPE_AXFR, current, journal, got, kind);
}

/*
 * Serve got, the version p sent to attempt a (by IXFR or AXFR: kind), in
 * place of current (NULL: none): publish it, take its timers, save it to
 * the zone's file (a->err gets why a save fails).
 */
static void take_version(attempt_t *a, const acl_entry_t *p, const zone_t *got,
			 enum xfr_in_kind kind, const zone_t *current)
{
	secondary_t *s = a->s;
	sec_zone_t *sz = a->sz;
	const conf_t *cfg = &s->work->cfg;
	stats_add(kind == XFR_IN_IXFR ? &s->stats->ixfr : &s->stats->axfr, 1);
	if (publish(s, sz, got, NULL) < 0)
		return;
	/* only shoalctl retransfer goes back (xfr_in_take_any_serial) */
	char back[64] = "";
	if (current && !serial_gt(got->serial, current->serial))
		snprintf(back, sizeof(back), " (retransfer: not newer than serial %u)",
			 (unsigned)current->serial);
	log_info("zone %s: serial %u from %s by %s, %zu records%s", sz->name, (unsigned)got->serial,
		 p->text, kind == XFR_IN_IXFR ? "IXFR" : "AXFR", got->rr_count, back);
	soa_timers(cfg, got, sz);
	sz->t.have = true;
	pthread_mutex_lock(&s->status_lock);
	snprintf(sz->st.source, sizeof(sz->st.source), "primary %.110s", p->text);
	pthread_mutex_unlock(&s->status_lock);
	const char *file = cfg->zones[sz->index].file;
	if (file && *file) {
		char comment[256];
		snprintf(comment, sizeof(comment), "transferred from %.200s", p->text);
		a->err[0] = '\0';
		int wrc = zone_write(got, file, comment, &cfg->zones[sz->index].limits, on_msg, a);
		if (wrc < 0 && a->err[0])
			log_error("zone %s: cannot save: %s", sz->name, a->err);
		else if (wrc < 0)
			log_error("zone %s: cannot save to %s: %s", sz->name, file,
				  shoal_strerror(wrc));
	}
}

/*
 * Ask the primaries in order; true when one answered with the zone or
 * said it is current. A primary behind the version served is passed over
 * as one that failed (RFC 1982: never back, unless forced), so one that
 * lags does not hold the zone back from the next.
 */
static bool refresh_zone(secondary_t *s, sec_zone_t *sz, bool forced)
{
	const acl_t *primaries = &s->work->cfg.zone_xfr[sz->index].primaries;
	zone_t *current = NULL;
	journal_t *journal = NULL;
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(s->zones);
	/* by apex: the set may be newer than this thread's configuration */
	long at = zonedb_index(db, sz->apex);
	const zone_t *z = at < 0 ? NULL : zonedb_zone(db, (size_t)at);
	if (z)
		current = (zone_t *)zone_ref(z);
	journal_t *j = zonedb_journal(db, sz->apex);
	if (j)
		journal = journal_ref(j);
	zonedb_read_unlock(s->zones);
	stats_add(&s->stats->checks, 1);
	attempt_t a = { .s = s, .sz = sz, .forced = forced };
	bool ok = false;
	for (size_t k = 0; k < primaries->count && !ok && !__atomic_load_n(&s->stop, 0) &&
			   !__atomic_load_n(&s->give_up, __ATOMIC_ACQUIRE);
	     k++) {
		const acl_entry_t *p = &primaries->entries[k];
		zone_t *got = NULL;
		enum xfr_in_kind kind = XFR_IN_PENDING;
		int rc = ask_primary(&a, p, current, journal, &got, &kind);
		if (rc != 0 && __atomic_load_n(&s->give_up, __ATOMIC_ACQUIRE)) {
			log_notice("zone %s: transfer from %s given up: a reconfig changed or "
				   "removed the zone",
				   sz->name, p->text);
			break;
		}
		if (rc != 0 || kind == XFR_IN_OUTDATED) {
			stats_add(&s->stats->failed, 1);
			log_warning(
				"zone %s: transfer from %s failed: %s; the version served stays",
				sz->name, p->text, a.err);
			continue;
		}
		ok = true;
		pthread_mutex_lock(&s->status_lock);
		sz->st.last_refresh = time(NULL);
		sz->st.last_error[0] = '\0';
		pthread_mutex_unlock(&s->status_lock);
		if (!got) {
			stats_add(&s->stats->uptodate, 1);
			log_info("zone %s: serial %u is current at %s", sz->name,
				 (unsigned)sz->t.serial, p->text);
			break;
		}
		take_version(&a, p, got, kind, current);
		zone_unref(got);
	}
	if (!ok) {
		pthread_mutex_lock(&s->status_lock);
		snprintf(sz->st.last_error, sizeof(sz->st.last_error), "%s",
			 a.err[0] ? a.err : "no primary answered");
		pthread_mutex_unlock(&s->status_lock);
	}
	if (current)
		zone_unref(current);
	if (journal)
		journal_unref(journal);
	return ok;
}

/* Check zone sz of the table worked on, where a reconfig may give it up. */
static bool refresh_in_flight(secondary_t *s, sec_zone_t *sz, bool forced)
{
	pthread_mutex_lock(&s->flight_lock);
	s->in_flight = sz;
	__atomic_store_n(&s->give_up, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&s->flight_lock);
	bool ok = refresh_zone(s, sz, forced);
	pthread_mutex_lock(&s->flight_lock);
	s->in_flight = NULL;
	pthread_mutex_unlock(&s->flight_lock);
	return ok;
}

static void *secondary_main(void *arg)
{
	secondary_t *s = arg;
	rcu_register_thread();
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		adopt(s);
		sec_table_t *t = s->work;
		time_t now = time(NULL);
		time_t next = now + 3600;
		for (size_t k = 0; k < t->count && !__atomic_load_n(&s->stop, 0); k++) {
			sec_zone_t *sz = &t->z[k];
			int forced = __atomic_exchange_n(&sz->forced, 0, __ATOMIC_ACQ_REL);
			bool notified = __atomic_exchange_n(&sz->notified, 0, __ATOMIC_ACQ_REL);
			if (forced || notified || sz->t.next_check <= now) {
				bool ok = refresh_in_flight(s, sz, forced == 2);
				now = time(NULL);
				if (ok)
					sz->t.expire_at = now + sz->t.expire;
				sz->t.next_check = now + (ok ? sz->t.refresh : sz->t.retry);
				pthread_mutex_lock(&s->status_lock);
				sz->st.next_refresh = sz->t.next_check;
				pthread_mutex_unlock(&s->status_lock);
			}
			if (sz->t.have && sz->t.expire_at <= now) {
				/* RFC 1035 3.3.13: no longer authoritative; SERVFAIL, as NSD and
				 * Knot */
				char why[128];
				snprintf(why, sizeof(why), "expired: no refresh for %u s",
					 (unsigned)sz->t.expire);
				log_error("zone %s: %s; answering SERVFAIL", sz->name, why);
				if (publish(s, sz, NULL, why) == 0) {
					sz->t.have = false;
					stats_add(&s->stats->expired, 1);
				}
			}
			if (sz->t.next_check < next)
				next = sz->t.next_check;
			if (sz->t.have && sz->t.expire_at < next)
				next = sz->t.expire_at;
			if (__atomic_load_n(&s->pending, __ATOMIC_ACQUIRE)) {
				next = now; /* a reconfig's zones first */
				break;
			}
		}
		struct timespec d;
		clock_gettime(CLOCK_REALTIME, &d);
		long wait_ms = (long)(next - time(NULL)) * 1000;
		if (wait_ms > SECONDARY_TICK_MS)
			wait_ms = SECONDARY_TICK_MS;
		if (wait_ms < 10)
			wait_ms = 10;
		d.tv_nsec += wait_ms * 1000000;
		d.tv_sec += d.tv_nsec / 1000000000;
		d.tv_nsec %= 1000000000;
		while (sem_timedwait(&s->wake, &d) < 0 && errno == EINTR)
			;
	}
	rcu_unregister_thread();
	return NULL;
}

int secondary_start(secondary_t *s)
{
	if (!s)
		return 0;
	/* ps -L and top -H show it so; so do the tests that see it stop */
	int e = thread_start(&s->thread, NULL, secondary_main, s, "shoald-xfr-in");
	if (e)
		return e;
	s->started = true;
	return 0;
}

/* The entry of zone `apex` in the table shown, or NULL: not a secondary. In a read section. */
static sec_zone_t *zone_of(secondary_t *s, const uint8_t *apex)
{
	sec_table_t *t = s ? rcu_dereference(s->shown) : NULL;
	for (size_t k = 0; t && k < t->count; k++)
		if (name_equal(t->z[k].apex, apex))
			return &t->z[k];
	return NULL;
}

void secondary_notify(secondary_t *s, const uint8_t *apex)
{
	rcu_read_lock();
	sec_zone_t *sz = zone_of(s, apex);
	if (sz) {
		__atomic_store_n(&sz->notified, 1, __ATOMIC_RELEASE);
		sem_post(&s->wake);
	}
	rcu_read_unlock();
}

int secondary_refresh(secondary_t *s, const uint8_t *apex, bool retransfer)
{
	rcu_read_lock();
	sec_zone_t *sz = zone_of(s, apex);
	if (sz) {
		__atomic_store_n(&sz->forced, retransfer ? 2 : 1, __ATOMIC_RELEASE);
		sem_post(&s->wake);
	}
	rcu_read_unlock();
	return sz ? 0 : SHOAL_ENOTFOUND;
}

static void format_time(time_t t, char *buf, size_t cap)
{
	if (!t || !timestamp_text(t, -1, buf, cap))
		snprintf(buf, cap, "-");
}

void secondary_status(secondary_t *s, const uint8_t *apex, char *buf, size_t cap)
{
	rcu_read_lock();
	sec_zone_t *sz = zone_of(s, apex);
	if (!sz) {
		rcu_read_unlock();
		snprintf(buf, cap, "%s", "");
		return;
	}
	char last[TIMESTAMP_TEXT_MAX], next[TIMESTAMP_TEXT_MAX];
	pthread_mutex_lock(&s->status_lock);
	format_time(sz->st.last_refresh, last, sizeof(last));
	format_time(sz->st.next_refresh, next, sizeof(next));
	snprintf(buf, cap, " source %s last-refresh %s next-refresh %s%s%s", sz->st.source, last,
		 next, sz->st.last_error[0] ? " last-error " : "", sz->st.last_error);
	pthread_mutex_unlock(&s->status_lock);
	rcu_read_unlock();
}

void secondary_free(secondary_t *s)
{
	if (!s)
		return;
	if (s->started) {
		__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
		sem_post(&s->wake);
		pthread_join(s->thread, NULL);
	}
	sem_destroy(&s->wake);
	pthread_mutex_destroy(&s->status_lock);
	pthread_mutex_destroy(&s->flight_lock);
	/* shown is work or pending; readers are gone (the caller waited a grace period) */
	sec_table_t *pending = __atomic_exchange_n(&s->pending, NULL, __ATOMIC_ACQ_REL);
	if (pending != s->work)
		table_free(pending);
	table_free(s->work);
	free(s);
}
