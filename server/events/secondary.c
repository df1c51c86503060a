/* SPDX-License-Identifier: GPL-3.0-or-later */
/* What one refresh of a secondary zone does: SOA over UDP, IXFR with AXFR fallback, publish, save.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <urcu.h>

#include "proto/error.h"
#include "proto/name.h"
#include "proto/request.h"
#include "proto/serial.h"
#include "proto/tsig.h"
#include "proto/wire.h"
#include "server/common/log.h"
#include "server/common/mainthread.h"
#include "server/events/internal.h"
#include "server/events/requestor.h"
#include "zone/journal.h"
#include "zone/sign_version.h"
#include "zone/xfr_in.h"
#include "zone/zone.h"

/*
 * How long an SOA query over UDP waits for its answer before the refresh
 * goes on over TCP (a datagram lost, or a primary that does not answer
 * over UDP), at most: xfr-message-timeout when shorter.
 */
#define SEC_SOA_UDP_MS 3000

/* The largest request, signed with the longest key name, fits a message (requestor_init). */
_Static_assert(REQUEST_MAX + TSIG_RR_MAX <= DNS_TCP_MAX, "a request fits");

void sec_bound_timers(const conf_t *cfg, sec_timers_t *t)
{
#define CLAMP(v, lo, hi) ((v) < (lo) ? (lo) : (v) > (hi) ? (hi) : (v))
	t->refresh = CLAMP(t->soa_refresh, cfg->min_refresh_time, cfg->max_refresh_time);
	t->retry = CLAMP(t->soa_retry, cfg->min_retry_time, cfg->max_retry_time);
	t->expire = CLAMP(t->soa_expire, cfg->min_expire_time, cfg->max_expire_time);
#undef CLAMP
}

void sec_timers_from(const conf_t *cfg, const zone_t *z, sec_timers_t *t)
{
	/* nothing to serve: ask again at the shortest bounds until a primary answers */
	t->soa_refresh = t->soa_retry = t->soa_expire = 0;
	t->have = z != NULL;
	t->serial = t->notify_from = z ? z->serial : 0;
	const zrrset_t *soa = z ? znode_rrset(z->apex, DNS_TYPE_SOA) : NULL;
	if (soa && soa->set.data_len > 10) {
		/* RFC 1035 3.3.13: MNAME, RNAME, SERIAL, REFRESH, RETRY, EXPIRE */
		wire_t w;
		wire_init_read(&w, soa->set.data, soa->set.data_len);
		wire_skip(&w, 10);
		name_skip(&w);
		name_skip(&w);
		wire_skip(&w, 4);
		uint32_t a = wire_read_u32(&w), b = wire_read_u32(&w), c = wire_read_u32(&w);
		if (!w.err) {
			t->soa_refresh = a;
			t->soa_retry = b;
			t->soa_expire = c;
		}
	}
	sec_bound_timers(cfg, t);
}

void sec_set_status(sched_t *s, sec_zone_t *z, const char *source, const char *last_error)
{
	char *src = source ? strdup(source) : NULL;
	char *err = last_error && *last_error ? strdup(last_error) : NULL;
	pthread_mutex_lock(&s->status_lock);
	if (src) {
		free(z->source);
		z->source = src;
	}
	if (last_error) {
		free(z->last_error);
		z->last_error = err;
	}
	pthread_mutex_unlock(&s->status_lock);
}

/* ---- one refresh ---- */

typedef struct attempt {
	sec_job_t *job;
	sched_t *s;
	sec_zone_t *z;
	const conf_t *cfg; /* the job's table's */
	char name[NAME_TEXT_MAX];
	xfr_in_t *x; /* the answer being checked */
	bool forced; /* shoalctl retransfer: the whole zone, whatever its serial */
	/* the zone's policy: its transfers signed before they are served (bump-in-the-wire) */
	const zone_sign_spec_t *sign;
	/* the serial asked from: the version served's, a signing zone's primary's; none: AXFR */
	bool has_from;
	uint32_t from;
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
		log_info("zone %s: %s", a->name, msg);
}

