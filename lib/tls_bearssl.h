/* The one way lib/tls*.c include BearSSL (TLS=1 build only): its headers use an undefined
 * macro in #if, which our -Wundef would flag, so the warning is silenced for them alone.
 * Also the internals shared between tls.c and tls_anchors.c. */
#ifndef SPOOLBOX_TLS_BEARSSL_H
#define SPOOLBOX_TLS_BEARSSL_H
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wundef"
#include <bearssl.h>
#pragma GCC diagnostic pop
#include "tls.h"
#include "tls_cert.h"

/* The anchors as BearSSL wants them (n set to their count). */
const br_x509_trust_anchor *tls_anchors_array(const struct tls_anchors *a, size_t *n);

/* The key of a decoded certificate as BearSSL wants it (pointing where ci points). */
void tls_pkey(const struct cert_info *ci, br_x509_pkey *pk);
#endif
