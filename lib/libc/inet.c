/* spoolbox's inet_pton and inet_ntop for the static build, linked as objects like strstr.c so
 * that musl's are never pulled (1.6 KiB there, compiled -O2 with a stack protector). inet_pton is
 * musl 1.2.3's own code (MIT licence, Copyright 2005-2020 Rich Felker, et al.), built with our
 * size flags. inet_ntop prints the same text as musl's, "%x" groups and the dotted form of an
 * IPv4-mapped address, then the same replacement of the longest /(^0|:)[:0]{2,}/ run by "::",
 * but with two small printers instead of snprintf's ten arguments. Unlike musl's, a too small
 * buffer gets nothing written for AF_INET either (ENOSPC as before; every caller here has room
 * for any address, and prints "?" on failure). */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

static int hexval(unsigned c)
{
	if (c - '0' < 10)
		return c - '0';
	c |= 32;
	if (c - 'a' < 6)
		return c - 'a' + 10;
	return -1;
}

int inet_pton(int af, const char *restrict s, void *restrict a0)
{
	uint16_t ip[8];
	unsigned char *a = a0;
	int i, j, v, d, brk = -1, need_v4 = 0;

	if (af == AF_INET) {
		for (i = 0; i < 4; i++) {
			for (v = j = 0; j < 3 && (unsigned)s[j] - '0' < 10; j++)
				v = 10 * v + s[j] - '0';
			if (j == 0 || (j > 1 && s[0] == '0') || v > 255)
				return 0;
			a[i] = (unsigned char)v;
			if (s[j] == 0 && i == 3)
				return 1;
			if (s[j] != '.')
				return 0;
			s += j + 1;
		}
		return 0;
	} else if (af != AF_INET6) {
		errno = EAFNOSUPPORT;
		return -1;
	}

	if (*s == ':' && *++s != ':')
		return 0;

	for (i = 0;; i++) {
		if (s[0] == ':' && brk < 0) {
			brk = i;
			ip[i & 7] = 0;
			if (!*++s)
				break;
			if (i == 7)
				return 0;
			continue;
		}
		for (v = j = 0; j < 4 && (d = hexval((unsigned char)s[j])) >= 0; j++)
			v = 16 * v + d;
		if (j == 0)
			return 0;
		ip[i & 7] = (uint16_t)v;
		if (!s[j] && (brk >= 0 || i == 7))
			break;
		if (i == 7)
			return 0;
		if (s[j] != ':') {
			if (s[j] != '.' || (i < 6 && brk < 0))
				return 0;
			need_v4 = 1;
			i++;
			break;
		}
		s += j + 1;
	}
	if (brk >= 0) {
		memmove(ip + brk + 7 - i, ip + brk, 2 * (size_t)(i + 1 - brk));
		for (j = 0; j < 7 - i; j++)
			ip[brk + j] = 0;
	}
	for (j = 0; j < 8; j++) {
		*a++ = (unsigned char)(ip[j] >> 8);
		*a++ = (unsigned char)ip[j];
	}
	if (need_v4 && inet_pton(AF_INET, (void *)s, a - 4) <= 0)
		return 0;
	return 1;
}

/* v in base (10 or 16), no leading zeros (the higher digits first, by recursion), then sep */
__attribute__((noinline)) static char *num(char *p, unsigned v, unsigned base, char sep)
{
	if (v >= base)
		p = num(p, v / base, base, 0) - 1;
	p[0] = "0123456789abcdef"[v % base];
	p[1] = sep;
	return p + 2;
}

const char *inet_ntop(int af, const void *restrict a0, char *restrict s, socklen_t l)
{
	const unsigned char *a = a0;
	char buf[48], *p = buf; /* "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255" */
	int i, j, max, best, v4 = 4;

	if (af == AF_INET6) {
		v4 = memcmp(a, "\0\0\0\0\0\0\0\0\0\0\377\377", 12) ? 0 : 4;
		for (i = 0; i < 16 - v4; i += 2)
			p = num(p, 256u * a[i] + a[i + 1], 16, ':');
	} else if (af != AF_INET) {
		errno = EAFNOSUPPORT;
		return NULL;
	}
	for (i = 16 - v4; i < 16; i++)
		p = num(p, a[i - 12 * (af == AF_INET)], 10, '.');
	p[-1] = 0;
	if (af == AF_INET6) {
		/* Replace longest /(^0|:)[:0]{2,}/ with "::" */
		for (i = best = 0, max = 2; buf[i]; i++) {
			if (i && buf[i] != ':')
				continue;
			j = (int)strspn(buf + i, ":0");
			if (j > max)
				best = i, max = j;
		}
		if (max > 3) {
			buf[best] = buf[best + 1] = ':';
			memmove(buf + best + 2, buf + best + max, (size_t)(i - best - max + 1));
		}
	}
	if (strlen(buf) < l)
		return strcpy(s, buf);
	errno = ENOSPC;
	return NULL;
}
