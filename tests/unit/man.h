/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Reading the man pages in tests: the heads of a section's .TP paragraphs, as text. */
#ifndef SHOAL_TESTS_MAN_H
#define SHOAL_TESTS_MAN_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAN_HEADS_MAX 96
#define MAN_HEAD_LEN  128

/*
 * The text a roff line shows: a font macro's arguments (.B, .I joined by
 * spaces; .BR, .IR and the like joined without), quotes and font escapes
 * (\fB, \fI, \fR, \fP) dropped, "\-" read as "-". Enough for the heads of
 * option and command paragraphs.
 */
static inline void man_text(const char *line, char *out, size_t cap)
{
	size_t n = 0;
	bool macro = line[0] == '.', alternate = false, quoted = false;
	const char *p = line;
	if (macro) {
		size_t name = strcspn(p, " ");
		alternate = name == 3; /* .BR, .IR, .RB, .BI ... */
		p += name;
		while (*p == ' ')
			p++;
	}
	for (; *p && n + 1 < cap; p++) {
		if (macro && *p == '"') {
			quoted = !quoted;
		} else if (alternate && !quoted && *p == ' ') {
			continue;
		} else if (p[0] == '\\' && p[1] == 'f' && p[2]) {
			p += 2;
		} else if (p[0] == '\\' && p[1] == '-') {
			out[n++] = '-';
			p++;
		} else {
			out[n++] = *p;
		}
	}
	out[n] = '\0';
}

/*
 * The head (the line after each .TP, as man_text shows it) of every
 * paragraph of section `section` (".SH OPTIONS": "OPTIONS") of the man
 * page SHOAL_SRCDIR/man/page, into heads[0..MAN_HEADS_MAX). Returns how
 * many, or -1 when the page cannot be read.
 */
static inline int man_heads(const char *page, const char *section,
			    char heads[MAN_HEADS_MAX][MAN_HEAD_LEN])
{
	const char *src = getenv("SHOAL_SRCDIR");
	char path[512], line[512], want[128];
	snprintf(path, sizeof(path), "%s/man/%s", src ? src : ".", page);
	snprintf(want, sizeof(want), ".SH %s", section);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int n = 0;
	bool inside = false, after_tp = false;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, ".SH ", 4))
			inside = !strcmp(line, want);
		else if (inside && after_tp && n < MAN_HEADS_MAX)
			man_text(line, heads[n++], MAN_HEAD_LEN);
		after_tp = inside && !strcmp(line, ".TP");
	}
	fclose(f);
	return n;
}

/*
 * The whole of SHOAL_SRCDIR/man/page into buf[0..cap), NUL-terminated (cut
 * at cap - 1). Returns its length, or -1 when the page cannot be read.
 */
static inline long man_read(const char *page, char *buf, size_t cap)
{
	const char *src = getenv("SHOAL_SRCDIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/man/%s", src ? src : ".", page);
	FILE *f = fopen(path, "r");
	if (!f || cap == 0) {
		if (f)
			fclose(f);
		return -1;
	}
	size_t n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return (long)n;
}

/* Where head is among heads[0..n), or -1. */
static inline int man_find(char heads[][MAN_HEAD_LEN], int n, const char *head)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(heads[i], head))
			return i;
	return -1;
}

#endif
