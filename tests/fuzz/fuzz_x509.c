/* Fuzz target: the DER walker of lib/tls_cert.c (SPKI, subjectAltName, subject CN, extendedKeyUsage,
 * nameConstraints) on
 * arbitrary certificates, and the RFC 6125 matcher on arbitrary presented names. */
#include "tls_cert.h"
#include <stdint.h>

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
	return 0;
}
