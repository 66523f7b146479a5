/* Fuzz target: the MAILQv2 authentication file (lib/mqauth.c), looked up for a few users and
 * addresses. */
#include "mqauth.h"
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const users[] = {"nobody", "root", "watcher", ""};
	static const uint32_t ips[] = {0x7f000001, 0xc0a80001, 0};
	char pass[64], err[160];
	unsigned attrs;
	for (int u = 0; u < 4; u++)
		for (int i = 0; i < 3; i++)
			mqauth_lookup((const char *)data, size, users[u], ips[i], pass, sizeof pass, &attrs, err, sizeof err);
	return 0;
}
