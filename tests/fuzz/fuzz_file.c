/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzz inputs written to files in a private temporary folder. */
#include "tests/fuzz/fuzz_file.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <unistd.h>

static char fuzz_dir[4096];

/* Remove the folder and the files written into it (it has no subfolders). */
static void fuzz_dir_remove(void)
{
	DIR *d = opendir(fuzz_dir);
	if (d != NULL) {
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			char path[8192];
			snprintf(path, sizeof(path), "%s/%s", fuzz_dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(fuzz_dir);
}

const char *fuzz_file_write(const char *name, const uint8_t *data, size_t size)
{
	static char path[8192];
	if (fuzz_dir[0] == '\0') {
		const char *tmp = getenv("TMPDIR");
		snprintf(fuzz_dir, sizeof(fuzz_dir), "%s/shoal-fuzz.XXXXXX",
			 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp");
		if (mkdtemp(fuzz_dir) == NULL) {
			perror("fuzz: mkdtemp");
			abort();
		}
		atexit(fuzz_dir_remove);
	}
	snprintf(path, sizeof(path), "%s/%s", fuzz_dir, name);
	FILE *f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
		perror(path);
		abort();
	}
	return path;
}

/*
 * True when some line of data starts with $INCLUDE (as zone/load.c reads
 * it) and has a '/' after it.
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

const char *fuzz_file_zone(const uint8_t *data, size_t size)
{
	static const char inc[] = "$ORIGIN inc.fuzz.test.\n"
				  "www IN A 192.0.2.1\n"
				  "* IN TXT \"included\"\n";
	static bool inc_written;
	if (includes_a_path(data, size))
		return NULL;
	if (!inc_written) {
		fuzz_file_write("inc.zone", (const uint8_t *)inc, sizeof(inc) - 1);
		inc_written = true;
	}
	return fuzz_file_write("fuzz.zone", data, size);
}
