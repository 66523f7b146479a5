/* base64 (RFC 4648 section 10 vectors, strictness, bounds) and MD5/HMAC-MD5 (RFC 1321, 2104). */
#include "base64.h"
#include "md5.h"
#include "unit.h"

TEST(base64_rfc4648_vectors)
{
	static const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
	static const char *out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
	for (int i = 0; i < 7; i++) {
		char enc[16];
		unsigned char dec[16];
		CHECK_INT(base64_encode(enc, sizeof enc, in[i], strlen(in[i])), strlen(out[i]));
		CHECK_STR(enc, out[i]);
		ssize_t n = base64_decode(dec, sizeof dec, out[i], strlen(out[i]));
		CHECK_INT(n, strlen(in[i]));
		CHECK(n >= 0 && memcmp(dec, in[i], (size_t)n) == 0);
	}
}

TEST(base64_binary_roundtrip)
{
	unsigned char all[256], back[256];
	char enc[BASE64_ENCLEN(256)];
	for (int i = 0; i < 256; i++)
		all[i] = (unsigned char)i;
	CHECK(base64_encode(enc, sizeof enc, all, 256) > 0);
	CHECK_INT(base64_decode(back, sizeof back, enc, strlen(enc)), 256);
	CHECK(memcmp(all, back, 256) == 0);
}

TEST(base64_bounds)
{
	char enc[8];
	unsigned char dec[2];
	CHECK_INT(base64_encode(enc, 8, "foobar", 6), -1); /* needs 9 */
	CHECK_STR(enc, "");
	CHECK_INT(base64_encode(enc, 5, "foo", 3), 4);
	CHECK_INT(base64_decode(dec, 2, "Zm9v", 4), -1);  /* 3 bytes into 2 */
	CHECK_INT(base64_decode(dec, 2, "Zm8=", 4), 2);
}

TEST(base64_rejects_noncanonical)
{
	unsigned char d[32];
	static const char *bad[] = {"Zg=", "Zg", "Z===", "Zm9v\n", "Zm 9", "Zg==Zg==", "Zh==", "Zm9=", "=Zm9",
	                            "Zm9vY===", "Zm-v", "Zm9v\0"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		if (base64_decode(d, sizeof d, bad[i], strlen(bad[i]) + (i == 11)) >= 0)
			unit_fail(__FILE__, __LINE__, "accepted \"%s\"", bad[i]);
}

static void hex(const unsigned char *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

TEST(md5_vectors)
{
	static const char *in[] = {"", "a", "abc", "message digest",
	                           "12345678901234567890123456789012345678901234567890123456789012345678901234567890"};
	static const char *want[] = {"d41d8cd98f00b204e9800998ecf8427e", "0cc175b9c0f1b6a831c399e269772661",
	                             "900150983cd24fb0d6963f7d28e17f72", "f96b697d7cb7938d525a2f31aaf161d0",
	                             "57edf4a22be3c955ac49da2e2107b67a"};
	for (int i = 0; i < 5; i++) {
		struct md5 m;
		unsigned char h[MD5_LEN];
		char x[33];
		md5_init(&m);
		/* feed in uneven pieces to exercise the partial-block path */
		size_t n = strlen(in[i]);
		for (size_t off = 0; off < n; off += 7)
			md5_update(&m, in[i] + off, n - off < 7 ? n - off : 7);
		md5_final(&m, h);
		hex(h, MD5_LEN, x);
		CHECK_STR(x, want[i]);
	}
}

TEST(hmac_md5_rfc2104)
{
	unsigned char key[16], h[MD5_LEN], big[80];
	char x[33];
	memset(key, 0x0b, 16);
	hmac_md5(key, 16, "Hi There", 8, h);
	hex(h, MD5_LEN, x);
	CHECK_STR(x, "9294727a3638bb1c13f48ef8158bfc9d");
	hmac_md5("Jefe", 4, "what do ya want for nothing?", 28, h);
	hex(h, MD5_LEN, x);
	CHECK_STR(x, "750c783e6ab0b503eaa86e310a5db738");
	/* RFC 2202 case 6: a key longer than the block is hashed first */
	memset(big, 0xaa, 80);
	hmac_md5(big, 80, "Test Using Larger Than Block-Size Key - Hash Key First", 54, h);
	hex(h, MD5_LEN, x);
	CHECK_STR(x, "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd");
}
