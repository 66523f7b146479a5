/* Debian's libbearssl.a is built with _FORTIFY_SOURCE and calls glibc's checked memory
 * functions, which musl does not have. These provide them, with the same bounds check:
 * a copy larger than the destination object aborts, as glibc's would. Not built with glibc. */
#ifndef __GLIBC__
#include <stddef.h>
#include <string.h>

void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memmove_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memset_chk(void *dst, int c, size_t n, size_t dstlen);

void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen)
{
	if (n > dstlen)
		__builtin_trap();
	return memcpy(dst, src, n);
}

void *__memmove_chk(void *dst, const void *src, size_t n, size_t dstlen)
{
	if (n > dstlen)
		__builtin_trap();
	return memmove(dst, src, n);
}

void *__memset_chk(void *dst, int c, size_t n, size_t dstlen)
{
	if (n > dstlen)
		__builtin_trap();
	return memset(dst, c, n);
}
#else
typedef int fortify_unused_on_glibc;
#endif
