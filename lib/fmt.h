/* A small printf formatter: the conversions spoolbox and musl's own callers use (d i u o x X c s
 * p %, f with a precision), the flags "-+ #0", width and precision (also '*'), and the length
 * modifiers hh h l ll z j t. %n, wide characters and %e/%g/%a are not supported: such a
 * conversion is copied to the output as written, and %e/%g/%a print as %f.
 *
 * The static build links lib/libc/vfprintf.c, which makes this the vfprintf under musl's whole
 * printf family (snprintf, fprintf, dprintf, ...): musl's own is 10 KiB, mostly long-double
 * floating point that nothing here prints (docs/size.md). */
#ifndef SPOOLBOX_FMT_H
#define SPOOLBOX_FMT_H
#include <stdarg.h>
#include <stddef.h>

/* Receives the output in pieces; returns 0, or -1 to record an error (the formatting goes on,
 * fmt_vformat returns -1). */
typedef int (*fmt_sink)(void *ctx, const char *s, size_t n);

/* Formats fmt with ap into sink: the number of bytes produced, or -1 after a sink error. */
int fmt_vformat(fmt_sink sink, void *ctx, const char *fmt, va_list ap);
/* vsnprintf's contract: at most size-1 bytes and a NUL into buf (nothing when size is 0); the
 * length the whole output has. */
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
#endif
