/* Trust anchors for the TLS client: the CERTIFICATE objects of a PEM bundle turned into
 * br_x509_trust_anchor (DN + public key), once per process; see tls.h. */
#include "config_default.h"
#if ENABLE_TLS
#include "tls.h"
#include "fileio.h"
#include "log.h"
#include "tls_cert.h"
#include "tls_pem.h"
#include "util.h"
#include "tls_bearssl.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DN_MAX 4096         /* longest subject DN kept */
#define CERT_DER_MAX 65536  /* largest certificate in a bundle */

struct tls_anchors {
	br_x509_trust_anchor *ta;
	size_t n, cap;
	size_t dropped;          /* the four counts below together */
	size_t skipped;          /* certificates BearSSL cannot use */
	size_t weak, expired, constrained; /* refused by our rules (docs/tls.md) */
	char file[256];
};

struct load {
	struct tls_anchors *a;
	char *err;
	size_t errsize;
};

_Static_assert(CERT_KEY_MAX == BR_X509_BUFSIZE_KEY && CERT_E_INVALID == BR_ERR_X509_INVALID_VALUE &&
                   CERT_E_UNSUPPORTED == BR_ERR_X509_UNSUPPORTED && BR_EC_secp256r1 == 23 && BR_EC_secp521r1 == 25,
               "tls_cert.h's numbers are BearSSL's");

void tls_pkey(const struct cert_info *ci, br_x509_pkey *pk)
{
	memset(pk, 0, sizeof *pk);
	if (ci->curve) {
		pk->key_type = BR_KEYTYPE_EC;
		pk->key.ec.curve = ci->curve;
		pk->key.ec.q = (unsigned char *)(uintptr_t)ci->n.p;
		pk->key.ec.qlen = ci->n.len;
	} else {
		pk->key_type = BR_KEYTYPE_RSA;
		pk->key.rsa.n = (unsigned char *)(uintptr_t)ci->n.p;
		pk->key.rsa.nlen = ci->n.len;
		pk->key.rsa.e = (unsigned char *)(uintptr_t)ci->e.p;
		pk->key.rsa.elen = ci->e.len;
	}
}

/* One certificate into an anchor: 0 added, 1 skipped (unusable), -1 fatal. */
/* always_inline: its one caller then keeps one frame, not two (-36 bytes) */
static inline __attribute__((always_inline)) int add_cert(struct load *l, const unsigned char *der, size_t len)
{
	struct tls_anchors *a = l->a;
	struct cert_info ci;
	size_t *why = &a->skipped; /* the count a skipped certificate adds to */
	if (cert_decode(der, len, &ci) || ci.dn.len >= DN_MAX)
		goto skip;
	/* our rules for anchors: no RSA key under 2048 bits, not expired, no name constraints (we
	 * do not process them: a chain under a constrained anchor is refused, not trusted past them) */
	time_t now = time(NULL);
	uint32_t today = (uint32_t)(now / 86400 + 719528), secs = (uint32_t)(now % 86400);
	why = NULL;
	if (!ci.curve && ci.n.len < TLS_RSA_MIN_BYTES)
		why = &a->weak;
	else if (today > ci.days[1] || (today == ci.days[1] && secs > ci.secs[1]))
		why = &a->expired;
	else if (cert_has_name_constraints(der, len) != 0)
		why = &a->constrained;
	if (why) {
	skip:
		++*why;
		a->dropped++;
		return 1;
	}
	if (a->n == TLS_ANCHORS_MAX) {
		str_fmt(l->err, l->errsize, "more than %d certificates", TLS_ANCHORS_MAX);
		return -1;
	}
	/* the DN and the key's bytes in one block */
	unsigned char *blob = malloc(ci.dn.len + ci.n.len + ci.e.len);
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 64;
		br_x509_trust_anchor *t = realloc(a->ta, nc * sizeof *t);
		if (!t) {
			free(blob);
			blob = NULL;
		} else {
			a->ta = t;
			a->cap = nc;
		}
	}
	if (!blob) {
		str_fmt(l->err, l->errsize, "out of memory");
		return -1;
	}
	br_x509_trust_anchor *ta = &a->ta[a->n++];
	ta->dn.data = blob;
	ta->dn.len = ci.dn.len;
	ta->flags = ci.ca ? BR_X509_TA_CA : 0;
	memcpy(blob, ci.dn.p, ci.dn.len);
	ci.n.p = memcpy(blob + ci.dn.len, ci.n.p, ci.n.len);
	ci.e.p = memcpy(blob + ci.dn.len + ci.n.len, ci.e.p, ci.e.len);
	tls_pkey(&ci, &ta->pkey);
	return 0;
}

