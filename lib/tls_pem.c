/* PEM objects out of a text (RFC 7468, as OpenSSL writes them); see tls_pem.h. */
#include "config_default.h"
#if ENABLE_TLS
#include "tls_pem.h"
#include "base64.h"
#include "util.h"
#include <stdlib.h>
#include "tls_bearssl.h"
#include <string.h>

#ifndef __GLIBC__
/* Debian's libbearssl.a calls glibc's __memcpy_chk & co, which lib/fortify.c supplies for musl.
 * libspool.a comes before libbearssl.a on the link line and is not scanned again, so nothing
 * would pull fortify.o in: this reference does, since every user of BearSSL code links this
 * file. The table itself is dropped by --gc-sections. */
void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memmove_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memset_chk(void *dst, int c, size_t n, size_t dstlen);
extern void (*const tls_pem_fortify_refs[3])(void);
void (*const tls_pem_fortify_refs[3])(void) = {
	(void (*)(void))__memcpy_chk, (void (*)(void))__memmove_chk, (void (*)(void))__memset_chk,
};
#endif

/* One line of text: [p, p+n) without its line end. */
static int next_line(const char **pos, const char *end, const char **p, size_t *n)
{
	if (*pos >= end)
		return 0;
	const char *s = *pos;
	const char *nl = memchr(s, '\n', (size_t)(end - s));
	const char *e = nl ? nl : end;
	*pos = nl ? nl + 1 : end;
	while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*p = s;
	*n = (size_t)(e - s);
	return 1;
}

/* "-----BEGIN LABEL-----" or "-----END LABEL-----": the label into out, 1; else 0. */
static int boundary(const char *p, size_t n, const char *what, char *out, size_t size)
{
	size_t wl = strlen(what);
	if (n < 10 + wl || memcmp(p, "-----", 5) != 0 || memcmp(p + 5, what, wl) != 0 ||
	    memcmp(p + n - 5, "-----", 5) != 0)
		return 0;
	size_t ll = n - 10 - wl;
	if (ll >= size)
		return 0;
	memcpy(out, p + 5 + wl, ll);
	out[ll] = 0;
	return 1;
}

/* BearSSL's br_pem_decoder runs byte by byte in its T0 interpreter (about 50 ms for Debian's
 * CA bundle); this reads whole lines and decodes each object's base64 at once. */
int pem_each(const void *text, size_t len, size_t objmax, pem_fn *fn, void *ctx, char *err, size_t errsize)
{
	const char *pos = text, *end = pos + len, *p;
	size_t n;
	char name[128], endname[128];
	struct buf b64;
	unsigned char *der = NULL;
	int r = 0, inobj = 0;
	const char *why; /* a format of name and objmax, or of name, or of nothing */
	buf_init(&b64, BASE64_ENCLEN(objmax));
	while (next_line(&pos, end, &p, &n)) {
		if (!inobj) {
			if (boundary(p, n, "BEGIN ", name, sizeof name)) {
				inobj = 1;
				buf_reset(&b64);
			}
			continue;
		}
		if (boundary(p, n, "END ", endname, sizeof endname)) {
			inobj = 0;
			if (strcmp(name, endname) != 0) {
				str_fmt(err, errsize, "PEM object %s ends as %s", name, endname);
				r = -1;
				break;
			}
			why = "out of memory";
			if (!der && !(der = malloc(objmax ? objmax : 1)))
				goto fail;
			ssize_t dl = base64_decode(der, objmax, b64.p ? b64.p : "", b64.len);
			why = "PEM object %s: bad base64 or larger than %zu bytes";
			if (dl < 0)
				goto fail;
			r = fn(ctx, name, der, (size_t)dl);
			explicit_bzero(der, (size_t)dl); /* it may have been a private key */
			if (r)
				break;
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			if (p[i] == ' ' || p[i] == '\t')
				continue;
			why = "PEM object %s larger than %zu bytes";
			if (buf_addc(&b64, p[i]) < 0)
				goto fail;
		}
	}
	why = "PEM object %s not terminated";
	if (!r && inobj) {
	fail:
		str_fmt(err, errsize, why, name, objmax);
		r = -1;
	}
	if (b64.p)
		explicit_bzero(b64.p, b64.cap);
	buf_free(&b64);
	if (der) {
		explicit_bzero(der, objmax);
		free(der);
	}
	return r;
}
#endif
