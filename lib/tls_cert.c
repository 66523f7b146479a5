/* A minimal DER walker over X.509 certificates for SPKI pins and RFC 6125 name checks; the
 * reasons for having it are in tls_cert.h. It only ever walks down the fixed path
 * Certificate > TBSCertificate > {subject, subjectPublicKeyInfo, extensions}. */
#include "tls_cert.h"
#include "dns.h"
#include "util.h"
#include <arpa/inet.h>
#include <string.h>

/* Reads one TLV from *in: its tag, its content, and (whole) the element with header.
 * 0, or -1 when malformed (indefinite lengths or ones of 2^31 and more, high tag numbers, truncation). */
static int der_next(struct cert_blob *in, unsigned *tag, struct cert_blob *content, struct cert_blob *whole)
{
	if (in->len < 2)
		return -1;
	const unsigned char *start = in->p;
	unsigned t = in->p[0];
	if ((t & 0x1f) == 0x1f)
		return -1;
	size_t n = in->p[1], hdr = 2;
	if (n & 0x80) {
		unsigned k = n & 0x7f;
		if (k == 0 || in->len < 2 + k)
			return -1;
		/* as BearSSL reads them: leading zero bytes allowed, the value under 2^31 */
		n = 0;
		for (unsigned i = 0; i < k; i++) {
			if (n > 0x7fffff)
				return -1;
			n = n << 8 | in->p[2 + i];
		}
		hdr += k;
	}
	if (n > in->len - hdr)
		return -1;
	*tag = t;
	content->p = start + hdr;
	content->len = n;
	if (whole) {
		whole->p = start;
		whole->len = hdr + n;
	}
	in->p += hdr + n;
	in->len -= hdr + n;
	return 0;
}

/* der_next() of an element that must have the tag want (its content only): 0, or -1 */
static int der_want(struct cert_blob *in, unsigned want, struct cert_blob *content)
{
	unsigned tag;
	return der_next(in, &tag, content, NULL) < 0 || tag != want ? -1 : 0;
}

/* Steps into a certificate's TBSCertificate and past its version (v1 to v3), serial, signature,
 * issuer and validity: *tbs is left at the subject, *validity is the validity's content, and
 * *cert what follows the TBSCertificate (the signature). der must be the certificate whole
 * (BearSSL's rules: x509_decoder.t0). 0 or -1. */
static int to_subject(const unsigned char *der, size_t len, struct cert_blob *tbs, struct cert_blob *cert,
                      struct cert_blob *validity)
{
	struct cert_blob in = {der, len}, v, n;
	if (der_want(&in, 0x30, cert) < 0 || in.len || der_want(cert, 0x30, tbs) < 0)
		return -1;
	struct cert_blob peek = *tbs;
	if (der_want(&peek, 0xa0, &v) == 0) {
		/* the version: 0 to 2 (leading zeros allowed) */
		unsigned x = 0;
		if (der_want(&v, 0x02, &n) < 0 || v.len || !n.len)
			return -1;
		for (size_t i = 0; i < n.len; i++)
			if ((x = x << 8 | n.p[i]) > 2)
				return -1;
		*tbs = peek;
	}
	static const unsigned char want[] = {0x02, 0x30, 0x30, 0x30}; /* serial, sigalg, issuer, validity */
	for (int i = 0; i < 4; i++)
		if (der_want(tbs, want[i], validity) < 0)
			return -1;
	return 0;
}

/* A UTCTime (years 1950 to 2049) or GeneralizedTime into BearSSL's days and seconds (asn1.t0's
 * read-date: fractional seconds ignored, "Z" and nothing after it). 0 or -1. */
