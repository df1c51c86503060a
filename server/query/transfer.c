/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A worker's side of zone transfers: requests checked, AXFR and IXFR streamed, NOTIFY let in. */
#include "config.h"

#include <assert.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/error.h"
#include "proto/serial.h"
#include "proto/tsig.h"
#include "server/common/addr.h"
#include "server/common/log.h"
#include "server/conf/update.h"
#include "server/events/jread.h"
#include "server/query/transfer.h"
#include "server/query/update.h"
#include "zone/journal.h"
#include "zone/xfr_out.h"

/* One outgoing transfer: the stream the TCP connection pulls messages from. */
typedef struct xfr_stream {
	tcp_stream_t base;
	transfer_t *t;
	xfr_out_t *x; /* the messages sent: &out, or &changes once read */
	xfr_out_t out;
	/* an IXFR whose changes the journal reader reads: the job until done, then the changes'
	 * messages (out holds the whole zone meanwhile, sent when the history does not lead) */
	jread_job_t *job;
	journal_t *journal; /* referenced while the job runs, for the log */
	uint32_t from;      /* the client's serial */
	xfr_out_t changes;
	tsig_ctx_t tsig;
	/*
	 * The key tsig signs with, copied: a reconfig may free the
	 * configuration it came from while the stream runs.
	 */
	tsig_key_t key;
	bool sign;  /* the request was signed: so is every message (RFC 8945 5.3.1) */
	bool whole; /* the zone, not changes */
	int error;  /* why the stream stopped, when it was our side (xfr_out_next) */
	uint64_t octets;
	time_t started;
	char zone[NAME_TEXT_MAX];
	char peer[ADDR_TEXT_MAX + 16];
} xfr_stream_t;

/* A request, as far as the checks common to TCP and UDP take it. */
typedef struct request {
	query_t q;
	const acl_client_t *client; /* its address, and what its connection showed (TLS) */
	const struct sockaddr *peer;
	char peer_text[ADDR_TEXT_MAX + 16]; /* "192.0.2.1@5300", " over TLS" after it */
	tsig_ctx_t tsig;
	bool has_tsig; /* the request carried a TSIG RR (verified or not) */
	int key;       /* the key it was verified with, or ACL_NOKEY */
	/*
	 * The configuration the zone set was built from (zonedb_owner): its
	 * keys and per-zone lists are indexed as the set's zones, which a
	 * reconfig changes.
	 */
	const conf_t *zc;
} request_t;

void transfer_init(transfer_t *t, const conf_t *cfg, zonedb_ref_t *zones, xfr_stats_t *stats,
		   unsigned worker, const answer_ctx_t *udp, const answer_ctx_t *tcp,
		   transfer_notify_fn notify, void *notify_arg)
{
	memset(t, 0, sizeof(*t));
	t->cfg = cfg;
	t->zones = zones;
	t->ctx_udp = udp;
	t->ctx_tcp = tcp;
	t->stats = stats;
	t->worker = worker;
	t->notify = notify;
	t->notify_arg = notify_arg;
	t->udp_fd = -1;
}

/*
 * A line about a request refused: the operator must see who was turned
 * away, but a peer must not fill the log, so at most TRANSFER_LOG_PER_S
 * lines a second per worker, the rest counted in the next line.
 */
#define refusal_log(t, ...) \
	log_limited(&(t)->refusals, TRANSFER_LOG_PER_S, LOG_LEVEL_WARNING, __VA_ARGS__)

/* The EDNS of an answer to q: the server's size, DO echoed (RFC 6891 6.1.1). */
static response_edns_t answer_edns(const transfer_t *t, const query_t *q)
{
	response_edns_t e = { 0 };
	if (q->edns) {
		e.present = true;
		e.udp_size = (uint16_t)t->cfg->edns_size;
		e.do_bit = q->edns_do;
	}
	return e;
}

/*
 * RFC 8945 5.3: an answer to a signed request that its TSIG RR would not
 * fit in goes as the question and the TSIG RR, TC set, NOERROR, for the
 * client to ask again over TCP. When the TSIG RR does not fit even so (an
 * error answer echoes the request's key and algorithm names: two of 255
 * octets pass 512), the question goes alone: TC still sends the client
 * to TCP, where the whole answer fits. limit is at most cap. Returns the
 * length (0: not even the header and question fit).
 */
