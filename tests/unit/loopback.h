/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Tests of the socket set: a listen address on loopback. */
#ifndef SHOAL_TESTS_UNIT_LOOPBACK_H
#define SHOAL_TESTS_UNIT_LOOPBACK_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "server/net/socket.h"

/* 127.0.0.1@port; port 0 lets every socket take an ephemeral port of its own. */
static inline listen_addr_t unit_loopback(uint16_t port)
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

#endif