static int der_time(struct cert_blob *in, uint32_t *days, uint32_t *secs)
{
	static const unsigned char mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	/* century, year, month, day, hour, minute, second: each two digits up to hi */
	static const unsigned char hi[7] = {99, 99, 12, 31, 23, 59, 60};
	int v[7];
	struct cert_blob t;
	unsigned tag;
	if (der_next(in, &tag, &t, NULL) < 0 || (tag != 0x17 && tag != 0x18))
		return -1;
	for (int i = tag == 0x17; i < 7; i++) {
		if (t.len < 2)
			return -1;
		unsigned a = t.p[0] - '0', b = t.p[1] - '0';
		t.p += 2;
		t.len -= 2;
		v[i] = (int)(a * 10 + b);
		/* month and day start at 1 */
		if (a > 9 || b > 9 || v[i] > hi[i] || v[i] < (i == 2 || i == 3))
			return -1;
	}
	if (tag == 0x17)
		v[0] = v[1] < 50 ? 20 : 19;
	int y = v[0] * 100 + v[1], m = v[2];
	int leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
	if (v[3] > mdays[m - 1] + (m == 2 && leap))
		return -1;
	uint32_t d = (uint32_t)(365 * y + (y + 3) / 4 - (y + 99) / 100 + (y + 399) / 400 + v[3] - 1);
	for (int i = 0; i < m - 1; i++)
		d += mdays[i] + (i == 1 && leap);
	if (t.len && t.p[0] == '.')
		do {
			t.p++;
			t.len--;
		} while (t.len && (unsigned)(t.p[0] - '0') <= 9);
	if (t.len != 1 || t.p[0] != 'Z')
		return -1;
	*days = d;
	*secs = (uint32_t)(v[4] * 3600 + v[5] * 60 + v[6]);
	return 0;
}

/* A BIT STRING without unused bits: its bytes after that count. 0 or -1. */
static int der_bits(struct cert_blob *in, struct cert_blob *v)
{
	if (der_want(in, 0x03, v) < 0 || !v->len || v->p[0])
		return -1;
	v->p++;
	v->len--;
	return 0;
}

/* A positive INTEGER (one byte at least, the first under 0x80) without its leading zeros */
static int der_uint(struct cert_blob *in, struct cert_blob *v)
{
	if (der_want(in, 0x02, v) < 0 || !v->len || v->p[0] >= 0x80)
		return -1;
	while (v->len && !v->p[0]) {
		v->p++;
		v->len--;
	}
	return 0;
}

static const unsigned char oid_rsa[] = {0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01};
static const unsigned char oid_ec[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01};
static const unsigned char oid_p256[] = {0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07};
static const unsigned char oid_p384[] = {0x2b, 0x81, 0x04, 0x00, 0x22}; /* P-521: ...0x23 */
static const unsigned char oid_basic[] = {0x55, 0x1d, 0x13};

/* always_inline: its callers compare with constant lengths, which GCC then folds (-27 bytes) */
static inline __attribute__((always_inline)) int oid_is(struct cert_blob oid, const unsigned char *want, size_t n)
{
	return oid.len == n && memcmp(oid.p, want, n) == 0;
}

/* Calls fn for every extension of the certificate (its OID content and the OCTET STRING's
 * content; the critical flag is skipped: no caller needs it); fn returning non-zero stops the walk with that value. Leaves *subject
 * at the subject Name when subject is not NULL. Returns fn's value, 0, or -1 when malformed. */
typedef int ext_fn(void *ctx, struct cert_blob oid, struct cert_blob value);
static int ext_each(const unsigned char *der, size_t len, struct cert_blob *subject, ext_fn *fn, void *ctx)
{
	struct cert_blob tbs, c, exts, ext, subj;
	unsigned tag;
	if (to_subject(der, len, &tbs, &c, &c) < 0)
		return -1;
	if (der_next(&tbs, &tag, &c, &subj) < 0 || tag != 0x30)
		return -1;
	if (subject)
		*subject = subj;
	if (der_want(&tbs, 0x30, &c) < 0) /* subjectPublicKeyInfo */
		return -1;
	/* [1] issuerUniqueID, [2] subjectUniqueID, [3] extensions: each at most once, in that
	 * order, and nothing else (BearSSL's x509_decoder's rules) */
	unsigned next = 1;
	while (tbs.len) {
		if (der_next(&tbs, &tag, &c, NULL) < 0)
			return -1;
		unsigned num = (tag & 0xdf) - 0x80;
		if (num < next || num > 3)
			return -1;
		next = num + 1;
		if (num < 3)
			continue;
		if (tag != 0xa3 || der_want(&c, 0x30, &exts) < 0 || c.len)
			return -1;
		while (exts.len) {
			struct cert_blob oid, v;
			if (der_want(&exts, 0x30, &ext) < 0 || der_want(&ext, 0x06, &oid) < 0 || der_next(&ext, &tag, &v, NULL) < 0)
				return -1;
			if (tag == 0x01 && (v.len != 1 || der_next(&ext, &tag, &v, NULL) < 0))
				return -1; /* the critical flag */
			if (tag != 0x04 || ext.len)
				return -1;
			int r = fn(ctx, oid, v);
			if (r)
				return r;
		}
	}
	return 0;
}