static size_t answer_truncated(request_t *r, uint8_t *out, size_t cap, size_t limit)
{
	response_t resp;
	if (response_init(&resp, &r->q, out, cap, limit, 0) < 0)
		return 0;
	response_set_flags(&resp, DNS_FLAG_TC);
	int n = response_finish(&resp, NULL);
	if (n <= 0)
		return 0;
	int m = tsig_sign(&r->tsig, out, (size_t)n, limit, (uint64_t)time(NULL));
	return m > 0 ? (size_t)m : (size_t)n;
}

/*
 * A one-message answer to r with rcode (and flags), no records, signed
 * when the request was signed: with the TSIG error when its check failed
 * (RFC 8945 5.3.2), truncated when the TSIG RR does not fit (5.3).
 * FORMERR after a malformed TSIG goes unsigned (5.2). Returns its length
 * (0: it did not fit).
 */
static size_t answer_rcode(transfer_t *t, request_t *r, uint8_t *out, size_t cap, size_t limit,
			   uint16_t rcode, uint16_t flags)
{
	response_edns_t e = answer_edns(t, &r->q);
	size_t reserve = r->has_tsig ? tsig_space(&r->tsig) : 0;
	response_t resp;
	if (limit > cap)
		limit = cap;
	int n = SHOAL_ESPACE;
	/* the TSIG RR may take more than the whole limit: no room to subtract it from */
	if (reserve < limit &&
	    response_init(&resp, &r->q, out, cap, limit - reserve, response_opt_size(&e)) == 0) {
		response_set_flags(&resp, flags);
		response_set_rcode(&resp, rcode);
		n = response_finish(&resp, &e);
	}
	if (n > 0 && r->has_tsig)
		n = tsig_sign(&r->tsig, out, (size_t)n, limit, (uint64_t)time(NULL));
	if (n <= 0 && r->has_tsig)
		return answer_truncated(r, out, cap, limit);
	return n > 0 ? (size_t)n : 0;
}

/* What a request's name and type are called in log lines. */
static const char *what(const request_t *r)
{
	if (r->q.opcode == DNS_OPCODE_NOTIFY)
		return "NOTIFY";
	if (r->q.opcode == DNS_OPCODE_UPDATE)
		return "UPDATE";
	if (r->q.qtype != DNS_TYPE_AXFR && r->q.qtype != DNS_TYPE_IXFR)
		return "query";
	return r->q.qtype == DNS_TYPE_AXFR ? "AXFR" : "IXFR";
}

/*
 * Check the request's TSIG (RFC 8945 5.2). Returns 0 with r->key set (the
 * key's index, or ACL_NOKEY for an unsigned request), or the rcode to
 * answer: FORMERR for a malformed TSIG RR, NOTAUTH when it failed (then
 * the answer carries the TSIG error).
 */
static int check_tsig(transfer_t *t, request_t *r, const uint8_t *q, size_t len, const char *zone)
{
	tsig_rr_t rr;
	r->key = ACL_NOKEY;
	int rc = tsig_find(q, len, &rr);
	if (rc == SHOAL_ENOTFOUND)
		return 0;
	if (rc < 0)
		return DNS_RCODE_FORMERR;
	const conf_t *cfg = r->zc;
	const tsig_key_t *key = tsig_key_find(cfg->keys, cfg->key_count, rr.name);
	tsig_init(&r->tsig, key, TSIG_FUDGE_DEFAULT);
	rc = tsig_verify(&r->tsig, q, len, &rr, (uint64_t)time(NULL));
	if (rc == SHOAL_EMALFORMED)
		return DNS_RCODE_FORMERR;
	r->has_tsig = true;
	if (rc < 0) {
		char kname[NAME_TEXT_MAX], et[DNS_RCODE_TEXT_MAX];
		if (name_to_text(rr.name, kname, sizeof(kname)) < 0)
			strcpy(kname, "?");
		refusal_log(t, "%s %s from %s: TSIG %s with key %s: NOTAUTH", what(r), zone,
			    r->peer_text, dns_tsig_error_name(r->tsig.error, et), kname);
		return DNS_RCODE_NOTAUTH;
	}
	assert(key && (size_t)(key - cfg->keys) < cfg->key_count); /* verified: found */
	r->key = (int)(key - cfg->keys);
	return 0;
}

/* ---- outgoing transfers ---- */

/* An IXFR's changes the journal file could not give back: the operator must know. */
static void log_unreadable(const char *zone, uint32_t from, const char *peer, const journal_t *j)
{
	log_warning("IXFR %s from serial %u to %s: the journal file %s cannot be read back: the "
		    "whole zone is sent",
		    zone, (unsigned)from, peer, journal_file(j));
}