/* Each message of the answer, its TSIG verified by the requestor: to the transfer's checks. */
static int on_xfr_message(void *arg, const uint8_t *msg, size_t len)
{
	attempt_t *a = arg;
	return xfr_in_feed(a->x, msg, len);
}

/* A refresh is given up when the server stops, or a reconfig changes or removes its zone. */
static bool given_up(void *arg)
{
	const sec_job_t *job = arg;
	return __atomic_load_n(&job->s->stop, __ATOMIC_ACQUIRE) ||
	       __atomic_load_n(&job->give_up, __ATOMIC_ACQUIRE);
}

/*
 * The exchange with the primary brought no zone (res): why, into a->err
 * unless the transfer's checks said it first. Returns the error, or the
 * positive rcode the primary answered with.
 */
static int exchange_failed(attempt_t *a, const char *label, const requestor_result_t *res)
{
	char why[256];
	a->unreachable = res->error < 0 && res->stage == REQUESTOR_CONNECT;
	if (!res->error) { /* REFUSED, NOTAUTH... RFC 8945 5.3: with the TSIG RR's Error */
		snprintf(a->err, sizeof(a->err), "%s answered %s", label, res->answer);
		return res->rcode;
	}
	if (a->err[0])
		return res->error; /* the transfer's checks said why first */
	if (res->error == SHOAL_ETIMEOUT && res->total_timeout)
		snprintf(a->err, sizeof(a->err), "%s: the transfer took over %u s (xfr-timeout)",
			 label, a->cfg->xfr_timeout);
	else if (res->error == SHOAL_ETIMEOUT && res->stage == REQUESTOR_RECEIVE)
		/* issue 30: progress is octets; a transfer that brings none in this long ends */
		snprintf(a->err, sizeof(a->err), "%s: no octet within %u s (xfr-message-timeout)",
			 label, a->cfg->xfr_message_timeout);
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
 * The requestor's parameters for asking primary p: its address and key,
 * the job's deadlines; over TLS when p says so (RFC 9103), the primary
 * checked as the zone's tls-pin or tls-hostname say (opportunistic
 * without them), `other` the transport otherwise.
 */
static requestor_params_t primary_params(attempt_t *a, const acl_entry_t *p, const char *label,
					 enum requestor_transport other)
{
	const conf_t *cfg = a->cfg;
	return (requestor_params_t){
		.peer = (const struct sockaddr *)&p->addr,
		.peer_len = p->addr_len,
		.key = p->key != ACL_NOKEY ? &cfg->keys[p->key] : NULL,
		.transport = p->tls ? REQUESTOR_TLS : other,
		.tls_ctx = a->s->tls,
		.tls_auth = conf_zone_xfr(cfg, a->job->index)->primaries_tls,
		.connect_ms = cfg->xfr_message_timeout * 1000u,
		.message_ms = cfg->xfr_message_timeout * 1000u,
		.total_ms = cfg->xfr_timeout * 1000u,
		.arg = a,
		.label = label,
	};
}

/* What an SOA query over UDP found. */
enum soa_verdict {
	SOA_NEWER,    /* the primary has a newer serial: transfer */
	SOA_CURRENT,  /* the serial served */
	SOA_FAILED,   /* an error answer, an older serial, no SOA: a->err says; the next primary */
	SOA_OVER_TCP, /* no answer, or TC: the transfer over TCP tells */
};

/* The answer's SOA serial for the zone, if it has one: the SOA query's on_response. */
typedef struct soa_answer {
	const uint8_t *apex;
	bool found;
	uint32_t serial;
} soa_answer_t;

/* The serial of the zone's SOA in the answer section of msg (RFC 1035 4.1), if there. */
static int on_soa(void *arg, const uint8_t *msg, size_t len)
{
	soa_answer_t *sa = arg;
	wire_t w;
	wire_init_read(&w, msg, len);
	uint16_t qd = wire_get_u16(msg + 4), an = wire_get_u16(msg + 6);
	wire_skip(&w, DNS_HEADER_SIZE);
	for (uint16_t k = 0; k < qd && !w.err; k++) {
		name_skip(&w);
		wire_skip(&w, 4);
	}
	for (uint16_t k = 0; k < an && !w.err && !sa->found; k++) {
		uint8_t owner[NAME_MAXLEN];
		bool mine = name_unpack(&w, owner, true) >= 0 && name_equal(owner, sa->apex);
		uint16_t type = wire_read_u16(&w), class = wire_read_u16(&w);
		wire_skip(&w, 4);
		size_t rdlen = wire_read_u16(&w), end = w.pos + rdlen;
		if (mine && type == DNS_TYPE_SOA && class == DNS_CLASS_IN) {
			name_skip(&w);
			name_skip(&w);
			sa->serial = wire_read_u32(&w);
			sa->found = !w.err;
		}
		w.pos = end;
	}
	return 1;
}

