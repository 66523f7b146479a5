/* spoolbox's strtol family for the static musl build, linked as an object like vfprintf.c: musl's
 * reads through its scanf machinery (intscan, shgetc: 2.7 KiB); this is the C standard's
 * contract in one loop. Leading white space, a sign, "0x" for base 16 or 0, "0" for octal with
 * base 0; *end after the last digit (nptr when there is none); out of range: the nearest limit
 * and ERANGE; a base outside 2..36: 0 and EINVAL. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>

static int digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'z' ? c - 'a' + 10 : c >= 'A' && c <= 'Z' ? c - 'A' + 10 : 99;
}

/* the magnitude, *neg for a minus sign, *ovf when it does not fit an unsigned long long */
static unsigned long long scan(const char *s, char **end, int base, int *neg, int *ovf)
{
	const char *p = s;
	unsigned long long v = 0;
	int any = 0;
	*neg = *ovf = 0;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (*p == '+' || *p == '-')
		*neg = *p++ == '-';
	if ((base == 0 || base == 16) && p[0] == '0' && (p[1] | 32) == 'x' && digit(p[2]) < 16) {
		p += 2;
		base = 16;
	} else if (base == 0) {
		base = *p == '0' ? 8 : 10;
	}
	if (base < 2 || base > 36) {
		errno = EINVAL;
		p = s;
	} else {
		for (int d; (d = digit(*p)) < base; p++, any = 1) {
			if (v > (ULLONG_MAX - (unsigned)d) / (unsigned)base)
				*ovf = 1;
			v = v * (unsigned)base + (unsigned)d;
		}
	}
	if (end)
		*end = (char *)(any ? p : s);
	return v;
}

static long long to_signed(const char *s, char **end, int base, long long max)
{
	int neg, ovf;
	unsigned long long v = scan(s, end, base, &neg, &ovf);
	if (ovf || v > (unsigned long long)max + (unsigned)neg) {
		errno = ERANGE;
		return neg ? -max - 1 : max;
	}
	return neg ? (long long)(0 - v) : (long long)v;
}

static unsigned long long to_unsigned(const char *s, char **end, int base, unsigned long long max)
{
	int neg, ovf;
	unsigned long long v = scan(s, end, base, &neg, &ovf);
	if (ovf || v > max) {
		errno = ERANGE;
		return max;
	}
	return (neg ? 0 - v : v) & max;
}

long strtol(const char *restrict s, char **restrict end, int base)
{
	return (long)to_signed(s, end, base, LONG_MAX);
}

long long strtoll(const char *restrict s, char **restrict end, int base)
{
	return to_signed(s, end, base, LLONG_MAX);
}

unsigned long strtoul(const char *restrict s, char **restrict end, int base)
{
	return (unsigned long)to_unsigned(s, end, base, ULONG_MAX);
}

unsigned long long strtoull(const char *restrict s, char **restrict end, int base)
{
	return to_unsigned(s, end, base, ULLONG_MAX);
}

intmax_t strtoimax(const char *restrict s, char **restrict end, int base)
{
	return to_signed(s, end, base, INTMAX_MAX);
}

uintmax_t strtoumax(const char *restrict s, char **restrict end, int base)
{
	return to_unsigned(s, end, base, UINTMAX_MAX);
}
