/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where a worker's UPDATE is answered from the update thread: its UDP socket, or its connection. */
#ifndef SHOAL_SERVER_QUERY_UPDATE_H
#define SHOAL_SERVER_QUERY_UPDATE_H

#include <sys/socket.h>

#include "server/common/waker.h"
#include "server/events/update.h"
#include "server/query/responder.h"

/*
 * A reply sent with sendto on the worker's UDP socket fd (which outlives
 * the update thread's use: the updater stops before the workers) to peer.
 * Freed by its send. NULL when out of memory. The worker's thread.
 */
update_reply_t *update_reply_udp(int fd, const struct sockaddr *peer);

/*
 * A reply that is also the TCP stream the connection waits on: *stream
 * returns TCP_STREAM_WAIT until the update thread sent the answer, then
 * the answer, then ends. The send rings waker (the connection's loop's;
 * a reference is kept until then), and the loop asks its waiting streams
 * again. Freed by the last of its send and the stream's end. NULL when
 * out of memory. The worker's thread.
 */
update_reply_t *update_reply_tcp(tcp_stream_t **stream, waker_t *waker);

#endif
