/* SPDX-License-Identifier: GPL-3.0-or-later */
/* systemd's readiness notifications (sd_notify(3)'s datagram protocol), written by hand. */
#ifndef SHOAL_SERVER_COMMON_SYSTEMD_H
#define SHOAL_SERVER_COMMON_SYSTEMD_H

#include <stddef.h>

/*
 * Under a unit with Type=notify, systemd names a unix datagram socket in
 * NOTIFY_SOCKET (a path, or "@name" in the abstract namespace) and waits
 * for "READY=1" before it calls the service started; "RELOADING=1" and
 * "READY=1" frame a reload, "STOPPING=1" starts a stop, "STATUS=" is the
 * line systemctl status shows. Without NOTIFY_SOCKET every call does
 * nothing. The protocol is a stable interface of systemd; written here in
 * a few lines rather than linked from libsystemd, so shoald needs no
 * library of systemd's, and behaves the same under any service manager
 * that speaks it.
 */

/*
 * Send `state` ("READY=1\nSTATUS=...", newline-separated assignments) in
 * one datagram. Returns 0 (also when there is no NOTIFY_SOCKET) or a
 * negative error (-errno; SHOAL_EINVAL for a NOTIFY_SOCKET that is not an
 * absolute path or "@name"). Any thread: each call is one sendto on a
 * socket of its own.
 */
int systemd_send(const char *state);

/* READY=1 with STATUS="serving Z zone(s) with T thread(s)": start-up done, or a reload. */
int systemd_ready(size_t zones, size_t threads);

/*
 * RELOADING=1 with MONOTONIC_USEC (CLOCK_MONOTONIC, as systemd 253 and
 * later want it to tell this reload from an older one; earlier versions
 * ignore it).
 */
int systemd_reloading(void);

/* STOPPING=1. */
int systemd_stopping(void);

#endif
