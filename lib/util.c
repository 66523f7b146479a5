/* Bounded string helpers, the limited growable buffer and the single exit path (see util.h). */
#include "util.h"
#include "clock.h"
#include "fmt.h"
#include "log.h"
#include "sysexits.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t str_lcpy(char *dst, const char *src, size_t size)
{
	size_t n = strlen(src);
	if (size) {
		size_t c = n < size - 1 ? n : size - 1;
		memcpy(dst, src, c);
		dst[c] = 0;
	}
	return n;
}

/* str_fmt, buf_printf and die: on x86-64 entries into lib/fmt.c's shared variadic prologue
 * (FMT_VA_ENTRY), which calls these with the va_list; elsewhere C functions */
__attribute__((used)) static int str_fmt_v(char *dst, size_t size, const char *fmt, long d, va_list ap)
{
	int n = vsnprintf(dst, size, fmt, ap);
	return (n < 0 || (size_t)n >= size) ? -1 : 0;
}

FMT_VA_ENTRY(str_fmt, 3, str_fmt_v);
#if !FMT_VA_ASM
int str_fmt(char *dst, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = str_fmt_v(dst, size, fmt, 0, ap);
	va_end(ap);
	return n;
}
#endif

int str_starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

int str_ncaseeq(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
			return 0;
		if (!a[i])
			return 1;
	}
	return 1;
}

int str_caseeq(const char *a, const char *b)
{
	return str_ncaseeq(a, b, (size_t)-1);
}

void buf_init(struct buf *b, size_t max)
{
	b->p = NULL;
	b->len = b->cap = 0;
	b->max = max;
}

void buf_free(struct buf *b)
{
	free(b->p);
	buf_init(b, b->max);
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = 0;
}

/* Room for n more bytes and the NUL; 0 or -1 (too much, or no memory). */
static int buf_room(struct buf *b, size_t n)
{
	if (n > b->max || b->len > b->max - n)
		return -1;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p)
			return -1;
		b->p = p;
		b->cap = cap;
	}
	return 0;
}

int buf_add(struct buf *b, const void *data, size_t n)
{
	if (buf_room(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->p + b->len, data, n);
	b->len += n;
	b->p[b->len] = 0;
	return 0;
}

int buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_addc(struct buf *b, char c)
{
	return buf_add(b, &c, 1);
}

static int buf_sink(void *b, const char *s, size_t n)
{
	return buf_add(b, s, n);
}

__attribute__((used)) static int buf_printf_v(struct buf *b, const char *fmt, long c, long d, va_list ap)
{
	/* one pass, appended piece by piece; a piece that does not fit leaves the buffer as it was */
	size_t len = b->len;
	if (fmt_vformat(buf_sink, b, fmt, ap) >= 0)
		return 0;
	b->len = len;
	if (b->p)
		b->p[len] = 0;
	return -1;
}

FMT_VA_ENTRY(buf_printf, 2, buf_printf_v);
#if !FMT_VA_ASM
int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = buf_printf_v(b, fmt, 0, 0, ap);
	va_end(ap);
	return n;
}
#endif

static void default_exit(int code)
{
	exit(code);
}

void (*util_exit_hook)(int code) = default_exit;

noreturn void util_exit(int code)
{
	util_exit_hook(code);
	exit(code); /* a hook that returns must not let the caller continue */
}

__attribute__((used)) static noreturn void die_v(int code, const char *fmt, long c, long d, va_list ap)
{
	log_vmsg(LOG_ERR, NULL, fmt, ap);
	util_exit(code);
}

FMT_VA_ENTRY(die, 2, die_v);
#if !FMT_VA_ASM
noreturn void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	die_v(code, fmt, 0, 0, ap);
}
#endif

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die(EX_OSERR, "out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die(EX_OSERR, "out of memory (%zu x %zu bytes)", n, size);
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

int str_asctime(char *out, size_t size, const struct tm *tm)
{
	return str_fmt(out, size, "%.3s %.3s %2d %02d:%02d:%02d", clock_days + 3 * tm->tm_wday,
	               clock_months + 3 * tm->tm_mon, tm->tm_mday, tm->tm_hour, tm->tm_min, tm->tm_sec);
}

const char *str_bykey(const char *tab, unsigned key)
{
	while (*tab && (unsigned char)*tab != key)
		tab += strlen(tab) + 1;
	return tab + 1;
}
