/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The replay main shared by every fuzz target: runs a corpus through LLVMFuzzerTestOneInput. */
#include <dirent.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Read the whole file into a buffer of exactly its size (so ASan sees any
 * read past the input, as under libFuzzer) and run it through the target.
 * Returns 0, or -1 when the file cannot be read.
 */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	size_t cap = 4096, len = 0;
	uint8_t *data = malloc(cap);
	while (data != NULL) {
		len += fread(data + len, 1, cap - len, f);
		if (len < cap)
			break;
		uint8_t *more = realloc(data, cap * 2);
		if (more == NULL) {
			free(data);
			data = NULL;
			break;
		}
		data = more;
		cap *= 2;
	}
	int bad = data == NULL || ferror(f);
	fclose(f);
	if (bad) {
		free(data);
		return -1;
	}
	/* an exact-size copy; malloc(0) may return NULL, so keep at least one byte */
	uint8_t *exact = malloc(len > 0 ? len : 1);
	if (exact == NULL) {
		free(data);
		return -1;
	}
	memcpy(exact, data, len);
	free(data);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

/*
 * Replay every file of each directory given, or of
 * $SHOAL_SRCDIR/tests/fuzz/corpus/<target> when none is given (make check),
 * where <target> is the program's name without "fuzz_". An input passes
 * when it ran (a crash ends the program, and the summary line is missing);
 * an unreadable file fails. Prints "fuzz_<target>: N passed, M failed", the
 * line tests/summary.sh counts. Exit 0 when at least one input ran and none
 * failed.
 */
int main(int argc, char **argv)
{
	char prog[256];
	snprintf(prog, sizeof(prog), "%s", argv[0]);
	const char *name = basename(prog);
	const char *target = strncmp(name, "fuzz_", 5) == 0 ? name + 5 : name;

	char def[4096];
	const char *srcdir = getenv("SHOAL_SRCDIR");
	const char *dirs_default[1] = { def };
	const char *const *dirs = (const char *const *)(argv + 1);
	int ndirs = argc - 1;
	if (ndirs == 0) {
		snprintf(def, sizeof(def), "%s/tests/fuzz/corpus/%s", srcdir != NULL ? srcdir : ".",
			 target);
		dirs = dirs_default;
		ndirs = 1;
	}
	int passed = 0, failed = 0;
	for (int i = 0; i < ndirs; i++) {
		DIR *d = opendir(dirs[i]);
		if (d == NULL) {
			fprintf(stderr, "fuzz_%s: cannot open %s\n", target, dirs[i]);
			failed++;
			continue;
		}
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			char path[8192];
			snprintf(path, sizeof(path), "%s/%s", dirs[i], de->d_name);
			/* named before it runs: a crash or a sanitizer report ends the log here */
			fprintf(stderr, "fuzz_%s: %s\n", target, path);
			if (replay_file(path) != 0) {
				fprintf(stderr, "fuzz_%s: cannot read %s\n", target, path);
				failed++;
			} else {
				passed++;
			}
		}
		closedir(d);
	}
	printf("fuzz_%s: %d passed, %d failed\n", target, passed, failed);
	return (passed > 0 && failed == 0) ? 0 : 1;
}
