/* SPDX-License-Identifier: GPL-3.0-or-later */
/* makekeys: a zone's first KSK and ZSK made in a keys-dir as the signer makes them, for tests. */
#include "config.h"

#include <libdnssec/crypto.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "proto/name.h"
#include "zone/sign_key.h"

/*
 * makekeys DIR ZONE ALGORITHM [NOW]: sign_keyset_create into DIR for ZONE
 * ("example.com.") with the RFC 8624 number ALGORITHM, its times NOW
 * (UNIX seconds; default the present). Exits 0, or 1 with the reason on
 * stderr (2 for a usage error).
 */
int main(int argc, char **argv)
{
	uint8_t apex[NAME_MAXLEN];
	if (argc < 4 || argc > 5 || name_from_text(argv[2], NULL, apex) < 0) {
		fprintf(stderr, "usage: makekeys DIR ZONE. ALGORITHM [NOW]\n");
		return 2;
	}
	name_lower(apex);
	int64_t now = argc == 5 ? strtoll(argv[4], NULL, 10) : (int64_t)time(NULL);
	char err[512] = "";
	sign_keyset_t ks;
	dnssec_crypto_init();
	int rc = sign_keyset_create(&ks, argv[1], apex, (uint8_t)atoi(argv[3]), now, err,
				    sizeof(err));
	if (rc < 0)
		fprintf(stderr, "makekeys: %s (%d)\n", err, rc);
	sign_keyset_clear(&ks);
	dnssec_crypto_cleanup();
	return rc < 0 ? 1 : 0;
}
