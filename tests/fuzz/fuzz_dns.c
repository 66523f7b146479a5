/* Fuzz target: the DNS answer parsers for MX and for A/AAAA queries (lib/dns.h), and the
 * ordering of what the first returns. */
#include "dns.h"
#include <stdint.h>

static unsigned fixed(void *ctx)
{
	unsigned *s = ctx;
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_mx mx[DNS_MX_MAX];
	size_t n;
	unsigned s = 1;
	if (dns_parse_mx(data, size, mx, DNS_MX_MAX, &n) == DNS_OK)
		dns_mx_order(mx, n, fixed, &s);
	dns_parse_mx(data, size, mx, 2, &n);
	struct dns_addr a[DNS_ADDR_MAX];
	n = 0;
	dns_parse_addr(data, size, a, DNS_ADDR_MAX, &n);
	if (n > DNS_ADDR_MAX)
		__builtin_trap();
	return 0;
}
