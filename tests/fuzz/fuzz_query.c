/* Fuzz target for query_parse and a response round; replays a corpus in make check. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/dns.h"
#include "proto/query.h"
#include "proto/response.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * One input: parse it, then build the answer the server would send for
 * the verdict (header, echoed question, OPT with an NSID), and check the
 * result never exceeds the limit. A crash or sanitizer report is a finding.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t nsid[] = "fuzz/0";
	query_t q;
	enum query_verdict v = query_parse(&q, data, size);
	if (v == QUERY_DROP)
		return 0;

	uint8_t buf[4096]; /* the largest limit query_udp_limit gives here is 1232 */
	response_edns_t e = {
		.present = q.edns,
		.udp_size = 1232,
		.do_bit = q.edns_do,
		.nsid = q.nsid_requested ? nsid : NULL,
		.nsid_len = q.nsid_requested ? (uint16_t)(sizeof(nsid) - 1) : 0,
	};
	size_t limit = query_udp_limit(&q, 1232);
	if (limit > sizeof(buf))
		limit = sizeof(buf);
	response_t r;
	if (response_init(&r, &q, buf, sizeof(buf), limit, response_opt_size(&e)) != 0)
		return 0;
	if (v == QUERY_FORMERR)
		response_set_rcode(&r, DNS_RCODE_FORMERR);
	else if (v == QUERY_BADVERS)
		response_set_rcode(&r, DNS_RCODE_BADVERS);
	else if (v == QUERY_NOTIMP)
		response_set_rcode(&r, DNS_RCODE_NOTIMP);
	int n = response_finish(&r, &e);
	if (n > (int)limit)
		abort();
	return 0;
}

#ifndef SHOAL_LIBFUZZER
/* Run one file through the target; returns 0 or -1 when unreadable. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	uint8_t data[65536];
	size_t n = fread(data, 1, sizeof(data), f);
	fclose(f);
	LLVMFuzzerTestOneInput(data, n);
	return 0;
}

/*
 * Replay every file of each directory given, or of
 * $SHOAL_SRCDIR/tests/fuzz/corpus/query when none is given (make check).
 * Exit 0 when at least one file ran and none was unreadable.
 */
int main(int argc, char **argv)
{
	char def[4096];
	const char *srcdir = getenv("SHOAL_SRCDIR");
	const char *dirs_default[1] = { def };
	const char *const *dirs = (const char *const *)(argv + 1);
	int ndirs = argc - 1;
	if (ndirs == 0) {
		snprintf(def, sizeof(def), "%s/tests/fuzz/corpus/query",
			 srcdir != NULL ? srcdir : ".");
		dirs = dirs_default;
		ndirs = 1;
	}
	int ran = 0, bad = 0;
	for (int i = 0; i < ndirs; i++) {
		DIR *d = opendir(dirs[i]);
		if (d == NULL) {
			fprintf(stderr, "fuzz_query: cannot open %s\n", dirs[i]);
			return 1;
		}
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			char path[8192];
			snprintf(path, sizeof(path), "%s/%s", dirs[i], de->d_name);
			if (replay_file(path) != 0) {
				fprintf(stderr, "fuzz_query: cannot read %s\n", path);
				bad++;
			} else {
				ran++;
			}
		}
		closedir(d);
	}
	printf("fuzz_query: replayed %d inputs\n", ran);
	return (ran > 0 && bad == 0) ? 0 : 1;
}
#endif
