/* Fuzz target: the credentials file parser (quoting, escapes, host:port, field counts). */
#include "creds.h"
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct creds c;
	creds_parse("fuzz", (const char *)data, size, "relay.example.test", 587, &c, NULL, NULL);
	/* an address asked for with brackets, as the entries may write it */
	creds_parse("fuzz", (const char *)data, size, "[192.0.2.1]", 25, &c, NULL, NULL);
	creds_parse("fuzz", (const char *)data, size, NULL, 0, NULL, NULL, NULL);
	return 0;
}
