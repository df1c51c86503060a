/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Unit tests for server/ctl/control.c and commands.c: who gets the socket file, the commands. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/ctl/control.h"
#include "tests/unit/man.h"
#include "unit.h"

#define OTHER_UID 65534 /* nobody: the user shoald drops to in the tests */
#define OTHER_GID 65534

static char dir[] = "/tmp/shoal-control.XXXXXX";

static const char *in_dir(const char *name)
{
	static char path[2][256];
	static int k;
	k ^= 1;
	snprintf(path[k], sizeof(path[k]), "%s/%s", dir, name);
	return path[k];
}

/* A loop and nothing else, enough for control_open and control_close. */
typedef struct fixture {
	uv_loop_t loop;
	control_env_t env;
	control_t *ctl;
} fixture_t;

static void fixture_init(fixture_t *f)
{
	memset(f, 0, sizeof(*f));
	CU_ASSERT_EQUAL_FATAL(uv_loop_init(&f->loop), 0);
	f->env.loop = &f->loop;
}

static void fixture_done(fixture_t *f)
{
	control_close(f->ctl);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	control_free(f->ctl);
	CU_ASSERT_EQUAL(uv_loop_close(&f->loop), 0);
}

static uid_t owner(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 ? st.st_uid : (uid_t)-1;
}

/*
 * The ownership race: between creating the socket and handing it to the
 * user shoald runs as, a process of that user that may write the folder
 * swaps the socket for a symbolic link to a file of root's. Handing the
 * socket over by name followed the link and gave that file away; through
 * the descriptor it reaches the socket, the file stays root's, and the
 * swap is reported so that start-up stops.
 */
static void test_swap_before_takeover(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "  (not root: a file cannot be handed to another user here)\n");
		return;
	}
	fixture_t f;
	fixture_init(&f);
	FILE *t = fopen(in_dir("secret"), "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	fputs("root's\n", t);
	fclose(t);
	CU_ASSERT_EQUAL_FATAL(chmod(in_dir("secret"), 0600), 0);
	CU_ASSERT_EQUAL_FATAL(symlink(in_dir("secret"), in_dir("link")), 0);

	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(control_open(&f.ctl, &f.env, in_dir("ctl"), err, sizeof(err)), 0);
	/* the swap: rename() puts the link in the socket's place in one step */
	CU_ASSERT_EQUAL_FATAL(rename(in_dir("link"), in_dir("ctl")), 0);
	int rc = control_chown(f.ctl, OTHER_UID, OTHER_GID, err, sizeof(err));
	CU_ASSERT_EQUAL(owner(in_dir("secret")), 0);
	CU_ASSERT(rc < 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "was replaced by another file"));
	if (owner(in_dir("secret")) != 0)
		fprintf(stderr, "  root's file was handed to uid %u\n",
			(unsigned)owner(in_dir("secret")));
	fixture_done(&f);
	/* closing removes the name (the link), never what it points to */
	CU_ASSERT_EQUAL(owner(in_dir("secret")), 0);
	unlink(in_dir("ctl"));
	unlink(in_dir("secret"));
}

