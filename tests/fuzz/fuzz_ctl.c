/* Fuzz target: the control-file / envelope parser (docs/spool.md 4), both modes. */
#include "spool.h"
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spool_msg m;
	char err[160];
	for (int env = 0; env < 2; env++)
		if (spool_msg_parse((const char *)data, size, env, &m, err, sizeof err) == 0)
			spool_msg_free(&m);
	return 0;
}
