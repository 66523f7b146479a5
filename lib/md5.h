/* MD5 (RFC 1321) and HMAC-MD5 (RFC 2104), only for SASL CRAM-MD5 (RFC 2195).
 *
 * spoolbox carries its own MD5 instead of BearSSL's so that CRAM-MD5 works the same in the
 * TLS=0 build (which links no BearSSL) and the one implementation is what the unit tests check.
 * MD5 is broken as a hash; it is used here only because CRAM-MD5 is defined with it. */
#ifndef SPOOLBOX_MD5_H
#define SPOOLBOX_MD5_H
#include <stddef.h>
#include <stdint.h>

#define MD5_LEN 16

struct md5 {
	uint32_t h[4];
	uint64_t len;          /* bytes hashed so far */
	unsigned char buf[64]; /* pending partial block */
};

void md5_init(struct md5 *m);
void md5_update(struct md5 *m, const void *p, size_t n);
void md5_final(struct md5 *m, unsigned char out[MD5_LEN]);
/* HMAC-MD5 of msg under key (any key length). */
void hmac_md5(const void *key, size_t keylen, const void *msg, size_t n, unsigned char out[MD5_LEN]);
#endif
