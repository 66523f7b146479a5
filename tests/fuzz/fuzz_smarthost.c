/* Fuzz target: the SMARTHOST list parser (lib/smarthost.h). */
#include "smarthost.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct smarthost h[SMARTHOST_MAX];
	char err[200];
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = 0;
	smarthost_parse(s, h, SMARTHOST_MAX, err, sizeof err);
	smarthost_parse(s, h, 1, err, sizeof err);
	free(s);
	return 0;
}
