/* TLS client over struct io with BearSSL: the small cipher profile, the certificate policy
 * (an x509 class wrapping BearSSL's x509_minimal), the engine pump, and the io hooks.
 * The contract, policies, pin and clock rules are in tls.h; the design notes in docs/tls.md.
 *
 * Memory: one malloc'd struct tls_conn per connection (about 25 KiB: the 16.7 KiB half-duplex
 * record buffer, the engine and the X.509 contexts), plus the server certificate while the
 * handshake runs. The buffer is half-duplex (BR_SSL_BUFSIZE_MONO): SMTP, even pipelined, writes
 * a batch and flushes it before reading the replies, so the engine never has to send and
 * receive at once; tls_write() flushes every record it makes before returning. If the server
 * sends data while the client still has unread data pending and wants to write, the write
 * fails with EPROTO rather than deadlocking. */
#include "config_default.h"
#if ENABLE_TLS
#include "tls.h"
#include "fileio.h"
#include "fmt.h"
#include "base64.h"
#include "clock.h"
#include "secfile.h"
#include "tls_bearssl.h"
#include "tls_cert.h"
#include "tls_pem.h"
#include "util.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/socket.h>

#define CERT_MAX (64 << 10) /* largest server certificate accepted */
#define CLOSE_TIMEOUT_MS 2000

/* ECDHE only (forward secrecy, and no RSA encryption code), AEAD only. */
static const uint16_t suites[] = {
	BR_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	BR_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
#if ENABLE_CHACHA20
	BR_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	BR_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
#endif
	BR_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	BR_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
};
static const char *const suite_names[] = {
	"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256",
#if ENABLE_CHACHA20
	"ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305",
#endif
	"ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
};

/* Constant-time AES: the 32-bit bitsliced code everywhere (on 64-bit machines 1 KiB smaller
 * than the 64-bit one and about 30 instead of 42 MB/s, far above what a mail relay sends);
 * GHASH with 64-bit multiplications where the machine has them. */
#define AES_CTR_VTABLE br_aes_ct_ctr_vtable
#if UINTPTR_MAX > 0xffffffffu
#define GHASH br_ghash_ctmul64
#else
#define GHASH br_ghash_ctmul32
#endif

struct tls_conn;

/* The certificate policy: x509_minimal for chain and validity (under verify), our own RFC 6125
 * name check and SPKI pins, and the server key taken from the certificate itself otherwise. */
/* A certificate's bytes as they come: len of cap bytes so far; bad when it did not fit */
struct cert_copy {
	unsigned char *p;
	size_t len, cap;
	int bad;
};

struct xwrap {
	const br_x509_class *vtable; /* MUST be first: BearSSL passes &vtable as the context */
	struct tls_conn *t;
	int ncerts;
	int have_pkey;
	int constrained;
	struct cert_copy ee; /* the end-entity certificate, for names and pins */
	struct cert_copy ca; /* each issuing certificate in turn, looked at for name constraints */
	struct cert_info ee_info; /* the end-entity certificate decoded (pointing into ee) */
	br_x509_pkey pkey;        /* its key, when have_pkey */
	/* the large one last, so the fields above have short offsets */
	br_x509_minimal_context minimal;
};

struct tls_conn {
	/* the small fields first: their offsets fit a byte in the instructions that use them */
	/* the plain stream underneath */
	ssize_t (*low_read)(void *ctx, void *p, size_t n, int timeout_ms);
	ssize_t (*low_write)(void *ctx, const void *p, size_t n, int timeout_ms);
	int (*low_close)(void *ctx);
	void *low_ctx;
	int timeout_ms;
	int io_errno, io_eof;
	/* the policy of this connection */
	enum tls_policy policy;
	int npins;
	time_t now;
	/* the outcome */
	enum tls_status st;
	int verified, pinned;
	/* client certificate */
	size_t chain_len;
	br_skey_decoder_context *skey;
	br_ssl_client_context cc;
	struct xwrap xw;
	char name[256];
	unsigned char pins[TLS_MAX_PINS][32];
	char reason[TLS_REASON_MAX];
	br_x509_certificate chain[8];
	unsigned char iobuf[BR_SSL_BUFSIZE_MONO];
};

/* On x86-64 an entry into lib/fmt.c's shared variadic prologue (FMT_VA_ENTRY), hence global. */
void tls_fail(struct tls_conn *t, enum tls_status st, const char *fmt, ...) PRINTF_LIKE(3, 4);
#define fail tls_fail
__attribute__((used)) static void fail_v(struct tls_conn *t, enum tls_status st, const char *fmt, long d, va_list ap)
{
	if (t->st != TLS_OK)
		return; /* keep the first, most precise reason */
	vsnprintf(t->reason, sizeof t->reason, fmt, ap);
	t->st = st;
}

FMT_VA_ENTRY(tls_fail, 3, fail_v);
#if !FMT_VA_ASM
void tls_fail(struct tls_conn *t, enum tls_status st, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fail_v(t, st, fmt, 0, ap);
	va_end(ap);
}
#endif

/* BearSSL counts days from 0000-01-01 (day 719528 is 1970-01-01). Shown as YYYY-MM-DD through
 * gmtime_r (musl's date arithmetic, linked anyway): strftime would pull musl's time-zone code in. */
