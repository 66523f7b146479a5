/* spoolbox's small string functions for the static build, linked as objects like strstr.c so
 * that musl's are never pulled. musl's read a word at a time (strchrnul, stpcpy) or build a
 * 256-bit set of the accepted bytes (strspn, strcspn): fast on long strings, 0.9 KiB in all.
 * Every string spoolbox scans is short (a header, an address, a configuration word, PATH), so
 * these are the plain byte loops, with the same results for every input. */
#include <string.h>

char *strchrnul(const char *s, int c)
{
	while (*s && *s != (char)c)
		s++;
	return (char *)s;
}
/* musl's own callers (getenv, execvp, putenv, ...) call it by this name (STR: the unit test's
 * own_ name for it) */
#define STR_(x) #x
#define STR(x) STR_(x)
char *__strchrnul(const char *, int) __attribute__((alias(STR(strchrnul))));

char *strchr(const char *s, int c)
{
	s = strchrnul(s, c);
	return *s == (char)c ? (char *)s : NULL;
}

size_t strspn(const char *s, const char *accept)
{
	size_t n = 0;
	while (s[n] && strchr(accept, s[n]))
		n++;
	return n;
}

size_t strcspn(const char *s, const char *reject)
{
	size_t n = 0;
	while (*strchrnul(reject, s[n]) != s[n])
		n++;
	return n;
}

char *strcpy(char *restrict d, const char *restrict s)
{
	char *r = d;
	while ((*d++ = *s++))
		;
	return r;
}

/* musl's, without its locale argument: ASCII letters only, as in the C locale */
static int lower(int c)
{
	return (unsigned)c - 'A' < 26 ? c | 32 : c;
}

int strncasecmp(const char *_l, const char *_r, size_t n)
{
	const unsigned char *l = (const void *)_l, *r = (const void *)_r;
	if (!n--)
		return 0;
	for (; *l && *r && n && lower(*l) == lower(*r); l++, r++, n--)
		;
	return lower(*l) - lower(*r);
}

/* no string is SIZE_MAX long: the count never ends the loop */
int strcasecmp(const char *l, const char *r)
{
	return strncasecmp(l, r, (size_t)-1);
}
