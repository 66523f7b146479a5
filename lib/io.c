/* lib/io.h for plain file descriptors: poll()-timed low-level read/write (in the manner of
 * qmail's substdio and BearSSL's br_sslio), and the buffering every stream shares.
 *
 * Choices the header leaves open:
 *   - io_getline() at EOF after a partial line returns that partial line (no LF); the next
 *     call returns 0. An overlong line leaves its first size-1 bytes in out.
 *   - io_getline() applies timeout_ms to the whole line (each read gets what is left of it),
 *     so a peer trickling one byte at a time, or a line that never ends, still times out.
 *   - io_close() does not flush: closing after an error must not block on a dead peer, so a
 *     caller that wants its last bytes sent (QUIT) flushes first. Closing twice is harmless.
 *   - writes to a socket use MSG_NOSIGNAL, so a peer that went away gives EPIPE, not SIGPIPE. */
#include "io.h"
#include "clock.h"
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Waits until fd is ready for events, at most timeout_ms (0: no limit). 0, or -1 with errno
 * (ETIMEDOUT on timeout). POLLHUP/POLLERR count as ready: the read or write reports them. */
static int wait_fd(int fd, short events, int timeout_ms)
{
	long long deadline = timeout_ms > 0 ? clock_mono_ms() + timeout_ms : 0;
	for (;;) {
		int left = -1;
		if (deadline) {
			long long d = deadline - clock_mono_ms();
			if (d <= 0) {
				errno = ETIMEDOUT;
				return -1;
			}
			left = (int)d;
		}
		struct pollfd pfd = {.fd = fd, .events = events};
		int r = poll(&pfd, 1, left);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* The stream an fd_read/fd_write context belongs to (ctx is &io->fd, io_init_fd). */
static struct io *io_of(void *ctx)
{
	return (struct io *)(void *)((char *)ctx - offsetof(struct io, fd));
}

/* A socket's reads are bounded by the kernel (SO_RCVTIMEO), so a reply costs one read(), not a
 * poll() and a read(). The receive timeout only ever shrinks, to the shortest limit the stream
 * has asked for (by more than a second: a line's remaining time does not count), so an SMTP
 * session settles after its first transaction (RFC 5321 4.5.3.2: DATA's 2 minutes) and sets it
 * no more. A read that comes back EAGAIN (that timeout ran out, or a non-blocking socket) waits
 * in poll() for what is left of the caller's limit: a longer limit (10 minutes for the end of
 * data) is kept whole, a shorter one by less than a second may be overrun by that second.
 * Anything else (a pipe, a file) is polled first. */
static ssize_t fd_read(void *ctx, void *p, size_t n, int timeout_ms)
{
	int fd = *(int *)ctx;
	struct io *io = io_of(ctx);
	long long deadline = timeout_ms > 0 ? clock_mono_ms() + timeout_ms : 0;
	if (deadline && !io->notsock && (!io->rcvtimeo_ms || timeout_ms + 1000 < io->rcvtimeo_ms)) {
		struct timeval tv = {timeout_ms / 1000, timeout_ms % 1000 * 1000};
		/* not a socket (or one that refuses: never seen), polled as a pipe is */
		io->notsock = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0;
		io->rcvtimeo_ms = timeout_ms;
	}
	/* no limit: a blocking read waits as long as a poll would, one system call less */
	if (deadline && io->notsock && wait_fd(fd, POLLIN, timeout_ms) < 0)
		return -1;
	for (;;) {
		ssize_t r = read(fd, p, n);
		if (r >= 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
			return r;
		if (errno == EINTR)
			continue;
		long long left = deadline ? deadline - clock_mono_ms() : 0;
		if (deadline && left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		if (wait_fd(fd, POLLIN, (int)left) < 0)
			return -1;
	}
}

/* A socket is written first and polled only when it is full (a poll before every send was one
 * system call per write for nothing: the socket buffer almost always has room); anything else
 * (a pipe, a file) is polled first when there is a time limit, since its write would block. */
static ssize_t fd_write(void *ctx, const void *p, size_t n, int timeout_ms)
{
	int fd = *(int *)ctx;
	/* ctx is &io->fd (io_init_fd): the stream remembers that it is not a socket */
	struct io *io = io_of(ctx);
	int sock = !io->notsock;
	for (;;) {
		ssize_t r = -1;
		if (sock) {
			r = send(fd, p, n, MSG_NOSIGNAL | (timeout_ms > 0 ? MSG_DONTWAIT : 0));
			if (r < 0 && errno == ENOTSOCK)
				sock = 0, io->notsock = 1;
		}
		if (!sock) {
			if (timeout_ms > 0 && wait_fd(fd, POLLOUT, timeout_ms) < 0)
				return -1;
			r = write(fd, p, n);
		}
		if (r >= 0 || (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
			return r;
		if (sock && errno != EINTR && wait_fd(fd, POLLOUT, timeout_ms) < 0)
			return -1;
	}
}

static int fd_close(void *ctx)
{
	int *fd = ctx;
	int r = *fd >= 0 ? close(*fd) : 0;
	*fd = -1;
	return r;
}

int io_write_all_fd(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

void io_init_fd(struct io *io, int fd, int timeout_ms)
{
	io->low_read = fd_read;
	io->low_write = fd_write;
	io->low_close = fd_close;
	io->ctx = &io->fd;
	io->fd = fd;
	io->notsock = 0;
	io->rcvtimeo_ms = 0;
	io->timeout_ms = timeout_ms;
	io->rpos = io->rlen = 0;
	io->wlen = 0;
}

/* Writes p whole through the low-level writer (each call within the stream's limit); *done
 * gets the bytes moved, also when it fails (errno; EPIPE for a write that moved nothing).
 * always_inline: into its two callers, which then need no *done in memory (-24 bytes). */
static inline __attribute__((always_inline)) int low_write_all(struct io *io, const void *p, size_t n, size_t *done)
{
	*done = 0;
	while (*done < n) {
		ssize_t r = io->low_write(io->ctx, (const char *)p + *done, n - *done, io->timeout_ms);
		if (r <= 0) {
			if (r == 0)
				errno = EPIPE;
			return -1;
		}
		*done += (size_t)r;
	}
	return 0;
}

int io_flush(struct io *io)
{
	size_t off;
	if (low_write_all(io, io->wbuf, io->wlen, &off) < 0) {
		/* keep what was not sent at the front, so the state stays consistent */
		memmove(io->wbuf, io->wbuf + off, io->wlen - off);
		io->wlen -= off;
		return -1;
	}
	io->wlen = 0;
	return 0;
}

int io_write_direct(struct io *io, const void *p, size_t n)
{
	size_t done;
	return io_flush(io) < 0 ? -1 : low_write_all(io, p, n, &done);
}

int io_write(struct io *io, const void *p, size_t n)
{
	const unsigned char *s = p;
	while (n) {
		if (io->wlen == IO_BUFSIZE && io_flush(io) < 0)
			return -1;
		size_t k = IO_BUFSIZE - io->wlen;
		if (k > n)
			k = n;
		memcpy(io->wbuf + io->wlen, s, k);
		io->wlen += k;
		s += k;
		n -= k;
	}
	return 0;
}

int io_puts(struct io *io, const char *s)
{
	return io_write(io, s, strlen(s));
}

/* Refills the read buffer within timeout_ms: 1 when bytes arrived, 0 at EOF, -1 on error. */
static int fill(struct io *io, int timeout_ms)
{
	ssize_t r = io->low_read(io->ctx, io->rbuf, IO_BUFSIZE, timeout_ms);
	if (r < 0)
		return -1;
	io->rpos = 0;
	io->rlen = (size_t)r;
	return r > 0;
}

ssize_t io_read(struct io *io, void *p, size_t n)
{
	/* what a line read left buffered first; else straight into the caller's buffer */
	if (io->rpos == io->rlen)
		return io->low_read(io->ctx, p, n, io->timeout_ms);
	size_t k = io->rlen - io->rpos < n ? io->rlen - io->rpos : n;
	memcpy(p, io->rbuf + io->rpos, k);
	io->rpos += k;
	return (ssize_t)k;
}

ssize_t io_getline(struct io *io, char *out, size_t size)
{
	size_t len = 0;
	int overlong = 0;
	/* timeout_ms bounds the whole line, not each read: a peer that trickles bytes (or floods
	 * a line that never ends) must not hold the reader past it */
	long long deadline = io->timeout_ms > 0 ? clock_mono_ms() + io->timeout_ms : 0;
	for (;;) {
		if (io->rpos == io->rlen) {
			int left = 0;
			if (deadline) {
				long long d = deadline - clock_mono_ms();
				if (d <= 0) {
					out[len] = 0;
					errno = ETIMEDOUT;
					return -1;
				}
				left = (int)d;
			}
			int r = fill(io, left);
			if (r < 0) {
				out[len] = 0;
				return -1;
			}
			if (r == 0)
				break;
		}
		unsigned char *b = io->rbuf + io->rpos;
		size_t avail = io->rlen - io->rpos;
		unsigned char *lf = memchr(b, '\n', avail);
		size_t take = lf ? (size_t)(lf - b) + 1 : avail;
		size_t room = size - 1 - len;
		size_t copy = take < room ? take : room;
		memcpy(out + len, b, copy);
		len += copy;
		if (copy < take)
			overlong = 1;
		io->rpos += take;
		if (lf)
			break;
	}
	out[len] = 0;
	if (overlong) {
		errno = EMSGSIZE;
		return -1;
	}
	return (ssize_t)len;
}

size_t io_pending(const struct io *io)
{
	return io->rlen - io->rpos;
}

void io_discard_input(struct io *io)
{
	io->rpos = io->rlen = 0;
}

int io_close(struct io *io)
{
	int r = 0;
	if (io->low_close)
		r = io->low_close(io->ctx);
	io->low_close = NULL;
	io->rpos = io->rlen = 0;
	io->wlen = 0;
	return r;
}