/*
 * Once the journal reader has the changes: the IXFR's messages, or the
 * whole zone (the history does not lead from the client's serial, RFC
 * 1995 4, or the file cannot be read back). 0, or TCP_STREAM_WAIT.
 */
static int stream_changes(xfr_stream_t *s)
{
	xfr_changes_t changes;
	int rc;
	if (!jread_done(s->job, &rc, &changes))
		return TCP_STREAM_WAIT;
	jread_job_unref(s->job);
	s->job = NULL;
	if (rc == 0)
		rc = xfr_out_ixfr(&s->changes, s->out.zone, &changes, &s->out.query, s->out.limit,
				  s->out.reserve, &s->out.edns);
	xfr_changes_clear(&changes);
	if (rc == SHOAL_EIO)
		log_unreadable(s->zone, s->from, s->peer, s->journal);
	journal_unref(s->journal);
	s->journal = NULL;
	s->whole = rc != 0;
	s->x = s->whole ? &s->out : &s->changes;
	stats_add(s->whole ? &s->t->stats->axfr : &s->t->stats->ixfr, 1);
	return 0;
}

static int stream_next(tcp_stream_t *base, uint8_t *out, size_t cap)
{
	xfr_stream_t *s = (xfr_stream_t *)base;
	if (s->job && stream_changes(s) == TCP_STREAM_WAIT)
		return TCP_STREAM_WAIT;
	int n = xfr_out_next(s->x, out, cap);
	if (n < 0)
		s->error = n;
	if (n <= 0)
		return n;
	if (s->sign)
		n = tsig_sign(&s->tsig, out, (size_t)n, cap, (uint64_t)time(NULL));
	if (n > 0) {
		s->octets += (uint64_t)n;
		stats_add(&s->t->stats->messages, 1);
		stats_add(&s->t->stats->bytes_out, (uint64_t)n);
	}
	return n;
}

static void stream_end(tcp_stream_t *base, bool complete)
{
	xfr_stream_t *s = (xfr_stream_t *)base;
	transfer_t *t = s->t;
	assert(t->active > 0); /* counted when the stream started */
	t->active--;
	bool whole = complete && xfr_out_done(s->x);
	stats_add(whole ? &t->stats->done : &t->stats->failed, 1);
	double secs = difftime(time(NULL), s->started);
	if (whole)
		log_info("%s %s to %s: serial %u, %u messages, %llu records, %llu octets, %.0f s",
			 s->whole ? "AXFR" : "IXFR", s->zone, s->peer, (unsigned)s->x->zone->serial,
			 (unsigned)s->x->messages, (unsigned long long)s->x->records,
			 (unsigned long long)s->octets, secs);
	else if (s->error == SHOAL_ESPACE)
		log_warning("%s %s to %s failed after %u messages: a record does not fit a "
			    "message of 65535 octets%s",
			    s->whole ? "AXFR" : "IXFR", s->zone, s->peer, (unsigned)s->x->messages,
			    s->sign ? " with the TSIG RR" : "");
	else if (s->error)
		log_warning("%s %s to %s failed after %u messages: %s", s->whole ? "AXFR" : "IXFR",
			    s->zone, s->peer, (unsigned)s->x->messages, shoal_strerror(s->error));
	else
		log_notice("%s %s to %s cut short after %u messages: the client left, or the "
			   "server is stopping",
			   s->whole ? "AXFR" : "IXFR", s->zone, s->peer, (unsigned)s->x->messages);
	xfr_out_clear(&s->out);
	xfr_out_clear(&s->changes);
	jread_job_unref(s->job);
	journal_unref(s->journal);
	sodium_memzero(&s->tsig, sizeof(s->tsig));
	sodium_memzero(&s->key, sizeof(s->key));
	free(s);
}

/*
 * An IXFR from serial `from` whose changes j's file holds: the read goes
 * to the journal reader (a pread and a decode per change would hold the
 * worker's loop), and the stream waits for it, with the whole zone made
 * ready beside it in case the history does not lead there. 0, or a
 * negative error (logged when the reader's queue is full).
 */