/* basicConstraints: a first element BOOLEAN is cA; anything else is skipped, as long as its tag
 * is one BearSSL reads (universal or context, one byte). -1 when malformed. */
static int on_basic(void *ctx, struct cert_blob oid, struct cert_blob v)
{
	struct cert_info *ci = ctx;
	struct cert_blob bc, g;
	unsigned tag;
	if (!oid_is(oid, oid_basic, sizeof oid_basic))
		return 0;
	if (der_want(&v, 0x30, &bc) < 0 || v.len)
		return -1;
	if (!bc.len)
		return 0;
	unsigned t0 = bc.p[0];
	if ((t0 & 0x40) || (t0 & 0x1f) == 0x1f)
		return -1;
	if ((t0 & 0xdf) == 0x01) {
		if (der_next(&bc, &tag, &g, NULL) < 0 || tag != 0x01 || g.len != 1)
			return -1;
		ci->ca = g.p[0] != 0;
	}
	return 0;
}

int cert_decode(const unsigned char *der, size_t len, struct cert_info *ci)
{
	struct cert_blob cert, tbs, e, f, g;
	unsigned tag;
	memset(ci, 0, sizeof *ci);
	if (to_subject(der, len, &tbs, &cert, &e) < 0 || der_time(&e, &ci->days[0], &ci->secs[0]) < 0 ||
	    der_time(&e, &ci->days[1], &ci->secs[1]) < 0 || e.len)
		return CERT_E_INVALID;
	if (der_next(&tbs, &tag, &e, &ci->dn) < 0 || tag != 0x30)
		return CERT_E_INVALID;
	/* subjectPublicKeyInfo: the algorithm's OID, then the key */
	if (der_next(&tbs, &tag, &e, &ci->spki) < 0 || tag != 0x30 || der_want(&e, 0x30, &f) < 0 ||
	    der_want(&f, 0x06, &g) < 0)
		return CERT_E_INVALID;
	if (oid_is(g, oid_rsa, sizeof oid_rsa)) {
		struct cert_blob bits, seq;
		if (der_bits(&e, &bits) < 0 || der_want(&bits, 0x30, &seq) < 0 || bits.len || der_uint(&seq, &ci->n) < 0 ||
		    der_uint(&seq, &ci->e) < 0 || seq.len)
			return CERT_E_INVALID;
		if (ci->n.len + ci->e.len > CERT_KEY_MAX)
			return CERT_E_UNSUPPORTED;
	} else if (oid_is(g, oid_ec, sizeof oid_ec)) {
		if (der_want(&f, 0x06, &g) < 0 || f.len)
			return CERT_E_INVALID;
		ci->curve = oid_is(g, oid_p256, sizeof oid_p256) ? 23
		            : g.len == 5 && memcmp(g.p, oid_p384, 4) == 0 && (g.p[4] == 0x22 || g.p[4] == 0x23) ? g.p[4] - 10
		                                                                                            : 0;
		if (der_bits(&e, &ci->n) < 0)
			return CERT_E_INVALID;
		ci->e.p = ci->n.p; /* no exponent: empty, but a pointer all the same */
		if (!ci->curve || ci->n.len > CERT_KEY_MAX)
			return CERT_E_UNSUPPORTED;
	} else {
		return CERT_E_UNSUPPORTED;
	}
	if (e.len)
		return CERT_E_INVALID;
	/* the unique IDs and extensions, by ext_each()'s walk (as strict as BearSSL's) */
	if (ext_each(der, len, NULL, on_basic, ci) < 0)
		return CERT_E_INVALID;
	/* the signature algorithm (an OID first) and the signature */
	if (der_want(&cert, 0x30, &e) < 0 || der_want(&e, 0x06, &f) < 0 || der_bits(&cert, &f) < 0 || cert.len)
		return CERT_E_INVALID;
	return 0;
}

int cert_spki(const unsigned char *der, size_t len, const unsigned char **spki, size_t *spkilen)
{
	struct cert_blob tbs, c, whole;
	unsigned tag;
	if (to_subject(der, len, &tbs, &c, &c) < 0)
		return -1;
	if (der_want(&tbs, 0x30, &c) < 0) /* subject */
		return -1;
	if (der_next(&tbs, &tag, &c, &whole) < 0 || tag != 0x30)
		return -1;
	*spki = whole.p;
	*spkilen = whole.len;
	return 0;
}