/* Without a swap, the socket itself goes to the user, still 0600. */
static void test_takeover(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "  (not root: a file cannot be handed to another user here)\n");
		return;
	}
	fixture_t f;
	fixture_init(&f);
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(control_open(&f.ctl, &f.env, in_dir("ctl"), err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(control_chown(f.ctl, OTHER_UID, OTHER_GID, err, sizeof(err)), 0);
	struct stat st;
	CU_ASSERT_EQUAL_FATAL(lstat(in_dir("ctl"), &st), 0);
	CU_ASSERT(S_ISSOCK(st.st_mode));
	CU_ASSERT_EQUAL(st.st_uid, OTHER_UID);
	CU_ASSERT_EQUAL(st.st_gid, OTHER_GID);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	fixture_done(&f);
	CU_ASSERT_EQUAL(access(in_dir("ctl"), F_OK), -1); /* removed at close */
}

/* Send line to the control socket at path; the reply, read until the server closes. */
static void ask(fixture_t *f, const char *path, const char *line, char *out, size_t cap)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	CU_ASSERT_EQUAL_FATAL(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	size_t len = 0;
	/* the server runs on this thread: turn its loop until it closes, 10 s at most */
	for (int i = 0; i < 10000 && len + 1 < cap; i++) {
		uv_run(&f->loop, UV_RUN_NOWAIT);
		ssize_t r = recv(fd, out + len, cap - 1 - len, MSG_DONTWAIT);
		if (r == 0)
			break;
		if (r > 0)
			len += (size_t)r;
		else
			usleep(1000);
	}
	out[len] = '\0';
	close(fd);
}

static void count_stop(void *arg)
{
	++*(int *)arg;
}

/*
 * The commands are one table: a name with the wrong argument is no
 * command, the reply to one that is unknown lists them all as
 * shoalctl(8) writes them, and stop reaches the server through its
 * callback.
 */
static void test_dispatch(void)
{
	fixture_t f;
	fixture_init(&f);
	int stops = 0;
	f.env.stop = count_stop;
	f.env.stop_arg = &stops;
	char err[512] = "", reply[1024];
	CU_ASSERT_EQUAL_FATAL(control_open(&f.ctl, &f.env, in_dir("ask"), err, sizeof(err)), 0);
	const char *unknown =
		"error\nunknown command (status, stats [FORMAT], reload [ZONE], reconfig, "
		"zone-add NAME FILE [--catalog C], zone-remove NAME, zone-status [ZONE...|FROM COUNT], zone-read ZONE, "
		"keys ZONE, ds ZONE, notify ZONE, refresh ZONE, retransfer ZONE, cookie-rotate [HEX], "
		"log-reopen, tls-pin, restart, upgrade PATH, takeover VERSION, stop)\n";
	const char *wrong[] = { "bogus\n", "status now\n", "stop please\n", "reconfig x\n" };
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		ask(&f, in_dir("ask"), wrong[i], reply, sizeof(reply));
		CU_ASSERT_STRING_EQUAL(reply, unknown);
	}
	/*
	 * zone-status names many zones: a line of 4 KiB (16 names of 255
	 * octets) is read; one of CONTROL_LINE_MAX octets is refused.
	 */
	size_t cap = CONTROL_LINE_MAX > 4096 ? CONTROL_LINE_MAX : 4096;
	char *line = malloc(cap + 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(line);
	memset(line, ' ', cap);
	line[cap] = '\0';
	memcpy(line, "bogus", 5);
	line[4095] = '\n';
	line[4096] = '\0';
	ask(&f, in_dir("ask"), line, reply, sizeof(reply));
	CU_ASSERT_STRING_EQUAL(reply, unknown);
	line[4095] = line[4096] = 'x';
	line[CONTROL_LINE_MAX - 1] = '\n';
	ask(&f, in_dir("ask"), line, reply, sizeof(reply));
	CU_ASSERT_STRING_EQUAL(reply, "error\ncommand line too long\n");
	free(line);
	CU_ASSERT_EQUAL(stops, 0);
	ask(&f, in_dir("ask"), "  stop  \n", reply, sizeof(reply));
	CU_ASSERT_STRING_EQUAL(reply, "ok\nstopping\n");
	CU_ASSERT_EQUAL(stops, 1);
	fixture_done(&f);
}

/* Every command of the table is a paragraph of COMMANDS in shoalctl(8), and nothing else is. */
static void test_man_page(void)
{
	char heads[MAN_HEADS_MAX][MAN_HEAD_LEN], usage[MAN_HEAD_LEN];
	int n = man_heads("shoalctl.8.in", "COMMANDS", heads);
	CU_ASSERT_FATAL(n >= 0);
	int commands = 0;
#define CHECK_COMMAND(id, name, rule, arg, help)              \
	control_usage(usage, sizeof(usage), name, rule, arg); \
	commands++;                                           \
	CU_ASSERT(man_find(heads, n, usage) >= 0);            \
	if (man_find(heads, n, usage) < 0)                    \
		fprintf(stderr, "\n  \"%s\" is not a paragraph of shoalctl(8)\n", usage);
	CONTROL_COMMANDS(CHECK_COMMAND)
#undef CHECK_COMMAND
	CU_ASSERT_EQUAL(n, commands);
	for (int i = 0; i < n; i++) {
		bool known = false;
#define KNOWN(id, name, rule, arg, help)                      \
	control_usage(usage, sizeof(usage), name, rule, arg); \
	known = known || !strcmp(usage, heads[i]);
		CONTROL_COMMANDS(KNOWN)
#undef KNOWN
		CU_ASSERT(known);
		if (!known)
			fprintf(stderr, "\n  shoalctl(8) documents \"%s\", no such command\n",
				heads[i]);
	}
}

int main(int argc, char **argv)
{
	if (!mkdtemp(dir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_swap_before_takeover),
		UNIT_TEST(test_takeover),
		UNIT_TEST(test_dispatch),
		UNIT_TEST(test_man_page),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "control", tests);
	rmdir(dir);
	return rc;
}
