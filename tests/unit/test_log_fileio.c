/* Unit tests of the log line format (message id in every line, no forged lines) and of the
 * file I/O wrappers' error reports (operation and path named). */
#include "fileio.h"
#include "log.h"
#include "unit.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static void capture_start(int p[2])
{
	CHECK(pipe(p) == 0);
	log_init("t", LOG_TO_STDERR, LOG_INFO);
	log_set_fd(p[1]);
}

static void capture_end(int p[2], char *out, size_t size)
{
	close(p[1]);
	ssize_t n = read(p[0], out, size - 1);
	out[n > 0 ? n : 0] = 0;
	close(p[0]);
	log_set_fd(-1);
}

TEST(log_lines_carry_the_message_id)
{
	int p[2];
	char out[512], want[128];
	capture_start(p);
	log_msg(LOG_INFO, "T4G2KQ80A1F3Z7K", "delivered to %s", "root");
	log_msg(LOG_DEBUG, "T4G2KQ80A1F3Z7K", "not shown at info level");
	capture_end(p, out, sizeof out);
	snprintf(want, sizeof want, "t[%ld]: T4G2KQ80A1F3Z7K: delivered to root\n", (long)getpid());
	CHECK_STR(out, want);
}

TEST(log_line_cannot_be_forged)
{
	int p[2];
	char out[512];
	capture_start(p);
	log_msg(LOG_WARNING, NULL, "reply: %s", "250 ok\nt[1]: fake entry\r");
	capture_end(p, out, sizeof out);
	CHECK(strchr(out, '\n') == out + strlen(out) - 1);
	CHECK(strstr(out, "250 ok t[1]: fake entry ") != NULL);
}

TEST(fileio_errors_name_operation_and_path)
{
	int p[2];
	char out[512];
	capture_start(p);
	int fd = open("/dev/full", O_WRONLY);
	CHECK(fd >= 0);
	CHECK_INT(fio_write_all(fd, "x", 1, "/dev/full"), -1);
	CHECK_INT(errno, ENOSPC);
	close(fd);
	CHECK_INT(fio_fsync_dir("/nonexistent/dir"), -1);
	capture_end(p, out, sizeof out);
	CHECK(strstr(out, "write /dev/full: No space left on device") != NULL);
	CHECK(strstr(out, "open directory /nonexistent/dir: No such file or directory") != NULL);
}

TEST(fileio_slurp_limits)
{
	char path[512], *text;
	size_t len;
	snprintf(path, sizeof path, "%s/f", unit_tmpdir());
	int fd = open(path, O_CREAT | O_WRONLY, 0600);
	CHECK(write(fd, "hello", 5) == 5);
	close(fd);
	CHECK_INT(fio_slurp(path, 5, &text, &len), 0);
	CHECK_STR(text, "hello");
	free(text);
	log_init("t", 0, LOG_INFO);
	CHECK_INT(fio_slurp(path, 4, &text, &len), -1);
	CHECK_INT(errno, EFBIG);
	CHECK_INT(fio_slurp("/nonexistent", 4, &text, &len), -1);
	CHECK_INT(errno, ENOENT);
	char d[512], mk[600];
	snprintf(d, sizeof d, "%s/a/b/c", unit_tmpdir());
	CHECK_INT(fio_mkdirs(d, 0700), 0);
	CHECK_INT(fio_mkdirs(d, 0700), 0);
	CHECK_INT(fio_dirname(d, mk, sizeof mk), 0);
	char want[600];
	snprintf(want, sizeof want, "%s/a/b", unit_tmpdir());
	CHECK_STR(mk, want);
	CHECK_INT(fio_fsync_parent(d), 0); /* a/b exists */
	snprintf(want, sizeof want, "%s/no/such/file", unit_tmpdir());
	CHECK_INT(fio_fsync_parent(want), -1);
	CHECK_INT(errno, ENOENT);
	log_init("t", LOG_TO_STDERR, LOG_INFO);
}
