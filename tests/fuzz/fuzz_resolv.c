/* Fuzz target: lib/libc/resolv.c's parsers, resolv.conf's text (cut at RES_CONF_MAX as its
 * reader does) and dn_expand over the input as a DNS message, from every offset of its first
 * bytes; dn_expand's result must be a name that fits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/libc_own.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[RES_CONF_MAX + 1];
	size_t n = size < RES_CONF_MAX ? size : RES_CONF_MAX;
	memcpy(text, data, n);
	text[n] = 0;
	struct res_conf c;
	res_parse_conf(text, &c);
	if (c.n < 1 || c.n > RES_NS_MAX || c.timeout < 1 || c.timeout > 60 || c.attempts < 1 || c.attempts > 10)
		abort();
	for (size_t at = 0; at < size && at < 64; at++) {
		char name[256];
		int used = own_dn_expand(data, data + size, data + at, name, sizeof name);
		if (used > (int)(size - at) || (used > 0 && strlen(name) > 253))
			abort();
	}
	return 0;
}