/* "primary 192.0.2.1@853 over TLS": how every line about p names it. */
static void primary_label(const acl_entry_t *p, char *label, size_t cap)
{
	snprintf(label, cap, "primary %.140s%s", p->text, p->tls ? " over TLS" : "");
}

/*
 * Ask primary p for the zone's SOA over UDP (with its key), as a refresh
 * asks first (RFC 1035 4.3.5), so a transfer over TCP is made only when
 * there is something newer; over TLS to a TLS primary (RFC 9103: nothing
 * of the zone in the clear). The serial is judged against a->from (RFC
 * 1982).
 */
static enum soa_verdict ask_soa(attempt_t *a, const acl_entry_t *p)
{
	char label[180];
	primary_label(p, label, sizeof(label));
	uint8_t query[REQUEST_MAX];
	int len = request_write(query, sizeof(query), 0, DNS_OPCODE_QUERY, 0, a->z->apex,
				DNS_TYPE_SOA, DNS_SECTION_ANSWER, NULL);
	if (len < 0)
		return SOA_OVER_TCP;
	soa_answer_t sa = { .apex = a->z->apex };
	requestor_params_t rp = primary_params(a, p, label, REQUESTOR_UDP);
	unsigned wait = a->cfg->xfr_message_timeout * 1000u;
	rp.query = query;
	rp.query_len = (size_t)len;
	if (!p->tls)
		rp.message_ms = rp.total_ms = wait < SEC_SOA_UDP_MS ? wait : SEC_SOA_UDP_MS;
	rp.on_response = on_soa;
	rp.arg = &sa;
	requestor_t req;
	if (requestor_init(&req, &rp) < 0)
		return SOA_OVER_TCP;
	stats_add_shared(&a->s->counters->soa_queries, 1);
	int rc = requestor_run(&req, given_up, a->job);
	requestor_clear(&req);
	if (rc < 0 && p->tls) {
		/* the transfer would meet the same connection, handshake or key: the next primary
		 */
		exchange_failed(a, label, &req.result);
		return SOA_FAILED;
	}
	if (rc < 0 || req.result.tc || req.result.rcode == DNS_RCODE_REFUSED) {
		/*
		 * a lost datagram, a primary that answers over TCP alone: the transfer tells;
		 * so does one that refuses the question over UDP alone (Knot 3.2 its generated
		 * catalog zones, RFC 9432: a consumer would never see a change)
		 */
		return SOA_OVER_TCP;
	}
	if (req.result.rcode > 0) {
		exchange_failed(a, label, &req.result);
		return SOA_FAILED;
	}
	if (!sa.found) {
		snprintf(a->err, sizeof(a->err), "%s answered without the zone's SOA", label);
		return SOA_FAILED;
	}
	if (serial_gt(sa.serial, a->from))
		return SOA_NEWER;
	if (sa.serial == a->from)
		return SOA_CURRENT;
	outdated_text(a, label, sa.serial, a->from);
	return SOA_FAILED;
}

/*
 * The SOA an IXFR request carries (RFC 1995 3) into soa (the record after
 * its owner, as request_write takes it): current's, its serial a->from,
 * which for a signing zone is the primary's, not the one served. False
 * when there is none.
 */
