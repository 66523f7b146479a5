/* xtext (RFC 3461 4), the contract is in xtext.h. */
#include "xtext.h"
#include "spool.h"

static int xchar(unsigned char c)
{
	return c >= '!' && c <= '~' && c != '+' && c != '=';
}

int xtext_encode(const char *in, size_t n, char *out, size_t size)
{
	const char *hex = spool_b36; /* its first 16 are the hex digits: one copy */
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		if (xchar(c)) {
			if (o + 1 >= size)
				return -1;
			out[o++] = (char)c;
		} else {
			if (o + 3 >= size)
				return -1;
			out[o++] = '+';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (o >= size)
		return -1;
	out[o] = 0;
	return (int)o;
}

/* RFC 3461 4: hexchar is "+" and two of 0-9 A-F, upper case only. */
/* noinline: one copy, not one per caller (docs/size.md) */
__attribute__((noinline)) static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int xtext_decode(const char *in, size_t n, char *out, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c == '+') {
			if (i + 2 >= n)
				return -1;
			int h = hexval(in[i + 1]), l = hexval(in[i + 2]);
			if (h < 0 || l < 0)
				return -1;
			c = (unsigned char)(h * 16 + l);
			i += 2;
		} else if (!xchar(c)) {
			return -1;
		}
		if (o + 1 >= size)
			return -1;
		out[o++] = (char)c;
	}
	if (o >= size)
		return -1;
	out[o] = 0;
	return (int)o;
}
