/* PEM reading for the TLS client (trust anchors, client certificate and key), internal to the
 * lib/tls*.c files of the TLS=1 build.
 *
 * Contract: pem_each() calls fn once per complete PEM object, in order, with the object's name
 * ("CERTIFICATE", "PRIVATE KEY", ...) and its decoded DER; the DER is valid only during the
 * call. Text outside objects is ignored. An object larger than objmax, a base64 error, or a
 * truncated object is an error (-1, reason in err). A nonzero return from fn stops the walk
 * and is returned. */
#ifndef SPOOLBOX_TLS_PEM_H
#define SPOOLBOX_TLS_PEM_H
#include <stddef.h>

typedef int pem_fn(void *ctx, const char *name, const unsigned char *der, size_t len);
int pem_each(const void *text, size_t len, size_t objmax, pem_fn *fn, void *ctx, char *err, size_t errsize);
#endif