static bool ixfr_soa(const attempt_t *a, const zone_t *current, uint8_t *soa)
{
	const zrrset_t *set = current ? znode_rrset(current->apex, DNS_TYPE_SOA) : NULL;
	if (!set || !a->has_from)
		return false;
	size_t len = 10u + wire_get_u16(set->set.data + 8);
	memcpy(soa, set->set.data, len);
	wire_t w;
	wire_init_read(&w, soa, len);
	wire_skip(&w, 10);
	name_skip(&w);
	name_skip(&w); /* RFC 1035 3.3.13: MNAME, RNAME, then SERIAL */
	if (w.err || w.pos + 4 > len)
		return false;
	wire_t out;
	wire_init_write(&out, soa + w.pos, 4);
	wire_write_u32(&out, a->from);
	return true;
}

/*
 * The version an AXFR built (*got), or an IXFR's changesets from a->from,
 * signed for serving against current (sign_transfer), into *got; the
 * signed change journalled. SHOAL_EUNSUPPORTED: an IXFR that cannot be
 * signed alone, for an AXFR (ask_primary).
 */
static int sign_in(attempt_t *a, const char *label, const zone_t *current, journal_t *journal,
		   zone_t **got)
{
	size_t n = 0;
	const changeset_t *const *sets = xfr_in_changesets(a->x, &n);
	sign_transfer_t in = {
		.axfr = *got, .sets = sets, .set_count = n, .upstream = xfr_in_serial(a->x)
	};
	zone_t *signed_version = NULL;
	int rc = sign_transfer(current, &in, a->sign, label,
			       &conf_zone_spec(a->cfg, a->job->index)->limits, journal, on_msg, a,
			       &signed_version);
	zone_unref(*got);
	*got = signed_version;
	if (rc == SHOAL_EUNSUPPORTED && !a->err[0])
		snprintf(a->err, sizeof(a->err), "%s: a change not to be signed alone", label);
	if (rc == 0) {
		a->has_from = true;
		a->from = in.upstream;
	}
	return rc;
}

/*
 * Transfer zone z from primary p with qtype (IXFR from current, or AXFR):
 * returns 0 and *out (NULL: up to date, or *kind XFR_IN_OUTDATED with
 * a->err set: a primary behind the version served, unless a->forced), a
 * negative error with a->err set, or a positive rcode the primary
 * answered with.
 */
static int transfer(attempt_t *a, const acl_entry_t *p, uint16_t qtype, const zone_t *current,
		    journal_t *journal, zone_t **out, enum xfr_in_kind *kind)
{
	const conf_t *cfg = a->cfg;
	uint8_t query[REQUEST_MAX];
	requestor_t req;
	bool made = false;
	int rc;
	*out = NULL;
	/* first: every failure below names the primary with it */
	char label[180];
	primary_label(p, label, sizeof(label));
	uint8_t soa[10 + 2 * NAME_MAXLEN + 20];
	bool has_soa = qtype == DNS_TYPE_IXFR && ixfr_soa(a, current, soa);
	/* room for the longest SOA names and key name: a zone's own must never stop its refresh */
	rc = request_write(query, sizeof(query), 0, DNS_OPCODE_QUERY, 0, a->z->apex, qtype,
			   DNS_SECTION_AUTHORITY, has_soa ? soa : NULL);
	if (rc < 0)
		goto done;
	requestor_params_t rp = primary_params(a, p, label, REQUESTOR_TCP);
	rp.query = query;
	rp.query_len = (size_t)rc;
	/* issue 30: a transfer keeps its slot while octets come, until xfr-timeout */
	rp.progress = true;
	rp.on_response = on_xfr_message;
	rc = requestor_init(&req, &rp);
	if (rc < 0)
		goto done;
	made = true;
	xfr_in_limits_t limits = { .max_octets = cfg->max_zone_size };
	/* current for an AXFR too: the journal gets the diff, so IXFR out still reaches back */
	a->x = xfr_in_new(a->z->apex, qtype, requestor_id(&req), a->has_from ? current : NULL,
			  &limits, &conf_zone_spec(cfg, a->job->index)->limits, label, on_msg, a);
	if (!a->x) {
		rc = SHOAL_ENOMEM;
		goto done;
	}
	if (a->sign && a->has_from)
		xfr_in_set_base(a->x, a->from); /* the primary's serial, not the signed one */
	if (a->forced)
		xfr_in_take_any_serial(a->x);
	rc = requestor_run(&req, given_up, a->job);
	stats_add_shared(&a->s->xfr_in->bytes_in, req.result.octets);
	if (rc < 0 || req.result.rcode > 0) {
		rc = exchange_failed(a, label, &req.result);
		goto done;
	}
	*kind = xfr_in_kind(a->x);
	/* a signing zone journals what it serves: the signed change (sign_in) */
	rc = xfr_in_finish(a->x, a->sign ? NULL : journal, out);
	if (rc == 0 && a->sign && (*kind == XFR_IN_AXFR || *kind == XFR_IN_IXFR))
		rc = sign_in(a, label, current, journal, out);
	if (rc == 0 && *kind == XFR_IN_OUTDATED)
		outdated_text(a, label, xfr_in_serial(a->x), a->from);
done:
	if (made)
		requestor_clear(&req);
	xfr_in_free(a->x);
	a->x = NULL;
	if (rc < 0 && !a->err[0])
		snprintf(a->err, sizeof(a->err), "%s: %s", label, shoal_strerror(rc));
	return rc;
}

