/* Fuzz target: the address parsers (list, single mailbox, SMTP path) and the canonical form. */
#include "addr.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int each(void *ctx, const struct addr *a)
{
	char out[ADDR_TEXT_MAX + 1];
	if (addr_format(a, "q.example", out, sizeof out) < 0)
		__builtin_trap(); /* the canonical form always fits ADDR_TEXT_MAX */
	(*(int *)ctx)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	char err[160];
	int n = 0;
	addr_parse_list(s, size, each, &n, err, sizeof err);
	struct addr a;
	if (addr_parse_one(s, size, &a, err, sizeof err) == 0)
		each(&n, &a);
	size_t used;
	if (addr_parse_path(s, size, 1, &a, &used, err, sizeof err) >= 0 && used > size)
		__builtin_trap();
	return 0;
}
