/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Fuzz target for zone/xfr_in.c: the input is a stream of answer messages,
 * each after a two-octet length as over TCP, received for fuzz.test. as an
 * AXFR and as an IXFR over a small served version (serial 1). The ID is
 * the first message's, so inputs reach past the header. Whatever comes in
 * must end in an error or in a zone whose serial is the stream's, which
 * written to a file reads back the same (as a secondary saves it), and the
 * served version must stay as it was.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/error.h"
#include "tests/fuzz/zone_diff.h"
#include "zone/internal.h"
#include "zone/journal.h"
#include "zone/xfr_in.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t apex[] = "\4fuzz\4test";

/* fuzz.test. with SOA serial 1, NS ns, ns A 192.0.2.1, www A 192.0.2.80. */
static zone_t *served(void)
{
	static const uint8_t soa[] = "\2ns\4fuzz\4test\0\2hm\4fuzz\4test\0"
				     "\0\0\0\1\0\0\0\2\0\0\0\3\0\0\0\4\0\0\0\5";
	static const uint8_t ns[] = "\2ns\4fuzz\4test", www[] = "\3www\4fuzz\4test";
	static const uint8_t a1[] = { 192, 0, 2, 1 }, a80[] = { 192, 0, 2, 80 };
	zbuild_t *b = zbuild_new("fuzz", apex, NULL, NULL);
	zone_t *z = NULL;
	if (!b)
		abort();
	zbuild_add(b, "fuzz", 0, NULL, apex, DNS_TYPE_SOA, DNS_CLASS_IN, 300, soa, sizeof(soa) - 1);
	zbuild_add(b, "fuzz", 0, NULL, apex, DNS_TYPE_NS, DNS_CLASS_IN, 300, ns, sizeof(ns));
	zbuild_add(b, "fuzz", 0, NULL, ns, DNS_TYPE_A, DNS_CLASS_IN, 300, a1, 4);
	zbuild_add(b, "fuzz", 0, NULL, www, DNS_TYPE_A, DNS_CLASS_IN, 300, a80, 4);
	if (zbuild_finish(b, &z) < 0)
		abort();
	return z;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static zone_t *current;
	if (!current)
		current = served();
	uint16_t id = size >= 4 ? (uint16_t)(data[2] << 8 | data[3]) : 0;
	xfr_in_limits_t limits = { 1 << 20, 20000, 2000 };
	for (int ixfr = 0; ixfr < 2; ixfr++) {
		xfr_in_t *x = xfr_in_new(apex, ixfr ? DNS_TYPE_IXFR : DNS_TYPE_AXFR, id,
					 ixfr ? current : NULL, &limits, NULL, "fuzz", NULL, NULL);
		if (!x)
			abort();
		int rc = 0;
		for (size_t pos = 0; rc == 0 && pos + 2 <= size;) {
			size_t len = (size_t)(data[pos] << 8 | data[pos + 1]);
			pos += 2;
			if (len > size - pos)
				len = size - pos;
			rc = xfr_in_feed(x, data + pos, len);
			pos += len;
		}
		journal_t *j = journal_new(1 << 16);
		zone_t *z = NULL;
		if (!j)
			abort();
		int err = xfr_in_finish(x, j, &z);
		if (err == 0 && z &&
		    (z->serial != xfr_in_serial(x) || !znode_rrset(z->apex, DNS_TYPE_SOA)))
			abort();
		if (err == 0 && !z && xfr_in_kind(x) != XFR_IN_UPTODATE &&
		    xfr_in_kind(x) != XFR_IN_OUTDATED)
			abort();
		if (err == 0 && z)
			zone_diff_write_back(z); /* a secondary saves what came in */
		zone_unref(z);
		journal_unref(j);
		xfr_in_free(x);
	}
	if (current->serial != 1 || current->rr_count != 4)
		abort();
	return 0;
}