/* Publish z (or nothing: NULL) for zone e, called name, with error, then tell who follows. */
static int publish(sched_t *s, const sec_zone_t *e, const char *name, const zone_t *z,
		   const char *error)
{
	int rc = reload_replace_zone(s->reload, e->apex, z, error, &s->stop);
	if (rc < 0)
		log_error("zone %s: cannot publish the new version: %s", name, shoal_strerror(rc));
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
	uint16_t qtype = a->has_from && !a->forced ? DNS_TYPE_IXFR : DNS_TYPE_AXFR;
	a->err[0] = '\0';
	a->unreachable = false;
	int rc = transfer(a, p, qtype, current, journal, got, kind);
	if (rc == 0 || qtype != DNS_TYPE_IXFR || a->unreachable || given_up(a->job))
		return rc;
	log_notice("zone %s: IXFR from %s failed (%s): trying AXFR", a->name, p->text, a->err);
	a->err[0] = '\0';
	return transfer(a, p, DNS_TYPE_AXFR, current, journal, got, kind);
}

/*
 * The zone is served, v its version, from now on: its timers taken, its
 * expiry counted anew (RFC 1035 3.3.13: from the last successful
 * refresh). Under the zone's publication lock, so that the scheduler
 * never expires it on a stale expiry.
 */
static void now_served(attempt_t *a, const zone_t *v)
{
	sec_zone_t *z = a->z;
	sec_timers_from(a->cfg, v, &z->t);
	if (a->sign && a->has_from)
		z->t.notify_from = a->from;
	z->expire_at = sched_now_ms() + (int64_t)z->t.expire * 1000;
}

void sec_set_saved(sched_t *s, sec_zone_t *z, bool saved, const char *error)
{
	char *text = error ? strdup(error) : NULL;
	int was = __atomic_exchange_n(&z->unsaved, !saved, __ATOMIC_ACQ_REL);
	if (was != !saved) /* the gauge moves with the flag, by one, whichever thread does it */
		stats_add_shared(&s->counters->unsaved, saved ? (uint64_t)-1 : 1);
	pthread_mutex_lock(&s->status_lock);
	free(z->save_error);
	z->save_error = text;
	pthread_mutex_unlock(&s->status_lock);
}

/*
 * Serve got, the version p sent to attempt a (by IXFR or AXFR: kind), in
 * place of current (NULL: none): publish it, take its timers, and plan
 * the write of the zone's file.
 */
static void take_version(attempt_t *a, const acl_entry_t *p, const zone_t *got,
			 enum xfr_in_kind kind, const zone_t *current)
{
	sched_t *s = a->s;
	stats_add_shared(kind == XFR_IN_IXFR ? &s->xfr_in->ixfr : &s->xfr_in->axfr, 1);
	pthread_mutex_t *lock = sched_pub_lock(s, a->z);
	pthread_mutex_lock(lock);
	int rc = publish(s, a->z, a->name, got, NULL);
	if (rc == 0)
		now_served(a, got);
	pthread_mutex_unlock(lock);
	if (rc < 0)
		return;
	/* only shoalctl retransfer goes back (xfr_in_take_any_serial) */
	char back[64] = "";
	if (current && !serial_gt(got->serial, current->serial))
		snprintf(back, sizeof(back), " (retransfer: not newer than serial %u)",
			 (unsigned)current->serial);
	char from[64] = "";
	if (a->sign)
		snprintf(from, sizeof(from), ", signed (the primary's serial %u)",
			 (unsigned)a->from);
	log_info("zone %s: serial %u from %s by %s, %zu records%s%s", a->name,
		 (unsigned)got->serial, p->text, kind == XFR_IN_IXFR ? "IXFR" : "AXFR",
		 got->rr_count, from, back);
	char source[160];
	snprintf(source, sizeof(source), "primary %.140s", p->text);
	sec_set_status(s, a->z, source, NULL);
	sched_want_flush(s, a->z); /* by the flush thread: a big zone's write delays no transfer */
}

