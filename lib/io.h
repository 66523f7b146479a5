/* Buffered, timed byte streams over a low-level read/write pair (qmail's substdio, BearSSL's
 * br_sslio): the SMTP code runs unchanged over a plain socket, over TLS, or over a test stub.
 *
 * Contract: the caller owns struct io and its buffers. Writes block at most io->timeout_ms per
 * low-level call; io_getline() takes at most io->timeout_ms for the whole line, however slowly
 * its bytes trickle in (0 = no limit); a timeout returns -1 with errno ETIMEDOUT.
 * Lines are LF-terminated; io_getline() never writes more than size bytes and reports a line
 * that did not fit (errno EMSGSIZE) after consuming it up to its end. */
#ifndef SPOOLBOX_IO_H
#define SPOOLBOX_IO_H
#include <stddef.h>
#include <sys/types.h>

#define IO_BUFSIZE 4096

struct io {
	/* low-level transfer: return bytes moved, 0 at EOF (read), -1 with errno on error */
	ssize_t (*low_read)(void *ctx, void *p, size_t n, int timeout_ms);
	ssize_t (*low_write)(void *ctx, const void *p, size_t n, int timeout_ms);
	int (*low_close)(void *ctx);
	void *ctx;
	int fd;               /* the socket underneath, -1 when none */
	int notsock;          /* fd is a pipe or a file: written with write(), not send() */
	int rcvtimeo_ms;      /* the socket's SO_RCVTIMEO as last set, 0 while never set */
	int timeout_ms;
	size_t rpos, rlen;
	size_t wlen;
	/* the buffers last: one-byte displacements (docs/size.md) */
	unsigned char rbuf[IO_BUFSIZE];
	unsigned char wbuf[IO_BUFSIZE];
};

/* The one write-all: writes the n bytes to fd (a file, a pipe, a socket in blocking mode),
 * through short writes and EINTR, without a time limit. 0, or -1 with errno (EIO for a write
 * that moved nothing). fio_write_all(), the delivery copy and the streams' plain case use it. */
int io_write_all_fd(int fd, const void *p, size_t n);
/* Reads what is buffered, else one low-level read into p within timeout_ms (so a caller that
 * parses raw bytes, -bs's DATA, reads a buffer at a time): bytes moved, 0 at EOF, -1 with errno
 * (ETIMEDOUT). */
ssize_t io_read(struct io *io, void *p, size_t n);
/* A plain file-descriptor stream (a socket's timeouts by SO_RCVTIMEO, anything else's by poll()). */
void io_init_fd(struct io *io, int fd, int timeout_ms);
/* Buffered write; io_flush() sends what is buffered. Writes that fill the buffer flush it. */
int io_write(struct io *io, const void *p, size_t n);
int io_puts(struct io *io, const char *s);
int io_flush(struct io *io);
/* What is buffered, then p[0..n) straight from the caller's memory (a big block is not copied
 * into the buffer first): 0, or -1 with errno. */
int io_write_direct(struct io *io, const void *p, size_t n);
/* Reads one line including its LF into out (NUL-terminated; size at least 1: the three callers
 * pass arrays); returns its length, 0 at EOF, -1 on error/timeout/overlong line. */
ssize_t io_getline(struct io *io, char *out, size_t size);
/* Bytes already buffered for reading (a server that pipelined ahead, or STARTTLS injection). */
size_t io_pending(const struct io *io);
/* Drops buffered input (after STARTTLS, RFC 3207 section 6). */
void io_discard_input(struct io *io);
int io_close(struct io *io);
#endif
