/* Fuzz target (security review): whatever the quoting, no parser hands out a decoded address
 * holding a line break, NUL or other control character (space and tab may be quoted). Such an
 * address would become a forged header line in From: <sender> or a broken spool record. */
#include "addr.h"
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct addr *a)
{
	for (const unsigned char *p = (const unsigned char *)a->local; *p; p++)
		if ((*p < 0x20 && *p != ' ' && *p != '\t') || *p == 0x7f)
			__builtin_trap();
	for (const unsigned char *p = (const unsigned char *)a->domain; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			__builtin_trap();
	char out[ADDR_TEXT_MAX + 1];
	if (addr_format(a, "q.example", out, sizeof out) >= 0 && (strchr(out, '\r') || strchr(out, '\n')))
		__builtin_trap();
}

static int each(void *ctx, const struct addr *a)
{
	(void)ctx;
	check(a);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	char err[160];
	struct addr a;
	size_t used;
	addr_parse_list(s, size, each, NULL, err, sizeof err);
	if (addr_parse_one(s, size, &a, err, sizeof err) == 0)
		check(&a);
	if (addr_parse_path(s, size, 1, &a, &used, err, sizeof err) >= 0)
		check(&a);
	return 0;
}
