/* Unit tests for server/control.c: who the control socket file is handed to, and where it may live.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto/error.h"
#include "server/internal.h"
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

/* A server with just a loop, enough for control_open and control_close. */
typedef struct fixture {
	uv_loop_t loop;
	server_t srv;
} fixture_t;

static void fixture_init(fixture_t *f)
{
	memset(f, 0, sizeof(*f));
	CU_ASSERT_EQUAL_FATAL(uv_loop_init(&f->loop), 0);
	f->srv.loop = &f->loop;
}

static void fixture_done(fixture_t *f)
{
	control_close(&f->srv);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	control_free(&f->srv);
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
static void test_swap_before_handover(void)
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
	CU_ASSERT_EQUAL_FATAL(control_open(&f.srv, in_dir("ctl"), err, sizeof(err)), 0);
	/* the swap: rename() puts the link in the socket's place in one step */
	CU_ASSERT_EQUAL_FATAL(rename(in_dir("link"), in_dir("ctl")), 0);
	int rc = control_chown(&f.srv, OTHER_UID, OTHER_GID, err, sizeof(err));
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
static void test_handover(void)
{
	if (geteuid() != 0) {
		fprintf(stderr, "  (not root: a file cannot be handed to another user here)\n");
		return;
	}
	fixture_t f;
	fixture_init(&f);
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(control_open(&f.srv, in_dir("ctl"), err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(control_chown(&f.srv, OTHER_UID, OTHER_GID, err, sizeof(err)), 0);
	struct stat st;
	CU_ASSERT_EQUAL_FATAL(lstat(in_dir("ctl"), &st), 0);
	CU_ASSERT(S_ISSOCK(st.st_mode));
	CU_ASSERT_EQUAL(st.st_uid, OTHER_UID);
	CU_ASSERT_EQUAL(st.st_gid, OTHER_GID);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	fixture_done(&f);
	CU_ASSERT_EQUAL(access(in_dir("ctl"), F_OK), -1); /* removed at close */
}

/*
 * A folder every user may write without the sticky bit lets any of them
 * replace the socket at any time: refused. With the sticky bit (/tmp) the
 * socket stays shoald's once made: allowed, with a warning.
 */
static void test_path_folders(void)
{
	char err[512] = "";
	CU_ASSERT_EQUAL_FATAL(mkdir(in_dir("open"), 0755), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(in_dir("open"), 0777), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(in_dir("open/deeper"), 0755), 0);
	CU_ASSERT_EQUAL_FATAL(mkdir(in_dir("sticky"), 0755), 0);
	CU_ASSERT_EQUAL_FATAL(chmod(in_dir("sticky"), 01777), 0);
	CU_ASSERT_EQUAL(control_check_path(in_dir("open/ctl"), err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "every user may write"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/open (mode 0777, not sticky)"));
	/* a folder above counts too: it could be renamed away */
	CU_ASSERT_EQUAL(control_check_path(in_dir("open/deeper/ctl"), err, sizeof(err)),
			SHOAL_ECONFIG);
	CU_ASSERT_EQUAL(control_check_path(in_dir("sticky/ctl"), err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(control_check_path(in_dir("ctl"), err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(control_check_path("/tmp/ctl", err, sizeof(err)), 0);
	/* a relative path is taken from the current folder */
	char cwd[1024];
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof(cwd)));
	CU_ASSERT_EQUAL_FATAL(chdir(in_dir("open")), 0);
	CU_ASSERT_EQUAL(control_check_path("ctl", err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_EQUAL_FATAL(chdir(cwd), 0);
	/* and a folder that does not exist is named */
	CU_ASSERT_EQUAL(control_check_path(in_dir("none/ctl"), err, sizeof(err)), SHOAL_ECONFIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/none: No such file or directory"));
	rmdir(in_dir("open/deeper"));
	rmdir(in_dir("open"));
	rmdir(in_dir("sticky"));
}

int main(int argc, char **argv)
{
	if (!mkdtemp(dir))
		return 99;
	static const unit_test_t tests[] = {
		UNIT_TEST(test_swap_before_handover),
		UNIT_TEST(test_handover),
		UNIT_TEST(test_path_folders),
		UNIT_END,
	};
	int rc = unit_run(argc, argv, "control", tests);
	rmdir(dir);
	return rc;
}