static int post_read(transfer_t *t, request_t *r, xfr_stream_t *s, journal_t *j, uint32_t from,
		     const zone_t *z, size_t reserve, const response_edns_t *e)
{
	int err;
	s->job = jread_post(t->reader, j, from, z->serial, t->waker, &err);
	if (!s->job) {
		stats_add(&t->stats->refused, 1);
		if (err == SHOAL_ESPACE)
			refusal_log(t, "IXFR %s from %s: %u journal reads queued: SERVFAIL",
				    s->zone, r->peer_text, (unsigned)TRANSFER_JREAD_MAX);
		return err;
	}
	s->journal = journal_ref(j);
	s->from = from;
	return xfr_out_axfr(&s->out, z, &r->q, TRANSFER_MESSAGE_MAX, reserve, e);
}

/*
 * Start the answer to an allowed AXFR or IXFR for zone z (inside the read
 * section it was found in): the stream takes a reference to z and the
 * changes, so nothing of the set is held after. Returns 0 with *stream,
 * or an rcode to answer.
 */
static int start_stream(transfer_t *t, request_t *r, const zone_t *z, journal_t *j,
			const char *zone, tcp_stream_t **stream)
{
	if (t->active >= t->cfg->transfers_out) {
		stats_add(&t->stats->refused, 1);
		refusal_log(t, "%s %s from %s: %u transfers running (transfers-out): SERVFAIL",
			    what(r), zone, r->peer_text, t->active);
		return DNS_RCODE_SERVFAIL;
	}
	xfr_stream_t *s = calloc(1, sizeof(*s));
	if (!s)
		return DNS_RCODE_SERVFAIL;
	s->t = t;
	s->tsig = r->tsig;
	if (s->tsig.key) {
		s->key = *s->tsig.key;
		s->tsig.key = &s->key;
	}
	s->sign = r->has_tsig;
	s->started = time(NULL);
	snprintf(s->zone, sizeof(s->zone), "%s", zone);
	snprintf(s->peer, sizeof(s->peer), "%s", r->peer_text);
	response_edns_t e = answer_edns(t, &r->q);
	size_t reserve = s->sign ? tsig_space(&s->tsig) : 0;
	int rc = 0;
	xfr_changes_t changes = { 0 };
	uint32_t from = 0;
	bool ixfr = r->q.qtype == DNS_TYPE_IXFR;
	if (ixfr && xfr_request_serial(&r->q, &from) < 0) {
		rc = DNS_RCODE_FORMERR; /* RFC 1995 3: the client's SOA must be there */
		goto done;
	}
	enum serial_order order = ixfr ? serial_compare(from, z->serial) : SERIAL_LESS;
	if (order == SERIAL_GREATER)
		refusal_log(t,
			    "IXFR %s from %s: serial %u is newer than ours (%u): "
			    "answered with our SOA",
			    zone, r->peer_text, (unsigned)from, (unsigned)z->serial);
	if (ixfr && (order == SERIAL_EQUAL || order == SERIAL_GREATER)) {
		/* RFC 1995 2: the SOA alone */
		stats_add(&t->stats->uptodate, 1);
		rc = xfr_out_ixfr(&s->out, z, NULL, &r->q, TRANSFER_MESSAGE_MAX, reserve, &e);
	} else if (ixfr && j && t->reader && journal_file(j)) {
		rc = post_read(t, r, s, j, from, z, reserve, &e);
	} else if (ixfr && j && (rc = journal_changes(j, from, z->serial, true, &changes)) == 0) {
		stats_add(&t->stats->ixfr, 1);
		rc = xfr_out_ixfr(&s->out, z, &changes, &r->q, TRANSFER_MESSAGE_MAX, reserve, &e);
	} else {
		if (rc == SHOAL_EIO) /* its file went bad: what it holds cannot be sent */
			log_unreadable(zone, from, r->peer_text, j);
		/* AXFR, or the history does not reach back: the whole zone (RFC 1995 4) */
		s->whole = true;
		stats_add(&t->stats->axfr, 1);
		rc = xfr_out_axfr(&s->out, z, &r->q, TRANSFER_MESSAGE_MAX, reserve, &e);
	}
	if (rc < 0) {
		rc = DNS_RCODE_SERVFAIL;
		goto done;
	}
	s->x = &s->out;
	s->base.next = stream_next;
	s->base.end = stream_end;
	t->active++;
	*stream = &s->base;
	log_info("%s %s to %s: serial %u%s started", what(r), zone, r->peer_text,
		 (unsigned)z->serial, s->whole ? " (whole zone)" : "");
	return 0;
done:
	xfr_changes_clear(&changes);
	xfr_out_clear(&s->out);
	jread_job_unref(s->job);
	journal_unref(s->journal);
	sodium_memzero(s, sizeof(*s));
	free(s);
	return rc;
}