static int is_label_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int cert_name_match(const char *pattern, size_t plen, const char *host)
{
	size_t hlen = strlen(host);
	if (plen && pattern[plen - 1] == '.')
		plen--;
	if (hlen && host[hlen - 1] == '.')
		hlen--;
	if (!plen || !hlen || plen > CERT_NAME_MAX || hlen > CERT_NAME_MAX)
		return 0;
	/* the presented name must look like a host name: no NUL, spaces or other junk */
	int dots = 0;
	for (size_t i = 0; i < plen; i++) {
		unsigned char c = (unsigned char)pattern[i];
		if (c == '.') {
			if (i == 0 || pattern[i - 1] == '.')
				return 0;
			dots++;
		} else if (!is_label_char(c) && !(c == '*' && i == 0)) {
			return 0;
		}
	}
	if (pattern[0] != '*')
		return plen == hlen && str_ncaseeq(pattern, host, plen);
	/* "*." then at least two labels */
	if (plen < 2 || pattern[1] != '.' || dots < 2)
		return 0;
	const char *dot = memchr(host, '.', hlen);
	if (!dot || dot == host)
		return 0;
	size_t rest = hlen - (size_t)(dot - host);
	return rest == plen - 1 && str_ncaseeq(pattern + 1, dot, rest);
}

