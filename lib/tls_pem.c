/* PEM objects out of a text, with BearSSL's br_pem_decoder; see tls_pem.h. */
#include "config_default.h"
#if ENABLE_TLS
#include "tls_pem.h"
#include "util.h"
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

struct pem_state {
	struct buf der;
	int overflow;
};

static void append(void *ctx, const void *p, size_t n)
{
	struct pem_state *s = ctx;
	if (!s->overflow && buf_add(&s->der, p, n) < 0)
		s->overflow = 1;
}

int pem_each(const void *text, size_t len, size_t objmax, pem_fn *fn, void *ctx, char *err, size_t errsize)
{
	br_pem_decoder_context pc;
	struct pem_state s = {{0}, 0};
	const unsigned char *p = text;
	char name[128];
	int inobj = 0, r = 0, final = 0;
	buf_init(&s.der, objmax);
	br_pem_decoder_init(&pc);
	br_pem_decoder_setdest(&pc, append, &s);
	/* the decoder needs a line end after the last END line: feed one extra "\n" */
	while (len > 0 || !final) {
		size_t n;
		if (len > 0) {
			n = br_pem_decoder_push(&pc, p, len);
			p += n;
			len -= n;
		} else {
			final = 1;
			br_pem_decoder_push(&pc, "\n", 1);
		}
		switch (br_pem_decoder_event(&pc)) {
		case BR_PEM_BEGIN_OBJ:
			str_lcpy(name, br_pem_decoder_name(&pc), sizeof name);
			buf_reset(&s.der);
			s.overflow = 0;
			inobj = 1;
			break;
		case BR_PEM_END_OBJ:
			if (!inobj)
				break;
			inobj = 0;
			if (s.overflow) {
				str_fmt(err, errsize, "PEM object %s larger than %zu bytes", name, objmax);
				r = -1;
				goto out;
			}
			r = fn(ctx, name, (const unsigned char *)s.der.p, s.der.len);
			if (s.der.p) /* it may have been a private key */
				explicit_bzero(s.der.p, s.der.len);
			if (r)
				goto out;
			break;
		case BR_PEM_ERROR:
			str_fmt(err, errsize, "PEM syntax error%s%s", inobj ? " in " : "", inobj ? name : "");
			r = -1;
			goto out;
		default:
			break;
		}
	}
	if (inobj) {
		str_fmt(err, errsize, "PEM object %s not terminated", name);
		r = -1;
	}
out:
	if (s.der.p)
		explicit_bzero(s.der.p, s.der.cap);
	buf_free(&s.der);
	return r;
}
#endif