/*
 * An AXFR or IXFR request whose TSIG passed: the zone, its provide-xfr,
 * then over TCP the stream, over UDP (IXFR) the SOA or TC. Returns the
 * answer's length; *stream set when the transfer follows.
 */
static size_t xfr_request(transfer_t *t, request_t *r, const zonedb_t *db, bool tcp, uint8_t *out,
			  size_t cap, size_t limit, tcp_stream_t **stream)
{
	char zone[NAME_TEXT_MAX];
	if (name_to_text(r->q.qname, zone, sizeof(zone)) < 0)
		strcpy(zone, "?");
	stats_add(&t->stats->requests, 1);
	long i = zonedb_index(db, r->q.qname);
	if (i < 0 || r->q.qclass != DNS_CLASS_IN) {
		/* RFC 5936 2.2.1: not a zone this server is authoritative for */
		stats_add(&t->stats->refused, 1);
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_NOTAUTH, 0);
	}
	assert((size_t)i < r->zc->zone_count); /* zc's zones are the set's, index for index */
	const acl_entry_t *unmet;
	if (!acl_find_client(&conf_zone_xfr(r->zc, i)->provide_xfr, r->client, r->key, &unmet)) {
		stats_add(&t->stats->refused, 1);
		if (unmet) /* RFC 9103 9.3: the entry asks for TLS, or a client certificate */
			refusal_log(t, "%s %s from %s: provide-xfr %s asks for %s: REFUSED",
				    what(r), zone, r->peer_text, unmet->text,
				    acl_tls_unmet(unmet, r->client));
		else
			refusal_log(t, "%s %s from %s%s: not allowed by provide-xfr: REFUSED",
				    what(r), zone, r->peer_text,
				    r->key == ACL_NOKEY ? " without TSIG" : "");
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_REFUSED, 0);
	}
	const zone_t *z = zonedb_zone(db, (size_t)i);
	if (!z) /* configured, nothing served (an expired secondary) */
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_SERVFAIL, 0);
	if (tcp) {
		int rc = start_stream(t, r, z, zonedb_journal(db, r->q.qname), zone, stream);
		return rc ? answer_rcode(t, r, out, cap, limit, (uint16_t)rc, 0) : 0;
	}
	/* IXFR over UDP: the SOA if up to date (RFC 1995 2), else TC for TCP */
	uint32_t from;
	if (xfr_request_serial(&r->q, &from) < 0)
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_FORMERR, 0);
	if (serial_lt(from, z->serial))
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_NOERROR,
				    DNS_FLAG_AA | DNS_FLAG_TC);
	xfr_out_t x;
	response_edns_t e = answer_edns(t, &r->q);
	size_t reserve = r->has_tsig ? tsig_space(&r->tsig) : 0;
	if (limit > cap)
		limit = cap;
	/* SHOAL_EINVAL: no room for the question with the OPT and TSIG RRs */
	int n = xfr_out_ixfr(&x, z, NULL, &r->q, limit, reserve, &e);
	bool room = n == 0;
	if (room) {
		n = xfr_out_next(&x, out, limit);
		xfr_out_clear(&x);
	}
	if (n > 0 && r->has_tsig)
		n = tsig_sign(&r->tsig, out, (size_t)n, limit, (uint64_t)time(NULL));
	/*
	 * An SOA takes up to 540 octets (MNAME and RNAME of 255): one that
	 * does not fit the client's size, with its TSIG RR, is sent over TCP
	 * like the changes (RFC 2181 9: TC, the client asks again).
	 */
	if (!room || n == SHOAL_ESPACE)
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_NOERROR,
				    DNS_FLAG_AA | DNS_FLAG_TC);
	if (n <= 0)
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_SERVFAIL, 0);
	stats_add(&t->stats->uptodate, 1);
	return (size_t)n;
}

/* ---- NOTIFY in ---- */

/* The serial of the SOA a NOTIFY may carry in its answer section (RFC 1996 3.7). */
static bool notify_serial(const query_t *q, uint32_t *serial)
{
	if (q->ancount < 1 || !q->has_question)
		return false;
	wire_t w;
	wire_init_read(&w, q->pkt, q->len);
	wire_seek(&w, q->question_end);
	uint8_t owner[NAME_MAXLEN];
	if (name_unpack(&w, owner, true) < 0 || !name_equal(owner, q->qname))
		return false;
	uint16_t type = wire_read_u16(&w);
	wire_skip(&w, 6);
	uint16_t rdlen = wire_read_u16(&w);
	size_t end = w.pos + rdlen;
	name_skip(&w);
	name_skip(&w);
	*serial = wire_read_u32(&w);
	wire_skip(&w, 16);
	return !w.err && type == DNS_TYPE_SOA && w.pos == end;
}

