/* Fuzz target: lib/libc/strtol.c, lib/libc/strstr.c and lib/fmt.c (what the static build uses in
 * place of musl's) against glibc's functions on the same input, aborting on any difference: the
 * input is a number to parse in several bases, a haystack and needle split at the first byte
 * 0x01, and a string to format with widths and precisions. */
#include "fmt.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/libc_own.h"

static void same_fmt(const char *fmt, ...)
{
	char a[256], b[256];
	va_list ap, aq;
	va_start(ap, fmt);
	va_copy(aq, ap);
	int na = fmt_vsnprintf(a, sizeof a, fmt, ap);
	int nb = vsnprintf(b, sizeof b, fmt, aq);
	va_end(aq);
	va_end(ap);
	if (na != nb || strcmp(a, b))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char s[512];
	if (size >= sizeof s)
		size = sizeof s - 1;
	memcpy(s, data, size);
	s[size] = 0;
	static const int bases[] = {0, 2, 8, 10, 16, 36};
	for (size_t i = 0; i < sizeof bases / sizeof *bases; i++) {
		char *e1, *e2;
		errno = 0;
		long long a = own_strtoll(s, &e1, bases[i]);
		int x1 = errno;
		errno = 0;
		long long b = strtoll(s, &e2, bases[i]);
		if (a != b || e1 != e2 || x1 != errno)
			abort();
		errno = 0;
		unsigned long long ua = own_strtoull(s, &e1, bases[i]);
		x1 = errno;
		errno = 0;
		unsigned long long ub = strtoull(s, &e2, bases[i]);
		if (ua != ub || e1 != e2 || x1 != errno)
			abort();
	}
	char *cut = strchr(s, 1);
	const char *needle = cut ? cut + 1 : "";
	if (cut)
		*cut = 0;
	const char *h1 = own_strstr(s, needle), *h2 = strstr(s, needle);
	if (h1 != h2)
		abort();
	int w = size ? data[0] % 40 : 0, p = size > 1 ? data[1] % 40 : 0;
	same_fmt("[%s|%*s|%-*s|%.*s|%*.*s]", s, w, needle, w, s, p, s, w, p, needle);
	long long n = own_strtoll(s, NULL, 0);
	same_fmt("%lld %llx %llo %+d %05d %-7u %.3lld %c%%", n, (unsigned long long)n, (unsigned long long)n, (int)n, (int)n,
	         (unsigned)n, n, (int)(unsigned char)(size ? data[0] | 1 : 'x'));
	return 0;
}