static void add_name(char *names, size_t size, const unsigned char *p, size_t n)
{
	if (!names || !size)
		return;
	size_t o = strlen(names);
	if (o && o + 2 < size) {
		names[o++] = ',';
		names[o++] = ' ';
	}
	for (size_t i = 0; i < n && o + 1 < size; i++)
		names[o++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	names[o] = 0;
}

size_t cert_host_address(const char *host, unsigned char ip[16])
{
	char buf[64];
	size_t n = strlen(host);
	if (n >= sizeof buf)
		return 0;
	if (host[0] == '[' && n > 2 && host[n - 1] == ']') {
		host++;
		n -= 2;
	}
	memcpy(buf, host, n);
	buf[n] = 0;
	const char *a = buf;
	if (str_ncaseeq(a, "IPv6:", 5))
		a += 5;
	int family = dns_literal(a, ip);
	return family == AF_INET ? 4 : family ? 16 : 0;
}

static const unsigned char oid_san[] = {0x55, 0x1d, 0x11};
static const unsigned char oid_cn[] = {0x55, 0x04, 0x03};

/* Walks the GeneralNames of a subjectAltName value. Returns 1 match, 0 none, -1 malformed. */
static int check_san(struct cert_blob val, const char *host, const unsigned char *ip, size_t iplen, char *names,
                     size_t namessize)
{
	struct cert_blob seq, gn;
	unsigned tag;
	int match = 0;
	if (der_want(&val, 0x30, &seq) < 0)
		return -1;
	while (seq.len) {
		if (der_next(&seq, &tag, &gn, NULL) < 0)
			return -1;
		if (tag == 0x82) { /* dNSName */
			add_name(names, namessize, gn.p, gn.len);
			if (!iplen && cert_name_match((const char *)gn.p, gn.len, host))
				match = 1;
		} else if (tag == 0x87) { /* iPAddress */
			char shown[64];
			if (gn.len == 4 || gn.len == 16) {
				inet_ntop(gn.len == 4 ? AF_INET : AF_INET6, gn.p, shown, sizeof shown);
				add_name(names, namessize, (const unsigned char *)shown, strlen(shown));
			}
			if (iplen && gn.len == iplen && memcmp(gn.p, ip, iplen) == 0)
				match = 1;
		}
	}
	return match;
}

/* The last (most specific) CN of a subject Name, or none. 0 found, 1 none, -1 malformed. */
/* noinline: called once, but inlined GCC copies its loop's tails (-34 bytes) */
__attribute__((noinline)) static int subject_cn(struct cert_blob name, struct cert_blob *cn)
{
	struct cert_blob seq, set, atv, oid, v;
	unsigned tag;
	int found = 1;
	if (der_want(&name, 0x30, &seq) < 0)
		return -1;
	while (seq.len) {
		if (der_want(&seq, 0x31, &set) < 0)
			return -1;
		while (set.len) {
			if (der_want(&set, 0x30, &atv) < 0)
				return -1;
			if (der_next(&atv, &tag, &oid, NULL) < 0 || tag != 0x06 || der_next(&atv, &tag, &v, NULL) < 0)
				return -1;
			/* UTF8String, PrintableString, IA5String, TeletexString */
			if (oid.len == 3 && memcmp(oid.p, oid_cn, 3) == 0 &&
			    (tag == 0x0c || tag == 0x13 || tag == 0x16 || tag == 0x14)) {
				*cn = v;
				found = 0;
			}
		}
	}
	return found;
}

struct name_check {
	const char *host;
	unsigned char ip[16];
	size_t iplen;
	int seen_san, match;
	char *names;
	size_t namessize;
};

static int on_san(void *ctx, struct cert_blob oid, struct cert_blob v)
{
	struct name_check *nc = ctx;
	if (!oid_is(oid, oid_san, sizeof oid_san))
		return 0;
	nc->seen_san = 1;
	int r = check_san(v, nc->host, nc->ip, nc->iplen, nc->names, nc->namessize);
	if (r < 0)
		return -1;
	nc->match |= r;
	return 0;
}

int cert_check_name(const unsigned char *der, size_t len, const char *host, char *names, size_t namessize)
{
	struct name_check nc = {host, {0}, 0, 0, 0, names, namessize};
	struct cert_blob subject;
	nc.iplen = cert_host_address(host, nc.ip);
	if (names && namessize)
		names[0] = 0;
	if (ext_each(der, len, &subject, on_san, &nc) < 0)
		return -1;
	if (nc.match)
		return 1;
	if (nc.seen_san)
		return 0;
	/* No subjectAltName at all: RFC 6125 6.4.4 would allow the subject CN, but the CA/Browser
	 * Forum has required SANs since 2012 and RFC 9525 drops CN matching: a CN-only certificate
	 * matches nothing (a private relay with an old one is reached with a pin). The CN is only
	 * named in the error. */
	struct cert_blob cn = {NULL, 0};
	int r = subject_cn(subject, &cn);
	if (r < 0)
		return -1;
	if (r == 0 && names && namessize) {
		add_name(names, namessize, (const unsigned char *)"CN=", 3);
		size_t o = strlen(names);
		for (size_t i = 0; i < cn.len && o + 1 < namessize; i++)
			names[o++] = cn.p[i] >= 0x20 && cn.p[i] < 0x7f ? (char)cn.p[i] : '?';
		names[o] = 0;
		str_lcpy(names + strlen(names), " only, no subjectAltName", namessize - strlen(names));
	}
	return 0;
}

static const unsigned char oid_eku[] = {0x55, 0x1d, 0x25};
static const unsigned char oid_name_constraints[] = {0x55, 0x1d, 0x1e};
static const unsigned char oid_server_auth[] = {0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x01};
static const unsigned char oid_any_eku[] = {0x55, 0x1d, 0x25, 0x00};

/* 1: an EKU extension without serverAuth or anyExtendedKeyUsage; 0: none or fine. */
static int on_eku(void *ctx, struct cert_blob oid, struct cert_blob v)
{
	struct cert_blob seq, purpose;
	(void)ctx;
	if (!oid_is(oid, oid_eku, sizeof oid_eku))
		return 0;
	if (der_want(&v, 0x30, &seq) < 0)
		return -1;
	while (seq.len) {
		if (der_want(&seq, 0x06, &purpose) < 0)
			return -1;
		if (oid_is(purpose, oid_server_auth, sizeof oid_server_auth) || oid_is(purpose, oid_any_eku, sizeof oid_any_eku))
			return 0;
	}
	return 1;
}

int cert_server_auth_ok(const unsigned char *der, size_t len)
{
	int r = ext_each(der, len, NULL, on_eku, NULL);
	return r < 0 ? -1 : r == 0;
}

static int on_nc(void *ctx, struct cert_blob oid, struct cert_blob v)
{
	(void)ctx;
	(void)v;
	return oid_is(oid, oid_name_constraints, sizeof oid_name_constraints);
}

int cert_has_name_constraints(const unsigned char *der, size_t len)
{
	return ext_each(der, len, NULL, on_nc, NULL);
}