/*
 * The zone a NOTIFY or UPDATE names (its question, RFC 1996 3.7, RFC 2136
 * 2.3): its name as text into zone, its index into *i, its settings, or
 * NULL (*i -1) for a zone not ours.
 */
static const conf_zone_xfr_t *zone_asked(const request_t *r, const zonedb_t *db,
					 char zone[NAME_TEXT_MAX], long *i)
{
	if (name_to_text(r->q.qname, zone, NAME_TEXT_MAX) < 0)
		strcpy(zone, "?");
	*i = zonedb_index(db, r->q.qname);
	return *i >= 0 ? conf_zone_xfr(r->zc, (size_t)*i) : NULL;
}

/*
 * RFC 1996: a NOTIFY for a secondary zone of ours from one of its
 * primaries (allow-notify, or the primaries' addresses) is answered
 * NOERROR with the question echoed and handed on; anything else REFUSED
 * (NOTAUTH for a zone we are not a secondary of), and logged.
 */
static size_t notify_request(transfer_t *t, request_t *r, const zonedb_t *db, uint8_t *out,
			     size_t cap, size_t limit)
{
	char zone[NAME_TEXT_MAX];
	long i;
	if (!r->q.has_question || r->q.qtype != DNS_TYPE_SOA)
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_FORMERR, 0);
	const conf_zone_xfr_t *zx = zone_asked(r, db, zone, &i);
	if (!zx || !zx->primaries.count) {
		stats_add(&t->stats->notify_refused, 1);
		refusal_log(t, "NOTIFY %s from %s: not a secondary zone here: NOTAUTH", zone,
			    r->peer_text);
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_NOTAUTH, 0);
	}
	/* by default the primaries, from any port: not only the one transfers go to */
	const acl_t *from = zx->allow_notify_set ? &zx->allow_notify : &zx->primaries;
	bool allowed = acl_find(from, r->peer, r->key) != NULL;
	if (!allowed) {
		stats_add(&t->stats->notify_refused, 1);
		refusal_log(t, "NOTIFY %s from %s%s: not a primary (allow-notify): REFUSED", zone,
			    r->peer_text, r->key == ACL_NOKEY ? " without TSIG" : "");
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_REFUSED, 0);
	}
	uint32_t serial = 0;
	bool has_serial = notify_serial(&r->q, &serial);
	stats_add(&t->stats->notify_in, 1);
	/*
	 * Only the zone's primaries (or who forges their address) get this far,
	 * as often as they like: lines at most one a second per worker. A
	 * serial not newer than the one served asks for nothing (issue 30: Knot
	 * does the same; every NOTIFY made a transfer here). A signing zone's
	 * serial is not its primary's: the scheduler judges by the primary's
	 * (refresh_wanted).
	 */
	const zone_t *z = zonedb_zone(db, (size_t)i);
	if (has_serial && z && !zx->sign && !serial_gt(serial, z->serial)) {
		stats_add(&t->stats->notify_ignored, 1);
		log_limited(&t->notifies, 1, LOG_LEVEL_INFO,
			    "NOTIFY %s serial %u from %s: not newer than the serial served (%u): "
			    "nothing to do",
			    zone, (unsigned)serial, r->peer_text, (unsigned)z->serial);
	} else if (t->notify &&
		   t->notify(t->notify_arg, t->worker, r->q.qname, has_serial, serial, r->peer)) {
		char what[32] = "";
		if (has_serial)
			snprintf(what, sizeof(what), " serial %u", (unsigned)serial);
		log_limited(&t->notifies, 1, LOG_LEVEL_INFO,
			    "NOTIFY %s%s from %s: refresh scheduled", zone, what, r->peer_text);
	}
	return answer_rcode(t, r, out, cap, limit, DNS_RCODE_NOERROR, DNS_FLAG_AA);
}

/* ---- UPDATE in ---- */

/*
 * RFC 2136 3.1: an UPDATE for a primary zone of ours (or a secondary with
 * update-forward) whose allow-update has a rule for its key or address is
 * handed to the update thread, which answers once the change is served
 * or forwarded (0 here: no answer yet; 0 too for a UDP retransmit of one
 * in flight, dropped: the first one's answer is the client's); anything
 * else is answered now: NOTAUTH for a zone not ours or a secondary's
 * without update-forward (RFC 2136 6), REFUSED without a rule or over
 * update-rate-per-key, SERVFAIL past update-max-inflight(-total). The
 * checks of the message and of each record are the update thread's.
 */