static void show_day(uint32_t days, char *out, size_t size)
{
	time_t t = ((time_t)days - 719528) * 86400;
	struct tm tm;
	if (!gmtime_r(&t, &tm))
		memset(&tm, 0, sizeof tm);
	str_fmt(out, size, "%04d-%02d-%02d", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

/* The elliptic curves: x25519 and NIST P-256/P-384, with BearSSL's generic, smaller code
 * (br_ec_all_m31 adds a 9 KiB P-256 special case and P-521, which we do not offer). */
static const br_ec_impl *ec_for(int curve)
{
	return curve == BR_EC_curve25519 ? &br_ec_c25519_i31 : &br_ec_prime_i31;
}

static const unsigned char *ec_generator(int curve, size_t *len)
{
	return ec_for(curve)->generator(curve, len);
}

static const unsigned char *ec_order(int curve, size_t *len)
{
	return ec_for(curve)->order(curve, len);
}

static size_t ec_xoff(int curve, size_t *len)
{
	return ec_for(curve)->xoff(curve, len);
}

static uint32_t ec_mul(unsigned char *g, size_t glen, const unsigned char *x, size_t xlen, int curve)
{
	return ec_for(curve)->mul(g, glen, x, xlen, curve);
}

static size_t ec_mulgen(unsigned char *r, const unsigned char *x, size_t xlen, int curve)
{
	return ec_for(curve)->mulgen(r, x, xlen, curve);
}

static uint32_t ec_muladd(unsigned char *a, const unsigned char *b, size_t len, const unsigned char *x,
                          size_t xlen, const unsigned char *y, size_t ylen, int curve)
{
	return ec_for(curve)->muladd(a, b, len, x, xlen, y, ylen, curve);
}

/* P-521 is not offered (ec_impl's curves below), so its generator and order are never asked for:
 * the engine and the ECDSA code check supported_curves before they look a curve up. This empty
 * definition keeps BearSSL's ec_secp521r1.c (0.2 KiB), which br_ec_prime_i31 names, out of the
 * link; adding P-521 to ec_impl MUST remove it. */
extern const struct ec_curve_def { /* BearSSL 0.6's br_ec_curve_def (src/inner.h) */
	int curve;
	const unsigned char *order;
	size_t order_len;
	const unsigned char *generator;
	size_t generator_len;
} br_secp521r1;
const struct ec_curve_def br_secp521r1 = {BR_EC_secp521r1, NULL, 0, NULL, 0};

static const br_ec_impl ec_impl = {
	(uint32_t)1 << BR_EC_secp256r1 | (uint32_t)1 << BR_EC_secp384r1 | (uint32_t)1 << BR_EC_curve25519,
	ec_generator, ec_order, ec_xoff, ec_mul, ec_mulgen, ec_muladd,
};

/* RSA's public operation (bearssl_rsa.h), defined here instead of BearSSL's rsa/rsa_i31_pub.c:
 * the same steps, but the exponentiation by br_i31_modpow(), which the EC code links anyway,
 * instead of the windowed br_i31_modpow_opt() (0.9 KiB) that only this used. The exponent is
 * public and short (65537: 17 bits), so the window gains nothing worth it. The i31 functions
 * are BearSSL 0.6's internal ones (src/inner.h), which its library exports. */
void br_i31_decode(uint32_t *x, const void *src, size_t len);
uint32_t br_i31_decode_mod(uint32_t *x, const void *src, size_t len, const uint32_t *m);
void br_i31_encode(void *dst, size_t len, const uint32_t *x);
uint32_t br_i31_ninv31(uint32_t x);
void br_i31_modpow(uint32_t *x, const unsigned char *e, size_t elen, const uint32_t *m, uint32_t m0i, uint32_t *t1,
                   uint32_t *t2);

uint32_t br_rsa_i31_public(unsigned char *x, size_t xlen, const br_rsa_public_key *pk)
{
	/* four integers modulo n: n, x, and the two temporaries (each 1 + 133 words at 4096 bits, even) */
	enum { MAXBITS = 4096, W = 2 + (MAXBITS + 30) / 31 }; /* BearSSL's BR_MAX_RSA_SIZE */
	uint32_t tmp[4 * W];
	const unsigned char *n = pk->n;
	size_t nlen = pk->nlen;
	while (nlen && !*n) {
		n++;
		nlen--;
	}
	if (!nlen || nlen > MAXBITS / 8 || xlen != nlen)
		return 0;
	size_t fw = 1 + (nlen * 8 + 30) / 31;
	fw += fw & 1;
	uint32_t *m = tmp, *a = m + fw;
	br_i31_decode(m, n, nlen);
	uint32_t m0i = br_i31_ninv31(m[1]);
	/* an even modulus gives m0i 0: refused, as an x not below n */
	uint32_t r = m0i & br_i31_decode_mod(a, x, xlen, m);
	br_i31_modpow(a, pk->e, pk->elen, m, m0i, a + fw, a + 2 * fw);
	br_i31_encode(x, xlen, a);
	return r & 1;
}

/* ---- the x509 class ---- */

static void xw_start_chain(const br_x509_class **ctx, const char *server_name)
{
	struct xwrap *x = (struct xwrap *)(void *)ctx;
	x->ncerts = 0;
	x->ee.len = 0;
	x->ee.bad = 0;
	x->have_pkey = 0;
	x->constrained = 0;
	/* names are not left to x509_minimal: it also matches the CN beside dNSNames */
	if (x->t->policy == TLS_VERIFY)
		x->minimal.vtable->start_chain(&x->minimal.vtable, NULL);
}

static void xw_start_cert(const br_x509_class **ctx, uint32_t length)
{
	struct xwrap *x = (struct xwrap *)(void *)ctx;
	/* the end-entity certificate, or the next issuer (the chain starts with ee.len and
	 * ee.bad at 0, so the first certificate may start alike) */
	struct cert_copy *c = x->ncerts ? &x->ca : &x->ee;
	free(c->p);
	c->p = NULL;
	c->len = c->cap = 0;
	c->bad = length > CERT_MAX || !(c->p = malloc(length ? length : 1));
	if (!c->bad)
		c->cap = length;
	if (x->t->policy == TLS_VERIFY)
		x->minimal.vtable->start_cert(&x->minimal.vtable, length);
}

static void xw_append(const br_x509_class **ctx, const unsigned char *buf, size_t len)
{
	struct xwrap *x = (struct xwrap *)(void *)ctx;
	struct cert_copy *c = x->ncerts ? &x->ca : &x->ee;
	if (!c->bad) {
		if (len > c->cap - c->len) {
			c->bad = 1;
		} else {
			memcpy(c->p + c->len, buf, len);
			c->len += len;
		}
	}
	if (x->t->policy == TLS_VERIFY)
		x->minimal.vtable->append(&x->minimal.vtable, buf, len);
}

static void xw_end_cert(const br_x509_class **ctx)
{
	struct xwrap *x = (struct xwrap *)(void *)ctx;
	if (x->t->policy == TLS_VERIFY)
		x->minimal.vtable->end_cert(&x->minimal.vtable);
	/* an issuer we cannot read counts as constrained: refused rather than trusted blindly */
	if (x->ncerts > 0 && (x->ca.bad || x->ca.len != x->ca.cap || cert_has_name_constraints(x->ca.p, x->ca.len) != 0))
		x->constrained = 1;
	free(x->ca.p);
	x->ca.p = NULL;
	x->ncerts++;
}

/* BearSSL's X.509 error codes (bearssl_x509.h, a stable ABI) as str_bykey() keys */
_Static_assert(BR_ERR_X509_EMPTY_CHAIN == 35 && BR_ERR_X509_NOT_TRUSTED == 62, "BearSSL's X.509 error codes");

static const char *x509_error_name(unsigned err)
{
	return str_bykey(
	    "\076the chain does not lead to a trusted CA\0" /* BR_ERR_X509_NOT_TRUSTED */
	    "\064a signature in the chain is invalid\0" /* BR_ERR_X509_BAD_SIGNATURE */
	    "\072an issuing certificate is not a CA\0" /* BR_ERR_X509_NOT_CA */
	    "\073the key usage forbids this use\0" /* BR_ERR_X509_FORBIDDEN_KEY_USAGE */
	    "\074a key in the chain is too weak\0" /* BR_ERR_X509_WEAK_PUBLIC_KEY */
	    "\071an unsupported critical extension\0" /* BR_ERR_X509_CRITICAL_EXTENSION */
	    "\061an unsupported algorithm or key type\0" /* BR_ERR_X509_UNSUPPORTED */
	    "\067the chain is out of order\0" /* BR_ERR_X509_DN_MISMATCH */
	    "\043the server sent no certificate\0" /* BR_ERR_X509_EMPTY_CHAIN */
	    "\065the time is unknown\0" /* BR_ERR_X509_TIME_UNKNOWN */
	    "\063a key of the wrong type\0" /* BR_ERR_X509_WRONG_KEY_TYPE */
	    "\062the chain is too long\0" /* BR_ERR_X509_LIMIT_EXCEEDED */
	    "\0the certificate cannot be decoded", err);
}

/* Validity trouble: expired, not yet valid, or a clock that was never set. A certificate that
 * is not yet valid while the clock is before TLS_CLOCK_PLAUSIBLE means the clock is wrong (a
 * board without RTC still in 1970), not the certificate: TLS_E_CLOCK, so the caller defers. */
static void validity_reason(struct tls_conn *t, const struct cert_info *d, int ee_ok)
{
	char day[32], clock[32];
	uint32_t today = (uint32_t)(t->now / 86400 + 719528);
	uint32_t secs = (uint32_t)(t->now % 86400);
	int unset = t->now < TLS_CLOCK_PLAUSIBLE;
	show_day(today, clock, sizeof clock);
	int early = today < d->days[0] || (today == d->days[0] && secs < d->secs[0]);
	int late = today > d->days[1] || (today == d->days[1] && secs > d->secs[1]);
	if (ee_ok && early) {
		show_day(d->days[0], day, sizeof day);
		if (unset)
			fail(t, TLS_E_CLOCK, "system clock is %s, certificate not yet valid (valid from %s): clock not set",
			     clock, day);
		else
			fail(t, TLS_E_CERT, "certificate not yet valid: valid from %s, clock is %s", day, clock);
	} else if (ee_ok && late) {
		show_day(d->days[1], day, sizeof day);
		fail(t, TLS_E_CERT, "certificate expired on %s", day);
	} else if (unset) {
		/* an issuer not yet valid in the chain: the same clock trouble */
		fail(t, TLS_E_CLOCK, "system clock is %s, a certificate in the chain is not yet valid: clock not set", clock);
	} else {
		fail(t, TLS_E_CERT, "a certificate in the chain is expired or not yet valid (clock %s)", clock);
	}
}

static int check_pins(struct tls_conn *t, struct xwrap *x)
{
	unsigned char h[32];
	char shown[BASE64_ENCLEN(32)];
	/* the key as cert_decode() found it: xw_end_chain() pins only a decoded certificate */
	br_sha256_context sc;
	br_sha256_init(&sc);
	br_sha256_update(&sc, x->ee_info.spki.p, x->ee_info.spki.len);
	br_sha256_out(&sc, h);
	for (int i = 0; i < t->npins; i++)
		if (memcmp(h, t->pins[i], 32) == 0) {
			t->pinned = 1;
			return 0;
		}
	base64_encode(shown, sizeof shown, h, 32);
	fail(t, TLS_E_PIN, "server key sha256//%s matches no pin", shown);
	return -1;
}

static unsigned xw_end_chain(const br_x509_class **ctx)
{
	struct xwrap *x = (struct xwrap *)(void *)ctx;
	struct tls_conn *t = x->t;
	unsigned err = 0;
	/* the failures with a fixed text, or one of up to two strings: one fail() at the end */
	const char *why, *a1 = NULL, *a2 = NULL;
	char names[160];
	if (t->policy == TLS_VERIFY)
		err = x->minimal.vtable->end_chain(&x->minimal.vtable);
	if (x->ncerts == 0) {
		why = "the server sent no certificate";
		err = BR_ERR_X509_EMPTY_CHAIN;
		goto cert;
	}
	_Static_assert(CERT_MAX == 65536, "the text below");
	if (x->ee.bad || x->ee.len != x->ee.cap) {
		why = "server certificate larger than 65536 bytes or truncated";
		err = BR_ERR_X509_LIMIT_EXCEEDED;
		goto cert;
	}
	int derr = cert_decode(x->ee.p, x->ee.len, &x->ee_info);
	int ee_ok = !derr;
	if (err == BR_ERR_X509_EXPIRED) {
		validity_reason(t, &x->ee_info, ee_ok);
		return err;
	}
	if (err) {
		why = "certificate verification failed: %s";
		a1 = x509_error_name(err);
		goto cert;
	}
	if (!ee_ok) {
		fail(t, TLS_E_CERT, "cannot decode the server certificate (error %d)", derr);
		return BR_ERR_X509_UNSUPPORTED;
	}
	tls_pkey(&x->ee_info, &x->pkey);
	x->have_pkey = 1;
	if (t->policy == TLS_VERIFY) {
		if (x->constrained || cert_has_name_constraints(x->ee.p, x->ee.len) != 0) {
			why = "a certificate in the chain carries name constraints, which spoolbox does not process: refused";
			err = BR_ERR_X509_NOT_TRUSTED;
			goto cert;
		}
		if (cert_server_auth_ok(x->ee.p, x->ee.len) != 1) {
			why = "the server certificate is not for TLS servers (extendedKeyUsage without serverAuth)";
			err = BR_ERR_X509_FORBIDDEN_KEY_USAGE;
			goto cert;
		}
		int r = cert_check_name(x->ee.p, x->ee.len, t->name, names, sizeof names);
		err = BR_ERR_X509_BAD_SERVER_NAME;
		why = "cannot parse the names in the server certificate";
		if (r < 0)
			goto cert;
		if (r == 0) {
			why = "certificate is for %s, not %s";
			a1 = names[0] ? names : "no name";
			a2 = t->name;
			goto cert;
		}
		t->verified = 1;
	}
	if (t->npins && check_pins(t, x) < 0)
		return BR_ERR_X509_NOT_TRUSTED;
	return 0;
cert:
	fail(t, TLS_E_CERT, why, a1, a2);
	return err;
}

static const br_x509_pkey *xw_get_pkey(const br_x509_class *const *ctx, unsigned *usages)
{
	struct xwrap *x = (struct xwrap *)(void *)ctx;
	if (x->t->policy == TLS_VERIFY)
		return x->minimal.vtable->get_pkey(&x->minimal.vtable, usages);
	if (!x->have_pkey)
		return NULL;
	if (usages)
		*usages = BR_KEYTYPE_KEYX | BR_KEYTYPE_SIGN;
	return &x->pkey;
}

static const br_x509_class xw_vtable = {
	sizeof(struct xwrap), xw_start_chain, xw_start_cert, xw_append, xw_end_cert, xw_end_chain, xw_get_pkey,
};

/* ---- the engine pump ---- */

/* Runs the engine until a state in target is reached: 0, or -1 (engine closed or failed,
 * or an I/O error or EOF, recorded in io_errno/io_eof, which stay set: the connection is
 * dead after either). */
static int run_until(struct tls_conn *t, unsigned target)
{
	br_ssl_engine_context *eng = &t->cc.eng;
	/* timeout_ms bounds the whole call, not each read: a record trickled in a byte at a time
	 * (or a handshake) must not outlast it */
	long long deadline = t->timeout_ms > 0 ? clock_mono_ms() + t->timeout_ms : 0;
	for (;;) {
		unsigned st = br_ssl_engine_current_state(eng);
		if (st & BR_SSL_CLOSED)
			return -1;
		int left = 0;
		if (deadline) {
			long long d = deadline - clock_mono_ms();
			if (d <= 0) {
				t->io_errno = ETIMEDOUT;
				return -1;
			}
			left = (int)d;
		}
		if (st & BR_SSL_SENDREC) {
			size_t len;
			unsigned char *buf = br_ssl_engine_sendrec_buf(eng, &len);
			ssize_t w = t->low_write(t->low_ctx, buf, len, left);
			if (w <= 0) {
				t->io_errno = w < 0 ? errno : EPIPE;
				return -1;
			}
			br_ssl_engine_sendrec_ack(eng, (size_t)w);
			continue;
		}
		if (st & target)
			return 0;
		if (st & BR_SSL_RECVAPP) {
			/* half-duplex: unread data from the server blocks sending */
			t->io_errno = EPROTO;
			return -1;
		}
		if (st & BR_SSL_RECVREC) {
			size_t len;
			unsigned char *buf = br_ssl_engine_recvrec_buf(eng, &len);
			ssize_t r = t->low_read(t->low_ctx, buf, len, left);
			if (r <= 0) {
				if (r == 0)
					t->io_eof = 1;
				else
					t->io_errno = errno;
				return -1;
			}
			br_ssl_engine_recvrec_ack(eng, (size_t)r);
			continue;
		}
		br_ssl_engine_flush(eng, 0);
	}
}

static ssize_t tls_read(void *ctx, void *p, size_t n, int timeout_ms)
{
	struct tls_conn *t = ctx;
	t->timeout_ms = timeout_ms;
	if (run_until(t, BR_SSL_RECVAPP) < 0) {
		/* a close_notify, or a server that just closed after its last reply: EOF */
		if (t->io_errno) {
			errno = t->io_errno;
			return -1;
		}
		if (t->io_eof || br_ssl_engine_last_error(&t->cc.eng) == BR_ERR_OK)
			return 0;
		errno = EPROTO;
		return -1;
	}
	size_t len;
	unsigned char *buf = br_ssl_engine_recvapp_buf(&t->cc.eng, &len);
	if (len > n)
		len = n;
	memcpy(p, buf, len);
	br_ssl_engine_recvapp_ack(&t->cc.eng, len);
	return (ssize_t)len;
}

/* tls_read's mirror on the engine's send side: alike in shape only (other buffer, other copy
 * direction, and a write must flush), so the two stay apart. */
static ssize_t tls_write(void *ctx, const void *p, size_t n, int timeout_ms)
{
	struct tls_conn *t = ctx;
	t->timeout_ms = timeout_ms;
	if (run_until(t, BR_SSL_SENDAPP) < 0) {
		errno = t->io_errno ? t->io_errno : EPIPE;
		return -1;
	}
	size_t len;
	unsigned char *buf = br_ssl_engine_sendapp_buf(&t->cc.eng, &len);
	if (len > n)
		len = n;
	memcpy(buf, p, len);
	br_ssl_engine_sendapp_ack(&t->cc.eng, len);
	/* the io layer writes only when it flushes: push the record out now */
	br_ssl_engine_flush(&t->cc.eng, 0);
	if (run_until(t, BR_SSL_SENDAPP | BR_SSL_RECVREC) < 0) {
		errno = t->io_errno ? t->io_errno : EPIPE;
		return -1;
	}
	return (ssize_t)len;
}

static void conn_free(struct tls_conn *t)
{
	free(t->xw.ee.p);
	free(t->xw.ca.p);
	for (size_t i = 0; i < t->chain_len; i++)
		free(t->chain[i].data);
	if (t->skey) {
		explicit_bzero(t->skey, sizeof *t->skey);
		free(t->skey);
	}
	explicit_bzero(t, sizeof *t);
	free(t);
}

static int tls_close(void *ctx)
{
	struct tls_conn *t = ctx;
	/* send our close_notify, briefly; do not wait for the server's */
	br_ssl_engine_close(&t->cc.eng);
	t->timeout_ms = t->timeout_ms > 0 && t->timeout_ms < CLOSE_TIMEOUT_MS ? t->timeout_ms : CLOSE_TIMEOUT_MS;
	/* the engine's records written out (within the time limit, all writes together): every
	 * state but those two ends the wait */
	run_until(t, ~(unsigned)(BR_SSL_SENDREC | BR_SSL_CLOSED));
	int r = t->low_close(t->low_ctx);
	conn_free(t);
	return r;
}

/* ---- the handshake ---- */

/* TLS alert names (RFC 8446 section 6) */
static const char *alert_name(int a)
{
	return str_bykey(
	    "\050handshake_failure\0" /* 40 */
	    "\052bad_certificate\0" /* 42 */
	    "\053unsupported_certificate\0" /* 43 */
	    "\054certificate_revoked\0" /* 44 */
	    "\055certificate_expired\0" /* 45 */
	    "\056certificate_unknown\0" /* 46 */
	    "\057illegal_parameter\0" /* 47 */
	    "\060unknown_ca\0" /* 48 */
	    "\062decode_error\0" /* 50 */
	    "\063decrypt_error\0" /* 51 */
	    "\106protocol_version\0" /* 70 */
	    "\107insufficient_security\0" /* 71 */
	    "\120internal_error\0" /* 80 */
	    "\160unrecognized_name\0" /* 112 */
	    "\164certificate_required\0" /* 116 */
	    "\0alert", (unsigned)a);
}

/* Turns the engine's last error into a status and reason (unless the x509 class set one). */
_Static_assert(BR_ERR_UNSUPPORTED_VERSION == 3 && BR_ERR_BAD_VERSION == 4 && BR_ERR_NO_RANDOM == 8 &&
                   BR_ERR_BAD_CIPHER_SUITE == 16 && BR_ERR_BAD_SIGNATURE == 27 && BR_ERR_WRONG_KEY_USAGE == 28,
               "BearSSL's engine error codes");

static void engine_reason(struct tls_conn *t)
{
	int err = br_ssl_engine_last_error(&t->cc.eng); /* fail() keeps a reason already set */
	if (err == BR_ERR_IO || err == BR_ERR_OK) {
		/* one call: the fixed texts ignore the argument */
		const char *fmt = t->io_errno == ETIMEDOUT ? "timeout during the TLS handshake"
		                  : t->io_eof || !t->io_errno ? "connection closed by the server during the TLS handshake"
		                  : "TLS handshake: %s";
		fail(t, TLS_E_IO, fmt, strerror(t->io_errno));
	} else if (err >= BR_ERR_RECV_FATAL_ALERT) {
		int a = err - BR_ERR_RECV_FATAL_ALERT;
		fail(t, TLS_E_PROTOCOL, "TLS handshake refused by the server: alert %d (%s)", a, alert_name(a));
	} else if (err >= BR_ERR_SEND_FATAL_ALERT) {
		int a = err - BR_ERR_SEND_FATAL_ALERT;
		fail(t, TLS_E_PROTOCOL, "TLS handshake aborted: alert %d (%s) sent", a, alert_name(a));
	} else if (err >= BR_ERR_X509_OK && err < BR_ERR_X509_OK + 32) {
		fail(t, TLS_E_CERT, "certificate verification failed: %s", x509_error_name((unsigned)err));
	} else {
		/* the errors with a reason of their own, as str_bykey() keys (each pair as its first) */
		const char *why = str_bykey(
		    "\003the server does not speak TLS 1.2 (or not TLS at all)\0" /* BR_ERR_UNSUPPORTED_VERSION */
		    "\020no common cipher suite (ECDHE with AES-GCM or ChaCha20-Poly1305 needed)\0" /* BR_ERR_BAD_CIPHER_SUITE */
		    "\010no source of randomness\0" /* BR_ERR_NO_RANDOM */
		    "\033the server's key exchange signature is invalid or not allowed by its certificate\0" /* BR_ERR_BAD_SIGNATURE */
		    "\0",
		    err == BR_ERR_BAD_VERSION ? BR_ERR_UNSUPPORTED_VERSION : err == BR_ERR_WRONG_KEY_USAGE ? BR_ERR_BAD_SIGNATURE : (unsigned)err);
		if (*why)
			fail(t, err == BR_ERR_NO_RANDOM ? TLS_E_CONFIG : TLS_E_PROTOCOL, "TLS handshake failed: %s", why);
		else
			fail(t, TLS_E_PROTOCOL, "TLS handshake failed (BearSSL error %d)", err);
	}
}

struct chain_load {
	struct tls_conn *t;
	int too_many;
};

static int on_cert(void *ctx, const char *name, const unsigned char *der, size_t len)
{
	struct chain_load *l = ctx;
	struct tls_conn *t = l->t;
	if (strcmp(name, "CERTIFICATE") != 0)
		return 0;
	if (t->chain_len == ARRAY_LEN(t->chain)) {
		l->too_many = 1;
		return 1;
	}
	unsigned char *copy = malloc(len ? len : 1);
	if (!copy)
		return -1;
	memcpy(copy, der, len);
	t->chain[t->chain_len].data = copy;
	t->chain[t->chain_len++].data_len = len;
	return 0;
}

static int on_key(void *ctx, const char *name, const unsigned char *der, size_t len)
{
	br_skey_decoder_context *sk = ctx;
	if (!strstr(name, "PRIVATE KEY"))
		return 0;
	br_skey_decoder_push(sk, der, len);
	return 1; /* the first key is the key */
}

/* Loads the client certificate chain and key and gives them to the engine. */
static int client_cert(struct tls_conn *t, const char *certfile, const char *keyfile)
{
	char *text;
	size_t len;
	char why[160];
	struct chain_load l = {t, 0};
	if (fio_slurp(certfile, TLS_PEMFILE_MAX, &text, &len) < 0) {
		fail(t, TLS_E_CONFIG, "client certificate %s: %s", certfile, strerror(errno));
		return -1;
	}
	int r = pem_each(text, len, CERT_MAX, on_cert, &l, why, sizeof why);
	free(text);
	if (r < 0 || l.too_many || t->chain_len == 0) {
		fail(t, TLS_E_CONFIG, "client certificate %s: %s", certfile,
		     r < 0 ? why : l.too_many ? "more than 8 certificates" : "no CERTIFICATE in the file");
		return -1;
	}
	if (secfile_read(keyfile, TLS_PEMFILE_MAX, &text, &len, why, sizeof why) < 0) {
		fail(t, TLS_E_CONFIG, "client key %s: %s", keyfile, why);
		return -1;
	}
	t->skey = malloc(sizeof *t->skey);
	if (!t->skey) {
		secfile_free(text, len);
		fail(t, TLS_E_NOMEM, "out of memory");
		return -1;
	}
	br_skey_decoder_init(t->skey);
	r = pem_each(text, len, TLS_PEMFILE_MAX, on_key, t->skey, why, sizeof why);
	secfile_free(text, len);
	if (r != 1 || br_skey_decoder_last_error(t->skey) != 0) {
		fail(t, TLS_E_CONFIG, "client key %s: %s", keyfile, r < 0 ? why : r == 0 ? "no PRIVATE KEY in the file" : "cannot decode the key");
		return -1;
	}
	if (br_skey_decoder_key_type(t->skey) == BR_KEYTYPE_RSA)
		br_ssl_client_set_single_rsa(&t->cc, t->chain, t->chain_len, br_skey_decoder_get_rsa(t->skey),
		                             br_rsa_i31_pkcs1_sign);
	else
		br_ssl_client_set_single_ec(&t->cc, t->chain, t->chain_len, br_skey_decoder_get_ec(t->skey),
		                            BR_KEYTYPE_SIGN, 0, &ec_impl, br_ecdsa_i31_sign_asn1);
	return 0;
}

/* SHA-256, -384 and -512, for the engine and for x509_minimal alike (what their set_hash does) */
__attribute__((noinline)) static void set_hashes(br_multihash_context *mh)
{
	br_multihash_setimpl(mh, br_sha256_ID, &br_sha256_vtable);
	br_multihash_setimpl(mh, br_sha384_ID, &br_sha384_vtable);
	br_multihash_setimpl(mh, br_sha512_ID, &br_sha512_vtable);
}

/* The custom profile: what br_ssl_client_init_full sets up, cut down to tls.h's list. */
static void profile(struct tls_conn *t, const struct tls_anchors *anchors)
{
	br_ssl_client_context *cc = &t->cc;
	br_ssl_engine_context *eng = &cc->eng;
	br_ssl_client_zero(cc);
	br_ssl_engine_set_versions(eng, BR_TLS12, BR_TLS12);
	/* a renegotiation request is answered with a warning alert: SMTP never needs one */
	br_ssl_engine_add_flags(eng, BR_OPT_NO_RENEGOTIATION);
	br_ssl_engine_set_suites(eng, suites, ARRAY_LEN(suites));
	set_hashes(&eng->mhash);
	br_ssl_engine_set_prf_sha256(eng, br_tls12_sha256_prf);
	br_ssl_engine_set_prf_sha384(eng, br_tls12_sha384_prf);
	br_ssl_engine_set_ec(eng, &ec_impl);
	br_ssl_engine_set_rsavrfy(eng, br_rsa_i31_pkcs1_vrfy);
	br_ssl_engine_set_ecdsa(eng, br_ecdsa_i31_vrfy_asn1);
	br_ssl_engine_set_gcm(eng, &br_sslrec_in_gcm_vtable, &br_sslrec_out_gcm_vtable);
	br_ssl_engine_set_aes_ctr(eng, &AES_CTR_VTABLE);
	br_ssl_engine_set_ghash(eng, GHASH);
	if (ENABLE_CHACHA20) {
		br_ssl_engine_set_chapol(eng, &br_sslrec_in_chapol_vtable, &br_sslrec_out_chapol_vtable);
		br_ssl_engine_set_chacha20(eng, br_chacha20_ct_run);
		br_ssl_engine_set_poly1305(eng, br_poly1305_ctmul_run);
	}

	struct xwrap *x = &t->xw;
	x->vtable = &xw_vtable;
	x->t = t;
	if (t->policy == TLS_VERIFY) {
		size_t n;
		const br_x509_trust_anchor *ta = tls_anchors_array(anchors, &n);
		br_x509_minimal_init(&x->minimal, &br_sha256_vtable, ta, n);
		set_hashes(&x->minimal.mhash);
		br_x509_minimal_set_rsa(&x->minimal, br_rsa_i31_pkcs1_vrfy);
		br_x509_minimal_set_ecdsa(&x->minimal, &ec_impl, br_ecdsa_i31_vrfy_asn1);
		/* no RSA key under 2048 bits in the chain (anchors: tls_anchors.c) */
		br_x509_minimal_set_minrsa(&x->minimal, TLS_RSA_MIN_BYTES);
		/* the clock is ours to give (tests inject one; see TLS_CLOCK_PLAUSIBLE) */
		br_x509_minimal_set_time(&x->minimal, (uint32_t)(t->now / 86400 + 719528), (uint32_t)(t->now % 86400));
	}
	br_ssl_engine_set_x509(eng, &x->vtable);
	br_ssl_engine_set_buffer(eng, t->iobuf, sizeof t->iobuf, 0);
}

/* BearSSL's engine seeds its HMAC-DRBG from br_prng_seeder_system() (br_ssl_client_reset(),
 * once per connection); this definition replaces BearSSL's (rand/sysrng.c, RDRAND or a
 * /dev/urandom open each time): 32 bytes of getrandom(), the kernel's generator, which it
 * blocks for until seeded at boot. A failure is the engine's BR_ERR_NO_RANDOM. */
static int seed_getrandom(const br_prng_class **ctx)
{
	unsigned char seed[32];
	int ok = getrandom(seed, sizeof seed, 0) == (ssize_t)sizeof seed;
	if (ok)
		(*ctx)->update(ctx, seed, sizeof seed);
	explicit_bzero(seed, sizeof seed);
	return ok;
}

br_prng_seeder br_prng_seeder_system(const char **name)
{
	if (name)
		*name = "getrandom";
	return seed_getrandom;
}

static enum tls_status setup(struct tls_conn *t, const struct io *io, const struct tls_params *p)
{
	if (p->policy != TLS_MAY && p->policy != TLS_ENCRYPT && p->policy != TLS_VERIFY) {
		fail(t, TLS_E_CONFIG, "TLS policy %s does not start TLS", tls_policy_name(p->policy));
		return t->st;
	}
	t->policy = p->policy;
	t->now = p->now ? p->now : time(NULL);
	if (p->server_name && str_lcpy(t->name, p->server_name, sizeof t->name) >= sizeof t->name) {
		fail(t, TLS_E_CONFIG, "server name too long");
		return t->st;
	}
	/* "relay.example.net." is the same host; SNI carries no trailing dot (RFC 6066 section 3) */
	size_t nl = strlen(t->name);
	while (nl > 1 && t->name[nl - 1] == '.')
		t->name[--nl] = 0;
	if (p->policy == TLS_VERIFY && (!t->name[0] || !p->anchors)) {
		fail(t, TLS_E_CONFIG, "TLS policy verify needs %s", t->name[0] ? "trust anchors" : "a server name");
		return t->st;
	}
	t->npins = tls_pins_parse(p->pins, t->pins, TLS_MAX_PINS);
	if (t->npins < 0) {
		fail(t, TLS_E_CONFIG, "bad pin list (up to %d of sha256//BASE64 or 64 hex digits)", TLS_MAX_PINS);
		return t->st;
	}
	if (io->wlen) {
		fail(t, TLS_E_CONFIG, "unsent output before the TLS handshake");
		return t->st;
	}
	if (!!(p->client_cert && p->client_cert[0]) != !!(p->client_key && p->client_key[0])) {
		fail(t, TLS_E_CONFIG, "a client certificate needs its key, and a key its certificate");
		return t->st;
	}
	profile(t, p->anchors);
	if (p->client_cert && p->client_cert[0] && !ENABLE_TLS_CLIENT_CERT) {
		fail(t, TLS_E_CONFIG, "client certificate %s: this spoolbox is built without client "
		                      "certificates (ENABLE_TLS_CLIENT_CERT)", p->client_cert);
		return t->st;
	}
	if (ENABLE_TLS_CLIENT_CERT && p->client_cert && p->client_cert[0] &&
	    client_cert(t, p->client_cert, p->client_key) < 0)
		return t->st;
	t->low_read = io->low_read;
	t->low_write = io->low_write;
	t->low_close = io->low_close;
	t->low_ctx = io->ctx;
	t->timeout_ms = io->timeout_ms;
	unsigned char ip[16];
	/* addresses get no SNI (RFC 6066 section 3) */
	if (!br_ssl_client_reset(&t->cc, t->name[0] && !cert_host_address(t->name, ip) ? t->name : NULL, 0)) {
		engine_reason(t);
		return t->st;
	}
	return TLS_OK;
}

enum tls_status tls_start(struct io *io, const struct tls_params *p, char *reason, size_t reasonsize)
{
	struct tls_conn *t = calloc(1, sizeof *t);
	if (reasonsize)
		reason[0] = 0;
	if (!t) {
		str_lcpy(reason, "out of memory for TLS", reasonsize);
		return TLS_E_NOMEM;
	}
	/* RFC 3207 section 6: nothing the server sent before TLS may be acted upon */
	io_discard_input(io);
	enum tls_status st = setup(t, io, p);
	if (st == TLS_OK && run_until(t, BR_SSL_SENDAPP) < 0) {
		engine_reason(t);
		st = t->st;
	}
	if (st != TLS_OK) {
		str_lcpy(reason, t->reason, reasonsize);
		conn_free(t);
		return st;
	}
	free(t->xw.ee.p);
	t->xw.ee.p = NULL;
	io->low_read = tls_read;
	io->low_write = tls_write;
	io->low_close = tls_close;
	io->ctx = t;
	return TLS_OK;
}

int tls_active(const struct io *io)
{
	return io->low_read == tls_read;
}

void tls_describe(const struct io *io, char *out, size_t size)
{
	if (!tls_active(io)) {
		if (size)
			out[0] = 0;
		return;
	}
	const struct tls_conn *t = io->ctx;
	/* the suite read in place: br_ssl_engine_get_session_parameters() copies the whole session */
	const char *suite = "?";
	for (size_t i = 0; i < ARRAY_LEN(suites); i++)
		if (suites[i] == t->cc.eng.session.cipher_suite)
			suite = suite_names[i];
	str_fmt(out, size, "TLSv1.2 %s %s%s", suite, t->verified ? "verified" : t->pinned ? "pinned" : "unverified",
	        t->verified && t->pinned ? "+pinned" : "");
}

int tls_peer_authenticated(const struct io *io)
{
	if (!tls_active(io))
		return 0;
	const struct tls_conn *t = io->ctx;
	return t->verified || t->pinned;
}

int tls_app_data_arrived(struct io *io)
{
	if (!tls_active(io))
		return 0;
	if (io_pending(io))
		return 1;
	struct tls_conn *t = io->ctx;
	br_ssl_engine_context *eng = &t->cc.eng;
	/* take in every whole record that is already here, without waiting: a reply may come as
	 * one record or in several, and only its application data tells */
	for (;;) {
		unsigned st = br_ssl_engine_current_state(eng);
		if (st & (BR_SSL_RECVAPP | BR_SSL_CLOSED))
			return 1;
		if (!(st & BR_SSL_RECVREC) || io->fd < 0)
			return 0;
		size_t len;
		unsigned char *buf = br_ssl_engine_recvrec_buf(eng, &len);
		ssize_t r = recv(io->fd, buf, len, MSG_DONTWAIT);
		if (r == 0)
			return 1; /* the server closed: it spoke before the end of data too */
		if (r < 0)
			return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
		br_ssl_engine_recvrec_ack(eng, (size_t)r);
	}
}
#endif
