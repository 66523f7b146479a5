/* Delivery results and the message copy with the local headers and mboxrd quoting (see
 * deliver.h). */
#include "deliver.h"
#include "io.h"
#include "util.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

void dl_set(struct dl_result *r, char status, const char *enh, const char *fmt, ...)
{
	r->status = status;
	str_lcpy(r->enh, enh, sizeof r->enh);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof r->text, fmt, ap);
	va_end(ap);
}

void dl_set_errno(struct dl_result *r, int err, const char *op, const char *path)
{
	const char *enh = err == ENOSPC ? "4.3.1" : err == EDQUOT ? "4.2.2" : "4.3.0";
	dl_set(r, DL_DEFER, enh, "%s %s: %s", op, path, strerror(err));
}

int dl_write_fd(void *ctx, const void *p, size_t n)
{
	return io_write_all_fd(*(int *)ctx, p, n);
}

/* The output side of a copy: a buffer in front of the writer. */
struct out {
	dl_write_fn *w;
	void *ctx;
	char *buf;
	size_t len;
	int err;
};

static int out_flush(struct out *o)
{
	if (o->len && !o->err && o->w(o->ctx, o->buf, o->len) < 0)
		o->err = errno ? errno : EIO;
	o->len = 0;
	return o->err ? -1 : 0;
}

static int out_add(struct out *o, const char *p, size_t n)
{
	while (n) {
		if (o->len == DL_COPY_BUF && out_flush(o) < 0)
			return -1;
		size_t k = DL_COPY_BUF - o->len;
		if (k > n)
			k = n;
		memcpy(o->buf + o->len, p, k);
		o->len += k;
		p += k;
		n -= k;
	}
	return o->err ? -1 : 0;
}

static int out_gt(struct out *o, long long n)
{
	while (n-- > 0)
		if (out_add(o, ">", 1) < 0)
			return -1;
	return 0;
}

/* A header value without control characters (an address cannot forge a header line). */
static int out_clean(struct out *o, const char *s)
{
	for (; *s; s++) {
		char c = (unsigned char)*s < 0x20 || *s == 0x7f ? '_' : *s;
		if (out_add(o, &c, 1) < 0)
			return -1;
	}
	return 0;
}

int dl_copy(const struct dl_msg *m, dl_write_fn *w, void *ctx, int flags, int *rd_fail)
{
	static const char from_[] = "From ";
	/* the caller's buffers when it keeps some across deliveries (an mmap and munmap pair each
	 * per copy otherwise: 64 KiB is past malloc's small sizes) */
	char *own = m->buf ? NULL : malloc(2 * (size_t)DL_COPY_BUF);
	char *inbuf = m->buf ? m->buf : own, *obuf = inbuf ? inbuf + DL_COPY_BUF : NULL;
	struct out o = {w, ctx, obuf, 0, 0};
	*rd_fail = 0;
	if (!inbuf) {
		errno = ENOMEM;
		*rd_fail = 1;
		return -1;
	}
	int mboxrd = flags & DL_MBOXRD;
	if (!(flags & DL_NO_RETURN_PATH)) {
		out_add(&o, "Return-Path: <", 14);
		out_clean(&o, m->sender);
		out_add(&o, ">\n", 2);
	}
	out_add(&o, "Delivered-To: ", 14);
	out_clean(&o, m->rcpt);
	out_add(&o, "\n", 1);
	/* mboxrd state: at the start of a line, count the '>' and match "From " before deciding
	 * whether the line needs one more '>'; nothing of the line is written until then. */
	int scan = 1, fpos = 0;
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
		if (!mboxrd) {
			out_add(&o, inbuf, (size_t)got);
			continue;
		}
		const char *p = inbuf, *end = inbuf + got;
		while (p < end) {
			if (scan) {
				char c = *p;
				if (fpos == 0 && c == '>') {
					gt++, p++;
					continue;
				}
				if (c == from_[fpos]) {
					p++;
					if (++fpos == 5) {
						out_gt(&o, gt + 1);
						out_add(&o, from_, 5);
						scan = 0;
					}
					continue;
				}
				out_gt(&o, gt);
				out_add(&o, from_, (size_t)fpos);
				scan = 0;
			}
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			const char *stop = nl ? nl + 1 : end;
			out_add(&o, p, (size_t)(stop - p));
			p = stop;
			if (nl)
				scan = 1, gt = 0, fpos = 0;
		}
	}
	if (mboxrd) {
		if (scan) {
			out_gt(&o, gt);
			out_add(&o, from_, (size_t)fpos);
			if (gt || fpos)
				last = 'x';
		}
		/* the message ends with a newline, then the blank line that separates messages */
		if (last != '\n')
			out_add(&o, "\n", 1);
		out_add(&o, "\n", 1);
	}
	if (out_flush(&o) < 0)
		goto fail;
	free(own);
	return 0;
fail:;
	int e = o.err && !*rd_fail ? o.err : errno;
	free(own);
	errno = e;
	return -1;
}

void dl_env_clean(char *s)
{
	for (; *s; s++) {
		char c = *s;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#%+,-./:=@_^~", c)))
			*s = '_';
	}
}

long long dl_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void dl_close_from(int from)
{
	/* the descriptor limit, as sysconf(_SC_OPEN_MAX) reads it (without musl's 1 KiB sysconf) */
	struct rlimit rl;
	long max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (long)rl.rlim_cur : 65536;
	for (int fd = from; fd < max; fd++)
		close(fd);
}
