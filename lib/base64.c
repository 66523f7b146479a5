/* Base64 encode/decode (RFC 4648 section 4) for SASL. Decoding is strict on purpose: a SASL
 * challenge is never wrapped or padded oddly, and rejecting junk beats guessing at it. */
#include "base64.h"
#include <stdint.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

ssize_t base64_encode(char *dst, size_t size, const void *src, size_t n)
{
	const unsigned char *s = src;
	if (n > (SIZE_MAX - 1) / 4 * 3 - 3 || size < BASE64_ENCLEN(n)) {
		if (size)
			dst[0] = 0;
		return -1;
	}
	size_t o = 0;
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)s[i + 1] << 8;
		if (i + 2 < n)
			v |= s[i + 2];
		dst[o++] = alphabet[v >> 18];
		dst[o++] = alphabet[(v >> 12) & 63];
		dst[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
		dst[o++] = i + 2 < n ? alphabet[v & 63] : '=';
	}
	dst[o] = 0;
	return (ssize_t)o;
}

static int value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

ssize_t base64_decode(void *dst, size_t size, const char *src, size_t n)
{
	unsigned char *d = dst;
	if (n % 4)
		return -1;
	size_t o = 0;
	for (size_t i = 0; i < n; i += 4) {
		int last = i + 4 == n;
		int v[4], pad = 0;
		for (int k = 0; k < 4; k++) {
			unsigned char c = (unsigned char)src[i + k];
			if (c == '=' && last && k >= 2) {
				v[k] = 0;
				pad++;
				continue;
			}
			if (pad) /* data after '=' */
				return -1;
			v[k] = value(c);
			if (v[k] < 0)
				return -1;
		}
		uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
		/* canonical: the bits that padding drops MUST be zero */
		if ((pad == 1 && (w & 0xff)) || (pad == 2 && (w & 0xffff)))
			return -1;
		size_t k = 3 - (size_t)pad;
		if (o + k > size)
			return -1;
		d[o++] = (unsigned char)(w >> 16);
		if (k > 1)
			d[o++] = (unsigned char)(w >> 8);
		if (k > 2)
			d[o++] = (unsigned char)w;
	}
	return (ssize_t)o;
}
