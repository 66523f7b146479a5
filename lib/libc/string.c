/* spoolbox's small string functions for the static build, linked as objects like strstr.c so
 * that musl's are never pulled. musl's read a word at a time (strchrnul, stpcpy) or build a
 * 256-bit set of the accepted bytes (strspn, strcspn): fast on long strings, 0.9 KiB in all.
 * Every string spoolbox scans is short (a header, an address, a configuration word, PATH), so
 * these are the plain byte loops, with the same results for every input. */
#include <stdint.h>
#include <stdlib.h>
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

char *stpcpy(char *restrict d, const char *restrict s)
{
	while ((*d = *s++))
		d++;
	return d;
}

char *strcpy(char *restrict d, const char *restrict s)
{
	stpcpy(d, s);
	return d;
}

size_t strlen(const char *s)
{
	const char *e = s;
	while (*e)
		e++;
	return (size_t)(e - s);
}

void *memchr(const void *s, int c, size_t n)
{
	for (const unsigned char *p = s; n; n--, p++)
		if (*p == (unsigned char)c)
			return (void *)p;
	return NULL;
}

void *memrchr(const void *s, int c, size_t n)
{
	const unsigned char *p = s;
	while (n--)
		if (p[n] == (unsigned char)c)
			return (void *)(p + n);
	return NULL;
}

/* musl's: the terminator is found too when c is 0 */
char *strrchr(const char *s, int c)
{
	return memrchr(s, c, strlen(s) + 1);
}

size_t strnlen(const char *s, size_t n)
{
	const char *e = memchr(s, 0, n);
	return e ? (size_t)(e - s) : n;
}

int memcmp(const void *vl, const void *vr, size_t n)
{
	const unsigned char *l = vl, *r = vr;
	for (; n && *l == *r; n--, l++, r++)
		;
	return n ? *l - *r : 0;
}

/* musl's */
int strncmp(const char *_l, const char *_r, size_t n)
{
	const unsigned char *l = (const void *)_l, *r = (const void *)_r;
	if (!n--)
		return 0;
	for (; *l && *r && n && *l == *r; l++, r++, n--)
		;
	return *l - *r;
}

/* no string is SIZE_MAX long: the count never ends the loop (GCC warns of the bound all the
 * same, knowing strncmp) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overread"
int strcmp(const char *l, const char *r)
{
	return strncmp(l, r, (size_t)-1);
}
#pragma GCC diagnostic pop

char *strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = malloc(n);
	return d ? memcpy(d, s, n) : NULL;
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

/* musl's memset for x86-64 is 0.2 KiB of assembly (stores by size class), its memcpy aligns the
 * destination and moves 8 bytes a step; the string instructions do the same (the direction flag
 * is clear at every call, as the ABI says), and processors with fast string operations run them
 * at memory speed for the large buffers. memmove copies backwards, as musl's, only when the
 * destination starts inside the source (memmove.s comes with memcpy.s, so the two go together).
 * The other architectures keep musl's. */
#if defined(__x86_64__)
void *memset(void *d, int c, size_t n)
{
	void *r = d;
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
	return r;
}

void *memcpy(void *restrict d, const void *restrict s, size_t n)
{
	void *r = d;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	return r;
}

void *memmove(void *d, const void *s, size_t n)
{
	if ((uintptr_t)d - (uintptr_t)s >= n)
		return memcpy(d, s, n);
	char *e = (char *)d + n - 1;
	const char *f = (const char *)s + n - 1;
	__asm__ volatile("std\n\trep movsb\n\tcld" : "+D"(e), "+S"(f), "+c"(n) : : "memory");
	return d;
}
#endif
