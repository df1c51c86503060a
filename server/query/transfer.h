/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A worker's side of zone transfers: AXFR and IXFR answered past access lists and TSIG, NOTIFY in.
 */
#ifndef SHOAL_SERVER_QUERY_TRANSFER_H
#define SHOAL_SERVER_QUERY_TRANSFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "server/common/log.h"
#include "server/common/stats.h"
#include "server/common/waker.h"
#include "server/conf/conf.h"
#include "server/query/responder.h"
#include "zone/answer.h"
#include "zone/zonedb.h"

/*
 * A NOTIFY (RFC 1996) let in for the zone whose apex is `apex` (wire
 * form, lowercase; valid during the call) from peer, with the serial of
 * its SOA when it carried one newer than the one served. Called on the
 * worker's thread that received it: it must not block (hand it on), and
 * may drop it (the primary sends it again). Returns true when it made the
 * zone's refresh due, false when one was due already (or it was dropped).
 */
typedef bool (*transfer_notify_fn)(void *arg, unsigned worker, const uint8_t *apex, bool has_serial,
				   uint32_t serial, const struct sockaddr *peer);

/*
 * One worker's transfer state. Made on the main thread (transfer_init),
 * then only the worker's thread touches it. Counters go to stats, which
 * the worker owns.
 */
typedef struct transfer {
	const conf_t *cfg;   /* keys, every zone's lists, transfers-out, edns-size */
	zonedb_ref_t *zones; /* the served set */
	const answer_ctx_t *ctx_udp, *ctx_tcp; /* the worker's, for signed queries */
	xfr_stats_t *stats;
	unsigned worker;
	unsigned active; /* outgoing transfers now */
	transfer_notify_fn notify;
	void *notify_arg;
	/* log lines about refusals: at most TRANSFER_LOG_PER_S a second */
	log_limit_t refusals;
	/* about NOTIFYs let in: at most one a second (a primary repeats them; anyone may forge) */
	log_limit_t notifies;
	/* where UPDATEs go (server/events/update.h); NULL: answered REFUSED */
	struct updater *updater;
	int udp_fd; /* the socket UDP requests come in on and UPDATE answers go out on; -1: TCP */
	/* TCP: the worker's loop's (server/net/worker.c), rung by the thread that readies a
	 * stream's next message; NULL for a UDP receiver's */
	waker_t *waker;
	/* TCP: where IXFR changes held in a journal file are read (NULL: on this thread) */
	struct jread *reader;
} transfer_t;

#define TRANSFER_LOG_PER_S 10

/*
 * IXFR reads of journal files queued for the journal reader, every
 * worker's together (server/events/jread.h); past it an IXFR request gets
 * SERVFAIL. Each worker has at most transfers-out streams, so this binds
 * only when many workers each start many.
 */
#define TRANSFER_JREAD_MAX 64

/*
 * The size of each message of an outgoing transfer. Any up to 65535 is
 * allowed (RFC 5936 2.2), but receivers that merge each message's names one
 * by one spend time growing with the square of the names per message: dig
 * took 22 s for a 1,000,000-record AXFR in 64 KiB messages, 3 s from Knot.
 * 16 KiB is what NSD sends. A record bigger than that gets a message of
 * up to 65535 octets (xfr_out_next), as Knot sends it.
 */
#define TRANSFER_MESSAGE_MAX 16384

/*
 * Set t up for worker `worker`, whose answer contexts are udp and tcp
 * (kept: they must outlive t); notify may be NULL (NOTIFY is answered,
 * then dropped).
 */
void transfer_init(transfer_t *t, const conf_t *cfg, zonedb_ref_t *zones, xfr_stats_t *stats,
		   unsigned worker, const answer_ctx_t *udp, const answer_ctx_t *tcp,
		   transfer_notify_fn notify, void *notify_arg);

/*
 * A whole TCP or TLS message from client (a tcp_special_fn, with t as
 * arg): AXFR and IXFR requests are answered here, with their access list
 * (provide-xfr, which may ask for TLS and the client's certificate) and
 * TSIG, the transfer itself as a tcp_stream_t of
 * messages written one by one from a reference to the zone (no read
 * section is held while it runs); NOTIFY requests are checked against
 * allow-notify, answered, and handed to t->notify; other queries signed
 * with TSIG are verified, answered by answer_query and signed (RFC 8945
 * 5.3). Every other message returns TCP_SPECIAL_PASS. Worker thread.
 */
int transfer_tcp(transfer_t *t, const acl_client_t *client, const uint8_t *q, size_t len,
		 uint8_t *out, size_t cap, tcp_stream_t **stream);

/*
 * The same over UDP, for a datagram that answer_query found to be an
 * IXFR request, of another opcode or signed (info->qtype, info->rcode
 * NOTIMP, info->tsig):
 * an IXFR is answered with the zone's SOA alone when the asker is up to
 * date, else with TC set (RFC 1995 2: the changes need TCP); NOTIFY as
 * over TCP. Rewrites out and *info and returns the new answer's length,
 * or returns `answered` (the length answer_query gave) for anything
 * else. Worker thread, inside the read section db was read in;
 * allocates nothing.
 */
size_t transfer_udp(transfer_t *t, const zonedb_t *db, const struct sockaddr *peer,
		    const uint8_t *q, size_t len, uint8_t *out, size_t cap, size_t answered,
		    answer_info_t *info);

#endif