/*
 * The primary has the version served: it lasts expire from now. One that
 * expired while the primary was asked is served again (current, which the
 * refresh holds).
 */
static void still_current(attempt_t *a, const acl_entry_t *p, const zone_t *current)
{
	sched_t *s = a->s;
	stats_add_shared(&s->xfr_in->uptodate, 1);
	pthread_mutex_t *lock = sched_pub_lock(s, a->z);
	pthread_mutex_lock(lock);
	if (a->z->t.have || publish(s, a->z, a->name, current, NULL) == 0)
		now_served(a, current);
	pthread_mutex_unlock(lock);
	log_info("zone %s: serial %u is current at %s", a->name, (unsigned)a->from, p->text);
	/* a save that failed, or a file a reconfig moved: written now, not at the next serial */
	if (__atomic_load_n(&a->z->unsaved, __ATOMIC_ACQUIRE))
		sched_want_flush(s, a->z);
}

/*
 * Ask primary p, for attempt a: the SOA over UDP first when a version is
 * served (unless forced), a transfer over TCP when that says newer or
 * cannot tell. Returns true when p answered with the zone or said it is
 * current.
 */
static bool ask_one(attempt_t *a, const acl_entry_t *p, zone_t *current, journal_t *journal)
{
	zone_t *got = NULL;
	enum xfr_in_kind kind = XFR_IN_PENDING;
	enum soa_verdict v = SOA_OVER_TCP;
	int rc = 0;
	a->err[0] = '\0';
	/*
	 * A signing secondary's signatures at their refresh point: the zone
	 * taken whole and signed anew, as a retransfer does, though the primary
	 * has no newer serial (batches leave secondaries alone: resign.c).
	 */
	if (a->sign && current && !a->forced && sign_due(a->sign, a->z->apex, time(NULL))) {
		log_info(
			"zone %s: signatures at their refresh point: transferred whole to sign anew",
			a->name);
		a->forced = true;
	}
	if (a->has_from && !a->forced)
		v = ask_soa(a, p);
	if (v == SOA_OVER_TCP || v == SOA_NEWER)
		rc = ask_primary(a, p, current, journal, &got, &kind);
	if (rc != 0 && __atomic_load_n(&a->s->stop, __ATOMIC_ACQUIRE))
		return false; /* shoald stops: nothing to say of the primary */
	if (rc != 0 && __atomic_load_n(&a->job->give_up, __ATOMIC_ACQUIRE)) {
		log_notice("zone %s: transfer from %s given up: a reconfig changed or removed the "
			   "zone",
			   a->name, p->text);
		return false;
	}
	if (v == SOA_FAILED || rc != 0 || kind == XFR_IN_OUTDATED) {
		stats_add_shared(&a->s->xfr_in->failed, 1);
		log_warning("zone %s: transfer from %s failed: %s; the version served stays",
			    a->name, p->text, a->err);
		return false;
	}
	if (got) {
		take_version(a, p, got, kind, current);
		zone_unref(got);
	} else {
		still_current(a, p, current); /* up to date: only with a version served */
	}
	return true;
}

