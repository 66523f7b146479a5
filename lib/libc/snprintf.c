/* spoolbox's snprintf and vsnprintf for the static musl build, linked as objects like
 * vfprintf.c: straight into lib/fmt.c's buffer sink, without musl's string-stream FILE
 * (vsnprintf.o, 0.5 KiB) that would end in our vfprintf anyway. */
#include "fmt.h"
#include <stdio.h>

int vsnprintf(char *restrict buf, size_t size, const char *restrict fmt, va_list ap)
{
	return fmt_vsnprintf(buf, size, fmt, ap);
}

int snprintf(char *restrict buf, size_t size, const char *restrict fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = fmt_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
