/* spoolbox's strstr for the static musl build, linked as an object like vfprintf.c: the plain
 * loop in place of musl's Two-Way search (1.3 KiB). Every caller here searches a short string
 * (a configuration value, a diagnostic) for a word, where Two-Way's linear bound buys nothing. */
#include <string.h>

char *strstr(const char *h, const char *n)
{
	size_t len = strlen(n);
	if (!len)
		return (char *)h;
	for (; *h; h++)
		if (*h == *n && !strncmp(h, n, len))
			return (char *)h;
	return NULL;
}
