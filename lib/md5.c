/* MD5 (RFC 1321) and HMAC-MD5 (RFC 2104), only for SASL CRAM-MD5; see md5.h for why spoolbox
 * has its own. Straightforward, table-driven, little-endian by explicit byte handling. */
#include "md5.h"
#include <string.h>

static const uint32_t K[64] = {
	0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
	0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
	0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
	0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
	0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
	0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
	0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
	0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
};
static const unsigned char R[16] = {7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21};

static void block(uint32_t h[4], const unsigned char *p)
{
	uint32_t x[16];
	for (int i = 0; i < 16; i++)
		x[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
		       (uint32_t)p[4 * i + 3] << 24;
	uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
	for (int i = 0; i < 64; i++) {
		uint32_t f;
		int g, round = i / 16;
		if (round == 0) {
			f = (b & c) | (~b & d);
			g = i;
		} else if (round == 1) {
			f = (d & b) | (~d & c);
			g = (5 * i + 1) & 15;
		} else if (round == 2) {
			f = b ^ c ^ d;
			g = (3 * i + 5) & 15;
		} else {
			f = c ^ (b | ~d);
			g = (7 * i) & 15;
		}
		uint32_t t = a + f + K[i] + x[g];
		int s = R[round * 4 + (i & 3)];
		a = d;
		d = c;
		c = b;
		b += (t << s) | (t >> (32 - s));
	}
	h[0] += a;
	h[1] += b;
	h[2] += c;
	h[3] += d;
}

void md5_init(struct md5 *m)
{
	m->h[0] = 0x67452301;
	m->h[1] = 0xefcdab89;
	m->h[2] = 0x98badcfe;
	m->h[3] = 0x10325476;
	m->len = 0;
}

void md5_update(struct md5 *m, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t have = (size_t)(m->len & 63);
	m->len += n;
	if (have) {
		size_t k = 64 - have < n ? 64 - have : n;
		memcpy(m->buf + have, s, k);
		s += k;
		n -= k;
		if (have + k < 64)
			return;
		block(m->h, m->buf);
	}
	for (; n >= 64; s += 64, n -= 64)
		block(m->h, s);
	memcpy(m->buf, s, n);
}

void md5_final(struct md5 *m, unsigned char out[MD5_LEN])
{
	/* 0x80, zeros to 56 bytes past a block's start, then the length in bits (little-endian):
	 * one update of at most 72 bytes */
	unsigned char pad[72] = {0x80};
	uint64_t bits = m->len * 8;
	size_t have = (size_t)(m->len & 63);
	size_t padlen = have < 56 ? 56 - have : 120 - have;
	for (int i = 0; i < 8; i++)
		pad[padlen + i] = (unsigned char)(bits >> (8 * i));
	md5_update(m, pad, padlen + 8);
	for (int i = 0; i < 4; i++)
		for (int k = 0; k < 4; k++)
			out[4 * i + k] = (unsigned char)(m->h[i] >> (8 * k));
	memset(m, 0, sizeof *m);
}

/* MD5(pad || msg) with pad the 64 key bytes k XOR x (x 0: the key itself), the step HMAC takes
 * twice. */
static void md5_padded(const unsigned char k[64], unsigned char x, const void *msg, size_t n, unsigned char out[MD5_LEN])
{
	unsigned char pad[64];
	struct md5 m;
	for (int i = 0; i < 64; i++)
		pad[i] = k[i] ^ x;
	md5_init(&m);
	md5_update(&m, pad, x ? 64 : 0);
	md5_update(&m, msg, n);
	md5_final(&m, out);
	explicit_bzero(pad, sizeof pad);
}

void hmac_md5(const void *key, size_t keylen, const void *msg, size_t n, unsigned char out[MD5_LEN])
{
	unsigned char k[64] = {0}, inner[MD5_LEN];
	if (keylen > 64)
		md5_padded(k, 0, key, keylen, k); /* a long key is replaced by its hash */
	else
		memcpy(k, key, keylen);
	md5_padded(k, 0x36, msg, n, inner);
	md5_padded(k, 0x5c, inner, MD5_LEN, out);
	explicit_bzero(k, sizeof k);
}
