/* Fuzz target: the scheduler's parser of transport-agent report lines (docs/spool.md 11). */
#include "sched_int.h"
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sta_report r;
	sta_report_parse((const char *)data, size, &r);
	return 0;
}
