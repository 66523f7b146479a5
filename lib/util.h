/* Small shared helpers: bounded strings, a length-limited growable buffer, and the one exit path.
 *
 * Contract: functions here never write past the size they are given. Those that can run out of
 * room say so in their return value; none of them exits, except die() and the x*() wrappers,
 * which are for one-shot applets only (lib/ code logs and returns a status instead). */
#ifndef SPOOLBOX_UTIL_H
#define SPOOLBOX_UTIL_H
#include <stdarg.h>
#include <stddef.h>
#include <stdnoreturn.h>
#include <time.h>
#include "config_default.h"
#include "printf_like.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Copies src into dst (size bytes, NUL included). Returns strlen(src); a result >= size means
 * the copy was truncated. */
size_t str_lcpy(char *dst, const char *src, size_t size);
/* snprintf that returns 0, or -1 when the output did not fit (dst is then still terminated). */
int str_fmt(char *dst, size_t size, const char *fmt, ...) PRINTF_LIKE(3, 4);
/* A table of texts by a key of 1..255 as one string: entries of a key byte and a NUL-terminated
 * text, then a 0 byte and the text for any other key ("\001one\0\002two\0\0other"): 8 bytes a
 * text less than a table of pointers, or a switch's. Returns key's text. */
const char *str_bykey(const char *tab, unsigned key);
/* 1 when s starts with prefix. */
int str_starts(const char *s, const char *prefix);
/* ASCII case-insensitive compare of at most n bytes (locale-free). */
int str_ncaseeq(const char *a, const char *b, size_t n);
int str_caseeq(const char *a, const char *b);

/* A growable byte buffer with a hard maximum: appending beyond max fails with -1 and leaves the
 * buffer as it was. The contents are always NUL-terminated (the NUL is not counted in len). */
struct buf {
	char *p;
	size_t len, cap, max;
};
void buf_init(struct buf *b, size_t max);
void buf_free(struct buf *b);
int buf_add(struct buf *b, const void *data, size_t n);
int buf_adds(struct buf *b, const char *s);
int buf_addc(struct buf *b, char c);
int buf_printf(struct buf *b, const char *fmt, ...) PRINTF_LIKE(2, 3);
void buf_reset(struct buf *b);

/* The one exit path of the program. die() logs "what: why" at error level and calls the exit
 * hook (exit() unless a test replaced it). */
extern void (*util_exit_hook)(int code);
noreturn void die(int code, const char *fmt, ...) PRINTF_LIKE(2, 3);
noreturn void util_exit(int code);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
char *xstrdup(const char *s);
struct tm;
/* asctime()'s layout without the year, "Thu Jan  1 00:00:00", by hand (strftime would pull 4 KiB
 * of libc in); str_fmt's result. */
int str_asctime(char *out, size_t size, const struct tm *tm);
/* t as civil time: local time, or UTC in a build without ENABLE_LOCALTIME (which keeps musl's
 * time-zone code out). NULL when t cannot be represented. */
static inline struct tm *civil_time(const time_t *t, struct tm *tm)
{
	return ENABLE_LOCALTIME ? localtime_r(t, tm) : gmtime_r(t, tm);
}
#endif