static size_t update_in(transfer_t *t, request_t *r, const zonedb_t *db, const uint8_t *q,
			size_t len, uint8_t *out, size_t cap, size_t limit, tcp_stream_t **stream)
{
	char zone[NAME_TEXT_MAX];
	long i;
	if (!r->q.has_question || r->q.qtype != DNS_TYPE_SOA)
		return answer_rcode(t, r, out, cap, limit, DNS_RCODE_FORMERR, 0);
	const conf_zone_xfr_t *zx = zone_asked(r, db, zone, &i);
	/* RFC 2136 6: a secondary's, when it forwards, goes to the update thread as a primary's */
	bool secondary = zx && zx->primaries.count && !(zx->update && zx->update->forward);
	const char *why = !zx ? "not a zone here" : secondary ? "a secondary zone" : NULL;
	uint16_t rcode = why ? DNS_RCODE_NOTAUTH : 0;
	if (!why && !conf_update_rule(zx->update, r->peer, r->key)) {
		why = "no allow-update rule for it";
		rcode = DNS_RCODE_REFUSED;
	}
	update_reply_t *reply = NULL;
	if (!why) {
		const conf_t *cfg = zonedb_owner(db) ? zonedb_owner(db) : t->cfg;
		updater_t *u = __atomic_load_n(&t->updater, __ATOMIC_ACQUIRE);
		reply = stream ? update_reply_tcp(stream, t->waker)
			       : update_reply_udp(t->udp_fd, r->peer);
		update_req_t *req =
			reply ? update_req_new(q, len, r->q.qname, r->peer,
					       r->has_tsig ? &r->tsig : NULL, (uint16_t)limit,
					       (uint16_t)t->cfg->edns_size, reply)
			      : NULL;
		if (req)
			req->udp = !stream;
		/* a zone's own update-rate-per-key counts its updates apart */
		bool over_rate =
			req && !updater_rate_ok(u, req, conf_zone_update_rate(cfg, (size_t)i),
						zx->update_rate_per_key >= 0);
		int rc = !req || over_rate ? SHOAL_ESPACE
					   : updater_post(u, req, cfg->update_max_inflight,
							  cfg->update_max_inflight_total);
		if (rc == 0)
			return 0;
		if (req)
			update_req_free(req);
		if (reply)
			reply->send(reply, NULL, 0); /* let it go: answered here */
		if (stream && *stream) {
			tcp_stream_t *s = *stream;
			*stream = NULL;
			s->end(s, false);
		}
		if (rc == SHOAL_EEXIST) { /* the first one's answer goes to the same port, ID */
			log_limited(
				&t->refusals, TRANSFER_LOG_PER_S, LOG_LEVEL_INFO,
				"UPDATE %s from %s: a retransmit of an update in flight: dropped",
				zone, r->peer_text);
			return 0;
		}
		why = over_rate ? "over update-rate-per-key"
				: "update-max-inflight or update-max-inflight-total reached";
		rcode = over_rate ? DNS_RCODE_REFUSED : DNS_RCODE_SERVFAIL;
	}
	stats_add(&t->stats->refused, 1);
	char rt[DNS_RCODE_TEXT_MAX];
	refusal_log(t, "UPDATE %s from %s%s: %s: %s", zone, r->peer_text,
		    r->key == ACL_NOKEY ? " without TSIG" : "", why, dns_rcode_name(rcode, rt));
	return answer_rcode(t, r, out, cap, limit, rcode, 0);
}

/* ---- other signed queries ---- */

/*
 * RFC 8945 5.3: a verified query's answer is the usual one, signed; one
 * whose header and question leave no room for the TSIG RR goes truncated.
 */
static size_t signed_answer(transfer_t *t, request_t *r, const zonedb_t *db, const uint8_t *q,
			    size_t len, uint8_t *out, size_t cap, size_t limit, bool tcp)
{
	if (limit > cap)
		limit = cap;
	size_t reserve = tsig_space(&r->tsig);
	answer_info_t info;
	/* allow-query entries with this key admit it (NSD's allow-query takes keys) */
	answer_ctx_t ctx = *(tcp ? t->ctx_tcp : t->ctx_udp);
	ctx.tsig_key = r->key;
	const uint8_t *ip;
	ctx.client_ip_len = (uint8_t)addr_octets(r->peer, &ip);
	ctx.client_ip = ip;
	size_t n =
		reserve < limit ? answer_query(db, q, len, out, limit - reserve, &ctx, &info) : 0;
	int m = n ? tsig_sign(&r->tsig, out, n, limit, (uint64_t)time(NULL)) : 0;
	return m > 0 ? (size_t)m : answer_truncated(r, out, cap, limit);
}

