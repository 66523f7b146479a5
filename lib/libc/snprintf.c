/* spoolbox's snprintf and vsnprintf for the static musl build, linked as objects like
 * vfprintf.c: straight into lib/fmt.c's buffer sink, without musl's string-stream FILE
 * (vsnprintf.o, 0.5 KiB) that would end in our vfprintf anyway. */
#include "fmt.h"
#include <stdio.h>

int vsnprintf(char *restrict buf, size_t size, const char *restrict fmt, va_list ap)
{
	return fmt_vsnprintf(buf, size, fmt, ap);
}

/* on x86-64 an entry into lib/fmt.c's shared variadic prologue (FMT_VA_ENTRY) */
__attribute__((used)) static int snprintf_v(char *buf, size_t size, const char *fmt, long d, va_list ap)
{
	return fmt_vsnprintf(buf, size, fmt, ap);
}

FMT_VA_ENTRY(snprintf, 3, snprintf_v);
#if !FMT_VA_ASM
int snprintf(char *restrict buf, size_t size, const char *restrict fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = snprintf_v(buf, size, fmt, 0, ap);
	va_end(ap);
	return n;
}
#endif
