/* Fuzz target: the mbox append journal record (lib/mbox_journal.c): numbers, lengths, prefix. */
#include "mbox_journal.h"
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mbox_jentry e;
	if (mbox_journal_parse((const char *)data, size, &e) && (e.plen > MBOXJ_PREFIX_MAX || e.old >= e.new_len))
		__builtin_trap();
	return 0;
}
