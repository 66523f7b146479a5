/* Fuzz target: the spoolbox.conf parser (and through it the interval/size/bool parsers). */
#include "conf.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conf c;
	conf_init(&c);
	conf_parse(&c, "fuzz", (const char *)data, size, NULL, NULL);
	conf_free(&c);
	return 0;
}
