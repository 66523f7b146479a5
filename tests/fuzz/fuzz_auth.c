/* Fuzz target: what the SASL client reads from the server — the EHLO AUTH parameters and the
 * 334 challenges of every mechanism (base64 decoding, CRAM-MD5, XOAUTH2's error JSON). */
#include "auth.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), line[AUTH_LINE_MAX];
	memcpy(text, data, size);
	text[size] = 0;
	auth_parse_ehlo(text);
	for (int m = AUTH_PLAIN; m <= AUTH_XOAUTH2; m++) {
		struct auth a;
		auth_init(&a, (enum auth_mech)m, "user@example.test", "secret");
		auth_start(&a, line, sizeof line);
		for (int step = 0; step < 3; step++)
			auth_step(&a, text, line, sizeof line);
		auth_redact(text, line, 64);
	}
	free(text);
	return 0;
}