/* ---- both transports ---- */

/*
 * Parse q and decide: -1 when it is none of ours (a QUERY of another type,
 * another opcode), else the answer's length.
 */
static long handle(transfer_t *t, const zonedb_t *db, const acl_client_t *client, const uint8_t *q,
		   size_t len, uint8_t *out, size_t cap, size_t limit, bool tcp,
		   tcp_stream_t **stream, uint16_t *rcode)
{
	request_t r;
	enum query_verdict v = query_parse(&r.q, q, len);
	bool notify = r.q.opcode == DNS_OPCODE_NOTIFY && v == QUERY_NOTIMP;
	bool xfr = v == QUERY_OK &&
		   (r.q.qtype == DNS_TYPE_IXFR || (tcp && r.q.qtype == DNS_TYPE_AXFR));
	bool other = v == QUERY_OK && r.q.tsig && !xfr; /* a signed query: a secondary's SOA */
	bool update = r.q.opcode == DNS_OPCODE_UPDATE && v == QUERY_NOTIMP;
	if (!notify && !xfr && !other && !update)
		return -1;
	if (r.q.edns && r.q.edns_version > 0)
		return -1; /* answer_query says BADVERS */
	r.client = client;
	r.peer = client->addr;
	r.zc = zonedb_owner(db) ? zonedb_owner(db) : t->cfg;
	r.has_tsig = false;
	memset(&r.tsig, 0, sizeof(r.tsig));
	addr_text(r.peer, r.peer_text, sizeof(r.peer_text));
	if (client->tls)
		strcat(r.peer_text, " over TLS");
	char zone[NAME_TEXT_MAX] = "?";
	if (r.q.has_question && name_to_text(r.q.qname, zone, sizeof(zone)) < 0)
		strcpy(zone, "?");
	int rc = check_tsig(t, &r, q, len, zone);
	size_t n;
	if (rc) {
		stats_add(notify ? &t->stats->notify_refused : &t->stats->refused, 1);
		n = answer_rcode(t, &r, out, cap, limit, (uint16_t)rc, 0);
	} else if (notify) {
		n = notify_request(t, &r, db, out, cap, limit);
	} else if (update) {
		n = update_in(t, &r, db, q, len, out, cap, limit, tcp ? stream : NULL);
	} else if (other) {
		n = signed_answer(t, &r, db, q, len, out, cap, limit, tcp);
	} else {
		n = xfr_request(t, &r, db, tcp, out, cap, limit, stream);
	}
	*rcode = n >= 4 ? (uint16_t)(out[3] & DNS_RCODE_MASK) : 0;
	sodium_memzero(&r.tsig, sizeof(r.tsig));
	return (long)n;
}

int transfer_tcp(transfer_t *t, const acl_client_t *client, const uint8_t *q, size_t len,
		 uint8_t *out, size_t cap, tcp_stream_t **stream)
{
	/* the cheap look first: every TCP query passes here */
	if (len < DNS_HEADER_SIZE)
		return TCP_SPECIAL_PASS;
	zonedb_read_lock();
	uint16_t rcode;
	long n = handle(t, zonedb_current(t->zones), client, q, len, out, cap, DNS_TCP_MAX, true,
			stream, &rcode);
	zonedb_read_unlock(t->zones);
	return n < 0 ? TCP_SPECIAL_PASS : (int)n;
}

size_t transfer_udp(transfer_t *t, const zonedb_t *db, const struct sockaddr *peer,
		    const uint8_t *q, size_t len, uint8_t *out, size_t cap, size_t answered,
		    answer_info_t *info)
{
	query_t probe;
	query_parse(&probe, q, len);
	size_t limit = query_udp_limit(&probe, (uint16_t)t->cfg->edns_size);
	uint16_t rcode = 0;
	acl_client_t client = { .addr = peer };
	long n = handle(t, db, &client, q, len, out, cap, limit, false, NULL, &rcode);
	if (n < 0)
		return answered;
	info->rcode = rcode;
	info->truncated = n >= 4 && (out[2] & (DNS_FLAG_TC >> 8));
	info->dropped = n == 0;
	return (size_t)n;
}
