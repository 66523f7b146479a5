/* The few things the TLS client reads from a DER certificate itself rather than through
 * BearSSL: the SubjectPublicKeyInfo (for SHA-256 key pins) and the identifiers for host-name
 * verification, which BearSSL's x509_minimal does not do the RFC 6125 way (it also matches the
 * subject CN when dNSNames exist, and accepts "*.com").
 *
 * Contract: every function reads only within [der, der + len), accepts definite-length DER
 * only, and treats anything malformed as -1, never as a match. No BearSSL dependency, so the
 * unit tests and the fuzzer run it in every build. */
#ifndef SPOOLBOX_TLS_CERT_H
#define SPOOLBOX_TLS_CERT_H
#include <stddef.h>
#include <stdint.h>

#define CERT_NAME_MAX 255 /* longest DNS name considered */

#define CERT_KEY_MAX 520 /* RSA n and e together, or an EC point: BearSSL's BR_X509_BUFSIZE_KEY */

/* What the TLS client needs of a certificate: the subject Name (tag and length included), the
 * public key (RSA: n and e without leading zeros, curve 0; EC: the point in n, curve 23, 24 or
 * 25 for P-256, P-384, P-521, as TLS and BearSSL number them), the validity (days counted from
 * 0000-01-01 in the proleptic Gregorian calendar, seconds in the day up to 86400 with a leap
 * second: BearSSL's count) and basicConstraints' cA. The pointers point into the certificate. */
struct cert_blob {
	const unsigned char *p;
	size_t len;
};
struct cert_info {
	uint32_t days[2], secs[2]; /* notBefore, notAfter */
	int ca, curve;
	struct cert_blob dn, n, e;
	struct cert_blob spki; /* the SubjectPublicKeyInfo, tag and length included (for pins) */
};

/* Decodes a certificate by the rules of BearSSL's x509_decoder (x509_decoder.t0, asn1.t0),
 * which it replaces: the whole of der must be one Certificate, v1 to v3, with UTCTime or
 * GeneralizedTime dates ending in Z, an RSA key (a positive modulus and exponent) or an EC key
 * on a named curve above, the unique IDs and extensions in their order, and a signature
 * algorithm and BIT STRING after the TBSCertificate. 0, CERT_E_UNSUPPORTED for another key
 * type or curve or a key over CERT_KEY_MAX, or CERT_E_INVALID when malformed (BearSSL's error
 * numbers 49 and 33). */
#define CERT_E_INVALID 33
#define CERT_E_UNSUPPORTED 49
int cert_decode(const unsigned char *der, size_t len, struct cert_info *ci);

/* The SubjectPublicKeyInfo element (tag and length included) of a certificate. 0, or -1. */
int cert_spki(const unsigned char *der, size_t len, const unsigned char **spki, size_t *spkilen);

/* Parses host as an address literal ("192.0.2.1", "[192.0.2.1]", "::1", "[IPv6:::1]") into
 * ip: returns 4 or 16 (its length), or 0 when host is not an address. */
size_t cert_host_address(const char *host, unsigned char ip[16]);

/* Verifies that the certificate is for host (RFC 6125 section 6, RFC 9525):
 *   - host is a DNS name: only the subjectAltName dNSNames are identifiers; a certificate
 *     without a subjectAltName extension matches nothing (no subject CN fallback, see
 *     docs/tls.md);
 *   - host is an IPv4/IPv6 address (optionally in brackets, "IPv6:" prefix allowed): only the
 *     subjectAltName iPAddress entries count.
 * Returns 1 on a match, 0 when none matches (names then lists the presented identifiers,
 * comma separated and truncated to namessize, for the error message), -1 when the certificate
 * cannot be parsed. names may be NULL. */
int cert_check_name(const unsigned char *der, size_t len, const char *host, char *names, size_t namessize);

/* 1 when the certificate may serve a TLS server: it has no extendedKeyUsage extension, or one
 * that lists id-kp-serverAuth or anyExtendedKeyUsage (RFC 5280 4.2.1.12); 0 when it does not
 * (a clientAuth-only certificate); -1 when malformed. */
int cert_server_auth_ok(const unsigned char *der, size_t len);

/* 1 when the certificate carries a nameConstraints extension (critical or not), 0 when not,
 * -1 when malformed. We do not process name constraints, so chains that carry them are refused
 * rather than trusted past them. */
int cert_has_name_constraints(const unsigned char *der, size_t len);

/* One presented DNS identifier (plen bytes, not NUL-terminated) against the reference name,
 * RFC 6125 section 6.4: ASCII case-insensitive; a trailing dot on either is ignored; a wildcard
 * is only a whole leftmost label "*", matches exactly one non-empty label, and needs at least
 * two labels after it ("*.example.com" yes, "*.com", "f*o.example.com", "a.*.example.com" no).
 * 1 or 0. */
int cert_name_match(const char *pattern, size_t plen, const char *host);
#endif