bool sec_refresh(sec_job_t *job)
{
	sched_t *s = job->s;
	attempt_t a = { .job = job, .s = s, .z = job->z, .cfg = &job->table->cfg };
	a.forced = job->forced;
	/* as configured: the operator's spelling in every line */
	snprintf(a.name, sizeof(a.name), "%s", conf_zone_spec(a.cfg, job->index)->name);
	const acl_t *primaries = &conf_zone_xfr(a.cfg, job->index)->primaries;
	zone_t *current = NULL;
	journal_t *journal = NULL;
	zonedb_read_lock();
	const zonedb_t *db = zonedb_current(s->zones);
	/* by apex: the set may be newer than the job's configuration */
	long at = zonedb_index(db, job->z->apex);
	const zone_t *z = at < 0 ? NULL : zonedb_zone(db, (size_t)at);
	if (z)
		current = (zone_t *)zone_ref(z);
	journal_t *j = zonedb_journal(db, job->z->apex);
	if (j)
		journal = journal_ref(j);
	zonedb_read_unlock(s->zones);
	a.sign = conf_zone_spec(a.cfg, job->index)->sign;
	a.has_from = current != NULL;
	a.from = current ? current->serial : 0;
	if (current && a.sign)
		a.has_from = sign_upstream(a.sign, job->z->apex, current->serial, &a.from);
	stats_add_shared(&s->xfr_in->checks, 1);
	bool ok = false;
	for (size_t k = 0; k < primaries->count && !ok && !given_up(job); k++)
		ok = ask_one(&a, &primaries->entries[k], current, journal);
	if (ok) {
		pthread_mutex_lock(&s->status_lock);
		job->z->last_refresh = time(NULL);
		pthread_mutex_unlock(&s->status_lock);
		sec_set_status(s, job->z, NULL, "");
	} else if (!given_up(job)) {
		pthread_mutex_lock(&s->status_lock);
		job->z->last_failure = time(NULL);
		pthread_mutex_unlock(&s->status_lock);
		sec_set_status(s, job->z, NULL, a.err[0] ? a.err : "no primary answered");
	}
	if (current)
		zone_unref(current);
	if (journal)
		journal_unref(journal);
	return ok;
}

int64_t sec_expire(sched_t *s, sec_zone_t *z, const char *name, int64_t now)
{
	pthread_mutex_t *lock = sched_pub_lock(s, z);
	pthread_mutex_lock(lock);
	if (z->t.have && z->expire_at <= now) {
		/* RFC 1035 3.3.13: no longer authoritative; SERVFAIL, as NSD and Knot */
		char why[128];
		snprintf(why, sizeof(why), "expired: no refresh for %u s", (unsigned)z->t.expire);
		log_error("zone %s: %s; answering SERVFAIL", name, why);
		if (publish(s, z, name, NULL, why) == 0) {
			z->t.have = false;
			stats_add_shared(&s->xfr_in->expired, 1);
		} else {
			z->expire_at = now + 1000; /* not published: tried again */
		}
	}
	int64_t at = z->t.have ? z->expire_at : 0;
	pthread_mutex_unlock(lock);
	return at;
}

/* Whether this process can make a file in folder: one made and removed. 0 or -errno. */
static int folder_writable(const char *folder)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/.shoald-check-XXXXXX", folder) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	int fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	close(fd);
	unlink(path);
	return 0;
}

int sched_check_files(const conf_t *cfg, char *err, size_t errlen)
{
	MAIN_THREAD_ONLY();
	char last[PATH_MAX] = "", folder[PATH_MAX];
	for (size_t i = 0; i < cfg->zone_count; i++) {
		const char *file = conf_zone_spec(cfg, i)->file;
		if (!conf_zone_is_secondary(cfg, i) || !file || !*file)
			continue;
		const char *slash = strrchr(file, '/');
		snprintf(folder, sizeof(folder), "%.*s", slash ? (int)(slash - file) : 1,
			 slash ? (slash == file ? "/" : file) : ".");
		if (!strcmp(folder, last))
			continue; /* a million zones in state-dir: one folder, checked once */
		snprintf(last, sizeof(last), "%s", folder);
		int rc = folder_writable(folder);
		if (rc < 0) {
			snprintf(err, errlen,
				 "zone %s: transfers cannot be saved in %s (uid %u): %s",
				 conf_zone_spec(cfg, i)->name, folder, (unsigned)geteuid(),
				 shoal_strerror(rc));
			return rc;
		}
	}
	return 0;
}
