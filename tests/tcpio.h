/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Blocking DNS-over-TCP client I/O shared by the tests: connect, whole writes and reads, framed
 * messages. */
#ifndef SHOAL_TESTS_TCPIO_H
#define SHOAL_TESTS_TCPIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Set fd's read deadline: a recv that waits more than wait_s seconds fails
 * (EAGAIN), so a server that does not answer fails a test instead of
 * hanging it.
 */
void tcpio_deadline(int fd, int wait_s);

/*
 * Connect over TCP to addr (IPv4 or IPv6 in text) and port, with
 * TCP_NODELAY (each write leaves at once, as the tests' segmentation needs)
 * and a read deadline of wait_s seconds. Returns the descriptor (the caller
 * closes it), -1 when the connection fails, -2 when addr is no address.
 */
int tcpio_connect(const char *addr, uint16_t port, int wait_s);

/* Write all len octets; false when the peer is gone (no SIGPIPE). */
bool tcpio_send_all(int fd, const uint8_t *p, size_t len);

/* Read exactly len octets; false on end of stream, error or the deadline. */
bool tcpio_recv_all(int fd, uint8_t *p, size_t len);

/*
 * Read one message with its two-octet length prefix (RFC 7766 8) into msg.
 * Returns its length, or -1 when none came whole or it passes cap octets.
 */
ssize_t tcpio_recv_msg(int fd, uint8_t *msg, size_t cap);

#endif
