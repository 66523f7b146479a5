/* Delivery results and the message copy with the local headers and mboxrd quoting (see
 * deliver.h). */
#include "deliver.h"
#include "fmt.h"
#include "io.h"
#include "util.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* dl_set: on x86-64 an entry into lib/fmt.c's shared variadic prologue (FMT_VA_ENTRY), which
 * calls dl_set_v with the va_list; elsewhere a C function */
__attribute__((used)) static void dl_set_v(struct dl_result *r, const char *code, const char *fmt, long d, va_list ap)
{
	(void)d;
	memcpy(&r->status, code, 7); /* status, then enh: "4.3.0" and its NUL */
	vsnprintf(r->text, sizeof r->text, fmt, ap);
}

FMT_VA_ENTRY(dl_set, 3, dl_set_v);
#if !FMT_VA_ASM
void dl_set(struct dl_result *r, const char *code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	dl_set_v(r, code, fmt, 0, ap);
	va_end(ap);
}
#endif

void dl_set_errno(struct dl_result *r, int err, const char *op, const char *path)
{
	dl_set(r, err == ENOSPC ? "d4.3.1" : err == EDQUOT ? "d4.2.2" : "d4.3.0", "%s %s: %s", op, path, strerror(err));
}

void dl_io(struct io *io, int fd, ssize_t (*w)(void *, const void *, size_t, int), void *ctx)
{
	io_init_fd(io, fd, 0);
	io->notsock = 1; /* a file or a pipe: write(), without send()'s ENOTSOCK first */
	if (w)
		io->low_write = w, io->ctx = ctx, io->low_close = NULL;
}

/* The output side of a copy: the caller's stream, with the first error kept (a later write
 * must not replace the errno that stopped the copy). */
struct out {
	struct io *io;
	int err;
};

/* Small pieces are buffered in the stream; a large one fills the buffer up first (never a
 * small write before a large one) and goes on straight from the copy's read buffer, so a large
 * message takes one write per read, two more per line that mboxrd quoting splits, and a small
 * message one write in all. */
static void put(struct out *o, const char *p, size_t n)
{
	struct io *io = o->io;
	size_t room = IO_BUFSIZE - io->wlen;
	if (o->err)
		return;
	if (n >= room && io->wlen) {
		if (io_write(io, p, room) < 0 || io_flush(io) < 0)
			goto fail;
		p += room, n -= room;
	}
	if (n && (n >= IO_BUFSIZE ? io_write_direct(io, p, n) : io_write(io, p, n)) < 0)
		goto fail;
	return;
fail:
	o->err = errno ? errno : EIO;
}

static void put_gt(struct out *o, long long n)
{
	while (n-- > 0)
		put(o, ">", 1);
}

/* A header value without control characters (an address cannot forge a header line). */
static void put_clean(struct out *o, const char *s)
{
	for (; *s; s++) {
		char c = (unsigned char)*s < 0x20 || *s == 0x7f ? '_' : *s;
		put(o, &c, 1);
	}
}

int dl_copy(const struct dl_msg *m, struct io *io, int flags, int *rd_fail)
{
	static const char from_[] = "From ";
	/* the caller's buffer when it keeps one across deliveries (an mmap and munmap pair each
	 * per copy otherwise: 64 KiB is past malloc's small sizes) */
	char *own = m->buf ? NULL : malloc(DL_COPY_BUF);
	char *inbuf = m->buf ? m->buf : own;
	struct out o = {io, 0};
	*rd_fail = 0;
	if (!inbuf) {
		errno = ENOMEM;
		*rd_fail = 1;
		return -1;
	}
	int mboxrd = flags & DL_MBOXRD;
	if (!(flags & DL_NO_RETURN_PATH)) {
		put(&o, "Return-Path: <", 14);
		put_clean(&o, m->sender);
		put(&o, ">\n", 2);
	}
	put(&o, "Delivered-To: ", 14);
	put_clean(&o, m->rcpt);
	put(&o, "\n", 1);
	/* mboxrd state: at the start of a line, count the '>' and match "From " before deciding
	 * whether the line needs one more '>'. The input is written in runs straight from inbuf;
	 * a line start still undecided when a read ends (held) is written from the counts. */
	int scan = 1, fpos = 0, held = 0;
	long long gt = 0;
	char last = '\n';
	long long left = m->size;
	off_t off = m->off;
	while (left > 0 && !o.err) {
		size_t want = left > DL_COPY_BUF ? DL_COPY_BUF : (size_t)left;
		ssize_t got = pread(m->fd, inbuf, want, off);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (got == 0)
				errno = EIO; /* the message file is shorter than its z record says */
			*rd_fail = 1;
			goto fail;
		}
		off += got;
		left -= got;
		last = inbuf[got - 1];
		const char *p = inbuf, *end = inbuf + got, *run = inbuf, *line = inbuf;
		while (mboxrd && p < end) {
			if (scan) {
				char c = *p;
				if (fpos == 0 && c == '>') {
					gt++, p++;
					continue;
				}
				int quote = c == from_[fpos];
				if (quote && (p++, ++fpos < 5))
					continue;
				if (held) { /* the line began in an earlier read: written from the counts */
					put_gt(&o, gt + quote);
					put(&o, from_, (size_t)fpos);
					run = p;
					held = 0;
				} else if (quote) {
					put(&o, run, (size_t)(line - run));
					put(&o, ">", 1);
					run = line;
				}
				scan = 0;
			}
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			p = nl ? nl + 1 : end;
			if (nl)
				scan = 1, gt = 0, fpos = 0, line = p;
		}
		/* the rest of the read, but an undecided line start */
		put(&o, run, (size_t)((mboxrd && scan && !held ? line : end) - run));
		if (mboxrd && scan)
			held = 1;
	}
	if (mboxrd) {
		if (scan) {
			put_gt(&o, gt);
			put(&o, from_, (size_t)fpos);
			if (gt || fpos)
				last = 'x';
		}
		/* the message ends with a newline, then the blank line that separates messages */
		if (last != '\n')
			put(&o, "\n", 1);
		put(&o, "\n", 1);
	}
	if (!o.err && io_flush(io) < 0)
		o.err = errno ? errno : EIO;
	if (o.err)
		goto fail;
	free(own);
	return 0;
fail:;
	int e = o.err && !*rd_fail ? o.err : errno;
	free(own);
	errno = e;
	return -1;
}

void dl_set_copy(struct dl_result *r, int e, int rd_fail, const char *path)
{
	/* "read message file: ..." (a read: never ENOSPC or EDQUOT, so 4.3.0) or "write PATH: ..." */
	dl_set_errno(r, e, rd_fail ? "read message" : "write", rd_fail ? "file" : path);
}

void dl_env_clean(char *s)
{
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#%+,-./:=@_^~", c)))
			*s = '_';
	}
}

int dl_pipe(int p[2])
{
	return (int)syscall(SYS_pipe2, p, (long)O_CLOEXEC);
}

int dl_reopen(int fd, const char *path, const struct stat *st, int any)
{
	char proc[32];
	struct stat st2;
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	int r = openat(AT_FDCWD, proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (r < 0 && (any || errno == ENOENT))
		r = openat(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (r >= 0 && (fstat(r, &st2) < 0 || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino)) {
		close(r);
		r = -2;
	}
	return r;
}

void dl_close_from(int from)
{
	/* the descriptor limit, as sysconf(_SC_OPEN_MAX) reads it (without musl's 1 KiB sysconf) */
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (long)rl.rlim_cur : 65536;
	for (int fd = from; fd < max; fd++)
		close(fd);
}
