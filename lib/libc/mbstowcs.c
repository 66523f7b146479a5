/* spoolbox's mbstowcs for the static musl build, linked as an object like vfprintf.c: musl's
 * getaddrinfo calls mbstowcs(0, name, 0) to check a host name, which pulls in the UTF-8 decoder
 * (1.1 KiB). spoolbox never calls setlocale, so the C locale is in force, where musl maps each
 * byte to one wide character (bytes 0x80-0xff to 0xdf80-0xdfff) and nothing is invalid: this is
 * that mapping. */
#include <stdlib.h>
#include <string.h>

size_t mbstowcs(wchar_t *restrict ws, const char *restrict s, size_t wn)
{
	if (!ws)
		return strlen(s);
	size_t n = 0;
	for (; n < wn; n++) {
		unsigned char c = (unsigned char)s[n];
		ws[n] = c < 0x80 ? c : 0xdf00 | c;
		if (!c)
			break;
	}
	return n;
}
