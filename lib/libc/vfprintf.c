/* spoolbox's vfprintf for the static musl build (the Makefile links it as an object, so musl's
 * own vfprintf.o is never pulled from libc.a): musl's snprintf, fprintf, printf, dprintf and
 * their v-forms all end here, and so print with lib/fmt.c. Saves about 10 KiB (docs/size.md).
 * Output goes through fwrite in pieces of up to 512 bytes, so an unbuffered stream (stderr,
 * dprintf's descriptor) gets one write per line as with musl's own; snprintf's string stream
 * takes the pieces as they come. Not linked in the sanitizer (glibc) build. */
#include "fmt.h"
#include <stdio.h>
#include <string.h>

struct fsink {
	FILE *f;
	size_t n;
	char buf[512];
};

static int fsink_flush(struct fsink *s)
{
	size_t n = s->n;
	s->n = 0;
	return n && fwrite(s->buf, 1, n, s->f) != n ? -1 : 0;
}

static int fsink_put(void *ctx, const char *p, size_t n)
{
	struct fsink *s = ctx;
	int r = 0;
	while (n) {
		if (s->n == sizeof s->buf && fsink_flush(s) < 0)
			r = -1;
		size_t k = sizeof s->buf - s->n < n ? sizeof s->buf - s->n : n;
		memcpy(s->buf + s->n, p, k);
		s->n += k;
		p += k;
		n -= k;
	}
	return r;
}

int vfprintf(FILE *restrict f, const char *restrict fmt, va_list ap)
{
	struct fsink s;
	s.f = f;
	s.n = 0;
	int n = fmt_vformat(fsink_put, &s, fmt, ap);
	return fsink_flush(&s) < 0 ? -1 : n;
}
