/* lib/io.c over real file descriptors (socketpairs): line reading and its limits, EOF, the
 * poll() timeout, buffered writes larger than the buffer, pending/discard, closing. */
#include "io.h"
#include "unit.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void pair(int sv[2])
{
	CHECK_INT(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

/* io reads sv[0] of a new pair whose other end has already sent text. */
static void pair_with(struct io *io, int sv[2], const char *text)
{
	pair(sv);
	io_init_fd(io, sv[0], 1000);
	CHECK_INT(write(sv[1], text, strlen(text)), strlen(text));
}

TEST(io_lines_and_eof)
{
	int sv[2];
	struct io io;
	char line[16];
	pair_with(&io, sv, "220 hello\r\n250-a\r\n250 b\r\npartial");
	close(sv[1]);
	CHECK_INT(io_getline(&io, line, sizeof line), 11);
	CHECK_STR(line, "220 hello\r\n");
	CHECK(io_pending(&io) > 0); /* the rest arrived in the same read */
	CHECK_INT(io_getline(&io, line, sizeof line), 7);
	CHECK_STR(line, "250-a\r\n");
	CHECK_INT(io_getline(&io, line, sizeof line), 7);
	CHECK_INT(io_getline(&io, line, sizeof line), 7); /* the last line without LF, at EOF */
	CHECK_STR(line, "partial");
	CHECK_INT(io_getline(&io, line, sizeof line), 0);
	CHECK_INT(io_close(&io), 0);
	CHECK_INT(io.fd, -1);
	CHECK_INT(io_close(&io), 0); /* twice is harmless */
}

TEST(io_overlong_line_is_consumed)
{
	int sv[2];
	struct io io;
	char line[8];
	pair_with(&io, sv, "0123456789abcdef\nnext\n");
	errno = 0;
	CHECK_INT(io_getline(&io, line, sizeof line), -1);
	CHECK_INT(errno, EMSGSIZE);
	CHECK_STR(line, "0123456"); /* never more than size bytes */
	CHECK_INT(io_getline(&io, line, sizeof line), 5);
	CHECK_STR(line, "next\n");
	io_close(&io);
	close(sv[1]);
}

TEST(io_timeout)
{
	int sv[2];
	struct io io;
	char line[16];
	struct timespec a, b;
	pair(sv);
	io_init_fd(&io, sv[0], 200);
	clock_gettime(CLOCK_MONOTONIC, &a);
	errno = 0;
	CHECK_INT(io_getline(&io, line, sizeof line), -1);
	clock_gettime(CLOCK_MONOTONIC, &b);
	CHECK_INT(errno, ETIMEDOUT);
	long ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	CHECK(ms >= 190 && ms < 2000);
	/* a write that cannot proceed (the peer reads nothing) times out too */
	int sz = 4096;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	static char big[1 << 20];
	errno = 0;
	int r = io_write(&io, big, sizeof big);
	if (r == 0)
		r = io_flush(&io);
	CHECK_INT(r, -1);
	CHECK_INT(errno, ETIMEDOUT);
	io_close(&io);
	close(sv[1]);
}

TEST(io_writes_and_discard)
{
	int sv[2];
	struct io io, peer;
	static char big[3 * IO_BUFSIZE + 100], got[sizeof big + 1];
	pair(sv);
	io_init_fd(&io, sv[0], 1000);
	io_init_fd(&peer, sv[1], 1000);
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (char)('a' + i % 26);
	big[sizeof big - 1] = '\n';
	CHECK_INT(io_puts(&io, "EHLO x\r\n"), 0);
	CHECK_INT(io.wlen, 8); /* buffered until flushed */
	CHECK_INT(io_write(&io, big, sizeof big), 0);
	CHECK_INT(io_flush(&io), 0);
	CHECK_INT(io.wlen, 0);
	CHECK_INT(io_getline(&peer, got, sizeof got), 8);
	CHECK_INT(io_getline(&peer, got, sizeof got), sizeof big);
	CHECK(memcmp(got, big, sizeof big) == 0);
	/* the server sends two lines; the client reads one and drops the rest (STARTTLS) */
	CHECK_INT(write(sv[1], "220 go\r\nINJECTED\r\n", 18), 18);
	char line[32];
	CHECK_INT(io_getline(&io, line, sizeof line), 8);
	CHECK_INT(io_pending(&io), 10);
	io_discard_input(&io);
	CHECK_INT(io_pending(&io), 0);
	/* a write to a peer that is gone fails with EPIPE, not SIGPIPE */
	io_close(&peer);
	io_puts(&io, "QUIT\r\n");
	int r = io_flush(&io);
	if (r == 0) /* the first write may still be accepted by the kernel */
		r = (io_puts(&io, "QUIT\r\n"), io_flush(&io));
	CHECK_INT(r, -1);
	CHECK(errno == EPIPE || errno == ECONNRESET);
	io_close(&io);
}
