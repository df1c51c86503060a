/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Cases of zone/answer.c as rows of a text table: read, asked and checked with CUnit. */
#ifndef SHOAL_TESTS_UNIT_ANSWER_TABLE_H
#define SHOAL_TESTS_UNIT_ANSWER_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "zone/zonedb.h"

/* The NSID every row's answer is given to send (RFC 5001). */
#define ANSWER_TABLE_NSID "shoal-test"
/* The most groups a table may have. */
#define ANSWER_TABLE_GROUPS_MAX 64

/* A set of zones rows may ask ("@parent"), and the db that serves it. */
typedef struct answer_zones {
	const char *name;
	const zonedb_t *db;
} answer_zones_t;

/*
 * Read the table at path, whose rows ask the zone sets sets[0..n) (sets[0]
 * when a row names none); messages name the table `name`. Returns 0, or -1
 * with the file and line of what is wrong on stderr. Keeps sets, name and
 * the dbs until answer_table_free. Not thread-safe: one table at a time.
 */
int answer_table_load(const char *path, const char *name, const answer_zones_t *sets, size_t n);

/* The name of group i of the table, NULL past the last. */
const char *answer_table_group(size_t i);

/* Ask every row of the group and check each answer: CUnit assertions at the rows' lines. */
void answer_table_run(const char *group);

/*
 * Answer the wire query q[0..qlen) and check the answer against a row given
 * as text ("QUERY -> RESULT", cut in place) that stands at file:line: for
 * queries no row can build. The row's QUERY says what the answer must echo.
 * Only after answer_table_load (the row may name its zone sets).
 */
void answer_table_check_wire(const char *file, int line, char *text, const uint8_t *q, size_t qlen);

/* Forget the table. */
void answer_table_free(void);

#endif
