/* Fuzz target for zone_load: any text as the master file of fuzz.test. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/error.h"
#include "tests/fuzz/fuzz_file.h"
#include "zone/internal.h"
#include "zone/zone.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * True when some line of the input starts with $INCLUDE (as zone/load.c
 * reads it) and has a '/' after it: such a path can leave the private
 * folder and name a device that never ends (/dev/zero, /dev/stdin). A
 * relative name stays in the folder, where inc.zone is the one file.
 */
static bool includes_a_path(const uint8_t *data, size_t size)
{
	bool line_start = true, in_include = false;
	for (size_t i = 0; i < size; i++) {
		if (line_start && size - i >= 8 &&
		    strncasecmp((const char *)data + i, "$INCLUDE", 8) == 0)
			in_include = true;
		line_start = data[i] == '\n';
		if (line_start)
			in_include = false;
		else if (in_include && data[i] == '/')
			return true;
	}
	return false;
}

/*
 * Check what the store promises of a zone that loaded: nodes in strictly
 * canonical order with the apex first, every node found by exact lookup and
 * by "less or equal", parents in the zone and one label shorter.
 */
static void check_zone(const zone_t *z)
{
	if (z->node_count == 0 || z->apex != &z->nodes[0] || z->apex->parent != NULL)
		abort();
	for (size_t i = 0; i < z->node_count; i++) {
		const znode_t *n = &z->nodes[i];
		if (name_length(n->name) != n->name_len || name_labels(n->name) != n->labels)
			abort();
		if (i > 0 && name_compare(z->nodes[i - 1].name, n->name) >= 0)
			abort();
		if (zone_lookup(z, n->name) != n || zone_find_le(z, n->name) != n)
			abort();
		if (i > 0 && (n->parent == NULL || n->parent->labels + 1 != n->labels ||
			      !name_equal(n->parent->name, name_parent(n->name))))
			abort();
	}
}

/* The messages of one load, folded into a hash and a count. */
typedef struct msg_trace {
	uint64_t hash;
	unsigned count;
} msg_trace_t;

static void trace_msg(void *arg, bool is_error, const char *msg)
{
	msg_trace_t *t = arg;
	t->hash = (t->hash ^ (uint64_t)is_error) * 1099511628211u;
	for (const char *c = msg; *c; c++)
		t->hash = (t->hash ^ (uint8_t)*c) * 1099511628211u;
	t->count++;
}

/* Two loads of one zone: the same nodes with the same RRsets, octet for octet. */
static void same_zone(const zone_t *a, const zone_t *b)
{
	if (a->node_count != b->node_count || a->rr_count != b->rr_count)
		abort();
	for (size_t i = 0; i < a->node_count; i++) {
		const znode_t *x = &a->nodes[i], *y = &b->nodes[i];
		if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) != 0 ||
		    x->rrset_count != y->rrset_count || x->flags != y->flags)
			abort();
		for (uint16_t k = 0; k < x->rrset_count; k++)
			if (x->rrsets[k].set.data_len != y->rrsets[k].set.data_len ||
			    memcmp(x->rrsets[k].set.data, y->rrsets[k].set.data,
				   x->rrsets[k].set.data_len) != 0)
				abort();
	}
}

/*
 * One input is one zone file for fuzz.test., loaded from a file (the
 * loader reads paths). Errors are expected; a crash, a sanitizer report, a
 * leak or a broken store is a finding. The file is loaded twice: in one go
 * and cut into stretches read on threads (as big files are); a zone that
 * loads must come out the same both ways, with the same messages.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t origin[] = "\4fuzz\4test";
	static const char inc[] = "$ORIGIN inc.fuzz.test.\n"
				  "www IN A 192.0.2.1\n"
				  "* IN TXT \"included\"\n";
	static bool inc_written;
	if (includes_a_path(data, size))
		return 0;
	if (!inc_written) {
		fuzz_file_write("inc.zone", (const uint8_t *)inc, sizeof(inc) - 1);
		inc_written = true;
	}
	const char *path = fuzz_file_write("fuzz.zone", data, size);
	zone_t *z = NULL, *split = NULL;
	msg_trace_t t1 = { 14695981039346656037u, 0 }, t2 = t1;
	zone_load_set_threads(1, 0);
	int rc = zone_load(path, origin, NULL, trace_msg, &t1, &z);
	zone_load_set_threads(3, 1); /* every input cut, however small */
	int rc2 = zone_load(path, origin, NULL, trace_msg, &t2, &split);
	zone_load_set_threads(0, 0);
	if (rc == 0) {
		if (z == NULL)
			abort();
		check_zone(z);
		/* errors may differ in number (each stretch stops after as many) */
		if (rc2 != 0 || t1.count != t2.count || t1.hash != t2.hash)
			abort();
		same_zone(z, split);
	} else if (rc != SHOAL_EZONE && rc != SHOAL_EIO && rc != SHOAL_ENOMEM) {
		abort();
	} else if (rc2 == 0) {
		abort(); /* a zone that does not load in one go loads when cut */
	}
	zone_free(z);
	zone_free(split);
	return 0;
}
