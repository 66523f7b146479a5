/* Fuzz target: the trust-anchor loader (PEM decoding with br_pem_decoder, then each
 * CERTIFICATE through br_x509_decoder into an anchor). */
#include "tls.h"
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[TLS_REASON_MAX];
	struct tls_anchors *a = tls_anchors_parse(data, size, "fuzz", err, sizeof err);
	tls_anchors_free(a);
	return 0;
}
