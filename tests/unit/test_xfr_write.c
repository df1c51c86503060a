/* SPDX-License-Identifier: GPL-3.0-or-later */
/*
 * Unit tests for zone/write.c: a zone loaded, written and loaded again is
 * the same zone, RRset by RRset and octet by octet; the file is replaced
 * whole or not at all.
 */
#include "config.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/unit/xfr_test.h"
#include "zone/write.h"

static char tmpdir[] = "/tmp/shoal-write-XXXXXX";

/* Every node, flag and RRset of a and b the same, octet for octet. */
static bool same_zone(const zone_t *a, const zone_t *b)
{
	if (a->node_count != b->node_count || a->rr_count != b->rr_count ||
	    a->serial != b->serial || a->denial != b->denial) {
		fprintf(stderr, "  %zu nodes, %zu records against %zu, %zu\n", a->node_count,
			a->rr_count, b->node_count, b->rr_count);
		return false;
	}
	for (size_t i = 0; i < a->node_count; i++) {
		const znode_t *x = &a->nodes[i], *y = &b->nodes[i];
		char name[NAME_TEXT_MAX];
		name_to_text(x->name, name, sizeof(name));
		if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) != 0 ||
		    x->flags != y->flags || x->rrset_count != y->rrset_count) {
			fprintf(stderr, "  node %s differs\n", name);
			return false;
		}
		for (uint16_t k = 0; k < x->rrset_count; k++) {
			const rrset_wire_t *s = &znode_rrsets(x)[k].set,
					   *t = &znode_rrsets(y)[k].set;
			if (s->type != t->type || s->rr_count != t->rr_count ||
			    s->data_len != t->data_len || s->name_count != t->name_count ||
			    memcmp(s->data, t->data, s->data_len) != 0) {
				fprintf(stderr, "  %s type %u differs\n", name, s->type);
				return false;
			}
		}
	}
	return true;
}

/* Load, write, load again: the same zone. */
static void round_trip(const char *path, const char *origin)
{
	zone_t *a = xt_load(path, origin);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	char out[4200];
	snprintf(out, sizeof(out), "%s/out.zone", tmpdir);
	CU_ASSERT_EQUAL_FATAL(zone_write(a, out, "written by test_xfr_write\nfrom a file"), 0);
	zone_t *b = xt_load(out, origin);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_TRUE(same_zone(a, b));
	/* and ldns reads the file as the same records too */
	ldns_rr_list *x = xt_zone_rrs(a), *y = xt_file_rrs(out, origin);
	CU_ASSERT_TRUE(y && xt_same_rrs(x, y));
	ldns_rr_list_deep_free(x);
	ldns_rr_list_deep_free(y);
	zone_unref(a);
	zone_unref(b);
}

static void test_round_trip(void)
{
	/* every answering rule's names, an $INCLUDE, an unknown type in RFC 3597 form */
	round_trip(xt_src("tests/unit/zones/example.zone"), "example.com.");
	round_trip(xt_src("tests/unit/zones/rrsig.zone"), "example.com.");
	/* signed: NSEC, NSEC3 with opt-out, DNSKEY, DS */
	round_trip(xt_src("tests/diff/dnssec/secure.test.zone"), "secure.test.");
	round_trip(xt_src("tests/diff/dnssec/secure3.test.zone"), "secure3.test.");
	round_trip(xt_src("tests/diff/dnssec/signed.secure.test.zone"), "signed.secure.test.");
}

/* Names and strings that need escapes, and types of every shape ldns formats. */
static void test_round_trip_escapes(void)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/odd.zone", tmpdir);
	FILE *f = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "$ORIGIN odd.test.\n$TTL 3600\n@ SOA ns1 host\\.master 1 2 3 4 5\n@ NS ns1\n"
		   "ns1 A 192.0.2.1\n"
		   "a\\.b\\032c TXT \"quote \\\" semi ; back \\\\ \\255 tab\\009\"\n"
		   "\\@ MX 10 Mail.Odd.Test.\n\\$dollar A 192.0.2.2\n"
		   "caa CAA 0 issue \"ca.example\"\nsrv SRV 1 2 3 ns1\n"
		   "loc LOC 52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m\n"
		   "sshfp SSHFP 1 1 dd465c09cfa51fb45020cc83316fff21b9ec74ac\n"
		   "naptr NAPTR 100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp\n"
		   "https HTTPS 1 . alpn=h2,h3 port=8443\n"
		   "hinfo HINFO \"PC\" \"Linux\"\nempty TXT \"\"\n"
		   "unknown TYPE4321 \\# 3 abcdef\nzero TYPE4322 \\# 0\n");
	fclose(f);
	round_trip(path, "odd.test.");
}

/* The file is replaced whole: no temporary file stays, the mode is kept. */
static void test_atomic_replace(void)
{
	zone_t *z = xt_load(xt_src("tests/unit/zones/example.zone"), "example.com.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(z);
	char out[4200];
	snprintf(out, sizeof(out), "%s/replace.zone", tmpdir);
	FILE *f = fopen(out, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("old contents\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(chmod(out, 0600), 0);
	CU_ASSERT_EQUAL(zone_write(z, out, NULL), 0);
	struct stat st;
	CU_ASSERT_EQUAL(stat(out, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	f = fopen(out, "r");
	char line[512] = "";
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof(line), f));
	fclose(f);
	CU_ASSERT_PTR_NOT_NULL(strstr(line, "SOA")); /* no comment asked: the SOA first */
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "test $(ls %s | grep -c replace.zone) = 1", tmpdir);
	CU_ASSERT_EQUAL(system(cmd), 0);

	/* a folder that cannot be written: an error, the old file as it was */
	snprintf(out, sizeof(out), "%s/nosuch/x.zone", tmpdir);
	errno = 0;
	CU_ASSERT_EQUAL(zone_write(z, out, NULL), SHOAL_EIO);
	CU_ASSERT_EQUAL(errno, ENOENT);
	snprintf(out, sizeof(out), "%s/ro", tmpdir);
	CU_ASSERT_EQUAL_FATAL(mkdir(out, 0755), 0);
	snprintf(out, sizeof(out), "%s/ro/x.zone", tmpdir);
	f = fopen(out, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs("kept\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/ro", tmpdir);
	CU_ASSERT_EQUAL(chmod(cmd, 0555), 0);
	if (geteuid() != 0) { /* root writes anyway */
		CU_ASSERT_EQUAL(zone_write(z, out, NULL), SHOAL_EIO);
		f = fopen(out, "r");
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		CU_ASSERT_PTR_NOT_NULL(fgets(line, sizeof(line), f));
		fclose(f);
		CU_ASSERT_STRING_EQUAL(line, "kept\n");
	}
	CU_ASSERT_EQUAL(chmod(cmd, 0755), 0);
	zone_unref(z);
}

int main(int argc, char **argv)
{
	if (!mkdtemp(tmpdir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_round_trip),
		UNIT_TEST(test_round_trip_escapes),
		UNIT_TEST(test_atomic_replace),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "xfr_write", tests);
	return xt_remove_dir(tmpdir, rc);
}