static int on_object(void *ctx, const char *name, const unsigned char *der, size_t len)
{
	/* "TRUSTED CERTIFICATE" (OpenSSL's with trust settings appended) is not plain DER: skip */
	if (strcmp(name, "CERTIFICATE") != 0 && strcmp(name, "X509 CERTIFICATE") != 0)
		return 0;
	return add_cert(ctx, der, len) < 0 ? -1 : 0;
}

struct tls_anchors *tls_anchors_parse(const void *pem, size_t len, const char *name, char *err, size_t errsize)
{
	char why[TLS_REASON_MAX];
	struct tls_anchors *a = calloc(1, sizeof *a);
	if (!a) {
		str_fmt(err, errsize, "%s: out of memory", name);
		return NULL;
	}
	str_lcpy(a->file, name, sizeof a->file);
	struct load l = {a, why, sizeof why};
	why[0] = 0;
	if (pem_each(pem, len, CERT_DER_MAX, on_object, &l, why, sizeof why) != 0) {
		str_fmt(err, errsize, "trust anchors %s: %s", name, why);
		tls_anchors_free(a);
		return NULL;
	}
	if (a->n == 0) {
		str_fmt(err, errsize, "trust anchors %s: no usable CA certificate%s", name,
		        a->dropped ? " (all are expired, weak, name-constrained, of unsupported keys or undecodable)" : "");
		tls_anchors_free(a);
		return NULL;
	}
	return a;
}

struct tls_anchors *tls_anchors_load(const char *cafile, char *err, size_t errsize)
{
	static const char *const bundles[] = {TLS_SYSTEM_BUNDLES};
	const char *path = cafile;
	if (!path || !path[0]) {
		path = NULL;
		for (size_t i = 0; i < ARRAY_LEN(bundles) && !path; i++)
			if (access(bundles[i], R_OK) == 0)
				path = bundles[i];
		if (!path) {
			str_fmt(err, errsize, "no CA bundle found (tried %s, %s, %s, %s): set CAFILE", bundles[0],
			        bundles[1], bundles[2], bundles[3]);
			return NULL;
		}
	}
	char *text;
	size_t len;
	if (fio_slurp(path, TLS_CAFILE_MAX, &text, &len) < 0) {
		str_fmt(err, errsize, "trust anchors %s: %s", path,
		        errno == EFBIG ? "file too large" : strerror(errno));
		return NULL;
	}
	struct tls_anchors *a = tls_anchors_parse(text, len, path, err, errsize);
	free(text);
	if (a && a->dropped)
		log_msg(LOG_WARNING, NULL,
		        "trust anchors %s: not used: %zu expired, %zu with RSA keys under 2048 bits, %zu with name "
		        "constraints, %zu with unsupported keys or encodings",
		        path, a->expired, a->weak, a->constrained, a->skipped);
	return a;
}

size_t tls_anchors_count(const struct tls_anchors *a)
{
	return a ? a->n : 0;
}

const char *tls_anchors_file(const struct tls_anchors *a)
{
	return a ? a->file : "";
}

void tls_anchors_free(struct tls_anchors *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++)
		free(a->ta[i].dn.data);
	free(a->ta);
	free(a);
}

const br_x509_trust_anchor *tls_anchors_array(const struct tls_anchors *a, size_t *n)
{
	*n = a->n;
	return a->ta;
}
#endif
