/* Fuzz target: the DER walker of lib/tls_cert.c (SPKI, subjectAltName, subject CN, extendedKeyUsage,
 * nameConstraints) on
 * arbitrary certificates, and the RFC 6125 matcher on arbitrary presented names. cert_decode()
 * replaces BearSSL's x509_decoder in the binary; here it is compared with it (the fuzz builds
 * link BearSSL): the same certificates decoded, to the same key, dates, DN and cA flag. */
#include "tls_cert.h"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#include <bearssl.h>
#pragma GCC diagnostic pop
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct dn {
	unsigned char b[70000];
	size_t len;
};

static void dn_add(void *ctx, const void *p, size_t n)
{
	struct dn *d = ctx;
	if (n <= sizeof d->b - d->len) {
		memcpy(d->b + d->len, p, n);
		d->len += n;
	}
}

static int blob_eq(struct cert_blob b, const unsigned char *p, size_t n)
{
	return b.len == n && (n == 0 || memcmp(b.p, p, n) == 0);
}

static void compare_with_bearssl(const uint8_t *data, size_t size)
{
	static struct dn dn;
	static br_x509_decoder_context dc;
	struct cert_info ci;
	dn.len = 0;
	br_x509_decoder_init(&dc, dn_add, &dn);
	br_x509_decoder_push(&dc, data, size);
	const br_x509_pkey *pk = br_x509_decoder_get_pkey(&dc);
	int r = cert_decode(data, size, &ci);
	if (!pk != !!r)
		abort();
	if (!pk)
		return;
	const unsigned char *spki;
	size_t n;
	if (cert_spki(data, size, &spki, &n) < 0 || spki != ci.spki.p || n != ci.spki.len)
		abort();
	if (ci.days[0] != dc.notbefore_days || ci.secs[0] != dc.notbefore_seconds || ci.days[1] != dc.notafter_days ||
	    ci.secs[1] != dc.notafter_seconds || ci.ca != br_x509_decoder_isCA(&dc) || !blob_eq(ci.dn, dn.b, dn.len))
		abort();
	if (pk->key_type == BR_KEYTYPE_RSA ? ci.curve || !blob_eq(ci.n, pk->key.rsa.n, pk->key.rsa.nlen) ||
	                                         !blob_eq(ci.e, pk->key.rsa.e, pk->key.rsa.elen)
	                                   : ci.curve != (int)pk->key.ec.curve || !blob_eq(ci.n, pk->key.ec.q, pk->key.ec.qlen))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const unsigned char *spki;
	size_t len;
	char names[128];
	cert_spki(data, size, &spki, &len);
	cert_check_name(data, size, "mail.example.test", names, sizeof names);
	cert_check_name(data, size, "[192.0.2.1]", names, sizeof names);
	cert_check_name(data, size, "::1", NULL, 0);
	cert_name_match((const char *)data, size, "a.example.test");
	cert_server_auth_ok(data, size);
	cert_has_name_constraints(data, size);
	compare_with_bearssl(data, size);
	return 0;
}
